# gam()'s methods = "GCV.Cp" and "GACV.Cp" for additive models (gaussian,
# identity link): the smoothing parameters that minimise the GCV or GACV
# score (scale unknown) or Mallows' Cp / UBRE (scale known), as gam() chooses them, by
# Newton's method on the log smoothing parameters with the exact gradient
# and Hessian.  The O(n) work is one weighted Gram product in the fit's
# model session (on the device for a GPU fit, X built there from its
# recipe); everything after it is p x p.  The fit at the chosen smoothing
# parameters is then the engine's, in the same session, with every
# smoothing parameter fixed.
#
# With H = X'WX + sum_j lambda_j S_j, beta = H^-1 X'Wz, rss = ||W^1/2 (z -
# X beta)||^2 and tau = tr(H^-1 X'WX) (the effective degrees of freedom):
#   GCV = n rss / (n - gamma tau)^2,
#   GACV = rss / n + 2 gamma tau rss / (n (n - gamma tau))   (method
#          "GACV.Cp", gam.fit3's GACV with its Pearson statistic = rss),
#   UBRE = rss / n - scale + 2 gamma scale tau / n
# (mgcv's magic() with prior weights: n rows, the weights in W).  For
# log lambda_j = rho_j: d beta_j = -H^-1 S_j beta (S_j = lambda_j S_j),
# d rss_j = 2 beta' S_lambda H^-1 S_j beta, d tau_j = -tr(H^-1 S_j H^-1 X'WX),
# and the second derivatives by differentiating once more.

# The GCV or UBRE score at log smoothing parameters lsp (one per penalty),
# with its gradient and Hessian in lsp.  P: the problem from gcv_problem().
gcv_score <- function(P, lsp, deriv = TRUE) {
  lam <- exp(lsp)
  # (each penalty added on its own block: the same sums as at full size,
  # where the zeros add nothing, without a p x p matrix per penalty)
  H <- if (is.null(P$H)) P$XtWX else P$XtWX + P$H
  for (j in seq_along(P$Sb)) {
    ii <- P$off[j] - 1L + seq_len(ncol(P$Sb[[j]]))
    H[ii, ii] <- H[ii, ii] + lam[j] * P$Sb[[j]]
  }
  R <- chol(H, pivot = FALSE)
  Hi <- chol2inv(R)
  beta <- drop(Hi %*% P$XtWz)
  XtWXb <- drop(P$XtWX %*% beta)
  rss <- max(0, P$zWz - 2 * sum(beta * P$XtWz) + sum(beta * XtWXb))
  # (tau = tr(Hi X'WX), both symmetric: the sum of their elementwise
  # product, without the p^3 product that only the derivatives need)
  HiX <- if (deriv) Hi %*% P$XtWX
  tau <- if (deriv) sum(diag(HiX)) else sum(Hi * P$XtWX)
  n <- P$n
  gam <- P$gamma
  known <- P$scale > 0
  D <- n - gam * tau
  gacv <- !known && identical(P$criterion, "GACV")
  V <- if (known) rss / n - P$scale + 2 * gam * P$scale * tau / n else
    if (gacv) rss / n + 2 * gam * tau * rss / (n * D) else n * rss / D^2
  out <- list(score = V, beta = beta, rss = rss, tau = tau, Hi = Hi)
  if (!deriv) return(out)
  M <- length(lsp)
  HiS <- lapply(seq_len(M), function(j) lam[j] * (Hi %*% P[["S"]][[j]]))
  HiSb <- vapply(HiS, function(A) drop(A %*% beta), numeric(length(beta)))
  HiSX <- lapply(HiS, function(A) A %*% HiX)
  r <- XtWXb - P$XtWz                       # X'W(X beta - z) = -S_lambda beta
  db <- -HiSb
  drss <- drop(2 * crossprod(db, r))
  dtau <- -vapply(HiSX, function(A) sum(diag(A)), 0)
  d2rss <- d2tau <- matrix(0, M, M)
  XdB <- P$XtWX %*% db
  for (j in seq_len(M)) for (k in j:M) {
    d2b <- drop(HiS[[k]] %*% HiSb[, j] + HiS[[j]] %*% HiSb[, k])
    if (j == k) d2b <- d2b - HiSb[, j]
    d2rss[j, k] <- d2rss[k, j] <- 2 * sum(db[, k] * XdB[, j]) + 2 * sum(r * d2b)
    t2 <- sum(t(HiS[[k]]) * HiSX[[j]]) + sum(t(HiS[[j]]) * HiSX[[k]])
    if (j == k) t2 <- t2 + dtau[j]
    d2tau[j, k] <- d2tau[k, j] <- t2
  }
  if (known) {
    out$grad <- drss / n + 2 * gam * P$scale * dtau / n
    out$hess <- d2rss / n + 2 * gam * P$scale * d2tau / n
  } else if (gacv) {
    # d/d rho of 2 gamma tau rss / (n D), with 1/D + gamma tau / D^2 = n / D^2
    out$grad <- drss / n + 2 * gam * rss * dtau / D^2 + 2 * gam * tau * drss / (n * D)
    out$hess <- d2rss / n + 2 * gam * (outer(drss, dtau) + outer(dtau, drss)) / D^2 +
      2 * gam * rss * d2tau / D^2 + 4 * gam^2 * rss * outer(dtau, dtau) / D^3 +
      2 * gam * tau * d2rss / (n * D)
  } else {
    out$grad <- n * drss / D^2 + 2 * n * gam * rss * dtau / D^3
    out$hess <- n * d2rss / D^2 + 2 * n * gam * (outer(drss, dtau) + outer(dtau, drss)) / D^3 +
      2 * n * gam * rss * d2tau / D^3 + 6 * n * gam^2 * rss * outer(dtau, dtau) / D^4
  }
  out
}

