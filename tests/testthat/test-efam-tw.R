# mgcv's tw(): the Tweedie family with its power p and the scale estimated
# (estimate.theta() with the log scale as a second parameter; the REML fit
# sees the scale as known, as bgam.fit).  Against mgcv::bam() (method
# fREML) on the same call, and the device against the CPU engine.
# Tolerances: expect_efam_parity() (helper-efam.R).

test_that("tw(): theta estimated as bam() estimates it", {
  d <- efam_sim("tw")
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d, device = "off")
  expect_efam_parity(g, b)
  # the methods of gam objects accept the fit
  expect_s3_class(summary(g), "summary.gam")
  expect_equal(predict(g, d[1:10, ], type = "response"),
               predict(b, d[1:10, ], type = "response"), tolerance = 1e-6)
  expect_equal(predict(g, d[1:10, ]), predict(b, d[1:10, ]), tolerance = 1e-6)
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  expect_silent(plot(g, pages = 1))
  expect_output(mgcv::gam.check(g))
  expect_output(print(g), "Family", fixed = TRUE)
})

test_that("tw(): other links and settings, as bam()", {
  d <- efam_sim("tw", seed = 5)
  for (lk in c("sqrt", "identity")) {
    b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(link = lk), data = d)
    g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(link = lk), data = d, device = "off")
    expect_efam_parity(g, b)
  }
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(a = 1.2, b = 1.8), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(a = 1.2, b = 1.8), data = d, device = "off")
  expect_efam_parity(g, b)
})

test_that("tw(theta = ) keeps theta fixed, as bam()", {
  d <- efam_sim("tw", seed = 7)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(theta = 1.4), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(theta = 1.4), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_equal(g$family$getTheta(), b$family$getTheta())
})

test_that("tw() on R's airquality, as bam()", {
  d <- stats::na.omit(airquality)
  b <- mgcv::bam(Ozone ~ s(Temp) + s(Wind), family = mgcv::tw(), data = d)
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
  skip_if_no_device()
  d <- efam_sim("tw", n = 6000, seed = 9)
  gc <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d, device = "off")
  gpu_telemetry(reset = TRUE)
  gd <- expect_device_fit(gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d,
                                  device = "required"))
  expect_device_parity(gd, gc)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::tw(), data = d)
  expect_efam_parity(gd, b)
})
