# gam()'s bases set up from facts of every row (R/basis_facts.R), the
# terms beyond tp, cr, te and ti: their smooth objects are gam()'s,
# X is built from its recipe, and the fit is gam()'s (helper-facts.R).

test_that("cyclic, P-spline, B-spline, shrinkage, GP and factor smooths come from facts of every row", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data()
  ctl <- gam_gpu_control(chunk.size = 800)
  cases <- list(
    # cyclic (place.knots() of every row) and P-splines (the range)
    list(yb ~ s(x0, bs = "cc") + s(x2, bs = "ps", k = 12) + s(x1), binomial(), "REML"),
    # their kin: cyclic P-splines and B-splines (the range), and a
    # shrinkage cr (the knots; mgcv shrinks the penalty from them alone)
    list(yb ~ s(x0, bs = "cp") + s(x2, bs = "bs", k = 12) + s(x1, bs = "cs"), binomial(), "REML"),
    list(y ~ s(x0, bs = "bs", m = c(3, 1)) + s(x2, bs = "cp", k = 8) + s(x1, bs = "cs"),
         gaussian(), "GCV.Cp"),
    # Gaussian process smooths (the knots drawn from every row's distinct
    # rows, the shift their means): one and three variables, by a factor
    list(yb ~ s(x0, bs = "gp") + s(x1, x2, x3, bs = "gp", k = 25, xt = list(max.knots = 300)),
         binomial(), "REML"),
    list(y ~ s(x0, bs = "gp", m = c(3, 0.4), by = fac) + fac + s(x2, bs = "cr"), gaussian(),
         "GCV.Cp"),
    # factor smooths of a cr base (its knots, and its natural
    # parameterisation by nat.param() over every row)
    list(yb ~ s(x1, fac, bs = "fs", k = 6, xt = list(bs = "cr")) + s(x2, bs = "cr"), binomial(),
         "REML"),
    list(y ~ s(x0, fac, bs = "fs", xt = "cr") + s(x2), gaussian(), "GCV.Cp"),
    # shrinkage thin plates (the shrinkage after every row's scaling)
    list(yb ~ s(x0, bs = "ts") + s(x1, x2, bs = "ts", k = 20), binomial(), "REML"),
    list(y ~ s(x0, bs = "ts", k = 12) + s(x2, bs = "ts"), gaussian(), "GCV.Cp"),
    # sum-to-zero factor smooths of a cr and a tp base (the base's facts;
    # the rest mgcv's own construction)
    list(y ~ s(x0) + s(x0, fac, bs = "sz", xt = "cr") + s(x2), gaussian(), "REML"),
    list(yb ~ s(x1, fac, bs = "sz") + s(x2, bs = "cr"), binomial(), "REML"),
    list(y ~ s(x0, x2, fac, bs = "sz", k = 12) + s(x1), gaussian(), "GCV.Cp"))
  expect_facts_parity(cases, d, ctl)
})

test_that("a P-spline column no row reaches: gam()'s own set-up, and its warning", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(2200)
  d$x0 <- ifelse(d$x0 < 0.5, d$x0 * 0.4, 0.6 + d$x0 * 0.4)      # no rows in (0.2, 0.8)
  # (a P-spline, a B-spline, a cyclic P-spline: each warns in mgcv)
  for (f in list(yb ~ s(x0, bs = "ps", k = 30) + s(x2), yb ~ s(x0, bs = "bs", k = 30) + s(x2),
                 yb ~ s(x0, bs = "cp", k = 30) + s(x2))) {
    expect_warning(b <- mgcv::gam(f, family = binomial(), data = d, method = "REML"),
                   "no\\* information")
    expect_warning(g <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                                control = gam_gpu_control(chunk.size = 500)),
                   "no\\* information")
    expect_identical(g$device$model_matrix, "matrix", label = deparse(f))
    expect_match(g$device$model_matrix_reason, "a column no row reaches", fixed = TRUE)
  }
})
