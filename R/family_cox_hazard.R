# cox.ph()'s post-processing: the baseline hazard, its variance and the
# residual matrices that mgcv's hazard() computes once on the fitted model
# (fit$family$data), by gamgpu's C (src/family/family_cox_hazard.c) where
# mgcv's R spends its time in apply(, 2, cumsum) over n x p matrices (33 s
# at 10^6 rows and 36 columns on two cores).  cox_hazard() returns what
# hazard() returns; gam()'s route (R/general_family.R) calls it as the
# family's hazard(), the native route (R/general_finish.R) runs
# cox_postproc(), the family's postproc with the rows put back in their
# order in C.  Stratified fits (y a matrix): cox_hazard_strata(), the C
# stratum by stratum as mgcv's hazard() runs its coxpp() and cumsum()s.

# hazard(y, X, beta, wt, offset) of mgcv's cox.ph(), rows in decreasing
# order of time; order (1-based, or NULL) puts Rs's and Rc's rows at
# order[i]; eta, where given, is X beta + offset already formed.
cox_hazard <- function(y, X, beta, wt, offset = 0, order = NULL, eta = NULL,
                       nthreads = cox_hazard_threads()) {
  tr <- unique(y)
  nt <- length(tr)
  r <- match(y, tr)
  n <- length(y)
  p <- ncol(X)
  if (!is.double(X)) storage.mode(X) <- "double"
  if (is.null(eta)) eta <- if (p) as.double(X %*% beta) + offset else rep(0, n)
  o <- .Call(gg_cox_hazard_r, as.double(eta), X, as.integer(r), as.integer(wt), nt,
             as.double(wt), if (!is.null(order)) as.integer(order), p > 0, as.integer(nthreads))
  if (p) dimnames(o$Rs) <- dimnames(o$Rc) <- dimnames(X)
  list(tr = tr, h = o$h, q = o$q, a = o$a, nt = nt, r = r, km = o$km,
       Rs = if (p) o$Rs else X, Rc = if (p) o$Rc else X)
}

# hazard() of mgcv's cox.ph() with strata, y = cbind(time, stratum) in
# the family's preinitialize()'s order: mgcv's loop over the strata (in
# their order of appearance), each stratum's rows by gamgpu's C, the
# results put together as mgcv's are (r: the rows' times within their
# stratum; strat, tr.strat).  NULL where a stratum has fewer than two
# events, whose residuals mgcv's own code takes (its approx() needs two).
cox_hazard_strata <- function(y, X, beta, wt, offset = 0, nthreads = cox_hazard_threads()) {
  strat <- y[, 2L]
  tm <- y[, 1L]
  lev <- unique(strat)
  rows <- split(seq_along(tm), factor(match(strat, lev), seq_along(lev)))
  if (any(vapply(rows, function(i) sum(wt[i] != 0), 0) < 2)) return(NULL)
  tr_s <- lapply(rows, function(i) unique(tm[i]))
  nts <- lengths(tr_s)
  nt <- as.double(sum(nts))                 # (mgcv's is a double)
  p <- ncol(X)
  if (!is.double(X)) storage.mode(X) <- "double"
  eta <- if (p) as.double(X %*% beta) + offset else rep(0, length(tm))
  h <- q <- km <- numeric(nt)
  a <- matrix(0, p, nt)
  r <- tm * 0
  Rs <- Rc <- X
  k <- 0L
  for (s in seq_along(rows)) {
    i <- rows[[s]]
    trind <- k + seq_len(nts[s])
    k <- k + nts[s]
    r0 <- match(tm[i], tr_s[[s]])
    o <- .Call(gg_cox_hazard_r, eta[i], X[i, , drop = FALSE], as.integer(r0),
               as.integer(wt[i]), nts[s], as.double(wt[i]), NULL, p > 0, as.integer(nthreads))
    h[trind] <- o$h
    q[trind] <- o$q
    km[trind] <- o$km
    a[, trind] <- o$a
    r[i] <- r0
    if (p) {
      Rs[i, ] <- o$Rs
      Rc[i, ] <- o$Rc
    }
  }
  list(tr = unlist(tr_s, use.names = FALSE), h = h, q = q, a = a, nt = nt, r = r, km = km,
       strat = strat, tr.strat = rep(lev, nts), Rs = Rs, Rc = Rc)
}

# The threads of a fit's general family (gam_gpu()'s nthreads), else 1.
cox_hazard_threads <- function() {
  nt <- .gamgpu_state$general_threads
  if (is.null(nt)) 1L else as.integer(nt)
}

# The family's hazard() for gam()'s postproc: gamgpu's C (stratum by
# stratum with strata), mgcv's own (own) where a stratum has fewer than two
# events.
cox_hazard_for <- function(own) {
  force(own)
  function(y, X, beta, wt, offset = 0) {
    if (is.matrix(y)) {
      out <- cox_hazard_strata(y, X, beta, wt, offset)
      return(if (is.null(out)) own(y, X, beta, wt, offset) else out)
    }
    if (sum(wt != 0) < 2) return(own(y, X, beta, wt, offset))
    cox_hazard(y, X, beta, wt, offset)
  }
}

# cox.ph()'s postproc on the native route's object (gf_finish()): X the
# model matrix in G's row order (sorted by time, the family's
# preinitialize()), G the setup; as the family's postproc, the rows' order
# restored.  NULL (mgcv's own postproc) where a stratum has fewer than two
# events.
cox_postproc <- function(object, G, X) {
  y.order <- G$family$data$y.order
  dimnames(X) <- list(NULL, colnames(G$X))
  if (is.matrix(G$y)) {
    data <- cox_hazard_strata(G$y, X, object$coefficients, G$w, G$offset)
    if (is.null(data)) return(NULL)
    data$Rs[y.order, ] <- data$Rs
    data$Rc[y.order, ] <- data$Rc
    h0 <- cox_hazard_strata(G$y, matrix(0, nrow(X), 0), object$coefficients, G$w)
  } else {
    if (sum(G$w != 0) < 2) return(NULL)
    data <- cox_hazard(G$y, X, object$coefficients, G$w, order = y.order,
                       eta = object$linear.predictors)
    h0 <- cox_hazard(G$y, matrix(0, nrow(X), 0), object$coefficients, G$w)
  }
  s0.base <- exp(-h0$h[h0$r])
  s0.base[s0.base >= 1] <- 1 - 2 * .Machine$double.eps
  object$family$data <- data
  object$fitted.values <- exp(-data$h[data$r] * exp(object$linear.predictors))
  object$null.deviance <- 2 * sum(abs((object$prior.weights + log(s0.base) +
                                         object$prior.weights * (log(-log(s0.base))))))
  object$linear.predictors[y.order] <- object$linear.predictors
  object$fitted.values[y.order] <- object$fitted.values
  if (is.matrix(object$y)) object$y[y.order, ] <- object$y else object$y[y.order] <- object$y
  object$prior.weights[y.order] <- object$prior.weights
  object
}
