# mgcv's methods on gam_gpu objects give what they give on the bam fit.
dat <- sim_data()
f <- yb ~ s(x0) + s(x1, by = fac) + fac + te(x2, x3) + s(t, bs = "cc")
g <- gam_gpu(f, family = binomial, data = dat, control = tight_gg())
b <- mgcv::bam(f, family = binomial, data = dat, control = tight())
fg <- y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3)
gg <- gam_gpu(fg, data = dat)
bg <- mgcv::bam(fg, data = dat)
nd <- sim_data(n = 200, seed = 11)

test_that("predict(): link, response, terms, lpmatrix, se.fit, newdata", {
  for (m in list(list(g, b), list(gg, bg))) {
    for (ty in c("link", "response", "terms")) {
      pg <- predict(m[[1]], nd, type = ty, se.fit = TRUE)
      pb <- predict(m[[2]], nd, type = ty, se.fit = TRUE)
      expect_equal(unname(pg$fit), unname(pb$fit), tolerance = 1e-4)
      expect_equal(unname(pg$se.fit), unname(pb$se.fit), tolerance = 1e-4)
    }
    expect_equal(predict(m[[1]], nd, type = "lpmatrix"),
                 predict(m[[2]], nd, type = "lpmatrix"))
    expect_equal(unname(c(predict(m[[1]]))), unname(m[[1]]$linear.predictors))
  }
})

test_that("summary(): EDFs, test statistics and p-values", {
  sg <- summary(g); sb <- summary(b)
  expect_equal(sg$s.table, sb$s.table, tolerance = 1e-4)
  expect_equal(sg$p.table, sb$p.table, tolerance = 1e-4)
  expect_equal(sg$dev.expl, sb$dev.expl, tolerance = 1e-6)
  expect_equal(sg$r.sq, sb$r.sq, tolerance = 1e-6)
  s2g <- summary(gg); s2b <- summary(bg)
  expect_equal(s2g$s.table, s2b$s.table, tolerance = 1e-4)
  expect_equal(s2g$scale, s2b$scale, tolerance = 1e-6)
  expect_output(print(sg), "Approximate significance of smooth terms")
})

test_that("anova(): one fit and two nested fits", {
  expect_equal(anova(g)$s.table, anova(b)$s.table, tolerance = 1e-4)
  g0 <- gam_gpu(yb ~ s(x0) + fac, family = binomial, data = dat, control = tight_gg())
  b0 <- mgcv::bam(yb ~ s(x0) + fac, family = binomial, data = dat, control = tight())
  ag <- anova(g0, g, test = "Chisq"); ab <- anova(b0, b, test = "Chisq")
  expect_equal(ag$Deviance, ab$Deviance, tolerance = 1e-5)
  expect_equal(ag$`Pr(>Chi)`, ab$`Pr(>Chi)`, tolerance = 1e-4)
})

test_that("AIC(), logLik(), vcov(), fitted(), residuals() of every type", {
  expect_equal(AIC(g), AIC(b), tolerance = 1e-6)
  expect_equal(c(logLik(g)), c(logLik(b)), tolerance = 1e-6)
  expect_equal(attr(logLik(g), "df"), attr(logLik(b), "df"), tolerance = 1e-4)
  expect_equal(AIC(gg), AIC(bg), tolerance = 1e-6)
  expect_equal(vcov(g), vcov(b), tolerance = 1e-4)
  expect_equal(vcov(g, unconditional = TRUE), vcov(b, unconditional = TRUE),
               tolerance = 1e-4)
  expect_equal(unname(fitted(g)), unname(fitted(b)), tolerance = 1e-6)
  for (ty in c("deviance", "pearson", "working", "response"))
    expect_equal(unname(residuals(g, type = ty)), unname(residuals(b, type = ty)),
                 tolerance = 1e-5, label = ty)
  expect_equal(g$deviance, b$deviance, tolerance = 1e-7)
  expect_equal(g$null.deviance, b$null.deviance)
})

test_that("the fit's aic and null deviance are the family's, computed in C", {
  # the fit computes family$aic, sum(dev.resids(y, weighted.mean(y, w), w))
  # and the deviance residuals in C, beside its post-processing: same numbers
  aic_of <- function(fit) {
    fam <- fit$family
    dev <- if (fam$family != "gaussian") fit$sig2 * sum(fit$prior.weights) else fit$deviance
    fam$aic(fit$y, 1, fit$fitted.values, fit$prior.weights, dev) + 2 * sum(fit$edf)
  }
  null_dev <- function(fit)
    sum(fit$family$dev.resids(fit$y, weighted.mean(fit$y, fit$prior.weights),
                              fit$prior.weights))
  dp <- dat
  dp$trials <- as.numeric(sample(0:4, nrow(dp), TRUE))
  dp$prop <- ifelse(dp$trials > 0, stats::rbinom(nrow(dp), dp$trials, 0.4) / pmax(dp$trials, 1), 0)
  fits <- list(binary = g,
               proportions = gam_gpu(prop ~ s(x0) + s(x1), family = binomial, data = dp,
                                     weights = trials),
               poisson = gam_gpu(yp ~ s(x0) + s(x1), family = poisson, data = dat),
               Gamma = gam_gpu(yg ~ s(x0) + s(x1), family = Gamma(link = "log"), data = dat),
               inverse.gaussian = gam_gpu(yg ~ s(x0) + s(x1), family = inverse.gaussian(link = "log"),
                                          data = dat),
               quasipoisson = gam_gpu(yp ~ s(x0) + s(x1), family = quasipoisson, data = dat),
               gaussian = gg,
               gaussian_weights = gam_gpu(y ~ s(x0) + s(x1), data = dp, weights = trials + 0.5))
  for (nm in names(fits)) {
    fit <- fits[[nm]]
    expect_equal(fit$aic, aic_of(fit), tolerance = 1e-14, label = nm)
    expect_equal(fit$null.deviance, null_dev(fit), tolerance = 1e-13, label = nm)
    expect_identical(fit$deviance, sum(fit$residuals^2), label = nm)
    expect_equal(fit$residuals,
                 unname(mgcv::residuals.gam(fit, type = "deviance")),
                 tolerance = 1e-14, label = nm)
  }
  expect_true(is.na(fits$quasipoisson$aic))
})

