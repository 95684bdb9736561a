# gam()'s methods leave gam.fit3's working residuals in fit$residuals --
# (y - mu) / (mu.eta(eta) alpha), alpha its Newton weights' factor where
# the link is not canonical, NA where the prior weight is 0 -- which
# residuals(fit, "working") and plot()'s partial residuals read; "fREML"
# leaves bam()'s deviance residuals.  Against gam() and bam() on the same
# data: the fits agree to ~2e-10 (REML, ML) here, the residuals with them.

wr_data <- function() {
  set.seed(2)
  dat <- mgcv::gamSim(1, n = 400, dist = "poisson", scale = 0.3, verbose = FALSE)
  dat$w <- c(0, sample(1:3, 399, TRUE))
  dat$yb <- as.numeric(dat$y > 1)
  dat$yg <- dat$y + 0.5
  dat
}

expect_residuals_as <- function(g, b, tol, label) {
  rb <- unname(b$residuals)
  expect_identical(is.na(g$residuals), is.na(rb), label = label)
  expect_lt(max(abs(g$residuals - rb), na.rm = TRUE) / max(abs(rb), na.rm = TRUE), tol,
            label = label)
  expect_equal(unname(residuals(g, "working")), unname(residuals(b, "working")),
               tolerance = tol, label = paste(label, "residuals(, 'working')"))
}

test_that("gam()'s methods keep gam()'s working residuals", {
  dat <- wr_data()
  cases <- list(list("y", poisson()), list("yg", Gamma(link = "log")), list("yg", Gamma()),
                list("yb", binomial(link = "probit")), list("y", gaussian()),
                list("y", mgcv::negbin(3)))
  for (cs in cases) for (m in c("REML", "ML")) {
    fo <- stats::as.formula(paste(cs[[1]], "~ s(x0) + s(x1) + s(x2)"))
    label <- paste(cs[[2]]$family, cs[[2]]$link, m)
    # (gam()'s own iteration warns of NaNs for Gamma's inverse link here)
    b <- suppressWarnings(mgcv::gam(fo, family = cs[[2]], data = dat, method = m, weights = w))
    g <- gam_gpu(fo, family = cs[[2]], data = dat, method = m, weights = w, device = "off")
    expect_true(g$converged, label = label)
    expect_residuals_as(g, b, 1e-9, label)
    expect_true(is.na(g$residuals[1]), label = label)
  }
  # (an additive model's GCV.Cp: gam()'s magic() stops on a looser test)
  b <- mgcv::gam(y ~ s(x0) + s(x1) + s(x2), data = dat, method = "GCV.Cp", weights = w)
  g <- gam_gpu(y ~ s(x0) + s(x1) + s(x2), data = dat, method = "GCV.Cp", weights = w,
               device = "off")
  expect_residuals_as(g, b, 1e-5, "gaussian GCV.Cp")
})

test_that("fREML keeps bam()'s deviance residuals", {
  dat <- wr_data()
  b <- mgcv::bam(yg ~ s(x0) + s(x1) + s(x2), family = Gamma(link = "log"), data = dat,
                 weights = w)
  g <- gam_gpu(yg ~ s(x0) + s(x1) + s(x2), family = Gamma(link = "log"), data = dat,
               weights = w, device = "off")
  expect_equal(g$residuals, unname(b$residuals), tolerance = 1e-8)
  expect_false(anyNA(g$residuals))
})
