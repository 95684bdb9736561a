# gamgpu's native general-family route (R/general_outer.R) on the device:
# the family's rows on the model session's X there (ls and cox kernels),
# against the same route on the CPU (device = "off") and gam().

# (weights: the name of data's column of prior weights, or NULL)
native_device_fit <- function(formula, family, data, weights = NULL) {
  old <- options(gamgpu.general_route = "native")
  on.exit(options(old))
  ctl <- list(epsilon = 1e-10, newton.tol = 1e-10)
  fit <- function(device)
    eval(bquote(gam_gpu(formula, family = family, data = data, method = "REML",
                        device = .(device), control = ctl,
                        weights = .(if (!is.null(weights)) as.name(weights)))))
  a <- fit("off")
  gpu_telemetry(reset = TRUE)
  b <- fit("required")
  list(cpu = a, gpu = b, telemetry = gpu_telemetry())
}

expect_native_device <- function(r, kernel, tol = 1e-9) {
  a <- r$cpu
  b <- r$gpu
  t <- r$telemetry
  expect_match(b$device$route, "native route")
  expect_identical(b$device$backend, "cuda")
  expect_identical(a$device$backend, "cpu")
  expect_gt(sum(t$launches[t$backend == kernel]), 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_device_arena_empty()
  expect_identical(b$outer.info$conv, "full convergence")
  la <- as.matrix(a$linear.predictors)
  lb <- as.matrix(b$linear.predictors)
  r <- apply(la, 2, function(x) diff(range(x)))
  expect_lt(max(sweep(abs(lb - la), 2, r, "/")), tol)
  expect_lt(max(abs(log(b$sp / a$sp))), 1e3 * tol)
  expect_lt(max(abs(b$edf - a$edf)), 1e3 * tol)
}

test_that("gaulss() by the native route: its rows on the device, the fit the CPU's", {
  skip_if_no_device()
  set.seed(2)
  d <- mgcv::gamSim(1, n = 2000, verbose = FALSE)
  d$y <- d$f / 4 + rnorm(nrow(d)) * exp(d$f1 / 4 - 0.5)
  r <- native_device_fit(list(y ~ s(x0) + s(x1) + s(x2), ~ s(x1)), mgcv::gaulss(), d)
  expect_native_device(r, "ls")
})

test_that("cox.ph() by the native route: its rows on the device, the fit the CPU's", {
  skip_if_no_device()
  r <- native_device_fit(t ~ s(x0) + s(x1) + x2, mgcv::cox.ph(), cox_device_data(),
                         weights = "d")
  # (the device's sums in another order: 1.4e-8 of the range from the
  # CPU's fit on an H100, 7a2c252)
  expect_native_device(r, "cox", tol = 5e-8)
  # (the post-processing's hazard by gamgpu's C on the session's X)
  expect_equal(r$gpu$family$data$h, r$cpu$family$data$h, tolerance = 1e-9)
  expect_equal(r$gpu$family$data$Rs, r$cpu$family$data$Rs, tolerance = 1e-8)
})

test_that("ziplss() and multinom() by the native route: their rows on the device", {
  skip_if_no_device()
  d <- ls_fit_data(2000)
  for (fam in list(mgcv::ziplss(), mgcv::multinom(K = 2))) {
    r <- native_device_fit(ls_fit_formula(fam), fam, d)
    expect_native_device(r, "ls", tol = 5e-8)
  }
})
