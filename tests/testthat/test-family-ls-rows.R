# The location-scale families' ll() in gamgpu's C (R/family_ls_rows.R,
# src/family/family_ls.c, inst/include/ls_math.h) against the family's own
# at every derivative level gam.fit5() asks for, then in fits against
# gam().  Measured (CPU): gaulss's and gumbls's log likelihood, its rows
# and gradient equal to mgcv's to the bit, Hessian 5e-19 - 9e-16
# relative, d1H 1.3e-15, the traces 2e-16, for each of the links;
# gammals's (digamma and its kin by gamgpu's series) 4e-16 - 6e-16;
# multinom's (K = 2 .. 4) to the bit, 5e-16 - 1.4e-15; ziplss's to the bit
# up to 3e-13 (l, where lgamma(y + 1) of counts near e^8 is libm's) and
# 1.1e-14 (lbb) in zipll()'s extreme branches; shash's rows (each
# derivative of one row, |z| from 0 to 1e150) to the bit, its sums 1e-15.

# Fixed derivative inputs of ll() for p coefficients and M smoothing
# parameters: d1b, d2b, an eigen-decomposition fh and D
ls_deriv_inputs <- function(p, M)
  list(d1b = matrix(cos(seq_len(p * M)) / 3, p),
       d2b = matrix(sin(seq_len(p * M * (M + 1) / 2)) / 5, p),
       fh = list(values = seq(2, 1, length.out = p), vectors = qr.Q(qr(diag(p) + 0.1))),
       D = seq(1, 1.5, length.out = p))

ls_rows_case <- function(link, n = 500, seed = 1) {
  set.seed(seed)
  fam <- mgcv::gaulss(link = list(link, "logb"))
  x <- runif(n)
  z <- runif(n)
  X <- cbind(1, x, x^2, 1, z)
  attr(X, "lpi") <- list(1:3, 4:5)
  coef <- switch(link, log = c(0.5, 0.3, -0.2, 0.4, 0.1), inverse = c(1, 0.2, 0.1, 0.4, 0.1),
                 sqrt = c(1.5, 0.2, 0.1, 0.4, 0.1), c(1, 2, -1, 0.4, 0.1))
  mu <- fam$linfo[[1]]$linkinv(drop(X[, 1:3] %*% coef[1:3]))
  list(fam = fam, X = X, coef = coef, y = mu + rnorm(n) * 0.5, n = n)
}

# b (gamgpu's rows) against a (the family's ll()) at derivative level
# deriv, M smoothing parameters; l compared where `l`.
expect_ls_ll_equal <- function(b, a, deriv, M, l = TRUE, tol = 1e-14) {
  if (l) expect_equal(b$l, a$l, tolerance = tol)
  if (deriv >= 1) {
    expect_lt(rel_err(b$lb, a$lb), tol)
    expect_lt(rel_err(b$lbb, a$lbb), tol)
  }
  if (deriv >= 3)
    expect_lt(rel_err(unlist(lapply(seq_len(M), function(i) b$d1H[, , i])), unlist(a$d1H)),
              10 * tol)
  if (deriv >= 4) expect_lt(rel_err(b$trHid2H, a$trHid2H), 10 * tol)
}

test_that("gaulss()'s rows in C equal the family's ll() for each link and level", {
  for (link in c("identity", "log", "inverse", "sqrt")) {
    r <- ls_rows_case(link)
    p <- ncol(r$X)
    M <- 2L
    d1b <- matrix(rnorm(p * M), p)
    d2b <- matrix(rnorm(p * 3), p)
    Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
    D <- runif(p) + 0.5
    spec <- gamgpu:::ls_rows_spec(r$fam)
    expect_identical(spec$links, c(switch(link, identity = 1L, log = 2L, inverse = 3L,
                                          sqrt = 8L), 11L))
    expect_identical(spec$link_par, c(0, 0.01))
    L <- suppressWarnings(chol(t(Hp * D) * D, pivot = TRUE))
    for (fh in list(eigen(Hp, symmetric = TRUE), L)) for (deriv in c(0, 1, 3, 4)) {
      a <- r$fam$ll(r$y, r$X, r$coef, rep(1, r$n), r$fam, deriv = deriv, d1b = d1b, d2b = d2b,
                    Hp = Hp, rank = p, fh = fh, D = D)
      b <- gamgpu:::ls_ll_c(spec, r$y, r$X, r$coef, attr(r$X, "lpi"), NULL, deriv, d1b, d2b,
                            fh, D)
      expect_lt(max(abs(b$l0 - a$l0)), 1e-13)
      expect_ls_ll_equal(b, a, deriv, M)
    }
  }
})

