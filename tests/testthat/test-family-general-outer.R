# gamgpu's native route for the general families (R/general_outer.R,
# R/general_inner.R, R/general_finish.R): its own Newton iteration
# (gam.fit5's algorithm) and outer REML iteration (newton()'s) on a model
# session's X, the default wherever it takes the call (selected here by
# options(gamgpu.general_route = "native") all the same), against mgcv::gam(method = "REML") fitted to tight control, under
# whichever mgcv is installed (gam()'s fit of these families changed
# between mgcv 1.8-41 and 1.9-3; the route follows the installed one).
# Measured (CPU session), largest difference of a linear predictor over
# its range / of log sp / of an EDF, mgcv 1.8-41 then 1.9-3:
#   gamSim(1) gaulss()      1e-15 / 6e-11 / 1e-13    8e-16 / 7e-10 / 2e-13
#   mcycle "cr"             1.4e-9 / 6e-9 / 1.4e-9   1.3e-12 / 7e-12 / 4e-12
#   mcycle "ad"             3.0e-9 / 5e-7 / 1e-8     9.0e-9 / 1.8e-7 / 1.6e-8
#   gumbls() ... multinom() 5e-12 / 3e-8 / 1e-11     3e-12 / 6e-8 / 2e-11
#   cox.ph() colon          2.5e-15 / 8e-9 / 5e-14   3.0e-15 / 7e-8 / 2e-13
#   offset                  2e-11 / 4e-10 / 1.5e-10  8.4e-9 / 1.4e-7 / 5.5e-8
#   te()                    8e-16 / 2.4e-8 / 1e-14   1.2e-15 / 6.5e-7 / 4e-14
#   some sp fixed           2.1e-10 / 9e-9 / 3.5e-9  9.3e-10 / 3.9e-8 / 1.5e-8
# REML scores equal to 1e-12 relative (mcycle "ad": 3.4e-8 of 580 under
# 1.9-3, the size the inner tolerance leaves).  The aliased-coefficient
# case: see its test.

tight_gam_control <- function() mgcv::gam.control(epsilon = 1e-10,
                                                  newton = list(conv.tol = 1e-10))

local_native_route <- function(env = parent.frame()) {
  old <- options(gamgpu.general_route = "native")
  do.call(on.exit, list(substitute(options(old)), add = TRUE), envir = env)
}

# The messages of the warnings expr raises (muffled), with its value.
with_warnings <- function(expr) {
  w <- character()
  value <- withCallingHandlers(expr, warning = function(cond) {
    w <<- c(w, conditionMessage(cond))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = w)
}

# gam() and the native route on the same model: both converged, every
# linear predictor within lp_tol of its range, the same REML score,
# smoothing parameters, EDFs and Vp; gam()'s fields all there; no warning
# that gam() does not give too (the family's own initialize() warns alike
# under both: gevlss()'s under mgcv 1.9 takes log1p() of negative numbers).
expect_native_fit <- function(formula, family, data, lp_tol = 1e-8) {
  # (under another BLAS than R's reference one both fits move by rounding:
  # mcycle's 1.01e-8 of the range and 5.5e-6 in log sp on the GPU
  # machine's OpenBLAS, 8aed7ec)
  blas <- if (reference_blas()) 1 else 100
  b <- with_warnings(mgcv::gam(formula, family = family, data = data, method = "REML",
                               control = tight_gam_control()))
  local_native_route()
  g <- with_warnings(gam_gpu(formula, family = family, data = data, method = "REML",
                             device = "off", control = list(epsilon = 1e-10, newton.tol = 1e-10)))
  expect_true(all(g$warnings %in% b$warnings))
  b <- b$value
  g <- g$value
  expect_s3_class(g, "gam_gpu")
  expect_match(g$device$route, "native route")
  expect_identical(b$outer.info$conv, "full convergence")
  expect_identical(g$outer.info$conv, "full convergence")
  expect_true(g$device$inner_converged)
  lb <- as.matrix(b$linear.predictors)
  lg <- as.matrix(g$linear.predictors)
  r <- apply(lb, 2, function(x) diff(range(x)))
  r <- ifelse(r > 0, r, pmax(apply(abs(lb), 2, max), 1))
  expect_lt(max(sweep(abs(lg - lb), 2, r, "/")), lp_tol * blas)
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-9)
  # (the deviance: multinom()'s summed directly, gf_deviance())
  expect_equal(g$deviance, b$deviance, tolerance = 1e-8)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6 * blas)
  expect_lt(max(abs(g$edf - b$edf)), 1e-6 * blas)
  expect_lt(max(abs(g$Vp - b$Vp)) / max(abs(b$Vp)), 1e-6 * blas)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)), 1e-6 * max(abs(b$fitted.values)))
  expect_setequal(intersect(names(b), names(g)), names(b))
  expect_identical(names(g$coefficients), names(b$coefficients))
  expect_identical(deparse(g$family$ll), deparse(b$family$ll))
  expect_gt(g$device$ll_calls, 0)
  pb <- predict(b, data[1:5, ], type = "response")
  pg <- predict(g, data[1:5, ], type = "response")
  expect_lt(max(abs(pg - pb)), 1e-6 * max(1, abs(pb)))
  invisible(g)
}

