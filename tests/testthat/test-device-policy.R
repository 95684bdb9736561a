test_that("the policy comes from the option, then the environment, then 'auto'", {
  local_gg_options(gamgpu.device = NULL)
  old_env <- Sys.getenv("GAMGPU_DEVICE", NA)
  defer(if (is.na(old_env)) Sys.unsetenv("GAMGPU_DEVICE") else Sys.setenv(GAMGPU_DEVICE = old_env))

  Sys.unsetenv("GAMGPU_DEVICE")
  expect_identical(gpu_policy(), "auto")
  Sys.setenv(GAMGPU_DEVICE = "off")
  expect_identical(gpu_policy(), "off")
  old <- gpu_policy("required")
  expect_identical(old, "off")
  expect_identical(getOption("gamgpu.device"), "required")
  expect_identical(gpu_policy(), "required")
  gpu_policy(NULL)
  expect_identical(gpu_policy(), "off")
  Sys.setenv(GAMGPU_DEVICE = "REQUIRED")
  expect_identical(gpu_policy(), "required")
})

test_that("a bad policy is a classed error wherever it comes from", {
  local_gg_options(gamgpu.device = NULL)
  expect_error(gpu_policy("gpu"), class = "gamgpu_bad_policy")
  expect_error(gpu_policy(c("auto", "off")), class = "gamgpu_bad_policy")
  expect_error(gpu_gram(diag(2), device = "fast"), class = "gamgpu_bad_policy")
  options(gamgpu.device = "sometimes")
  expect_error(gpu_policy(), class = "gamgpu_bad_policy")
  expect_error(gpu_policy(), "option gamgpu.device")
})

test_that("'required' without a usable device errors with the reason", {
  skip_if(device_usable(), "a GPU is usable here: 'required' succeeds (tested in test-gram-product.R)")
  why <- gpu_info("auto")$reason
  expect_true(nzchar(why))
  err <- expect_error(gpu_gram(diag(3), device = "required"),
                      class = "gamgpu_device_unavailable")
  expect_match(conditionMessage(err), "required", fixed = TRUE)
  expect_match(conditionMessage(err), why, fixed = TRUE)
  expect_s3_class(err, "gamgpu_error")
})

test_that("'off' never probes the driver: a fresh process that fits under 'off' loads no libcuda", {
  skip_if_not(file.exists("/proc/self/maps"), "no /proc/self/maps here")
  # probed is the runtime's own state, not an echo of the policy: a process
  # that only used "off" has not probed and has no libcuda or NVRTC mapped;
  # after one "auto" request a CUDA build has probed (whether or not a
  # driver was found)
  script <- tempfile(fileext = ".R")
  out <- tempfile()
  on.exit(unlink(c(script, out)), add = TRUE)
  writeLines(c(
    "suppressMessages(library(gamgpu))",
    "options(gamgpu.device = 'off')",
    "set.seed(1); d <- data.frame(x = runif(300)); d$y <- sin(6 * d$x) + rnorm(300) / 4",
    "g <- gam_gpu(y ~ s(x), data = d, device = 'off')",
    "p <- predict(g, d[1:10, , drop = FALSE], se.fit = TRUE, device = 'off')",
    "gg <- gpu_gram(diag(3), device = 'off')",
    "maps <- readLines('/proc/self/maps')",
    "off <- c(gpu_info('off')$probed, any(grepl('libcuda|libnvrtc', maps)))",
    "on <- c(gpu_info('auto')$probed, gpu_info('off')$probed)   # the second: probed earlier",
    sprintf("writeLines(as.character(c(off, on, gpu_info('auto')$built_with_cuda)), '%s')", out)),
    script)
  rc <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = FALSE, stderr = FALSE,
                env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  expect_identical(rc, 0L)
  r <- as.logical(readLines(out))
  expect_identical(r[1:2], c(FALSE, FALSE))            # not probed, nothing mapped
  expect_identical(r[3:4], rep(r[5], 2))               # "auto" probes in a CUDA build
})

test_that("gpu_info('off') reports the policy's reason", {
  info <- gpu_info("off")
  expect_false(info$usable)
  expect_identical(info$reason_class, "gamgpu_device_off")
  g <- gpu_gram(diag(3), device = "off")
  expect_identical(g$device, "cpu")
  expect_identical(g$fallback, "")
})

test_that("the device-memory option accepts sizes and rejects nonsense", {
  expect_equal(gamgpu:::parse_bytes("2GB"), 2 * 1024^3)
  expect_equal(gamgpu:::parse_bytes("512 MiB"), 512 * 1024^2)
  expect_equal(gamgpu:::parse_bytes(1e6), 1e6)
  expect_equal(gamgpu:::parse_bytes(NULL), 0)
  expect_error(gamgpu:::parse_bytes("lots"), class = "gamgpu_bad_input")
})
