# The full model matrix built after bam()'s subsample setup must be exactly
# what predict.gam(type = "lpmatrix") gives, serially and in forked blocks.

test_that("the model matrix equals predict.gam's lpmatrix, in one block or several", {
  set.seed(4)
  n <- 12000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n),
                  fac = factor(sample(letters[1:3], n, TRUE)), off = runif(n))
  d$y <- sin(6 * d$x0) + d$x1 + rnorm(n) / 3
  forms <- list(y ~ s(x0, bs = "cr") + s(x1) + fac + x2 + offset(off),
                y ~ te(x0, x1, k = c(4, 5)) + s(x2, by = fac) + fac,
                y ~ s(x2, bs = "cc") + ti(x0, x1, k = c(4, 4)) + s(fac, bs = "re"))
  for (f in forms) {
    G <- bam_setup(f, data = d, chunk.size = 5000)
    expect_lt(nrow(G$X), n)                    # bam's subsample setup
    Gp <- G
    class(Gp) <- "gam"
    Gp$coefficients <- rep(0, ncol(G$X))
    Gp$model <- G$mf
    ref <- unname(mgcv::predict.gam(Gp, newdata = G$mf, type = "lpmatrix",
                                    newdata.guaranteed = TRUE))
    attr(ref, "model.offset") <- NULL
    # ti()'s margins carry QR constraints, which mgcv applies by Householder
    # reflections and the C basis by their explicit Z: equal to rounding
    exact <- !any(grepl("ti(", deparse(f), fixed = TRUE))
    terms <- tp1_terms(G$smooth)
    expect_same_basis(gamgpu:::full_model_matrix(G, G$mf, cores = 1L), ref[, ], exact, terms)
    skip_on_os("windows")
    expect_same_basis(gamgpu:::full_model_matrix(G, G$mf, cores = 2L), ref[, ], exact, terms)
  }
})

test_that("the C cr/cs basis equals PredictMat: both constraint forms, by-variables, extrapolation", {
  set.seed(5)
  n <- 3000
  d <- data.frame(x0 = runif(n), x1 = runif(n), z = rnorm(n),
                  fac = factor(sample(letters[1:3], n, TRUE)))
  d$y <- sin(6 * d$x0) + rnorm(n)
  nd <- d[1:40, ]
  nd$x0[1:5] <- c(-0.2, 1.3, 0, 1, 0.5)          # beyond the end knots, and on them
  forms <- list(y ~ s(x0, bs = "cr"),
                y ~ s(x0, bs = "cs", k = 15) + s(x1, bs = "cr", by = z),
                y ~ s(x0, bs = "cr", by = fac) + fac)
  n_checked <- 0
  for (f in forms) {
    # bam's setup constrains by sweep-and-drop, gam's by a QR factor
    for (G in list(bam_setup(f, data = d), mgcv::gam(f, data = d, fit = FALSE))) {
      for (s in G$smooth) {
        for (dd in list(d, nd)) {
          Xc <- gamgpu:::cr_matrix(s, dd)
          expect_false(is.null(Xc))
          ref <- mgcv::PredictMat(s, dd)
          expect_same_basis(Xc, ref, exact = inherits(attr(s, "qrc"), "sweepDrop"))
          n_checked <- n_checked + 1
        }
      }
    }
  }
  expect_equal(n_checked, 2 * 2 * (1 + 2 + 3))
  # outside its reach it declines, and PredictMat takes over
  G <- bam_setup(y ~ s(x0) + te(x0, x1, k = c(4, 4)), data = d)
  expect_null(gamgpu:::cr_matrix(G$smooth[[1]], d))
  expect_null(gamgpu:::cr_matrix(G$smooth[[2]], d))
})

test_that("the C thin plate basis equals PredictMat: 1-3 dimensions, orders, by, threads", {
  set.seed(6)
  n <- 4000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), z = rnorm(n),
                  fac = factor(sample(letters[1:3], n, TRUE)))
  d$y <- sin(6 * d$x0) + rnorm(n)
  nd <- d[1:40, ]
  nd$x0[1:4] <- c(-0.2, 1.3, 0, 1)
  forms <- list(y ~ s(x0), y ~ s(x0, bs = "ts", k = 15) + s(x1, by = z),
                y ~ s(x0, by = fac) + fac, y ~ s(x0, x1), y ~ s(x0, x1, x2, k = 30),
                y ~ s(x0, m = 3, k = 12) + s(x0, x1, m = 3))
  n_checked <- 0
  for (f in forms) {
    for (G in list(bam_setup(f, data = d), mgcv::gam(f, data = d, fit = FALSE))) {
      for (s in G$smooth) {
        for (dd in list(d, nd)) {
          ref <- mgcv::PredictMat(s, dd)
          for (threads in 1:2) {
            Xc <- gamgpu:::tprs_matrix(s, dd, threads = threads)
            expect_false(is.null(Xc))
            expect_same_basis(Xc, ref, exact = !inherits(attr(s, "qrc"), "qr"),
                              terms = tp1_terms(list(s)))
          }
          n_checked <- n_checked + 1
        }
      }
    }
  }
  expect_equal(n_checked, 2 * 2 * (1 + 2 + 3 + 1 + 1 + 2))
  G <- bam_setup(y ~ te(x0, x1, k = c(4, 4)), data = d)
  expect_null(gamgpu:::tprs_matrix(G$smooth[[1]], d))
})

test_that("the C te() of two cr margins equals PredictMat: by-variables, extrapolation, cs", {
  set.seed(7)
  n <- 3000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n),
                  fac = factor(sample(letters[1:3], n, TRUE)))
  d$y <- sin(6 * d$x0) * d$x1 + rnorm(n)
  nd <- d[1:40, ]
  nd$x0[1:3] <- c(-0.1, 1.2, 0.5)                  # beyond the end knots
  forms <- list(y ~ te(x0, x1), y ~ te(x0, x1, k = c(4, 7)) + s(x2, bs = "cr"),
                y ~ te(x0, x1, by = fac) + fac, y ~ te(x0, x1, bs = "cs"))
  n_checked <- 0
  for (f in forms) {
    for (G in list(bam_setup(f, data = d, chunk.size = 1000),
                   mgcv::gam(f, data = d, fit = FALSE))) {
      for (s in G$smooth) {
        if (!inherits(s, "tensor.smooth")) next
        expect_identical(gamgpu:::smooth_recipe(s, d)$kind, 4L)    # a margins block
        for (dd in list(d, nd)) {
          X <- gamgpu:::smooth_matrix(s, dd, threads = 2L)
          ref <- mgcv::PredictMat(s, dd)
          # sweep-and-drop needs no BLAS: bit for bit on any machine
          if (inherits(attr(s, "qrc"), "sweepDrop")) expect_identical(X, ref)
          else expect_lt(max(abs(X - ref)), 1e-13 * max(1, max(abs(ref))))
          n_checked <- n_checked + 1
        }
      }
    }
  }
  expect_equal(n_checked, 2 * 2 * (1 + 1 + 3 + 1))
})