test_that("gaulss() on gamSim(1): gam()'s REML fit by the native route", {
  set.seed(1)
  d <- mgcv::gamSim(1, n = 600, verbose = FALSE)
  d$y <- d$f + rnorm(nrow(d)) * exp(d$f1 / 4 - 0.5)
  expect_native_fit(list(y ~ s(x0) + s(x1) + s(x2) + s(x3), ~ s(x1) + s(x2)),
                    mgcv::gaulss(), d)
})

test_that("gaulss() on mcycle (cr and adaptive smooths): gam()'s fits", {
  skip_if_not_installed("MASS")
  expect_native_fit(list(accel ~ s(times, k = 20, bs = "cr"), ~ s(times)), mgcv::gaulss(),
                    MASS::mcycle)
  expect_native_fit(list(accel ~ s(times, k = 20, bs = "ad"), ~ s(times)), mgcv::gaulss(),
                    MASS::mcycle)
})

test_that("gumbls(), gammals(), ziplss(), gevlss(), shash(), multinom(): gam()'s fits", {
  d <- ls_fit_data(400)
  for (fam in list(mgcv::gumbls(), mgcv::gammals(), mgcv::ziplss(), mgcv::gevlss(),
                   mgcv::shash(), mgcv::multinom(K = 2)))
    expect_native_fit(ls_fit_formula(fam), fam, d)
})

test_that("the native route is the default; option \"gam\" selects gam()'s iteration, which fits what the native route does not take and says why", {
  d <- ls_fit_data(200)
  fam <- mgcv::gaulss()
  old <- options(gamgpu.general_route = NULL)
  on.exit(options(old))
  g <- gam_gpu(ls_fit_formula(fam), family = fam, data = d, method = "REML", device = "off")
  expect_match(g$device$route, "native route")
  expect_null(g$device$route_reason)
  options(gamgpu.general_route = "gam")
  a <- gam_gpu(ls_fit_formula(fam), family = fam, data = d, method = "REML", device = "off")
  expect_match(a$device$route, "gam\\(\\)'s Newton iteration")
  expect_match(a$device$route_reason, "gamgpu.general_route = \"gam\"", fixed = TRUE)
  # (both at gam()'s default control: each stops at its own tolerance)
  expect_lt(max(abs(log(g$sp / a$sp))), 1e-4)
  for (bad in list("mgcv", TRUE, c("gam", "native"))) {
    options(gamgpu.general_route = bad)
    expect_error(gam_gpu(ls_fit_formula(fam), family = fam, data = d, method = "REML",
                         device = "off"), class = "gamgpu_bad_input")
  }
  options(gamgpu.general_route = NULL)
  # (twlss() has no third and fourth derivatives: gam() fits it by its
  # extended Fellner-Schall iteration, not Newton's)
  fam <- mgcv::twlss()
  g <- gam_gpu(ls_fit_formula(fam), family = fam, data = d, method = "REML", device = "off")
  expect_match(g$device$route, "gam\\(\\)'s Newton iteration")
  expect_match(g$device$route_reason, "Fellner-Schall")
  # (gam()'s other methods: its REML fit, as gam() fits them)
  fam <- mgcv::gaulss()
  r <- gam_gpu(ls_fit_formula(fam), family = fam, data = d, method = "REML", device = "off")
  for (m in c("ML", "GCV.Cp", "P-REML")) {
    g <- gam_gpu(ls_fit_formula(fam), family = fam, data = d, method = m, device = "off")
    expect_match(g$device$route, "native route")
    expect_identical(g$method, "REML")
    expect_identical(g$coefficients, r$coefficients)
    expect_identical(g$gcv.ubre, r$gcv.ubre)
  }
})

