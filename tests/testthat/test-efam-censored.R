# mgcv's censored families cnorm() (mgcv 1.8-41 and 1.9-x), clog() and
# cpois() (mgcv >= 1.9-2): a response cbind(y, yat) whose rows are
# uncensored, interval, left or right censored (inst/include/efam_cens.h).
# gam()'s REML (its default for them) against mgcv::gam() on mgcv's own
# examples, tight (expect_efam_outer(), helper-efam.R) and at gam()'s
# defaults; fREML against bam(); refusals; the device against the CPU.
# Measured (CPU): gam() 1.6e-14 - 8.8e-14 of the fitted range apart at the
# defaults; bam() 1.5e-12 - 5.6e-11.

has_mgcv_fun <- function(name) exists(name, envir = asNamespace("mgcv"), inherits = FALSE)
cens_family <- function(name, ...) function() do.call(mgcv_family(name), list(...))
mgcv_family <- function(name) get(name, envir = asNamespace("mgcv"))

tobit_data <- function(n = 400, seed = 3) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, verbose = FALSE)
  ys <- d$y - 5
  y <- cbind(ys, ys)
  y[ys < 0, 2] <- -Inf                           # left censored at 0
  y[ys < 0, 1] <- 0
  d$yt <- y
  yr <- round(d$y)
  d$yi <- cbind(yr - 0.5, yr + 0.5)              # interval censored (rounded)
  d
}

colon_aft <- function() {
  col1 <- survival::colon[survival::colon$etype == 1, ]
  col1$differ <- as.factor(col1$differ)
  col1$sex <- as.factor(col1$sex)
  logt <- cbind(log(col1$time), log(col1$time))
  logt[col1$status == 0, 2] <- Inf               # right censored
  col1$logt <- -logt                             # (so left censored)
  col1
}

cpois_data <- function(censor, n = 2000) {
  set.seed(6)
  d <- mgcv::gamSim(1, n = n, dist = "poisson", scale = 0.1, verbose = FALSE)
  if (censor) {
    m <- 300
    y <- matrix(d$y, n, ncol = 2)
    ii <- sample(n, 3 * m)
    for (i in 1:m) {
      j <- ii[i]; if (y[j, 1] > 4.5) y[j, ] <- c(4.5, Inf)
      j <- ii[m + i]; if (y[j, 1] < 2.5) y[j, ] <- c(2.5, -Inf)
      j <- ii[2 * m + i]; if (y[j, 1] > 1.5 && y[j, 1] < 5.5) y[j, ] <- c(1.5, 5.5)
    }
    d$y <- y
  }
  d
}

# at gam()'s defaults (gam_gpu with method "GCV.Cp", gam()'s default,
# which an extended family fits by REML): where gam() stops
expect_cens_default <- function(fo, family, data) {
  b <- with_mgcv(mgcv::gam(fo, family = family(), data = data))
  g <- gam_gpu(fo, family = family(), data = data, method = "GCV.Cp", device = "off")
  expect_identical(g$method, "REML")
  expect_identical(g$family$family, b$family$family)
  # (where the arithmetic is not mgcv's, helper-compare.R's same_arithmetic(),
  # the scores agree to the stopping rules: 1.2e-12 with gamgpu's CPU Gram
  # kernel on the GPU machine)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]),
            if (same_arithmetic(g)) 1e-12 else 1e-10)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)), 1e-9)
  expect_lt(max(abs(g$edf - b$edf)), 1e-7)
  for (nm in c("deviance", "null.deviance", "aic"))
    expect_lt(abs(g[[nm]] - b[[nm]]) / abs(b[[nm]]), 1e-9, label = nm)
  expect_identical(attr(g$y, "censor"), attr(b$y, "censor"))
  # (cnorm()'s dev.resids finds mgcv's dpnorm() only with mgcv attached)
  with_mgcv(expect_equal(stats::residuals(g), stats::residuals(b), tolerance = 1e-8))
  invisible(g)
}

test_that("cnorm(): Tobit and rounded data as gam() fits them", {
  d <- tobit_data()
  for (yv in c("yt", "yi")) {
    fo <- stats::as.formula(paste(yv, "~ s(x0) + s(x1) + s(x2) + s(x3)"))
    r <- efam_pair(fo, cens_family("cnorm"), d, method = "REML")
    expect_efam_outer(r$g, r$b, r$theta_b, paste("cnorm", yv))
    expect_match(r$g$device$outer_rows, "cpu")      # the rows in C
    g <- expect_cens_default(fo, cens_family("cnorm"), d)
  }
  expect_efam_methods(g, with_mgcv(mgcv::gam(yi ~ s(x0) + s(x1) + s(x2) + s(x3),
                                             family = mgcv::cnorm(), data = d)), d)
})

