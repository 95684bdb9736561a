# The general families: mgcv's "general.family" objects, whose likelihood
# is not a sum of per-row deviances of one linear predictor (cox.ph()'s
# partial likelihood; the location-scale families' several predictors).
# gam() fits them with gam.fit5(): a full Newton iteration on the
# penalized log likelihood inside newton()'s outer iteration on the
# Laplace approximate REML, around the family's ll(), which returns the log
# likelihood with its derivatives in beta and those of its Hessian in the
# log smoothing parameters.
#
# gamgpu fits them by one of two routes.  The native route (the default
# wherever it takes the call, general_native_refusal():
# R/general_outer.R) runs gam.fit5()'s and newton()'s algorithm itself on
# p x p quantities, X in a model session.  gam()'s iteration (every other
# call, or options(gamgpu.general_route = "gam")) runs it as gam() runs
# it -- mgcv's own code, through gam() on the call's arguments -- with the
# family's ll() replaced by gamgpu's: the work over the rows (for cox.ph(),
# the risk sets' prefix sums and weighted Gram products of
# src/family/family_cox.c) in gamgpu's engine, the p x p Newton and REML
# work in mgcv's.  The fitted object is gam()'s, with the family's own ll()
# put back and fit$device beside it, fit$device$route saying which route
# ran (and route_reason why gam()'s iteration did).

# The general families gamgpu fits, by the name their ll() has here; NULL
# for any other family.
general_family_name <- function(family) {
  if (!inherits(family, "general.family")) return(NULL)
  if (identical(family$family, "Cox PH")) return("cox.ph")
  # (mvn(): its ll() from the rows' sufficient statistics, R/family_mvn.R)
  if (identical(family$family, "Multivariate normal") && is.function(family$ll)) return("mvn")
  # (the location-scale families and multinom: their ll() hands the rows'
  # derivatives to mgcv's gamlss.gH() for the products -- told by the code
  # itself, whatever the mgcv release)
  if (is.function(family$ll) && "gamlss.gH" %in% all.names(body(family$ll)))
    return(family$family[1L])
  NULL
}

# cox.ph()'s ll(), with mgcv's arguments and results: y the times (or
# cbind(time, stratum)) in decreasing order of time within strata, as the
# family's preinitialize sorts them; wt the event indicators (1: event).
# deriv 0: l; 1: and lb, lbb; 2: and d1H[i] = tr(fh dH/drho_i); 3: d1H a
# list of dH/drho_i given d1b; 4: l, lb, lbb and trHid2H, the traces of
# Hp's pseudo-inverse (its first `rank` eigenvalues, scaled by D) with H's
# second derivatives given d2b.  (At deriv 4 mgcv's ll() also returns d1H
# and H's second derivatives' leading diagonals in Hp's eigenvectors, d2H,
# which gam.fit5() does not read: here NULL.)
cox_ll <- function(y, X, coef, wt, family, offset = NULL, deriv = 0, d1b = 0, d2b = 0,
                   Hp = NULL, rank = 0, fh = NULL, D = NULL, ...) {
  t0 <- proc.time()[["elapsed"]]
  level <- deriv - 1L
  clevel <- if (level == 1L) 2L else level
  p <- ncol(X)
  env <- environment(sys.function())
  dev <- if (exists("calls", envir = env, inherits = FALSE)) env$device
  W <- NULL
  if (clevel >= 3L) {
    ev <- if (is.list(fh)) fh else eigen(Hp, symmetric = TRUE)
    lam <- ev$values
    if (rank < p) lam[(rank + 1L):p] <- 0
    DV <- ev$vectors * D
    W <- DV %*% ((ifelse(lam > 0, 1 / lam, 0)) * t(DV))
  }
  if (clevel < 2L) d1b <- d2b <- NULL
  if (clevel < 3L) d2b <- NULL
  if (!is.null(d1b)) d1b <- matrix(as.double(d1b), p)
  if (!is.null(d2b)) d2b <- matrix(as.double(d2b), p)
  if (!is.double(X)) storage.mode(X) <- "double"
  ev_ind <- as.integer(wt)
  g <- cox_time_groups(env, y)
  if (!is.null(dev) && !isTRUE(env$checked)) {
    env$checked <- TRUE
    why <- cox_device_agrees(dev, X, coef, offset, g$grp, ev_ind, g$gstr)
    if (!is.null(why)) {
      ls_device_refused(dev, sprintf(paste("gamgpu's cox.ph() rows on the device %s on the",
                                           "check's rows"),
                                     why))
      env$device <- dev <- NULL
    }
  }
  if (!is.null(dev)) {
    out <- cox_ll_session(dev, X, coef, offset, g$grp, ev_ind, g$nt, clevel, d1b, d2b, W,
                          g$gstr)
  } else {
    eta <- drop(X %*% coef)
    if (length(offset)) eta <- eta + offset
    out <- .Call(gg_cox_ll_r, eta, X, g$grp, ev_ind, g$nt, g$gstr, clevel, d1b, d2b, W,
                 general_family_threads())
  }
  d1H <- NULL
  if (level == 1L) {
    d1H <- vapply(seq_len(dim(out$d1H)[3L]), function(i) sum(fh * out$d1H[, , i]), 0)
  } else if (level == 2L) {
    d1H <- lapply(seq_len(dim(out$d1H)[3L]), function(i) out$d1H[, , i])
  }
  if (exists("calls", envir = env, inherits = FALSE)) {     # (general_family_with_ll())
    env$calls <- env$calls + 1L
    env$seconds <- env$seconds + (proc.time()[["elapsed"]] - t0)
  }
  list(l = out$l, lb = out$lb, lbb = out$lbb, d1H = d1H,
       trHid2H = if (level >= 3L) out$trHid2H)
}

