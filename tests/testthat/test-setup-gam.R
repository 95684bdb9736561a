# gam()'s own setup (R/setup.R: gam_setup(), as_bam_setup()): where the
# lean setup does not cover a call with gam()'s methods -- an argument it
# does not take, an mgcv whose bam() its probe does not match, the option
# gamgpu.lean_setup = FALSE -- the setup object is gam(fit = FALSE)'s, and
# the fit is gam()'s; a setup object G from gam(fit = FALSE) is taken as
# gam(G = G) takes it.

gam_setup_data <- function(n = 600, seed = 5) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$yp <- stats::rpois(n, exp(d$f / 6))
  d$fac <- factor(sample(letters[1:5], n, TRUE))
  d
}

tight <- function() mgcv::gam.control(epsilon = 1e-12, newton = list(conv.tol = 1e-10))
gg_tight <- function() gam_gpu_control(epsilon = 1e-12, newton.tol = 1e-10)

# fitted values within tol of their range, and the criterion no worse than
# gam()'s beyond rounding
expect_gam_fit <- function(g, m, tol, label = "") {
  expect_true(g$converged, label = label)
  rg <- diff(range(m$fitted.values))
  expect_lt(max(abs(g$fitted.values - m$fitted.values)) / rg, tol, label = label)
  expect_lt(g$gcv.ubre - m$gcv.ubre, 1e-8 * abs(m$gcv.ubre), label = label)
}

test_that("a call the lean setup does not take gets gam()'s setup, and gam()'s fit", {
  d <- gam_setup_data()
  pp <- list(x1 = list(diag(1)))
  for (meth in c("REML", "ML")) {
    g <- gam_gpu(y ~ s(x0) + x1 + s(x2), data = d, method = meth, paraPen = pp,
                 device = "off", control = gg_tight())
    m <- mgcv::gam(y ~ s(x0) + x1 + s(x2), data = d, method = meth, paraPen = pp,
                   control = tight())
    expect_gam_fit(g, m, 1e-7, meth)
    expect_identical(g$device$model_matrix, "matrix")
    expect_match(g$device$model_matrix_reason, "gam\\(\\)'s own setup .*'paraPen'")
  }
  g <- gam_gpu(yp ~ s(x0) + x1 + s(x2, by = fac), family = poisson, data = d, method = "REML",
               paraPen = pp, device = "off", control = gg_tight())
  m <- mgcv::gam(yp ~ s(x0) + x1 + s(x2, by = fac), family = poisson, data = d,
                 method = "REML", paraPen = pp, control = tight())
  expect_gam_fit(g, m, 1e-6, "poisson paraPen")
})

test_that("without the lean setup gam()'s methods fit on gam()'s own setup, to the same fit", {
  d <- gam_setup_data()
  fit <- function() gam_gpu(yp ~ s(x0) + s(x1, bs = "cr") + fac, family = poisson, data = d,
                            method = "REML", device = "off", control = gg_tight())
  lean <- fit()
  old <- options(gamgpu.lean_setup = FALSE)
  on.exit(options(old))
  own <- fit()
  expect_match(own$device$model_matrix_reason, "option gamgpu.lean_setup = FALSE")
  expect_lt(max(abs(own$fitted.values - lean$fitted.values)), 1e-10 * diff(range(lean$fitted.values)))
  m <- mgcv::gam(yp ~ s(x0) + s(x1, bs = "cr") + fac, family = poisson, data = d,
                 method = "REML", control = tight())
  expect_gam_fit(own, m, 1e-6)
})

test_that("G from gam(fit = FALSE) is fitted as gam(G = G) fits it", {
  d <- gam_setup_data()
  G <- mgcv::gam(y ~ s(x0) + s(x1) + s(x2), data = d, fit = FALSE)
  g <- gam_gpu(G = G, method = "GCV.Cp", device = "off")
  m <- mgcv::gam(G = G)
  expect_gam_fit(g, m, 1e-8)
  expect_match(g$device$model_matrix_reason, "gam\\(\\)'s setup object")
  # (with its lsp0 changed, as ?gam's two-part fit does)
  G$lsp0 <- log(m$sp * 10)
  g <- gam_gpu(G = G, method = "GCV.Cp", device = "off")
  m <- mgcv::gam(G = G)
  expect_gam_fit(g, m, 1e-8, "lsp0")
  Gp <- mgcv::gam(yp ~ s(x0) + s(x1), family = poisson, data = d, fit = FALSE)
  g <- gam_gpu(G = Gp, method = "REML", device = "off", control = gg_tight())
  m <- mgcv::gam(G = Gp, method = "REML", control = tight())
  expect_gam_fit(g, m, 1e-6, "poisson")
  expect_identical(g$scale.estimated, FALSE)
  expect_error(gam_gpu(G = G, data = d), class = "gamgpu_unsupported_argument")
})

