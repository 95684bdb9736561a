# The engine on the device against the engine on the CPU: every family and
# link, the model formulas of the engine's tests.  Each device fit must
# launch kernels and record no fallback; after each, no device memory is in
# use.

parity_data <- function(n, fam, link, seed = 1) {
  set.seed(seed)
  x0 <- runif(n); x1 <- runif(n); x2 <- runif(n); fac <- factor(sample(letters[1:4], n, TRUE))
  f <- sin(2 * pi * x0) + 0.5 * exp(x1) - 1 + 0.3 * (as.integer(fac) - 2.5)
  u <- (f - min(f)) / (max(f) - min(f))          # in [0, 1]
  mu <- switch(fam,
    gaussian = , quasi = switch(link, identity = 2 * f, 1 + u),
    binomial = , quasibinomial = 0.15 + 0.7 * u,
    poisson = , quasipoisson = if (link == "log") 1 + 4 * u else 10 + 20 * u,
    Gamma = 1 + 2 * u,
    inverse.gaussian = 1 + u)
  y <- switch(fam,
    gaussian = mu + rnorm(n, sd = 0.3),
    binomial = rbinom(n, 1, mu),
    quasibinomial = rbinom(n, 5, mu) / 5,
    poisson = , quasipoisson = rpois(n, mu),
    Gamma = rgamma(n, shape = 5, rate = 5 / mu),
    inverse.gaussian = mu * exp(rnorm(n, sd = 0.1)))
  data.frame(y = y, x0 = x0, x1 = x1, x2 = x2, fac = fac, w = runif(n, 0.5, 1.5))
}

rel <- function(a, b) max(abs(a - b)) / max(abs(b), 1e-300)

expect_parity <- function(fd, fc, tol = 1e-9, sp = TRUE) {
  expect_identical(fd$device$backend, "cuda")
  expect_identical(fc$device$backend, "cpu")
  expect_lt(rel(coef(fd), coef(fc)), tol)
  expect_lt(rel(fitted(fd), fitted(fc)), tol)
  expect_lt(rel(fd$linear.predictors, fc$linear.predictors), tol)
  if (sp && length(fc$sp)) expect_lt(rel(log(fd$sp), log(fc$sp)), tol)
  expect_lt(rel(fd$edf, fc$edf), tol)
  expect_lt(abs(fd$deviance - fc$deviance) / fc$deviance, tol)
  expect_lt(rel(fd$hat, fc$hat), tol)     # leverages: gram_leverage vs the BLAS
}

cases <- list(
  c("gaussian", "identity"), c("gaussian", "log"), c("gaussian", "inverse"),
  c("binomial", "logit"), c("binomial", "probit"), c("binomial", "cloglog"),
  c("binomial", "cauchit"), c("quasibinomial", "logit"),
  c("poisson", "log"), c("poisson", "identity"), c("poisson", "sqrt"),
  c("quasipoisson", "log"),
  c("Gamma", "log"), c("Gamma", "inverse"), c("Gamma", "identity"),
  c("inverse.gaussian", "log"), c("inverse.gaussian", "1/mu^2"),
  c("inverse.gaussian", "inverse"), c("inverse.gaussian", "identity")
)

# Every other case sets a chunk.size below n: bam's subsample setup, so X
# reaches the backend as a recipe and the device builds it; the others copy
# the X that mgcv's setup built.
for (i in seq_along(cases)) {
  cs <- cases[[i]]
  test_that(sprintf("device and CPU fits agree to 1e-9: %s(%s)", cs[1], cs[2]), {
    skip_if_no_device()
    d <- parity_data(3000, cs[1], cs[2], seed = nchar(paste(cs, collapse = "")))
    fam <- get(cs[1], mode = "function")(link = cs[2])
    form <- y ~ s(x0, bs = "cr") + s(x1) + fac
    ctl <- gam_gpu_control(chunk.size = if (i %% 2) 1000 else 10000)
    gpu_telemetry(reset = TRUE)
    fd <- gam_gpu(form, family = fam, data = d, weights = w, device = "required",
                  control = ctl)
    t <- gpu_telemetry()
    expect_gt(t$launches[t$backend == "engine"], 0)
    expect_equal(sum(t$fallbacks), 0)
    expect_device_arena_empty()
    expect_identical(fd$device$model_matrix, if (i %% 2) "recipe" else "matrix")
    fc <- gam_gpu(form, family = fam, data = d, weights = w, device = "off", control = ctl)
    expect_parity(fd, fc)
  })
}

