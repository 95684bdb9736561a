# mgcv's mvn() family (R/family_mvn.R, src/family/family_mvn.c): gamgpu's
# ll() from the rows' sufficient statistics against the family's own, then
# gam_gpu()'s fits against gam()'s on the same calls (the CPU here; the
# device's in test-family-mvn-device.R).

# An ll() input of mvn(d = m): X of n rows with its mean columns (an
# intercept and six uniform columns) and R's m (m + 1) / 2 zero columns,
# "lpi" (shared columns where overlap), "XX"; y, coef, d1b (2 smoothing
# parameters) and fh at random.
mvn_ll_case <- function(m, overlap, n = 150, seed = 1) {
  set.seed(seed)
  Xm <- cbind(1, matrix(runif(n * 6), n))
  lpi <- if (m == 2) {
    if (overlap) list(c(1, 2, 3, 4), c(5, 6, 7, 2)) else list(1:4, 5:7)
  } else {
    if (overlap) list(c(1, 2, 3), c(4, 5, 2), c(6, 7, 1)) else list(1:3, 4:5, 6:7)
  }
  lpi <- lapply(lpi, as.integer)
  attr(lpi, "overlap") <- overlap
  nt <- m * (m + 1) / 2
  X <- cbind(Xm, matrix(0, n, nt))
  attr(X, "lpi") <- lpi
  attr(X, "XX") <- crossprod(Xm)
  p <- ncol(X)
  fh <- crossprod(matrix(rnorm(p * p), p)) / p
  list(y = matrix(rnorm(n * m), n) + Xm[, 2], X = X,
       coef = c(rnorm(7) / 3, runif(nt, -0.4, 0.4)),
       d1b = matrix(rnorm(2 * p), p), fh = fh, family = mgcv::mvn(d = m), n = n)
}

mvn_ll_pair <- function(r) {
  own <- r$family$ll
  gg <- gamgpu:::general_family_with_ll(r$family, "mvn")$ll
  call <- function(f, deriv, X = r$X)
    f(r$y, X, r$coef, rep(1, r$n), r$family, deriv = deriv, d1b = r$d1b, fh = r$fh)
  list(own = function(deriv, X = r$X) call(own, deriv, X),
       gg = function(deriv, X = r$X) call(gg, deriv, X))
}

# b's results against a's: each within tol of its largest entry
expect_mvn_ll_close <- function(b, a, tol = 1e-10) {
  for (nm in c("l", "lb", "lbb")) {
    expect_identical(dim(b[[nm]]), dim(a[[nm]]), label = nm)
    expect_lt(rel_err(b[[nm]], a[[nm]]), tol, label = nm)
  }
}

test_that("gamgpu's mvn ll() equals the family's own at each deriv level, with and without shared columns", {
  for (m in 2:3) for (overlap in c(FALSE, TRUE)) {
    r <- mvn_ll_case(m, overlap, seed = m + 2 * overlap)
    f <- mvn_ll_pair(r)
    for (deriv in 0:1) {
      a <- f$own(deriv)
      b <- f$gg(deriv)
      expect_mvn_ll_close(b, a)
      expect_null(b$d1H)
    }
    a3 <- f$own(3)
    b3 <- f$gg(3)
    expect_mvn_ll_close(b3, a3)
    expect_length(b3$d1H, 2L)
    for (i in 1:2) {
      expect_identical(dim(b3$d1H[[i]]), dim(a3$d1H[[i]]))
      expect_lt(rel_err(b3$d1H[[i]], a3$d1H[[i]]), 1e-10)
    }
    # deriv 2: tr(fh dH_i), the traces of deriv 3's dH_i (mgcv 1.9's ll()
    # returns the same; 1.8-41's, which gam.fit5() there never asks for
    # deriv 2, reads the wrong part of its dH)
    b2 <- f$gg(2)
    expect_mvn_ll_close(b2, a3)
    tr <- vapply(a3$d1H, function(h) sum(r$fh * h), 0)
    expect_lt(rel_err(b2$d1H, tr), 1e-10)
    if (packageVersion("mgcv") >= "1.9") expect_lt(rel_err(b2$d1H, f$own(2)$d1H), 1e-10)
  }
})

