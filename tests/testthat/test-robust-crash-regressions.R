# Inputs that used to crash R (issue 11: no crash, no silent wrong answer).
# Each test here aborted or segfaulted the R process before its fix.

test_that("a Poisson fit of a response that is not whole numbers fits as bam() does", {
  # The aic's dpois() ran on a helper thread and called R's warning() there
  # for the non-integer x, which aborted R.  Now the densities are pure C
  # (src/family/family_dens.c) and the warning comes on R's thread: the fit equals
  # bam()'s, its aic is bam()'s Inf, with R's warning.
  set.seed(1)
  n <- 1000
  d <- data.frame(x = runif(n))
  d$y <- stats::rpois(n, exp(1 + sin(2 * pi * d$x))) + 0.5
  for (nt in c(1L, 2L)) {
    expect_warning(
      g <- gam_gpu(y ~ s(x), family = poisson, data = d, device = "off",
                   control = gam_gpu_control(nthreads = nt)),
      sprintf("non-integer x = %f", d$y[1]), fixed = TRUE)
  }
  # bam() warns once per row (family$aic's dpois()); ours is its first
  bam_warnings <- character(0)
  b <- withCallingHandlers(mgcv::bam(y ~ s(x), family = poisson, data = d),
                           warning = function(w) {
                             bam_warnings <<- c(bam_warnings, conditionMessage(w))
                             invokeRestart("muffleWarning")
                           })
  expect_identical(bam_warnings[1], sprintf("non-integer x = %f", d$y[1]))
  expect_identical(b$aic, Inf)
  expect_identical(g$aic, b$aic)
  rel <- function(a, r) max(abs(a - r)) / diff(range(r))
  expect_lt(rel(coef(g), coef(b)), 1e-9)
  expect_lt(rel(g$linear.predictors, b$linear.predictors), 1e-9)
  expect_equal(g$deviance, b$deviance, tolerance = 1e-10)
  expect_equal(g$null.deviance, b$null.deviance, tolerance = 1e-12)
})

test_that("a whole-number Poisson response gives no warning and bam()'s finite aic", {
  set.seed(2)
  d <- data.frame(x = runif(500))
  d$y <- stats::rpois(500, exp(1 + sin(2 * pi * d$x)))
  expect_silent(g <- gam_gpu(y ~ s(x), family = poisson, data = d, device = "off"))
  b <- mgcv::bam(y ~ s(x), family = poisson, data = d)
  expect_true(is.finite(g$aic))
  expect_equal(g$aic, b$aic, tolerance = 1e-12)
})

test_that("maxit below 1 is a classed error, not a segfault", {
  # maxit = 0.5 became 0: the IRLS loop never ran and the engine read the
  # NULL result of a REML fit that never happened.
  set.seed(3)
  d <- data.frame(x = runif(200))
  d$y <- stats::rbinom(200, 1, stats::plogis(sin(2 * pi * d$x)))
  expect_error(gam_gpu(y ~ s(x), family = binomial, data = d, device = "off",
                       control = list(maxit = 0.5)),
               class = "gamgpu_bad_control")
  # the engine's own guard (src/engine/engine_pirls.c), reached through the C entry
  a <- gg_fit_args(y ~ s(x, k = 5), d, stats::binomial())
  expect_error(call_gg_fit(a, control = list(maxit = 0L)), class = "gamgpu_bad_control")
  expect_error(call_gg_fit(a, control = list(maxit = -3L)), class = "gamgpu_bad_control")
  expect_error(call_gg_fit(a, control = list(newton.maxit = 0L)), class = "gamgpu_bad_control")
  # an additive model runs one pass whatever maxit says, but 0 is still refused
  ag <- gg_fit_args(x ~ s(y, k = 3), transform(d, y = stats::runif(200)))
  expect_error(call_gg_fit(ag, control = list(maxit = 0L)), class = "gamgpu_bad_control")
  # and the same arguments with maxit = 1 fit
  expect_true(all(is.finite(call_gg_fit(a, control = list(maxit = 1L))$coefficients)))
})

test_that("NA iteration limits and thread counts are classed errors, not undefined casts", {
  # (int) NA_real_ is undefined in C; on x86 it gave INT_MIN, a negative
  # maxit, and the segfault above
  set.seed(4)
  d <- data.frame(x = runif(100))
  d$y <- stats::rbinom(100, 1, 0.5)
  a <- gg_fit_args(y ~ s(x, k = 5), d, stats::binomial())
  expect_error(call_gg_fit(a, control = list(maxit = NA_real_)), class = "gamgpu_bad_control")
  expect_error(call_gg_fit(a, control = list(newton.maxit = NaN)), class = "gamgpu_bad_control")
  expect_error(call_gg_fit(a, control = list(nthreads = 1e10)), class = "gamgpu_bad_control")
  expect_error(call_gg_fit(a, control = list(nthreads = NA_integer_)), class = "gamgpu_bad_control")
})

test_that("the CPU-only path under device 'auto' at n >= 2000 fits (no uninitialised backend)", {
  # A failed device start left the backend struct uninitialised, and its
  # counters and placement were read (valgrind: conditional jump on
  # uninitialised value); now it is zeroed first.
  skip_if(device_usable(), "a GPU is usable here: the device path runs instead")
  set.seed(5)
  d <- data.frame(x = runif(3000))
  d$y <- sin(2 * pi * d$x) + stats::rnorm(3000, 0, 0.3)
  g <- gam_gpu(y ~ s(x), data = d, device = "auto")
  expect_identical(g$device$backend, "cpu")
  expect_identical(g$device$placement, "host")
  b <- mgcv::bam(y ~ s(x), data = d)
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / diff(range(b$linear.predictors)),
            1e-9)
})
