# The location-scale families' ll() in gamgpu's C (src/family/family_ls.c,
# inst/include/ls_math.h): each predictor's eta from the model matrix in
# place, every row's log likelihood and its derivatives in the predictors
# (the family's own expressions and mgcv's gamlss.etamu() chain rule, in
# C), then the products over the rows -- where mgcv's ll() copies each
# predictor's columns of X, and computes the rows' derivatives as a dozen
# R vectors, on every one of gam.fit5()'s calls.
#
# For the families and links ls_math.h has: gaulss() (its mean's identity,
# log, inverse or sqrt link, its scale's "logb"), gumbls() and gammals()
# (each parameter's identity or log link), ziplss() (its identity links),
# gevlss() (its location's identity or log link, its shape's scaled
# logit), twlss() (its power's and log scale's identity links; first and
# second derivatives, as mgcv's), shash() (its log scale's "logeb", the
# others' identity links; its phiPen), multinom() with up to 5 categories.  At its
# first call the ll() compares itself with the family's own on a few rows
# (ls_rows_agree()): where they differ -- an mgcv whose family changed --
# the family's own ll() runs the whole fit, and fit$device says so.

# ls_math.h's family codes, by mgcv's family name
ls_family_codes <- c(gaulss = 1L, gumbls = 2L, gammals = 3L, multinom = 4L, ziplss = 5L,
                     gevlss = 6L, twlss = 7L, shash = 8L)

# family_math.h's link codes of the links a location-scale row takes
ls_link_codes <- c(identity = 1L, log = 2L, inverse = 3L, sqrt = 8L, logb = 11L, lb = 12L,
                   xi = 13L, logeb = 14L)

# The family's code and links as the C takes them, or NULL where the C
# does not have them.
ls_rows_spec <- function(family) {
  code <- ls_family_codes[family$family[1L]]
  if (is.na(code) || !is.list(family$linfo) || length(family$linfo) > 4L) return(NULL)
  # (make.link()'s links carry "name", mgcv's own "link")
  links <- vapply(family$linfo, function(li) {
    nm <- if (is.character(li$link)) li$link else li$name
    if (is.character(nm)) nm[1L] else ""
  }, "")
  if (!all(links %in% c(names(ls_link_codes), "logit"))) return(NULL)
  # ("logb": linkinv(eta) = 1 / (exp(eta) + b), its b read from the link
  # as 1 / linkinv(-Inf); a "log" whose inverse is not exp() is mgcv's
  # lower-bounded one, b + log(1 + exp(eta)), b = linkinv(-Inf); a "logit"
  # onto (-1, 0.5), 1.5 plogis(eta) - 1, gevlss()'s shape's; "logeb",
  # shash()'s log scale's, linkinv(eta) = log(exp(eta) + b), its b the
  # constant its linkinv's body is written with)
  par <- numeric(length(links))
  at <- c(-1, 0, 1)
  for (k in seq_along(links)) {
    inv <- family$linfo[[k]]$linkinv
    if (links[k] == "logb") par[k] <- 1 / inv(-Inf)
    if (links[k] == "log" && !identical(inv(at), pmax(exp(at), .Machine$double.eps))) {
      links[k] <- "lb"
      par[k] <- inv(-Inf)
    }
    if (links[k] == "logit")
      links[k] <- if (identical(inv(at), 1.5 * stats::binomial()$linkinv(at) - 1)) "xi" else ""
    if (links[k] == "logeb") {
      b <- ls_link_constant(inv)
      ok <- length(b) == 1L && is.finite(b) && b > 0 &&
        identical(inv(at), log(exp(at) + b)) &&
        identical(family$linfo[[k]]$mu.eta(at), exp(at) / (exp(at) + b))
      if (ok) par[k] <- b else links[k] <- ""
    }
  }
  if (!all(links %in% names(ls_link_codes))) return(NULL)
  if (code == ls_family_codes[["twlss"]]) {
    # (tw()'s range (a, b) of the power, which twlss() keeps beside its
    # ll(), in the power slots of theta's and rho's identity links)
    if (!identical(links[2:3], c("identity", "identity"))) return(NULL)
    ab <- tryCatch(c(get(".a", environment(family$ll)), get(".b", environment(family$ll))),
                   error = function(e) NULL)
    if (!is.numeric(ab) || length(ab) != 2L) return(NULL)
    par[2:3] <- ab
  }
  if (code == ls_family_codes[["shash"]]) {
    # (the penalty phiPen phi^2 that shash() subtracts from each row's log
    # likelihood, kept beside its ll(), in the power slot of phi's
    # identity link)
    if (!identical(links, c("identity", "logeb", "identity", "identity"))) return(NULL)
    pen <- tryCatch(get("phiPen", environment(family$ll)), error = function(e) NULL)
    if (!is.numeric(pen) || length(pen) != 1L || !is.finite(pen)) return(NULL)
    par[4L] <- pen
  }
  # (mgcv's index arrays of the packed derivatives, made once for the fit)
  tri <- mgcv::trind.generator(length(links))
  list(code = unname(code), links = unname(ls_link_codes[links]), link_par = par,
       i2 = as.integer(tri$i2), i3 = as.integer(tri$i3), i4 = as.integer(tri$i4))
}