test_that("leverages are the diagonal of the influence matrix", {
  X <- predict(gg, type = "lpmatrix")
  h <- rowSums((X %*% gg$Vp) * X)          # = hat * (scale used for Vp)
  expect_equal(unname(h / gg$hat), rep(unname(h[1] / gg$hat[1]), nrow(X)), tolerance = 1e-8)
  expect_true(all(gg$hat > 0 & gg$hat < 1))
  expect_equal(sum(gg$hat), sum(gg$edf), tolerance = 1e-8)
  expect_length(gg$hat, nrow(dat))
})

test_that("plot(): 1-d, 2-d (te), by-factor and cyclic smooths with bands", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  pg <- plot(g, pages = 1, se = TRUE)
  pb <- plot(b, pages = 1, se = TRUE)
  expect_length(pg, length(b$smooth))
  for (i in seq_along(pg)) {
    expect_equal(pg[[i]]$fit, pb[[i]]$fit, tolerance = 1e-4)
    expect_equal(pg[[i]]$se, pb[[i]]$se, tolerance = 1e-4)
  }
  expect_silent(plot(gg, select = 3, scheme = 2))
})

test_that("gam.check() and concurvity() work and agree", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  set.seed(1); kg <- mgcv::k.check(gg)
  set.seed(1); kb <- mgcv::k.check(bg)
  expect_equal(kg[, 1:3], kb[, 1:3], tolerance = 1e-4)
  expect_output(mgcv::gam.check(g), "Basis dimension")
  expect_equal(mgcv::concurvity(g), mgcv::concurvity(b), tolerance = 1e-5)
  expect_equal(mgcv::concurvity(g, full = FALSE)$estimate,
               mgcv::concurvity(b, full = FALSE)$estimate, tolerance = 1e-5)
})

test_that("print() reports the device and the phase times; fit$device is data", {
  # g was fitted under the session's policy: on the GPU exactly when one is
  # usable, the policy allows it and the data reach "auto"'s row threshold
  on_gpu <- gpu_policy() != "off" && device_usable() &&
    (gpu_policy() == "required" || nrow(dat) >= getOption("gamgpu.auto_min_rows", 2000))
  expect_identical(g$device$backend, if (on_gpu) "cuda" else "cpu")
  expect_output(print(g), paste("Device:", g$device$backend), fixed = TRUE)
  expect_output(print(g), "setup .*iterations .*post-processing")
  expect_true(nzchar(g$device$reason))
  if (g$device$backend == "cuda")
    expect_output(print(g), "transfers .*kernels .*host REML")
  if (g$device$backend == "cuda")
    expect_named(g$device$split, c("transfer", "build", "kernels", "host"))
  expect_named(g$device$timings, c("setup", "selection", "iterations", "postproc"))
  expect_true(all(g$device$timings >= 0))
  # (fREML's smoothing parameters are chosen within the engine's iterations)
  expect_identical(g$device$timings[["selection"]], 0)
  expect_named(g$device$counters, c("gram", "xbeta", "row_state", "halve_eta"))
  expect_gt(g$device$counters[["gram"]], 1)
  expect_gte(g$device$counters[["halve_eta"]], 0)
  # the three parts are disjoint pieces of the call: they add up to no more
  # than its wall time
  wall <- system.time(g2 <- gam_gpu(f, family = binomial, data = dat))[["elapsed"]]
  expect_lte(sum(g2$device$timings), wall + 0.01)
  expect_gt(sum(g2$device$timings), 0.5 * wall)
  # gam()'s REML: its outer iteration before the final fit, printed
  wall <- system.time(g3 <- gam_gpu(f, family = binomial, data = dat, method = "REML"))[["elapsed"]]
  expect_gt(g3$device$timings[["selection"]], 0)
  expect_lte(sum(g3$device$timings), wall + 0.01)
  expect_gt(sum(g3$device$timings), 0.5 * wall)
  expect_output(print(g3), "setup .*smoothing parameter selection .*iterations")
})
