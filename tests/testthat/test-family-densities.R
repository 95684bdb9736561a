# The log densities of the fit's aic (src/family/family_dens.c) are pure C, so that
# they can run on helper threads; they must give R's dpois(), dbinom() and
# dgamma() (log = TRUE) to rounding, and count where R would warn.

ldens <- function(which, x, a, b = rep(0, length(x)))
  .Call(gamgpu:::gg_log_density_r, which, as.double(x), as.double(a), as.double(b))

# |C - R| relative to max(1, |R|); non-finite values must be identical
expect_density <- function(got, ref, tol = 1e-14) {
  fin <- is.finite(ref)
  expect_identical(got[!fin], ref[!fin])
  expect_true(all(is.finite(got[fin])))
  expect_lt(max(abs(got[fin] - ref[fin]) / pmax(1, abs(ref[fin]))), tol)
}

test_that("log dpois is R's", {
  set.seed(1)
  x <- c(stats::rpois(3000, 3), sample(0:400, 2000, TRUE))
  lam <- c(stats::rexp(3000, 1 / 3), stats::runif(2000, 0, 500))
  # the cases of the saddle point method: x near lambda (bd0's series),
  # Stirling's error at half integers up to 15 and its series beyond, tiny
  # and huge lambda, x = 0
  g <- expand.grid(x = c(0, 1, 2, 5, 14, 15, 16, 30, 36, 81, 501, 1e5, 1e9),
                   l = c(1e-300, 1e-10, 0.1, 1, 3, 15.5, 100, 1e5, 1e10))
  x <- c(x, g$x, 0:60)
  lam <- c(lam, g$l, 0:60 + 0.25)
  r <- ldens("pois", x, lam)
  expect_density(r$value, stats::dpois(x, lam, log = TRUE))
  expect_identical(r$nonint, 0L)
  # R's special cases, and its non-integer rule: |x - round(x)| > 1e-7 max(1, |x|)
  xs <- c(NA, NaN, -1, Inf, 3, 3.5, 3 + 1e-8, 3 + 1e-6, 0, 2, 1e9 + 0.5)
  ls <- c(1, 1, 1, 1, -1, 2, 3, 3, 0, 0, 1e9)
  r <- ldens("pois", xs, ls)
  expect_identical(r$value, suppressWarnings(stats::dpois(xs, ls, log = TRUE)))
  expect_identical(r$nonint, 2L)     # 3.5 and 3 + 1e-6; 1e9 + 0.5 is within 1e-7 |x|
  expect_warning(stats::dpois(3 + 1e-6, 3), "non-integer")
  expect_silent(stats::dpois(3 + 1e-8, 3))
})

test_that("log dbinom is R's", {
  set.seed(2)
  n <- sample(1:500, 4000, TRUE)
  p <- c(stats::runif(3000), stats::runif(500, 0, 0.05), 1 - stats::runif(500, 0, 0.05))
  x <- stats::rbinom(4000, n, p)
  x[1:200] <- 0
  x[201:400] <- n[201:400]
  n <- c(n, 1, 1, 1, 0, 5, 5, 1e6, 1e6, 7)
  x <- c(x, 0, 1, 1, 0, 0, 5, 5e5, 3, 9)
  p <- c(p, 0.3, 0.3, 0, 0.5, 1e-20, 1 - 1e-16, 0.5, 1e-6, 0.5)
  r <- ldens("binom", x, n, p)
  expect_density(r$value, stats::dbinom(x, n, p, log = TRUE))
  expect_identical(r$nonint, 0L)
  xs <- c(NA, 1, 1, 1, 2.5, -1)
  ns <- c(3, 3.5, -2, 3, 3, 3)
  ps <- c(0.5, 0.5, 0.5, 1.5, 0.5, 0.5)
  r <- ldens("binom", xs, ns, ps)
  expect_identical(r$value, suppressWarnings(stats::dbinom(xs, ns, ps, log = TRUE)))
  expect_identical(r$nonint, 1L)
})

test_that("log dgamma is R's", {
  set.seed(3)
  y <- stats::rgamma(4000, shape = 2)
  shape <- c(stats::runif(1500, 0.05, 1), stats::runif(1500, 1, 20), stats::rexp(1000, 1 / 100))
  shape[1:20] <- c(0.5, 1, 1.5, 2, 7.5, 15, 16, 1, 1, 1, 3, 3, 3, 0.2, 0.2, 40, 90, 600, 1e4, 1e6)
  scale <- stats::rexp(4000)
  # 1e-13: at the worst of these points (y = 2.764, shape = 187.15, scale =
  # 0.01447) R's value is the one off, by 2.9e-14; ours is within 1e-15 of
  # the exact 0.64148972698139665 (40-digit arithmetic)
  expect_density(ldens("gamma", y, shape, scale)$value,
                 stats::dgamma(y, shape, scale = scale, log = TRUE), tol = 1e-13)
  ys <- c(0, 0, 0, 1, -1, 2, NaN, 0)
  ss <- c(0.5, 1, 2, 0, 1, -1, 1, 0)
  sc <- c(2, 2, 2, 1, 1, 1, 1, 1)
  expect_identical(ldens("gamma", ys, ss, sc)$value,
                   suppressWarnings(stats::dgamma(ys, ss, scale = sc, log = TRUE)))
})

test_that("the fits' aic is family$aic's", {
  dat <- sim_data(2000, seed = 4)
  n <- nrow(dat)
  g <- gam_gpu(yp ~ s(x0) + s(x1), family = poisson, data = dat, device = "off")
  ref <- poisson()$aic(dat$yp, 1, g$fitted.values, rep(1, n), g$deviance) + 2 * sum(g$edf)
  expect_equal(g$aic, ref, tolerance = 1e-13)
  g <- gam_gpu(yg ~ s(x0) + s(x1), family = Gamma(link = "log"), data = dat, device = "off")
  ref <- Gamma()$aic(dat$yg, 1, g$fitted.values, rep(1, n), g$sig2 * n) + 2 * sum(g$edf)
  expect_equal(g$aic, ref, tolerance = 1e-13)
})

test_that("an outer fit's Gamma and inverse.gaussian aic, summed in C, is R's to rounding", {
  set.seed(8)
  n <- 20000
  y <- stats::rgamma(n, 2, 2)
  mu <- y * stats::runif(n, 0.5, 1.5)
  w <- sample(c(1, 2, 0.5, 0), n, TRUE)
  for (fam in list(Gamma(link = "log"), Gamma(), inverse.gaussian(), Gamma(link = power(1/3)))) {
    dev <- 0.7 * sum(w)
    ref <- fam$aic(y, 1, mu, w, dev)
    for (nt in c(1L, 3L)) {
      got <- .Call(gamgpu:::gg_family_aic_r, fam$family, y, mu, w, dev, nt)
      expect_lt(abs(got - ref), 1e-13 * abs(ref), label = paste(fam$family, fam$link, nt))
    }
    # (outer_finish()'s route to it)
    P <- list(y = y, w = w, ls_n = 1)
    expect_identical(gamgpu:::outer_aic(fam, P, mu, dev, 2L),
                     .Call(gamgpu:::gg_family_aic_r, fam$family, y, mu, w, dev, 2L))
  }
  # any other family: R's own
  expect_error(.Call(gamgpu:::gg_family_aic_r, "poisson", y, mu, w, 1, 1L),
               class = "gamgpu_bad_family")
  P <- list(y = round(y), w = w, ls_n = 1)
  expect_identical(gamgpu:::outer_aic(poisson(), P, mu, 1, 1L), poisson()$aic(round(y), 1, mu, w, 1))
})
