# The location-scale families' ll() on a model session (R/family_ls_rows.R:
# ls_ll_session(); src/r/gamlss_r.c, src/cuda/cuda_ls.c, inst/kernels/ls.cu):
# X loaded once per distinct X, the rows and products where the session
# runs -- the CPU backend's host X here, the device's memory on a GPU.
# Oracles: the direct C ll() (ls_ll_c()) on the CPU, and for the device
# the CPU session; then fits against device = "off".

ls_session_case <- function(family, n = 700, seed = 3) {
  set.seed(seed)
  x <- runif(n)
  z <- runif(n)
  K <- if (family$family == "multinom") family$nlp else length(family$linfo)
  X <- cbind(1, x, x^2, sin(3 * z), 1, z, z^2)
  cols <- list(1:4, 5:7, c(1, 6), c(5, 2))[seq_len(K)]
  attr(X, "lpi") <- cols
  coef <- c(0.3, 0.2, -0.1, 0.2, 0.4, 0.1, -0.2)
  f <- 0.5 + sin(3 * z)
  y <- switch(family$family,
              multinom = sample(0:K, n, replace = TRUE),
              ziplss = ifelse(runif(n) < 0.3, 0, rpois(n, exp(f))),
              twlss = mgcv::rTweedie(exp(f), p = 1.5, phi = 1),
              gammals = rgamma(n, shape = 2, scale = exp(f) / 2),
              f + rnorm(n) * 0.4)
  if (family$family == "gumbls") coef[5:7] <- c(-0.5, 0.1, 0)
  p <- ncol(X)
  M <- 3L
  list(family = family, spec = gamgpu:::ls_rows_spec(family), X = X, y = y, coef = coef,
       cols = cols, d1b = matrix(cos(seq_len(p * M)) / 3, p),
       d2b = matrix(sin(seq_len(p * M * (M + 1) / 2)) / 5, p),
       fh = list(values = seq(2, 1, length.out = p), vectors = qr.Q(qr(diag(p) + 0.1))),
       D = seq(1, 1.5, length.out = p), off = list(runif(n) / 10, NULL, NULL, NULL)[seq_len(K)])
}

ls_session_families <- function()
  list(mgcv::gaulss(), mgcv::gaulss(link = list("log", "logb")), mgcv::gumbls(),
       mgcv::gammals(), mgcv::ziplss(), mgcv::gevlss(), mgcv::twlss(), mgcv::shash(),
       mgcv::multinom(K = 2), mgcv::multinom(K = 3))

# the derivative levels gam.fit5() asks a family's ll() for (twlss() has
# no third or fourth derivatives: its available.derivs is 0)
ls_levels <- function(family) if (isTRUE(family$available.derivs == 0)) c(0, 1) else c(0, 1, 3, 4)

# the session's ll() at deriv (its device state dev) and the direct C's
session_ll <- function(dev, r, deriv, off = NULL, X = r$X)
  gamgpu:::ls_ll_session(dev, r$spec, r$y, X, r$coef, r$cols, off, deriv, r$d1b, r$d2b,
                         r$fh, r$D)
direct_ll <- function(r, deriv, off = NULL)
  gamgpu:::ls_ll_c(r$spec, r$y, r$X, r$coef, r$cols, off, deriv, r$d1b, r$d2b, r$fh, r$D)

# every result of b against a, relative to each one's largest entry
expect_ll_close <- function(b, a, deriv, tol) {
  expect_equal(b$l, a$l, tolerance = tol)
  for (nm in c("lb", "lbb", "d1H", "trHid2H")[c(deriv >= 1, deriv >= 1, deriv >= 3,
                                                   deriv >= 4)]) {
    expect_identical(dim(b[[nm]]), dim(a[[nm]]), label = nm)
    expect_lt(rel_err(b[[nm]], a[[nm]]), tol, label = nm)
  }
  for (nm in c("lb", "d1H", "trHid2H")[c(deriv < 1, deriv < 3, deriv < 4)])
    expect_null(b[[nm]], label = nm)
}