# cox_groups() of y, kept in a fit's ll() environment
# (general_family_with_ll()'s) for the response they were found for:
# gam.fit5() hands ll() the same y on every call.
cox_time_groups <- function(env, y) {
  keep <- exists("calls", envir = env, inherits = FALSE)
  if (keep && identical(env$.grp_y, y)) return(env$.grp)
  out <- cox_groups(y)
  if (keep) {
    env$.grp_y <- y
    env$.grp <- out
  }
  out
}

# The rows' time groups for cox.ph()'s C (src/family/family_cox.h): y the
# times, or cbind(time, stratum), in the family's preinitialize()'s order
# (decreasing time within each stratum, the strata one after another).
# grp: 1.. along the rows, a group for each time of a stratum; nt of them;
# gstr: each group's stratum (0.., non-decreasing), NULL for the times
# alone.
cox_groups <- function(y) {
  if (!is.matrix(y)) {
    times <- unique(y)
    return(list(grp = match(y, times), nt = length(times), gstr = NULL))
  }
  tm <- y[, 1L]
  n <- length(tm)
  sk <- match(y[, 2L], unique(y[, 2L]))
  if (n > 1L && any(diff(sk) < 0L))
    gamgpu_abort("gamgpu_bad_input", paste("cox.ph()'s strata must each be one run of rows,",
                                           "as the family's preinitialize() sorts them"),
                 call = NULL)
  new <- c(TRUE, tm[-1L] != tm[-n] | sk[-1L] != sk[-n])
  grp <- cumsum(new)
  list(grp = as.integer(grp), nt = as.integer(grp[n]), gstr = as.integer(sk[new] - 1L))
}

# The rows cox_device_agrees() takes of n: the first 2000; with strata
# (gstr, the time groups' strata) 5000 around the first stratum's end,
# so that the device's segmented scans meet a stratum's start and the
# carries between their 2048-row tiles.
cox_check_rows <- function(n, grp, gstr = NULL) {
  if (is.null(gstr)) return(seq_len(min(n, 2000L)))
  m <- min(n, 5000L)
  rs <- gstr[grp]
  b <- which(rs[-1L] != rs[-n])[1L]
  start <- if (is.na(b)) 1L else max(1L, min(b - m %/% 2L, n - m + 1L))
  start - 1L + seq_len(m)
}

