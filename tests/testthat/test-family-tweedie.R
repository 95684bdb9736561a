# mgcv's Tweedie(p): the Tweedie family with a known power 1 < p <= 2 (a
# plain "family", variance mu^p, the scale estimated), in the engine's
# family arithmetic (family_math.h GG_FM_TWEEDIE), against mgcv::bam() on
# the same call, and the device against the CPU.  (tw(), which estimates
# p, is an extended family gamgpu refuses for now.)

tw_data <- function(n = 2000, seed = 3) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "normal", verbose = FALSE)
  d$y <- mgcv::rTweedie(exp(d$f / 6), p = 1.5, phi = 1.2)
  d
}

expect_tweedie_parity <- function(g, b, tol = 1e-9) {
  expect_true(g$converged)
  expect_identical(g$family$family, b$family$family)
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, tol)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), tol)
  expect_lt(max(abs(log(g$sp) - log(b$sp))), 1e-6)
  expect_lt(abs(g$sig2 - b$sig2) / b$sig2, 1e-9)
  expect_lt(abs(g$deviance - b$deviance) / b$deviance, 1e-9)
  expect_lt(abs(g$null.deviance - b$null.deviance) / b$null.deviance, 1e-12)
  expect_lt(max(abs(g$residuals - b$residuals)), 1e-9 * max(abs(b$residuals)))
  expect_lt(abs(sum(g$edf) - sum(b$edf)), 1e-8)
  expect_lt(abs(g$aic - b$aic) / abs(b$aic), 1e-9)
}

test_that("Tweedie(p) at several powers and links, as bam()", {
  d <- tw_data()
  for (cs in list(c(1.2, "log"), c(1.5, "log"), c(1.9, "log"), c(1.2, "sqrt"),
                  c(1.5, "sqrt"))) {
    fam <- mgcv::Tweedie(as.numeric(cs[1]), link = cs[2])
    b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam, data = d)
    g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam, data = d, device = "off")
    expect_tweedie_parity(g, b)
  }
  # p is honoured
  g2 <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = mgcv::Tweedie(1.2), data = d,
                device = "off")
  expect_gt(max(abs(g2$linear.predictors - g$linear.predictors)), 1e-4)
})

test_that("the engine's Tweedie rows are mgcv's family functions", {
  set.seed(5)
  y <- c(0, 0, 0.3, 1, 2.5, 40, mgcv::rTweedie(rep(2, 40), p = 1.4, phi = 1))
  mu <- runif(length(y), 0.2, 10)
  wt <- runif(length(y), 0.2, 3)
  for (p in c(1.1, 1.5, 2)) {
    fam <- mgcv::Tweedie(p)
    r <- .Call(gamgpu:::gg_family_rows, "tweedie", "log", log(mu), y, wt, p)
    expect_equal(r$variance, fam$variance(r$mu), tolerance = 1e-15)
    expect_equal(r$dev.resids, fam$dev.resids(y, r$mu, wt), tolerance = 1e-13)
    expect_equal(r$mustart, y + 0.1 * (y == 0), tolerance = 0)
  }
  expect_error(.Call(gamgpu:::gg_family_rows, "tweedie", "log", 0, 1, 1, 1),
               class = "gamgpu_bad_family")
  expect_error(.Call(gamgpu:::gg_family_rows, "tweedie", "log", 0, 1, 1, 2.5),
               class = "gamgpu_bad_family")
})

test_that("bad Tweedie input is a classed error", {
  d <- tw_data(300)
  d$yneg <- d$y
  d$yneg[4] <- -0.5
  expect_error(gam_gpu(yneg ~ s(x0), family = mgcv::Tweedie(1.5), data = d, device = "off"),
               class = "gamgpu_error")
})

test_that("Tweedie(p) on the device equals the CPU and launches the row kernels", {
  skip_if_no_device()
  d <- tw_data(6000, seed = 7)
  fam <- mgcv::Tweedie(1.5)
  gc <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam, data = d, device = "off")
  gd <- expect_device_fit(gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam,
                                  data = d, device = "required"))
  expect_lt(rel_err(coef(gd), coef(gc)), 1e-9)
  expect_lt(rel_err(gd$linear.predictors, gc$linear.predictors), 1e-9)
  expect_tweedie_parity(gd, mgcv::bam(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam,
                                      data = d))
})