cpu_ls_state <- function(nthreads = 2L)
  gamgpu:::ls_device_state("off", list(mode = 0L, ordinal = 0L),
                           gamgpu:::as_gam_gpu_control(gam_gpu_control(nthreads = nthreads)))

test_that("the ll() on a CPU session equals the direct C's for each family and level", {
  for (fam in ls_session_families()) {
    r <- ls_session_case(fam)
    dev <- cpu_ls_state()
    for (deriv in ls_levels(fam)) {
      a <- direct_ll(r, deriv, r$off)
      b <- session_ll(dev, r, deriv, r$off)
      # (the same C on the same X: the products' sums in fixed row jobs)
      expect_ll_close(b, a, deriv, tol = 1e-15)
      expect_null(b$l0)
    }
    expect_identical(dev$loads, 1L)
    gamgpu:::ls_session_close(dev)
    expect_identical(dev$backends, "cpu")
    expect_identical(dev$placement, "host")
  }
})

test_that("a session serves X, an equal copy of it, and a new X needs a new one", {
  r <- ls_session_case(mgcv::gaulss())
  dev <- cpu_ls_state()
  a <- session_ll(dev, r, 1)
  X2 <- r$X + 0                               # (equal bits, another object)
  b <- session_ll(dev, r, 1, X = X2)
  expect_identical(dev$loads, 1L)
  expect_identical(b, a)
  X3 <- r$X
  X3[5, 2] <- X3[5, 2] + 1e-12
  session_ll(dev, r, 1, X = X3)
  expect_identical(dev$loads, 2L)
  gamgpu:::ls_session_close(dev)
  expect_null(dev$ses)
})

test_that("the session's ll() refuses bad input with classed errors", {
  r <- ls_session_case(mgcv::gaulss(), n = 50)
  dev <- cpu_ls_state()
  on.exit(gamgpu:::ls_session_close(dev))
  session_ll(dev, r, 0)
  ptr <- dev$ses$ptr
  call <- function(deriv = 1L, cols = lapply(r$cols, as.integer), coef = r$coef)
    .Call(gamgpu:::gg_ls_session_ll_r, ptr, as.double(coef), cols, r$spec$code,
          as.integer(r$spec$links), as.double(r$spec$link_par), list(NULL, NULL),
          as.integer(deriv), r$spec$i2, r$spec$i3, r$spec$i4, NULL, NULL, NULL)
  expect_error(call(deriv = 2L), class = "gamgpu_bad_input")
  expect_error(call(cols = list(1:4, c(5L, 99L))), class = "gamgpu_bad_input")
  expect_error(call(coef = r$coef[-1]), class = "gamgpu_bad_input")
  expect_error(call(deriv = 3L), class = "gamgpu_bad_input")      # (no d1b)
})

test_that("rows that differ from the family's own are refused under 'required', counted under 'auto'", {
  d <- ls_fit_data(200)
  fam <- mgcv::gaulss()
  # (a family as another mgcv release might write it: ls_rows_agree() fails)
  src <- paste(deparse(body(fam$ll)), collapse = "\n")
  body(fam$ll) <- parse(text = sub("0.5 * log(2 * pi)", "0.25 * log(2 * pi)", src,
                                   fixed = TRUE))[[1]]
  r <- ls_session_case(mgcv::gaulss(), n = 200)
  X <- r$X
  for (policy in c("required", "auto")) {
    dev <- gamgpu:::ls_device_state(policy, list(mode = 0L, ordinal = 0L),
                                    gamgpu:::as_gam_gpu_control(gam_gpu_control()))
    ll <- gamgpu:::general_family_with_ll(fam, "gaulss", dev)$ll
    call <- function() ll(r$y, X, r$coef, rep(1, 200), fam, deriv = 1)
    if (policy == "required") {
      expect_error(call(), class = "gamgpu_device_unavailable")
    } else {
      gpu_telemetry(reset = TRUE)
      a <- call()
      expect_equal(a$l, fam$ll(r$y, X, r$coef, rep(1, 200), fam, deriv = 1)$l)
      expect_match(dev$fallback, "differed from the family's own")
      r2 <- attr(gpu_telemetry(), "fallback_reasons")
      expect_true(any(r2$backend == "general_family" & grepl("differed", r2$reason)))
      expect_null(dev$ses)
    }
  }
})

