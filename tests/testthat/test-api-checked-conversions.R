# Numbers that reach C as counts (rows, iterations, threads, ordinals,
# sizes) go through sexp_r.c's checked conversions: NA, non-finite, not
# whole or out of range is a classed error, never a cast of a double to int
# or size_t that C leaves undefined.

test_that("the fit's spec and control are checked", {
  set.seed(1)
  d <- data.frame(x = runif(80))
  d$y <- stats::rbinom(80, 1, 0.5)
  a <- gg_fit_args(y ~ s(x, k = 5), d, stats::binomial())
  ok <- call_gg_fit(a)
  expect_true(all(is.finite(ok$coefficients)))
  bad_ctl <- list(list(epsilon = NaN), list(epsilon = -1), list(newton.tol = Inf),
                  list(trace = NA), list(trace = 2L), list(chunk.size = 1e12),
                  list(chunk.size = -5), list(nthreads = 0L), list(nthreads = 2.5),
                  list(maxit = 3e9), list(maxit = 10.5), list(maxit = "10"))
  for (b in bad_ctl)
    expect_error(call_gg_fit(a, control = b), class = "gamgpu_bad_control",
                 label = deparse(b))
  bad_spec <- list(list(device_mode = NaN), list(device_mode = 3L), list(device_ordinal = -1L),
                   list(device_ordinal = 1e10), list(hat = NA), list(additive = 2L),
                   list(nobs = Inf), list(gamma = NA_real_), list(scale = NaN))
  for (b in bad_spec)
    expect_error(call_gg_fit(a, spec = b), class = "gamgpu_bad_input", label = deparse(b))
  # a penalty outside the coefficients (off) or an NA off
  expect_error(call_gg_fit(a, off = NA_integer_), class = "gamgpu_bad_input")
  expect_error(call_gg_fit(a, off = 3L), class = "gamgpu_bad_input")
  expect_error(call_gg_fit(a, off = 0L), class = "gamgpu_bad_input")
  # the message names the setting and the value
  e <- tryCatch(call_gg_fit(a, control = list(maxit = 10.5)), error = identity)
  expect_match(conditionMessage(e), "'maxit' must be a whole number .*10.5")
})

test_that("the model matrix recipe's counts are checked", {
  plan <- list(n = 3, p = 2, threads = 1L,
               blocks = list(list(kind = 0L, col0 = 1L, ncol = 2L, D = as.double(1:6))))
  expect_identical(.Call(gamgpu:::gg_xplan_build_r, plan), matrix(as.double(1:6), 3))
  edit <- function(...) utils::modifyList(plan, list(...))
  block <- function(...) {
    p <- plan
    p$blocks[[1]] <- utils::modifyList(p$blocks[[1]], list(...))
    p
  }
  for (p in list(edit(n = 1e12), edit(n = NA), edit(n = 2.5), edit(p = -1), edit(threads = NA),
                 edit(threads = 1e9), block(col0 = NA_integer_), block(col0 = 0L),
                 block(col0 = 3L), block(ncol = 2.5), block(kind = NA), block(kind = 9L)))
    expect_error(.Call(gamgpu:::gg_xplan_build_r, p), class = "gamgpu_bad_input")
})

test_that("predict's chunk rows: Inf means no limit, fractions and NA are errors", {
  set.seed(2)
  X <- matrix(stats::rnorm(300), 100)
  V <- crossprod(matrix(stats::rnorm(9), 3))
  ref <- gamgpu:::predict_rows_c(X, c(1, -1, 2), V, chunk_rows = 0)
  # "auto" tries the device first where one is built in: the chunk size
  # reaches it as a count (Inf used to be cast to size_t, undefined)
  for (dev in c("off", "auto")) {
    r <- gamgpu:::predict_rows_c(X, c(1, -1, 2), V, device = dev, chunk_rows = Inf)
    expect_equal(r$fit, ref$fit, tolerance = 1e-14)
    expect_equal(r$se.fit, ref$se.fit, tolerance = 1e-14)
  }
  for (bad in list(2.5, NA_real_, -1, 1e300))
    expect_error(gamgpu:::predict_rows_c(X, c(1, -1, 2), V, chunk_rows = bad),
                 class = "gamgpu_bad_input")
  expect_error(gamgpu:::predict_rows_c(X, c(1, -1, 2), V, threads = NA), class = "gamgpu_bad_input")
  expect_error(gamgpu:::predict_rows_c(X, c(1, -1, 2), V, threads = 0L), class = "gamgpu_bad_input")

  # through predict(): option gamgpu.predict_chunk_rows = Inf is a clamp (no
  # limit), 2.5 rows a classed error
  dat <- sim_data(400, seed = 5)
  g <- gam_gpu(y ~ s(x0) + s(x1), data = dat, device = "off")
  nd <- dat[1:50, ]
  p0 <- predict(g, nd, se.fit = TRUE, device = "off")
  local_gg_options(gamgpu.predict_chunk_rows = Inf)
  p1 <- predict(g, nd, se.fit = TRUE, device = "off")
  expect_equal(p1$fit, p0$fit, tolerance = 1e-14)
  expect_equal(p1$se.fit, p0$se.fit, tolerance = 1e-14)
  options(gamgpu.predict_chunk_rows = 2.5)
  expect_error(predict(g, nd, se.fit = TRUE, device = "off"), class = "gamgpu_bad_input")
})

test_that("the device glue's counts, ordinals and strings are checked", {
  # sizes beyond what a size_t holds have no bucket (-1), as 2^62 has not
  b <- gamgpu:::arena_bucket_of(c(2^62, 2^70, 1e300))
  expect_identical(b, rep(gamgpu:::arena_bucket_of(2^62), 3))
  expect_identical(gamgpu:::arena_bucket_of(c(NA, -1, Inf)), rep(NA_integer_, 3))
  a <- gamgpu:::arena_host()
  defer(gamgpu:::arena_host_free(a))
  for (n in list(NA, -1, 1.5, 1e300))
    expect_error(gamgpu:::arena_host_alloc(a, n), class = "gamgpu_bad_input")
  expect_error(gamgpu:::arena_host_alloc(a, 10, label = NA), class = "gamgpu_bad_input")
  expect_error(gamgpu:::arena_host_release(a, NA), class = "gamgpu_bad_input")
  expect_error(gamgpu:::arena_host_release(a, 0L), class = "gamgpu_bad_input")
  id <- gamgpu:::arena_host_alloc(a, 10)
  gamgpu:::arena_host_release(a, id)
  expect_error(gamgpu:::nvrtc_arch(NA, 0), class = "gamgpu_bad_input")
  expect_error(gamgpu:::record_fallback(NA, "x"), class = "gamgpu_bad_input")
  expect_error(gamgpu:::arena_device_try(10, ordinal = NA), class = "gamgpu_bad_input")
  expect_error(gamgpu:::arena_device_try(NA), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_column_summary_r, 1, NA_integer_), class = "gamgpu_bad_input")
})
