# method = "REML" and "ML" beyond the additive model (R/outer.R): gam()'s
# Laplace approximate marginal likelihood (gam.fit3's REML and ML scores)
# for binomial, poisson, Gamma, inverse.gaussian and non-identity gaussian
# models, optimized by Newton's method with the exact gradient and Hessian,
# against mgcv::gam() on the same formula.  gam() runs with a tight
# control (its default stops its Newton iteration early: 1e-5 of the range
# apart); where the criterion has a flat end (a smoothing parameter on its
# way to infinity) the optimizers stop at different points along it, and
# only the score is compared there.

outer_data <- function(n = 1500, seed = 3) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), off = log(runif(n, 1, 3)))
  eta <- sin(2 * pi * d$x0) + 2 * d$x1^2 - 1 + cos(3 * d$x2)
  d$yb <- rbinom(n, 1, plogis(eta))
  d$ns <- sample(1:5, n, TRUE)
  d$ys <- rbinom(n, d$ns, plogis(eta))
  d$yp <- rpois(n, exp(eta / 2 + d$off))
  d$yg <- rgamma(n, 3, 3 / exp(eta / 3 + 1))
  d$yi <- exp(eta / 4) * rgamma(n, 20, 20)
  d$yn <- exp(eta / 3 + 2) + rnorm(n) * 0.5
  d
}
tight_gam <- function() mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9))

outer_agrees <- function(g, b, label, score_tol = 1e-11, eta_tol = 1e-6, sp_tol = 1e-5,
                           edf_tol = 1e-6, cov_tol = 1e-5) {
  expect_true(isTRUE(g$converged), label = label)
  # in mgcv's arithmetic, gam()'s Newton ends as gam()'s; in another (the
  # GPU's sums, gamgpu's CPU Gram kernel, an optimised BLAS), a step at the
  # optimum may find no decrease beyond rounding, and newton() says "step
  # failed" -- as gam() itself does under such a BLAS; the bounds below hold
  expect_true(g$outer.info$conv %in%
                if (same_arithmetic(g)) "full convergence"
                else c("full convergence", "step failed"), label = label)
  expect_identical(names(g$gcv.ubre), names(b$gcv.ubre), label = label)
  expect_identical(g$method, b$method, label = label)
  expect_identical(g$scale.estimated, b$scale.estimated, label = label)
  rel <- (g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]])
  expect_lt(abs(rel), score_tol, label = paste(label, "score"))
  r <- diff(range(b$fitted.values))
  expect_lt(max(abs(g$fitted.values - b$fitted.values)) / r, eta_tol, label = paste(label, "fit"))
  ok <- abs(log(b$sp)) < 8
  if (any(ok))
    expect_lt(max(abs(log(g$sp[ok]) - log(b$sp[ok]))), sp_tol, label = paste(label, "sp"))
  expect_lt(max(abs(g$edf - b$edf)), edf_tol, label = paste(label, "edf"))
  expect_lt(rel_err(g$Vp, b$Vp), cov_tol, label = paste(label, "Vp"))
  if (!is.null(b$Vc)) expect_lt(rel_err(g$Vc, b$Vc), cov_tol, label = paste(label, "Vc"))
  expect_lt(abs(g$scale - b$scale) / b$scale, cov_tol, label = paste(label, "scale"))
  expect_lt(abs(g$reml.scale - b$reml.scale) / b$reml.scale, cov_tol,
            label = paste(label, "reml.scale"))
}

test_that("REML and ML are gam()'s: canonical and non-canonical links, estimated scale", {
  d <- outer_data()
  f3 <- ~ s(x0) + s(x1) + s(x2)
  cases <- list(
    list(cbind(ys, ns - ys) ~ s(x0) + s(x1, bs = "cr") + s(x2), binomial(), "binomial cbind"),
    list(yp ~ s(x0) + s(x1) + s(x2) + offset(off), poisson(), "poisson offset"),
    list(update(f3, yg ~ .), Gamma(link = "log"), "Gamma log"),
    list(update(f3, yg ~ .), Gamma(), "Gamma inverse"),
    list(update(f3, yn ~ .), gaussian(link = "log"), "gaussian log"),
    list(yg ~ s(x0) + te(x1, x2), Gamma(link = "log"), "Gamma te"))
  for (m in c("REML", "ML")) for (cs in cases) {
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = m, control = tight_gam())
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = m, device = "off",
                 control = tight_gam_gg())
    # (under ML the poisson and cbind binomial fits put s(x2) on a plateau,
    # log sp 17 to 18, where the two optimizers stop 1e-6 apart in score)
    outer_agrees(g, b, paste(m, cs[[3]]), score_tol = 1e-9, eta_tol = 1e-6,
                   sp_tol = 1e-5, edf_tol = 1e-5, cov_tol = 1e-5)
    # (a CPU fit's rows are the host's)
    expect_identical(g$device$outer_rows, "cpu", label = paste(m, cs[[3]]))
  }
})