# Whether cox.ph()'s ll() where dev's sessions run (its device) equals the
# CPU engine's on some of the fit's rows (rows, cox_check_rows(); their own
# risk sets; X all the rows or those; gstr: the time groups' strata, or
# NULL) at these coefficients: at levels 0, 2 and 3 with fixed derivative
# inputs, each result within 1e-9 of its largest entry -- asked once per
# fit before the device takes its rows.  NULL where it does, else what
# went wrong.
cox_device_agrees <- function(dev, X, coef, offset, grp, event, gstr = NULL,
                              rows = cox_check_rows(length(grp), grp, gstr)) {
  m <- length(rows)
  Xs <- if (nrow(X) == m) X else X[rows, , drop = FALSE]
  gr <- grp[rows]
  g <- gr - gr[1L] + 1L
  gs <- if (!is.null(gstr)) gstr[gr[1L]:gr[m]]
  ev <- event[rows]
  off <- if (length(offset) > 1L) offset[rows] else offset
  p <- ncol(X)
  d1b <- matrix(cos(seq_len(2L * p)) / 3, p)
  d2b <- matrix(sin(seq_len(3L * p)) / 5, p)
  W <- (diag(p) + 0.1) / p
  eta <- drop(Xs %*% coef)
  if (length(off)) eta <- eta + off
  chk <- ls_device_state(dev$policy, dev$plan, dev$control)
  on.exit(ls_session_close(chk))
  close <- function(a, b) {
    u <- unlist(a)
    v <- unlist(b)
    if (length(u) != length(v)) return(FALSE)
    length(u) == 0L || (all(is.finite(v)) && max(abs(u - v)) <= 1e-9 * max(abs(u)))
  }
  for (level in c(0L, 2L, 3L)) {
    a <- .Call(gg_cox_ll_r, eta, Xs, g, ev, g[m], gs, level, d1b, if (level >= 3L) d2b,
               if (level >= 3L) W, 1L)
    b <- tryCatch(cox_ll_session(chk, Xs, coef, off, g, ev, g[m], level, d1b, d2b, W, gs),
                  error = function(e) e)
    if (inherits(b, "error")) return(paste("failed:", conditionMessage(b)))
    if (!all(vapply(names(a), function(nm) close(a[[nm]], b[[nm]]), NA)))
      return(sprintf("differed from the CPU engine's (level %d)", level))
  }
  NULL
}

# cox.ph()'s ll() (gstr: the time groups' strata, or NULL) on a model
# session's X (R/session.R): on the GPU for a device fit, X resident in
# its memory from the first call on an X to the next X that differs, as
# ls_ll_session()'s; eta made there from the coefficients.  The rows' event indicators stand as the
# session's response (the ll() reads them from its arguments).
cox_ll_session <- function(dev, X, coef, offset, grp, event, nt, level, d1b, d2b, W,
                           gstr = NULL) {
  ses <- general_session(dev, X, function() as.double(event))
  off <- if (length(offset) && any(offset != 0)) as.double(rep_len(offset, nrow(X)))
  .Call(gg_cox_session_ll_r, ses$ptr, as.double(coef), off, grp, event, nt, gstr, level,
        d1b, d2b, W)
}

# gamgpu's gamlss.gH() (mgcv's arguments and results) for a model matrix:
# the products over the rows in src/family/family_gamlss.c, over the
# fit's threads (mgcv's numbers to rounding: the same sums in other
# orders).  What it does not
# take -- mgcv's discrete X (a list), the sandwich, deriv = 1 (the traces
# tr(fh dH/drho), which gam.fit5() does not ask for), index functions in
# place of arrays -- goes to mgcv's own, counted in `delegated`.
ls_gH <- function(X, jj, l1, l2, i2, l3 = 0, i3 = 0, l4 = 0, i4 = 0, d1b = 0, d2b = 0,
                  deriv = 0, fh = NULL, D = NULL, sandwich = FALSE, ...) {
  t0 <- proc.time()[["elapsed"]]
  env <- environment(sys.function())
  counted <- exists("calls", envir = env, inherits = FALSE)
  if (is.list(X) || isTRUE(sandwich) || deriv == 1 || is.function(i2) ||
      (deriv >= 2 && (is.function(i3) || (deriv >= 3 && is.function(i4))))) {
    if (counted) env$delegated <- env$delegated + 1L
    return(mgcv_fun("gamlss.gH")(X, jj, l1, l2, i2, l3 = l3, i3 = i3, l4 = l4, i4 = i4,
                                 d1b = d1b, d2b = d2b, deriv = deriv, fh = fh, D = D,
                                 sandwich = sandwich, ...))
  }
  p <- ncol(X)
  dm <- function(x) { x <- as.matrix(x); storage.mode(x) <- "double"; x }
  ix <- function(x) { x <- as.integer(x); x }
  # (the C takes the rows' quadratic forms in D Hp^-1 D, p x p, in place
  # of mgcv's n K x p Xe: src/family/gamlss_blocks.c)
  Hm <- if (deriv >= 3) ls_scaled_inverse(fh, D, p)
  if (!is.double(X)) storage.mode(X) <- "double"
  o <- .Call(gg_ls_gh_r, X, lapply(jj, as.integer), dm(l1), dm(l2), ix(i2),
             if (deriv >= 2) dm(l3), if (deriv >= 2) ix(i3),
             if (deriv >= 3) dm(l4), if (deriv >= 3) ix(i4),
             if (deriv >= 2) dm(d1b), if (deriv >= 3) dm(d2b), Hm, as.integer(deriv),
             general_family_threads())
  if (counted) {
    env$calls <- env$calls + 1L
    env$seconds <- env$seconds + (proc.time()[["elapsed"]] - t0)
  }
  list(lb = o$lb, lbb = o$lbb,
       d1H = if (deriv >= 2) lapply(seq_len(dim(o$d1H)[3L]), function(i) o$d1H[, , i]),
       d2H = NULL, trHid2H = o$trHid2H)
}

