# A general family's set-up (R/general_family_setup.R): gam()'s, with the
# s() terms' thin plate bases built by gamgpu's construction where mgcv
# draws knots (more than 2000 distinct values).  The fits are the native
# route's (the default), gam()'s its own iteration, each stopping at its
# own tolerance.  Measured (CPU), mgcv 1.8-41 / 1.9-3: gaulss (gam()'s
# default control) linear predictors 1.3e-10 / 5.4e-11 of their range from
# gam()'s, log sp 1e-9 / 1.1e-8, EDFs 2.2e-10 / 3.8e-9, REML 6e-13 /
# 6e-14 relative; cox.ph (epsilon and newton.tol 1e-8 for both: at gam()'s
# default control 4.1e-10 / 1.4e-8 of the range; at 1e-9 and below
# mgcv 1.8-41's gam() ends this case in "step failed") 4.6e-10 / 4.1e-12,
# log sp 1.5e-10 / 4.4e-10.

test_that("s() terms of mgcv's default basis, and only those, are marked", {
  f <- gamgpu:::gg_tp_formula(y ~ s(x0) + s(x1, bs = "tp", k = 5) + s(x2, bs = "cr") +
                                te(x0, x1) + s(x3, bs = b) + mgcv::s(x4) + x5)
  expect_identical(f[[3]], quote(s(x0, bs = "gg_tp") + s(x1, bs = "gg_tp", k = 5) +
                                   s(x2, bs = "cr") + te(x0, x1) + s(x3, bs = b) +
                                   mgcv::s(x4, bs = "gg_tp") + x5))
  fl <- list(y ~ s(x0), ~ s(x1, by = z) + x2)
  g <- gamgpu:::gg_tp_formula(fl)
  expect_identical(g[[1]][[3]], quote(s(x0, bs = "gg_tp")))
  expect_identical(g[[2]][[2]], quote(s(x1, by = z, bs = "gg_tp") + x2))
  expect_identical(environment(g[[2]]), environment(fl[[2]]))
  expect_identical(gamgpu:::gg_tp_formula(y ~ x), y ~ x)
})

gen_ls_data <- function(n, seed = 3) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$y <- sin(2 * pi * d$x0) + d$x1^2 + rnorm(n, sd = exp(-1 + d$x2))
  d
}

test_that("gaulss() above max.knots rows: gamgpu's thin plate bases, gam()'s fit", {
  d <- gen_ls_data(2500)
  fml <- list(y ~ s(x0) + s(x1, bs = "cr"), ~ s(x2, k = 6))
  b <- mgcv::gam(fml, family = mgcv::gaulss(), data = d, method = "REML")
  g <- gam_gpu(fml, family = mgcv::gaulss(), data = d, method = "REML", device = "off")
  expect_match(g$device$route, "native route")
  expect_identical(g$device$tp_bases, c(gamgpu = 2L, mgcv = 0L))
  expect_identical(b$outer.info$conv, "full convergence")
  expect_identical(g$outer.info$conv, b$outer.info$conv)
  # (under another BLAS than R's reference one both fits move by rounding:
  # 8.3e-9 of the range on the GPU machine's OpenBLAS, 8aed7ec)
  blas <- if (reference_blas()) 1 else 100
  lb <- as.matrix(b$linear.predictors)
  lg <- as.matrix(g$linear.predictors)
  r <- apply(lb, 2, function(x) diff(range(x)))
  expect_lt(max(sweep(abs(lg - lb), 2, r, "/")), 1e-9 * blas)
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-11 * blas)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6 * blas)
  expect_lt(max(abs(g$edf - b$edf)), 1e-8 * blas)
  # (the caller's formula, with gam()'s attributes, and mgcv's smooths)
  expect_identical(g$formula, b$formula)
  expect_identical(lapply(g$smooth, class), lapply(b$smooth, class))
  expect_identical(vapply(g$smooth, `[[`, "", "label"), vapply(b$smooth, `[[`, "", "label"))
  nd <- d[c(1, 7, 99), ]
  pb <- predict(b, nd, type = "response")
  expect_lt(max(abs(predict(g, nd, type = "response") - pb)), 1e-9 * blas * max(abs(pb)))
})

test_that("cox.ph() above max.knots rows: gamgpu's thin plate basis, gam()'s fit", {
  set.seed(4)
  n <- 2200
  d <- data.frame(x = runif(n), z = runif(n))
  d$t <- rexp(n, exp(sin(2 * pi * d$x) + d$z))
  d$ev <- as.numeric(runif(n) < 0.8)
  fml <- t ~ s(x, k = 6) + z
  b <- mgcv::gam(fml, family = mgcv::cox.ph(), data = d, weights = ev, method = "REML",
                 control = mgcv::gam.control(epsilon = 1e-8, newton = list(conv.tol = 1e-8)))
  g <- gam_gpu(fml, family = mgcv::cox.ph(), data = d, weights = ev, method = "REML",
               device = "off", control = list(epsilon = 1e-8, newton.tol = 1e-8))
  expect_match(g$device$route, "native route")
  expect_identical(g$outer.info$conv, "full convergence")
  expect_identical(b$outer.info$conv, "full convergence")
  expect_identical(g$device$tp_bases, c(gamgpu = 1L, mgcv = 0L))
  expect_identical(g$formula, b$formula)
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) /
              diff(range(b$linear.predictors)), 1e-9)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6)
})

test_that("below max.knots distinct values mgcv's own construction runs", {
  d <- gen_ls_data(300)
  g <- gam_gpu(list(y ~ s(x0), ~ s(x2)), family = mgcv::gaulss(), data = d,
               method = "REML", device = "off")
  expect_identical(g$device$tp_bases, c(gamgpu = 0L, mgcv = 2L))
})