# The numeric constants a link function's body is written with (shash()'s
# "logeb" writes its b into the function's text)
ls_link_constant <- function(f) {
  walk <- function(e)
    if (is.numeric(e)) e else if (is.call(e)) unlist(lapply(as.list(e)[-1L], walk))
  walk(body(f))
}

# The p x p scaled (pseudo-)inverse Hessian D Hp^-1 D of mgcv's expressions
# for gamlss.gH()'s Xe (its rows times it), from fh (a pivoted Choleski
# factor, or an eigen-decomposition) and D.
ls_scaled_inverse <- function(fh, D, p) {
  if (is.list(fh)) {
    d <- fh$values
    d[d > 0] <- 1 / d[d > 0]
    d[d <= 0] <- 0
    Z <- fh$vectors %*% (d * t(fh$vectors))
  } else {
    ipiv <- piv <- attr(fh, "pivot")
    ipiv[piv] <- seq_len(p)
    Z <- backsolve(fh, forwardsolve(t(fh), diag(p)[piv, , drop = FALSE]))[ipiv, , drop = FALSE]
  }
  Hm <- t(D * t(D * Z))
  storage.mode(Hm) <- "double"
  Hm
}

# gamgpu's ll() for a family ls_rows_spec() takes, with mgcv's arguments
# and results; in an environment (general_family_with_ll()) holding the
# spec, the family's own ll() (`own`, reading gamgpu's gamlss.gH()) for
# what the C does not take -- a discrete X, ncv, the sandwich, deriv 2, an
# X without its "lpi", shash()'s offsets (which its ll() refuses, in its
# own words) -- and the counters.
ls_ll <- function(y, X, coef, wt, family, offset = NULL, deriv = 0, d1b = 0, d2b = 0,
                  Hp = NULL, rank = 0, fh = NULL, D = NULL, eta = NULL, ncv = FALSE,
                  sandwich = FALSE) {
  env <- environment(sys.function())
  jj <- attr(X, "lpi")
  if (!env$use_c || is.list(X) || isTRUE(ncv) || isTRUE(sandwich) || deriv == 2 ||
      is.null(jj) || (deriv > 2 && isTRUE(family$available.derivs == 0)) ||
      (env$spec$code == ls_family_codes[["shash"]] && length(offset) &&
       !is.null(offset[[1L]]))) {
    args <- list(y, X, coef, wt, family, offset = offset, deriv = deriv, d1b = d1b, d2b = d2b,
                 Hp = Hp, rank = rank, fh = fh, D = D)
    if (!is.null(eta)) args$eta <- eta
    if (isTRUE(ncv)) args$ncv <- ncv
    if (isTRUE(sandwich)) args$sandwich <- sandwich
    if (env$use_c) env$.gg_counts$delegated <- env$.gg_counts$delegated + 1L
    return(do.call(env$own, args))
  }
  if (!env$checked) {
    env$checked <- TRUE
    if (!ls_rows_agree(env, y, X, coef, wt, family, offset)) {
      env$use_c <- FALSE
      if (!is.null(env$device))
        ls_device_refused(env$device, sprintf(paste("gamgpu's %s() rows differed from the",
                                                    "family's own on the first rows (another",
                                                    "mgcv release?): the family's own ll() ran",
                                                    "on the CPU"), family$family[1L]))
      return(sys.function()(y, X, coef, wt, family, offset, deriv, d1b, d2b, Hp, rank, fh, D,
                            eta))
    }
  }
  t0 <- proc.time()[["elapsed"]]
  o <- if (!is.null(env$device) && is.null(eta))
    ls_ll_session(env$device, env$spec, y, X, coef, jj, offset, deriv, d1b, d2b, fh, D)
  else ls_ll_c(env$spec, y, X, coef, jj, offset, deriv, d1b, d2b, fh, D, eta)
  counts <- env$.gg_counts
  counts$calls <- counts$calls + 1L
  counts$seconds <- counts$seconds + (proc.time()[["elapsed"]] - t0)
  list(l = o$l, l0 = o$l0, lb = o$lb, lbb = o$lbb,
       d1H = if (deriv >= 3) lapply(seq_len(dim(o$d1H)[3L]), function(i) o$d1H[, , i]),
       d2H = NULL, trHid2H = o$trHid2H)
}

