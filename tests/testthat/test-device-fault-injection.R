# Device faults injected inside a fit (src/cuda/cuda_fault.c through
# gpu_inject_fault()): the k-th device allocation, kernel launch, NVRTC
# compile or copy fails, or the device is gone from the k-th driver call
# on.  Under device = "auto" the fit finishes on the CPU with the answer of
# device = "off" and a counted fallback naming the reason; under
# "required" it is a classed error; either way no device bytes stay in use
# and the next fit on the device works.

fault_data <- function(n = 20000) {
  set.seed(9)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$y <- sin(6 * d$x0) + d$x1^2 + rnorm(n) / 3
  d
}

test_that("fault injection is a classed error without a device, and checks its arguments", {
  expect_error(gamgpu:::gpu_inject_fault("bogus", 1), class = "gamgpu_bad_input")
  expect_error(gamgpu:::gpu_inject_fault("alloc", 0), class = "gamgpu_bad_input")
  skip_if(isTRUE(gpu_info()$usable), "a GPU is usable here (the device tests below run)")
  expect_error(gamgpu:::gpu_inject_fault("alloc", 1), class = "gamgpu_error")
})

test_that("a device fault inside a fit: 'auto' falls back to the CPU's answer, 'required' is an error", {
  skip_if_no_device()
  d <- fault_data()
  f <- y ~ s(x0) + s(x1, bs = "cr") + s(x2, bs = "cr")
  ctl <- gam_gpu_control(chunk.size = 5000)           # X from its recipe, built on the device
  ref <- gam_gpu(f, data = d, device = "off", control = ctl)
  dev <- gam_gpu(f, data = d, device = "required", control = ctl)
  on.exit(gamgpu:::gpu_inject_fault("none"), add = TRUE)
  hits <- 0
  for (kind in c("alloc", "launch", "copy", "nodevice")) for (at in c(1, 4, 25)) {
    label <- paste(kind, at)
    gpu_arena_release()
    gpu_telemetry(reset = TRUE)
    gamgpu:::gpu_inject_fault(kind, at)
    g <- gam_gpu(f, data = d, device = "auto", control = ctl)
    n_hit <- gamgpu:::gpu_inject_fault("none")
    t <- gpu_telemetry()
    expect_s3_class(g, "gam_gpu")
    if (n_hit > 0 && g$device$backend == "cpu") {
      hits <- hits + 1
      expect_identical(coef(g), coef(ref), label = label)
      expect_gt(sum(t$fallbacks), 0, label = label)
      expect_gt(nrow(attr(t, "fallback_reasons")), 0, label = label)
    } else {
      # not reached, or survived (an allocation the arena retried): the device's fit
      expect_identical(g$device$backend, "cuda", label = label)
      expect_identical(coef(g), coef(dev), label = label)
    }
    expect_device_arena_empty()
    gpu_arena_release()
    gamgpu:::gpu_inject_fault(kind, at)
    r <- tryCatch(gam_gpu(f, data = d, device = "required", control = ctl),
                  error = function(e) e)
    n_hit <- gamgpu:::gpu_inject_fault("none")
    if (inherits(r, "error")) {
      expect_gt(n_hit, 0, label = label)
      expect_s3_class(r, "gamgpu_error")
      if (kind == "alloc") expect_s3_class(r, "gamgpu_device_oom")
    } else {
      expect_identical(coef(r), coef(dev), label = label)
    }
    expect_device_arena_empty()
    # the next fit on the device is the device's fit
    expect_identical(coef(gam_gpu(f, data = d, device = "required", control = ctl)), coef(dev),
                     label = label)
  }
  expect_gt(hits, 6)
})

test_that("an NVRTC compile that fails falls back, is not cached, and the next fit compiles", {
  skip_if_no_device()
  d <- fault_data(8000)
  f <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr")
  ctl <- gam_gpu_control(chunk.size = 2000)
  ref <- gam_gpu(f, data = d, device = "off", control = ctl)
  on.exit(gamgpu:::gpu_inject_fault("none"), add = TRUE)
  gamgpu:::gpu_inject_fault("compile", 1)
  gpu_telemetry(reset = TRUE)
  g <- gam_gpu(f, data = d, device = "auto", control = ctl)
  expect_gt(gamgpu:::gpu_inject_fault("none"), 0)
  expect_identical(g$device$backend, "cpu")
  expect_identical(coef(g), coef(ref))
  expect_gt(sum(gpu_telemetry()$fallbacks), 0)
  g2 <- gam_gpu(f, data = d, device = "required", control = ctl)
  expect_identical(g2$device$backend, "cuda")
  expect_true(all(gpu_modules()$ok))
  expect_device_arena_empty()
})
