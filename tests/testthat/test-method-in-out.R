# gam()'s in.out: where the first REML optimization starts.  The optimum
# is the same, so the fit equals bam()'s (which has no in.out); a start at
# the optimum takes fewer Newton steps (the argument is read).

in_out_data <- function(n = 800, seed = 21) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$yp <- rpois(n, exp(d$f / 6))
  d
}

test_that("in.out starts the REML optimization and leaves the optimum", {
  d <- in_out_data()
  b <- mgcv::bam(y ~ s(x0) + s(x1, bs = "cr") + s(x2), data = d)
  g0 <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + s(x2), data = d, device = "off")
  g <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + s(x2), data = d, device = "off",
               in.out = list(sp = b$sp, scale = b$sig2))
  # started at the optimum, Newton either converges at once or finds no
  # step that lowers the score (rounding: OpenBLAS); the fit is the same
  expect_true(g$mgcv.conv$message %in% c("full convergence", "step failed"))
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, 1e-8)
  expect_lt(abs(g$gcv.ubre - b$gcv.ubre) / abs(b$gcv.ubre), 1e-10)
  # from the optimum, Newton has (almost) nothing to do
  expect_lt(g$mgcv.conv$iter, g0$mgcv.conv$iter)
  # a poor start still finds the same optimum
  g2 <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + s(x2), data = d, device = "off",
                in.out = list(sp = c(1e4, 1e-3, 10), scale = 50))
  expect_lt(max(abs(g2$linear.predictors - b$linear.predictors)) / r, 1e-7)
  expect_lt(abs(g2$gcv.ubre - b$gcv.ubre) / abs(b$gcv.ubre), 1e-10)
})

test_that("in.out with fixed smoothing parameters and a known-scale family", {
  d <- in_out_data(seed = 22)
  b <- mgcv::bam(yp ~ s(x0) + s(x1) + s(x2), data = d, family = poisson, sp = c(-1, 0.5, -1))
  g <- gam_gpu(yp ~ s(x0) + s(x1) + s(x2), data = d, family = poisson, sp = c(-1, 0.5, -1),
               in.out = list(sp = c(2, 0.5, 3), scale = 1), device = "off")
  expect_true(g$converged)
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, 1e-7)
  expect_equal(unname(g$full.sp[2]), 0.5)
})

test_that("bad in.out is a classed error", {
  d <- in_out_data(300)
  f <- y ~ s(x0) + s(x1)
  for (bad in list(1, list(sp = c(1, 1)), list(sp = 1, scale = 1),
                   list(sp = c(1, -1), scale = 1), list(sp = c(1, 1), scale = NA),
                   list(sp = c(1, 1), scale = 1, foo = 2)))
    expect_error(gam_gpu(f, data = d, in.out = bad, device = "off"), class = "gamgpu_bad_input")
})

test_that("in.out starts gam()'s outer iteration too, as gam() takes it", {
  # (?gam.models-like: poisson REML and Gamma ML from a given start; the
  # fit is gam()'s with the same in.out, and the start is read)
  d <- in_out_data(seed = 23)
  d$yg <- rgamma(nrow(d), shape = 3, scale = exp(d$f / 8) / 3)
  ctl_b <- mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9))
  ctl_g <- gam_gpu_control(epsilon = 1e-10, newton.tol = 1e-9)
  for (cs in list(list(yp ~ s(x0) + s(x1) + s(x2), poisson(), "REML", list(sp = c(1, 2, 3), scale = 1)),
                  list(yg ~ s(x0) + s(x1), Gamma(link = "log"), "ML", list(sp = c(5, 0.2), scale = 0.4)))) {
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = cs[[3]], in.out = cs[[4]],
                   control = ctl_b)
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = cs[[3]], in.out = cs[[4]],
                 control = ctl_g, device = "off")
    g0 <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = cs[[3]], control = ctl_g,
                  device = "off")
    expect_true(g$converged)
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)), 1e-6,
              label = cs[[3]])
    expect_lt(g$gcv.ubre - b$gcv.ubre, 1e-9 * abs(b$gcv.ubre), label = cs[[3]])
    # (another start, another path to the same optimum)
    expect_false(identical(g$outer.info$iter, g0$outer.info$iter) &&
                   identical(g$outer.info$score.hist, g0$outer.info$score.hist), label = cs[[3]])
  }
})

test_that("in.out starts an extended family's outer iteration, theta from the family's", {
  # (nb(): theta and the smoothing parameters; tw(): p, the smoothing
  # parameters and the log scale, which in.out's scale starts)
  d <- in_out_data(seed = 29)
  d$yn <- rnbinom(nrow(d), mu = exp(d$f / 6), size = 2)
  d$yt <- mgcv::rTweedie(exp(d$f / 6), p = 1.5, phi = 1.2)
  ctl_b <- mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9))
  ctl_g <- gam_gpu_control(epsilon = 1e-10, newton.tol = 1e-9)
  for (cs in list(list(yn ~ s(x0) + s(x1), mgcv::nb, list(sp = c(3, 0.5), scale = 1)),
                  list(yt ~ s(x0) + s(x1), mgcv::tw, list(sp = c(0.2, 4), scale = 2)))) {
    lab <- cs[[2]]()$family
    b <- with_mgcv(mgcv::gam(cs[[1]], family = cs[[2]](), data = d, method = "REML",
                             in.out = cs[[3]], control = ctl_b))
    g <- gam_gpu(cs[[1]], family = cs[[2]](), data = d, method = "REML", in.out = cs[[3]],
                 control = ctl_g, device = "off")
    g0 <- gam_gpu(cs[[1]], family = cs[[2]](), data = d, method = "REML", control = ctl_g,
                  device = "off")
    expect_identical(g$outer.info$conv, "full convergence", label = lab)
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)), 1e-6,
              label = lab)
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-9, label = lab)
    expect_lt(max(abs(g$family$getTheta() - b$family$getTheta())), 1e-5, label = lab)
    # (another start, another path)
    expect_false(identical(g$outer.info$score.hist, g0$outer.info$score.hist), label = lab)
    expect_gt(abs(g$outer.info$score.hist[[1]] - g0$outer.info$score.hist[[1]]), 1e-6,
              label = lab)
  }
})
