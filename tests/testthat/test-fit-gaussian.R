# Gaussian identity fits against mgcv: bam(method = "fREML") for "fREML",
# gam(method = "REML") for "REML".
dat <- sim_data()

test_that("tp, cr and cc smooths match bam(fREML)", {
  f <- y ~ s(x0) + s(x1, bs = "cr") + s(x2) + s(t, bs = "cc")
  b <- mgcv::bam(f, data = dat, method = "fREML")
  g <- gam_gpu(f, data = dat)
  expect_agrees_with_mgcv(g, b)
  expect_equal(unname(g$sp), unname(b$sp), tolerance = 1e-4)
  expect_equal(g$sig2, b$sig2, tolerance = 1e-6)
  expect_equal(g$Vp, b$Vp, tolerance = 1e-5)
  expect_equal(g$aic, b$aic, tolerance = 1e-8)
  expect_true(g$scale.estimated)
  expect_equal(g$iter, 1L)
})

test_that("te(), a factor by= smooth, a random effect and an offset match bam", {
  f <- y ~ fac + s(x2, by = fac) + te(x0, x3) + s(re, bs = "re") + offset(0.1 * x1)
  b <- mgcv::bam(f, data = dat, method = "fREML")
  g <- gam_gpu(f, data = dat)
  expect_agrees_with_mgcv(g, b)
})

test_that("id= linked smooths, select = TRUE, t2/ti and ps/bs/cs/ts bases match bam", {
  f1 <- y ~ s(x0, id = 1) + s(x1, id = 1) + s(x2, bs = "ps") + s(x3, bs = "bs")
  expect_agrees_with_mgcv(gam_gpu(f1, data = dat), mgcv::bam(f1, data = dat))
  f2 <- y ~ s(x0) + s(x1) + s(x2) + s(x3)
  g <- gam_gpu(f2, data = dat, select = TRUE)
  b <- mgcv::bam(f2, data = dat, select = TRUE)
  expect_agrees_with_mgcv(g, b)
  expect_length(g$sp, 8)
  f3 <- y ~ t2(x0, x1) + ti(x2) + ti(x3) + ti(x2, x3) + s(t, bs = "cs") + s(x1, bs = "ts")
  expect_agrees_with_mgcv(gam_gpu(f3, data = dat), mgcv::bam(f3, data = dat))
})

test_that("method = 'REML' matches gam(method = 'REML')", {
  f <- y ~ s(x0) + s(x1) + s(x2, bs = "cr") + fac
  b <- mgcv::gam(f, data = dat, method = "REML")
  g <- gam_gpu(f, data = dat, method = "REML")
  # gam()'s own outer Newton stops at its tolerance (measured: linear
  # predictors 2.5e-7 apart, EDF 1.7e-5) at a score 5.6e-12 above ours.
  # The scores are the same function since REML fits set up gam()'s bases
  # (R/setup.R); on bam()'s sweep-and-drop bases a cr smooth's score was a
  # constant away
  expect_agrees_with_mgcv(g, b, eta_tol = 1e-6, edf_tol = 1e-4)
  # prior weights: gam()'s score has the log likelihood's sum(log w) / 2
  dat$w <- stats::runif(nrow(dat), 0.5, 2)
  expect_agrees_with_mgcv(gam_gpu(f, data = dat, method = "REML", weights = w),
                          mgcv::gam(f, data = dat, method = "REML", weights = w),
                          eta_tol = 1e-6, edf_tol = 1e-4)
  f1 <- y ~ s(x0) + s(x1) + fac
  expect_equal(gam_gpu(f1, data = dat, method = "REML")$gcv.ubre[[1]],
               mgcv::gam(f1, data = dat, method = "REML")$gcv.ubre[[1]],
               tolerance = 1e-9)
  f2 <- y ~ te(x0, x1) + s(x2)
  # a te(): gam() stops its Newton earlier (measured 2.0e-6 of the range,
  # EDF 1.6e-4, its score 4.2e-10 above ours)
  expect_agrees_with_mgcv(gam_gpu(f2, data = dat, method = "REML"),
                          mgcv::gam(f2, data = dat, method = "REML"),
                          eta_tol = 1e-5, edf_tol = 1e-3)
  expect_identical(g$method, "REML")
})

test_that("prior weights, gamma and knots are honoured as in bam", {
  w <- runif(nrow(dat), 0.5, 2)
  b <- mgcv::bam(y ~ s(x0) + s(x2), data = dat, weights = w, gamma = 1.4)
  g <- gam_gpu(y ~ s(x0) + s(x2), data = dat, weights = w, gamma = 1.4)
  expect_agrees_with_mgcv(g, b)
  kn <- list(t = c(0, 1))
  b <- mgcv::bam(y ~ s(t, bs = "cc", k = 8), data = dat, knots = kn)
  g <- gam_gpu(y ~ s(t, bs = "cc", k = 8), data = dat, knots = kn)
  expect_agrees_with_mgcv(g, b)
})

test_that("user smoothing parameters are fixed as bam fixes them", {
  f <- y ~ s(x0) + s(x1) + s(x2)
  b <- mgcv::bam(f, data = dat, sp = c(1, -1, 10))
  g <- gam_gpu(f, data = dat, sp = c(1, -1, 10))
  expect_agrees_with_mgcv(g, b)
  expect_equal(unname(g$full.sp[c(1, 3)]), c(1, 10))
  b <- mgcv::bam(f, data = dat, sp = c(1, 2, 10))
  g <- gam_gpu(f, data = dat, sp = c(1, 2, 10))
  expect_agrees_with_mgcv(g, b)
})

test_that("a model without smooths is weighted least squares", {
  g <- gam_gpu(y ~ x0 + x1 + fac, data = dat)
  l <- stats::lm(y ~ x0 + x1 + fac, data = dat)
  expect_equal(unname(coef(g)), unname(coef(l)), tolerance = 1e-10)
  expect_equal(unname(g$Vp), unname(vcov(l)), tolerance = 1e-8)
})

test_that("trace prints one line per iteration", {
  out <- capture.output(gam_gpu(yb ~ s(x0) + s(x1), family = binomial, data = dat,
                                control = gam_gpu_control(trace = TRUE)))
  lines <- grep("^iter", out, value = TRUE)
  expect_gt(length(lines), 2)
  expect_match(lines[1], "REML .* deviance .* edf .*s$")
})