test_that("without a usable GPU a location-scale fit under 'auto' records its fallback", {
  skip_if(device_usable(), "a GPU is usable here")
  d <- ls_fit_data(300)
  fml <- list(y ~ s(x0) + s(x1), ~ s(x2))
  gpu_telemetry(reset = TRUE)
  a <- gam_gpu(fml, family = mgcv::gaulss(), data = d, method = "REML", device = "auto")
  b <- gam_gpu(fml, family = mgcv::gaulss(), data = d, method = "REML", device = "off")
  expect_identical(a$device$backend, "cpu")
  expect_match(a$device$reason, "^fell back to the CPU")
  expect_identical(a$device$ll_sessions, 1L)
  expect_gt(sum(gpu_telemetry()$fallbacks), 0)
  expect_identical(a$coefficients, b$coefficients)
  expect_error(gam_gpu(fml, family = mgcv::gaulss(), data = d, method = "REML",
                       device = "required"), class = "gamgpu_device_unavailable")
})

test_that("the ll() on the device equals the CPU session's, with the rows' kernels launched", {
  skip_if_no_device()
  for (fam in ls_session_families()) {
    r <- ls_session_case(fam, n = 5000)
    cpu <- cpu_ls_state()
    gpu <- gamgpu:::ls_device_state("required", list(mode = 2L, ordinal = 0L),
                                    gamgpu:::as_gam_gpu_control(gam_gpu_control()))
    gpu_telemetry(reset = TRUE)
    for (deriv in ls_levels(fam)) {
      a <- session_ll(cpu, r, deriv, r$off)
      b <- session_ll(gpu, r, deriv, r$off)
      expect_ll_close(b, a, deriv, tol = 1e-9)
    }
    t <- gpu_telemetry()
    expect_gt(sum(t$launches[t$backend == "ls"]), 0)
    expect_gt(sum(t$launches[t$backend == "engine"]), 0)
    expect_equal(sum(t$fallbacks), 0)
    gamgpu:::ls_session_close(gpu)
    gamgpu:::ls_session_close(cpu)
    expect_identical(gpu$backends, "cuda")
    expect_device_arena_empty()
  }
})

test_that("location-scale fits on the device equal the CPU's", {
  skip_if_no_device()
  # (gam()'s iteration around the ll() on a session per X, this file's
  # subject: the native route on the device is test-family-general-outer-device.R's)
  local_gam_route()
  d <- ls_fit_data(2000)
  for (fam in list(mgcv::gaulss(), mgcv::gumbls(), mgcv::gammals(), mgcv::multinom(K = 2),
                   mgcv::ziplss(), mgcv::gevlss(), mgcv::twlss(), mgcv::shash())) {
    fml <- ls_fit_formula(fam)
    a <- gam_gpu(fml, family = fam, data = d, method = "REML", device = "off")
    b <- expect_device_fit(gam_gpu(fml, family = fam, data = d, method = "REML",
                                   device = "required"))
    expect_identical(b$device$ll_rows, "gamgpu")
    expect_identical(b$device$ll_sessions, 1L)
    expect_identical(b$outer.info$conv, a$outer.info$conv)
    expect_ls_fits_close(b, a, tol = 1e-8, score_tol = 1e-10)
  }
})

test_that("a device ll() with bad input leaves no device memory in use", {
  skip_if_no_device()
  r <- ls_session_case(mgcv::gaulss(), n = 300)
  gpu <- gamgpu:::ls_device_state("required", list(mode = 2L, ordinal = 0L),
                                  gamgpu:::as_gam_gpu_control(gam_gpu_control()))
  session_ll(gpu, r, 1)
  bad <- r
  bad$d2b <- bad$d2b[, 1:2]
  expect_error(session_ll(gpu, bad, 4), class = "gamgpu_bad_input")
  gamgpu:::ls_session_close(gpu)
  expect_device_arena_empty()
})