test_that("a model bam()'s setup fails on and gam()'s does not is set up by gam(), and said so", {
  # (mgcv 1.9-x's gam.side() fails on bam()'s sweep-and-drop constraint of
  # a smooth nested in another; mgcv 1.8-41's does not)
  d <- gam_setup_data(n = 1500)
  f <- y ~ s(x0) + te(x0, x1, k = c(4, 4))
  b <- tryCatch(mgcv::bam(f, data = d, fit = FALSE), error = function(e) e)
  if (inherits(b, "error")) {
    expect_message(g <- gam_gpu(f, data = d, device = "off", control = gg_tight()),
                   class = "gamgpu_mgcv_difference")
    # fREML of an additive model is gam()'s REML on gam()'s setup (n <=
    # chunk.size: the bases on every row, as gam()'s)
    m <- mgcv::gam(f, data = d, method = "REML", control = tight())
    expect_gam_fit(g, m, 1e-7)
    # without the lean setup, gam(fit = FALSE)'s, which says so
    withr_opt <- options(gamgpu.lean_setup = FALSE)
    on.exit(options(withr_opt))
    expect_message(g2 <- gam_gpu(f, data = d, device = "off", control = gg_tight()),
                   class = "gamgpu_mgcv_difference")
    expect_match(g2$device$model_matrix_reason, "bam\\(\\)'s setup failed")
    expect_gam_fit(g2, m, 1e-7, "gam(fit = FALSE)")
  } else {
    expect_silent(g <- gam_gpu(f, data = d, device = "off"))
    m <- mgcv::bam(f, data = d)
    expect_lt(max(abs(g$fitted.values - m$fitted.values)) / diff(range(m$fitted.values)), 1e-9)
  }
  # where gam()'s setup fails too, the error is the setup's
  expect_error(gam_gpu(y ~ s(x0, k = 50), data = d[1:30, ], device = "off"),
               class = "gamgpu_error")
})

test_that("a soap film's known boundary values (its offset) are fitted, as gam() fits them", {
  # (?smooth.construct.so.smooth.spec: bam()'s setup leaves the smooth's
  # offset out; gam_gpu's fREML includes it, and says so)
  fsb <- list(mgcv::fs.boundary())
  names(fsb[[1]]) <- c("v", "w")
  knots <- data.frame(v = rep(seq(-0.5, 3, by = 0.5), 4),
                      w = rep(c(-0.6, -0.3, 0.3, 0.6), rep(8, 4)))
  set.seed(0)
  v <- runif(600) * 5 - 1
  w <- runif(600) * 2 - 1
  d <- data.frame(v = v, w = w)[mgcv::inSide(fsb, x = v, y = w), ]   # (inSide() reads x's, y's names)
  fsb[[1]]$f <- mgcv::fs.test(fsb[[1]]$v, fsb[[1]]$w, b = 1, exclude = FALSE)
  d$y <- mgcv::fs.test(d$v, d$w, b = 1) + rnorm(nrow(d)) * 0.3
  f <- y ~ s(v, w, bs = "so", xt = list(bnd = fsb, nmax = 100))
  for (m in c("GCV.Cp", "REML")) {
    g <- gam_gpu(f, data = d, knots = knots, method = m, device = "off", control = gg_tight())
    b <- mgcv::gam(f, data = d, knots = knots, method = m, control = tight())
    expect_gam_fit(g, b, 1e-7, m)
  }
  expect_message(g <- gam_gpu(f, data = d, knots = knots, device = "off", control = gg_tight()),
                 "known boundary", class = "gamgpu_mgcv_difference")
  expect_gam_fit(g, b, 1e-7, "fREML")
  nd <- d[1:7, ]
  expect_equal(predict(g, nd), predict(b, nd), tolerance = 1e-7)
})

test_that("a data expression is evaluated once, as gam()'s model frame takes it", {
  # (?summary.gam: data = data.frame(y = rnorm(n), ...) in the call; a second
  # evaluation would draw other data)
  set.seed(4)
  g <- gam_gpu(y ~ s(x), data = data.frame(y = rnorm(300), x = runif(300)), method = "ML",
               device = "off", control = gg_tight())
  set.seed(4)
  m <- mgcv::gam(y ~ s(x), data = data.frame(y = rnorm(300), x = runif(300)), method = "ML",
                 control = tight())
  expect_gam_fit(g, m, 1e-6)
  expect_identical(g$y, m$y)
})

test_that("model_matrix_reason says why gam()'s bases, and so X, were set up in R", {
  set.seed(1)
  n <- 12000                                   # > chunk.size (10000)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), x3 = runif(n))
  d$y <- rbinom(n, 1, plogis(sin(3 * d$x0) + d$x1 - 0.5))
  fo <- y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(4, 4))
  op <- options(gamgpu.basis_facts = NULL)
  on.exit(options(op), add = TRUE)
  g <- gam_gpu(fo, family = binomial(), data = d, method = "REML", device = "off")
  expect_identical(g$device$model_matrix, "matrix")
  expect_match(g$device$model_matrix_reason, "a CPU fit takes the route over the rows' facts",
               fixed = TRUE)
  options(gamgpu.basis_facts = TRUE)
  g <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + s(x2, bs = "ad"), family = binomial(),
               data = d, method = "REML", device = "off")
  expect_identical(g$device$model_matrix, "matrix")
  expect_match(g$device$model_matrix_reason, "s(x2)", fixed = TRUE)
  # every term one the facts cover: X from its recipe
  g <- gam_gpu(fo, family = binomial(), data = d, method = "REML", device = "off")
  expect_identical(g$device$model_matrix, "recipe")
  expect_null(g$device$model_matrix_reason)
  g <- gam_gpu(y ~ s(x0) + s(x1, bs = "cr"), family = binomial(), data = d[1:2000, ],
               method = "REML", device = "off")
  expect_match(g$device$model_matrix_reason, "n <= chunk.size", fixed = TRUE)
})
