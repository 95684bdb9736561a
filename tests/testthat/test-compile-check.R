test_that("every kernel compiles with NVRTC for compute_80 and compute_90", {
  skip_if_no_nvrtc()
  chk <- gpu_compile_check(c("compute_80", "compute_90"))
  kernels <- sub("\\.cu$", "", list.files(system.file("kernels", package = "gamgpu"),
                                           pattern = "\\.cu$"))
  expect_gte(length(kernels), 1L)
  expect_setequal(unique(chk$kernel), kernels)
  expect_identical(nrow(chk), 2L * length(kernels))
  failed <- chk[!chk$ok, ]
  expect_identical(nrow(failed), 0L, info = paste(failed$kernel, failed$arch, failed$log))
  expect_output(print(chk), "OK")
})

test_that("a kernel that does not compile reports the compiler's log", {
  skip_if_no_nvrtc()
  bad <- "extern \"C\" __global__ void k(double *x) { x[0] = undefined_thing; }"
  chk <- .Call(gamgpu:::gg_compile_check_r, "broken", bad, "compute_90")
  expect_false(chk$ok)
  expect_match(chk$log, "broken")
  expect_match(chk$log, "undefined_thing")
})

test_that("bad arguments are classed errors", {
  expect_error(gpu_compile_check("sm_90"), class = "gamgpu_bad_input")
  expect_error(gpu_compile_check(kernels = "nope"), class = "gamgpu_bad_input")
})

test_that("a CPU-only build says NVRTC is unavailable", {
  skip_if(gpu_info("off")$built_with_cuda, "built with CUDA")
  expect_error(gpu_compile_check("compute_90"), class = "gamgpu_nvrtc_unavailable")
})