test_that("along a flat end of the criterion only the score is gam()'s", {
  # x-effects this weak leave one smoothing parameter free to grow: gam()
  # and gam_gpu() stop at different points of the plateau, with scores
  # 5e-9 relative apart (either way, by the optimizers' tolerances)
  d <- outer_data()
  for (cs in list(list(binomial(), "logit"), list(binomial(link = "probit"), "probit"))) {
    for (m in c("REML", "ML")) {
      b <- mgcv::gam(yb ~ s(x0) + s(x1) + s(x2), family = cs[[1]], data = d, method = m,
                     control = tight_gam())
      g <- gam_gpu(yb ~ s(x0) + s(x1) + s(x2), family = cs[[1]], data = d, method = m,
                   device = "off", control = tight_gam_gg())
      label <- paste(m, cs[[2]])
      expect_true(isTRUE(g$converged), label = label)
      rel <- (g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]])
      expect_lt(abs(rel), 2e-8, label = label)
      expect_gt(max(log(g$sp)), 8, label = label)          # the plateau is there
      expect_lt(max(abs(g$fitted.values - b$fitted.values)), 1e-5, label = label)
      expect_lt(abs(sum(g$edf) - sum(b$edf)), 1e-3, label = label)
    }
  }
})

test_that("at gam()'s smoothing parameters every field is gam()'s", {
  # the criterion itself, the covariances (gam() uses Fisher's weights for
  # them and Newton's for the criterion), EDFs, leverages, aic
  d <- outer_data()
  for (cs in list(list(yb ~ s(x0) + s(x1) + s(x2), binomial(link = "probit"), "probit"),
                  list(yg ~ s(x0) + s(x1) + s(x2), Gamma(link = "log"), "Gamma log"),
                  list(yi ~ s(x0) + s(x1), inverse.gaussian(link = "log"), "inverse.gaussian"))) {
    for (m in c("REML", "ML")) {
      b0 <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = m)
      b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = m, sp = b0$sp,
                     control = tight_gam())
      g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = m, sp = b0$sp,
                   device = "off", control = tight_gam_gg())
      label <- paste(m, cs[[3]])
      expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), 1e-13,
                label = label)
      expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)),
                1e-8, label = label)
      for (nm in c("Vp", "Ve"))
        expect_lt(rel_err(g[[nm]], b[[nm]]), 1e-7, label = paste(label, nm))
      expect_equal(is.null(g$Vc), is.null(b$Vc), label = label)
      if (!is.null(b$Vc)) expect_lt(rel_err(g$Vc, b$Vc), 1e-7, label = paste(label, "Vc"))
      for (nm in c("edf", "edf1", "hat"))
        expect_lt(max(abs(g[[nm]] - b[[nm]])), 1e-8, label = paste(label, nm))
      expect_lt(max(abs(g$weights - b$weights)), 1e-8 * max(b$weights), label = label)
      expect_lt(max(abs(g$working.weights - b$working.weights)),
                1e-8 * max(abs(b$working.weights)), label = label)
      expect_lt(abs(g$aic - b$aic), 1e-6, label = label)
      expect_lt(abs(g$scale - b$scale) / b$scale, 1e-8, label = label)
      # and the fit reports what it is
      expect_s3_class(summary(g), "summary.gam")
    }
  }
})

