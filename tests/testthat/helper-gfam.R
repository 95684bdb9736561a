# Shared by the gfam() tests (test-efam-gfam*.R): gfam() exists from mgcv
# 1.9 on; mixed-family data with the member index fi.

skip_if_no_gfam <- function()
  skip_if_not(exists("gfam", asNamespace("mgcv")), "mgcv's gfam() needs mgcv >= 1.9")

# n rows cycling through the members; kinds: the member each index draws
# from ("gaussian", "poisson", "binomial", "Gamma", "nb", "invgauss"), all
# on one smooth linear predictor (the log link's scale for the positive ones)
gfam_sim <- function(kinds, n = 900, seed = 3) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), fi = rep(seq_along(kinds), length.out = n))
  eta <- 0.5 * sin(2 * pi * d$x0) + 0.5 * (d$x1 - 0.5)
  d$y <- NA_real_
  for (k in seq_along(kinds)) {
    i <- d$fi == k
    e <- eta[i]
    d$y[i] <- switch(kinds[k],
                     gaussian = e + 0.3 * rnorm(sum(i)),
                     poisson = rpois(sum(i), exp(e)),
                     binomial = rbinom(sum(i), 1, plogis(e)),
                     Gamma = rgamma(sum(i), shape = 3, scale = exp(e) / 3),
                     nb = rnbinom(sum(i), mu = exp(e), size = 2),
                     # (positive responses for inverse.gaussian's rows)
                     invgauss = rgamma(sum(i), shape = 5, scale = exp(e) / 5))
  }
  d
}
