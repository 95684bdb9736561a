# cox.ph()'s ll() on a model session (R/general_family.R: cox_ll_session();
# src/r/cox_r.c, src/cuda/cuda_cox.c, inst/kernels/cox.cu): X loaded once
# per distinct X, eta and the risk sets' sums where the session runs -- the
# CPU backend's host X here, the device's memory on a GPU.  Oracles: the
# direct C ll() (gg_cox_ll_r) on the CPU, and for the device the CPU
# session; then fits against device = "off".

# (strata > 0: that many strata, the rows in decreasing order of time
# within each, as the family's preinitialize() sorts them; gstr the time
# groups' strata, rows each stratum's rows)
cox_session_case <- function(n = 700, p = 7, M = 3L, seed = 5, ties = TRUE, strata = 0L) {
  set.seed(seed)
  X <- cbind(1, matrix(runif(n * (p - 1)), n))
  tm <- if (ties) round(rexp(n), 2) else rexp(n)
  st <- if (strata > 0L) sample(strata, n, replace = TRUE) else rep(1L, n)
  o <- order(st, tm, decreasing = TRUE)
  tm <- tm[o]
  st <- st[o]
  X <- X[o, , drop = FALSE]
  g <- gamgpu:::cox_groups(if (strata > 0L) cbind(tm, st) else tm)
  W <- crossprod(matrix(rnorm(p * p), p)) / p
  list(X = X, grp = g$grp, nt = g$nt, gstr = g$gstr, rows = split(seq_len(n), -st),
       event = as.integer(runif(n) < 0.7), coef = rnorm(p) / 4,
       off = runif(n) / 10, d1b = matrix(cos(seq_len(p * M)) / 3, p),
       d2b = matrix(sin(seq_len(p * M * (M + 1) / 2)) / 5, p), W = (W + t(W)) / 2)
}

cox_state <- function(policy, mode, nthreads = 2L)
  gamgpu:::ls_device_state(policy, list(mode = mode, ordinal = 0L),
                           gamgpu:::as_gam_gpu_control(gam_gpu_control(nthreads = nthreads)))

session_cox <- function(dev, r, level, off = r$off, X = r$X)
  gamgpu:::cox_ll_session(dev, X, r$coef, off, r$grp, r$event, r$nt, level,
                          if (level >= 2) r$d1b, if (level >= 3) r$d2b, if (level >= 3) r$W,
                          r$gstr)
direct_cox <- function(r, level, off = r$off) {
  eta <- drop(r$X %*% r$coef) + if (is.null(off)) 0 else off
  .Call(gamgpu:::gg_cox_ll_r, eta, r$X, r$grp, r$event, r$nt, r$gstr, as.integer(level),
        if (level >= 2) r$d1b, if (level >= 3) r$d2b, if (level >= 3) r$W, 2L)
}

expect_cox_close <- function(b, a, level, tol) {
  expect_equal(b$l, a$l, tolerance = tol)
  for (nm in c("lb", "lbb", "d1H", "trHid2H")[c(level >= 0, level >= 0, level == 2,
                                                   level >= 3)]) {
    expect_identical(dim(b[[nm]]), dim(a[[nm]]), label = nm)
    expect_lt(rel_err(b[[nm]], a[[nm]]), tol, label = paste(nm, "at level", level))
  }
  for (nm in c("lb", "d1H", "trHid2H")[c(level < 0, level != 2, level < 3)])
    expect_null(b[[nm]], label = nm)
}

test_that("cox.ph()'s ll() on a CPU session equals the direct C's at every level", {
  for (ties in c(TRUE, FALSE)) {
    r <- cox_session_case(ties = ties)
    dev <- cox_state("off", 0L)
    for (level in c(-1, 0, 2, 3)) {
      # (eta made in C by columns, not by the BLAS: a rounding apart)
      expect_cox_close(session_cox(dev, r, level), direct_cox(r, level), level, tol = 1e-12)
      expect_cox_close(session_cox(dev, r, level, off = NULL), direct_cox(r, level, NULL),
                       level, tol = 1e-12)
    }
    expect_identical(dev$loads, 1L)
    X2 <- r$X + 0                                  # (equal bits, another object)
    session_cox(dev, r, 0, X = X2)
    expect_identical(dev$loads, 1L)
    X3 <- r$X
    X3[1, 2] <- X3[1, 2] + 1e-3
    session_cox(dev, r, 0, X = X3)
    expect_identical(dev$loads, 2L)
    gamgpu:::ls_session_close(dev)
    expect_identical(dev$backends, "cpu")
  }
})