test_that("the ll() comparison can fail: a wrong X'X or coefficient is seen", {
  r <- mvn_ll_case(3, TRUE)
  f <- mvn_ll_pair(r)
  a <- f$own(3)
  X2 <- r$X
  attr(X2, "XX") <- attr(X2, "XX") * (1 + 1e-6)
  b <- f$gg(3, X = X2)
  expect_gt(rel_err(b$lbb, a$lbb), 1e-8)
  expect_gt(rel_err(b$d1H[[1]], a$d1H[[1]]), 1e-8)
  r2 <- r
  r2$coef[length(r2$coef)] <- r2$coef[length(r2$coef)] + 1e-5   # (an off-diagonal of R)
  b <- mvn_ll_pair(r2)$gg(1)
  expect_gt(rel_err(b$lb, a$lb), 1e-8)
  expect_gt(abs(b$l - a$l), 1e-8 * abs(a$l))
})

test_that("columns gam.fit5() dropped ('drop') leave X'X as the family's own ll() leaves it", {
  r <- mvn_ll_case(2, FALSE)
  X <- r$X[, -3]
  attr(X, "lpi") <- lapply(list(c(1, 2, 3), 4:6), as.integer)
  attr(attr(X, "lpi"), "overlap") <- FALSE
  attr(X, "XX") <- attr(r$X, "XX")
  attr(X, "drop") <- 3L
  r$coef <- r$coef[-3]
  r$d1b <- r$d1b[-3, ]
  r$fh <- r$fh[-3, -3]
  r$X <- X
  f <- mvn_ll_pair(r)
  a <- f$own(3)
  b <- f$gg(3)
  expect_mvn_ll_close(b, a)
  expect_lt(rel_err(b$d1H[[2]], a$d1H[[2]]), 1e-10)
})

test_that("the C's mvn ll() refuses bad input with classed errors", {
  r <- mvn_ll_case(2, FALSE, n = 30)
  XX <- attr(r$X, "XX")
  lpi <- lapply(attr(r$X, "lpi"), as.integer)
  call <- function(coef = r$coef, lpi_ = lpi, yX = matrix(0, 2, 7), d1b = NULL)
    .Call(gamgpu:::gg_mvn_ll_r, XX, yX, diag(2), 30, as.double(coef), lpi_, d1b)
  expect_type(call()$l, "double")
  expect_error(call(coef = r$coef[-1]), "mvn dimension error", class = "gamgpu_bad_input")
  expect_error(call(lpi_ = list(1:4, c(5L, 99L))), class = "gamgpu_bad_input")
  expect_error(call(yX = matrix(0, 2, 6)), class = "gamgpu_bad_input")
  expect_error(call(d1b = matrix(0, 5, 2)), class = "gamgpu_bad_input")
})

test_that("the ll() on a model session (the CPU backend here) equals the host's, one load per X", {
  r <- mvn_ll_case(3, TRUE, n = 400)
  dev <- gamgpu:::ls_device_state("off", list(mode = 0L, ordinal = 0L),
                                  gamgpu:::as_gam_gpu_control(gam_gpu_control(nthreads = 2L)))
  on.exit(gamgpu:::ls_session_close(dev))
  for (deriv in c(1, 3)) {
    a <- gamgpu:::mvn_ll_stats(NULL, r$y, r$X, r$coef, deriv, r$d1b)
    b <- gamgpu:::mvn_ll_stats(dev, r$y, r$X + 0, r$coef, deriv, r$d1b)
    for (nm in c("l", "lb", "lbb", if (deriv == 3) "dH"))
      expect_lt(rel_err(b[[nm]], a[[nm]]), 1e-12, label = nm)
  }
  expect_identical(dev$loads, 1L)
  gamgpu:::ls_session_close(dev)
  expect_identical(dev$backends, "cpu")
})