# ll()'s offsets as the C takes them: a list of K, each NULL or a double
# n-vector (a single value recycled as R's eta + offset would; 0: none)
ls_offsets <- function(offset, K, n)
  lapply(seq_len(K), function(k) {
    o <- if (!is.null(offset) && length(offset) >= k) offset[[k]]
    if (is.null(o) || (length(o) == 1L && o == 0)) return(NULL)
    as.double(if (length(o) == 1L) rep(o, n) else o)
  })

# the response as the rows take it (multinom()'s ll() rounds its classes
# and refuses others, in its own words)
ls_response <- function(spec, y, K) {
  if (spec$code == ls_family_codes[["multinom"]]) {
    y <- round(y)
    if (min(y) < 0 || max(y) > K) stop("response not in 0 to number of predictors + 1")
  }
  as.double(y)
}

ls_dmat <- function(x) { x <- as.matrix(x); storage.mode(x) <- "double"; x }

# The C's ll() (src/family/family_ls.c) on mgcv's arguments.
ls_ll_c <- function(spec, y, X, coef, jj, offset, deriv, d1b, d2b, fh, D, eta = NULL) {
  K <- length(jj)
  p <- ncol(X)
  if (!is.double(X)) storage.mode(X) <- "double"
  .Call(gg_ls_ll_r, ls_response(spec, y, K), X, as.double(coef), lapply(jj, as.integer),
        spec$code, as.integer(spec$links), as.double(spec$link_par),
        ls_offsets(offset, K, NROW(X)),
        if (!is.null(eta)) ls_dmat(eta), as.integer(deriv),
        spec$i2, spec$i3, spec$i4,
        if (deriv >= 3) ls_dmat(d1b), if (deriv >= 4) ls_dmat(d2b),
        if (deriv >= 4) ls_scaled_inverse(fh, D, p), general_family_threads())
}

# The C's ll() on a model session's X and y (R/session.R): on the GPU for a
# device fit, X resident in its memory from the first call on an X to the
# next X that differs (gam.fit5() hands ll() the same X, or an equal copy
# of it, through a fit, until it drops columns or the fit ends).  dev: an
# environment with the device plan, control, the session (ses) and the X
# last found equal to its own (alias); the rows' l0 is not returned (NULL:
# gam.fit5() does not read it).
ls_ll_session <- function(dev, spec, y, X, coef, jj, offset, deriv, d1b, d2b, fh, D) {
  K <- length(jj)
  p <- ncol(X)
  if (!is.double(X)) storage.mode(X) <- "double"
  ses <- general_session(dev, X, function() ls_response(spec, y, K))
  .Call(gg_ls_session_ll_r, ses$ptr, as.double(coef), lapply(jj, as.integer), spec$code,
        as.integer(spec$links), as.double(spec$link_par), ls_offsets(offset, K, NROW(X)),
        as.integer(deriv), spec$i2, spec$i3, spec$i4,
        if (deriv >= 3) ls_dmat(d1b), if (deriv >= 4) ls_dmat(d2b),
        if (deriv >= 4) ls_scaled_inverse(fh, D, p))
}

# dev's model session on X (a double matrix): the one open where X is its X
# or an equal copy (gam.fit5() hands ll() the same X through a fit), else
# a new one, the previous closed, with response() as its y (the ll()s read
# their response from their arguments) and unit prior weights.
general_session <- function(dev, X, response) {
  if (is.null(dev$ses) || !.Call(gg_session_same_x_r, dev$ses$ptr, X, dev$alias)) {
    ls_session_close(dev)
    dev$ses <- model_session(X, response(), session_unit_weights(dev, nrow(X)), NULL,
                             dev$plan, dev$control, unit_weights = TRUE)
    dev$loads <- dev$loads + 1L
  }
  dev$alias <- X
  dev$ses
}

# A general family's session's prior weights, all 1: none kept where the
# device is required (the session cannot move to the CPU, which reads an
# n-vector of them)
session_unit_weights <- function(dev, n) if (dev$plan$mode == 2L) NULL else rep(1, n)

# Close dev's session, keeping what it reports (where it ran, where its X
# was held, its fallback, its seconds) for fit$device: the last session's, a fallback once seen kept.
ls_session_close <- function(dev) {
  if (is.null(dev$ses)) return(invisible())
  info <- dev$ses$info()
  dev$backends <- union(dev$backends, info$backend)
  dev$placement <- union(dev$placement, info$placement)
  # (a session that left the device: the fit's next ones open on the CPU)
  if (nzchar(info$fallback)) {
    dev$fallback <- info$fallback
    dev$plan$mode <- 0L
  }
  dev$seconds <- dev$seconds + c(transfer = info$t_transfer, rows = info$t_rows)
  dev$ses$close()
  dev$ses <- NULL
  dev$alias <- NULL
  invisible()
}