# A native cox.ph() fit g against gam()'s b (tight control): converged
# alike, the linear predictors, REML, sp, EDFs, Vp, fitted values and null
# deviance, gam()'s fields, predictions at rows nd
expect_cox_native_fit <- function(g, b, nd) {
  expect_match(g$device$route, "native route")
  expect_identical(g$outer.info$conv, "full convergence")
  expect_identical(b$outer.info$conv, "full convergence")
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) /
              diff(range(b$linear.predictors)), 1e-8)
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-9)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6)
  expect_lt(max(abs(g$edf - b$edf)), 1e-6)
  expect_lt(max(abs(g$Vp - b$Vp)) / max(abs(b$Vp)), 1e-6)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)), 1e-8)
  expect_equal(g$null.deviance, b$null.deviance, tolerance = 1e-10)
  expect_setequal(intersect(names(b), names(g)), names(b))
  expect_lt(max(abs(predict(g, nd, type = "response") - predict(b, nd, type = "response"))),
            1e-8)
}

colon_cox_data <- function() {
  col1 <- survival::colon[survival::colon$etype == 1, ]
  col1$differ <- as.factor(col1$differ)
  col1$sex <- as.factor(col1$sex)
  col1
}

test_that("cox.ph() on mgcv's colon example: gam()'s fit", {
  skip_if_not_installed("survival")
  col1 <- colon_cox_data()
  f <- time ~ s(age, by = sex) + sex + s(nodes) + perfor + rx + obstruct + adhere
  b <- mgcv::gam(f, family = mgcv::cox.ph(), data = col1, weights = status, method = "REML",
                 control = tight_gam_control())
  local_native_route()
  g <- gam_gpu(f, family = mgcv::cox.ph(), data = col1, weights = status, method = "REML",
               device = "off", control = list(epsilon = 1e-10, newton.tol = 1e-10))
  # (measured, mgcv 1.8-41 / 1.9-3: 2.5e-15 / 3e-15 of the range, sp 8e-9
  # / 7e-8, REML equal to 1e-15, EDFs 5e-14 / 2e-13)
  expect_cox_native_fit(g, b, col1[1:7, ])
})

test_that("cox.ph() with strata, and gam()'s other methods (REML all the same): gam()'s fits", {
  skip_if_not_installed("survival")
  col1 <- colon_cox_data()
  set.seed(1)
  col1$strata <- sample(1:3, nrow(col1), replace = TRUE)
  # (the times tie across strata and within them)
  f <- cbind(time, strata) ~ s(age, by = sex) + sex + s(nodes) + perfor + rx
  b <- mgcv::gam(f, family = mgcv::cox.ph(), data = col1, weights = status, method = "REML",
                 control = tight_gam_control())
  local_native_route()
  for (m in c("REML", "GCV.Cp")) {
    g <- gam_gpu(f, family = mgcv::cox.ph(), data = col1, weights = status, method = m,
                 device = "off", control = list(epsilon = 1e-10, newton.tol = 1e-10))
    expect_identical(g$method, "REML")
    # (measured, mgcv 1.8-41: 4.7e-15 of the range, log sp 5.2e-8, EDFs 3e-14)
    expect_cox_native_fit(g, b, col1[1:7, ])
    # (the postproc with strata: the hazard per stratum, the residual
    # matrices in the data's row order)
    expect_equal(g$family$data$h, b$family$data$h, tolerance = 1e-7)
    expect_identical(g$family$data$r, b$family$data$r)
    expect_identical(g$family$data$tr.strat, b$family$data$tr.strat)
    expect_equal(g$family$data$Rc, b$family$data$Rc, tolerance = 1e-7)
    expect_equal(residuals(g), residuals(b), tolerance = 1e-7)
  }
  # (strata that are not one run of rows each: the C is told so)
  expect_error(gamgpu:::cox_groups(cbind(c(3, 2, 1), c(1, 2, 1))), class = "gamgpu_bad_input")
})

