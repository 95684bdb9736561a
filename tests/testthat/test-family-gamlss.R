# mgcv's location-scale families and multinom(), general families whose
# ll() hands the rows' derivatives to gamlss.gH() for the products over
# the rows (R/general_family.R): gamgpu's products (src/family/family_gamlss.c,
# gamlss_blocks.c) against mgcv's gamlss.gH() at each derivative level
# gam.fit5() asks for, then gam_gpu() against mgcv::gam() family by family.
# Measured (CPU): products 1.2e-15 relative from mgcv's (the same sums in
# other orders); fits 3e-16 - 6e-15 of each linear predictor's range apart
# under mgcv 1.8-41, up to 7e-10 under 1.9-3 (gumbls, whose REML is flat
# there: equal to 8e-15, smoothing parameters 4e-8 apart, EDFs 1.3e-8).

gh_case <- function(K, seed = 1, n = 200) {
  set.seed(seed)
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
    # (mgcv's numbers to rounding: the same sums in other orders)
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

test_that("the products over many row jobs are mgcv's, whatever the threads and route", {
  state <- local_general_rows("gamgpu")
  g <- gh_case(3L, n = 3000)                  # (more than one job of rows)
  p <- ncol(g$X)
  M <- 2L
  Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
  D <- runif(p) + 0.5
  args <- list(g$X, g$jj, g$l1, g$l2, g$tri$i2, l3 = g$l3, i3 = g$tri$i3, l4 = g$l4,
               i4 = g$tri$i4, d1b = matrix(rnorm(p * M), p), d2b = matrix(rnorm(p * 3), p),
               deriv = 3, fh = eigen(Hp, symmetric = TRUE), D = D)
  a <- do.call(getFromNamespace("gamlss.gH", "mgcv"), args)
  state$general_threads <- 1L
  b1 <- do.call(gamgpu:::ls_gH, args)
  state$general_threads <- 2L
  .Call(gamgpu:::gg_threads_peak_r, TRUE)
  b2 <- do.call(gamgpu:::ls_gH, args)
  expect_identical(.Call(gamgpu:::gg_threads_peak_r, FALSE), 2L)
  expect_identical(b2, b1)
  expect_lt(rel_err(b1$lbb, a$lbb), 1e-14)
  expect_lt(rel_err(unlist(b1$d1H), unlist(a$d1H)), 1e-14)
  expect_lt(rel_err(b1$trHid2H, a$trHid2H), 1e-14)
  # (R's BLAS for the block products, where it is the faster)
  options(gamgpu.cpu_gram = "blas")
  gamgpu:::cpu_gram_option()
  b3 <- do.call(gamgpu:::ls_gH, args)
  expect_false(identical(b3$lbb, b1$lbb))
  expect_lt(rel_err(b3$lbb, a$lbb), 1e-14)
  expect_lt(rel_err(unlist(b3$d1H), unlist(a$d1H)), 1e-14)
  # (the traces' rows are gamgpu's on either route; the predictors'
  # derivatives X d2b are the BLAS's here: OpenBLAS's differ in the last
  # bits)
  expect_lt(rel_err(b3$trHid2H, b1$trHid2H), 1e-14)
  expect_lt(rel_err(b3$trHid2H, a$trHid2H), 1e-14)
})

# gam() and gam_gpu() on the same call, gam_gpu() by gam()'s own iteration
# around gamgpu's products (the subject here; the native route, the
# default, which does not call gamlss.gH(), is test-family-general-outer.R's):
# every linear predictor within 1e-8 of its range, the same REML,
# smoothing parameters, EDFs
expect_ls_fit <- function(formula, family, data) {
  local_gam_route()
  b <- mgcv::gam(formula, family = family, data = data)
  g <- gam_gpu(formula, family = family, data = data, method = "REML", device = "off")
  expect_s3_class(g, "gam_gpu")
  expect_identical(b$outer.info$conv, "full convergence")
  expect_identical(g$outer.info$conv, b$outer.info$conv)
  lb <- as.matrix(b$linear.predictors)
  lg <- as.matrix(g$linear.predictors)
  r <- apply(lb, 2, function(x) diff(range(x)))
  expect_lt(max(sweep(abs(lg - lb), 2, r, "/")), 1e-8)
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-11)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6)
  expect_lt(max(abs(g$edf - b$edf)), 1e-6)
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

test_that("bam()'s fREML, which does not fit these families, is refused for them", {
  d <- ls_data(50)
  expect_error(gam_gpu(list(x0 ~ s(x1), ~ s(x2)), family = mgcv::gaulss(), data = d,
                       device = "off"),
               class = "gamgpu_unsupported_method")
})

test_that("prior weights, which these families' ll() does not read, are unused as in gam(), with a warning", {
  d <- ls_data(200)
  d$yn <- d$f0 + rnorm(nrow(d)) * exp(d$x2 - 0.5)
  w <- seq(0.5, 2, length.out = nrow(d))
  fml <- list(yn ~ s(x0), ~ s(x2))
  b <- mgcv::gam(fml, family = mgcv::gaulss(), data = d, weights = w, method = "REML")
  expect_warning(g <- gam_gpu(fml, family = mgcv::gaulss(), data = d, weights = w,
                              method = "REML", device = "off"),
                 class = "gamgpu_weights_unused")
  expect_lt(max(abs(g$fitted.values - b$fitted.values)), 1e-8 * max(abs(b$fitted.values)))
  expect_identical(g$prior.weights, b$prior.weights)
  # (unit weights say nothing)
  expect_silent(gam_gpu(fml, family = mgcv::gaulss(), data = d, weights = rep(1, nrow(d)),
                        method = "REML", device = "off"))
})
