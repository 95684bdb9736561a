# t2() tensor products under gam()'s methods with more rows than
# chunk.size (R/basis_facts_t2.R): each margin's reparameterisation from
# its X'X over every row, the two constraints from the product's column
# sums over every row, X built from its recipe with gam()'s fit
# constraint -- the smooths, the fit and the predictions gam()'s.

test_that("nat_param_gram() is mgcv's nat.param(type = 3)'s P from X'X, column sums and n", {
  set.seed(7)
  x <- c(runif(600), rnorm(250))
  specs <- list(mgcv::s(x, bs = "cr", k = 5), mgcv::s(x, bs = "cr", k = 9),
                mgcv::s(x, bs = "ps", k = 6), mgcv::s(x, bs = "ps", k = 8, m = 1),
                mgcv::s(x, bs = "ps", k = 7, m = c(2, 1)))
  for (sp in specs) {
    sm <- mgcv::smoothCon(sp, data = data.frame(x = x), knots = NULL, absorb.cons = FALSE)[[1]]
    np <- mgcv:::nat.param(sm$X, sm$S[[1]], rank = sm$rank, type = 3, unit.fnorm = TRUE)
    P <- gamgpu:::nat_param_gram(crossprod(sm$X), colSums(sm$X), nrow(sm$X), sm$S[[1]],
                                 sm$rank)
    expect_lt(max(abs(P - np$P)) / max(abs(np$P)), 1e-12, label = sp$label)
    expect_gt(max(abs(P - diag(ncol(P)))), 0.1)       # (not the identity)
  }
})

test_that("a t2() with more rows than chunk.size comes from facts of every row and X from its recipe", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data()
  ctl <- gam_gpu_control(chunk.size = 800)
  cases <- list(
    list(yb ~ t2(x0, x1) + s(x2), binomial(), "REML"),
    # ps and cr margins; three margins; full = TRUE
    list(y ~ t2(x0, x2, bs = c("cr", "ps"), k = c(5, 7)) + s(x1, bs = "cr"), gaussian(),
         "GCV.Cp"),
    list(y ~ t2(x0, x1, x2), gaussian(), "ML"),
    list(y ~ t2(x0, x3, full = TRUE) + s(x1), gaussian(), "REML"),
    # a margin of one null space column (m = 1): the fit constraint drops it
    list(yb ~ t2(x0, x1, bs = "ps", m = 1) + s(x2, bs = "cr"), binomial(), "REML"))
  expect_facts_parity(cases, d, ctl)
})

test_that("a t2() the facts do not cover is gam()'s set-up on every row, and says so", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(2200)
  for (f in list(yb ~ t2(x0, x1, bs = "tp") + s(x2),        # thin plate margins
                 yb ~ t2(x0, x1, by = fac) + fac)) {        # a by variable
    g <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                 control = gam_gpu_control(chunk.size = 500))
    expect_identical(g$device$model_matrix, "matrix", label = deparse(f))
    expect_match(g$device$model_matrix_reason, "t2(x0,x1", fixed = TRUE, label = deparse(f))
  }
})

test_that("on the GPU a t2()'s facts are reduced on the device and X built there with gam()'s fit constraint", {
  skip_if_no_device()
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(30000)
  expect_device_facts_fit(yb ~ t2(x0, x1, bs = c("cr", "ps")) + s(x2, bs = "cr"), d)
})
