# The compile-once module cache.  (Compile-once for the real Gram kernel is
# tested in test-gram-product.R.)

test_that("a kernel that fails to compile is reported with its log, once", {
  skip_if_no_device()
  dir <- tempfile("kernels")
  dir.create(dir)
  writeLines('extern "C" __global__ void k(double *x) { x[0] = not_declared_here; }',
             file.path(dir, "gg_test_broken.cu"))
  writeLines('extern "C" __global__ void k(double *x) { x[0] = 1.0; }',
             file.path(dir, "gg_test_ok.cu"))
  old <- gamgpu:::set_kernel_dir(dir)
  defer(gamgpu:::set_kernel_dir(old))

  err <- expect_error(gamgpu:::module_request("gg_test_broken", "k"),
                      class = "gamgpu_kernel_compile")
  expect_match(conditionMessage(err), "gg_test_broken")
  expect_match(conditionMessage(err), "not_declared_here")
  expect_error(gamgpu:::module_request("gg_test_broken", "k"), class = "gamgpu_kernel_compile")
  m <- gpu_modules()
  broken <- m[m$name == "gg_test_broken", ]
  expect_false(broken$ok)
  expect_equal(broken$compiles, 1)      # the failure is cached, not retried
  expect_equal(broken$requests, 2)

  expect_true(gamgpu:::module_request("gg_test_ok", "k"))
  expect_error(gamgpu:::module_request("gg_test_ok", "no_such_function"),
               class = "gamgpu_device_error")
  m <- gpu_modules()
  expect_true(m$ok[m$name == "gg_test_ok"])
  expect_equal(m$compiles[m$name == "gg_test_ok"], 1)
})

test_that("without a device, asking for a module says why", {
  skip_if(device_usable(), "a GPU is usable here")
  expect_error(gamgpu:::module_request("gram", "gram_partial"),
               class = "gamgpu_device_unavailable")
  expect_identical(nrow(gpu_modules()), 0L)
})
