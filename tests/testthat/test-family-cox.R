# mgcv's cox.ph() (Cox proportional hazards, Breslow's ties), a general
# family (R/general_family.R): gamgpu's ll() (src/family/family_cox.c) against the
# family's own at every derivative level gam.fit5() asks for, then
# gam_gpu() against mgcv::gam() on mgcv's own examples -- plain, with
# strata, without smooths -- and its refusals.  Measured (CPU): ll() 5e-16
# (l, lb, lbb) to 6e-15 (d1H, trHid2H) relative, by gamgpu's products
# over threads and by R's BLAS; the fits by gam()'s iteration (method
# "GCV.Cp", strata, other optimizers, a setup object: calls the native
# route does not take) 3e-15 of the fitted range apart, REML equal to
# 1e-13 relative, log sp 4e-11; by the native route see the test under
# the policy "auto".

cox_rows <- function(n = 300, p = 6, seed = 3, strata = FALSE) {
  set.seed(seed)
  X <- matrix(rnorm(n * p), n)
  tm <- round(rexp(n) * 10) / 2                          # ties
  d <- as.integer(runif(n) < 0.7)                        # censoring
  st <- if (strata) sample(1:3, n, replace = TRUE) else NULL
  o <- if (strata) order(st, tm, decreasing = TRUE) else order(tm, decreasing = TRUE)
  list(X = X[o, ], y = if (strata) cbind(tm[o], st[o]) else tm[o], d = d[o],
       beta = rnorm(p) * 0.3)
}

expect_ll_equal <- function(strata) {
  r <- cox_rows(strata = strata)
  fam <- mgcv::cox.ph()
  p <- ncol(r$X)
  M <- 3L
  set.seed(9)
  d1b <- matrix(rnorm(p * M), p)
  d2b <- matrix(rnorm(p * M * (M + 1) / 2), p)
  Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
  D <- runif(p) + 0.5
  # (mgcv's own ll() at deriv = 2 writes past its d1H: gam.fit5() never
  # asks for it, and its traces tr(fh dH/drho_i) are checked here against
  # deriv = 3's matrices)
  for (deriv in c(0, 1, 2, 3, 4)) {
    args <- list(r$y, r$X, r$beta, r$d, fam, offset = rep(0, nrow(r$X)), deriv = deriv,
                 d1b = d1b, d2b = d2b, Hp = Hp, rank = p - 1L,
                 fh = if (deriv == 2) Hp else NULL, D = D)
    a <- do.call(fam$ll, replace(args, "deriv", if (deriv == 2) 3 else deriv))
    if (deriv == 2) a$d1H <- vapply(a$d1H, function(h) sum(Hp * h), 0)
    b <- do.call(gamgpu:::cox_ll, args)
    expect_equal(b$l, a$l, tolerance = 1e-13)
    if (deriv %in% 1:3) {
      expect_lt(rel_err(b$lb, a$lb), 1e-13)
      expect_lt(rel_err(b$lbb, a$lbb), 1e-13)
    }
    if (deriv == 2) expect_lt(rel_err(b$d1H, a$d1H), 1e-12)
    if (deriv == 3) expect_lt(rel_err(unlist(b$d1H), unlist(a$d1H)), 1e-12)
    if (deriv == 4) expect_lt(rel_err(b$trHid2H, a$trHid2H), 1e-12)
  }
}

test_that("cox.ph()'s ll() equals mgcv's at every derivative level", {
  expect_ll_equal(strata = FALSE)
})

test_that("cox.ph()'s ll() equals mgcv's with strata", {
  expect_ll_equal(strata = TRUE)
})

test_that("cox.ph()'s ll() over many rows: mgcv's by either route, whatever the threads", {
  state <- local_general_rows("gamgpu")
  r <- cox_rows(n = 3000, p = 8)
  fam <- mgcv::cox.ph()
  p <- ncol(r$X)
  set.seed(9)
  Hp <- crossprod(matrix(rnorm(p * p), p)) + diag(p)
  args <- list(r$y, r$X, r$beta, r$d, fam, offset = rep(0, nrow(r$X)),
               d1b = matrix(rnorm(p * 2), p), d2b = matrix(rnorm(p * 3), p), Hp = Hp,
               rank = p, D = runif(p) + 0.5)
  for (deriv in c(3, 4)) {
    a <- do.call(fam$ll, c(args, deriv = deriv))
    fits <- list()
    for (route in c("gamgpu", "blas")) for (th in 1:2) {
      options(gamgpu.cpu_gram = route)
      gamgpu:::cpu_gram_option()
      state$general_threads <- th
      fits[[paste(route, th)]] <- b <- do.call(gamgpu:::cox_ll, c(args, deriv = deriv))
      if (deriv == 3) expect_lt(rel_err(unlist(b$d1H), unlist(a$d1H)), 1e-12)
      if (deriv == 4) expect_lt(rel_err(b$trHid2H, a$trHid2H), 1e-12)
    }
    expect_identical(fits[["gamgpu 2"]], fits[["gamgpu 1"]])
    expect_identical(fits[["blas 2"]], fits[["blas 1"]])
  }
})

