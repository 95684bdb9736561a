# method = "GACV.Cp" for additive models (R/gcv.R): gam()'s generalized
# approximate cross validation score, GACV = rss/n + 2 gamma tau rss / (n (n
# - gamma tau)) (gam.fit3's, whose Pearson statistic is rss for gaussian
# data), or UBRE with a known scale, minimised by Newton's method with its
# exact gradient and Hessian.  The score is gam()'s function to rounding
# (compared at gam()'s smoothing parameters).  The optimizer is gam()'s,
# newton() (mgcv_newton()) from initial.sp(): it stops where gam() stops.
# With gamma != 1, gam()'s GACV gradient leaves gamma out of its 2 P trA1 /
# delta^2 term, and its Newton fails ("step failed"); ours minimises the
# score itself.

gacv_data <- function(n = 3000) {
  set.seed(2)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$w <- runif(n, 0.5, 2)
  d
}

test_that("the GACV score is gam()'s function: equal at gam()'s smoothing parameters", {
  d <- gacv_data()
  for (f in list(y ~ s(x0) + s(x1) + s(x2), y ~ te(x0, x1) + s(x2))) {
    b <- mgcv::gam(f, data = d, method = "GACV.Cp")
    g <- gam_gpu(f, data = d, method = "GACV.Cp", sp = b$sp, device = "off")
    expect_equal(g$gcv.ubre[[1]], b$gcv.ubre[[1]], tolerance = 1e-12)
    expect_equal(unname(coef(g)), unname(coef(b)), tolerance = 1e-8)
  }
})

test_that("GACV.Cp stops where gam()'s Newton iteration stops", {
  d <- gacv_data()
  cases <- list(basic = list(f = y ~ s(x0) + s(x1) + s(x2, bs = "cr") + s(x3)),
                weights = list(f = y ~ s(x0) + s(x1) + s(x2), extra = list(weights = quote(w))),
                te = list(f = y ~ te(x0, x1) + s(x2)))
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    args <- c(list(cs$f, data = quote(d), method = "GACV.Cp"), cs$extra)
    b <- do.call(mgcv::gam, args)
    g <- do.call(gam_gpu, c(args, list(device = "off")))
    expect_identical(g$method, "GACV", label = nm)
    expect_identical(names(g$gcv.ubre), "GACV.Cp", label = nm)
    expect_identical(g$outer.info$conv, b$outer.info$conv, label = nm)
    expect_identical(g$outer.info$iter, b$outer.info$iter, label = nm)
    # (measured: scores 1e-13 apart, fits 3e-13 of the range, log sp 7e-12)
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-11, label = nm)
    r <- diff(range(b$linear.predictors))
    expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, 1e-10, label = nm)
    expect_lt(max(abs(log(g$sp / b$sp))), 1e-9, label = nm)
    expect_lt(max(abs(g$edf - b$edf)), 1e-9, label = nm)
    expect_equal(g$sig2, b$sig2, tolerance = 1e-10, label = nm)
  }
})

test_that("GACV.Cp with a known scale is UBRE; with gamma != 1 its score is below gam()'s", {
  d <- gacv_data()
  f <- y ~ s(x0) + s(x1) + s(x2)
  g <- gam_gpu(f, data = d, method = "GACV.Cp", scale = 4, device = "off")
  u <- gam_gpu(f, data = d, method = "GCV.Cp", scale = 4, device = "off")
  expect_identical(g$method, "UBRE")
  # the same UBRE score, minimised by gam()'s two optimizers for an additive
  # model -- GACV.Cp's outer Newton iteration and GCV.Cp's magic() -- which
  # stop 2.4e-7 apart in score: each where gam()'s stops
  expect_lt(abs(g$gcv.ubre[[1]] / u$gcv.ubre[[1]] - 1), 1e-6)
  expect_identical(u$optimizer, "magic")
  expect_false(is.null(g$outer.info))
  bg <- mgcv::gam(f, data = d, method = "GACV.Cp", scale = 4)
  expect_lt(abs(g$gcv.ubre[[1]] / bg$gcv.ubre[[1]] - 1), 1e-11)
  expect_lt(rel_err(coef(g), coef(bg)), 1e-9)
  bu <- mgcv::gam(f, data = d, method = "GCV.Cp", scale = 4)
  expect_lt(rel_err(coef(u), coef(bu)), 1e-9)
  expect_lt(abs(u$gcv.ubre[[1]] / bu$gcv.ubre[[1]] - 1), 1e-11)
  b <- suppressWarnings(mgcv::gam(f, data = d, method = "GACV.Cp", gamma = 1.4))
  g <- gam_gpu(f, data = d, method = "GACV.Cp", gamma = 1.4, device = "off")
  expect_identical(b$outer.info$conv, "step failed")
  expect_identical(g$outer.info$conv, "full convergence")
  expect_lt(g$gcv.ubre[[1]], b$gcv.ubre[[1]])
  # and gam()'s own score at our smoothing parameters is ours
  b2 <- mgcv::gam(f, data = d, method = "GACV.Cp", gamma = 1.4, sp = g$sp)
  expect_equal(g$gcv.ubre[[1]], b2$gcv.ubre[[1]], tolerance = 1e-12)
})

test_that("GACV.Cp for negbin(theta) is UBRE at scale 1, and for nb() REML, as gam()'s", {
  d <- gacv_data(300)
  d$yc <- rpois(nrow(d), 3)
  b <- mgcv::gam(yc ~ s(x0), family = mgcv::negbin(3), data = d, method = "GACV.Cp")
  g <- gam_gpu(yc ~ s(x0), family = mgcv::negbin(3), data = d, method = "GACV.Cp",
               device = "off")
  expect_identical(g$method, "UBRE")
  expect_identical(g$method, b$method)
  # (y is noise: s(x0)'s smoothing parameter runs to a flat end, where
  # both stop at the same point, log sp 12.75: newton()'s tests scaled by
  # gam.fit3's Fletcher scale estimate, as gam()'s)
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-12)
  expect_lt(abs(log(g$sp[[1]] / b$sp[[1]])), 1e-8)
  expect_gt(log(g$sp[[1]]), 12)
  g <- gam_gpu(yc ~ s(x0), family = mgcv::nb(), data = d, method = "GACV.Cp", device = "off")
  expect_identical(g$method, "REML")
  expect_identical(names(g$gcv.ubre), "GACV.Cp")
})