test_that("gumbls()'s and gammals()'s rows in C equal the families' ll()", {
  set.seed(3)
  n <- 500
  for (fam in list(mgcv::gumbls(), mgcv::gammals())) {
    x <- runif(n)
    z <- runif(n)
    X <- cbind(1, x, x^2, 1, z)
    attr(X, "lpi") <- list(1:3, 4:5)
    coef <- c(0.5, 0.3, -0.2, -0.4, 0.3)
    eta <- drop(X[, 1:3] %*% coef[1:3])
    y <- if (fam$family == "gammals") rgamma(n, shape = 2, scale = exp(eta) / 2)
         else eta - 0.5 * log(-log(runif(n)))
    p <- ncol(X)
    d1b <- matrix(rnorm(p * 2), p)
    d2b <- matrix(rnorm(p * 3), p)
    Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
    D <- runif(p) + 0.5
    spec <- gamgpu:::ls_rows_spec(fam)
    # (their scale's "log" is mgcv's lower-bounded link, b + log(1 + exp(eta)))
    expect_identical(spec$links, c(1L, 12L))
    expect_identical(spec$link_par, c(0, -7))
    for (deriv in c(0, 1, 3, 4)) {
      a <- fam$ll(y, X, coef, rep(1, n), fam, deriv = deriv, d1b = d1b, d2b = d2b, Hp = Hp,
                  rank = p, fh = eigen(Hp, symmetric = TRUE), D = D)
      b <- gamgpu:::ls_ll_c(spec, y, X, coef, attr(X, "lpi"), NULL, deriv, d1b, d2b,
                            eigen(Hp, symmetric = TRUE), D)
      expect_lt(max(abs(b$l0 - a$l0)), 1e-13 * max(abs(a$l0)))
      expect_ls_ll_equal(b, a, deriv, 2L)
    }
  }
})

test_that("ziplss()'s rows in C equal its ll(), in each of zipll()'s branches", {
  set.seed(6)
  n <- 600
  fam <- mgcv::ziplss()
  x <- runif(n)
  z <- runif(n)
  X <- cbind(1, x, x^2, 1, z)
  attr(X, "lpi") <- list(1:3, 4:5)
  p <- ncol(X)
  # (moderate predictors; large ones; the series of tiny ones; a Poisson
  # mean of e^8, whose lgamma(y + 1) is R's lgammafn() there, libm's here)
  for (coef in list(c(0.5, 0.3, -0.2, -0.4, 0.3), c(2, 1, 0, 3, -1), c(-14, 0, 0, -13, 0),
                    c(8, 0, 0, 1, 0))) {
    g <- drop(X[, 1:3] %*% coef[1:3])
    e <- drop(X[, 4:5] %*% coef[4:5])
    y <- ifelse(runif(n) < 1 - exp(-exp(e)), rpois(n, exp(g)), 0)
    d1b <- matrix(rnorm(p * 2), p)
    d2b <- matrix(rnorm(p * 3), p)
    Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
    D <- runif(p) + 0.5
    spec <- gamgpu:::ls_rows_spec(fam)
    for (deriv in c(0, 1, 3, 4)) {
      a <- fam$ll(y, X, coef, rep(1, n), fam, deriv = deriv, d1b = d1b, d2b = d2b, Hp = Hp,
                  rank = p, fh = eigen(Hp, symmetric = TRUE), D = D)
      b <- gamgpu:::ls_ll_c(spec, y, X, coef, attr(X, "lpi"), NULL, deriv, d1b, d2b,
                            eigen(Hp, symmetric = TRUE), D)
      expect_ls_ll_equal(b, a, deriv, 2L, tol = 1e-12)
    }
  }
})