test_that("cnorm() and clog(): survival's colon data as an AFT model, as gam()", {
  skip_if_not_installed("survival")
  d <- colon_aft()
  fo <- logt ~ s(age, by = sex) + sex + s(nodes) + perfor + rx + obstruct + adhere
  expect_cens_default(fo, cens_family("cnorm"), d)
  skip_if_not(has_mgcv_fun("clog"), "clog() needs mgcv >= 1.9-2")
  expect_cens_default(fo, cens_family("clog"), d)
})

test_that("cpois(): uncensored and censored counts as gam() fits them", {
  skip_if_not(has_mgcv_fun("cpois"), "cpois() needs mgcv >= 1.9-2")
  fo <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
  for (cens in c(FALSE, TRUE)) {
    d <- cpois_data(cens)
    # (zero counts start at log(0), as in gam.fit4)
    expect_cens_default(fo, cens_family("cpois"), d)
    r <- efam_pair(fo, cens_family("cpois"), d, method = "REML")
    expect_efam_outer(r$g, r$b, r$theta_b, paste("cpois, censored:", cens))
  }
})

test_that("fREML for the censored families is bam()'s", {
  d <- tobit_data()
  fo <- yt ~ s(x0) + s(x1) + s(x2) + s(x3)
  b <- mgcv::bam(fo, family = mgcv::cnorm(), data = d)
  g <- gam_gpu(fo, family = mgcv::cnorm(), data = d, device = "off")
  expect_efam_parity(g, b, eta_tol = 1e-10, theta_tol = 1e-9, sp_tol = 1e-7, edf_tol = 1e-8)
  skip_if_not(has_mgcv_fun("cpois"), "cpois() needs mgcv >= 1.9-2")
  d <- cpois_data(TRUE)
  fo <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
  # (bgam.fit's weights for cpois() are its Dd's EDmu2, 0 at a zero count:
  # bam() and gam_gpu both stop at their iteration limit, at one point)
  b <- suppressWarnings(mgcv::bam(fo, family = mgcv::cpois(), data = d))
  expect_warning(g <- gam_gpu(fo, family = mgcv::cpois(), data = d, device = "off"),
                 class = "gamgpu_not_converged")
  expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)), 1e-9)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), 1e-11)
})

test_that("a censored family's response that mgcv cannot fit is a classed error", {
  d <- tobit_data(n = 200)
  # cnorm()'s deviance is 0 for a vector response in mgcv
  expect_error(gam_gpu(y ~ s(x0), family = mgcv::cnorm(), data = d, device = "off"),
               class = "gamgpu_bad_response")
  d$y3 <- cbind(d$y, d$y, d$y)
  expect_error(gam_gpu(y3 ~ s(x0), family = mgcv::cnorm(), data = d, device = "off"),
               class = "gamgpu_bad_response")
  skip_if_not(has_mgcv_fun("cpois"), "cpois() needs mgcv >= 1.9-2")
  d$yc <- cbind(round(abs(d$y)) + 0.5, round(abs(d$y)) + 0.5)   # uncensored, not whole
  expect_error(gam_gpu(yc ~ s(x0), family = mgcv::cpois(), data = d, device = "off"),
               class = "gamgpu_bad_response")
})

test_that("the censored families on the device equal the CPU and launch their kernels", {
  skip_if_no_device()
  d <- tobit_data(n = 3000, seed = 5)
  fo <- yt ~ s(x0) + s(x1) + s(x2) + s(x3)
  # gam()'s REML, tight: the optimizer's optimum, not its stopping rule,
  # compared (measured on the H200: coefficients 4e-13, theta 2e-15)
  gc <- gam_gpu(fo, family = mgcv::cnorm(), data = d, method = "REML", device = "off",
                control = efam_tight_gg())
  gd <- expect_device_fit(gam_gpu(fo, family = mgcv::cnorm(), data = d, method = "REML",
                                  device = "required", control = efam_tight_gg()))
  expect_device_parity(gd, gc)
  expect_match(gd$device$outer_rows, "cuda")
  # fREML: estimate.theta() stops where its gradient test lets it on a flat
  # likelihood, and the device's block sums round apart from the CPU's
  # (measured: theta 5.5e-9 apart, coefficients 6e-13), as for scat()
  gc <- gam_gpu(fo, family = mgcv::cnorm(), data = d, device = "off")
  gd <- expect_device_fit(gam_gpu(fo, family = mgcv::cnorm(), data = d, device = "required"))
  expect_device_parity(gd, gc, tol = 1e-7)
  skip_if_not(has_mgcv_fun("cpois"), "cpois() needs mgcv >= 1.9-2")
  d <- cpois_data(TRUE, n = 3000)
  fo <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
  gc <- gam_gpu(fo, family = mgcv::cpois(), data = d, method = "REML", device = "off",
                control = efam_tight_gg())
  gd <- expect_device_fit(gam_gpu(fo, family = mgcv::cpois(), data = d, method = "REML",
                                  device = "required", control = efam_tight_gg()))
  expect_device_parity(gd, gc)
})