test_that("the criterion's gradient and Hessian are its derivatives", {
  d <- outer_data(n = 600)
  for (cs in list(list(yb ~ s(x0) + s(x1), binomial(link = "probit"), 1),
                  list(yg ~ s(x0) + te(x1, x2), Gamma(link = "log"), -1))) {
    G <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = "REML", fit = FALSE)
    for (m in c("REML", "ML", "GCV.Cp", "GACV.Cp", "P-REML", "P-ML")) {
      P <- gamgpu:::outer_problem(G, test_session(G$X, G$y, G$w), G$y, G$w, NULL, cs[[2]],
                                  G$S, m, 1, cs[[3]], own = TRUE)
      on.exit(P$close(), add = TRUE)
      ctl <- gam_gpu_control()
      lsp <- seq(-1, 2, length.out = length(G$S))
      lphi <- if (P$lphi) log(0.3)           # (GCV, UBRE: no scale parameter)
      e <- gamgpu:::outer_score(P, lsp, lphi, NULL, ctl)
      th <- c(lsp, lphi)
      at <- function(t, deriv) gamgpu:::outer_score(P, t[seq_along(lsp)],
                                                     if (is.null(lphi)) NULL else t[length(t)],
                                                     e$beta, ctl, deriv = deriv)
      h <- 1e-5
      for (i in seq_along(th)) {
        tp <- th
        tm <- th
        tp[i] <- tp[i] + h
        tm[i] <- tm[i] - h
        fd <- (at(tp, FALSE)$score - at(tm, FALSE)$score) / (2 * h)
        sc <- max(abs(e$grad), abs(e$score) * 1e-3)
        expect_lt(abs(fd - e$grad[i]), 1e-6 * sc, label = paste(m, "grad", i))
        fdh <- (at(tp, TRUE)$grad - at(tm, TRUE)$grad) / (2 * h)
        expect_lt(max(abs(fdh - e$hess[, i])), 1e-5 * max(abs(e$hess)),
                  label = paste(m, "hess", i))
      }
    }
  }
})

test_that("GCV.Cp is gam()'s: UBRE with a known scale, GCV with an estimated one", {
  # gam()'s default method: gam.fit3's GCV or UBRE with Fisher's tr(A), its
  # outer Newton; the quasi families take GCV
  d <- outer_data()
  d$yq <- d$yp
  f3 <- ~ s(x0) + s(x1) + s(x2)
  cases <- list(
    list(update(f3, yb ~ .), binomial(), "UBRE", "binomial"),
    list(update(f3, yb ~ .), binomial(link = "probit"), "UBRE", "probit"),
    list(cbind(ys, ns - ys) ~ s(x0) + s(x1, bs = "cr") + s(x2), binomial(), "UBRE", "cbind"),
    list(yp ~ s(x0) + s(x1) + s(x2) + offset(off), poisson(), "UBRE", "poisson offset"),
    list(update(f3, yg ~ .), Gamma(link = "log"), "GCV", "Gamma log"),
    list(update(f3, yn ~ .), gaussian(link = "log"), "GCV", "gaussian log"),
    list(update(f3, yq ~ .), quasipoisson(), "GCV", "quasipoisson"),
    list(yg ~ s(x0) + te(x1, x2), Gamma(link = "log"), "GCV", "Gamma te"))
  for (cs in cases) {
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, control = tight_gam())
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = "GCV.Cp", device = "off",
                 control = tight_gam_gg())
    label <- cs[[4]]
    expect_identical(g$method, cs[[3]], label = label)
    expect_identical(b$method, cs[[3]], label = label)
    expect_true(isTRUE(g$converged), label = label)
    expect_identical(g$outer.info$conv, "full convergence", label = label)
    expect_identical(names(g$gcv.ubre), "GCV.Cp", label = label)
    expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), 1e-11,
              label = paste(label, "score"))
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)),
              1e-7, label = paste(label, "fit"))
    expect_lt(max(abs(log(g$sp) - log(b$sp))), 1e-5, label = paste(label, "sp"))
    expect_lt(max(abs(g$edf - b$edf)), 1e-6, label = paste(label, "edf"))
    expect_lt(rel_err(g$Vp, b$Vp), 1e-6, label = paste(label, "Vp"))
    expect_lt(abs(g$scale - b$scale) / b$scale, 1e-7, label = paste(label, "scale"))
    expect_identical(g$scale.estimated, b$scale.estimated, label = label)
    if (is.finite(b$aic)) expect_lt(abs(g$aic - b$aic), 1e-5, label = paste(label, "aic"))
  }
})

