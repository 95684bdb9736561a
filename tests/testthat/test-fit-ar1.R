# AR1 residuals: gam_gpu(rho =, AR.start =) against mgcv::bam(rho =,
# AR.start =) on the same call (bam's row transform, applied by the backend
# as it forms X'X; R/ar1.R, inst/include/ar1_math.h), and the device
# against the CPU.

ar1_data <- function(n, rho, n_series = 1, seed = 11) {
  set.seed(seed)
  x0 <- runif(n); x1 <- runif(n); x2 <- runif(n)
  f <- sin(2 * pi * x0) + exp(2 * x1) / 3 + 0.2 * x2
  start <- rep(FALSE, n)
  start[1 + (0:(n_series - 1)) * (n %/% n_series)] <- TRUE
  e <- numeric(n)
  for (i in seq_len(n)) e[i] <- if (start[i]) rnorm(1) else rho * e[i - 1] + sqrt(1 - rho^2) * rnorm(1)
  data.frame(y = f + 0.5 * e, x0 = x0, x1 = x1, x2 = x2, start = start,
             w = runif(n, 0.5, 2), off = runif(n, -0.5, 0.5))
}

# gam_gpu against bam: linear predictors to 1e-9 of their range, the REML
# score (with bam's AR1 Jacobian term) to 1e-9 relative; smoothing
# parameters, std.rsd and the aic as bam sets them.
expect_ar1_parity <- function(g, b, tol = 1e-9) {
  expect_true(g$converged)
  expect_identical(g$mgcv.conv$message, "full convergence")
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, tol)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), tol)
  expect_lt(max(abs(log(g$sp) - log(b$sp))), 1e-6)
  expect_lt(abs(g$sig2 - b$sig2) / b$sig2, 1e-8)
  expect_equal(g$AR1.rho, b$AR1.rho)
  expect_lt(max(abs(g$std.rsd - b$std.rsd)) / max(abs(b$std.rsd)), 1e-8)
  expect_lt(abs(g$aic - b$aic) / abs(b$aic), 1e-9)
}

for (rho in c(0.3, 0.6, 0.9)) {
  test_that(sprintf("rho = %g: one series, as bam()", rho), {
    d <- ar1_data(600, rho)
    b <- mgcv::bam(y ~ s(x0) + s(x1, bs = "cr") + x2, data = d, rho = rho)
    g <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + x2, data = d, rho = rho, device = "off")
    expect_ar1_parity(g, b)
    # the AR1 fit is not the uncorrelated one
    g0 <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + x2, data = d, device = "off")
    expect_gt(max(abs(g0$linear.predictors - b$linear.predictors)) /
                diff(range(b$linear.predictors)), 1e-4)
  })

  test_that(sprintf("rho = %g: several series (AR.start) and weights, as bam()", rho), {
    d <- ar1_data(900, rho, n_series = 3, seed = 12)
    b <- mgcv::bam(y ~ s(x0, bs = "cr") + s(x1), data = d, weights = w, rho = rho,
                   AR.start = start)
    g <- gam_gpu(y ~ s(x0, bs = "cr") + s(x1), data = d, weights = w, rho = rho,
                 AR.start = start, device = "off")
    expect_ar1_parity(g, b)
    # AR.start matters
    g1 <- gam_gpu(y ~ s(x0, bs = "cr") + s(x1), data = d, weights = w, rho = rho,
                  device = "off")
    expect_gt(abs(g1$gcv.ubre[[1]] - b$gcv.ubre[[1]]), 1e-6 * abs(b$gcv.ubre[[1]]))
  })
}

# bam() 1.8-41 with rho fits y, not y - offset, at most chunk.size rows
# (R/ar1.R); its blocked path for more rows fits y - offset, as gam_gpu().
test_that("rho with an offset and bam's blocked path (n > chunk.size), as bam()", {
  d <- ar1_data(1500, 0.6, n_series = 2, seed = 13)
  b <- mgcv::bam(y ~ offset(off) + s(x0, bs = "cr") + s(x1, bs = "cr"), data = d,
                 rho = 0.6, AR.start = start, chunk.size = 500)
  g <- gam_gpu(y ~ offset(off) + s(x0, bs = "cr") + s(x1, bs = "cr"), data = d, rho = 0.6,
               AR.start = start, device = "off",
               control = gam_gpu_control(chunk.size = 500))
  expect_ar1_parity(g, b)
})