test_that("an aliased coefficient is dropped (gam.fit5's rank check): gam()'s fit without it", {
  # (gam()'s own fit with the aliased term ends in "step failed" here, its
  # drop coming and going between evaluations; the native route keeps a
  # dropped coefficient dropped, and fits the model without the term --
  # whose REML lacks the aliased column's log(2 pi) / 2 in Mp)
  set.seed(3)
  n <- 400
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$y <- sin(2 * pi * d$x0) + d$x1 + rnorm(n) * exp(d$x2 - 1)
  d$x1b <- 2 * d$x1 + 1
  b0 <- mgcv::gam(list(y ~ s(x0) + x1b, ~ s(x2)), family = mgcv::gaulss(), data = d,
                  method = "REML", control = tight_gam_control())
  local_native_route()
  g <- gam_gpu(list(y ~ s(x0) + x1 + x1b, ~ s(x2)), family = mgcv::gaulss(), data = d,
               method = "REML", device = "off",
               control = list(epsilon = 1e-10, newton.tol = 1e-10))
  expect_identical(g$outer.info$conv, "full convergence")
  expect_identical(b0$outer.info$conv, "full convergence")
  expect_identical(which(g$bdrop), 2L)
  expect_identical(unname(g$coefficients[2]), 0)
  lb <- b0$linear.predictors
  r <- apply(lb, 2, function(x) diff(range(x)))
  expect_lt(max(sweep(abs(g$linear.predictors - lb), 2, r, "/")), 1e-8)
  expect_lt(abs(log(g$sp[1] / b0$sp[1])), 1e-6)
  # (the scale's smooth is penalized to its null space: log sp ~ 20.8,
  # where gam()'s REML score is flat -- its gradient and Hessian there
  # 1e-8 -- and the route's path, from the model with the aliased column,
  # ends 1.8e-8 from gam()'s under mgcv 1.8-41 and 0.009 under 1.9-3, its
  # REML 1.1e-10 lower (better) there, the linear predictors 4e-12 of
  # their range, the EDFs 3e-10 apart)
  expect_lt(abs(b0$outer.info$hess[2, 2]), 1e-6)
  expect_lt(abs(log(g$sp[2] / b0$sp[2])), 0.05)
  expect_lt(unname(g$gcv.ubre + log(2 * pi) / 2 - b0$gcv.ubre), 1e-9 * abs(b0$gcv.ubre))
  expect_equal(unname(g$gcv.ubre), unname(b0$gcv.ubre) - log(2 * pi) / 2, tolerance = 1e-9)
  expect_lt(max(abs(g$edf[-2] - b0$edf)), 1e-6)
  expect_identical(unname(g$edf[2]), 0)
})

