# R's power(lambda) links ("mu^lambda", lambda > 0 and not 1): mgcv's
# Tweedie(p, link = power(lambda)) (?Tweedie's example) and R's families of
# a positive mean with a link-glm object, through the engine's C (the link's
# code and lambda, inst/include/family_math.h; its derivatives to the fourth
# for gam()'s outer iteration, outer_math.h) -- against R's own link
# functions row by row and against gam() and bam() on the same call.

power_data <- function(n = 400, seed = 3) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "poisson", scale = 0.2, verbose = FALSE)
  d$y <- mgcv::rTweedie(exp(d$f), p = 1.3, phi = 0.5)
  d$yp <- rpois(n, exp(d$f / 3))
  d
}

test_that("the power link's rows are R's: linkinv, mu.eta, linkfun", {
  eta <- c(0.3, 0.9, 1.2, 2, 7.5)
  for (la in c(0.1, 1 / 3, 2.5)) {
    lk <- stats::power(la)
    r <- .Call(gamgpu:::gg_family_rows, "poisson", sprintf("mu^%.17g", la), eta,
               c(1, 0, 2, 3, 9), rep(1, 5), NULL)
    expect_equal(r$mu, lk$linkinv(eta), tolerance = 1e-15, label = paste("linkinv", la))
    expect_equal(r$mu.eta, lk$mu.eta(eta), tolerance = 1e-14, label = paste("mu.eta", la))
    expect_equal(r$linkfun, lk$linkfun(lk$linkinv(eta)), tolerance = 1e-14,
                 label = paste("linkfun", la))
  }
})

test_that("Tweedie(p, power(lambda)) is gam()'s with its methods and bam()'s with fREML", {
  d <- power_data()
  f <- y ~ s(x0) + s(x1) + s(x2) + s(x3)
  fam <- function() mgcv::Tweedie(1.25, stats::power(0.1))
  # (measured: fits 6.6e-12 of the range apart at most, scores 1.1e-12,
  # the same Newton iterations)
  for (m in c("GCV.Cp", "REML", "ML")) {
    b <- mgcv::gam(f, family = fam(), data = d, method = m)
    g <- gam_gpu(f, family = fam(), data = d, method = m, device = "off")
    expect_identical(g$family$link, "mu^0.1")
    expect_identical(g$outer.info$conv, "full convergence", label = m)
    expect_identical(g$outer.info$iter, b$outer.info$iter, label = m)
    expect_lt(max(abs(fitted(g) - fitted(b))) / diff(range(fitted(b))), 1e-10, label = m)
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-11, label = m)
  }
  b <- mgcv::bam(f, family = fam(), data = d)
  g <- gam_gpu(f, family = fam(), data = d, device = "off")
  expect_lt(max(abs(fitted(g) - fitted(b))) / diff(range(fitted(b))), 1e-10)
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-11)
  # predict on the link scale and the response scale, as gam()'s
  expect_equal(predict(g, d[1:7, ], type = "response"), predict(b, d[1:7, ], type = "response"),
               tolerance = 1e-9)
})

test_that("a link-glm power() for R's families of a positive mean; refused elsewhere", {
  d <- power_data()
  # (R names power(1/3) "mu^0.333": the engine takes lambda from the link
  # itself, not from the rounded name)
  b <- mgcv::gam(yp ~ s(x0) + s(x1), family = poisson(link = stats::power(1 / 3)), data = d,
                 method = "REML")
  g <- gam_gpu(yp ~ s(x0) + s(x1), family = poisson(link = stats::power(1 / 3)), data = d,
               method = "REML", device = "off")
  expect_identical(b$family$link, "mu^0.333")
  expect_lt(max(abs(fitted(g) - fitted(b))) / diff(range(fitted(b))), 1e-10)
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-11)
  # binomial's mean is a probability: no power link
  d$yb <- as.numeric(d$y > 1)
  e <- expect_error(gam_gpu(yb ~ s(x0), family = binomial(link = stats::power(0.3)), data = d,
                            device = "off"), class = "gamgpu_bad_link")
  expect_match(conditionMessage(e), "mu^0.3", fixed = TRUE)
})

test_that("on the GPU, a power link's fit is the CPU's", {
  skip_if_no_device()
  d <- power_data(n = 20000, seed = 5)
  f <- y ~ s(x0) + s(x1) + s(x2)
  fam <- function() mgcv::Tweedie(1.25, stats::power(0.1))
  for (m in c("fREML", "REML")) {
    g <- expect_device_fit(gam_gpu(f, family = fam(), data = d, method = m,
                                   device = "required"))
    c <- gam_gpu(f, family = fam(), data = d, method = m, device = "off")
    expect_lt(rel_err(coef(g), coef(c)), 1e-9, label = m)
    expect_lt(abs(g$gcv.ubre[[1]] / c$gcv.ubre[[1]] - 1), 1e-11, label = m)
    if (m == "REML") expect_identical(g$device$outer_rows, "cuda:0")
  }
})