test_that("multinom()'s rows in C equal its ll() for 3, 4 and 5 categories", {
  set.seed(4)
  n <- 400
  for (K in 2:4) {
    fam <- mgcv::multinom(K = K)
    x <- runif(n)
    X <- do.call(cbind, lapply(seq_len(K), function(k) cbind(1, x, x^2)))
    attr(X, "lpi") <- lapply(seq_len(K), function(k) (3 * (k - 1) + 1):(3 * k))
    coef <- rnorm(3 * K) * 0.5
    y <- sample(0:K, n, replace = TRUE)
    p <- ncol(X)
    d1b <- matrix(rnorm(p * 2), p)
    d2b <- matrix(rnorm(p * 3), p)
    Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
    D <- runif(p) + 0.5
    spec <- gamgpu:::ls_rows_spec(fam)
    for (deriv in c(0, 1, 3, 4)) {
      a <- fam$ll(y, X, coef, rep(1, n), fam, deriv = deriv, d1b = d1b, d2b = d2b, Hp = Hp,
                  rank = p, fh = eigen(Hp, symmetric = TRUE), D = D)
      b <- gamgpu:::ls_ll_c(spec, y, X, coef, attr(X, "lpi"), NULL, deriv, d1b, d2b,
                            eigen(Hp, symmetric = TRUE), D)
      # (at deriv 4 mgcv's multinom() returns its loop index as l, which
      # gam.fit5() does not read there; gamgpu's is the log likelihood)
      expect_ls_ll_equal(b, a, deriv, 2L, l = deriv < 4)
    }
  }
  fam <- mgcv::multinom(K = 2)
  X <- cbind(1, runif(20), 1, runif(20))
  attr(X, "lpi") <- list(1:2, 3:4)
  expect_error(gamgpu:::ls_ll_c(gamgpu:::ls_rows_spec(fam), rep(3, 20), X, rep(0.1, 4),
                                attr(X, "lpi"), NULL, 1, 0, 0, NULL, NULL),
               "response not in 0 to number of predictors + 1", fixed = TRUE)
  expect_null(gamgpu:::ls_rows_spec(mgcv::multinom(K = 5)))
})

test_that("gevlss()'s rows in C equal its ll() for its links, and with its shape near 0", {
  n <- 600
  r <- ls_three_predictors(n, seed = 3)
  X <- r$X
  x <- r$x
  z <- r$z
  M <- 3L
  p <- ncol(X)
  list2env(ls_deriv_inputs(p, M), environment())     # (d1b, d2b, fh, D)
  y <- 1 + x + exp(-0.5 + z) * ((-log(runif(n)))^(-0.15) - 1) / 0.15
  # (the shape's scaled logit at 1.19: xi near 0.15; at qlogis(2/3) +- a
  # little: xi within 1e-7 of 0, where mgcv keeps it off 0)
  for (case in list(list(link = "identity", coef = c(1, 1, 0, -0.5, 1, 1.19, 0)),
                    list(link = "log", coef = c(0.1, 0.3, 0, -0.5, 1, 1.19, 0)),
                    list(link = "identity", coef = c(1, 1, 0, -0.5, 1, qlogis(2 / 3) + 1e-8, 0)),
                    list(link = "identity", coef = c(1, 1, 0, -0.5, 1, qlogis(2 / 3) - 3e-8, 0)))) {
    fam <- mgcv::gevlss(link = list(case$link, "identity", "logit"))
    spec <- gamgpu:::ls_rows_spec(fam)
    expect_identical(spec$links, c(if (case$link == "log") 2L else 1L, 1L, 13L))
    yy <- if (case$link == "log") abs(y) + 0.1 else y
    for (deriv in c(0, 1, 3, 4)) {
      a <- fam$ll(yy, X, case$coef, rep(1, n), fam, deriv = deriv, d1b = d1b, d2b = d2b,
                  Hp = diag(p), rank = p, fh = fh, D = D)
      b <- gamgpu:::ls_ll_c(spec, yy, X, case$coef, attr(X, "lpi"), NULL, deriv, d1b, d2b,
                            fh, D)
      # (measured: l, l0 and lb to the bit, the products 1.3e-15)
      expect_identical(b$l0, as.vector(a$l0))
      expect_ls_ll_equal(b, a, deriv, M, tol = 1e-14)
    }
  }
  # a shape link gevlss() does not make is not taken
  fam <- mgcv::gevlss()
  fam$linfo[[3]]$linkinv <- function(eta) 2 * stats::plogis(eta) - 1
  expect_null(gamgpu:::ls_rows_spec(fam))
})