# The host threads of the general family's fit under way: its thin plate
# constructions and its products over the rows (general_family_fit() sets
# them, and unsets them on exit, with the count of the bases built by
# gamgpu's construction and by mgcv's); 1 outside a fit.
general_family_threads <- function() {
  th <- .gamgpu_state$general_threads
  if (is.null(th)) 1L else th
}

# The family's ll() with gamgpu's rows: for cox.ph() gamgpu's whole ll();
# for mvn() gamgpu's whole ll() (R/family_mvn.R), the family's own beside
# it; for the families whose ll() hands its products to mgcv's gamlss.gH(), the
# family's own ll() (its rows' derivatives are its own code) reading
# gamgpu's ls_gH() in gamlss.gH()'s place.  Either in an environment that
# counts the calls and seconds of gamgpu's part.  spec: ls_rows_spec() of
# the family, where the caller has it.
general_family_with_ll <- function(family, name, device = NULL,
                                   spec = if (!name %in% c("cox.ph", "mvn"))
                                     ls_rows_spec(family)) {
  counts <- new.env(parent = asNamespace("gamgpu"))
  counts$calls <- 0L
  counts$seconds <- 0
  counts$delegated <- 0L
  if (name == "cox.ph") {
    ll <- cox_ll
    counts$device <- device
    environment(ll) <- counts
    family$hazard <- cox_hazard_for(family$hazard)
  } else if (name == "mvn") {
    lenv <- new.env(parent = asNamespace("gamgpu"))
    lenv$own <- family$ll
    lenv$use_c <- TRUE
    lenv$checked <- FALSE
    lenv$.gg_counts <- counts
    lenv$device <- device
    ll <- mvn_ll
    environment(ll) <- lenv
  } else {
    ll <- family$ll
    gh <- ls_gH
    environment(gh) <- counts
    env <- new.env(parent = environment(family$ll))
    # (twlss()'s ll() looks for mgcv's functions -- ldTweedie(),
    # gamlss.etamu() -- from the global environment, where they are found
    # only while mgcv is attached: those it names and cannot find, from
    # mgcv's namespace)
    mg <- asNamespace("mgcv")
    for (nm in intersect(all.names(body(family$ll)), ls(mg, all.names = TRUE)))
      if (!exists(nm, envir = environment(family$ll))) assign(nm, get(nm, mg), envir = env)
    env$gamlss.gH <- gh
    env$.gg_counts <- counts
    environment(ll) <- env
    # (the families and links whose rows gamgpu's C has: its whole ll(),
    # the family's own beside it -- R/family_ls_rows.R)
    if (!is.null(spec)) {
      lenv <- new.env(parent = asNamespace("gamgpu"))
      lenv$spec <- spec
      lenv$own <- ll
      lenv$use_c <- TRUE
      lenv$checked <- FALSE
      lenv$.gg_counts <- counts
      lenv$device <- device
      ll <- ls_ll
      environment(ll) <- lenv
    }
  }
  family$ll <- ll
  family
}

