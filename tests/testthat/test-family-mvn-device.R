# mvn()'s ll() on the device (R/family_mvn.R: mvn_ll_stats() on a model
# session): X loaded once per distinct X, mu = X B and X'r by the
# session's products in the device's memory, the algebra in C on the host.
# Oracles: the same ll() on the CPU session, then fits against
# device = "off".  Every test here needs a GPU (skip_if_no_device()).

mvn_device_case <- function(n = 6000, seed = 11) {
  set.seed(seed)
  Xm <- cbind(1, matrix(runif(n * 6), n))
  lpi <- lapply(list(c(1, 2, 3), c(4, 5, 2), c(6, 7, 1)), as.integer)
  attr(lpi, "overlap") <- TRUE
  X <- cbind(Xm, matrix(0, n, 6))
  attr(X, "lpi") <- lpi
  attr(X, "XX") <- crossprod(Xm)
  p <- ncol(X)
  list(y = matrix(rnorm(n * 3), n) + Xm[, 2], X = X,
       coef = c(rnorm(7) / 3, runif(6, -0.4, 0.4)), d1b = matrix(rnorm(2 * p), p))
}

mvn_state <- function(policy, mode)
  gamgpu:::ls_device_state(policy, list(mode = mode, ordinal = 0L),
                           gamgpu:::as_gam_gpu_control(gam_gpu_control()))

mvn_device_data <- function(n = 3000, seed = 12) {
  set.seed(seed)
  x <- matrix(runif(3 * n), n)
  mu <- cbind(2 * sin(pi * x[, 1]) + exp(2 * x[, 2]), 4 * x[, 3] * (1 - x[, 3]))
  y <- mu + matrix(rnorm(2 * n), n) %*% chol(matrix(c(2, 1, 1, 2), 2))
  data.frame(y0 = y[, 1], y1 = y[, 2], x0 = x[, 1], x1 = x[, 2], x2 = x[, 3])
}

test_that("mvn()'s ll() on the device equals the CPU session's, with the session's kernels launched", {
  skip_if_no_device()
  r <- mvn_device_case()
  cpu <- mvn_state("off", 0L)
  gpu <- mvn_state("required", 2L)
  gpu_telemetry(reset = TRUE)
  for (deriv in c(0, 1, 3)) {
    a <- gamgpu:::mvn_ll_stats(cpu, r$y, r$X, r$coef, deriv, r$d1b)
    b <- gamgpu:::mvn_ll_stats(gpu, r$y, r$X, r$coef, deriv, r$d1b)
    for (nm in c("l", "lb", "lbb", if (deriv == 3) "dH"))
      expect_lt(rel_err(b[[nm]], a[[nm]]), 1e-9, label = nm)
  }
  t <- gpu_telemetry()
  expect_gt(sum(t$launches[t$backend == "engine"]), 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_identical(gpu$loads, 1L)
  gamgpu:::ls_session_close(gpu)
  gamgpu:::ls_session_close(cpu)
  expect_identical(gpu$backends, "cuda")
  expect_device_arena_empty()
})

test_that("mvn() fits on the device equal the CPU's, shared terms included", {
  skip_if_no_device()
  d <- mvn_device_data()
  ctl <- gam_gpu_control(epsilon = 1e-10, newton.tol = 1e-10)
  for (fml in list(list(y0 ~ s(x0) + s(x1), y1 ~ s(x2)),
                   list(y0 ~ s(x0), y1 ~ s(x1), 1 + 2 ~ s(x2) - 1))) {
    a <- gam_gpu(fml, family = mgcv::mvn(d = 2), data = d, method = "REML", control = ctl,
                 device = "off")
    b <- expect_device_fit(gam_gpu(fml, family = mgcv::mvn(d = 2), data = d, method = "REML",
                                   control = ctl, device = "required"))
    expect_identical(b$device$ll_rows, "gamgpu")
    expect_identical(b$device$ll_sessions, 1L)
    expect_gt(b$device$ll_calls, 0)
    expect_match(b$device$route, "sufficient statistics", fixed = TRUE)
    expect_identical(b$outer.info$conv, a$outer.info$conv)
    la <- as.matrix(a$linear.predictors)
    rng <- apply(la, 2, function(x) diff(range(x)))
    expect_lt(max(sweep(abs(as.matrix(b$linear.predictors) - la), 2, rng, "/")), 1e-8)
    expect_lt(max(abs(b$sp / a$sp - 1)), 1e-3)
    expect_lt(max(abs(b$edf - a$edf)), 1e-6)
  }
})

test_that("a device mvn() ll() with bad input leaves no device memory in use", {
  skip_if_no_device()
  r <- mvn_device_case(n = 500)
  gpu <- mvn_state("required", 2L)
  gamgpu:::mvn_ll_stats(gpu, r$y, r$X, r$coef, 1, r$d1b)
  expect_error(gamgpu:::mvn_ll_stats(gpu, r$y, r$X, r$coef[-1], 1, r$d1b),
               class = "gamgpu_bad_input")
  gamgpu:::ls_session_close(gpu)
  expect_device_arena_empty()
})