test_that("with strata: the sum of each stratum's own ll(), on the CPU", {
  # (3 strata, and 150 of a few rows each: risk sets that end at each
  # stratum's last row, event times tied across strata)
  for (k in c(3L, 150L)) {
    r <- cox_session_case(n = 900, strata = k)
    expect_identical(length(r$rows), k)
    dev <- cox_state("off", 0L)
    for (level in c(-1, 0, 2, 3)) {
      whole <- direct_cox(r, level)
      parts <- lapply(r$rows, function(i) {
        s <- r
        s$X <- r$X[i, , drop = FALSE]
        s$event <- r$event[i]
        s$grp <- r$grp[i] - r$grp[i[1]] + 1L
        s$nt <- max(s$grp)
        s$gstr <- NULL
        direct_cox(s, level, r$off[i])
      })
      sum_parts <- Reduce(function(a, b) Map(function(u, v) if (!is.null(u)) u + v, a, b),
                          parts)
      expect_cox_close(whole, sum_parts, level, tol = 1e-12)
      expect_cox_close(session_cox(dev, r, level), whole, level, tol = 1e-12)
    }
    gamgpu:::ls_session_close(dev)
  }
  # (the strata's order checked in C)
  r <- cox_session_case(n = 100, strata = 3L)
  r$gstr <- rev(r$gstr)
  expect_error(direct_cox(r, 0), class = "gamgpu_bad_input")
})

test_that("the first call's check of a session's rows against the CPU engine's", {
  r <- cox_session_case(n = 2600)
  for (off in list(r$off, NULL, 0.1))
    expect_null(gamgpu:::cox_device_agrees(cox_state("off", 0L), r$X, r$coef, off, r$grp,
                                           r$event))
  # with strata: 5000 rows around the first stratum's end
  r <- cox_session_case(n = 9000, strata = 3L)
  rows <- gamgpu:::cox_check_rows(9000, r$grp, r$gstr)
  expect_length(rows, 5000)
  expect_equal(rows, rows[1] - 1 + 1:5000)
  expect_identical(sort(unique(r$gstr[r$grp[rows]])), c(0L, 1L))
  expect_null(gamgpu:::cox_device_agrees(cox_state("off", 0L), r$X, r$coef, r$off, r$grp,
                                         r$event, r$gstr))
  expect_null(gamgpu:::cox_device_agrees(cox_state("off", 0L), r$X[rows, ], r$coef, r$off,
                                         r$grp, r$event, r$gstr, rows))
  expect_identical(gamgpu:::cox_check_rows(100, r$grp[1:100], r$gstr), 1:100)
  # (a session that fails: its message)
  bad <- cox_state("off", 0L)
  bad$control$nthreads <- -1L
  expect_match(gamgpu:::cox_device_agrees(bad, r$X, r$coef, NULL, r$grp, r$event),
               "^failed: ")
})

test_that("a cox.ph() session refuses bad input with classed errors", {
  r <- cox_session_case(n = 60)
  dev <- cox_state("off", 0L)
  bad <- r
  bad$grp <- rev(bad$grp)
  expect_error(session_cox(dev, bad, 0), class = "gamgpu_bad_input")
  bad <- r
  bad$d2b <- bad$d2b[, 1:2]
  expect_error(session_cox(dev, bad, 3), class = "gamgpu_bad_input")
  bad <- r
  bad$event <- as.double(bad$event)
  expect_error(session_cox(dev, bad, 0), class = "gamgpu_bad_input")
  gamgpu:::ls_session_close(dev)
})

test_that("cox.ph() with strata fitted on the device, as on the CPU and by gam()", {
  skip_if_no_device()
  set.seed(8)
  n <- 6000
  sdat <- data.frame(x0 = runif(n), x1 = runif(n), strata = sample(1:3, n, TRUE))
  sdat$time <- rexp(n, exp(sin(2 * pi * sdat$x0) + sdat$x1 + sdat$strata / 4 - 0.5))
  sdat$status <- as.numeric(sdat$time < quantile(sdat$time, 0.8))
  f <- cbind(time, strata) ~ s(x0) + x1
  ctrl <- list(epsilon = 1e-10, newton.tol = 1e-10)
  gpu_telemetry(reset = TRUE)
  g <- gam_gpu(f, family = mgcv::cox.ph(), data = sdat, weights = status, method = "REML",
               device = "required", control = ctrl)
  t <- gpu_telemetry()
  a <- gam_gpu(f, family = mgcv::cox.ph(), data = sdat, weights = status, method = "REML",
               device = "off", control = ctrl)
  b <- mgcv::gam(f, family = mgcv::cox.ph(), data = sdat, weights = status, method = "REML",
                 control = mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-10)))
  expect_gt(sum(t$launches[t$backend == "cox"]), 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_identical(g$device$backend, "cuda")
  expect_match(g$device$route, "native route")
  for (ref in list(a, b)) {
    expect_identical(g$outer.info$conv, ref$outer.info$conv)
    expect_lt(max(abs(g$linear.predictors - ref$linear.predictors)) /
                diff(range(ref$linear.predictors)), 5e-8)
    expect_lt(max(abs(log(g$sp) - log(ref$sp))), 1e-5)
    expect_equal(unname(g$gcv.ubre), unname(ref$gcv.ubre), tolerance = 1e-9)
  }
  expect_device_arena_empty()
})

