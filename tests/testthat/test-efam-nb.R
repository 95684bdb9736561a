# mgcv's nb(): the negative binomial extended family, theta estimated
# between iterations as bam()'s bgam.fit does (estimate.theta(): Newton on
# theta's likelihood over row sums, the engine's estimate_theta() over the
# backend's nb_theta_sums), or fixed by nb(theta = ); against mgcv::bam()
# on the same call, and the device against the CPU.
#
# Tolerances: estimate.theta() halves a Newton step when the likelihood at
# the new theta is not below the old, a comparison that near the optimum
# is decided by the rounding of the row sums (R's sum() accumulates in long
# double; the engine's order differs).  A flipped halving moves theta by
# ~1e-7 relative and the fit by ~1e-8 of its range (measured below), inside
# the issue's bounds: linear predictors to 1e-6 of their range, theta to
# 1e-4 relative, EDF within 0.01.  With theta fixed the fit is bam's to 1e-9.

nb_sim <- function(n = 2000, seed = 3, size = 3) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "normal", verbose = FALSE)
  d$y <- rnbinom(n, size = size, mu = exp(d$f / 6))
  d
}

expect_nb_parity <- function(g, b, eta_tol = 1e-6, theta_tol = 1e-5) {
  expect_true(g$converged)
  expect_identical(g$family$family, b$family$family)
  expect_lt(abs(g$family$getTheta(TRUE) / b$family$getTheta(TRUE) - 1), theta_tol)
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, eta_tol)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), eta_tol)
  if (length(b$sp)) expect_lt(max(abs(log(g$sp) - log(b$sp))), 1e-3)
  expect_lt(abs(sum(g$edf) - sum(b$edf)), 0.01)
  expect_equal(g$sig2, b$sig2)
  expect_identical(g$scale.estimated, b$scale.estimated)
  expect_lt(abs(g$deviance - b$deviance) / b$deviance, 10 * eta_tol)
  expect_lt(abs(g$null.deviance - b$null.deviance) / b$null.deviance, 10 * eta_tol)
  expect_lt(abs(g$aic - b$aic) / abs(b$aic), 10 * eta_tol)
}

test_that("nb(): theta estimated as bam() estimates it (log and sqrt links)", {
  d <- nb_sim()
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::nb(), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::nb(), data = d, device = "off")
  expect_nb_parity(g, b)
  # measured: theta 1.6e-7 relative, linear predictors 1.3e-8 of their range
  expect_match(g$family$family, "^Negative Binomial\\(2\\.70")
  d2 <- nb_sim(seed = 8, size = 6)
  b <- mgcv::bam(y ~ s(x0) + s(x2), family = mgcv::nb(link = "sqrt"), data = d2)
  g <- gam_gpu(y ~ s(x0) + s(x2), family = mgcv::nb(link = "sqrt"), data = d2, device = "off")
  expect_nb_parity(g, b)
  # the methods of gam objects accept the fit
  expect_s3_class(summary(g), "summary.gam")
  expect_equal(predict(g, d2[1:10, ], type = "response"),
               predict(b, d2[1:10, ], type = "response"), tolerance = 1e-6)
})

test_that("nb(theta = ) fixes theta at scale 1, as bam()", {
  d <- nb_sim(seed = 4)
  b <- mgcv::bam(y ~ s(x0) + s(x1, bs = "cr"), family = mgcv::nb(theta = 3), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr"), family = mgcv::nb(theta = 3), data = d,
               device = "off")
  expect_nb_parity(g, b, eta_tol = 1e-9, theta_tol = 1e-14)
  expect_equal(g$family$getTheta(TRUE), 3)
  expect_equal(g$sig2, 1)
  # nb(theta = 3) is not negbin(3): the scale is 1, not estimated
  g2 <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr"), family = mgcv::negbin(3), data = d,
                device = "off")
  expect_gt(abs(g2$sig2 - 1), 1e-3)
})

test_that("nb() on R's quakes, as bam()", {
  b <- mgcv::bam(stations ~ s(mag) + s(depth), family = mgcv::nb(), data = quakes)
  g <- gam_gpu(stations ~ s(mag) + s(depth), family = mgcv::nb(), data = quakes, device = "off")
  expect_nb_parity(g, b)
})

test_that("nb() input bam would not take is a classed error", {
  d <- nb_sim(300)
  expect_error(gam_gpu(y ~ s(x0), family = mgcv::nb(), data = d, scale = 2, device = "off"),
               class = "gamgpu_unsupported_argument")
  d$y[2] <- -1
  expect_error(gam_gpu(y ~ s(x0), family = mgcv::nb(), data = d, device = "off"),
               class = "gamgpu_error")
})

test_that("nb() on the device equals the CPU and bam (theta estimated there too)", {
  skip_if_no_device()
  d <- nb_sim(6000, seed = 9)
  gc <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = mgcv::nb(), data = d,
                device = "off")
  gd <- expect_device_fit(gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = mgcv::nb(),
                                  data = d, device = "required"))
  # the device's row sums round differently: see the tolerances above
  expect_lt(abs(gd$family$getTheta(TRUE) / gc$family$getTheta(TRUE) - 1), 1e-5)
  r <- diff(range(gc$linear.predictors))
  expect_lt(max(abs(gd$linear.predictors - gc$linear.predictors)) / r, 1e-6)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = mgcv::nb(), data = d)
  expect_nb_parity(gd, b)
})