test_that("twlss()'s rows in C equal its ll(), zero responses and its (a, b) included", {
  n <- 600
  r <- ls_three_predictors(n, seed = 4)
  X <- r$X
  y <- mgcv::rTweedie(exp(0.5 + r$x), p = 1.5, phi = 1.2)
  expect_gt(sum(y == 0), 10)
  coef <- c(0.5, 1, 0, 0.1, 0.2, log(1.2), 0)
  for (fam in list(mgcv::twlss(), mgcv::twlss(a = 1.2, b = 1.8))) {
    spec <- gamgpu:::ls_rows_spec(fam)
    expect_identical(spec$links, c(2L, 1L, 1L))
    expect_identical(spec$link_par[2:3], c(get(".a", environment(fam$ll)),
                                           get(".b", environment(fam$ll))))
    for (deriv in c(0, 1)) {
      a <- with_mgcv(fam$ll(y, X, coef, rep(1, n), fam, deriv = deriv))
      b <- gamgpu:::ls_ll_c(spec, y, X, coef, attr(X, "lpi"), NULL, deriv, 0, 0, NULL, NULL)
      # (measured: the log likelihood to the bit, its rows 5e-16, gradient
      # 1.9e-15 and Hessian 1e-15: gamgpu's Tweedie series, tw()'s)
      expect_lt(max(abs(b$l0 - a$l0)), 1e-14 * max(abs(a$l0)))
      expect_ls_ll_equal(b, a, deriv, 0, tol = 1e-14)
    }
  }
  # a fit's ll() at gam.fit5()'s third and fourth derivative levels, which
  # twlss() does not have, is the family's own
  d <- ls_fit_data(300)
  g <- gam_gpu(ls_fit_formula(mgcv::twlss()), family = mgcv::twlss(), data = d,
               method = "REML", device = "off")
  expect_identical(g$device$ll_rows, "gamgpu")
  expect_identical(g$device$ll_delegated, 0L)
})

test_that("twlss() with an offset: fitted as gam() fits it (without it), and said", {
  # (gam()'s extended Fellner-Schall iteration hands mgcv's efsud() no
  # offset, under mgcv 1.8-41 and 1.9-3 alike)
  d <- ls_fit_data(300)
  d$o <- runif(nrow(d)) / 2
  fml <- list(yt ~ s(x0) + s(x1) + offset(o), ~ 1, ~ s(x2))
  # (twlss()'s ll() finds mgcv's ldTweedie() only with mgcv attached)
  b <- with_mgcv(mgcv::gam(fml, family = mgcv::twlss(), data = d))
  expect_warning(g <- gam_gpu(fml, family = mgcv::twlss(), data = d, method = "REML",
                              device = "off"), class = "gamgpu_offset_unused")
  expect_equal(g$linear.predictors, b$linear.predictors, tolerance = 1e-6)
  expect_identical(g$offset, b$offset)
  # (no word where there is no offset, nor for a family that takes one)
  expect_no_warning(gam_gpu(ls_fit_formula(mgcv::twlss()), family = mgcv::twlss(), data = d,
                            method = "REML", device = "off"))
  expect_no_warning(gam_gpu(list(y ~ s(x0) + offset(o), ~ s(x2)), family = mgcv::gaulss(),
                            data = d, method = "REML", device = "off"))
})

# shash()'s ll() and gamgpu's on one row at predictors eta (X a row of
# ones, one column a predictor): lb, lbb, d1H (d1b the identity) and the
# traces are the row's derivatives in eta and sums of its fourth
shash_one_row <- function(fam, y, eta) {
  X <- matrix(1, 1, 4)
  attr(X, "lpi") <- as.list(1:4)
  d2b <- matrix(sin(seq_len(40)), 4)
  fh <- list(values = rep(1, 4), vectors = diag(4))
  a <- fam$ll(y, X, eta, 1, fam, deriv = 4, d1b = diag(4), d2b = d2b, Hp = diag(4), rank = 4,
              fh = fh, D = rep(1, 4))
  b <- gamgpu:::ls_ll_c(gamgpu:::ls_rows_spec(fam), y, X, eta, attr(X, "lpi"), NULL, 4,
                        diag(4), d2b, fh, rep(1, 4))
  list(a = list(l0 = a$l0, lb = a$lb, lbb = a$lbb, d1H = unlist(a$d1H), tr = a$trHid2H),
       b = list(l0 = b$l0, lb = b$lb, lbb = b$lbb,
                d1H = unlist(lapply(1:4, function(i) b$d1H[, , i])), tr = b$trHid2H))
}

