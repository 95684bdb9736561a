# mgcv's betar(): beta regression, its log precision estimated.  Against mgcv::bam() (method
# fREML) on the same call, and the device against the CPU engine.
# Tolerances: expect_efam_parity() (helper-efam.R).

test_that("betar(): theta estimated as bam() estimates it", {
  d <- efam_sim("betar")
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::betar(), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::betar(), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_efam_methods(g, b, d)      # the methods of gam objects accept the fit
})

test_that("betar(): other links and settings, as bam()", {
  d <- efam_sim("betar", seed = 5)
  for (lk in c("probit", "cloglog")) {
    b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = do.call(mgcv::betar, list(link = lk)), data = d)
    g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = do.call(mgcv::betar, list(link = lk)), data = d, device = "off")
    expect_efam_parity(g, b)
  }
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::betar(link = "cauchit"), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::betar(link = "cauchit"), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("betar(theta = ) keeps theta fixed, as bam()", {
  d <- efam_sim("betar", seed = 7)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::betar(theta = 6), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::betar(theta = 6), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_equal(g$family$getTheta(), b$family$getTheta())
})

test_that("betar() on R's attitude, as bam()", {
  d <- transform(attitude, rating = rating / 100)
  b <- mgcv::bam(rating ~ s(complaints) + s(learning), family = mgcv::betar(), data = d)
  g <- gam_gpu(rating ~ s(complaints) + s(learning), family = mgcv::betar(), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("betar(): a response outside the family is a classed error", {
  d <- efam_sim("betar", n = 300)
  d$y[3] <- 1.5
  expect_error(gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::betar(), data = d, device = "off"),
               class = "gamgpu_error")
})

test_that("betar() on the device equals the CPU and launches the family's kernels", {
  expect_efam_device("betar", function() mgcv::betar())
})
