# Shared by the extended-family tests (test-efam-*.R): simulated data for
# each family and the comparison with mgcv::bam() on the same call.
# (A link held in a variable reaches mgcv's family constructors through
# do.call(): mgcv 1.9-x reads `link` by substitute(), so nb(link = lk)
# would ask for a link named "lk".)

efam_sim <- function(family, n = 2000, seed = 3) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "normal", verbose = FALSE)
  f <- (d$f - mean(d$f)) / stats::sd(d$f)          # about N(0, 1)
  d$y <- switch(family,
    tw = mgcv::rTweedie(exp(f / 2 + 1), p = 1.5, phi = 1.2),
    betar = {
      mu <- stats::plogis(f / 2)
      stats::rbeta(n, mu * 8, (1 - mu) * 8)
    },
    scat = f + 0.7 * stats::rt(n, df = 4),
    ziP = {
      lambda <- exp(f / 2 + 1)
      p <- stats::binomial()$linkinv(-0.5 + 1.2 * log(lambda))
      ind <- stats::runif(n) < p
      y <- numeric(n)
      y[ind] <- stats::qpois(stats::runif(sum(ind), stats::dpois(0, lambda[ind]), 1),
                             lambda[ind])
      y
    },
    ocat = {
      u <- f + stats::rlogis(n)
      as.numeric(cut(u, c(-Inf, -1, 0, 1.5, Inf)))
    })
  d
}

# gam_gpu() against bam() on the same data and family (two family objects:
# a fit writes its theta into the family).  The issue's bounds are linear
# predictors to 1e-6 of their range, theta to 1e-4 relative, smoothing
# parameters to 1e-3 (log), EDF within 0.01; the engine does far better,
# and these defaults are what it achieves with a margin (measured on the
# simulated cases of test-efam-*.R: linear predictors <= 2.4e-11 of their
# range, theta <= 1e-11, log sp <= 1.2e-10, EDF <= 7.3e-11, REML score,
# deviance and aic <= 1.2e-12 relative, residuals <= 1.7e-10).  A test
# that needs looser says why.  Where the arithmetic is not mgcv's
# (same_arithmetic(), helper-compare.R: another BLAS, or gamgpu's own CPU
# Gram kernel, which the GPU machine's "auto" takes) the fits agree to the
# stopping rules, not to rounding, and the tolerances are cross_tol times
# these (cnorm()'s fREML with gamgpu's kernel: theta 1.3e-8 from bam's,
# 3e-13 with the BLAS bam uses).
expect_efam_parity <- function(g, b, eta_tol = 1e-9, theta_tol = 1e-9, sp_tol = 1e-8,
                               edf_tol = 1e-8, cross_tol = 100) {
  if (!same_arithmetic(g)) {
    eta_tol <- eta_tol * cross_tol
    theta_tol <- theta_tol * cross_tol
    sp_tol <- sp_tol * cross_tol
    edf_tol <- edf_tol * cross_tol
  }
  expect_true(g$converged)
  expect_identical(g$family$family, b$family$family)
  tg <- g$family$getTheta(TRUE)
  tb <- b$family$getTheta(TRUE)
  expect_length(tg, length(tb))
  expect_lt(max(abs(tg - tb) / pmax(abs(tb), 1e-3)), theta_tol)
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, eta_tol)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)) /
              diff(range(b$fitted.values)), 10 * eta_tol)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), 10 * eta_tol)
  if (length(b$sp)) expect_lt(max(abs(log(g$sp) - log(b$sp))), sp_tol)
  expect_lt(max(abs(g$edf - b$edf)), edf_tol)
  expect_lt(abs(g$sig2 / b$sig2 - 1), theta_tol)
  expect_true(g$scale.estimated)
  expect_lt(abs(g$deviance - b$deviance) / b$deviance, 10 * eta_tol)
  expect_lt(abs(g$null.deviance - b$null.deviance) / b$null.deviance, 10 * eta_tol)
  expect_lt(abs(g$aic - b$aic) / abs(b$aic), 10 * eta_tol)
  # the fit's residuals are residuals()'s (computed faster for ziP/betar)
  expect_equal(g$residuals, stats::residuals(g), tolerance = 1e-10)
  expect_lt(max(abs(stats::residuals(g) - stats::residuals(b))), 1e2 * eta_tol)
}