test_that("shash()'s rows in C equal its ll() at every level, for its b and phiPen", {
  n <- 500
  set.seed(8)
  x <- runif(n)
  z <- runif(n)
  X <- cbind(1, x, x^2, 1, z, 1, z, 1, z)
  attr(X, "lpi") <- list(1:3, 4:5, 6:7, 8:9)
  M <- 4L
  p <- ncol(X)
  list2env(ls_deriv_inputs(p, M), environment())     # (d1b, d2b, fh, D)
  y <- 0.5 + x - 0.5 * x^2 + exp(-0.7 + 0.4 * z) * sinh((asinh(rnorm(n)) + 0.3) / 1.1)
  # (the last: residuals of 1e3 to 1e12 scales, where .sqrtX2pm() is |z|)
  yx <- y
  yx[1:40] <- yx[1:40] + c(1e3, -1e5, 1e9, -1e12, 30, -200, 1e7, 5e8)
  for (case in list(list(fam = mgcv::shash(), y = y, b = 0.01, pen = 0.001,
                         coef = c(0.5, 1, -0.5, -0.7, 0.4, 0.2, 0.3, -0.1, 0.2)),
                    list(fam = mgcv::shash(b = 0.05, phiPen = 0.01), y = y, b = 0.05,
                         pen = 0.01, coef = c(0.5, 1, -0.5, -3, 0.4, -0.5, 0.3, 0.4, 0.2)),
                    list(fam = mgcv::shash(), y = yx, b = 0.01, pen = 0.001,
                         coef = c(0.5, 1, -0.5, -0.7, 0.4, 0.2, 0.3, -0.1, 0.2)))) {
    fam <- case$fam
    spec <- gamgpu:::ls_rows_spec(fam)
    expect_identical(spec$code, 8L)
    expect_identical(spec$links, c(1L, 14L, 1L, 1L))
    expect_identical(spec$link_par, c(0, case$b, 0, case$pen))
    for (deriv in c(0, 1, 3, 4)) {
      a <- fam$ll(case$y, X, case$coef, rep(1, n), fam, deriv = deriv, d1b = d1b, d2b = d2b,
                  Hp = diag(p), rank = p, fh = fh, D = D)
      b <- gamgpu:::ls_ll_c(spec, case$y, X, case$coef, attr(X, "lpi"), NULL, deriv, d1b,
                            d2b, fh, D)
      # (measured: l and l0 to the bit, the products 1e-15)
      expect_identical(b$l0, as.vector(a$l0))
      expect_ls_ll_equal(b, a, deriv, M, tol = 1e-14)
    }
  }
  # one row at a time, z = (y - mu) / (sigma delta) from 0 to 1e150, and
  # skewness and tail weight far from 0: each derivative within 1e-12 of
  # its largest (measured: to the bit), the non-finite ones where mgcv's are
  fam <- mgcv::shash()
  tau <- log(exp(-0.5) + 0.01)
  for (zz in c(0, 1e-300, 1e-12, 0.3, -2, 40, -1e3, 1e5, -1e7, 1e8, 3e8, -1e12, 1e20, 1e150)) {
    r <- shash_one_row(fam, 0.3 + zz * exp(tau) * exp(-0.1), c(0.3, -0.5, 0.2, -0.1))
    for (nm in names(r$a)) {
      u <- as.vector(r$a[[nm]])
      v <- as.vector(r$b[[nm]])
      fin <- is.finite(u)
      expect_identical(is.finite(v), fin, label = paste(zz, nm))
      expect_identical(is.na(v), is.na(u), label = paste(zz, nm))
      expect_lte(max(abs(u - v)[fin], 0), 1e-12 * max(abs(u[fin]), 0), label = paste(zz, nm))
    }
  }
  for (eta in list(c(0, 5, 3, 1.5), c(0, -8, -4, -2), c(1, 2, 20, 0), c(0, -4.6, 0, 4))) {
    r <- shash_one_row(fam, 0.7, eta)
    for (nm in names(r$a)) {
      expect_true(all(is.finite(r$a[[nm]])))
      expect_lte(max(abs(as.vector(r$b[[nm]]) - as.vector(r$a[[nm]]))),
                 1e-12 * max(abs(r$a[[nm]])), label = nm)
    }
  }
})