# ?mvn's data: y0 = f0(x0) + f1(x1), y1 = f2(x2) with correlated normal
# errors (and a third response for d = 3)
mvn_data <- function(n = 300, seed = 1, d = 2) {
  set.seed(seed)
  x <- matrix(runif(3 * n), n)
  V <- matrix(c(2, 1, 0.5, 1, 2, 0.8, 0.5, 0.8, 1.5), 3)[1:d, 1:d]
  f0 <- 2 * sin(pi * x[, 1])
  f1 <- exp(2 * x[, 2])
  f2 <- 0.2 * x[, 3]^11 * (10 * (1 - x[, 3]))^6 + 10 * (10 * x[, 3])^3 * (1 - x[, 3])^10
  mu <- cbind(f0 + f1, f2, f0 - f1 / 2)[, 1:d]
  y <- mu + matrix(rnorm(n * d), n) %*% chol(V)
  data.frame(y0 = y[, 1], y1 = y[, 2], y2 = if (d > 2) y[, 3] else 0,
             x0 = x[, 1], x1 = x[, 2], x2 = x[, 3])
}

# (newton()'s and bfgs()'s conv.tol 1e-9, as helper-compare.R's tight
# control: at 1e-10 mvn()'s BFGS iteration can stop at "step failed" on
# rounding, with mgcv's own ll() as with gamgpu's)
mvn_tight_gam <- function() mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9))
mvn_tight_gg <- function() gam_gpu_control(epsilon = 1e-10, newton.tol = 1e-9)

# gam() and gam_gpu() on the same call, tightly converged: every linear
# predictor within 1e-8 of its range, the same REML score, smoothing
# parameters, EDFs, covariance of the response, summary(), predictions,
# residuals.  Under another BLAS than R's reference one (the GPU
# machine's OpenBLAS) the products' rounding differs from mgcv's C loops:
# the fits and EDFs are then held to 100 times those bounds (airquality:
# 1.8e-7 of the range there, 3.5e-9 under the reference BLAS).
expect_mvn_fit <- function(formula, d, data, method = "REML", newdata = data[1:7, ]) {
  x <- if (reference_blas()) 1 else 100
  fam <- mgcv::mvn(d = d)
  a <- mgcv::gam(formula, family = fam, data = data, method = method,
                 control = mvn_tight_gam())
  g <- gam_gpu(formula, family = fam, data = data, method = method, control = mvn_tight_gg(),
               device = "off")
  expect_s3_class(g, "gam_gpu")
  expect_identical(a$outer.info$conv, "full convergence")
  expect_identical(g$outer.info$conv, a$outer.info$conv)
  la <- as.matrix(a$linear.predictors)
  lg <- as.matrix(g$linear.predictors)
  expect_identical(dim(lg), dim(la))
  expect_identical(ncol(lg), as.integer(d))
  rng <- apply(la, 2, function(x) diff(range(x)))
  expect_lt(max(sweep(abs(lg - la), 2, rng, "/")), 1e-8 * x)
  expect_equal(unname(g$gcv.ubre), unname(a$gcv.ubre), tolerance = 1e-10)
  expect_lt(max(abs(g$sp / a$sp - 1)), 1e-3)
  expect_lt(max(abs(g$edf - a$edf)), 1e-6 * x)
  # the response's covariance, solve(R'R) of the family's postproc
  Va <- solve(crossprod(a$family$data$R))
  Vg <- solve(crossprod(g$family$data$R))
  expect_lt(rel_err(Vg, Va), 1e-7)
  expect_lt(rel_err(residuals(g), residuals(a)), 1e-7)
  expect_lt(rel_err(residuals(g, type = "deviance"), residuals(a, type = "deviance")), 1e-7)
  sa <- summary(a)
  sg <- summary(g)
  expect_lt(rel_err(sg$s.table[, "edf"], sa$s.table[, "edf"]), 1e-6)
  expect_lt(max(abs(sg$s.table[, "p-value"] - sa$s.table[, "p-value"])), 1e-6)
  expect_lt(rel_err(sg$p.coeff, sa$p.coeff), 1e-7)
  expect_lt(rel_err(predict(g, type = "response"), predict(a, type = "response")),
            1e-8 * x)
  pa <- predict(a, newdata, se.fit = TRUE)
  pg <- predict(g, newdata, se.fit = TRUE)
  expect_lt(rel_err(pg$fit, pa$fit), 1e-8 * x)
  expect_lt(rel_err(pg$se.fit, pa$se.fit), 1e-6)
  expect_identical(g$device$ll_rows, "gamgpu")
  expect_gt(g$device$ll_calls, 0)
  expect_identical(g$device$ll_delegated, 0L)
  expect_identical(deparse(g$family$ll), deparse(a$family$ll))
  invisible(g)
}

