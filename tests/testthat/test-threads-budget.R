# The fit's host threads keep within control nthreads, the calling thread
# included (R CMD check allows 2 cores): every helper thread takes a slot of
# one budget (src/util/threads.c) -- the rows' summaries and page touching
# (fit_rows.c), the REML set-up beside the first working model
# (engine_pirls.c), the REML pool, the post-processing (engine_postproc.c),
# the model matrix build -- and a job that gets none runs on the caller's
# thread.  gg_threads_peak_r reports the most threads that worked at once.
# The model matrix's threads and forked workers (option gamgpu.setup_cores)
# are capped at control nthreads too (the last test).

peak_of <- function(expr) {
  .Call(gamgpu:::gg_threads_peak_r, TRUE)
  force(expr)
  .Call(gamgpu:::gg_threads_peak_r, FALSE)
}

test_that("fits keep within nthreads threads and agree across thread counts", {
  # 3 blocks of 65536 rows: the rows' summaries have work for 3 threads
  local_gg_options(gamgpu.setup_cores = 1)
  set.seed(7)
  n <- 140000
  d <- data.frame(x = runif(n))
  d$yb <- stats::rbinom(n, 1, stats::plogis(sin(2 * pi * d$x)))
  fits <- list()
  for (nt in 1:3) {
    pk <- peak_of(fits[[nt]] <- gam_gpu(yb ~ s(x, k = 5, bs = "cr"), family = binomial,
                                        data = d, device = "off",
                                        control = gam_gpu_control(nthreads = nt)))
    expect_lte(pk, nt)
    # the count sees the helpers: with room for them, the fit used them
    expect_identical(pk, nt)
  }
  # the same fit to the bit whatever the threads
  for (nt in 2:3) {
    expect_identical(coef(fits[[nt]]), coef(fits[[1]]))
    expect_identical(fits[[nt]]$fitted.values, fits[[1]]$fitted.values)
    for (nm in c("residuals", "deviance", "null.deviance", "aic", "hat", "Vp"))
      expect_identical(fits[[nt]][[nm]], fits[[1]][[nm]], label = nm)
  }
})

test_that("the REML pool and the other helpers share the budget", {
  # p >= 128 and nthreads >= 4 starts the REML pool (engine_reml.c) beside
  # the rows' helpers and the set-up task: together still at most nthreads
  local_gg_options(gamgpu.setup_cores = 1)
  set.seed(8)
  n <- 3000
  d <- data.frame(x0 = runif(n), x1 = runif(n))
  d$y <- sin(2 * pi * d$x0) + cos(2 * pi * d$x1) + stats::rnorm(n, 0, 0.3)
  f <- y ~ s(x0, k = 66, bs = "cr") + s(x1, k = 66, bs = "cr")
  pk <- peak_of(g4 <- gam_gpu(f, data = d, device = "off",
                              control = gam_gpu_control(nthreads = 4)))
  expect_lte(pk, 4L)
  expect_identical(g4$device$reml_threads, 4L)
  pk <- peak_of(g1 <- gam_gpu(f, data = d, device = "off",
                              control = gam_gpu_control(nthreads = 1)))
  expect_identical(pk, 1L)
  expect_lt(rel_err(g4$linear.predictors, g1$linear.predictors), 1e-9)
})

test_that("the setup's and predict's passes keep within their thread counts", {
  set.seed(9)
  x <- stats::rnorm(300001)
  for (nt in 1:3) {
    pk <- peak_of(s <- .Call(gamgpu:::gg_column_summary_r, x, nt))
    expect_lte(pk, nt)
    expect_identical(s, c(length(x), min(x), stats::quantile(x, 0.5, type = 3, names = FALSE),
                          max(x)))
  }
  X <- matrix(stats::rnorm(60000 * 3), ncol = 3)
  V <- crossprod(matrix(stats::rnorm(9), 3))
  for (nt in 1:3) {
    pk <- peak_of(r <- gamgpu:::predict_rows_c(X, c(1, 2, 3), V, threads = nt))
    expect_lte(pk, nt)
    expect_equal(r$fit, drop(X %*% c(1, 2, 3)), tolerance = 1e-14)
  }
})

test_that("the model matrix keeps within nthreads whatever gamgpu.setup_cores says", {
  local_gg_options(gamgpu.setup_cores = 8)
  set.seed(8)
  n <- 60000
  d <- data.frame(x = runif(n), z = runif(n))
  d$y <- sin(2 * pi * d$x) + d$z + rnorm(n)
  for (nt in 1:2) {
    pk <- peak_of(g <- gam_gpu(y ~ s(x, bs = "cr") + s(z), data = d, device = "off",
                               control = gam_gpu_control(nthreads = nt, chunk.size = 5000)))
    expect_identical(g$device$model_matrix, "recipe")
    expect_lte(pk, nt)
  }
})
