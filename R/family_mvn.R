# mgcv's mvn() family (the multivariate normal additive model) in gamgpu:
# its ll() from the rows' sufficient statistics.
#
# mvn()'s log likelihood reads the n rows only through X'X of the mean
# columns (which the family's preinitialize computes once: attr(X, "XX")),
# the residuals r = y - mu (n x m) through r'X and r'r, and n.  gamgpu's
# ll() forms mu = X B (B the p x m coefficients of the m predictors) and
# X'r over the rows -- on a model session's X, the device's for a GPU fit,
# loaded once per distinct X as the location-scale ll()'s
# (R/family_ls_rows.R) -- and r'r on the host (n x m^2), then all of
# mgcv's mvn_ll() algebra (p x p and in R's parameters theta) in
# src/family/family_mvn.c.  At its first call it compares itself with the
# family's own ll() on the first rows (mvn_rows_agree()); where they
# differ the family's own ll() runs the fit, and fit$device says so.

# gamgpu's ll() for mvn(), with mgcv's arguments and results; in an
# environment (general_family_with_ll()) holding the family's own ll()
# (`own`), whether gamgpu's runs (use_c), whether it was checked, the
# device state (device: NULL for a fit on the host) and the counters.
mvn_ll <- function(y, X, coef, wt, family, offset = NULL, deriv = 0, d1b = NULL, d2b = NULL,
                   Hp = NULL, rank = 0, fh = NULL, D = NULL) {
  env <- environment(sys.function())
  # (mgcv's own words: gam() reports them as the family's error)
  if (!is.null(offset))
    for (o in offset) if (sum(o != 0)) stop("mvn does not yet handle offsets")
  if (!env$use_c || is.list(X) || is.null(attr(X, "lpi")) || is.null(attr(X, "XX"))) {
    if (env$use_c) env$.gg_counts$delegated <- env$.gg_counts$delegated + 1L
    return(env$own(y, X, coef, wt, family, offset = offset, deriv = deriv, d1b = d1b,
                   d2b = d2b, Hp = Hp, rank = rank, fh = fh, D = D))
  }
  if (!env$checked) {
    env$checked <- TRUE
    if (!mvn_rows_agree(env, y, X, coef, wt, family)) {
      env$use_c <- FALSE
      if (!is.null(env$device))
        ls_device_refused(env$device, paste("gamgpu's mvn() log likelihood differed from the",
                                            "family's own on the first rows (another mgcv",
                                            "release?): the family's own ll() ran on the CPU"))
      return(sys.function()(y, X, coef, wt, family, offset, deriv, d1b, d2b, Hp, rank, fh, D))
    }
  }
  t0 <- proc.time()[["elapsed"]]
  o <- mvn_ll_stats(env$device, y, X, coef, deriv, d1b)
  counts <- env$.gg_counts
  counts$calls <- counts$calls + 1L
  counts$seconds <- counts$seconds + (proc.time()[["elapsed"]] - t0)
  mvn_ll_result(o, deriv, fh)
}

# mgcv's mvn ll()'s results from the C's: deriv < 2 no d1H; deriv 2 the
# traces d1H[i] = sum(fh * dH_i); deriv 3 the list of dH_i.
mvn_ll_result <- function(o, deriv, fh) {
  d1H <- NULL
  if (deriv >= 2 && !is.null(o$dH)) {
    k <- seq_len(dim(o$dH)[3L])
    d1H <- if (deriv == 2) vapply(k, function(i) sum(fh * o$dH[, , i]), 0)
           else lapply(k, function(i) o$dH[, , i])
  }
  list(l = o$l, lb = o$lb, lbb = o$lbb, d1H = d1H)
}

# The C's mvn ll() (src/family/family_mvn.c) on mgcv's arguments: the
# sufficient statistics over the rows -- on dev's model session, or on
# the host where dev is NULL -- then the algebra.  X: the model matrix
# gam.fit5() hands ll(), its mean columns first and R's m (m + 1) / 2
# (zero) columns last, with attributes "lpi", "XX" and perhaps "drop"
# (the columns gam.fit5() dropped: X'X loses them too, as mgcv's ll()
# does).
mvn_ll_stats <- function(dev, y, X, coef, deriv, d1b) {
  lpi <- attr(X, "lpi")
  XX <- attr(X, "XX")
  drop <- attr(X, "drop")
  if (!is.null(drop)) XX <- XX[-drop, -drop, drop = FALSE]
  storage.mode(XX) <- "double"
  y <- as.matrix(y)
  m <- length(lpi)
  p <- ncol(X)
  B <- matrix(0, p, m)
  for (l in seq_len(m)) B[lpi[[l]], l] <- coef[lpi[[l]]]
  if (is.null(dev)) {
    r <- y - X %*% B
    Xr <- crossprod(X, r)
  } else {
    if (!is.double(X)) storage.mode(X) <- "double"
    # (the response's first column stands as the session's y)
    ses <- general_session(dev, X, function() as.double(y[, 1L]))
    r <- y - .Call(gg_session_mul_r, ses$ptr, B, FALSE)
    Xr <- .Call(gg_session_mul_r, ses$ptr, r, TRUE)
  }
  pm <- nrow(XX)
  yX <- t(Xr[seq_len(pm), , drop = FALSE])
  .Call(gg_mvn_ll_r, XX, yX, crossprod(r), as.double(nrow(X)), as.double(coef),
        lapply(lpi, as.integer), if (deriv >= 2) ls_dmat(d1b))
}

# Whether gamgpu's mvn ll() equals the family's own on the first rows (at
# most 100) at these coefficients: at deriv 1 (l, lb, lbb) and deriv 3
# (the Hessian's derivatives at arbitrary d1b), each within 1e-10 of its
# scale.  Both read the same X'X (attr "XX": the family's, whatever rows
# it was formed on), so the rows' algebra is compared.  The statistics are
# formed on the host here: the device's products are the engine's own.
mvn_rows_agree <- function(env, y, X, coef, wt, family) {
  rows <- seq_len(min(NROW(y), 100L))
  Xs <- X[rows, , drop = FALSE]
  for (a in c("lpi", "XX", "drop")) attr(Xs, a) <- attr(X, a)
  ys <- as.matrix(y)[rows, , drop = FALSE]
  p <- ncol(X)
  d1b <- matrix(cos(seq_len(2L * p)) / 3, p)
  run <- function(f) tryCatch(f(), error = function(e) NULL)
  close <- function(u, v) {
    u <- unlist(u)
    v <- unlist(v)
    length(u) == length(v) && length(u) > 0L && all(is.finite(v)) &&
      max(abs(u - v)) <= 1e-10 * max(abs(u), 1)
  }
  for (deriv in c(1, 3)) {
    a <- run(function() env$own(ys, Xs, coef, wt[rows], family, deriv = deriv,
                                d1b = if (deriv >= 2) d1b))
    b <- run(function() mvn_ll_result(mvn_ll_stats(NULL, ys, Xs, coef, deriv, d1b), deriv,
                                      NULL))
    if (is.null(a) || is.null(b)) return(FALSE)
    for (nm in c("l", "lb", "lbb", if (deriv == 3) "d1H"))
      if (!close(a[[nm]], b[[nm]])) return(FALSE)
  }
  TRUE
}
