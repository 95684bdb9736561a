# mgcv's ocat(R): ordered categories, the cut points estimated.  Against mgcv::bam() (method
# fREML) on the same call, and the device against the CPU engine.
# Tolerances: expect_efam_parity() (helper-efam.R).

test_that("ocat(): theta estimated as bam() estimates it", {
  d <- efam_sim("ocat")
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ocat(R = 4), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ocat(R = 4), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_efam_methods(g, b, d)      # the methods of gam objects accept the fit
})

test_that("ocat(): other links and settings, as bam()", {
  d <- efam_sim("ocat", seed = 5)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ocat(R = 4), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ocat(R = 4), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("ocat(theta = ) keeps theta fixed, as bam()", {
  d <- efam_sim("ocat", seed = 7)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ocat(theta = c(-1, 0, 1.5)), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ocat(theta = c(-1, 0, 1.5)), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_equal(g$family$getTheta(), b$family$getTheta())
})

test_that("ocat() on R's warpbreaks, as bam()", {
  d <- transform(warpbreaks, y = as.numeric(tension))
  b <- mgcv::bam(y ~ s(breaks) + wool, family = mgcv::ocat(R = 4), data = d)
  g <- gam_gpu(y ~ s(breaks) + wool, family = mgcv::ocat(R = 4), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("ocat(): a response outside the family is a classed error", {
  d <- efam_sim("ocat", n = 300)
  d$y[3] <- 2.5
  expect_error(gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ocat(R = 4), data = d, device = "off"),
               class = "gamgpu_error")
})

test_that("ocat() on the device equals the CPU and launches the family's kernels", {
  expect_efam_device("ocat", function() mgcv::ocat(R = 4))
})
