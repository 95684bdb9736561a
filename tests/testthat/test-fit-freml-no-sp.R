# bam() with no smoothing parameter to estimate (a parametric model, or
# every sp fixed) fits by "REML" and scores the final working model by
# gam(G =) (R/bam_no_sp.R): gam_gpu()'s default "fREML" reports the same
# method, score and optimizer record.  Fresh family objects for each fit
# (bam() leaves an extended family's theta where it stopped).

no_sp_data <- function(n = 500, seed = 11) {
  set.seed(seed)
  d <- data.frame(a = factor(sample(letters[1:4], n, TRUE)), x = runif(n), z = runif(n))
  eta <- 0.5 + 0.4 * as.numeric(d$a) / 4 + sin(2 * d$x)
  d$yp <- rpois(n, exp(eta))
  d$yn <- rnbinom(n, mu = exp(eta), size = 1.5)
  d$yb <- rbinom(n, 1, plogis(eta - 1.5))
  d$yg <- rgamma(n, shape = 4, scale = exp(eta) / 4)
  d$y <- eta + rnorm(n, sd = 0.3)
  d
}

test_that("a parametric model's fREML is bam()'s REML: method, score, optimizer", {
  d <- no_sp_data()
  # (measured: fits 1e-10 of the range apart; with a known scale the score
  # is of the working model each fit formed last, 1.5e-7 relative apart for
  # poisson, within the iterations' tolerance -- with the scale estimated
  # 1e-12; nb()'s theta is estimated, which leaves 4e-9 and 1e-7)
  cases <- list(list(y ~ a + x, function() gaussian(), 1e-12, 1e-10),
                list(yp ~ a + x, function() poisson(), 5e-7, 1e-10),
                list(yb ~ a + x, function() binomial(), 5e-7, 1e-10),
                list(yg ~ a + x, function() Gamma(link = "log"), 1e-12, 1e-10),
                list(yn ~ a + x, function() mgcv::negbin(1.5), 1e-12, 1e-10),
                list(yn ~ a + x, function() mgcv::nb(), 1e-7, 1e-6),
                list(yn ~ a + s(x, sp = 0.5), function() mgcv::nb(), 1e-7, 1e-6))
  for (cs in cases) {
    label <- paste(deparse(cs[[1]]), cs[[2]]()$family)
    b <- with_mgcv(mgcv::bam(cs[[1]], family = cs[[2]](), data = d))
    g <- gam_gpu(cs[[1]], family = cs[[2]](), data = d, device = "off")
    expect_identical(b$method, "REML", label = label)
    expect_identical(g$method, b$method, label = label)
    expect_identical(names(g$gcv.ubre), names(b$gcv.ubre), label = label)
    expect_identical(g$optimizer, b$optimizer, label = label)
    expect_identical(is.null(g$outer.info), is.null(b$outer.info), label = label)
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), cs[[3]], label = paste(label, "score"))
    expect_lt(max(abs(fitted(g) - fitted(b))) / diff(range(fitted(b))), cs[[4]],
              label = paste(label, "fit"))
  }
})

test_that("with a smoothing parameter to estimate, fREML stays fREML", {
  d <- no_sp_data()
  g <- gam_gpu(yp ~ a + s(x), family = poisson(), data = d, device = "off")
  b <- mgcv::bam(yp ~ a + s(x), family = poisson(), data = d)
  expect_identical(g$method, "fREML")
  expect_identical(b$method, "fREML")
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-10)
})
