# The C families (family.c) against R's own family objects, row by row.
combos <- list(
  list(stats::gaussian, c("identity", "log", "inverse")),
  list(stats::binomial, c("logit", "probit", "cloglog", "cauchit", "log")),
  list(stats::quasibinomial, c("logit", "probit", "cloglog")),
  list(stats::poisson, c("log", "identity", "sqrt")),
  list(stats::quasipoisson, c("log", "sqrt")),
  list(stats::Gamma, c("inverse", "log", "identity")),
  list(stats::inverse.gaussian, c("1/mu^2", "inverse", "log", "identity")))

eta_for <- function(fam) {
  set.seed(1)
  mu <- switch(fam$family,
               binomial = , quasibinomial = stats::runif(200, 0.01, 0.99),
               gaussian = stats::runif(200, 0.2, 5),
               stats::runif(200, 0.2, 5))
  eta <- fam$linkfun(mu)
  if (fam$family %in% c("binomial", "quasibinomial") && fam$link == "logit")
    eta <- c(eta, -40, 40, -29.9, 30.1)          # R's clamping thresholds
  if (fam$link == "probit") eta <- c(eta, -9, 9)
  if (fam$link == "cloglog") eta <- c(eta, -40, 4)
  eta
}

test_that("C link, variance, deviance and IRLS rows match R's families", {
  for (cmb in combos) for (lk in cmb[[2]]) {
    fam <- cmb[[1]](link = lk)
    eta <- eta_for(fam)
    mu <- fam$linkinv(eta)
    set.seed(2)
    y <- switch(fam$family,
                binomial = , quasibinomial = stats::rbinom(length(eta), 1, 0.5),
                poisson = , quasipoisson = stats::rpois(length(eta), 2),
                gaussian = abs(stats::rnorm(length(eta), 2)) + 0.1,
                stats::rgamma(length(eta), 2) + 0.05)
    y <- as.numeric(y)
    wt <- stats::runif(length(eta), 0.5, 2)
    r <- .Call(gamgpu:::gg_family_rows, fam$family, fam$link, eta, y, wt, NULL)
    lab <- paste(fam$family, lk)
    expect_equal(r$mu, mu, tolerance = 1e-13, label = lab)
    expect_equal(r$mu.eta, fam$mu.eta(eta), tolerance = 1e-12, label = lab)
    expect_equal(r$variance, fam$variance(mu), tolerance = 1e-13, label = lab)
    expect_equal(r$dev.resids, fam$dev.resids(y, mu, wt), tolerance = 1e-12, label = lab)
    ok <- is.finite(fam$linkfun(mu)) & mu > 1e-10 & mu < 1 - 1e-10
    expect_equal(r$linkfun[ok], fam$linkfun(mu)[ok], tolerance = 1e-10, label = lab)
    mue <- fam$mu.eta(eta)
    expect_equal(r$w, wt * mue^2 / fam$variance(mu), tolerance = 1e-12, label = lab)
    expect_equal(r$z, eta + (y - mu) / mue, tolerance = 1e-12, label = lab)
  }
})

test_that("C starting values are R's family$initialize", {
  y <- c(0, 1, 0.5, 1, 0); w <- c(1, 2, 4, 1, 0)
  r <- .Call(gamgpu:::gg_family_rows, "binomial", "logit", rep(0, 5), y, w, NULL)
  y2 <- y; y2[w == 0] <- 0
  expect_equal(r$mustart, (w * y2 + 0.5) / (w + 1))
  r <- .Call(gamgpu:::gg_family_rows, "poisson", "log", rep(0, 3), c(0, 2, 5), rep(1, 3), NULL)
  expect_equal(r$mustart, c(0, 2, 5) + 0.1)
})

test_that("unknown families and links are classed errors in C", {
  expect_error(.Call(gamgpu:::gg_family_rows, "tweedie", "log", 1, 1, 1, NULL),
               class = "gamgpu_bad_family")
  expect_error(.Call(gamgpu:::gg_family_rows, "poisson", "logit", 1, 1, 1, NULL),
               class = "gamgpu_bad_link")
})
