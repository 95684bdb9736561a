# Helpers shared by the test files.

# Is a GPU usable here?  Probing is cached by the runtime, so this is cheap.
device_usable <- function() isTRUE(gpu_info("auto")$usable)

# GPU tests skip, visibly, where no device is usable -- except under
# GAMGPU_TEST_DEVICE=required (the GPU machine), where they must run: a
# skip there would hide that the device path was never exercised.
skip_if_no_device <- function() {
  if (device_usable())
    return(invisible(TRUE))
  why <- gpu_info("auto")$reason
  if (identical(Sys.getenv("GAMGPU_TEST_DEVICE"), "required"))
    stop("GAMGPU_TEST_DEVICE=required but no GPU is usable: ", why, call. = FALSE)
  skip(paste("no usable GPU:", why))
}

# The NVRTC compile check needs only the toolkit; on a CUDA build NVRTC is
# expected (CI sets GAMGPU_TEST_NVRTC=required so that a skip cannot hide a
# missing compiler).
skip_if_no_nvrtc <- function() {
  info <- gpu_info("off")
  if (!info$built_with_cuda) {
    if (identical(Sys.getenv("GAMGPU_TEST_NVRTC"), "required"))
      stop("GAMGPU_TEST_NVRTC=required but gamgpu was built without CUDA", call. = FALSE)
    skip("gamgpu was built without CUDA")
  }
  invisible(TRUE)
}

# Set options for the rest of the calling test.
local_gg_options <- function(..., .env = parent.frame()) {
  old <- options(...)
  defer(options(old), envir = .env)
}

rel_err <- function(a, b) max(abs(a - b)) / max(abs(b))

# Run `expr` when the calling frame exits (testthat 3.1 has no defer()).
defer <- function(expr, envir = parent.frame()) {
  thunk <- as.call(list(function() expr))
  do.call(base::on.exit, list(thunk, TRUE, FALSE), envir = envir)
}

# A fit on the device: `expr` (a gam_gpu() call with device = "required")
# is evaluated after a telemetry reset, and must have run on cuda with
# engine kernel launches and no fallback, leaving no device memory in use.
# Returns the fit.
expect_device_fit <- function(expr) {
  gpu_telemetry(reset = TRUE)
  fit <- expr
  t <- gpu_telemetry()
  expect_identical(fit$device$backend, "cuda")
  expect_gt(sum(t$launches[t$backend == "engine"]), 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_device_arena_empty()
  invisible(fit)
}

# The device's arena holds no buffer in use -- and is a device's arena:
# under policy "off" or without a device gpu_arena() is empty, and its zero
# bytes would pass without saying anything.
expect_device_arena_empty <- function(arena = gpu_arena()) {
  expect_false(is.na(attr(arena, "device")), label = "the arena is a device's")
  expect_equal(attr(arena, "bytes_in_use"), 0)
}
