test_that("'auto' without a device runs on the CPU and records why", {
  skip_if(device_usable(), "a GPU is usable here: 'auto' runs on it (tested in test-gram-product.R)")
  gpu_telemetry(reset = TRUE)
  g <- gpu_gram(cbind(1, 1:10), device = "auto")
  expect_identical(g$device, "cpu")
  why <- gpu_info("auto")$reason
  expect_identical(g$fallback, why)
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "gram"], 1)
  expect_equal(t$launches[t$backend == "gram"], 0)
  r <- attr(t, "fallback_reasons")
  expect_identical(r$reason, why)
  expect_equal(r$count, 1)
  gpu_gram(cbind(1, 1:10), device = "auto")
  r <- attr(gpu_telemetry(), "fallback_reasons")
  expect_equal(r$count, 2)   # same reason counted, not repeated
  expect_output(print(gpu_telemetry()), "CPU fallbacks")
})

test_that("fallback reasons are kept per backend, newest distinct reasons last", {
  gpu_telemetry(reset = TRUE)
  for (i in 1:20) gamgpu:::record_fallback("test-backend", paste("reason", i))
  gamgpu:::record_fallback("other", "why not")
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "test-backend"], 20)
  r <- attr(t, "fallback_reasons")
  mine <- r[r$backend == "test-backend", ]
  expect_identical(nrow(mine), 16L)
  expect_identical(tail(mine$reason, 1), "reason 20")
  expect_identical(r$reason[r$backend == "other"], "why not")
  gpu_telemetry(reset = TRUE)
  expect_identical(nrow(gpu_telemetry()), 0L)
})