# Whose code computed a location-scale family's rows in the fit: "gamgpu"
# (R/family_ls_rows.R), "family" (the family's own ll(), gamgpu's products)
# with attribute "why" where gamgpu's C did not take them.
general_family_rows <- function(family, name) {
  env <- environment(family$ll)
  if (name == "cox.ph") return("gamgpu")
  if (!exists("use_c", envir = env, inherits = FALSE))
    return(structure("family", why = sprintf(paste("gamgpu's rows do not have %s() with",
                                                   "these links yet"), name)))
  if (!env$use_c)
    return(structure("family", why = paste(if (name == "mvn") "gamgpu's log likelihood"
                                           else "gamgpu's rows", "differed from the family's",
                                           "own on the first rows (another mgcv release?)")))
  "gamgpu"
}

# The counters of a family from general_family_with_ll().
general_family_counts <- function(family) {
  env <- environment(family$ll)
  if (exists(".gg_counts", envir = env, inherits = FALSE)) env$.gg_counts else env
}

# A family whose ll() reads no prior weights: gam() fits it without them,
# and so does gam_gpu() -- said, not silent, where the fit has some.
general_weights_unused <- function(name, family, object) {
  if (name != "cox.ph" && !("wt" %in% all.names(body(family$ll))) &&
      any(object$prior.weights != 1))
    gamgpu_warn("gamgpu_weights_unused",
                sprintf(paste("%s()'s log likelihood takes no prior weights: gam() fits it",
                              "without them, and so did gam_gpu() (they are kept in",
                              "fit$prior.weights)"), name), call = NULL)
  invisible()
}

# A family without derivatives beyond the first (twlss()): gam() fits it
# by its extended Fellner-Schall iteration, whose call of mgcv's efsud()
# hands it no offset (mgcv 1.8-41: none; 1.9-3: G$offxset, NULL) -- the
# fit as without the offsets, which gam() keeps in fit$offset.  gam_gpu()
# fits it as gam() does and says so.
general_offset_unused <- function(name, family, object) {
  derivs <- family$available.derivs
  off <- unlist(object$offset)
  if (!is.null(derivs) && derivs == 0 && length(off) && any(off != 0))
    gamgpu_warn("gamgpu_offset_unused",
                sprintf(paste("gam() fits %s() by its extended Fellner-Schall iteration,",
                              "which takes no offset: gam() fits the model without the",
                              "offsets, and so did gam_gpu() (they are kept in fit$offset);",
                              "where they matter, enter the variable as a covariate, its",
                              "coefficient estimated"), name), call = NULL)
  invisible()
}

