# Prior weights of 0 under every method.  gam()'s REML and ML count the
# rows of positive weight in the likelihood (family$ls's nobs) and every
# row in the scale estimate it reports as sig2 (gam.fit3's scale.est),
# magic()'s GCV counts the rows of nonzero weight, and bam()'s fREML counts
# every row everywhere -- the fits differ by up to 3% of the linear
# predictor's range here, so each method must count as its mgcv fitter.

zero_weight_data <- function(n = 800) {
  set.seed(2)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$w <- runif(n)
  d$w[seq_len(n / 8)] <- 0
  d
}

test_that("gam()'s methods with prior weights of 0 are gam()'s", {
  d <- zero_weight_data()
  f <- y ~ s(x0) + s(x1) + s(x2)
  for (m in c("REML", "ML", "GCV.Cp", "GACV.Cp")) for (sc in c(0, 4)) {
    label <- paste(m, "scale", sc)
    b <- mgcv::gam(f, data = d, weights = w, method = m, scale = sc,
                   control = mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9)))
    # (GCV.Cp: magic(), as gam()'s; newton.tol would give it a Newton iteration)
    g <- gam_gpu(f, data = d, weights = w, method = m, scale = sc, device = "off",
                 control = if (m == "GCV.Cp") tight_gg() else tight_gam_gg())
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-10, label = label)
    r <- diff(range(b$fitted.values))
    # where the optimizers stop: GACV.Cp's outer Newton in gam() 3e-6 of the
    # range from the optimum, magic() 1.2e-7 from where it stops on all n
    # rows (prior weights take it one step more or less); REML, ML and UBRE
    # agree to 2e-10
    tol <- if (sc > 0) 1e-9 else switch(m, GACV.Cp = 1e-5, GCV.Cp = 1e-6, 1e-9)
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / r, tol, label = label)
    expect_lt(abs(g$sig2 / b$sig2 - 1), tol, label = paste(label, "sig2"))
    if (m %in% c("REML", "ML") && sc == 0)
      expect_lt(abs(g$reml.scale / b$reml.scale - 1), 1e-9, label = paste(label, "reml.scale"))
    expect_lt(rel_err(g$Vp, b$Vp), 1e-4, label = paste(label, "Vp"))
  }
})

test_that("fREML with prior weights of 0 is bam()'s", {
  d <- zero_weight_data()
  f <- y ~ s(x0) + s(x1) + s(x2)
  b <- mgcv::bam(f, data = d, weights = w, control = tight())
  g <- gam_gpu(f, data = d, weights = w, device = "off", control = tight_gg())
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-10)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)), 1e-9)
  expect_lt(abs(g$sig2 / b$sig2 - 1), 1e-9)
  # and gam()'s REML is another fit
  r <- gam_gpu(f, data = d, weights = w, method = "REML", device = "off", control = tight_gg())
  expect_gt(max(abs(r$fitted.values - g$fitted.values)), 1e-3)
})

test_that("gam()'s methods beyond the additive model with prior weights of 0 are gam()'s", {
  # (P-REML and P-ML: the Pearson scale over the rows of positive weight
  # less Mp, as gam.fit3 takes it; over every row it was 1.3% of the range
  # apart).  Measured: scores 1.2e-9, fits 5.4e-7, Vp 4.9e-7, aic 1e-5.
  set.seed(3)
  n <- 800
  d <- data.frame(x0 = runif(n), x1 = runif(n))
  eta <- sin(2 * pi * d$x0) + d$x1
  d$yp <- rpois(n, exp(eta))
  d$yg <- rgamma(n, 3, 3 / exp(eta / 3 + 1))
  d$yi <- exp(eta / 4) * rgamma(n, 20, 20)
  d$w <- runif(n)
  d$w[1:100] <- 0
  cases <- list(list(yp ~ s(x0) + s(x1), poisson(), c("REML", "ML", "GCV.Cp")),
                list(yg ~ s(x0) + s(x1), Gamma(link = "log"),
                     c("REML", "ML", "GCV.Cp", "GACV.Cp", "P-REML", "P-ML")),
                list(yi ~ s(x0) + s(x1), inverse.gaussian(link = "log"),
                     c("REML", "P-REML", "P-ML")))
  for (cs in cases) for (m in cs[[3]]) {
    label <- paste(cs[[2]]$family, m)
    b <- suppressWarnings(mgcv::gam(cs[[1]], family = cs[[2]], data = d, weights = w,
                                    method = m, control = mgcv::gam.control(
                                      epsilon = 1e-10, newton = list(conv.tol = 1e-9))))
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, weights = w, method = m, device = "off",
                 control = tight_gam_gg())
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-8, label = label)
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)), 2e-6,
              label = label)
    expect_lt(abs(g$sig2 / b$sig2 - 1), 1e-6, label = paste(label, "sig2"))
    expect_lt(rel_err(g$Vp, b$Vp), 2e-6, label = paste(label, "Vp"))
    expect_lt(abs(g$aic - b$aic), 1e-4, label = paste(label, "aic"))
  }
})
