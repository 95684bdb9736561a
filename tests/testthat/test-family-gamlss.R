# mgcv's location-scale families and multinom(), general families whose
# ll() hands the rows' derivatives to gamlss.gH() for the products over
# the rows (R/general_family.R): gamgpu's products (src/family/family_gamlss.c)
# against mgcv's gamlss.gH() at each derivative level gam.fit5() asks for,
# then gam_gpu() against mgcv::gam() family by family.  Measured (CPU):
# products equal to mgcv's bit for bit (R's reference BLAS); fits 1e-15 -
# 1e-14 of each linear predictor's range apart, REML equal to 1e-13.

gh_case <- function(K, seed = 1) {
  set.seed(seed)
  n <- 200
  p <- 3 * K + 1
  X <- matrix(rnorm(n * p), n)
  jj <- c(list(1:4), lapply(seq_len(K - 1), function(k) 4 + (3 * (k - 1) + 1):(3 * k)))
  tri <- mgcv::trind.generator(K)
  cnt <- function(i) max(i)
  list(X = X, jj = jj, tri = tri,
       l1 = matrix(rnorm(n * K), n), l2 = matrix(rnorm(n * cnt(tri$i2)), n),
       l3 = matrix(rnorm(n * cnt(tri$i3)), n), l4 = matrix(rnorm(n * cnt(tri$i4)), n))
}

expect_gh_equal <- function(K) {
  g <- gh_case(K)
  p <- ncol(g$X)
  M <- 3L
  d1b <- matrix(rnorm(p * M), p)
  d2b <- matrix(rnorm(p * M * (M + 1) / 2), p)
  Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
  D <- runif(p) + 0.5
  L <- suppressWarnings(chol(t(Hp * D) * D, pivot = TRUE))
  for (fh in list(L, eigen(Hp, symmetric = TRUE))) for (deriv in c(0, 2, 3)) {
    args <- list(g$X, g$jj, g$l1, g$l2, g$tri$i2, l3 = g$l3, i3 = g$tri$i3, l4 = g$l4,
                 i4 = g$tri$i4, d1b = d1b, d2b = d2b, deriv = deriv, fh = fh, D = D)
    a <- do.call(getFromNamespace("gamlss.gH", "mgcv"), args)
    b <- do.call(gamgpu:::ls_gH, args)
    # (the same BLAS calls on the same operands and R's long double sums:
    # mgcv's numbers to the last bit with R's reference BLAS)
    expect_lt(rel_err(b$lb, a$lb), 1e-14)
    expect_lt(rel_err(b$lbb, a$lbb), 1e-14)
    if (deriv >= 2) expect_lt(rel_err(unlist(b$d1H), unlist(a$d1H)), 1e-14)
    if (deriv >= 3) expect_lt(rel_err(b$trHid2H, a$trHid2H), 1e-14)
  }
}

test_that("gamgpu's gamlss.gH() products equal mgcv's (2 and 3 linear predictors)", {
  expect_gh_equal(2L)
  expect_gh_equal(3L)
})

# gam() and gam_gpu() on the same call: every linear predictor within
# 1e-9 of its range, the same REML, smoothing parameters, EDFs
expect_ls_fit <- function(formula, family, data) {
  b <- mgcv::gam(formula, family = family, data = data)
  g <- gam_gpu(formula, family = family, data = data, method = "REML", device = "off")
  expect_s3_class(g, "gam_gpu")
  expect_identical(b$outer.info$conv, "full convergence")
  expect_identical(g$outer.info$conv, b$outer.info$conv)
  lb <- as.matrix(b$linear.predictors)
  lg <- as.matrix(g$linear.predictors)
  r <- apply(lb, 2, function(x) diff(range(x)))
  expect_lt(max(sweep(abs(lg - lb), 2, r, "/")), 1e-9)
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-11)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6)
  expect_lt(max(abs(g$edf - b$edf)), 1e-8)
  expect_gt(g$device$ll_calls, 0)
  expect_identical(g$device$ll_delegated, 0L)
  expect_identical(deparse(g$family$ll), deparse(b$family$ll))
  pb <- predict(b, data[1:5, ], type = "response")
  pg <- predict(g, data[1:5, ], type = "response")
  expect_lt(max(abs(pg - pb)), 1e-8 * max(1, abs(pb)))
  invisible(g)
}

test_that("gaulss() on mcycle: gam()'s fit", {
  skip_if_not_installed("MASS")
  g <- expect_ls_fit(list(accel ~ s(times, k = 20, bs = "ad"), ~ s(times)),
                     mgcv::gaulss(), MASS::mcycle)
  expect_match(g$device$route, "gaulss")
})

ls_data <- function(n = 300, seed = 2) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$f0 <- 2 * sin(pi * d$x0)
  d$f1 <- exp(2 * d$x1) / 4
  d
}

test_that("gaulss(), gammals() and gumbls(): gam()'s fits", {
  d <- ls_data()
  d$yn <- d$f0 + d$f1 + rnorm(nrow(d)) * exp(d$x2 - 0.5)
  expect_ls_fit(list(yn ~ s(x0) + s(x1), ~ s(x2)), mgcv::gaulss(), d)
  mu <- exp(d$f0 / 2 + 0.2)
  sc <- exp(d$x2 - 1)
  d$yg <- rgamma(nrow(d), shape = 1 / sc, scale = mu * sc)
  expect_ls_fit(list(yg ~ s(x0) + s(x1), ~ s(x2)), mgcv::gammals(), d)
  d$yu <- d$f0 + d$f1 - exp(d$x2 - 1) * log(-log(runif(nrow(d))))
  expect_ls_fit(list(yu ~ s(x0) + s(x1), ~ s(x2)), mgcv::gumbls(), d)
})

test_that("ziplss() and multinom(): gam()'s fits", {
  d <- ls_data(400)
  eta <- d$f0 - 0.5
  p0 <- binomial()$linkinv(2 * d$x1 - 0.5)
  d$yz <- ifelse(runif(nrow(d)) < p0, rpois(nrow(d), exp(eta)), 0)
  expect_ls_fit(list(yz ~ s(x0), ~ s(x1)), mgcv::ziplss(), d)
  e1 <- d$f0 - 1
  e2 <- d$f1 - 1
  pr <- cbind(1, exp(e1), exp(e2))
  pr <- pr / rowSums(pr)
  d$yc <- apply(pr, 1, function(p) sample(0:2, 1, prob = p))
  expect_ls_fit(list(yc ~ s(x0) + s(x1), ~ s(x0) + s(x1)), mgcv::multinom(K = 2), d)
})

test_that("mvn(), whose ll() is its own, stays refused", {
  d <- ls_data(50)
  e <- expect_error(gam_gpu(list(x0 ~ s(x1), x2 ~ s(x1)), family = mgcv::mvn(d = 2),
                            data = d, method = "REML", device = "off"),
                    class = "gamgpu_bad_family")
  expect_match(conditionMessage(e), "'Multivariate normal' (an mgcv general family)", fixed = TRUE)
})

test_that("bam()'s fREML, which does not fit these families, is refused for them", {
  d <- ls_data(50)
  expect_error(gam_gpu(list(x0 ~ s(x1), ~ s(x2)), family = mgcv::gaulss(), data = d,
                       device = "off"),
               class = "gamgpu_unsupported_method")
})