# The problem for gcv_score(): the Gram product in the fit's model session
# (ms, model_session(): X a matrix or its recipe, on the device for a GPU
# fit) -- for gaussian identity the working weights are the prior weights
# and the working response y - offset, so the penalized IRLS rows at beta
# = 0 give it, their deviance z'Wz -- the penalties' blocks and where they
# sit (Sb, off; at full size, S, only where gcv_newton() takes derivatives),
# the sizes and settings.
gcv_problem <- function(ms, S, off, gamma, scale, H = NULL) {
  g <- .Call(gg_session_eval_r, ms$ptr, numeric(ms$p), "gaussian", "identity", TRUE, NULL)
  info <- ms$info()
  n <- ms$n
  # (gam()'s fixed penalty H, from min.sp or H, in every penalty sum)
  list(XtWX = g$XtWX, XtWz = drop(g$XtWz), zWz = g$zWz, Sb = S, off = off, n = n,
       H = if (!is.null(H)) H + 0,
       gamma = gamma, scale = scale, device = info$device, fallback = info$fallback)
}

# Newton's method on the free log smoothing parameters rho (log sp = L rho
# + lsp0): mgcv's newton() (mgcv_newton(), gam.outer()'s optimizer), its
# convergence test at conv.tol, at most maxit steps; rho0: where it starts
# (from mgcv's initial.sp()).  newton()'s scale of the score is |score|
# plus the fit's scale estimate, rss / (n - tr A).
gcv_newton <- function(P, L, lsp0, rho0, maxit, conv.tol) {
  # (the derivatives take the penalties at full size)
  if (is.null(P[["S"]])) P[["S"]] <- embed_penalties(P$Sb, P$off, ncol(P$XtWX))
  to_lsp <- function(rho) drop(L %*% rho) + lsp0
  eval_at <- function(rho, deriv, from) {
    e <- gcv_score(P, to_lsp(rho), deriv = deriv)
    if (deriv) {
      e$g <- drop(crossprod(L, e$grad))
      e$Hs <- crossprod(L, e$hess %*% L)
    }
    e$scale.est <- if (P$scale > 0) P$scale else e$rss / (P$n - e$tau)
    e
  }
  # (a trial point where X'WX + S is not positive definite: chol()'s error)
  e <- mgcv_newton(eval_at, rho0, function(e) abs(e$score) + abs(e$scale.est),
                   conv.tol = conv.tol, maxit = maxit, fail = "error")
  list(rho = e$theta, lsp = to_lsp(e$theta), score = e$score, rss = e$rss, tau = e$tau,
       Hi = e$Hi, iter = e$iter, calls = e$calls, converged = e$converged, conv = e$conv,
       grad = e$g, hess = e$Hs)
}