test_that("?mvn's bivariate model: gam()'s fit", {
  d <- mvn_data()
  expect_mvn_fit(list(y0 ~ s(x0) + s(x1), y1 ~ s(x2)), 2, d)
})

test_that("a trivariate model: gam()'s fit", {
  d <- mvn_data(250, seed = 6, d = 3)
  expect_mvn_fit(list(y0 ~ s(x0) + s(x1), y1 ~ s(x2), y2 ~ s(x0, k = 6)), 3, d)
})

test_that("predictors sharing a term (1 + 2 ~ s(x2) - 1): gam()'s fit", {
  d <- mvn_data(250, seed = 2)
  fml <- list(y0 ~ s(x0), y1 ~ s(x1), 1 + 2 ~ s(x2) - 1)
  g <- expect_mvn_fit(fml, 2, d)
  expect_true(attr(attr(stats::model.matrix(g), "lpi"), "overlap"))
})

test_that("method = \"ML\" is gam()'s (which fits general families by REML)", {
  d <- mvn_data(200, seed = 2)
  g <- expect_mvn_fit(list(y0 ~ s(x0), y1 ~ s(x2)), 2, d, method = "ML")
  expect_identical(g$method, mgcv::gam(list(y0 ~ s(x0), y1 ~ s(x2)), family = mgcv::mvn(d = 2),
                                       data = d, method = "ML")$method)
})

test_that("real data: airquality's ozone and solar radiation on smooths of temperature and wind", {
  aq <- datasets::airquality
  aq$lOzone <- log(aq$Ozone)
  g <- expect_mvn_fit(list(lOzone ~ s(Temp) + s(Wind), Solar.R ~ s(Temp)), 2, aq,
                      newdata = stats::na.omit(aq)[1:10, ])
  # (the rows with a missing response dropped, as gam()'s na.omit)
  expect_identical(nrow(g$linear.predictors),
                   nrow(stats::na.omit(aq[, c("Ozone", "Temp", "Wind", "Solar.R")])))
})

test_that("fit$device says how the mvn fit ran; 'required' with no GPU is refused", {
  d <- mvn_data(200, seed = 5)
  fml <- list(y0 ~ s(x0), y1 ~ s(x2))
  g <- gam_gpu(fml, family = mgcv::mvn(d = 2), data = d, method = "REML", device = "off")
  expect_identical(g$device$backend, "cpu")
  expect_match(g$device$route, "mvn()'s log likelihood and its derivatives by gamgpu's engine",
               fixed = TRUE)
  expect_match(g$device$route, "sufficient statistics", fixed = TRUE)
  expect_match(g$device$route, "by R's BLAS on the host", fixed = TRUE)
  expect_identical(g$device$ll_rows, "gamgpu")
  expect_gt(g$device$ll_calls, 0)
  expect_null(g$device$ll_sessions)                    # (the host's products: no session)
  skip_if(device_usable(), "a GPU is usable here")
  gpu_telemetry(reset = TRUE)
  a <- gam_gpu(fml, family = mgcv::mvn(d = 2), data = d, method = "REML", device = "auto")
  expect_identical(a$device$backend, "cpu")
  expect_match(a$device$reason, "^fell back to the CPU")
  expect_identical(a$device$ll_sessions, 1L)
  expect_match(a$device$route, "on a model session's X", fixed = TRUE)
  expect_gt(sum(gpu_telemetry()$fallbacks), 0)
  expect_lt(rel_err(a$linear.predictors, g$linear.predictors), 1e-8)
  expect_error(gam_gpu(fml, family = mgcv::mvn(d = 2), data = d, method = "REML",
                       device = "required"), class = "gamgpu_device_unavailable")
})

