# gam()'s prediction parameterisation: a t2() smooth's constraint for
# prediction differs from its constraint for the fit (gam.setup()'s Xp and
# G$P), and gam() reports its coefficients, Vp and Ve by G$P
# (R/fit_report.R: prediction_parameters()).  Without it the coefficients
# do not give the fitted values, nor predict() gam()'s predictions.

test_that("under gam()'s methods a t2() model's coefficients, Vp and predictions are gam()'s", {
  set.seed(2)
  n <- 1500
  d <- mgcv::gamSim(1, n = n, verbose = FALSE)
  d$yb <- rbinom(n, 1, plogis((d$f - mean(d$f)) / 3))
  nd <- d[1:60, ]
  cases <- list(list(y ~ t2(x0, x1) + s(x2), gaussian(), "REML"),
                list(y ~ t2(x0, x1, k = c(5, 6)) + s(x2), gaussian(), "GCV.Cp"),
                list(yb ~ t2(x0, x1, bs = c("cr", "ps")) + s(x3), binomial(), "REML"),
                list(y ~ t2(x0, x2, full = TRUE), gaussian(), "ML"))
  for (cs in cases) {
    label <- paste(deparse(cs[[1]]), cs[[3]])
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = cs[[3]])
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = cs[[3]], device = "off")
    expect_true(b$converged && g$converged, label = label)
    scale_of <- function(v) max(abs(v))
    # the coefficients give the fitted values, in gam()'s parameterisation
    Xb <- predict(b, d, type = "lpmatrix")
    expect_lt(max(abs(drop(Xb %*% g$coefficients) - g$linear.predictors)),
              1e-10 * scale_of(g$linear.predictors), label = label)
    expect_lt(max(abs(g$coefficients - b$coefficients)), 1e-6 * scale_of(b$coefficients),
              label = label)
    expect_lt(max(abs(g$Vp - b$Vp)), 1e-6 * scale_of(b$Vp), label = label)
    expect_lt(max(abs(g$Ve - b$Ve)), 1e-6 * scale_of(b$Ve), label = label)
    expect_lt(max(abs(predict(g, nd) - predict(b, nd))),
              1e-7 * diff(range(predict(b, nd))), label = label)
    expect_lt(max(abs(summary(g)$s.table[, "edf"] - summary(b)$s.table[, "edf"])), 1e-5,
              label = label)
  }
})

test_that("fREML's set-up (bam()'s, modCon = 2: one constraint) gives bam()'s t2() fit", {
  set.seed(3)
  d <- mgcv::gamSim(1, n = 800, verbose = FALSE)
  g <- gam_gpu(y ~ t2(x0, x1), data = d, device = "off")
  b <- mgcv::bam(y ~ t2(x0, x1), data = d)
  expect_lt(max(abs(g$coefficients - b$coefficients)), 1e-6 * max(abs(b$coefficients)))
  expect_lt(max(abs(predict(g, d[1:30, ]) - predict(b, d[1:30, ]))), 1e-6)
})

test_that("X of a t2() model under gam()'s set-up is built with gam()'s fit constraint", {
  set.seed(4)
  d <- mgcv::gamSim(1, n = 600, verbose = FALSE)
  forms <- list(y ~ t2(x0, x1) + s(x2),                    # null space of 4 columns
                y ~ t2(x0, x1, bs = c("cr", "ps")) + s(x3),
                y ~ t2(x0, x2, full = TRUE),
                y ~ t2(x0, x1, x2),
                y ~ t2(x0, x1, bs = c("tp", "cr"), m = c(1, 2)))  # null space of 1: dropped
  for (f in forms) {
    label <- deparse(f)
    G <- gam_gpu(f, data = d, method = "REML", fit = FALSE)
    expect_false(is.null(G$P), label = label)
    r <- gamgpu:::model_matrix_plan(G, G$mf, threads = 1L)
    expect_false(inherits(r, "gg_no_recipe"), label = label)
    X <- .Call(gamgpu:::gg_xplan_build_r, r)
    for (s in G$smooth) {
      cols <- s$first.para:s$last.para
      # t2: gam()'s own columns (its fit constraint), bit for bit but for
      # the order of a few sums; any other smooth: PredictMat's, as a
      # recipe always is (gam()'s set-up's thin plate columns differ from
      # PredictMat's by ~1e-10: a different order of the same sums)
      ref <- if (inherits(s, "t2.smooth")) G$X[, cols] else mgcv::PredictMat(s, G$mf)
      expect_lt(max(abs(X[, cols] - ref)), 1e-12 * max(abs(ref)), label = paste(label, s$label))
      if (inherits(s, "t2.smooth"))         # (and not the prediction constraint's)
        expect_gt(max(abs(X[, cols] - mgcv::PredictMat(s, G$mf))), 1e-3, label = label)
    }
  }
  # a smooth other than t2 whose fit constraint differs (G$P not the
  # identity on its columns): no recipe, and the reason names it
  G <- gam_gpu(y ~ t2(x0, x1) + s(x2), data = d, method = "REML", fit = FALSE)
  cols <- G$smooth[[2]]$first.para + 0:1
  G$P[cols, cols] <- G$P[cols, cols] + 1e-3
  r <- gamgpu:::model_matrix_plan(G, G$mf, threads = 1L)
  expect_s3_class(r, "gg_no_recipe")
  expect_match(attr(r, "reason"), "s(x2): gam()'s fit takes a constraint", fixed = TRUE)
  # without an intercept G$P is a least-squares map: no recipe, and why
  G <- gam_gpu(y ~ t2(x0, x1) - 1, data = d, method = "REML", fit = FALSE)
  r <- gamgpu:::model_matrix_plan(G, G$mf, threads = 1L)
  expect_s3_class(r, "gg_no_recipe")
  expect_match(attr(r, "reason"), "t2(x0,x1): gam()'s fit of a t2() smooth in a model without an intercept",
               fixed = TRUE)
  # (bam()'s set-up: one constraint, the prediction one's recipe)
  Gb <- gam_gpu(y ~ t2(x0, x1) + s(x2), data = d, fit = FALSE)
  rb <- gamgpu:::model_matrix_plan(Gb, Gb$mf, threads = 1L)
  expect_false(inherits(rb, "gg_no_recipe"))
  cols <- Gb$smooth[[1]]$first.para:Gb$smooth[[1]]$last.para
  expect_lt(max(abs(.Call(gamgpu:::gg_xplan_build_r, rb)[, cols] -
                      mgcv::PredictMat(Gb$smooth[[1]], Gb$mf))), 1e-12)
})