# Smoothing parameters by GCV/UBRE for the additive model with free
# log sp = L rho + lsp0; returns the optimiser's result (gcv_magic(), or
# gcv_newton() for GACV and where the Newton settings are given).
gcv_smoothing <- function(G, ms, n_nonzero, S, L, lsp0, gamma, scale, control,
                          criterion = "GCV") {
  P <- gcv_problem(ms, S, G$off, gamma, scale, G$H)
  P$criterion <- criterion
  nfree <- ncol(L)
  if (nfree == 0L)
    return(c(gcv_score(P, lsp0, deriv = FALSE),
             list(rho = numeric(0), lsp = lsp0, iter = 0L, calls = 1L, converged = TRUE,
                  grad = numeric(0), hess = matrix(0, 0, 0), device = P$device,
                  XtWX = P$XtWX, n_score = ms$n)))
  # GCV and UBRE by gam()'s own optimizer, unless the Newton iteration's
  # settings are given (gam_gpu_control(newton.tol =, newton.maxit =))
  if (criterion == "GCV" && !any(c("newton.tol", "newton.maxit") %in% attr(control, "given")))
    return(gcv_magic(P, G, n_nonzero, L, lsp0, gamma, scale))
  # (GCV and UBRE count the rows of nonzero weight, as magic()'s n.score)
  if (criterion == "GCV") P$n <- n_nonzero
  # mgcv's starting values (initial.sp() from X'WX), mapped onto rho
  sp0 <- mgcv_fun("initial.sp")(P$XtWX, G$S, G$off, XX = TRUE)
  rho0 <- if (length(sp0) == nrow(L)) {
    qr.coef(qr(L), log(pmax(sp0, .Machine$double.xmin)) - lsp0)
  } else numeric(nfree)
  rho0[!is.finite(rho0)] <- 0
  res <- gcv_newton(P, L, lsp0, rho0, maxit = control$newton.maxit,
                    conv.tol = gam_conv_tol(control))
  res$device <- P$device
  res$XtWX <- P$XtWX
  res$n_score <- ms$n
  res
}