test_that("richer formulas agree on the device: te, by-factor, re, cc, offset", {
  skip_if_no_device()
  d <- parity_data(4000, "poisson", "log", seed = 7)
  d$g <- factor(sample(1:20, nrow(d), TRUE))
  d$off <- log(runif(nrow(d), 0.5, 2))
  form <- y ~ te(x0, x1, k = c(5, 5)) + s(x2, by = fac) + s(g, bs = "re") +
    s(x1, bs = "cc") + fac + offset(off)
  gpu_telemetry(reset = TRUE)
  fd <- gam_gpu(form, family = poisson(), data = d, device = "required")
  fc <- gam_gpu(form, family = poisson(), data = d, device = "off")
  # Three of the by-factor smooths are penalized towards their null space:
  # their REML is flat in log(sp) (Hessian diagonal ~1e-8), so rounding-level
  # differences between the device and CPU Gram matrices (~1e-15) move those
  # sp by ~1e-5 without changing the fit beyond ~1e-8.  Well-determined sp
  # must agree to 1e-9; the fit itself to 1e-7.
  firm <- diag(fc$outer.info$hess) > 1e-3
  expect_gte(sum(firm), 3L)
  expect_lt(rel(log(fd$sp[firm]), log(fc$sp[firm])), 1e-9)
  expect_lt(rel(log(fd$sp[!firm]), log(fc$sp[!firm])), 1e-3)
  expect_parity(fd, fc, tol = 1e-7, sp = FALSE)
  expect_identical(fd$device$backend, "cuda")
  t <- gpu_telemetry()
  expect_gt(t$launches[t$backend == "engine"], 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_device_arena_empty()
})

test_that("a repeated fit compiles nothing and allocates no new device memory", {
  skip_if_no_device()
  d <- parity_data(5000, "binomial", "logit", seed = 3)
  form <- y ~ s(x0) + s(x1)
  gam_gpu(form, family = binomial(), data = d, device = "required")
  m1 <- gpu_modules(); a1 <- gpu_arena()
  g2 <- gam_gpu(form, family = binomial(), data = d, device = "required")
  m2 <- gpu_modules(); a2 <- gpu_arena()
  expect_identical(g2$device$backend, "cuda")
  expect_identical(m2$compiles, m1$compiles)
  expect_equal(sum(a2$misses), sum(a1$misses))
  expect_gt(sum(a2$hits), sum(a1$hits))
  expect_device_arena_empty(a2)
})

test_that("'auto' without a usable device fits on the CPU and says why", {
  skip_if(device_usable(), "a GPU is usable here")
  local_gg_options(gamgpu.auto_min_rows = 0)
  d <- parity_data(500, "gaussian", "identity")
  gpu_telemetry(reset = TRUE)
  f <- gam_gpu(y ~ s(x0), data = d, device = "auto")
  expect_identical(f$device$backend, "cpu")
  expect_match(f$device$reason, "libcuda|without CUDA")
  t <- gpu_telemetry()
  expect_gte(sum(t$fallbacks), 1)
  expect_error(gam_gpu(y ~ s(x0), data = d, device = "required"),
               class = "gamgpu_device_unavailable")
})

test_that("'auto' fits on the GPU when one is usable and the data are large enough", {
  skip_if_no_device()
  local_gg_options(gamgpu.auto_min_rows = 1000)
  d <- parity_data(5000, "gaussian", "identity")
  f <- expect_device_fit(gam_gpu(y ~ s(x0), data = d, device = "auto"))
  expect_identical(f$device$backend, "cuda")
  fc <- gam_gpu(y ~ s(x0), data = d, device = "off")
  expect_lt(rel_err(fitted(f), fitted(fc)), 1e-9)
})

test_that("'auto' keeps small models on the CPU, counted with the reason", {
  local_gg_options(gamgpu.auto_min_rows = 1000)
  d <- parity_data(600, "gaussian", "identity")
  gpu_telemetry(reset = TRUE)
  f <- gam_gpu(y ~ s(x0), data = d, device = "auto")
  expect_identical(f$device$backend, "cpu")
  expect_match(f$device$reason, "600 rows is below the device threshold of 1000")
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "engine"], 1)
  expect_match(attr(t, "fallback_reasons")$reason, "gamgpu.auto_min_rows")
  f <- gam_gpu(y ~ s(x0), data = d, device = "off")
  expect_identical(f$device$reason, "device policy \"off\": fitted on the CPU")
})