test_that("fixed smoothing parameters (some, all), an offset, te() and select: gam()'s fits", {
  d <- ls_fit_data(400)
  d$off <- d$x1 / 3
  fam <- mgcv::gaulss()
  # (measured, mgcv 1.8-41 / 1.9-3: 2e-10 / 9e-10 of the range with some
  # sp fixed, 2e-11 / 8.4e-9 with the offset, 1e-15 / 1.2e-15 with te())
  expect_native_fit(list(y ~ s(x0) + offset(off), ~ s(x2)), fam, d)
  expect_native_fit(list(y ~ te(x0, x1, k = 4) + s(x2), ~ s(x2)), fam, d)
  b <- mgcv::gam(list(y ~ s(x0) + s(x1), ~ s(x2)), family = fam, data = d, method = "REML",
                 sp = c(-1, 0.5, -1), control = tight_gam_control())
  local_native_route()
  g <- gam_gpu(list(y ~ s(x0) + s(x1), ~ s(x2)), family = fam, data = d, method = "REML",
               sp = c(-1, 0.5, -1), device = "off",
               control = list(epsilon = 1e-10, newton.tol = 1e-10))
  expect_match(g$device$route, "native route")
  expect_identical(g$outer.info$conv, "full convergence")
  expect_identical(length(g$sp), 2L)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6)
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)), 1e-8)
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-9)
  g2 <- gam_gpu(list(y ~ s(x0) + s(x1), ~ s(x2)), family = fam, data = d, method = "REML",
                sp = c(0.1, 0.5, 2), device = "off")
  b2 <- mgcv::gam(list(y ~ s(x0) + s(x1), ~ s(x2)), family = fam, data = d, method = "REML",
                  sp = c(0.1, 0.5, 2))
  expect_match(g2$device$route, "native route")
  expect_null(g2$outer.info)
  expect_length(g2$sp, 0L)
  expect_equal(unname(g2$gcv.ubre), unname(b2$gcv.ubre), tolerance = 1e-9)
  expect_lt(max(abs(g2$linear.predictors - b2$linear.predictors)), 1e-8)
  expect_lt(max(abs(g2$edf - b2$edf)), 1e-8)
  expect_lt(max(abs(g2$Vp - b2$Vp)), 1e-8 * max(abs(b2$Vp)))
})

test_that("gf_inner() takes the installed mgcv's gam.fit5() steps where its rules changed", {
  # (one-coefficient problems, no penalty, of a stand-in family: a flat
  # log likelihood -- halving stops after two unchanged trials under mgcv
  # 1.9, runs until the step vanishes under 1.8-41 --, a flat one with an
  # indefinite Hessian -- its step taken under 1.9, failed under 1.8-41 --,
  # a rising one whose gradient jumps below 1 -- after the perturbation off
  # its indefinite optimum, the step from the perturbed point's gradient
  # under 1.9, from the old one under 1.8-41 --, and a concave one)
  fit5 <- gamgpu:::mgcv_fun("gam.fit5")
  same_steps <- function(l, lb, lbb, maxit = 3L) {
    calls <- c(mgcv = 0, gamgpu = 0)
    ll <- function(who, b, deriv) {
      if (deriv == 0) calls[who] <<- calls[who] + 1
      list(l = l(b), lb = lb(b), lbb = matrix(lbb, 1L, 1L))
    }
    fam <- structure(list(family = "stub", linkinv = function(eta) eta,
                          initialize = expression(NULL),
                          ll = function(y, X, coef, wt, family, offset = NULL, deriv = 0, ...)
                            ll("mgcv", coef, deriv)),
                     class = c("general.family", "extended.family", "family"))
    m <- suppressWarnings(fit5(x = matrix(1, 1L, 1L), y = 0, lsp = numeric(0), Sl = list(),
                               weights = 1, offset = 0, deriv = 0, family = fam,
                               control = mgcv::gam.control(maxit = maxit), start = 1))
    P <- new.env()
    P$p <- 1L
    P$Sl <- list()
    P$ll <- function(beta, deriv, ...) ll("gamgpu", beta, deriv)
    g <- gamgpu:::gf_inner(P, matrix(0, 1L, 1L), 1, 1e-7, maxit)
    expect_equal(g$beta, unname(m$coefficients), tolerance = 1e-12)
    expect_identical(g$iter, as.integer(m$iter))
    expect_identical(calls[["gamgpu"]], calls[["mgcv"]])
  }
  same_steps(function(b) 1, function(b) 1, -1)
  same_steps(function(b) 1, function(b) 1, 1)
  same_steps(function(b) b, function(b) if (b >= 1) 1e-20 else 1e-3, 1)
  same_steps(function(b) -(b - 2)^2, function(b) -2 * (b - 2), -2, maxit = 50L)
})
