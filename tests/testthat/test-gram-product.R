# The weighted Gram product: the CPU path against R's crossprod, the device
# path against the CPU path, and the device runtime's resource hygiene.

make_problem <- function(n, p, seed) {
  set.seed(seed)
  list(X = cbind(1, matrix(rnorm(n * (p - 1)), n)), w = runif(n, 0.1, 2), z = rnorm(n))
}

test_that("the CPU Gram product equals crossprod", {
  for (case in list(c(1, 1), c(7, 3), c(5000, 37), c(9000, 65))) {
    pr <- make_problem(case[1], case[2], seed = sum(case))
    g <- gpu_gram(pr$X, pr$w, pr$z, device = "off")
    expect_identical(g$device, "cpu")
    expect_lt(rel_err(g$XtWX, crossprod(pr$X, pr$w * pr$X)), 1e-13)
    expect_lt(rel_err(g$XtWz, drop(crossprod(pr$X, pr$w * pr$z))), 1e-13)
    expect_lt(abs(g$zWz - sum(pr$w * pr$z^2)) / sum(pr$w * pr$z^2), 1e-13)
    expect_true(isSymmetric(g$XtWX))
  }
  g <- gpu_gram(make_problem(100, 4, 1)$X, device = "off")
  expect_length(g$XtWz, 0L)
  expect_true(is.na(g$zWz))
})

test_that("bad Gram inputs are classed errors", {
  X <- matrix(rnorm(20), 10)
  expect_error(gpu_gram(1:10), class = "gamgpu_bad_input")
  expect_error(gpu_gram(X, w = 1:3), class = "gamgpu_bad_input")
  expect_error(gpu_gram(X, z = letters[1:10]), class = "gamgpu_bad_input")
  X[1] <- NA
  expect_error(gpu_gram(X), class = "gamgpu_bad_input")
})

test_that("the device Gram product equals the CPU's to 1e-12", {
  skip_if_no_device()
  gpu_telemetry(reset = TRUE)
  # n spans several arena buckets; p includes non-multiples of the 64 tile.
  for (case in list(c(1, 1), c(33, 5), c(1000, 37), c(70000, 37), c(200001, 65),
                    c(50000, 130), c(300000, 3))) {
    pr <- make_problem(case[1], case[2], seed = sum(case))
    gd <- gpu_gram(pr$X, pr$w, pr$z, device = "required")
    gc <- gpu_gram(pr$X, pr$w, pr$z, device = "off")
    expect_identical(gd$device, "cuda:0")
    expect_lt(rel_err(gd$XtWX, gc$XtWX), 1e-12)
    expect_lt(rel_err(gd$XtWz, gc$XtWz), 1e-12)
    expect_lt(abs(gd$zWz - gc$zWz) / abs(gc$zWz), 1e-12)
    expect_true(isSymmetric(gd$XtWX))
    # unit weights and no z take the kernel's other branches
    gd1 <- gpu_gram(pr$X, device = "required")
    expect_lt(rel_err(gd1$XtWX, crossprod(pr$X)), 1e-12)
    expect_device_arena_empty()
  }
  # reproducible bit for bit: no atomics, a fixed reduction order
  pr <- make_problem(100000, 37, 9)
  expect_identical(gpu_gram(pr$X, pr$w, pr$z, device = "required"),
                   gpu_gram(pr$X, pr$w, pr$z, device = "required"))
  t <- gpu_telemetry()
  expect_gt(t$launches[t$backend == "gram"], 0)
  expect_gt(t$h2d_bytes[t$backend == "gram"], 0)
  expect_equal(t$fallbacks[t$backend == "gram"], 0)
})

test_that("'auto' runs on the device when one is usable", {
  skip_if_no_device()
  gpu_telemetry(reset = TRUE)
  g <- gpu_gram(make_problem(5000, 10, 2)$X, device = "auto")
  expect_identical(g$device, "cuda:0")
  t <- gpu_telemetry()
  expect_equal(t$launches[t$backend == "gram"], 2)
  expect_equal(t$fallbacks[t$backend == "gram"], 0)
})