# gam_gpu() for a general family: the native route's fit, or gam()'s on the
# call's arguments with gamgpu's ll() (see the top of this file).  cl:
# gam_gpu()'s call, env its frame; the arguments already read by gam_gpu()
# beside it.
general_family_fit <- function(cl, env, family, method, control, device, dots, t0) {
  name <- general_family_name(family)
  if (identical(method, "fREML"))
    gamgpu_abort("gamgpu_unsupported_method",
                 sprintf(paste("method = \"fREML\" is bam()'s, and bam() does not fit general",
                               "families such as %s(): use method = \"REML\" (gam()'s Laplace",
                               "approximate REML, by which gam() fits them)"), name), call = NULL)
  if (!is.null(cl$rho) && !identical(eval(cl$rho, env), 0))
    gamgpu_abort("gamgpu_unsupported_argument",
                 sprintf("AR1 residuals (rho) are bam()'s, which does not fit %s(): drop rho",
                         name), arguments = "rho", call = NULL)
  if (isTRUE(dots$discrete)) inform_discrete_exact()
  control <- as_gam_gpu_control(control)
  for (nm in c("nthreads", "chunk.size"))
    if (!is.null(dots[[nm]])) control <- control_from_argument(control, nm, dots[[nm]])
  given <- attr(control, "given")
  if ("newton.maxit" %in% given && control$newton.maxit != 200L)
    gamgpu_abort("gamgpu_bad_control",
                 sprintf(paste("control newton.maxit: gam()'s outer iteration, which fits %s(),",
                               "takes at most 200 Newton steps and has no setting for it"), name))
  if ("hat" %in% given && !isTRUE(control$hat))
    gamgpu_abort("gamgpu_bad_control",
                 sprintf(paste("control hat = FALSE: gam()'s fit of %s(), which gamgpu runs,",
                               "always computes the leverages; drop hat"), name))
  policy <- check_policy(device)
  cpu_gram_option()
  # (cox.ph()'s rows, mvn()'s products and the location-scale rows gamgpu's C has run on the
  # device: a model session's, R/family_ls_rows.R; the others' on the CPU)
  dev <- NULL
  spec <- if (!name %in% c("cox.ph", "mvn")) ls_rows_spec(family)
  why <- sprintf("%s()'s rows have no device kernels yet: the CPU engine ran them", name)
  if (policy != "off" && (name %in% c("cox.ph", "mvn") || !is.null(spec))) {
    dev <- ls_device_state(policy, device_plan(device, "general_family"), control)
    on.exit(ls_session_close(dev), add = TRUE)
  } else if (policy == "required") {
    gamgpu_abort("gamgpu_device_unavailable",
                 sprintf("device = \"required\", but %s; use device = \"auto\" or \"off\"", why),
                 call = NULL)
  } else if (policy == "auto") {
    record_fallback("general_family", why)
  }

  fam <- general_family_with_ll(family, name, dev, spec)
  gcall <- cl
  gcall[[1L]] <- quote(mgcv::gam)
  drop_args <- c("device", "control", "chunk.size", "rho", "AR.start", "discrete", "nthreads",
                 "cluster", "samfrac", "use.chol", "gc.level", "coef")
  gcall <- gcall[!(names(gcall) %in% drop_args)]
  gcall$family <- fam
  gcall$method <- method
  # (the thin plate bases by gamgpu's construction: R/general_family_setup.R)
  .gamgpu_state$general_threads <- control$nthreads
  on.exit(.gamgpu_state$general_threads <- .gamgpu_state$gg_tp_built <- NULL, add = TRUE)
  formula <- NULL
  if (is.null(dots$G)) {
    formula <- eval(cl$formula, env)
    gcall$formula <- gg_tp_formula(formula)
    .gamgpu_state$gg_tp_built <- c(gamgpu = 0L, mgcv = 0L)
  }
  newton <- if ("newton.tol" %in% given) list(conv.tol = control$newton.tol) else list()
  gcall$control <- mgcv::gam.control(nthreads = control$nthreads, epsilon = control$epsilon,
                                     maxit = control$maxit, trace = control$trace,
                                     newton = newton)
  if (!is.null(dots$G)) {
    # (gam()'s setup object: its family, with gamgpu's ll())
    G <- dots$G
    G$family <- general_family_with_ll(G$family, name, dev, spec)
    gcall$G <- G
    gcall$family <- NULL
  }
  # (an error of gam()'s set-up or fit, or of the family's own code, as
  # gamgpu's classed error on either route)
  gam_failed <- function(e) {
    if (inherits(e, "gamgpu_error")) stop(e)
    gamgpu_abort("gamgpu_setup_failed", paste0("gam() could not fit the model: ",
                                               conditionMessage(e)), call = NULL)
  }
  # gamgpu's own Newton and outer iteration (R/general_outer.R) wherever it
  # takes the call, unless options(gamgpu.general_route = "gam"); else, or
  # where it declines the fit, gam()'s iteration, fit$device$route_reason
  # saying why
  route_why <- if (!general_native_wanted())
    "options(gamgpu.general_route = \"gam\") selects gam()'s iteration" else
      general_native_refusal(family, spec, method, cl, env, dots)
  if (is.null(route_why)) {
    object <- tryCatch(general_native_fit(gcall, env, family, name, spec, dev, control,
                                          gcall$control, t0, policy),
                       error = gam_failed)
    if (!inherits(object, "gamgpu_gf_declined")) {
      if (!is.null(formula)) object$formula <- gg_tp_restored(object$formula, formula)
      object$call <- cl
      object$device$tp_bases <- .gamgpu_state$gg_tp_built
      general_weights_unused(name, family, object)
      if (dots$gc.level > 0) gc()
      return(object)
    }
    route_why <- object$why
  }
  t1 <- proc.time()[["elapsed"]]
  progress_phase(progress_wanted(NA), sprintf("Fitting by gam()'s iteration with gamgpu's %s() rows",
                                              name))
  object <- withCallingHandlers(tryCatch(eval(gcall, env), error = gam_failed))
  if (!is.null(formula)) object$formula <- gg_tp_restored(object$formula, formula)
  if (!inherits(object, "gam")) return(object)               # fit = FALSE: the setup
  ll_env <- general_family_counts(object$family)
  rows_by <- general_family_rows(object$family, name)
  general_weights_unused(name, family, object)
  general_offset_unused(name, family, object)
  object$family$ll <- family$ll
  object$family$hazard <- family$hazard
  object$call <- cl
  if (dots$gc.level > 0) gc()
  t2 <- proc.time()[["elapsed"]]
  backend <- "cpu"
  if (!is.null(dev)) {
    ls_session_close(dev)
    if (identical(dev$backends, "cuda") && !nzchar(dev$fallback)) backend <- "cuda"
    else if (nzchar(dev$fallback)) why <- dev$fallback
  }
  object$device <- list(
    backend = backend,
    reason = device_reason(policy, backend, why),
    # (where the sessions held X: on the device, resident or streamed)
    placement = if (backend == "cuda" && length(dev$placement))
      paste(c(setdiff(dev$placement, "host"), "a model session per X"), collapse = "; ")
      else "host",
    model_matrix = "matrix",
    model_matrix_reason = sprintf("gam()'s own setup built X on every row (%s(), a general family)",
                                  name),
    route = if (name == "mvn" && rows_by == "gamgpu")
      sprintf(paste("general family: gam()'s Newton iteration (gam.fit5) and outer REML",
                    "iteration, mvn()'s log likelihood and its derivatives by gamgpu's engine",
                    "from the rows' sufficient statistics (the residuals' products with X and",
                    "with themselves, %s)"),
              if (is.null(dev)) "by R's BLAS on the host" else "on a model session's X")
    else if (name == "mvn")
      sprintf(paste("general family: gam()'s Newton iteration (gam.fit5) and outer REML",
                    "iteration, mvn()'s log likelihood by the family's own ll() (%s)"),
              attr(rows_by, "why"))
    else if (name == "cox.ph")
      sprintf(paste("general family: gam()'s Newton iteration (gam.fit5) and outer",
                    "REML iteration, %s()'s log likelihood and its derivatives by",
                    "gamgpu's engine"), name)
    else if (rows_by == "gamgpu")
      sprintf(paste("general family: gam()'s Newton iteration (gam.fit5) and outer",
                    "REML iteration, %s()'s rows' log likelihood, its derivatives and the",
                    "products over the rows by gamgpu's engine"), name)
    else sprintf(paste("general family: gam()'s Newton iteration (gam.fit5) and outer",
                       "REML iteration, %s()'s rows' derivatives by the family's own ll() (%s),",
                       "the products over the rows (gamlss.gH()'s) by gamgpu's engine"), name,
                 attr(rows_by, "why")),
    # why gam()'s iteration ran, not gamgpu's native route (R/general_outer.R)
    route_reason = route_why,
    # whose code computed the rows' log likelihood and derivatives
    ll_rows = as.vector(rows_by),
    # the thin plate bases of s() terms built by gamgpu's construction and
    # by mgcv's (R/general_family_setup.R)
    tp_bases = .gamgpu_state$gg_tp_built,
    ll_calls = ll_env$calls,
    ll_delegated = ll_env$delegated,
    # setup: gam_gpu()'s checks; iterations: gam()'s setup, fit and
    # post-processing, of which ll_seconds in gamgpu's ll()
    timings = c(setup = t1 - t0, selection = 0, iterations = t2 - t1, postproc = 0),
    ll_seconds = ll_env$seconds,
    # a device fit's location-scale rows: X's loads into a model session
    # (one per distinct X gam.fit5() hands ll()) and the sessions' seconds
    # in copies and in the rows' work
    ll_sessions = if (!is.null(dev)) dev$loads,
    ll_session_seconds = if (!is.null(dev)) dev$seconds,
    # (cox.ph()'s Gram products go through gg_cpu_gram(); the location-scale
    # products are BLAS calls of mgcv's own shape, not Gram products)
    cpu_gram = if (name == "cox.ph" && backend == "cpu")
      cpu_gram_note(length(object$coefficients)))
  class(object) <- c("gam_gpu", class(object))
  object
}
