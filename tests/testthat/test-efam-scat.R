# mgcv's scat(): the scaled t family, its degrees of freedom and scale
# estimated (two thetas).  Against mgcv::bam() (method
# fREML) on the same call, and the device against the CPU engine.
# Tolerances: expect_efam_parity() (helper-efam.R).

test_that("scat(): theta estimated as bam() estimates it", {
  d <- efam_sim("scat")
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::scat(), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::scat(), data = d, device = "off")
  # the likelihood is flat in the degrees of freedom: estimate.theta()
  # stops where |gradient| <= 1e-7 |nll|, and sums rounded differently
  # (R's colSums, the engine's blocks, another machine's libm) stop it at
  # points up to ~1e-7 apart (measured: theta 5.4e-8 here, 9.1e-8 on the
  # GPU machine for scat(min.df = 5); EDF 2.2e-8, deviance 2e-8 relative)
  expect_efam_parity(g, b, eta_tol = 1e-8, theta_tol = 1e-6, edf_tol = 1e-7)
  expect_efam_methods(g, b, d)      # the methods of gam objects accept the fit
})

test_that("scat(): other links and settings, as bam()", {
  d <- efam_sim("scat", seed = 5)
  d$y <- d$y - min(d$y) + 1          # the log and inverse links need mu > 0
  for (lk in c("log")) {
    b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = do.call(mgcv::scat, list(link = lk)), data = d)
    g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = do.call(mgcv::scat, list(link = lk)), data = d, device = "off")
    expect_efam_parity(g, b, eta_tol = 1e-8, theta_tol = 1e-6, edf_tol = 1e-7)  # flat df: see above
  }
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::scat(min.df = 5), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::scat(min.df = 5), data = d, device = "off")
  expect_efam_parity(g, b, eta_tol = 1e-8, theta_tol = 1e-6, edf_tol = 1e-7)  # flat df: see above
})

test_that("scat(theta = ) keeps theta fixed, as bam()", {
  d <- efam_sim("scat", seed = 7)
  b <- mgcv::bam(y ~ s(x0) + s(x1) + s(x2), family = mgcv::scat(theta = c(4, 0.7)), data = d)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::scat(theta = c(4, 0.7)), data = d, device = "off")
  expect_efam_parity(g, b)
  expect_equal(g$family$getTheta(), b$family$getTheta())
})

test_that("scat() on R's faithful, as bam()", {
  d <- faithful
  b <- mgcv::bam(eruptions ~ s(waiting), family = mgcv::scat(), data = d)
  g <- gam_gpu(eruptions ~ s(waiting), family = mgcv::scat(), data = d, device = "off")
  expect_efam_parity(g, b, eta_tol = 1e-8, theta_tol = 1e-6, edf_tol = 1e-7)  # flat df: see above
})

test_that("scat(): a response outside the family is a classed error", {
  d <- efam_sim("scat", n = 300)
  d$y[3] <- NA; d$y[3] <- Inf
  expect_error(gam_gpu(y ~ s(x0) + s(x1) + s(x2), family = mgcv::scat(), data = d, device = "off"),
               class = "gamgpu_error")
})

test_that("scat() on the device equals the CPU and launches the family's kernels", {
  # flat in the degrees of freedom, as the first test says
  expect_efam_device("scat", function() mgcv::scat(), eta_tol = 1e-8, theta_tol = 1e-6, edf_tol = 1e-7)
})