test_that("a kernel is compiled once and buffers come back from the cache", {
  skip_if_no_device()
  pr <- make_problem(40000, 21, 3)
  gpu_gram(pr$X, pr$w, pr$z, device = "required")  # compiles if not yet
  m1 <- gpu_modules()
  a1 <- gpu_arena()
  gpu_gram(pr$X, pr$w, pr$z, device = "required")
  m2 <- gpu_modules()
  a2 <- gpu_arena()
  gram1 <- m1[m1$name == "gram", ]
  gram2 <- m2[m2$name == "gram", ]
  expect_identical(nrow(gram2), 1L)
  expect_true(gram2$ok)
  expect_equal(gram2$compiles, 1)
  expect_equal(gram2$requests - gram1$requests, 2)   # two kernels, one module
  expect_gt(gram2$compile_seconds, 0)
  expect_identical(gram2$arch, gpu_info()$devices$nvrtc_arch[1])
  # the repeat call allocated nothing new: every buffer was a hit
  expect_equal(sum(a2$misses), sum(a1$misses))
  expect_gt(sum(a2$hits), sum(a1$hits))
  expect_device_arena_empty(a2)
  expect_gt(attr(a2, "bytes_cached"), 0)
  expect_gt(gpu_arena_release(), 0)
  expect_equal(attr(gpu_arena(), "bytes_cached"), 0)
})

test_that("an allocation beyond the device's memory fails cleanly", {
  skip_if_no_device()
  total <- gpu_info()$devices$total_memory[1]
  n <- 2 * total / 8
  err <- expect_error(gamgpu:::arena_device_try(n, label = "gram"),
                      class = "gamgpu_device_oom")
  expect_match(conditionMessage(err), "gram")
  expect_match(conditionMessage(err), sprintf("%.0f doubles", n))
  expect_match(conditionMessage(err), "cuda:0")
  expect_device_arena_empty()
  # the arena still works
  pr <- make_problem(2000, 5, 4)
  expect_identical(gpu_gram(pr$X, device = "required")$device, "cuda:0")
})

test_that("a device error mid-call returns every buffer; 'auto' falls back, 'required' errors", {
  skip_if_no_device()
  gpu_arena_release()
  pr <- make_problem(300000, 20, 5)
  # (X's 6e6 doubles take a buffer of their arena size class, 48 MiB)
  x_bytes <- 8 * gamgpu:::arena_size_class(length(pr$X))$elements
  local_gg_options(gamgpu.device_memory = x_bytes - 2^20)
  gpu_telemetry(reset = TRUE)
  expect_error(gpu_gram(pr$X, pr$w, pr$z, device = "required"), class = "gamgpu_device_oom")
  expect_device_arena_empty()
  g <- gpu_gram(pr$X, pr$w, pr$z, device = "auto")
  expect_identical(g$device, "cpu")
  expect_match(g$fallback, "budget")
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "gram"], 1)
  expect_device_arena_empty()
  # fails after its first buffers were taken: X fits, the rest does not
  options(gamgpu.device_memory = x_bytes + 2^20)
  expect_error(gpu_gram(pr$X, pr$w, pr$z, device = "required"), class = "gamgpu_device_oom")
  expect_device_arena_empty()
  options(gamgpu.device_memory = NULL)
  expect_identical(gpu_gram(pr$X, pr$w, pr$z, device = "required")$device, "cuda:0")
})

test_that("a forked child does not reuse its parent's CUDA context", {
  skip_if_no_device()
  skip_on_os("windows")
  pr <- make_problem(2000, 5, 6)
  gpu_gram(pr$X, device = "required")      # the parent has a context now
  job <- parallel::mcparallel({
    g <- gpu_gram(pr$X, device = "auto")
    e <- tryCatch(gpu_gram(pr$X, device = "required"), error = function(e) e)
    list(device = g$device, fallback = g$fallback, error_class = class(e))
  })
  child <- parallel::mccollect(job)[[1]]
  expect_identical(child$device, "cpu")
  expect_match(child$fallback, "fork")
  expect_true("gamgpu_device_unavailable" %in% child$error_class)
  # the parent is unaffected
  expect_identical(gpu_gram(pr$X, device = "required")$device, "cuda:0")
  expect_device_arena_empty()
})
