# bench/cpu_models.R -- issue 40's data and models, shared by
# bench/cpu_discrete.R and bench/cpu_memory.R: gaussian with a 20-level
# factor, two cr smooths (k = 20) and te(8, 8); binomial with three tp
# smooths (k = 20) and a linear term; poisson with a random effect (50
# levels) and a by-factor smooth.
cpu_sim <- function(n) {
  set.seed(1)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), x3 = runif(n),
                  fac = factor(sample(letters[1:20], n, TRUE)),
                  re = factor(sample(1:50, n, TRUE)), g = factor(sample(1:3, n, TRUE)))
  f <- sin(2 * pi * d$x0) + exp(d$x1) / 3 + d$x2 * d$x3 + (as.integer(d$fac) %% 4) / 4
  d$y <- f + rnorm(n)
  d$yb <- rbinom(n, 1, plogis(f - 1))
  d$yp <- rpois(n, exp(0.3 * f + rnorm(50, 0, 0.3)[d$re] + 0.2 * as.integer(d$g)))
  d
}
cpu_models <- list(
  list(name = "gaussian fac + 2 cr(20) + te(8,8)", family = gaussian(),
       f = y ~ fac + s(x0, bs = "cr", k = 20) + s(x1, bs = "cr", k = 20) + te(x2, x3, k = c(8, 8))),
  list(name = "binomial 3 tp(20) + linear", family = binomial(),
       f = yb ~ s(x0, k = 20) + s(x1, k = 20) + s(x2, k = 20) + x3),
  list(name = "poisson re(50) + by-factor", family = poisson(),
       f = yp ~ g + s(re, bs = "re") + s(x0, by = g, bs = "cr") + s(x1, bs = "cr")))

