# mgcv's negbin(theta): the negative binomial with a known theta (a plain
# "family", variance mu + mu^2 / theta, scale estimated as bam() does),
# in the engine's family arithmetic (family_math.h: GG_FM_NEGBIN), against
# mgcv::bam() on the same call, on simulated data and R's data sets,
# and the device against the CPU.

nb_data <- function(n = 2000, seed = 3) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "normal", verbose = FALSE)
  d$y <- rnbinom(n, size = 3, mu = exp(d$f / 6))
  d$yi <- rnbinom(n, size = 5, mu = 30 + 20 * sin(3 * d$x0) + 10 * d$x1)
  d
}

# linear predictors to 1e-9 of their range, the REML score to 1e-9
# relative; smoothing parameters, scale, deviance, residuals as bam's.
# The EDF (and so the aic's 2 sum(edf)) to 1e-4: with smooths they agree
# to 1e-10, but for a model without smooths (warpbreaks below) bam's EDF
# are exactly one per coefficient while the engine's are up to 3e-6 below
# (1.2e-6 here; the same for the poisson family, up to 3e-5; the covariance
# matrices agree to 1e-16; the cause is not traced yet).
expect_negbin_parity <- function(g, b, tol = 1e-9) {
  expect_true(g$converged)
  expect_identical(g$family$family, b$family$family)
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, tol)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), tol)
  if (length(b$sp)) expect_lt(max(abs(log(g$sp) - log(b$sp))), 1e-6)
  expect_lt(abs(g$sig2 - b$sig2) / b$sig2, 1e-8)
  expect_lt(abs(g$deviance - b$deviance) / b$deviance, 1e-9)
  expect_lt(abs(g$null.deviance - b$null.deviance) / b$null.deviance, 1e-12)
  expect_lt(max(abs(g$residuals - b$residuals)), 1e-8 * max(abs(b$residuals)))
  expect_lt(abs(sum(g$edf) - sum(b$edf)), 1e-4)
  expect_lt(abs(g$aic - b$aic) / abs(b$aic), 1e-6)
}

test_that("negbin(theta) with log and sqrt links, as bam()", {
  d <- nb_data()
  for (lk in c("log", "sqrt")) {
    fam <- do.call(mgcv::negbin, list(3, link = lk))
    b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam, data = d)
    g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam, data = d, device = "off")
    expect_negbin_parity(g, b)
  }
  # theta is honoured: another theta, another fit
  g10 <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = mgcv::negbin(10), data = d,
                 device = "off")
  expect_gt(max(abs(g10$linear.predictors - g$linear.predictors)), 1e-3)
  expect_identical(g10$family$family, "Negative Binomial(10)")
})

test_that("negbin(theta) with the identity link, weights and an offset, as bam()", {
  d <- nb_data(seed = 4)
  d$w <- runif(nrow(d), 0.5, 2)
  d$off <- runif(nrow(d), -1, 1)
  fam <- mgcv::negbin(5, link = "identity")
  b <- mgcv::bam(yi ~ s(x0) + s(x1) + offset(off), family = fam, data = d, weights = w)
  g <- gam_gpu(yi ~ s(x0) + s(x1) + offset(off), family = fam, data = d, weights = w,
               device = "off")
  expect_negbin_parity(g, b)
  expect_equal(predict(g, d[1:20, ], type = "response"),
               predict(b, d[1:20, ], type = "response"), tolerance = 1e-9)
})

test_that("negbin(theta) on R's quakes and warpbreaks, as bam()", {
  b <- mgcv::bam(stations ~ s(mag) + s(depth), family = mgcv::negbin(8), data = quakes)
  g <- gam_gpu(stations ~ s(mag) + s(depth), family = mgcv::negbin(8), data = quakes,
               device = "off")
  expect_negbin_parity(g, b)
  b <- mgcv::bam(breaks ~ wool + tension, family = mgcv::negbin(7), data = warpbreaks)
  g <- gam_gpu(breaks ~ wool + tension, family = mgcv::negbin(7), data = warpbreaks,
               device = "off")
  expect_negbin_parity(g, b)
})

test_that("the engine's negbin rows are R's family functions", {
  set.seed(5)
  y <- c(0, 0, 1, 3, 10, 250, rnbinom(50, size = 2, mu = 4))
  eta <- log(runif(length(y), 0.5, 20))
  wt <- runif(length(y), 0.2, 3)
  for (lk in c("log", "sqrt", "identity")) {
    fam <- do.call(mgcv::negbin, list(2.5, link = lk))
    e <- fam$linkfun(exp(eta))
    r <- .Call(gamgpu:::gg_family_rows, "negbin", lk, e, y, wt, 2.5)
    mu <- fam$linkinv(e)
    expect_equal(r$mu, mu, tolerance = 1e-15)
    expect_equal(r$variance, fam$variance(mu), tolerance = 1e-15)
    expect_equal(r$dev.resids, fam$dev.resids(y, mu, wt), tolerance = 1e-14)
    expect_equal(r$mustart, y + (y == 0) / 6, tolerance = 0)
  }
  expect_error(.Call(gamgpu:::gg_family_rows, "negbin", "log", 0, 1, 1, NULL),
               class = "gamgpu_bad_family")
  expect_error(.Call(gamgpu:::gg_family_rows, "negbin", "log", 0, 1, 1, -1),
               class = "gamgpu_bad_family")
})

test_that("bad negbin input is a classed error", {
  d <- nb_data(300)
  d$yneg <- d$y
  d$yneg[3] <- -1
  expect_error(gam_gpu(yneg ~ s(x0), family = mgcv::negbin(3), data = d, device = "off"),
               class = "gamgpu_error")
  expect_error(gam_gpu(y ~ s(x0), family = mgcv::negbin(c(1, 10)), data = d, device = "off"),
               class = "gamgpu_bad_family")
  expect_error(gam_gpu(y ~ s(x0), family = mgcv::negbin(3, link = "inverse"), data = d,
                       device = "off"),
               class = "gamgpu_error")
})

test_that("negbin(theta) on the device equals the CPU and launches the row kernels", {
  skip_if_no_device()
  d <- nb_data(6000, seed = 6)
  for (lk in c("log", "sqrt")) {
    fam <- do.call(mgcv::negbin, list(3, link = lk))
    gc <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam, data = d, device = "off")
    gd <- expect_device_fit(gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam,
                                    data = d, device = "required"))
    expect_lt(rel_err(coef(gd), coef(gc)), 1e-9)
    expect_lt(rel_err(gd$linear.predictors, gc$linear.predictors), 1e-9)
    expect_lt(rel_err(gd$hat, gc$hat), 1e-9)
    b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), family = fam, data = d)
    expect_negbin_parity(gd, b)
  }
})