test_that("cox.ph()'s ll() on the device equals the CPU session's, its kernels launched", {
  skip_if_no_device()
  # (n over several of the scans' 2048-row tiles; with strata, segmented
  # scans: 3 strata, and 1500 of a few rows each, whose boundaries fall
  # inside tiles and at their edges)
  for (cs in list(list(n = 5000, ties = TRUE, strata = 0L),
                  list(n = 9000, ties = FALSE, strata = 0L),
                  list(n = 9000, ties = TRUE, strata = 3L),
                  list(n = 9000, ties = TRUE, strata = 1500L))) {
    r <- cox_session_case(n = cs$n, ties = cs$ties, strata = cs$strata)
    cpu <- cox_state("off", 0L)
    gpu <- cox_state("required", 2L)
    gpu_telemetry(reset = TRUE)
    for (level in c(-1, 0, 2, 3)) {
      for (off in list(r$off, NULL))
        expect_cox_close(session_cox(gpu, r, level, off), session_cox(cpu, r, level, off),
                         level, tol = 1e-9)
    }
    t <- gpu_telemetry()
    expect_gt(sum(t$launches[t$backend == "cox"]), 0)
    expect_equal(sum(t$fallbacks), 0)
    gamgpu:::ls_session_close(gpu)
    gamgpu:::ls_session_close(cpu)
    expect_identical(gpu$backends, "cuda")
    expect_device_arena_empty()
  }
  # X streamed through the device in chunks: the scans' carries (and with
  # strata their segments) across the chunks
  r <- cox_session_case(n = 9000, ties = TRUE, strata = 40L)
  local_gg_options(gamgpu.device_memory = floor(length(r$X) * 8 / 3))
  cpu <- cox_state("off", 0L)
  gpu <- cox_state("required", 2L)
  for (level in c(0, 3))
    expect_cox_close(session_cox(gpu, r, level), session_cox(cpu, r, level), level, tol = 1e-9)
  expect_match(paste(gpu$placement, collapse = " "), "streamed")
  gamgpu:::ls_session_close(gpu)
  gamgpu:::ls_session_close(cpu)
  expect_identical(gpu$backends, "cuda")
  expect_device_arena_empty()
})

test_that("cox.ph() fits on the device equal the CPU's and gam()'s", {
  skip_if_no_device()
  # (gam()'s iteration around the ll() on a session per X, this file's
  # subject: the native route on the device is test-family-general-outer-device.R's)
  local_gam_route()
  dat <- cox_device_data()
  cases <- list(list(t ~ s(x0) + s(x1) + x2, dat, "d"))
  # (survival's colon data, where survival is installed)
  if (requireNamespace("survival", quietly = TRUE)) {
    col1 <- survival::colon[survival::colon$etype == 1, ]
    col1$sex <- as.factor(col1$sex)
    cases[[2]] <- list(time ~ s(age, by = sex) + sex + s(nodes) + perfor + rx + obstruct +
                         adhere, col1, "status")
  }
  for (cs in cases) {
    w <- cs[[2]][[cs[[3]]]]
    a <- gam_gpu(cs[[1]], family = mgcv::cox.ph(), weights = w, data = cs[[2]],
                 method = "REML", device = "off")
    gpu_telemetry(reset = TRUE)
    b <- gam_gpu(cs[[1]], family = mgcv::cox.ph(), weights = w, data = cs[[2]],
                 method = "REML", device = "required")
    g <- mgcv::gam(cs[[1]], family = mgcv::cox.ph(), weights = w, data = cs[[2]],
                   method = "REML")
    t <- gpu_telemetry()
    expect_gt(sum(t$launches[t$backend == "cox"]), 0)
    expect_equal(sum(t$fallbacks), 0)
    expect_identical(b$device$backend, "cuda")
    expect_match(b$device$placement, "^device \\(X resident\\); a model session per X$")
    expect_identical(a$device$placement, "host")
    expect_identical(b$device$ll_sessions, 1L)
    # (gam()'s general family fit has no $converged: its outer iteration's
    # verdict)
    expect_identical(b$outer.info$conv, "full convergence")
    expect_identical(b$outer.info$conv, a$outer.info$conv)
    for (ref in list(a, g)) {
      expect_lt(max(abs(b$linear.predictors - ref$linear.predictors)) /
                  diff(range(ref$linear.predictors)), 1e-8)
      expect_lt(max(abs(log(b$sp) - log(ref$sp))), 1e-6)
      expect_lt(max(abs(b$edf - ref$edf)), 1e-6)
      expect_equal(unname(b$gcv.ubre), unname(ref$gcv.ubre), tolerance = 1e-10)
    }
    expect_device_arena_empty()
  }
})
