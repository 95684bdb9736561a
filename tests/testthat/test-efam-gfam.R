# gfam() fitted by gam_gpu() against mgcv: gam()'s REML and ML (gam.fit4's
# route, the rows in C) and bam()'s fREML, on mixed-family data; the
# methods on the fit; and the refusals of what gamgpu does not fit.
# Measured on these cases (CPU, reference BLAS): fitted values <= 1e-11 of
# their range, log sp <= 4e-10, criterion, EDF, theta to rounding; the
# bounds below are 1e-9 (the helpers' defaults).

gfam_fml <- cbind(y, fi) ~ s(x0) + s(x1)

expect_gfam_fit <- function(g, m, tol = 1e-9) {
  expect_true(isTRUE(g$converged))
  expect_identical(g$family$family, m$family$family)
  expect_lt(abs(g$gcv.ubre[[1]] - m$gcv.ubre[[1]]) / abs(m$gcv.ubre[[1]]), tol)
  expect_identical(names(g$gcv.ubre), names(m$gcv.ubre))
  expect_lt(max(abs(fitted(g) - fitted(m))) / diff(range(fitted(m))), tol)
  expect_lt(max(abs(log(g$sp) - log(m$sp))), 10 * tol)
  expect_lt(max(abs(g$edf - m$edf)), tol)
  th <- m$family$getTheta()
  expect_length(g$family$getTheta(), length(th))
  expect_lt(max(abs(g$family$getTheta() - th) / pmax(abs(th), 1)), tol)
  expect_lt(abs(g$deviance - m$deviance) / m$deviance, tol)
  expect_lt(abs(g$null.deviance - m$null.deviance) / m$null.deviance, tol)
  expect_lt(abs(g$aic - m$aic) / abs(m$aic), tol)
  expect_identical(g$scale.estimated, m$scale.estimated)
  expect_lt(max(abs(residuals(g) - residuals(m))), 100 * tol)
  # (fit$residuals: gam.fit4's working ones under gam()'s methods, bam()'s
  # deviance ones under fREML)
  expect_identical(is.na(g$residuals), is.na(unname(m$residuals)))
  expect_lt(max(abs(g$residuals - m$residuals), na.rm = TRUE) /
              max(abs(m$residuals), na.rm = TRUE), 100 * tol)
  expect_lt(max(abs(g$Vp - m$Vp)) / max(abs(m$Vp)), 100 * tol)
}

test_that("gfam(gaussian, poisson, binomial): REML as gam(), fREML as bam()", {
  skip_if_no_gfam()
  d <- gfam_sim(c("gaussian", "poisson", "binomial"), n = 600)
  fl <- function() mgcv::gfam(list(gaussian, poisson, binomial))
  m <- mgcv::gam(gfam_fml, family = fl(), data = d, method = "REML")
  g <- gam_gpu(gfam_fml, family = fl(), data = d, method = "REML", device = "off")
  expect_identical(g$device$outer_rows, "cpu")       # (gfam()'s rows in C)
  expect_gfam_fit(g, m)
  b <- mgcv::bam(gfam_fml, family = fl(), data = d)
  gb <- gam_gpu(gfam_fml, family = fl(), data = d, device = "off")
  expect_gfam_fit(gb, b)
  # the methods, as on gam()'s fit: predict() with the index in newdata
  nd <- d[c(1:9, 300), ]
  expect_equal(predict(g, nd, type = "response"), predict(m, nd, type = "response"),
               tolerance = 1e-9)
  expect_equal(predict(g, nd, se.fit = TRUE), predict(m, nd, se.fit = TRUE), tolerance = 1e-8)
  sg <- summary(g)
  sm <- summary(m)
  expect_equal(sg$s.table, sm$s.table, tolerance = 1e-7)
  expect_equal(sg$p.table, sm$p.table, tolerance = 1e-7)
  expect_equal(residuals(gb, "working"), residuals(b, "working"), tolerance = 1e-9)
  expect_equal(g$y, m$y)
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  expect_silent(plot(g, pages = 1))
})

test_that("gfam(Gamma, nb, binomial): REML and ML as gam(), fREML as bam()", {
  skip_if_no_gfam()
  d <- gfam_sim(c("Gamma", "nb", "binomial"), n = 900, seed = 5)
  fl <- function() mgcv::gfam(list(Gamma(link = "log"), mgcv::nb, binomial))
  for (meth in c("REML", "ML")) {
    m <- mgcv::gam(gfam_fml, family = fl(), data = d, method = meth)
    g <- gam_gpu(gfam_fml, family = fl(), data = d, method = meth, device = "off")
    expect_gfam_fit(g, m)
  }
  b <- mgcv::bam(gfam_fml, family = fl(), data = d)
  gb <- gam_gpu(gfam_fml, family = fl(), data = d, device = "off")
  expect_gfam_fit(gb, b)
  expect_equal(predict(gb, d[1:12, ], type = "response"),
               predict(b, d[1:12, ], type = "response"), tolerance = 1e-9)
})

test_that("gfam() of five scales: gam()'s REML on mgcv's dDeta() rows in R", {
  skip_if_no_gfam()
  d <- gfam_sim(c("gaussian", "Gamma", "invgauss", "gaussian", "gaussian"), n = 750, seed = 7)
  fl <- function() mgcv::gfam(list(gaussian, Gamma(link = "log"), inverse.gaussian(link = "log"),
                                   gaussian, gaussian))
  m <- mgcv::gam(gfam_fml, family = fl(), data = d, method = "REML")
  g <- gam_gpu(gfam_fml, family = fl(), data = d, method = "REML", device = "off")
  # (the outer rows in C take at most four theta values: these are mgcv's)
  expect_match(g$device$outer_rows, "^R ")
  expect_gfam_fit(g, m)
})

test_that("gfam() members and responses gamgpu does not fit are refused, classed", {
  skip_if_no_gfam()
  d <- gfam_sim(c("gaussian", "poisson"), n = 200)
  fit <- function(fl, fml = gfam_fml, data = d)
    gam_gpu(fml, family = mgcv::gfam(fl), data = data, device = "off")
  expect_error(fit(list(gaussian, mgcv::scat)), class = "gamgpu_bad_family",
               regexp = "scaled t")
  expect_error(fit(list(gaussian, quasipoisson)), class = "gamgpu_bad_family",
               regexp = "quasipoisson")
  expect_error(fit(list(gaussian, mgcv::nb(theta = 3))), class = "gamgpu_bad_family",
               regexp = "theta fixed")
  expect_error(fit(list(gaussian, mgcv::tw)), class = "gamgpu_bad_family",
               regexp = "mgcv::gam")
  expect_error(fit(rep(list(gaussian), 9)), class = "gamgpu_bad_family", regexp = "9 members")
  expect_error(fit(list(gaussian, poisson), y ~ s(x0)), class = "gamgpu_bad_response")
  d3 <- d
  d3$fi[4] <- 3
  expect_error(fit(list(gaussian, poisson), data = d3), class = "gamgpu_bad_response",
               regexp = "index")
})
