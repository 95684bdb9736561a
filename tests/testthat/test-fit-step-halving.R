# The engine's step halving (engine_pirls.c, as bgam.fit's): when an
# iteration raises the penalized deviance, its step is halved, up to 6
# times -- the backends' halve_eta(), the device's rows_eta_step kernel in
# its halve mode.  Gamma(log) data with a heavy right tail (shape 0.3) make
# a step overshoot at these seeds (found by a search over seeds and
# designs; smooth data never halve).  The fits must still be bam's, and the
# counter fit$device$counters["halve_eta"] shows that halving ran.  Last,
# the penalized IRLS of gam()'s outer iteration (R/outer.R), where a rise
# at rounding level is taken as gam.fit3 takes it.

halving_data <- function(seed, n = 400) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n))
  eta <- 4 * sin(7 * d$x0) + 2 * d$x1
  d$y <- rgamma(n, shape = 0.3, rate = 0.3 / exp(eta))
  d
}
halving_formula <- y ~ s(x0, k = 20) + s(x1)

test_that("a step that raises the penalized deviance is halved, and the fit is still bam's", {
  for (seed in c(2, 15, 19)) {
    d <- halving_data(seed)
    g <- gam_gpu(halving_formula, data = d, family = Gamma(link = "log"), device = "off")
    b <- mgcv::bam(halving_formula, data = d, family = Gamma(link = "log"), method = "fREML")
    expect_gt(g$device$counters[["halve_eta"]], 0, label = paste("seed", seed))
    expect_identical(g$iter, b$iter)
    expect_agrees_with_mgcv(g, b)
    expect_lt(max(abs(log(g$sp) - log(b$sp))), 1e-6)
  }
})

test_that("the device halves the same steps and lands on the CPU engine's fit", {
  skip_if_no_device()
  for (seed in c(2, 15, 19)) {
    d <- halving_data(seed)
    cpu <- gam_gpu(halving_formula, data = d, family = Gamma(link = "log"), device = "off")
    dev <- expect_device_fit(gam_gpu(halving_formula, data = d, family = Gamma(link = "log"),
                                     device = "required"))
    label <- paste("seed", seed)
    expect_identical(dev$device$counters[["halve_eta"]], cpu$device$counters[["halve_eta"]],
                     label = label)
    expect_identical(dev$iter, cpu$iter, label = label)
    expect_lt(rel_err(coef(dev), coef(cpu)), 1e-9, label = label)
    expect_lt(rel_err(fitted(dev), fitted(cpu)), 1e-9, label = label)
  }
})

test_that("a step whose penalized deviance rises only by rounding is taken, as gam.fit3 takes it", {
  # (?smooth.construct.ps.smooth.spec: s(z)'s smoothing parameter near 1e7
  # makes the penalty most of the penalized deviance, which no halving of
  # a step then lowers)
  set.seed(6)
  x <- sort(runif(200) * 10)
  z <- runif(200)
  y <- rpois(200, exp(sin(x * 2 * pi / 10) + 0.5))
  f <- y ~ s(x, bs = "cp", k = 12) + s(z, bs = "ps", k = 13)
  kn <- list(x = seq(0, 10, length = 13), z = (-3):13 / 10)
  for (m in c("GCV.Cp", "REML")) {
    g <- gam_gpu(f, family = poisson, knots = kn, method = m, device = "off")
    b <- mgcv::gam(f, family = poisson, knots = kn, method = m)
    expect_true(g$converged, label = m)
    expect_identical(g$outer.info$conv, "full convergence", label = m)
    # (gam() stops on the flat end of s(z); gam_gpu's criterion is no worse)
    expect_lt(g$gcv.ubre - b$gcv.ubre, 1e-9 * abs(b$gcv.ubre), label = m)
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)),
              1e-3, label = m)
  }
})