test_that("X three times the device-memory cap streams through and gives the resident fit", {
  skip_if_no_device()
  # p = 121: X is 15 times the row state, so a cap of a third of X still
  # holds the row state and two chunk buffers.  Both ways of getting X to
  # the device: built there from the covariates (the recipe), or copied.
  d <- parity_data(400000, "binomial", "logit", seed = 11)
  form <- y ~ s(x0, k = 40, bs = "cr") + s(x1, k = 40, bs = "cr") + s(x2, k = 40, bs = "cr") + fac
  for (recipe in c(TRUE, FALSE)) {
    local_gg_options(gamgpu.x_recipe = recipe, gamgpu.device_memory = NULL)
    resident <- gam_gpu(form, family = binomial(), data = d, device = "required")
    expect_match(resident$device$placement, "resident")
    expect_identical(resident$device$model_matrix, if (recipe) "recipe" else "matrix")
    x_bytes <- nrow(d) * length(coef(resident)) * 8
    gpu_arena_release()
    local_gg_options(gamgpu.device_memory = floor(x_bytes / 3))
    gpu_telemetry(reset = TRUE)
    streamed <- gam_gpu(form, family = binomial(), data = d, device = "required")
    expect_match(streamed$device$placement, "streamed")
    t <- gpu_telemetry()
    expect_equal(t$fallbacks[t$backend == "engine"], 0)
    if (recipe) {
      # every pass builds its chunks on the device: X never crosses the bus
      expect_lt(t$h2d_bytes[t$backend == "engine"], x_bytes / 4)
    } else {
      # every IRLS pass streams X again: several times its size crossed the bus
      expect_gt(t$h2d_bytes[t$backend == "engine"], 3 * x_bytes)
    }
    expect_lte(attr(gpu_arena(), "bytes_cached") + attr(gpu_arena(), "bytes_in_use"),
               floor(x_bytes / 3))
    expect_device_arena_empty()
    # more than one chunk, each with Gram slabs of its own (the device
    # filled), added in order: the resident fit to rounding
    rows <- as.numeric(sub(".* chunks of ([0-9]+) rows.*", "\\1", streamed$device$placement))
    expect_lt(rows, nrow(d) / 2)
    expect_true(streamed$converged)
    expect_lt(rel_err(coef(streamed), coef(resident)), 1e-9)
    expect_lt(rel_err(fitted(streamed), fitted(resident)), 1e-9)
    expect_lt(max(abs(log(streamed$sp) - log(resident$sp))), 1e-6)
    expect_lt(rel_err(streamed$hat, resident$hat), 1e-9)
    # and the same chunks give the same sums: a streamed fit is reproducible
    again <- gam_gpu(form, family = binomial(), data = d, device = "required")
    expect_identical(coef(again), coef(streamed))
    gpu_arena_release()
  }
})
