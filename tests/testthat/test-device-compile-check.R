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

test_that("every kernel compiles for the oldest and newest architecture NVRTC lists", {
  skip_if_no_nvrtc()
  archs <- gpu_info("auto")$nvrtc_archs
  skip_if(length(archs) == 0L, "this NVRTC cannot list its architectures (before 11.2)")
  expect_type(archs, "integer")
  expect_false(is.unsorted(archs))
  expect_true(all(c(80L, 90L) %in% archs))
  ends <- sprintf("compute_%d", unique(range(archs)))
  chk <- gpu_compile_check(ends)
  failed <- chk[!chk$ok, ]
  expect_identical(nrow(failed), 0L, info = paste(failed$kernel, failed$arch, failed$log))
})

test_that("an architecture NVRTC does not list makes a device unusable, as the compile would", {
  # the probe's decision, as pure logic (no GPU needed)
  listed <- function(a, l) gamgpu:::nvrtc_arch_listed(a, l)
  expect_true(listed("compute_90", c(75L, 80L, 90L)))
  expect_false(listed("compute_70", c(75L, 80L, 90L)))
  expect_false(listed("compute_60", c(75L, 80L, 90L)))
  expect_true(listed("compute_70", integer()))        # NVRTC cannot say: the compile will
  expect_false(listed("sm_90", c(90L)))
  # and the NVRTC here: an architecture it does not list does not compile
  skip_if_no_nvrtc()
  archs <- gpu_info("auto")$nvrtc_archs
  skip_if(length(archs) == 0L, "this NVRTC cannot list its architectures (before 11.2)")
  gone <- setdiff(c(60L, 70L), archs)
  skip_if(length(gone) == 0L, "this NVRTC still compiles for compute_60 and compute_70")
  chk <- gpu_compile_check(sprintf("compute_%d", gone[1]), kernels = "rows")
  expect_false(chk$ok)
  expect_match(chk$log, "architecture")
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