test_that("a known scale, gamma and partly fixed smoothing parameters are gam()'s", {
  d <- outer_data()
  f <- yg ~ s(x0) + s(x1) + s(x2)
  b <- mgcv::gam(f, family = Gamma(link = "log"), data = d, method = "REML", scale = 0.4,
                 control = tight_gam())
  g <- gam_gpu(f, family = Gamma(link = "log"), data = d, method = "REML", scale = 0.4,
               device = "off", control = tight_gam_gg())
  expect_false(g$scale.estimated)
  expect_equal(g$scale, 0.4)
  outer_agrees(g, b, "known scale")
  b <- mgcv::gam(f, family = Gamma(link = "log"), data = d, method = "REML", gamma = 1.4,
                 control = tight_gam())
  g <- gam_gpu(f, family = Gamma(link = "log"), data = d, method = "REML", gamma = 1.4,
               device = "off", control = tight_gam_gg())
  outer_agrees(g, b, "gamma 1.4")
  b <- mgcv::gam(f, family = Gamma(link = "log"), data = d, method = "ML", sp = c(-1, 3, -1),
                 control = tight_gam())
  g <- gam_gpu(f, family = Gamma(link = "log"), data = d, method = "ML", sp = c(-1, 3, -1),
               device = "off", control = tight_gam_gg())
  outer_agrees(g, b, "one sp fixed")
  expect_equal(unname(g$full.sp[2]), 3)
  expect_identical(names(g$sp), names(b$sp))
})

test_that("P-REML and P-ML are gam()'s: the Pearson scale, and REML or ML with a known one", {
  d <- outer_data()
  cases <- list(
    list(yg ~ s(x0) + s(x1) + s(x2), Gamma(link = "log"), "Gamma log"),
    list(yn ~ s(x0) + s(x1), gaussian(), "gaussian identity"),
    list(yi ~ s(x0) + s(x1), inverse.gaussian(link = "log"), "inverse.gaussian"),
    list(yp ~ s(x0) + s(x1) + offset(off), poisson(), "poisson (known scale)"))
  for (m in c("P-REML", "P-ML")) for (cs in cases) {
    label <- paste(m, cs[[3]])
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = m, control = tight_gam())
    # (in another arithmetic than mgcv's -- gamgpu's CPU Gram kernel, which
    # "auto" takes where it times faster -- inverse.gaussian's P-ML Newton
    # ends in a step failure at the optimum, 1.8e-12 of the score from
    # gam()'s, and warns of it as gam() would: allowed there, not in mgcv's)
    warned <- NULL
    g <- withCallingHandlers(
      gam_gpu(cs[[1]], family = cs[[2]], data = d, method = m, device = "off",
              control = tight_gam_gg()),
      gamgpu_not_converged = function(w) {
        warned <<- conditionMessage(w)
        invokeRestart("muffleWarning")
      })
    if (!is.null(warned)) {
      expect_false(same_arithmetic(g), label = paste(label, "warned in mgcv's arithmetic"))
      expect_match(warned, "step failure", fixed = TRUE)
    }
    expect_identical(names(g$gcv.ubre), m, label = label)
    # (Gamma's P-ML puts s(x1) and s(x2) on a plateau, log sp 10 to 13,
    # where the optimizers stop at different points)
    outer_agrees(g, b, label, score_tol = 1e-9, eta_tol = 1e-6, sp_tol = 1e-4,
                 edf_tol = 1e-5, cov_tol = 1e-5)
  }
})

test_that("GACV.Cp is gam()'s: GACV with an estimated scale, UBRE with a known one", {
  d <- outer_data()
  cases <- list(
    list(yg ~ s(x0) + s(x1) + s(x2), Gamma(link = "log"), "GACV", "Gamma log"),
    list(yp ~ s(x0) + s(x1), quasipoisson(), "GACV", "quasipoisson"),
    list(yi ~ s(x0) + s(x1), inverse.gaussian(link = "log"), "GACV", "inverse.gaussian"),
    list(yb ~ s(x0) + s(x1) + s(x2), binomial(), "UBRE", "binomial"))
  for (cs in cases) {
    label <- cs[[4]]
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = "GACV.Cp",
                   control = tight_gam())
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = "GACV.Cp", device = "off",
                 control = tight_gam_gg())
    expect_identical(g$method, cs[[3]], label = label)
    expect_identical(b$method, cs[[3]], label = label)
    expect_identical(names(g$gcv.ubre), "GACV.Cp", label = label)
    expect_true(isTRUE(g$converged), label = label)
    expect_identical(g$outer.info$conv, "full convergence", label = label)
    expect_lt((g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), 1e-8, label = label)
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)),
              1e-6, label = paste(label, "fit"))
    expect_lt(max(abs(g$edf - b$edf)), 1e-4, label = paste(label, "edf"))
    expect_lt(rel_err(g$Vp, b$Vp), 1e-5, label = paste(label, "Vp"))
    expect_lt(abs(g$scale - b$scale) / b$scale, 1e-7, label = paste(label, "scale"))
  }
})