# A fit on the device against the CPU engine's, to `tol` relative.
expect_device_parity <- function(gd, gc, tol = 1e-9) {
  expect_lt(rel_err(gd$coefficients, gc$coefficients), tol)
  expect_lt(rel_err(gd$fitted.values, gc$fitted.values), tol)
  if (length(gc$family$getTheta()))        # (cpois() has none)
    expect_lt(max(abs(gd$family$getTheta() - gc$family$getTheta()) /
                    pmax(abs(gc$family$getTheta()), 1)), tol)
}

# mgcv's tw() keeps functions (ls, aic, rd) in environments whose parent is
# the global one, where they look for mgcv's ldTweedie and rTweedie: found
# only while mgcv is attached.  with_mgcv() evaluates expr with mgcv
# attached, detached again if it was not.  (gam_gpu() needs no such thing.)
with_mgcv <- function(expr) {
  if (!"package:mgcv" %in% search()) {
    suppressPackageStartupMessages(attachNamespace("mgcv"))
    on.exit(detach("package:mgcv"), add = TRUE)
  }
  expr
}
with_mgcv_bam <- function(...) with_mgcv(mgcv::bam(...))

# The methods of gam objects accept fit g as they accept bam()'s b, on the
# first rows of d (gam.check with mgcv attached: tw()'s rd() needs it).
expect_efam_methods <- function(g, b, d) {
  expect_s3_class(summary(g), "summary.gam")
  expect_equal(predict(g, d[1:10, ], type = "response"),
               predict(b, d[1:10, ], type = "response"), tolerance = 1e-6)
  expect_equal(predict(g, d[1:10, ]), predict(b, d[1:10, ]), tolerance = 1e-6)
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  expect_silent(plot(g, pages = 1))
  expect_output(with_mgcv(mgcv::gam.check(g)))
  expect_output(print(g), "Family", fixed = TRUE)
}

# The device test of each family: on efam_sim(name)'s data, the fit on the
# device (expect_device_fit(): engine kernels launched, no fallback, no
# device memory left) equals the CPU engine's (expect_device_parity()) and
# bam()'s (expect_efam_parity() with `...`).  family() builds the family.
expect_efam_device <- function(name, family, ...) {
  skip_if_no_device()
  d <- efam_sim(name, n = 6000, seed = 9)
  fml <- y ~ s(x0) + s(x1) + s(x2)
  gc <- gam_gpu(fml, family = family(), data = d, device = "off")
  gd <- expect_device_fit(gam_gpu(fml, family = family(), data = d, device = "required"))
  expect_device_parity(gd, gc)
  b <- with_mgcv_bam(fml, family = family(), data = d)
  expect_efam_parity(gd, b, ...)
}

# Two-sided relative equality per element, tol * max(|a|, |b|), equal
# non-finite values accepted (the row tests of ziP and ocat).
efam_rel_ok <- function(a, b, tol = 1e-12) {
  a <- as.numeric(a)
  b <- as.numeric(b)
  if (length(a) != length(b)) return(FALSE)
  fin <- is.finite(b)
  if (!identical(is.finite(a), fin) || !identical(a[!fin], b[!fin])) return(FALSE)
  all(abs(a[fin] - b[fin]) <= tol * pmax(abs(a[fin]), abs(b[fin])))
}

# mustart as bgam.fit evaluates family$initialize
efam_mustart <- function(fam, y) {
  e <- new.env()
  e$y <- y
  e$family <- fam
  eval(fam$initialize, e)
  e$mustart
}

# gam()'s REML and ML for the extended families against gam_gpu()'s
# (test-efam-outer.R, test-efam-censored.R): both at a tight inner
# tolerance and newton()'s conv.tol of 1e-9 (gam_gpu: newton.tol), so that
# both optimizers stop at the optimum; the bounds are test-efam-outer.R's
# measurements.
efam_tight_mgcv <- function() mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9))
efam_tight_gg <- function() gam_gpu_control(epsilon = 1e-10, newton.tol = 1e-9)

