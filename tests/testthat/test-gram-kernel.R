# gamgpu's own CPU Gram product (src/cpu/gram_kernel.c) against the BLAS's
# (gram_cpu.c) and crossprod: weights of either sign, every remainder of
# the eight-row and 64-row blocks, one job and sixteen; the choice between
# the two (options(gamgpu.cpu_gram): R's BLAS by default, "gamgpu", or
# "auto": the faster here, timed once per size class of p).
# Measured (x86-64, gcc 12 -O2, R's reference BLAS): own against BLAS and
# crossprod <= 5e-15 relative; asked 1e-13.

# expr with options(gamgpu.cpu_gram) at mode (0 "auto", 1 "gamgpu", 2
# "blas"), which gpu_gram() and gam_gpu() apply; its timings forgotten
with_gram_mode <- function(mode, expr) {
  local_gg_options(gamgpu.cpu_gram = c("auto", "gamgpu", "blas")[mode + 1L])
  .Call(gamgpu:::gg_cpu_gram_mode_r, mode, NULL)
  expr
}

test_that("gamgpu's Gram kernel equals the BLAS's and crossprod", {
  for (case in list(c(1, 1), c(9, 2), c(63, 5), c(1031, 17), c(20011, 84), c(3000, 150))) {
    n <- case[1]; p <- case[2]
    set.seed(n + p)
    X <- matrix(rnorm(n * p), n)
    z <- rnorm(n)
    for (w in list(runif(n, 0.1, 2), rnorm(n), NULL)) {
      own <- with_gram_mode(1L, gpu_gram(X, w, z, device = "off"))
      blas <- with_gram_mode(2L, gpu_gram(X, w, z, device = "off"))
      ww <- if (is.null(w)) rep(1, n) else w
      lab <- sprintf("n = %d, p = %d, %s weights", n, p,
                     if (is.null(w)) "unit" else if (all(ww >= 0)) "positive" else "signed")
      expect_lt(rel_err(own$XtWX, blas$XtWX), 1e-13, label = lab)
      expect_lt(rel_err(own$XtWX, crossprod(X, ww * X)), 1e-13, label = lab)
      expect_lt(rel_err(own$XtWz, drop(crossprod(X, ww * z))), 1e-13, label = lab)
      expect_lt(abs(own$zWz - sum(ww * z^2)) / max(abs(sum(ww * z^2)), 1e-300), 1e-13,
                label = lab)
      expect_true(isSymmetric(own$XtWX))
    }
  }
})

test_that("the kernel's result does not depend on the threads", {
  set.seed(3)
  n <- 30000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$y <- rbinom(n, 1, plogis(sin(3 * d$x0) + d$x1 - 0.5))
  local_gg_options(gamgpu.cpu_gram = "gamgpu")
  # (cr bases: a thin plate's construction from knots takes the threads
  # too, and under a BLAS other than the reference one its threaded
  # products round differently from its one-thread dsymv: test-basis-tprs-construct.R)
  fit <- function(k) gam_gpu(y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr"),
                             family = binomial(), data = d,
                             method = "REML", device = "off",
                             control = gam_gpu_control(nthreads = k))
  a <- fit(1L)
  expect_match(a$device$cpu_gram, "gamgpu's own kernel (asked for)", fixed = TRUE)
  expect_identical(coef(a), coef(fit(2L)))
})

test_that("under \"auto\" the faster product is timed once and kept", {
  set.seed(4)
  n <- 20000; p <- 40
  X <- matrix(rnorm(n * p), n)
  w <- runif(n)
  with_gram_mode(0L, {
    expect_identical(.Call(gamgpu:::gg_cpu_gram_mode_r, NULL, NULL)$choice, rep(0L, 4))
    g <- gpu_gram(X, w, device = "off")
    m <- .Call(gamgpu:::gg_cpu_gram_mode_r, NULL, 40L)
    expect_identical(m$class, 2L)                     # p = 40: the class p < 128
    expect_true(m$choice[2] %in% 1:2)
    expect_gt(m$own_seconds[2], 0)
    expect_gt(m$blas_seconds[2], 0)
    expect_identical(m$choice[2], if (m$own_seconds[2] < m$blas_seconds[2]) 1L else 2L)
    expect_lt(rel_err(g$XtWX, crossprod(X, w * X)), 1e-13)
  })
  expect_error(.Call(gamgpu:::gg_cpu_gram_mode_r, 3L, NULL), class = "gamgpu_bad_input")
})

test_that("options(gamgpu.cpu_gram =) picks the product, and a bad value is a classed error", {
  set.seed(5)
  n <- 3000
  d <- data.frame(x0 = runif(n))
  d$y <- sin(3 * d$x0) + rnorm(n)
  local_gg_options(gamgpu.cpu_gram = "blas")
  g <- gam_gpu(y ~ s(x0), data = d, device = "off")
  expect_match(g$device$cpu_gram, "^R's BLAS")
  expect_match(g$device$cpu_gram, "gamgpu.cpu_gram", fixed = TRUE)
  local_gg_options(gamgpu.cpu_gram = "fastest")
  expect_error(gam_gpu(y ~ s(x0), data = d, device = "off"), class = "gamgpu_bad_input")
  expect_error(gpu_gram(matrix(1, 2, 1), device = "off"), class = "gamgpu_bad_input")
})