test_that("the aic is family$aic's, from C sums but with cbind() trials", {
  d <- outer_data(n = 800)
  d$w <- sample(1:3, nrow(d), TRUE)      # (integer: the cbind() successes stay whole)
  # (formula, family, weights, whether the aic is the fit's own C sum)
  cases <- list(list(yb ~ s(x0) + s(x1), binomial(), NULL, TRUE),
                list(yp ~ s(x0) + s(x1) + offset(off), poisson(), "w", TRUE),
                list(cbind(ys, ns - ys) ~ s(x0) + s(x1), binomial(), "w", FALSE),
                list(yg ~ s(x0) + s(x1), Gamma(link = "log"), NULL, TRUE),
                list(yg ~ s(x0) + s(x1), Gamma(link = "log"), "w", TRUE))
  for (cs in cases) {
    w <- if (is.null(cs[[3]])) rep(1, nrow(d)) else d[[cs[[3]]]]
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, weights = w, method = "REML",
                 device = "off", control = tight_gam_gg())
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, weights = w, method = "REML",
                   sp = g$sp, control = tight_gam())
    # gam()'s aic at the same smoothing parameters (its fit to its tolerance)
    expect_lt(abs(g$aic - b$aic), 1e-6 * abs(b$aic), label = deparse(cs[[1]]))
    # and, from the C sums, R's family$aic on gam_gpu's own fit to rounding
    # (Gamma's at dev = the REML scale times sum(w), as gam.fit3's dev1;
    # with cbind() trials R computes it)
    if (cs[[4]]) {
      dev <- if (cs[[2]]$family == "Gamma") g$reml.scale * sum(g$prior.weights) else 0
      r <- cs[[2]]$aic(g$y, 1, fitted(g), g$prior.weights, dev) + 2 * sum(g$edf)
      expect_lt(abs(g$aic - r), 1e-12 * abs(r), label = deparse(cs[[1]]))
    }
  }
})

test_that("what gam_gpu has not got of gam()'s methods is refused with what to do", {
  # (every family the engine has takes them: quasi families and
  # negbin(theta) in test-method-outer-theta-families.R, nb() and the other
  # extended families in test-efam-outer.R)
  d <- outer_data(n = 300)
  expect_error(gam_gpu(yp ~ s(x0), family = poisson(), data = d, method = "REML", rho = 0.3),
               class = "gamgpu_unsupported_method")
  expect_error(gam_gpu(yp ~ s(x0), family = poisson(), data = d, method = "UBRE"),
               class = "gamgpu_bad_method")
})

test_that("on the GPU, the outer iteration's products run on the device and give the CPU's fit", {
  skip_if_no_device()
  # (the CPU's fit set up as the device's is: gam()'s bases from facts of
  # every row, which a CPU fit takes only when asked for)
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- outer_data(n = 20000)
  for (cs in list(list(yb ~ s(x0) + s(x1) + s(x2), binomial(link = "probit")),
                  list(yg ~ s(x0) + te(x1, x2), Gamma(link = "log")))) {
    for (m in c("REML", "ML", "P-REML", "GCV.Cp", "GACV.Cp")) {
      label <- paste(m, cs[[2]]$family)
      gpu_telemetry(reset = TRUE)
      g <- expect_device_fit(gam_gpu(cs[[1]], family = cs[[2]], data = d, method = m,
                                     device = "required"))
      t <- gpu_telemetry()
      expect_identical(g$device$outer_gram, "cuda:0", label = label)
      # every penalized IRLS step and every derivative product: more Gram
      # launches than the final fit's
      expect_gt(g$device$outer_grams, 10L)
      expect_gt(sum(t$launches[t$backend == "gram" | t$backend == "engine"]), 10)
      # gam.fit3's rows computed on the device (outer.cu), beside X
      expect_identical(g$device$outer_rows, "cuda:0", label = label)
      expect_gt(sum(t$launches[t$backend == "outer"]), 10)
      c <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = m, device = "off")
      expect_identical(c$device$outer_gram, "cpu", label = label)
      expect_identical(c$device$outer_rows, "cpu", label = label)
      expect_lt(rel_err(coef(g), coef(c)), 1e-9, label = label)
      expect_lt(rel_err(fitted(g), fitted(c)), 1e-9, label = label)
      expect_lt(abs(g$gcv.ubre[[1]] / c$gcv.ubre[[1]] - 1), 1e-12, label = label)
      expect_lt(rel_err(g$Vp, c$Vp), 1e-8, label = label)
    }
  }
})
