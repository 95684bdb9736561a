# method = "ML" for additive models: the marginal likelihood of
# gam(method = "ML") (gam.fit3's scoreType "ML": log|B'HB| over the range
# space of the penalties instead of log|H|, and no Mp log(2 pi phi) term;
# engine_reml.c), on gam()'s bases (R/setup.R: ML is not invariant to
# bam()'s sweep-and-drop constraints, which put its optimum 2e-4 of the
# range away), against mgcv::gam(method = "ML").  Where gam()'s Newton stops
# along a flat direction (a smoothing parameter on its way to infinity)
# ours goes further: the score is then lower than gam()'s, by up to 5e-7
# relative here, and the fits differ by up to 5e-6 of the range.

ml_agrees <- function(g, b, label, eta_tol = 1e-8, score_tol = 1e-10, sp_tol = 1e-5,
                      edf_tol = 1e-6) {
  expect_true(isTRUE(g$converged), label = label)
  expect_identical(g$outer.info$conv, "full convergence", label = label)
  expect_identical(names(g$gcv.ubre), "ML", label = label)
  expect_identical(g$method, b$method, label = label)
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, eta_tol, label = label)
  rel <- (g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]])
  expect_lt(rel, score_tol, label = label)                 # never worse than gam()'s
  expect_gt(rel, -max(score_tol, 1e-6), label = label)
  expect_lt(abs(sum(g$edf) - sum(b$edf)), edf_tol, label = label)
  ok <- abs(log(b$sp)) < 8                                  # not driven to a null space
  if (any(ok)) expect_lt(max(abs(log(g$sp[ok]) - log(b$sp[ok]))), sp_tol, label = label)
}

test_that("ML is gam()'s: simulated data, weights, known scale", {
  dat <- sim_data()
  f <- y ~ s(x0) + te(x1, x2) + fac
  ml_agrees(gam_gpu(f, data = dat, method = "ML"), mgcv::gam(f, data = dat, method = "ML"),
            "te + factor")
  dat$w <- runif(nrow(dat), 0.5, 2)
  ml_agrees(gam_gpu(f, data = dat, method = "ML", weights = w),
            mgcv::gam(f, data = dat, method = "ML", weights = w), "weights")
  # (known scale: gam()'s Newton stops 1.4e-7 of the range short)
  ml_agrees(gam_gpu(f, data = dat, method = "ML", scale = 2),
            mgcv::gam(f, data = dat, method = "ML", scale = 2), "scale 2",
            eta_tol = 1e-6, score_tol = 1e-9, sp_tol = 1e-3, edf_tol = 1e-4)
  # ML smooths more than REML
  expect_lt(sum(gam_gpu(f, data = dat, method = "ML")$edf),
            sum(gam_gpu(f, data = dat, method = "REML")$edf))
})

test_that("ML where gam() stops along a flat direction: ours no worse", {
  dat <- sim_data()
  f <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
  ml_agrees(gam_gpu(f, data = dat, method = "ML"), mgcv::gam(f, data = dat, method = "ML"),
            "four cr", eta_tol = 1e-5, score_tol = 1e-10, sp_tol = 1e-3, edf_tol = 0.01)
  aq <- stats::na.omit(airquality)
  f <- Ozone ~ s(Solar.R) + s(Wind) + s(Temp)
  ml_agrees(gam_gpu(f, data = aq, method = "ML"), mgcv::gam(f, data = aq, method = "ML"),
            "airquality", eta_tol = 1e-5, score_tol = 1e-10, sp_tol = 1e-3, edf_tol = 0.01)
})

test_that("ML is refused on rank-deficient additive models", {
  dat <- sim_data()
  expect_error(gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + fac + s(x1, by = fac), data = dat,
                       method = "ML"),
               class = "gamgpu_unsupported_method")
})

test_that("ML on the device is the CPU engine's", {
  skip_if_no_device()
  dat <- sim_data()
  f <- y ~ s(x0) + te(x1, x2) + fac
  cpu <- gam_gpu(f, data = dat, method = "ML", device = "off")
  dev <- expect_device_fit(gam_gpu(f, data = dat, method = "ML", device = "required"))
  expect_lt(rel_err(coef(dev), coef(cpu)), 1e-9)
  expect_lt(rel_err(fitted(dev), fitted(cpu)), 1e-9)
  expect_lt(abs(dev$gcv.ubre - cpu$gcv.ubre), 1e-9 * abs(cpu$gcv.ubre))
})
