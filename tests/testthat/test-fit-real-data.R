# Datasets that ship with R, against bam(method = "fREML").
test_that("quakes: poisson counts with tp smooths and te()", {
  f <- stations ~ s(mag) + s(depth) + te(lat, long)
  g <- gam_gpu(f, family = poisson, data = quakes, control = tight_gg())
  b <- mgcv::bam(f, family = poisson, data = quakes, control = tight())
  expect_agrees_with_mgcv(g, b)
})

test_that("airquality: gaussian and Gamma log, rows with NA dropped", {
  f <- Ozone ~ s(Temp) + s(Wind, bs = "cr") + s(Solar.R)
  g <- gam_gpu(f, data = airquality)
  b <- mgcv::bam(f, data = airquality)
  expect_agrees_with_mgcv(g, b)
  expect_equal(nrow(g$model), 111L)
  expect_equal(g$na.action, b$na.action)
  g <- gam_gpu(f, family = Gamma(link = "log"), data = airquality, control = tight_gg())
  b <- mgcv::bam(f, family = Gamma(link = "log"), data = airquality, control = tight())
  expect_agrees_with_mgcv(g, b)
})

test_that("esoph: binomial cbind() response", {
  es <- esoph
  es$age <- as.numeric(es$agegp); es$alc <- as.numeric(es$alcgp)
  es$tob <- as.numeric(es$tobgp)
  f <- cbind(ncases, ncontrols) ~ s(age, k = 5) + s(alc, k = 4) + s(tob, k = 4)
  g <- gam_gpu(f, family = binomial, data = es, control = tight_gg())
  b <- mgcv::bam(f, family = binomial, data = es, control = tight())
  expect_agrees_with_mgcv(g, b)
})

test_that("ChickWeight: Gamma log with a random effect and a factor", {
  f <- weight ~ s(Time) + s(Chick, bs = "re") + Diet
  g <- gam_gpu(f, family = Gamma(link = "log"), data = ChickWeight, control = tight_gg())
  b <- mgcv::bam(f, family = Gamma(link = "log"), data = ChickWeight, control = tight())
  expect_agrees_with_mgcv(g, b)
})

test_that("warpbreaks: a parametric poisson model is the glm", {
  g <- gam_gpu(breaks ~ wool * tension, family = poisson, data = warpbreaks)
  m <- stats::glm(breaks ~ wool * tension, family = poisson, data = warpbreaks)
  expect_equal(unname(coef(g)), unname(coef(m)), tolerance = 1e-8)
  expect_equal(unname(g$Vp), unname(vcov(m)), tolerance = 1e-6)
  expect_equal(g$deviance, m$deviance, tolerance = 1e-8)
})