# GCV and UBRE (method "GCV.Cp") as gam() takes them for an additive
# model: by mgcv's magic() (gam.fit()'s optimizer; GACV and the other
# methods go by Newton's method, as gam.outer() does), on the problem
# reduced to p rows as bam() reduces it -- R with R'R = X'WX, f with R'f
# = X'Wz, and the residual sum of squares beyond them as magic()'s
# extra.rss -- so that the O(n) work stays one Gram product, and the
# optimizer, its start and its steps are gam()'s (a criterion with two
# minima ends in gam()'s).  magic()'s control is gam.control()'s default
# (mgcv.tol, mgcv.half); n.score the rows of nonzero weight, as gam.fit().
# (Newton's method from magic()'s answer to a tighter tolerance was tried:
# it moves the fit from gam()'s by up to 3e-6 of the linear predictor's
# range, magic() stopping at 1e-7, and where magic()'s rank truncation
# changes the score -- select = TRUE -- to a point gam() scores 1.4e-8
# higher.  Stopping where magic() stops is gam()'s answer.)
gcv_magic <- function(P, G, n_nonzero, L, lsp0, gamma, scale) {
  p <- ncol(P$XtWX)
  n_score <- n_nonzero
  P$n <- n_score                                   # (the score's n, as magic()'s)
  red <- gram_reduction(P$XtWX, P$XtWz, P$zWz)
  mgcv_ctl <- mgcv::gam.control()
  mr <- mgcv::magic(red$f, red$Rx, rep(-1, ncol(L)), G$S, G$off, L = L, lsp0 = lsp0, rank = G$rank,
                    H = G$H, C = matrix(0, 0, p), gamma = gamma,
                    scale = if (scale > 0) scale else -1, gcv = !(scale > 0),
                    control = list(tol = mgcv_ctl$mgcv.tol, step.half = mgcv_ctl$mgcv.half,
                                   rank.tol = mgcv_ctl$rank.tol),
                    extra.rss = red$extra, n.score = n_score)
  rho <- log(mr$sp)
  lsp <- drop(L %*% rho) + lsp0
  e <- gcv_score(P, lsp, deriv = FALSE)
  score <- mr$score
  converged <- isTRUE(mr$gcv.info$fully.converged)
  nw <- gcv_flat_end_minimum(P, L, lsp0, rho, e$score)
  below <- NULL
  if (!is.null(nw)) {
    below <- sprintf(paste("magic() stopped at %s %.10g; along a flat end of the score a lower",
                           "minimum, %.10g, where this fit is"),
                     if (scale > 0) "UBRE" else "GCV", mr$score, nw$score)
    rho <- nw$rho
    lsp <- nw$lsp
    e <- gcv_score(P, lsp, deriv = FALSE)
    score <- e$score
    converged <- nw$converged
  }
  c(e[c("rss", "tau", "Hi")],
    list(rho = rho, lsp = lsp, score = score, magic = mr$gcv.info, device = P$device,
         XtWX = P$XtWX, converged = converged, n_score = n_score, below = below))
}

# A GCV or UBRE score with two minima, one along a smoothing parameter's
# flat end: which one magic() reaches depends on the rounding of its R
# factor (gam()'s from the QR of X, gcv_magic()'s from X'WX; under another
# BLAS they part).  Every flat end (log sp 25 beyond rho's, either way) is
# scored, p x p work each; one lower than the minimum found (score, at rho)
# by more than 1e-6 of it -- another minimum, not a flat end's rounding --
# is followed by Newton's method.  Returns gcv_newton()'s result where it
# ends lower by as much, else NULL.
gcv_flat_end_minimum <- function(P, L, lsp0, rho, score) {
  to_lsp <- function(r) drop(L %*% r) + lsp0
  best <- NULL
  for (k in seq_along(rho)) for (dir in c(-25, 25)) {
    r1 <- rho
    r1[k] <- r1[k] + dir
    s1 <- tryCatch(gcv_score(P, to_lsp(r1), deriv = FALSE)$score, error = function(err) Inf)
    if (is.finite(s1) && s1 < score - 1e-6 * abs(score) && (is.null(best) || s1 < best$score))
      best <- list(rho = r1, score = s1)
  }
  if (is.null(best)) return(NULL)
  nw <- tryCatch(gcv_newton(P, L, lsp0, best$rho, maxit = 200L, conv.tol = 1e-7),
                 error = function(err) NULL)
  if (!is.null(nw) && nw$score < score - 1e-6 * abs(score)) nw else NULL
}

