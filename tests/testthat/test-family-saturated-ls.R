# family$ls() with its row terms computed once per distinct argument
# (R/family_ls.R) is mgcv's own, bit for bit, and used where it applies.

ls_rows <- function(n, fam) {
  set.seed(3)
  mu <- exp(1 + sin(seq_len(n) / 50))
  y <- switch(fam, Gamma = rgamma(n, shape = 2, rate = 2 / mu), poisson = rpois(n, mu),
              nb = rnbinom(n, mu = mu, size = 3), binomial = rbinom(n, 1, 0.3))
  w <- sample(c(1, 1, 1, 2, 0.5, 0), n, replace = TRUE)
  list(y = y, w = w)
}

test_that("Gamma's, poisson's and binomial's ls() equal mgcv's bit for bit", {
  for (name in c("Gamma", "poisson", "binomial")) {
    fam <- gamgpu:::outer_family(switch(name, Gamma = Gamma(link = "log"), poisson = poisson(),
                                        binomial = binomial()))
    r <- ls_rows(5000, name)
    n <- rep(1, 5000)
    own <- gamgpu:::mgcv_visible(fam$ls)
    fast <- gamgpu:::saturated_ls(fam, r$y, r$w, n)
    # (the compressed function, not the family's own, was taken)
    expect_true(exists("d", envir = environment(fast), inherits = FALSE))
    for (phi in c(0.3, 1, 2.7)) expect_identical(fast(phi), own(r$y, r$w, n, phi))
  }
})

test_that("binomial's ls() with trials equals mgcv's", {
  fam <- gamgpu:::outer_family(binomial())
  set.seed(4)
  m <- sample(1:5, 4000, replace = TRUE)
  y <- rbinom(4000, m, 0.4) / m
  fast <- gamgpu:::saturated_ls(fam, y, m, m)
  expect_identical(fast(1), gamgpu:::mgcv_visible(fam$ls)(y, m, m, 1))
})

test_that("binary rows of unit weight (y alone varies) give mgcv's ls()", {
  fam <- gamgpu:::outer_family(binomial())
  set.seed(5)
  y <- rbinom(3000, 1, 0.3)
  one <- rep(1, 3000)
  fast <- gamgpu:::saturated_ls(fam, y, one, one)
  expect_true(exists("d", envir = environment(fast), inherits = FALSE))
  expect_identical(fast(1), gamgpu:::mgcv_visible(fam$ls)(y, one, one, 1))
  # (the key: y itself where the trials and weights are one value)
  expect_identical(gamgpu:::triple_key(y, one, one), y)
  k <- gamgpu:::triple_key(y, one, rep(c(1, 2), 1500))
  expect_identical(match(k, unique(k)), match(paste(y, rep(c(1, 2), 1500)),
                                              unique(paste(y, rep(c(1, 2), 1500)))))
})

test_that("nb()'s ls() equals mgcv's bit for bit at every theta", {
  fam <- mgcv::nb()
  r <- ls_rows(5000, "nb")
  fast <- gamgpu:::saturated_ls(fam, r$y, r$w)
  expect_true(exists("d", envir = environment(fast), inherits = FALSE))
  # (all but LSTH1, the rows' terms of lsth1, which the outer iteration
  # does not take)
  for (th in c(-1, 0.2, 1.5, 3))
    expect_identical(fast(th, 1), fam$ls(r$y, r$w, th, 1)[c("ls", "lsth1", "lsth2")])
})

test_that("sum_spread() is R's sum() of the spread terms", {
  set.seed(6)
  t <- rnorm(7) * 1e3
  i <- sample(7L, 1e4, replace = TRUE)
  v <- runif(1e4)
  expect_identical(gamgpu:::sum_spread(t, i, v, "*"), sum(t[i] * v))
  expect_identical(gamgpu:::sum_spread(t, i, v, "-"), sum(t[i] - v))
  expect_identical(gamgpu:::sum_spread(t, i, v, "/"), sum(t[i] / v))
  expect_identical(gamgpu:::sum_spread(t, i, NULL, "none"), sum(t[i]))
  expect_error(gamgpu:::sum_spread(t, c(i, 8L), c(v, 1), "*"), class = "gamgpu_bad_input")
  expect_error(gamgpu:::sum_spread(t, i, v[-1], "*"), class = "gamgpu_bad_input")
})

test_that("rows whose arguments seldom repeat, and other families, keep mgcv's ls()", {
  fam <- gamgpu:::outer_family(Gamma(link = "log"))
  set.seed(5)
  y <- rgamma(300, 2)
  w <- runif(300)
  f <- gamgpu:::saturated_ls(fam, y, w, rep(1, 300))
  expect_identical(f(1.1), gamgpu:::mgcv_visible(fam$ls)(y, w, rep(1, 300), 1.1))
  expect_null(gamgpu:::ls_gamma(y, w, NULL))
  expect_null(gamgpu:::ls_by_distinct(gamgpu:::outer_family(inverse.gaussian())))
  expect_null(gamgpu:::ls_by_distinct(mgcv::tw()))
})

test_that("a compressed ls() that disagrees with the family's own is not used", {
  fam <- gamgpu:::outer_family(poisson())
  r <- ls_rows(2000, "poisson")
  fam$ls <- function(y, w, n, scale) c(sum(dpois(y, y, log = TRUE) * w) + 1, 0, 0)
  f <- gamgpu:::saturated_ls(fam, r$y, r$w, rep(1, 2000))
  expect_identical(f(1), fam$ls(r$y, r$w, rep(1, 2000), 1))
})

test_that("nb()'s aic by distinct counts is mgcv's to the bit, and taken by the fit", {
  r <- ls_rows(20000, "nb")
  set.seed(6)
  mu <- exp(1 + sin(seq_along(r$y) / 50)) * runif(length(r$y), 0.8, 1.2)
  for (th in c(-1, 0.4, 2)) {
    fam <- mgcv::nb(theta = exp(th))
    own <- fam$aic(r$y, mu, th, r$w, 1)
    expect_identical(gamgpu:::aic_nb(r$y, mu, th, r$w), own)
    expect_identical(gamgpu:::efam_aic(fam, "negbin", r$y, mu, r$w, 1), own)
  }
  # counts that seldom repeat: the family's own
  expect_null(gamgpu:::aic_nb(seq_len(100) + 0.5, rep(2, 100), 0, rep(1, 100)))
  # the fit's aic is gam()'s
  set.seed(7)
  n <- 3000
  d <- data.frame(x = runif(n))
  d$y <- rnbinom(n, mu = exp(1 + sin(3 * d$x)), size = 2)
  g <- gam_gpu(y ~ s(x), family = mgcv::nb(), data = d, method = "REML", device = "off")
  b <- mgcv::gam(y ~ s(x), family = mgcv::nb(), data = d, method = "REML")
  expect_equal(g$aic, b$aic, tolerance = 1e-9)
})
