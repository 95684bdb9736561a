# bam() with no smoothing parameter to estimate -- a parametric model, or
# every smoothing parameter fixed by sp -- fits by "REML", not "fREML":
# bam() switches the method, and bgam.fit() scores the final working model
# by gam(G =) on its p rows (R'R = X'WX, R'f = X'Wz, the residual sum of
# squares beyond them as dev.extra, n.true the rows), gaussian, at the
# family's scale (1 for binomial and poisson and for an extended family
# without one; tw()'s estimate; estimated otherwise).  The fit is the same
# either way; the score and its name are bam()'s only this way (nb() on
# MASS::quine: REML 140.60, where the engine's fREML score is 209.49).
# Returns the fit with bam()'s method, score and optimizer record.
bam_no_sp_reml <- function(fit, G, res, family, nobs, gamma, scale) {
  p <- ncol(res$R)
  Gw <- G
  Gw$y <- res$working.f
  Gw$w <- rep(1, p)
  Gw$X <- res$R
  Gw$n <- p
  Gw$offset <- rep(0, p)
  Gw$dev.extra <- Gw$pearson.extra <- res$scalars[["rss.extra"]]
  Gw$n.true <- nobs
  Gw$family <- stats::gaussian()
  Gw$mf <- NULL
  sc <- if (!is.null(efam_name(family))) {
    if (is.null(family$scale)) 1 else if (family$scale < 0) fit$sig2 else family$scale
  } else scale
  o <- mgcv::gam(G = Gw, method = "REML", gamma = gamma, scale = sc,
                 control = mgcv::gam.control(nthreads = 1))
  fit$method <- "REML"
  # (with the scale estimated the engine's score is already bam()'s, from
  # the working model bam() last scored; the two differ by 2e-5 relative
  # on quine's negbin(1.27))
  if (sc > 0) fit$gcv.ubre <- o$gcv.ubre
  names(fit$gcv.ubre) <- "REML"
  fit$optimizer <- o$optimizer
  fit$outer.info <- o$outer.info
  fit
}