# Where a device fit's rows cannot run on the device after all: under
# device = "required" a classed error, under "auto" a recorded fallback.
ls_device_refused <- function(dev, why) {
  if (dev$policy == "required")
    gamgpu_abort("gamgpu_device_unavailable",
                 sprintf("device = \"required\", but %s; use device = \"auto\" or \"off\"",
                         why), call = NULL)
  record_fallback("general_family", why)
  dev$fallback <- why
  dev$plan <- list(mode = 0L, ordinal = dev$plan$ordinal)
  invisible()
}

# A location-scale fit's device state (ls_ll_session()) for the device
# policy, plan and control of gam_gpu()'s call.
ls_device_state <- function(policy, plan, control) {
  dev <- new.env(parent = emptyenv())
  dev$policy <- policy
  dev$plan <- plan
  dev$control <- control
  dev$loads <- 0L
  dev$backends <- character()
  dev$placement <- character()
  dev$seconds <- c(transfer = 0, rows = 0)
  dev$fallback <- ""
  dev
}

# Whether the C's ll() equals the family's own on the first rows (at most
# 100) at these coefficients: log likelihood, gradient and Hessian (deriv
# 1), and the Hessian's derivatives and traces (deriv 4, at arbitrary d1b,
# d2b), each within 1e-10 of its scale.  Both take the same linear
# predictors (each ll()'s eta argument): the rows' expressions are
# compared, not two sums of X's columns, which a BLAS may round otherwise
# (where a row is ill-conditioned -- gevlss()'s near a zero shape raises
# its row to the power 1 / xi -- that would be all the difference).
# mgcv's location-scale families and their links are its code, not an
# interface; a release whose family differs keeps its own ll().
ls_rows_agree <- function(env, y, X, coef, wt, family, offset) {
  n <- NROW(y)
  rows <- seq_len(min(n, 100L))
  jj <- attr(X, "lpi")
  Xs <- X[rows, , drop = FALSE]
  attr(Xs, "lpi") <- jj
  sub <- function(o) if (is.null(o) || length(o) != n) o else o[rows]
  os <- if (is.list(offset)) lapply(offset, sub) else offset
  ys <- if (is.matrix(y)) y[rows, , drop = FALSE] else y[rows]
  offs <- ls_offsets(os, length(jj), length(rows))
  eta <- vapply(seq_along(jj), function(k) {
    e <- drop(Xs[, jj[[k]], drop = FALSE] %*% coef[jj[[k]]])
    if (is.null(offs[[k]])) e else e + offs[[k]]
  }, numeric(length(rows)))
  eta <- matrix(eta, length(rows))
  # (twlss()'s ll() takes no eta: both make theirs from X then)
  if (!"eta" %in% names(formals(env$own))) eta <- NULL
  with_eta <- function(a) { if (!is.null(eta)) a$eta <- eta; a }
  p <- ncol(X)
  d1b <- matrix(cos(seq_len(2L * p)), p)
  d2b <- matrix(sin(seq_len(3L * p)), p)
  fh <- list(values = rep(1, p), vectors = diag(p))
  run <- function(f) tryCatch(f(), error = function(e) NULL)
  a1 <- run(function() do.call(env$own, with_eta(list(ys, Xs, coef, wt[rows], family,
                                                      offset = os, deriv = 1))))
  b1 <- run(function() ls_ll_c(env$spec, ys, Xs, coef, jj, os, 1, 0, 0, NULL, NULL, eta))
  higher <- !isTRUE(family$available.derivs == 0)
  a4 <- if (higher)
    run(function() do.call(env$own, with_eta(list(ys, Xs, coef, wt[rows], family, offset = os,
                                                   deriv = 4, d1b = d1b, d2b = d2b,
                                                   Hp = diag(p), rank = p, fh = fh,
                                                   D = rep(1, p)))))
  b4 <- if (higher)
    run(function() ls_ll_c(env$spec, ys, Xs, coef, jj, os, 4, d1b, d2b, fh, rep(1, p), eta))
  close <- function(u, v) {
    u <- unlist(u)
    v <- unlist(v)
    s <- max(abs(u), 1)
    length(u) == length(v) && all(is.finite(v)) && max(abs(u - v)) <= 1e-10 * s
  }
  # (a family without third and fourth derivatives -- twlss(): its
  # available.derivs is 0 -- is asked for none)
  first <- !is.null(a1) && !is.null(b1) && close(a1$l, b1$l) && close(a1$lb, b1$lb) &&
    close(a1$lbb, b1$lbb)
  if (!higher) return(first)
  first && !is.null(a4) && !is.null(b4) &&
    close(a4$d1H, lapply(seq_len(2L), function(i) b4$d1H[, , i])) &&
    close(a4$trHid2H, b4$trHid2H)
}