# gam_gpu's fit against gam()'s: both converged, the criterion no worse
# than gam()'s (and not better but by rounding: both reach the optimum),
# fitted values, smoothing parameters, theta, EDF, covariances and gam()'s
# fields, at the bounds measured above (looser where a smoothing parameter
# is on a flat end, and 100x under another BLAS than R's reference one,
# where gam()'s own answer moves with the roundings); theta_b is gam()'s
# theta read right after its fit (the family object of a call is shared:
# gam_gpu's fit moves it).
expect_efam_outer <- function(g, b, theta_b, label) {
  flat <- abs(log(b$sp)) >= 8
  tol <- if (any(flat)) c(score = 1e-8, fit = 5e-6, sp = 2e-4, edf = 2e-4, V = 5e-5) else
    c(score = 1e-12, fit = 5e-7, sp = 2e-5, edf = 1e-5, V = 5e-7)
  if (!reference_blas()) tol <- tol * 100
  expect_true(isTRUE(g$converged), label = label)
  # (in another arithmetic than mgcv's -- the 16-core GPU machine's
  # threads and BLAS -- a step at the optimum may find no decrease beyond
  # rounding: newton()'s "step failed", as outer_agrees() allows; the
  # bounds below hold either way)
  expect_true(g$outer.info$conv %in%
                if (same_arithmetic(g)) "full convergence" else c("full convergence", "step failed"),
              label = label)
  expect_identical(g$optimizer, b$optimizer, label = label)
  expect_identical(g$method, b$method, label = label)
  expect_identical(names(g$gcv.ubre), names(b$gcv.ubre), label = label)
  rel <- (g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]])
  expect_lt(rel, tol[["score"]], label = paste(label, "score no worse"))
  expect_gt(rel, -tol[["score"]], label = paste(label, "score no better than rounding"))
  if (any(!flat))
    expect_lt(max(abs(log(g$sp[!flat]) - log(b$sp[!flat]))), tol[["sp"]],
              label = paste(label, "sp"))
  r <- diff(range(b$fitted.values))
  expect_lt(max(abs(g$fitted.values - b$fitted.values)) / r, tol[["fit"]],
            label = paste(label, "fitted"))
  if (length(theta_b))
    expect_lt(max(abs(g$family$getTheta() - theta_b)), tol[["sp"]], label = paste(label, "theta"))
  expect_lt(max(abs(g$edf - b$edf)), tol[["edf"]], label = paste(label, "edf"))
  for (nm in c("Vp", "Vc"))
    expect_lt(max(abs(g[[nm]] - b[[nm]])) / max(abs(b[[nm]])), tol[["V"]],
              label = paste(label, nm))
  expect_identical(g$scale.estimated, b$scale.estimated, label = label)
  expect_lt(abs(g$sig2 - b$sig2), tol[["fit"]] * b$sig2, label = paste(label, "scale"))
  expect_lt(abs(g$aic - b$aic), tol[["fit"]] * abs(b$aic), label = paste(label, "aic"))
  expect_identical(g$family$family, b$family$family, label = label)
  # gam.fit4's working residuals, -Deta / Deta2 (NA where gam()'s are)
  rb <- unname(b$residuals)
  expect_identical(is.na(g$residuals), is.na(rb), label = paste(label, "residuals NA"))
  expect_lt(max(abs(g$residuals - rb), na.rm = TRUE) / max(abs(rb), na.rm = TRUE),
            10 * tol[["fit"]], label = paste(label, "residuals"))
}

# gam() and gam_gpu() on one call, each with its own family object
efam_pair <- function(fo, family, data, ..., tight = TRUE) {
  # (tw()'s ls() finds ldTweedie only with mgcv attached; gam_gpu() needs
  # no such thing)
  b <- with_mgcv(if (tight) mgcv::gam(fo, family = family(), data = data,
                                      control = efam_tight_mgcv(), ...)
                 else mgcv::gam(fo, family = family(), data = data, ...))
  theta_b <- b$family$getTheta()
  g <- if (tight) gam_gpu(fo, family = family(), data = data, device = "off",
                          control = efam_tight_gg(), ...)
       else gam_gpu(fo, family = family(), data = data, device = "off", ...)
  list(b = b, g = g, theta_b = theta_b)
}