colon1 <- function() {
  col1 <- survival::colon[survival::colon$etype == 1, ]
  col1$differ <- as.factor(col1$differ)
  col1$sex <- as.factor(col1$sex)
  col1
}

expect_cox_fit <- function(g, b) {
  expect_s3_class(g, "gam_gpu")
  expect_identical(g$outer.info$conv, b$outer.info$conv)
  expect_identical(b$outer.info$conv, "full convergence")
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, 1e-9)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)), 1e-9)
  expect_equal(unname(g$gcv.ubre), unname(b$gcv.ubre), tolerance = 1e-11)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6)
  expect_lt(max(abs(g$edf - b$edf)), 1e-8)
  expect_identical(deparse(g$family$ll), deparse(b$family$ll))   # the family's own, put back
  expect_identical(g$device$backend, "cpu")
  expect_gt(g$device$ll_calls, 0)
}

test_that("gam_gpu() fits mgcv's cox.ph() colon example as gam() does", {
  skip_if_not_installed("survival")
  local_gam_route()
  col1 <- colon1()
  f <- time ~ s(age, by = sex) + sex + s(nodes) + perfor + rx + obstruct + adhere
  b <- mgcv::gam(f, family = mgcv::cox.ph(), data = col1, weights = status)
  g <- gam_gpu(f, family = mgcv::cox.ph(), data = col1, weights = status,
               method = "GCV.Cp", device = "off")   # (gam() takes REML for it)
  expect_cox_fit(g, b)
  expect_identical(g$method, "REML")
  nd <- col1[1:7, ]
  pb <- predict(b, nd, type = "response", se.fit = TRUE)
  pg <- predict(g, nd, type = "response", se.fit = TRUE)
  expect_lt(max(abs(pg$fit - pb$fit)), 1e-9)
  expect_lt(max(abs(pg$se.fit - pb$se.fit)), 1e-9)
  expect_equal(summary(g)$s.table, summary(b)$s.table, tolerance = 1e-8)
  expect_equal(residuals(g), residuals(b), tolerance = 1e-8)
})

test_that("gam_gpu() fits cox.ph() with strata as gam() does", {
  skip_if_not_installed("survival")
  local_gam_route()
  col1 <- colon1()
  set.seed(1)
  col1$strata <- sample(1:2, nrow(col1), replace = TRUE)
  f <- cbind(time, strata) ~ s(age, by = sex) + sex + s(nodes) + perfor + rx + obstruct + adhere
  b <- mgcv::gam(f, family = mgcv::cox.ph(), data = col1, weights = status)
  g <- gam_gpu(f, family = mgcv::cox.ph(), data = col1, weights = status, method = "REML",
               device = "off")
  expect_cox_fit(g, b)
  expect_equal(g$family$data$h, b$family$data$h, tolerance = 1e-9)
})

test_that("gam_gpu() fits a cox.ph() model without smooths (conditional logistic)", {
  d <- datasets::infert
  d$dumt <- rep(1, nrow(d))
  b <- mgcv::gam(cbind(dumt, stratum) ~ spontaneous + induced, data = d,
                 family = mgcv::cox.ph, weights = case)
  g <- gam_gpu(cbind(dumt, stratum) ~ spontaneous + induced, data = d,
               family = mgcv::cox.ph, weights = case, method = "REML", device = "off")
  expect_lt(max(abs(coef(g) - coef(b))), 1e-10)
  expect_lt(max(abs(g$Vp - b$Vp)), 1e-10)
})

test_that("a simulated cox.ph() model under the policy 'auto' without a GPU counts its CPU fallback", {
  skip_if(device_usable(), "a GPU is usable here")
  set.seed(2)
  n <- 400
  x0 <- runif(n); x1 <- runif(n)
  h <- exp((2 * sin(pi * x0) + exp(2 * x1) - 4) / 5)
  t <- rexp(n, h)
  d <- as.numeric(t < 20)
  dat <- data.frame(t = t, d = d, x0 = x0, x1 = x1)
  b <- mgcv::gam(t ~ s(x0) + s(x1), family = mgcv::cox.ph, weights = d, data = dat)
  gpu_telemetry(reset = TRUE)
  g <- gam_gpu(t ~ s(x0) + s(x1), family = mgcv::cox.ph, weights = d, data = dat,
               method = "REML", device = "auto")
  # (the native route, the default here, and gam() each stop at their
  # default tolerances; measured, mgcv 1.8-41 / 1.9-3: 3.0e-10 / 3.4e-10 of
  # the range, fitted values 1.3e-10 / 1.4e-10, REML 7e-14 / 6e-14
  # relative, log sp 2e-7 / 1.6e-7, EDFs 2.4e-9 / 2.7e-9)
  expect_match(g$device$route, "native route")
  expect_cox_fit(g, b)
  expect_gt(sum(gpu_telemetry()$fallbacks), 0)
  expect_identical(g$device$backend, "cpu")
  expect_match(g$device$reason, "^fell back to the CPU")
  expect_identical(g$device$placement, "host")
  expect_identical(g$device$ll_sessions, 1L)
  expect_match(g$device$cpu_gram, "BLAS|gamgpu's own kernel")
  # (the reason the fit gives is the one counted)
  expect_true(sub("^fell back to the CPU: ", "", g$device$reason) %in%
                attr(gpu_telemetry(), "fallback_reasons")$reason)
  # (the session's CPU rows make eta in C, not by the BLAS: a rounding apart)
  a <- gam_gpu(t ~ s(x0) + s(x1), family = mgcv::cox.ph, weights = d, data = dat,
               method = "REML", device = "off")
  expect_lt(max(abs(g$linear.predictors - a$linear.predictors)) /
              diff(range(a$linear.predictors)), 1e-10)
})

