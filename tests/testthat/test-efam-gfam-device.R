# gfam() on the device: the engine's rows (rows.cu: the start, the IRLS
# rows and the theta sums with each row's member and link) and gam()'s
# REML outer rows (outer.cu) against the CPU engine's, to 1e-9.

test_that("gfam()'s fREML fit on the device is the CPU engine's", {
  skip_if_no_gfam()
  skip_if_no_device()
  d <- gfam_sim(c("Gamma", "nb", "binomial", "gaussian"), n = 4000, seed = 13)
  fl <- function() mgcv::gfam(list(Gamma(link = "log"), mgcv::nb, binomial, gaussian))
  fml <- cbind(y, fi) ~ s(x0) + s(x1)
  gc <- gam_gpu(fml, family = fl(), data = d, device = "off")
  gd <- expect_device_fit(gam_gpu(fml, family = fl(), data = d, device = "required"))
  expect_true(gd$converged)
  expect_device_parity(gd, gc)
  expect_lt(abs(gd$gcv.ubre[[1]] / gc$gcv.ubre[[1]] - 1), 1e-9)
})

test_that("gfam()'s REML outer rows on the device are the CPU's", {
  skip_if_no_gfam()
  skip_if_no_device()
  d <- gfam_sim(c("gaussian", "poisson", "binomial"), n = 4000, seed = 14)
  fl <- function() mgcv::gfam(list(gaussian, poisson, binomial))
  fml <- cbind(y, fi) ~ s(x0) + s(x1)
  gc <- gam_gpu(fml, family = fl(), data = d, method = "REML", device = "off")
  gpu_telemetry(reset = TRUE)
  gd <- gam_gpu(fml, family = fl(), data = d, method = "REML", device = "required")
  t <- gpu_telemetry()
  expect_identical(gd$device$outer_rows, "cuda:0")
  expect_gt(sum(t$launches[t$backend == "outer"]), 10)
  expect_equal(sum(t$fallbacks), 0)
  expect_device_parity(gd, gc)
  expect_lt(abs(gd$gcv.ubre[[1]] / gc$gcv.ubre[[1]] - 1), 1e-9)
  expect_device_arena_empty()
})
