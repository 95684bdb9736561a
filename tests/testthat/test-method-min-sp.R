# gam()'s fixed penalty: min.sp (lower bounds on the smoothing parameters,
# their penalty sum_k min.sp[k] S_k held fixed, the fitted sp the excess
# over them) and H (a fixed p x p penalty), with gam()'s methods, against
# mgcv::gam() on the same call.  gam() runs with a tight control so that
# both optimizers stop at the optimum rather than near it.  fREML (bam())
# ignores min.sp and has no H: refused there.

minsp_data <- function(n = 500, seed = 3) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, verbose = FALSE, scale = 2)
  d$yb <- rbinom(n, 1, plogis((d$f - mean(d$f)) / 2))
  d$yp <- rpois(n, exp(d$f / 6))
  d$yn <- rnbinom(n, size = 3, mu = exp(d$f / 6))
  d
}
tight <- function() mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9))

# (score_tol: where some smoothing parameter heads for 0 or infinity the
# criterion is flat along it, and the optimizers stop at different points
# of that end; there the smoothing parameters are compared only where they
# are not on their way, |log sp| < 8, as in test-method-outer.R)
minsp_agrees <- function(g, b, label, fit_tol = 1e-6, sp_tol = 1e-5, score_tol = 1e-10) {
  expect_identical(g$outer.info$conv, b$outer.info$conv, label = label)
  expect_identical(names(g$gcv.ubre), names(b$gcv.ubre), label = label)
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), score_tol, label = paste(label, "score"))
  expect_lt(max(abs(fitted(g) - fitted(b))) / diff(range(fitted(b))), fit_tol,
            label = paste(label, "fit"))
  expect_identical(names(g$sp), names(b$sp), label = label)
  ok <- abs(log(b$sp)) < 8
  expect_true(any(ok), label = label)
  expect_lt(max(abs(log(g$sp[ok]) - log(b$sp[ok]))), sp_tol, label = paste(label, "sp"))
  expect_lt(max(abs(g$edf - b$edf)), 1e-5, label = paste(label, "edf"))
  expect_lt(rel_err(g$Vp, b$Vp), 1e-5, label = paste(label, "Vp"))
}

test_that("min.sp is gam()'s: the smoothing parameters above their bounds, every method", {
  d <- minsp_data()
  f3 <- ~ s(x0) + s(x1) + s(x2)
  cases <- list(list(update(f3, y ~ .), gaussian(), c("REML", "ML", "GCV.Cp")),
                list(update(f3, yb ~ .), binomial(), c("REML", "ML", "GCV.Cp")),
                list(update(f3, yp ~ .), poisson(), c("REML", "GCV.Cp")))
  for (cs in cases) for (m in cs[[3]]) {
    label <- paste(cs[[2]]$family, m)
    # bounds below the unbounded optimum: the criterion has an interior
    # optimum in the excess, where both optimizers stop
    b0 <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = m)
    ms <- unname(b0$sp) / 4
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = m, min.sp = ms,
                   control = tight())
    # (gaussian GCV.Cp: magic(), which newton.tol would replace by Newton)
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = m, min.sp = ms,
                 device = "off",
                 control = if (m == "GCV.Cp" && cs[[2]]$family == "gaussian") tight_gg()
                           else tight_gam_gg())
    # (gaussian GCV.Cp: gam()'s magic() with the fixed penalty, as gam()'s)
    minsp_agrees(g, b, label,
                 fit_tol = if (m == "GCV.Cp" && cs[[2]]$family == "gaussian") 1e-7 else 1e-6,
                 sp_tol = if (m == "GCV.Cp" && cs[[2]]$family == "gaussian") 1e-4 else 1e-5)
    # bounds below the optimum leave the penalty where it was: the fitted
    # sp are the unbounded fit's less the bounds
    g0 <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = m, device = "off",
               control = tight_gam_gg())
    expect_lt(max(abs((g$sp + ms) / g0$sp - 1)), 1e-4, label = label)
    expect_gt(min(g0$sp / g$sp), 1.2, label = label)
    # summary and predict on the fit, as on gam()'s
    expect_equal(summary(g)$s.table, summary(b)$s.table, tolerance = 1e-4)
    expect_equal(unname(predict(g, d[1:5, ])), unname(predict(b, d[1:5, ])), tolerance = 1e-6)
  }
})