test_that("cox.ph() fits are refused where gam() does not fit them or no device can", {
  dat <- data.frame(t = c(5, 4, 3, 2, 1, 6), d = c(1, 0, 1, 1, 0, 1), x = 1:6)
  expect_error(gam_gpu(t ~ x, family = mgcv::cox.ph(), weights = d, data = dat),
               class = "gamgpu_unsupported_method")
  # (with a usable GPU the rows run there: test-family-cox-device.R)
  if (!device_usable())
    expect_error(gam_gpu(t ~ x, family = mgcv::cox.ph(), weights = d, data = dat,
                         method = "REML", device = "required"),
                 class = "gamgpu_device_unavailable")
  expect_error(gam_gpu(t ~ x, family = mgcv::cox.ph(), weights = d, data = dat,
                       method = "REML", rho = 0.3, device = "off"),
               class = "gamgpu_unsupported_argument")
})

test_that("gam()'s other optimizers for cox.ph() are gam()'s", {
  set.seed(4)
  n <- 300
  dat <- data.frame(x0 = runif(n), x1 = runif(n))
  dat$t <- rexp(n, exp((2 * sin(pi * dat$x0) + dat$x1) / 2))
  dat$d <- as.numeric(dat$t < 3)
  # (BFGS stops on a loose gradient test, so rounding moves its stopping
  # point: 1.6e-7 of the range under mgcv 1.9-3, 4e-12 under 1.8-41)
  for (opt in list(c("outer", "bfgs"), "efs")) {
    b <- mgcv::gam(t ~ s(x0) + s(x1), family = mgcv::cox.ph, weights = d, data = dat,
                   optimizer = opt)
    g <- gam_gpu(t ~ s(x0) + s(x1), family = mgcv::cox.ph, weights = d, data = dat,
                 method = "REML", optimizer = opt, device = "off")
    expect_identical(g$optimizer, b$optimizer)
    expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) /
                diff(range(b$linear.predictors)), if (opt[1L] == "efs") 1e-9 else 1e-6)
  }
})

test_that("a cox.ph() setup object, gam_gpu(fit = FALSE)'s or gam(fit = FALSE)'s, is fitted as gam(G = G)", {
  set.seed(2)
  n <- 300
  dat <- data.frame(x0 = runif(n), x1 = runif(n))
  dat$t <- rexp(n, exp(sin(3 * dat$x0)))
  dat$d <- as.numeric(dat$t < 2)
  b <- mgcv::gam(t ~ s(x0) + s(x1), family = mgcv::cox.ph(), weights = d, data = dat)
  G <- gam_gpu(t ~ s(x0) + s(x1), family = mgcv::cox.ph(), weights = d, data = dat,
               method = "REML", fit = FALSE, device = "off")
  expect_s3_class(G, "gam.prefit")
  for (GG in list(G, mgcv::gam(t ~ s(x0) + s(x1), family = mgcv::cox.ph(), weights = d,
                               data = dat, fit = FALSE))) {
    g <- gam_gpu(G = GG, method = "REML", device = "off")
    expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) /
                diff(range(b$linear.predictors)), 1e-9)
    expect_gt(g$device$ll_calls, 0)
  }
})

test_that("control settings gam()'s fit of a general family cannot honour are refused", {
  dat <- data.frame(t = c(5, 4, 3, 2, 1, 6), d = c(1, 0, 1, 1, 0, 1), x = 1:6)
  expect_error(gam_gpu(t ~ x, family = mgcv::cox.ph(), weights = d, data = dat, method = "REML",
                       control = gam_gpu_control(hat = FALSE), device = "off"),
               class = "gamgpu_bad_control")
  expect_error(gam_gpu(t ~ x, family = mgcv::cox.ph(), weights = d, data = dat, method = "REML",
                       control = gam_gpu_control(newton.maxit = 20), device = "off"),
               class = "gamgpu_bad_control")
})
