# The general families' row passes under a chosen product route
# (options(gamgpu.cpu_gram): "gamgpu" or "blas") and thread count, as a
# fit sets them (R/general_family.R), restored when the calling test ends.
local_general_rows <- function(route = "gamgpu", env = parent.frame()) {
  state <- gamgpu:::.gamgpu_state
  old <- options(gamgpu.cpu_gram = route)
  gamgpu:::cpu_gram_option()
  restore <- function() {
    state$general_threads <- NULL
    options(old)
    gamgpu:::cpu_gram_option()
  }
  do.call(on.exit, list(substitute(restore()), add = TRUE), envir = env)
  invisible(state)
}

# Data for the location-scale and multinom fits: a response of each
# family's kind beside the covariates x0, x1, x2.
ls_fit_data <- function(n = 400, seed = 5) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  f <- sin(2 * pi * d$x0) / 2 + d$x1
  d$y <- exp(f) + rnorm(n) * exp(d$x2 - 1.5)
  d$yu <- f - exp(d$x2 - 1.5) * log(-log(runif(n)))
  d$yg <- rgamma(n, shape = 1 / exp(d$x2 - 1), scale = exp(f) * exp(d$x2 - 1))
  pr <- cbind(1, exp(f - 1), exp(d$x2 - 0.5))
  d$yc <- apply(pr / rowSums(pr), 1, function(q) sample(0:2, 1, prob = q))
  d$yz <- ifelse(runif(n) < plogis(2 * d$x2 - 0.5), rpois(n, exp(f)), 0)
  d$yv <- f + exp(d$x2 - 1) * ((-log(runif(n)))^(-0.1) - 1) / 0.1
  d$yt <- mgcv::rTweedie(exp(f), p = 1.4, phi = 1.5)
  d
}

# The formulas of a fit of ls_fit_data() by a family: its response column,
# s(x0) + s(x1) for the first predictor, s(x2) for the scale's (gevlss()'s
# shape, twlss()'s power and shash()'s skewness and tail weight constant)
ls_fit_formula <- function(family) {
  y <- switch(family$family, gumbls = "yu", gammals = "yg", multinom = "yc", ziplss = "yz",
              gevlss = "yv", twlss = "yt", "y")
  first <- stats::reformulate(c("s(x0)", "s(x1)"), y)
  switch(family$family,
         gevlss = list(first, ~ s(x2), ~ 1),
         twlss = list(first, ~ 1, ~ s(x2)),
         shash = list(first, ~ s(x2), ~ 1, ~ 1),
         list(first, ~ s(x2)))
}

# Every linear predictor of fit b within tol of the range of a's (a
# constant one's: of its size), the same REML score (to score_tol) and
# EDFs (to 1e-6)
expect_ls_fits_close <- function(b, a, tol, score_tol) {
  la <- as.matrix(a$linear.predictors)
  r <- apply(la, 2, function(x) diff(range(x)))
  r <- ifelse(r > 0, r, pmax(apply(abs(la), 2, max), 1))
  expect_lt(max(sweep(abs(as.matrix(b$linear.predictors) - la), 2, r, "/")), tol)
  expect_equal(unname(b$gcv.ubre), unname(a$gcv.ubre), tolerance = score_tol)
  expect_lt(max(abs(b$edf - a$edf)), 1e-6)
}

# n rows of three linear predictors (columns 1:3, 4:5 and 6:7 of X, its
# "lpi"), x and z uniform, for the rows' tests of gevlss() and twlss()
ls_three_predictors <- function(n, seed) {
  set.seed(seed)
  x <- runif(n)
  z <- runif(n)
  X <- cbind(1, x, x^2, 1, z, 1, z^2)
  attr(X, "lpi") <- list(1:3, 4:5, 6:7)
  list(X = X, x = x, z = z)
}

# gam()'s own iteration around gamgpu's ll() (R/general_family.R) for the
# general families' fits until the calling test ends, where the test's
# subject is that route (its ll() calls, its products, its sessions per X):
# the native route (R/general_outer.R) is the default wherever it takes
# the call.
local_gam_route <- function(env = parent.frame()) {
  old <- options(gamgpu.general_route = "gam")
  do.call(on.exit, list(substitute(options(old)), add = TRUE), envir = env)
  invisible()
}

# Simulated survival rows for the cox.ph() device tests: 3000 rows of
# three covariates, times t with about 20% censored (d the event flag).
cox_device_data <- function() {
  set.seed(6)
  n <- 3000
  dat <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  dat$t <- rexp(n, exp((2 * sin(pi * dat$x0) + dat$x1 - dat$x2) / 2))
  dat$d <- as.numeric(dat$t < quantile(dat$t, 0.8))
  dat
}