test_that("rho with other families warns as bam() and fits without AR1", {
  d <- ar1_data(400, 0.5)
  d$yp <- rpois(nrow(d), exp(d$y / 2))
  expect_warning(
    g <- gam_gpu(yp ~ s(x0), family = poisson, data = d, rho = 0.5, device = "off"),
    class = "gamgpu_rho_unused")
  g0 <- gam_gpu(yp ~ s(x0), family = poisson, data = d, device = "off")
  expect_equal(g$linear.predictors, g0$linear.predictors, tolerance = 1e-14)
  expect_equal(g$AR1.rho, 0)
})

test_that("bad rho and AR.start are classed errors", {
  d <- ar1_data(200, 0.5)
  for (bad in list(1, -1, NA_real_, c(0.1, 0.2), "0.5", Inf))
    expect_error(gam_gpu(y ~ s(x0), data = d, rho = bad, device = "off"),
                 class = "gamgpu_bad_input")
  d$s_num <- as.numeric(d$start)
  expect_error(gam_gpu(y ~ s(x0), data = d, rho = 0.5, AR.start = s_num, device = "off"),
               class = "gamgpu_error")
})

for (rho in c(0.3, 0.6, 0.9)) for (series in c(1, 4)) {
  test_that(sprintf("rho = %g, %d series: device fits equal the CPU's and bam's, kernels launched",
                    rho, series), {
    skip_if_no_device()
    d <- ar1_data(5000, rho, n_series = series, seed = 14)
    args <- list(y ~ s(x0) + s(x1, bs = "cr") + x2, data = d, weights = d$w, rho = rho)
    if (series > 1) args$AR.start <- d$start
    gc <- do.call(gam_gpu, c(args, device = "off"))
    gd <- expect_device_fit(do.call(gam_gpu, c(args, device = "required")))
    expect_lt(rel_err(coef(gd), coef(gc)), 1e-9)
    expect_lt(rel_err(gd$linear.predictors, gc$linear.predictors), 1e-9)
    expect_lt(abs(gd$gcv.ubre - gc$gcv.ubre) / abs(gc$gcv.ubre), 1e-9)
    expect_lt(rel_err(gd$hat, gc$hat), 1e-9)
    b <- do.call(mgcv::bam, args)
    expect_ar1_parity(gd, b)
  })
}

test_that("rho with a setup object from fit = FALSE gives the direct fit", {
  d <- ar1_data(500, 0.6, n_series = 2, seed = 15)
  G <- gam_gpu(y ~ s(x0, bs = "cr") + s(x1), data = d, AR.start = start, fit = FALSE)
  g1 <- gam_gpu(G = G, rho = 0.6, device = "off")
  g2 <- gam_gpu(y ~ s(x0, bs = "cr") + s(x1), data = d, AR.start = start, rho = 0.6,
                device = "off")
  expect_equal(g1$linear.predictors, g2$linear.predictors, tolerance = 1e-13)
  expect_equal(g1$gcv.ubre, g2$gcv.ubre, tolerance = 1e-13)
  expect_equal(g1$AR1.rho, 0.6)
})

test_that("std.rsd: ar1_resid() is mgcv's AR.resid() bit for bit", {
  set.seed(3)
  r <- rnorm(1000)
  st <- rep(FALSE, 1000); st[c(1, 250, 251, 999)] <- TRUE
  AR.resid <- get("AR.resid", envir = asNamespace("mgcv"))
  for (rho in c(-0.4, 0.3, 0.95)) {
    expect_identical(gamgpu:::ar1_resid(r, rho), AR.resid(r, rho))
    expect_identical(gamgpu:::ar1_resid(r, rho, st), AR.resid(r, rho, st))
  }
  expect_identical(gamgpu:::ar1_resid(r, 0, st), r)
})