test_that("min.sp with several penalties per smooth, shared ones and select = TRUE", {
  d <- minsp_data()
  b0 <- mgcv::gam(yb ~ s(x0) + te(x1, x2), family = binomial, data = d, method = "REML")
  ms <- unname(b0$sp) / 3
  b <- mgcv::gam(yb ~ s(x0) + te(x1, x2), family = binomial, data = d, method = "REML",
                 min.sp = ms, control = tight())
  g <- gam_gpu(yb ~ s(x0) + te(x1, x2), family = binomial, data = d, method = "REML",
               min.sp = ms, device = "off", control = tight_gam_gg())
  minsp_agrees(g, b, "te")
  # id-linked smooths: one smoothing parameter, two penalties, two bounds
  f <- y ~ s(x0, id = 1) + s(x3, id = 1) + s(x1)
  b0 <- mgcv::gam(f, data = d, method = "REML")
  ms <- unname(b0$full.sp) / 4
  b <- mgcv::gam(f, data = d, method = "REML", min.sp = ms, control = tight())
  g <- gam_gpu(f, data = d, method = "REML", min.sp = ms, device = "off",
               control = tight_gam_gg())
  minsp_agrees(g, b, "id")
  # select = TRUE: a second penalty per smooth; bounds beyond the penalties
  # are dropped, as gam.setup() drops them
  b <- mgcv::gam(y ~ s(x0) + s(x2), data = d, method = "REML", select = TRUE,
                 min.sp = c(0.1, 0.01, 0.001, 0.01, 99), control = tight())
  g <- gam_gpu(y ~ s(x0) + s(x2), data = d, method = "REML", select = TRUE,
               min.sp = c(0.1, 0.01, 0.001, 0.01, 99), device = "off",
               control = tight_gam_gg())
  # (s(x0)'s second smoothing parameter heads for infinity: a flat end)
  minsp_agrees(g, b, "select", score_tol = 1e-8)
})

test_that("a binding bound (the criterion flat in the excess): gam()'s score or better", {
  d <- minsp_data()
  # bounds above the optimum: the excess heads to zero, where the score is
  # flat and gam() stops where its tests are met
  for (cs in list(list(y ~ s(x0) + s(x1) + s(x2), gaussian()),
                  list(yb ~ s(x0) + s(x1) + s(x2), binomial()))) {
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = "REML",
                   min.sp = c(50, 1, 20), control = tight())
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = "REML",
                 min.sp = c(50, 1, 20), device = "off",
               control = tight_gam_gg())
    expect_identical(g$outer.info$conv, "full convergence")
    expect_lt(g$gcv.ubre[[1]] - b$gcv.ubre[[1]], 1e-8 * abs(b$gcv.ubre[[1]]))
    expect_lt(max(abs(fitted(g) - fitted(b))) / diff(range(fitted(b))), 1e-5)
    expect_lt(max(abs(g$edf - b$edf)), 1e-3)
    # the bound moves the fit: not the fit without it
    g0 <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = "REML", device = "off",
               control = tight_gam_gg())
    expect_gt(max(abs(fitted(g) - fitted(g0))) / diff(range(fitted(b))), 1e-2)
    expect_gt(sum(g0$edf) - sum(g$edf), 1)
  }
})

test_that("H is gam()'s: a fixed penalty on smooth and parametric coefficients", {
  d <- minsp_data()
  f <- y ~ x3 + s(x0) + s(x1) + s(x2)
  p <- ncol(mgcv::gam(f, data = d, fit = FALSE)$X)
  H <- diag(c(0, 2, rep(1e-2, p - 2)))
  for (m in c("REML", "GCV.Cp")) {
    b <- mgcv::gam(f, data = d, method = m, H = H, control = tight())
    g <- gam_gpu(f, data = d, method = m, H = H, device = "off",
                 control = if (m == "GCV.Cp") tight_gg() else tight_gam_gg())
    minsp_agrees(g, b, paste("H", m), fit_tol = 1e-7, sp_tol = 1e-4)
  }
  # with min.sp too: both in the one fixed penalty
  b <- mgcv::gam(f, family = binomial, data = transform(d, y = yb), method = "REML", H = H,
                 min.sp = c(0.01, 0.01, 0.01), control = tight())
  g <- gam_gpu(f, family = binomial, data = transform(d, y = yb), method = "REML", H = H,
               min.sp = c(0.01, 0.01, 0.01), device = "off",
               control = tight_gam_gg())
  # (s(x2)'s smoothing parameter heads for 0: a flat end)
  minsp_agrees(g, b, "H and min.sp", score_tol = 1e-8)
  # no smooth at all: the fixed penalty alone (a ridge on the slopes)
  for (fam in list(gaussian(), binomial())) {
    dd <- if (fam$family == "binomial") transform(d, y = yb) else d
    b <- mgcv::gam(y ~ x0 + x1, family = fam, data = dd, method = "REML", H = diag(c(0, 5, 5)),
                   control = tight())
    g <- gam_gpu(y ~ x0 + x1, family = fam, data = dd, method = "REML", H = diag(c(0, 5, 5)),
                 device = "off",
               control = tight_gam_gg())
    expect_lt(rel_err(coef(g), coef(b)), 1e-9, label = fam$family)
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-10, label = fam$family)
    expect_gt(max(abs(coef(g) - coef(stats::glm(y ~ x0 + x1, family = fam, data = dd)))), 1e-3)
  }
})

