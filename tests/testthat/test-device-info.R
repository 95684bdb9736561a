test_that("gpu_info() reports the build and whether a device is usable", {
  info <- gpu_info("auto")
  expect_s3_class(info, "gamgpu_gpu_info")
  expect_type(info$built_with_cuda, "logical")
  expect_identical(info$probed, info$built_with_cuda)   # the runtime probed (not an echo)
  if (info$usable) {
    expect_identical(info$reason, "")
    expect_gte(nrow(info$devices), 1L)
    expect_true(all(info$devices$total_memory > 0))
    expect_true(all(info$devices$free_memory > 0))
    expect_true(all(grepl("^compute_[0-9]+$", info$devices$nvrtc_arch)))
    expect_match(info$driver_version, "^[0-9]+\\.[0-9]+$")
  } else {
    expect_true(nzchar(info$reason))
    expect_identical(info$reason_class, "gamgpu_device_unavailable")
    expect_identical(nrow(info$devices), 0L)
    if (!info$built_with_cuda)
      expect_match(info$reason, "built without CUDA")
  }
  if (info$built_with_cuda) {
    expect_true(nzchar(info$toolkit))
    expect_match(info$toolkit_version, "^[0-9]+\\.[0-9]+$")
  }
  expect_output(print(info), "gamgpu device runtime")
  expect_output(print(info), if (info$usable) "usable:  yes" else "usable:  no")
})

test_that("the NVRTC architecture follows the compute capability", {
  arch <- function(ma, mi) gamgpu:::nvrtc_arch(ma, mi)
  expect_identical(arch(9, 0), "compute_90")
  expect_identical(arch(10, 0), "compute_90")
  expect_identical(arch(8, 9), "compute_89")
  expect_identical(arch(8, 6), "compute_86")
  expect_identical(arch(8, 7), "compute_80")
  expect_identical(arch(8, 0), "compute_80")
  expect_identical(arch(7, 5), "compute_75")
  expect_identical(arch(7, 0), "compute_70")
  expect_identical(arch(7, 2), "compute_70")
  expect_identical(arch(6, 1), "compute_60")
  expect_identical(arch(5, 2), "compute_60")
})