test_that("shash()'s offsets reach its own ll(), which refuses them in its words", {
  fam <- mgcv::shash()
  X <- cbind(1, runif(30), 1, 1, 1)
  attr(X, "lpi") <- list(1:2, 3, 4, 5)
  ll <- gamgpu:::general_family_with_ll(fam, "shash", NULL, gamgpu:::ls_rows_spec(fam))$ll
  coef <- c(0, 1, -0.5, 0, 0)
  y <- rnorm(30)
  expect_equal(ll(y, X, coef, rep(1, 30), fam, offset = list(NULL), deriv = 1)$l,
               fam$ll(y, X, coef, rep(1, 30), fam, deriv = 1)$l, tolerance = 1e-14)
  expect_error(ll(y, X, coef, rep(1, 30), fam, offset = runif(30), deriv = 1),
               "offset not still available for this family", fixed = TRUE)
  # a log scale link shash() does not make is not taken
  fam$linfo[[2]]$linkinv <- function(eta) log(exp(eta) + 0.02)
  expect_null(gamgpu:::ls_rows_spec(fam))
})

test_that("the rows take the predictors' offsets, or the predictors themselves", {
  r <- ls_rows_case("log")
  spec <- gamgpu:::ls_rows_spec(r$fam)
  off <- list(runif(r$n) * 0.1, NULL, 0)
  a <- r$fam$ll(r$y, r$X, r$coef, rep(1, r$n), r$fam, offset = off, deriv = 1)
  b <- gamgpu:::ls_ll_c(spec, r$y, r$X, r$coef, attr(r$X, "lpi"), off, 1, 0, 0, NULL, NULL)
  expect_equal(b$l, a$l, tolerance = 1e-14)
  expect_lt(rel_err(b$lbb, a$lbb), 1e-14)
  eta <- cbind(r$X[, 1:3] %*% r$coef[1:3] + off[[1]], r$X[, 4:5] %*% r$coef[4:5])
  e <- gamgpu:::ls_ll_c(spec, r$y, r$X, r$coef * 0, attr(r$X, "lpi"), NULL, 1, 0, 0, NULL,
                        NULL, eta = eta)
  expect_equal(e$l, a$l, tolerance = 1e-14)
  expect_lt(rel_err(e$lbb, a$lbb), 1e-14)
})

test_that("bad input to the rows is a classed error", {
  r <- ls_rows_case("identity", n = 20)
  spec <- gamgpu:::ls_rows_spec(r$fam)
  expect_error(gamgpu:::ls_ll_c(spec, r$y, r$X, r$coef, attr(r$X, "lpi"), NULL, 2, 0, 0,
                                NULL, NULL), class = "gamgpu_bad_input")
  expect_error(gamgpu:::ls_ll_c(spec, r$y[-1], r$X, r$coef, attr(r$X, "lpi"), NULL, 0, 0, 0,
                                NULL, NULL), class = "gamgpu_bad_input")
  expect_error(gamgpu:::ls_ll_c(replace(spec, "code", 9L), r$y, r$X, r$coef,
                                attr(r$X, "lpi"), NULL, 0, 0, 0, NULL, NULL),
               class = "gamgpu_bad_input")
  expect_null(gamgpu:::ls_rows_spec(mgcv::mvn(d = 2)))
})