test_that("an ll() that differs from gamgpu's runs the fit itself, said in fit$device and recorded", {
  d <- mvn_data(200, seed = 6)
  fml <- list(y0 ~ s(x0), y1 ~ s(x2))
  fam <- mgcv::mvn(d = 2)
  own <- fam$ll
  # (a family as another mgcv release might write it: its log likelihood
  # shifted by a constant, which moves no estimate)
  fam$ll <- function(y, X, coef, wt, family, offset = NULL, deriv = 0, d1b = NULL, d2b = NULL,
                     Hp = NULL, rank = 0, fh = NULL, D = NULL) {
    o <- own(y, X, coef, wt, family, offset, deriv, d1b, d2b, Hp, rank, fh, D)
    o$l <- o$l + 1
    o
  }
  a <- mgcv::gam(fml, family = fam, data = d, method = "REML")
  g <- gam_gpu(fml, family = fam, data = d, method = "REML", device = "off")
  expect_identical(g$device$ll_rows, "family")
  expect_match(g$device$route, "by the family's own ll() (gamgpu's log likelihood differed",
               fixed = TRUE)
  expect_identical(g$device$ll_calls, 0L)
  expect_identical(g$coefficients, a$coefficients)
  gpu_telemetry(reset = TRUE)
  g2 <- gam_gpu(fml, family = fam, data = d, method = "REML", device = "auto")
  r2 <- attr(gpu_telemetry(), "fallback_reasons")
  expect_true(any(r2$backend == "general_family" & grepl("mvn() log likelihood differed",
                                                            r2$reason, fixed = TRUE)))
  expect_identical(g2$coefficients, a$coefficients)
  expect_error(gam_gpu(fml, family = fam, data = d, method = "REML", device = "required"),
               class = "gamgpu_device_unavailable")
})

test_that("prior weights: gam() fits mvn() without them, and gam_gpu() says so", {
  d <- mvn_data(200, seed = 7)
  fml <- list(y0 ~ s(x0), y1 ~ s(x2))
  w <- runif(200, 0.5, 2)
  a <- mgcv::gam(fml, family = mgcv::mvn(d = 2), data = d, weights = w)
  a0 <- mgcv::gam(fml, family = mgcv::mvn(d = 2), data = d)
  expect_identical(a$coefficients, a0$coefficients)   # (gam()'s own: mvn()'s ll() has no wt)
  expect_warning(g <- gam_gpu(fml, family = mgcv::mvn(d = 2), data = d, weights = w,
                              method = "REML", device = "off"),
                 class = "gamgpu_weights_unused")
  expect_lt(rel_err(g$linear.predictors, a$linear.predictors), 1e-8)
  expect_equal(unname(g$prior.weights), w)
})

test_that("offsets are refused, in mgcv's words, as gam() refuses them", {
  d <- mvn_data(100, seed = 8)
  fml <- list(y0 ~ s(x0) + offset(x1), y1 ~ s(x2))
  expect_error(mgcv::gam(fml, family = mgcv::mvn(d = 2), data = d),
               "mvn does not yet handle offsets")
  expect_error(gam_gpu(fml, family = mgcv::mvn(d = 2), data = d, method = "REML",
                       device = "off"),
               "mvn does not yet handle offsets", class = "gamgpu_setup_failed")
})
