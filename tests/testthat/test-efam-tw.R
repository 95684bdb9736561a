# mgcv's tw(): the Tweedie family with its power p and the scale estimated
# (estimate.theta() with the log scale as a second parameter; the REML fit
# sees the scale as known, as bgam.fit).  Against mgcv::bam() (method
# fREML) on the same call, and the device against the CPU engine.
# Tolerances: expect_efam_parity() (helper-efam.R).

test_that("tw(): theta estimated as bam() estimates it", {
  d <- efam_sim("tw")
  b <- with_mgcv_bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_efam_methods(g, b, d)      # the methods of gam objects accept the fit
})

test_that("tw(): other links and settings, as bam()", {
  d <- efam_sim("tw", seed = 5)
  for (lk in c("sqrt", "inverse")) {
    b <- with_mgcv_bam(y ~ s(x0) + s(x1) + s(x2), family = do.call(mgcv::tw, list(link = lk)), data = d)
    g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = do.call(mgcv::tw, list(link = lk)), data = d, device = "off")
    expect_efam_parity(g, b)
  }
  b <- with_mgcv_bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(a = 1.2, b = 1.8), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(a = 1.2, b = 1.8), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("tw(theta = ) keeps p fixed and estimates the scale, saying how bam() differs", {
  # bam() in mgcv 1.8-41 (bgam.fit) takes exp(theta[n.theta + 1]) as the
  # scale, which with p fixed (n.theta 0) is exp(theta), the working p:
  # not an estimate.  gamgpu estimates the scale as mgcv's estimate.theta()
  # defines it (ML with p fixed), and says that the fits differ.
  d <- efam_sim("tw", seed = 7)
  fam <- mgcv::tw(theta = 1.4)
  b <- with_mgcv_bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(theta = 1.4), data = d)
  expect_equal(b$sig2, exp(fam$getTheta()))                  # bam's scale: exp(theta)
  expect_message(g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(theta = 1.4),
                              data = d, device = "off"),
                 class = "gamgpu_mgcv_difference")
  expect_true(g$converged)
  expect_equal(g$family$getTheta(TRUE), 1.4)
  # the scale is estimate.theta()'s at the fit's mu, to its tolerance
  est <- with_mgcv(mgcv:::estimate.theta(fam$getTheta(), fam, g$y, g$fitted.values,
                                         scale = -1, wt = g$prior.weights))
  expect_equal(est[[1]], fam$getTheta())
  expect_lt(abs(log(g$sig2) - est[[2]]), 1e-6)
  # with the scale given, p fixed too: bam()'s fit, no message
  b <- with_mgcv_bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(theta = 1.4), data = d,
                    scale = 1.3)
  expect_silent(g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(theta = 1.4),
                             data = d, device = "off", scale = 1.3))
  expect_efam_parity(g, b)
  expect_equal(g$sig2, 1.3)
})

test_that("tw() on R's airquality, as bam()", {
  d <- stats::na.omit(airquality)
  b <- with_mgcv_bam(Ozone ~ s(Temp) + s(Wind), family = mgcv::tw(), data = d)
  g <- gam_gpu(Ozone ~ s(Temp) + s(Wind), family = mgcv::tw(), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("tw(): a response outside the family is a classed error", {
  d <- efam_sim("tw", n = 300)
  d$y[3] <- -1
  expect_error(gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d, device = "off"),
               class = "gamgpu_error")
})

test_that("tw() on the device equals the CPU and launches the family's kernels", {
  expect_efam_device("tw", function() mgcv::tw())
})