test_that("gaulss(), gumbls(), gammals(), multinom(), ziplss(), gevlss(), twlss() and shash() fits with gamgpu's rows equal gam()'s", {
  # (gamgpu's ll() in gam()'s own iteration, which these fits select: the
  # native route's fits of these families are test-family-general-outer.R's)
  local_gam_route()
  d <- ls_fit_data()
  for (fam in list(mgcv::gaulss(), mgcv::gaulss(link = list("log", "logb")), mgcv::gumbls(),
                   mgcv::gammals(), mgcv::multinom(K = 2), mgcv::ziplss(), mgcv::gevlss(),
                   mgcv::twlss(), mgcv::shash())) {
    fml <- ls_fit_formula(fam)
    # (twlss()'s ll() finds mgcv's ldTweedie() only with mgcv attached;
    # R's "NaNs produced" of gevlss()'s trial steps under mgcv 1.9-3 are
    # gam()'s own)
    b <- withCallingHandlers(
      with_mgcv(mgcv::gam(fml, family = fam, data = d, method = "REML")),
      warning = function(w) if (grepl("NaNs produced", conditionMessage(w)))
        invokeRestart("muffleWarning"))
    g <- gam_gpu(fml, family = fam, data = d, method = "REML", device = "off")
    expect_identical(g$device$ll_rows, "gamgpu")
    expect_gt(g$device$ll_calls, 0)
    expect_identical(g$device$ll_delegated, 0L)
    expect_identical(b$outer.info$conv, "full convergence")
    expect_identical(g$outer.info$conv, b$outer.info$conv)
    # (measured: up to 7e-10 under reference BLAS, 1.07e-8 under OpenBLAS,
    # whose gam() differs in the last bits where REML is flat)
    expect_ls_fits_close(g, b, tol = 3e-8, score_tol = 1e-11)
    expect_identical(deparse(g$family$ll), deparse(b$family$ll))
  }
})

test_that("shash() fits with gamgpu's rows equal gam()'s on ?shash's data and on mcycle", {
  local_gam_route()                       # (gamgpu's ll() in gam()'s iteration)
  # (?shash's simulation, 300 rows; MASS's motorcycle accelerations)
  set.seed(847)
  n <- 300
  x <- seq(-4, 4, length.out = n)
  del <- 1 + 0.2 * cos(3 * x)
  d <- data.frame(x = x, y = 4 + x + x^2 + del * (0.5 + 0.4 * (x + 4) * 0.5) *
                    sinh((1 / del) * asinh(qnorm(runif(n))) + 2 * sin(x) / del))
  cases <- list(list(fml = list(y ~ s(x), ~ s(x), ~ s(x), ~ 1), data = d))
  if (requireNamespace("MASS", quietly = TRUE))
    cases <- c(cases, list(list(fml = list(accel ~ s(times, k = 20), ~ s(times, k = 10), ~ 1,
                                           ~ 1), data = MASS::mcycle)))
  for (case in cases) {
    b <- mgcv::gam(case$fml, family = mgcv::shash(), data = case$data, method = "REML")
    g <- gam_gpu(case$fml, family = mgcv::shash(), data = case$data, method = "REML",
                 device = "off")
    expect_identical(g$device$ll_rows, "gamgpu")
    expect_identical(g$device$ll_delegated, 0L)
    expect_identical(b$outer.info$conv, "full convergence")
    expect_identical(g$outer.info$conv, b$outer.info$conv)
    # (measured, mgcv 1.8-41 and 1.9-3: the predictors within 5e-15 and
    # 1.9e-12 of their ranges, log sp 7e-13 and 1e-11, EDFs 1.3e-12 and
    # 3.3e-11)
    expect_ls_fits_close(g, b, tol = 1e-8, score_tol = 1e-11)
    expect_lt(max(abs(log(g$sp) - log(b$sp))), 1e-6)
  }
})

test_that("a family whose rows differ from gamgpu's keeps its own ll(), and says so", {
  d <- ls_fit_data(300)
  fam <- mgcv::gaulss()
  # (a family as another mgcv release might write it: its log likelihood
  # shifted by a constant, which moves no fit but differs from ls_math.h's)
  src <- paste(deparse(body(fam$ll)), collapse = "\n")
  body(fam$ll) <- parse(text = sub("0.5 * log(2 * pi)", "0.25 * log(2 * pi)", src,
                                   fixed = TRUE))[[1]]
  fml <- list(y ~ s(x0), ~ s(x2))
  b <- mgcv::gam(fml, family = fam, data = d, method = "REML")
  g <- gam_gpu(fml, family = fam, data = d, method = "REML", device = "off")
  expect_identical(g$device$ll_rows, "family")
  expect_match(g$device$route, "differed from the family's own")
  # (the native route, which has only gamgpu's rows, declines it, and says so)
  expect_match(g$device$route_reason, "differed from the family's own")
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-11)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)), 1e-8 * max(abs(b$fitted.values)))
})