# gam()'s fields of a GCV.Cp fit on the engine's object (fit at the chosen
# smoothing parameters, all fixed): the criterion, its name, the optimiser's
# record, the smoothing parameters it chose, magic()'s scale and gam()'s
# covariance matrices.
gcv_finish <- function(fit, gcv, scale, method = "GCV.Cp") {
  known <- scale > 0
  fit$method <- if (known) "UBRE" else sub(".Cp", "", method, fixed = TRUE)
  fit$gcv.ubre <- stats::setNames(gcv$score, method)
  fit$sp <- exp(gcv$rho)
  names(fit$sp) <- gcv$sp.names
  if (!is.null(gcv$magic)) {                # GCV.Cp: gam.fit()'s magic()
    fit$optimizer <- "magic"
    fit$outer.info <- NULL
    fit$mgcv.conv <- gcv$magic
  } else {
    # (gam() labels its GACV.Cp of an additive model "magic" too, with the
    # record of its outer Newton iteration in outer.info)
    fit$optimizer <- if (method == "GACV.Cp") "magic" else c("outer", "newton")
    conv <- if (!is.null(gcv$conv)) gcv$conv else
      if (gcv$converged) "full convergence" else "iteration limit reached"
    fit$outer.info <- list(conv = conv, iter = gcv$iter, grad = gcv$grad, hess = gcv$hess,
                           score.calls = gcv$calls)
    fit$mgcv.conv <- NULL
  }
  # magic()'s scale, when estimated: the residual sum of squares over the
  # residual degrees of freedom n - tr(A); then gam()'s covariances,
  # Vp = scale H^-1 and Ve = scale H^-1 X'WX H^-1
  # (magic()'s n: the rows of nonzero weight)
  n_score <- gcv$n_score
  sig2 <- if (known) scale else gcv$rss / (n_score - gcv$tau)
  fit$sig2 <- fit$scale <- sig2
  # (no smoothing-parameter-corrected covariance: gam()'s GCV.Cp and
  # GACV.Cp fits of an additive model have no Vc, V.sp or edf2, so that
  # vcov(unconditional = TRUE) and logLik() treat them as gam()'s)
  fit["Vc"] <- list(NULL)
  fit["V.sp"] <- list(NULL)
  fit["edf2"] <- list(NULL)
  fit$Vp <- sig2 * gcv$Hi
  fit$Ve <- sig2 * (gcv$Hi %*% gcv$XtWX %*% gcv$Hi)
  dimnames(fit$Vp) <- dimnames(fit$Ve) <- list(names(fit$coefficients),
                                              names(fit$coefficients))
  fit
}

# The route of gam()'s GCV.Cp and GACV.Cp for an additive model (R/route.R):
# the smoothing parameters from one Gram product, then gcv_finish().
route_gcv <- function(method) {
  r <- route_base("gcv", method)
  r$choose <- function(f) {
    Lg <- if (is.null(f$L)) diag(length(f$lsp0)) else f$L
    gcv <- gcv_smoothing(f$G, f$ses, f$n_nonzero, f$S, Lg, f$lsp0, f$gamma, f$scale, f$control,
                         criterion = if (method == "GACV.Cp") "GACV" else "GCV")
    gcv$sp.names <- f$sp.names
    f$gcv <- gcv
    f$lsp0 <- gcv$lsp
    f$L <- Lg[, integer(0), drop = FALSE]
    f$sp.names <- character(0)
    NULL
  }
  r$finish <- function(fit, f, res) {
    fit <- gcv_finish(fit, f$gcv, f$scale, method)
    fit$residuals <- gam_working_residuals(fit, f$family, f$y, f$w, f$control$nthreads)
    fit
  }
  # (GACV's Newton is gcv_newton()'s; GCV's and UBRE's optimizer is
  # magic(), which, as in gam(), reports in fit$mgcv.conv and does not warn)
  r$warn <- function(fit, f, res) {
    if (is.null(f$gcv$magic) && !f$gcv$converged)
      gamgpu_warn("gamgpu_not_converged",
                  sprintf("%s Newton iteration reached its limit of %d iterations",
                          fit$method, f$control$newton.maxit))
  }
  r$device <- function(dev, f) {
    # where the criterion's Gram product ran ("cuda:0", "cpu"), and where
    # the fit is at a lower minimum than gam()'s optimizer stops at, what
    # each scored
    dev$gcv_gram <- f$gcv$device
    if (!is.null(f$gcv$below)) dev$optimum <- f$gcv$below
    dev
  }
  r
}
