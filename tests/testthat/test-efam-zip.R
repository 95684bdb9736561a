# mgcv's ziP(): the zero-inflated Poisson family, the two parameters of
# its zero probability estimated.  Against mgcv::bam() (method
# fREML) on the same call, and the device against the CPU engine.
# Tolerances: expect_efam_parity() (helper-efam.R).

test_that("ziP(): theta estimated as bam() estimates it", {
  d <- efam_sim("ziP")
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ziP(), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ziP(), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_efam_methods(g, b, d)      # the methods of gam objects accept the fit
})

test_that("ziP(): other links and settings, as bam()", {
  d <- efam_sim("ziP", seed = 5)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ziP(b = 0.3), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ziP(b = 0.3), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("ziP(theta = ) keeps theta fixed, as bam()", {
  d <- efam_sim("ziP", seed = 7)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ziP(theta = c(-0.5, 0.2)), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ziP(theta = c(-0.5, 0.2)), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_equal(g$family$getTheta(), b$family$getTheta())
})

test_that("ziP() on R's discoveries, as bam()", {
  d <- data.frame(y = as.numeric(discoveries), year = 1860:1959)
  b <- mgcv::bam(y ~ s(year), family = mgcv::ziP(), data = d)
  g <- gam_gpu(y ~ s(year), family = mgcv::ziP(), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("ziP(): a response outside the family is a classed error", {
  d <- efam_sim("ziP", n = 300)
  d$y[3] <- 1.5
  expect_error(gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::ziP(), data = d, device = "off"),
               class = "gamgpu_error")
})

test_that("ziP() on the device equals the CPU and launches the family's kernels", {
  expect_efam_device("ziP", function() mgcv::ziP())
})
