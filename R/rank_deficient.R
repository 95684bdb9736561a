# A rank-deficient fit's REML score, in bam()'s convention.
#
# Where X'WX + S is singular -- a direction that no term identifies, as
# s(x) beside s(x, by = fac) + fac -- the REML score depends on how that
# direction is taken out.  bam() drops the columns that mgcv's ident.test()
# picks (a pivoted QR in its reparameterization: Sl.Xprep()) and counts the
# penalty null space Mp over the columns left; the engine's pivoted
# Cholesky sets another coefficient aside and counts Mp = p - rank(S).
# The unidentified direction v has X v = 0 and S_k v = 0 for every
# penalty, so the choice of what to drop changes the score by a constant
# in the smoothing parameters: the fitted values and smoothing parameters
# stay (test-fit-glm-families.R's binomial model: 4270.384 against bam's
# 4272.035, everything else equal).  Mp enters the score as
# (n - Mp) log(2 pi phi) / 2, though, so with the scale estimated by REML
# bam's Mp moves the optimum: gam_gpu() then fits again with bam's Mp
# (bam_Mp(), spec$Mp; gaussian and Gamma models moved by 1e-5 of the
# linear predictors' range without it).  Either way the reported score is
# the final working model's -- R'R = X'WX, R'f = X'Wz and rss.extra from
# the engine -- scored at the fitted smoothing parameters and scale by
# mgcv's own Sl.setup(), Sl.Xprep() and Sl.fit(), as bam()'s
# fast.REML.fit() scores it.

# mgcv's identifiability drop on the final working model: NULL where it
# drops nothing (the engine's score stands) or a whole penalty block (the
# smoothing parameters would no longer line up), else Sl.Xprep()'s list.
bam_drop <- function(G, res) {
  Sl <- mgcv_fun("Sl.setup")(G)
  um <- mgcv_fun("Sl.Xprep")(Sl, res$R)
  if (length(um$undrop) == ncol(res$R) || length(um$Sl) != length(Sl))
    return(NULL)
  um
}

# bam()'s Mp for the fit's model, or NULL (as bam_drop()).
bam_Mp <- function(G, res) bam_drop(G, res)$Mp

# The fit's REML score as bam() computes it, or NULL (as bam_drop()).
reml_bam_convention <- function(G, res, nobs, gamma) {
  um <- bam_drop(G, res)
  if (is.null(um))
    return(NULL)
  rho <- res$rho.full
  phi_fixed <- length(res$rho) == ncol(res$db.drho)
  mgcv_fun("Sl.fit")(um$Sl, um$X, res$working.f, rho, fixed = rep(FALSE, length(rho)),
                     log.phi = log(res$scalars[["sig2"]]), phi.fixed = phi_fixed,
                     rss.extra = res$scalars[["rss.extra"]], nobs = nobs,
                     Mp = um$Mp, gamma = gamma)$reml
}
