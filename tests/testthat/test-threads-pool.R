# The REML optimizer's host threads (gam_gpu_control(nthreads)): the pool
# path (p >= 128, 4 or more threads) gives the serial path's fit to
# rounding, and the same fit whatever the number of threads.

big_basis <- function() {
  dat <- sim_data(2000, seed = 11)
  list(dat = dat,
       # three smooths of covariates that matter (gamSim 1's x3 has no
       # effect, so its smoothing parameter would sit in a flat direction)
       f = y ~ s(x0, k = 66, bs = "cr") + s(x1, k = 66, bs = "cr") + s(x2, k = 66, bs = "cr"))
}

test_that("REML products on a thread pool agree with the serial ones", {
  m <- big_basis()
  fit <- function(nt) gam_gpu(m$f, data = m$dat, device = "off",
                              control = gam_gpu_control(nthreads = nt))
  g1 <- fit(1)
  g4 <- fit(4)
  g6 <- fit(6)   # p / 32 = 6 threads at most
  expect_gte(length(coef(g1)), 192)
  # the pool ran with the threads asked for (p / 32 = 6 at most), or not at all
  expect_identical(c(g1$device$reml_threads, g4$device$reml_threads, g6$device$reml_threads),
                   c(1L, 4L, 6L))
  rel <- function(a, b) max(abs(a - b)) / max(abs(b))
  expect_lt(rel(g4$linear.predictors, g1$linear.predictors), 1e-9)
  expect_lt(rel(coef(g4), coef(g1)), 1e-7)
  expect_lt(rel(g4$sp, g1$sp), 1e-5)
  expect_lt(abs(g4$gcv.ubre[[1]] - g1$gcv.ubre[[1]]) / abs(g1$gcv.ubre[[1]]), 1e-10)
  expect_lt(rel(g4$Vp, g1$Vp), 1e-7)
  expect_lt(abs(sum(g4$edf) - sum(g1$edf)), 1e-6)
  # each column of the inverse is its own triangular solve: how the columns
  # are split over threads does not change a bit (under the reference BLAS,
  # whose solves are column by column)
  if (reference_blas()) {
    expect_identical(coef(g6), coef(g4))
    expect_identical(g6$Vp, g4$Vp)
  } else {
    expect_lt(rel(coef(g6), coef(g4)), 1e-7)
  }
})

test_that("nthreads is checked and has a default", {
  expect_error(gam_gpu_control(nthreads = 0), class = "gamgpu_bad_control")
  expect_error(gam_gpu_control(nthreads = NA), class = "gamgpu_bad_control")
  expect_gte(gam_gpu_control()$nthreads, 1L)
  old <- options(gamgpu.threads = 3)
  on.exit(options(old))
  expect_identical(gam_gpu_control()$nthreads,
                   if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_"))) 2L else 3L)
})

test_that("the rows' summaries over several blocks equal R's whatever the threads", {
  # deviance residuals, deviance, null deviance and aic are summed by blocks
  # of 65536 rows that the threads share (src/family/family_stats.c)
  n <- 150000
  set.seed(3)
  d <- data.frame(x = runif(n))
  d$yb <- stats::rbinom(n, 1, stats::plogis(sin(2 * pi * d$x)))
  fit <- function(nt) gam_gpu(yb ~ s(x, k = 5, bs = "cr"), family = binomial, data = d,
                              device = "off", control = gam_gpu_control(nthreads = nt))
  g1 <- fit(1)
  g3 <- fit(3)
  expect_identical(g3$fitted.values, g1$fitted.values)
  for (nm in c("residuals", "deviance", "null.deviance", "aic"))
    expect_identical(g3[[nm]], g1[[nm]], label = nm)
  fam <- binomial()
  w <- rep(1, n)
  expect_equal(g1$residuals, unname(mgcv::residuals.gam(g1, type = "deviance")),
               tolerance = 1e-15)
  expect_equal(g1$deviance, sum(g1$residuals^2), tolerance = 1e-15)
  expect_equal(g1$null.deviance, sum(fam$dev.resids(d$yb, mean(d$yb), w)), tolerance = 1e-14)
  expect_equal(g1$aic, fam$aic(d$yb, 1, g1$fitted.values, w, g1$sig2 * n) + 2 * sum(g1$edf),
               tolerance = 1e-14)
})