test_that("min.sp with an extended family and with a setup object from fit = FALSE", {
  d <- minsp_data()
  f <- yn ~ s(x0) + s(x1) + s(x2)
  b0 <- mgcv::gam(f, family = mgcv::nb(), data = d, method = "REML")
  ms <- unname(b0$sp) / 4
  b <- mgcv::gam(f, family = mgcv::nb(), data = d, method = "REML", min.sp = ms,
                 control = tight())
  g <- gam_gpu(f, family = mgcv::nb(), data = d, method = "REML", min.sp = ms, device = "off",
               control = tight_gam_gg())
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-9)
  expect_lt(max(abs(fitted(g) - fitted(b))) / diff(range(fitted(b))), 1e-5)
  expect_equal(g$family$getTheta(TRUE), b$family$getTheta(TRUE), tolerance = 1e-4)
  # the setup object carries the fixed penalty, as gam(fit = FALSE)'s does
  G <- gam_gpu(y ~ s(x0) + s(x1), data = d, method = "REML", min.sp = c(1, 2), fit = FALSE,
               device = "off",
               control = tight_gam_gg())
  expect_true(is.matrix(G$H))
  g1 <- gam_gpu(G = G, method = "REML", device = "off",
               control = tight_gam_gg())
  g2 <- gam_gpu(y ~ s(x0) + s(x1), data = d, method = "REML", min.sp = c(1, 2), device = "off",
               control = tight_gam_gg())
  expect_identical(coef(g1), coef(g2))
  e <- expect_error(gam_gpu(G = G, device = "off",
               control = tight_gam_gg()), class = "gamgpu_unsupported_argument")
  expect_match(conditionMessage(e), "method = \"REML\"", fixed = TRUE)
  expect_error(gam_gpu(G = G, method = "REML", min.sp = c(1, 2), device = "off",
               control = tight_gam_gg()),
               class = "gamgpu_unsupported_argument")
})

test_that("bad min.sp and H are classed errors", {
  d <- minsp_data(n = 200)
  f <- y ~ s(x0) + s(x1)
  fit <- function(...) gam_gpu(f, data = d, method = "REML", device = "off", ...)
  for (bad in list(-1, c(1, NA), "a", c(1, Inf), matrix(1, 1, 2)))
    expect_error(fit(min.sp = bad), class = "gamgpu_bad_sp")
  e <- expect_error(fit(min.sp = 1), class = "gamgpu_bad_sp")
  expect_match(conditionMessage(e), "2 penalties", fixed = TRUE)
  expect_error(fit(H = diag(3)), class = "gamgpu_bad_input")
  expect_error(fit(H = "a"), class = "gamgpu_bad_input")
  expect_error(fit(H = matrix(NA_real_, 19, 19)), class = "gamgpu_bad_input")
  Hn <- matrix(0, 19, 19)
  Hn[1, 2] <- 1
  e <- expect_error(fit(H = Hn), class = "gamgpu_bad_input")
  expect_match(conditionMessage(e), "symmetric", fixed = TRUE)
  # with fREML: refused, saying to use gam()'s methods
  e <- expect_error(gam_gpu(f, data = d, min.sp = c(1, 1), device = "off",
               control = tight_gam_gg()),
                    class = "gamgpu_unsupported_argument")
  expect_identical(e$arguments, "min.sp")
  e <- expect_error(fit(min.sp = c(1, 1), rho = 0.5), class = "gamgpu_unsupported_argument")
  expect_identical(e$arguments, "rho")
  # zero bounds are no penalty: the fit without them
  expect_identical(coef(fit(min.sp = c(0, 0))), coef(fit()))
})

test_that("on the GPU, min.sp and H fits run on the device and give the CPU's fit", {
  skip_if_no_device()
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  set.seed(5)
  n <- 20000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$yb <- rbinom(n, 1, plogis(sin(2 * pi * d$x0) + d$x1^2 - cos(3 * d$x2)))
  for (m in c("REML", "GCV.Cp")) {
    g <- expect_device_fit(gam_gpu(yb ~ s(x0) + s(x1) + s(x2), family = binomial, data = d,
                                   method = m, min.sp = c(1, 10, 0.1), device = "required"))
    expect_identical(g$device$outer_rows, "cuda:0")
    c <- gam_gpu(yb ~ s(x0) + s(x1) + s(x2), family = binomial, data = d, method = m,
                 min.sp = c(1, 10, 0.1), device = "off")
    expect_lt(rel_err(coef(g), coef(c)), 1e-9, label = m)
    expect_lt(rel_err(fitted(g), fitted(c)), 1e-9, label = m)
    expect_lt(abs(g$gcv.ubre[[1]] / c$gcv.ubre[[1]] - 1), 1e-12, label = m)
  }
})
