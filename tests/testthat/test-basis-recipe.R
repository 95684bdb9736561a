# The model matrix as a recipe (src/basis/xplan.h): when every smooth has a C
# evaluator, gam_gpu() hands the backend covariates, knots and constraint
# maps instead of X, and the backend builds X itself -- on the host for the
# CPU, on the device for the GPU.  The host build must equal the matrix R
# builds bit for bit, and fits through either route must be identical.

recipe_data <- function(n, seed = 1) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), z = rnorm(n),
                  fac = factor(sample(letters[1:3], n, TRUE)), off = runif(n) / 10)
  d$y <- sin(6 * d$x0) + d$x1^2 + 0.3 * as.integer(d$fac) + d$z / 4 + rnorm(n) / 3
  d$yb <- rbinom(n, 1, binomial()$linkinv(d$y - mean(d$y)))
  d
}

# Whether the device builds smooth s's basis on n rows to rounding, not
# bit for bit as the host: a thin plate basis in more than one variable or
# a Gaussian process (summed on the tensor cores), and a one-variable thin
# plate basis or margin on rows too few for its piecewise polynomials to
# pay (the device's direct sums: R/model_matrix.R, tp1_table_pays()).
device_rounds_basis <- function(s, n) {
  any(vapply(c(list(s), s[["margin"]]), function(m)
    inherits(m, "gp.smooth") ||
      (inherits(m, c("tprs.smooth", "ts.smooth")) &&
         (m$dim > 1L || !gamgpu:::tp1_table_pays(m, n, c(2L, 0L)))), NA))
}

recipe_forms <- list(
  y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr"),
  y ~ s(x0) + s(x1, k = 12) + fac + z,
  y ~ s(x0, x1, k = 25) + s(x2, bs = "cs") + offset(off),
  y ~ s(x0, bs = "cr", by = fac) + s(x1, by = z) + fac,
  y ~ s(x0, bs = "ts") + s(x1) + s(x0, x1, k = 20) + s(x2, bs = "cr"),   # gam.side deletes columns
  y ~ te(x0, x1, k = c(4, 6)) + s(x2, bs = "cr") + fac,             # te of two cr margins
  y ~ te(x0, x2, by = fac) + fac
)

test_that("the host build of the recipe equals the model matrix built in R, bit for bit", {
  d <- recipe_data(6000)
  for (f in recipe_forms) {
    G <- bam_setup(f, data = d, chunk.size = 2000)
    expect_lt(nrow(G$X), nrow(d))
    plan <- gamgpu:::model_matrix_plan(G, G$mf, threads = 2L)
    expect_false(is.null(plan))
    ref <- gamgpu:::full_model_matrix(G, G$mf, cores = 1L)
    dimnames(ref) <- NULL
    expect_identical(.Call(gamgpu:::gg_xplan_build_r, plan), ref[, ])
    # one thread or several: the same numbers
    plan$threads <- 1L
    expect_identical(.Call(gamgpu:::gg_xplan_build_r, plan), ref[, ])
  }
  # the intercept is a block of ones the backend writes (no n-row column in
  # R), with factors and numerics beside it or alone
  for (f in recipe_forms[c(1, 2, 5)]) {
    G <- bam_setup(f, data = d, chunk.size = 2000)
    plan <- gamgpu:::model_matrix_plan(G, G$mf, threads = 2L)
    kinds <- vapply(plan$blocks, function(b) b$kind, 1L)
    expect_identical(sum(kinds == 5L), 1L)
    expect_identical(sum(kinds == 0L), 0L)
    ones <- plan$blocks[[which(kinds == 5L)]]
    expect_identical(c(ones$col0, ones$ncol), c(1L, 1L))
  }
  # deletions really happened in the last model, and the recipe honoured them
  G <- bam_setup(recipe_forms[[5]], data = d, chunk.size = 2000)
  expect_true(any(vapply(G$smooth, function(s) !is.null(attr(s, "del.index")), NA)))
})

test_that("a smooth without a C evaluator, or the option, keeps X in R and says why", {
  d <- recipe_data(3000)
  G <- bam_setup(y ~ s(x0, bs = "cr") + s(x1, x2, bs = "ds"), data = d,
                 chunk.size = 1000)
  r <- gamgpu:::model_matrix_plan(G, G$mf)
  expect_s3_class(r, "gg_no_recipe")
  expect_match(attr(r, "reason"), "s(x1,x2)", fixed = TRUE)
  d$f <- factor(sample(letters[1:5], nrow(d), replace = TRUE))
  G <- bam_setup(y ~ s(x0, bs = "cr") + s(x1, x2, bs = "ds"), data = d,
                 chunk.size = 1000)
  r <- gamgpu:::model_matrix_plan(G, G$mf)
  expect_match(attr(r, "reason"), "s(x1,x2): its basis (duchon.spline) has no C evaluator",
               fixed = TRUE)
  f <- gam_gpu(y ~ s(x0, bs = "cr") + s(x1, x2, bs = "ds"), data = d, device = "off",
               control = gam_gpu_control(chunk.size = 1000))
  expect_identical(f$device$model_matrix, "matrix")
  expect_identical(f$device$model_matrix_reason, attr(r, "reason"))
  expect_output(print(f), "Model matrix: built in R (s(x1,x2): its basis", fixed = TRUE)
  G <- bam_setup(y ~ s(x0, bs = "cr"), data = d, chunk.size = 1000)
  local_gg_options(gamgpu.x_recipe = FALSE)
  expect_identical(attr(gamgpu:::model_matrix_plan(G, G$mf), "reason"),
                   "option gamgpu.x_recipe is FALSE")
})

test_that("option gamgpu.tensor_cores is TRUE or FALSE, and reaches the plan", {
  d <- recipe_data(3000)
  G <- bam_setup(y ~ s(x0), data = d, chunk.size = 1000)
  expect_true(gamgpu:::model_matrix_plan(G, G$mf)$tensor_cores)
  local({
    local_gg_options(gamgpu.tensor_cores = FALSE)
    expect_false(gamgpu:::model_matrix_plan(G, G$mf)$tensor_cores)
  })
  for (bad in list(NA, "yes", c(TRUE, FALSE), 1)) {
    local({
      local_gg_options(gamgpu.tensor_cores = bad)
      expect_error(gam_gpu(y ~ s(x0), data = d, device = "off"), class = "gamgpu_bad_input")
    })
  }
})

test_that("CPU fits from the recipe are identical to fits from the R-built matrix", {
  d <- recipe_data(5000, seed = 2)
  ctl <- gam_gpu_control(chunk.size = 1500)
  for (f in recipe_forms) {
    fr <- gam_gpu(f, data = d, device = "off", control = ctl)
    expect_identical(fr$device$model_matrix, "recipe")
    expect_null(fr$device$model_matrix_reason)
    local({
      local_gg_options(gamgpu.x_recipe = FALSE)
      fm <<- gam_gpu(f, data = d, device = "off", control = ctl)
    })
    expect_identical(fm$device$model_matrix, "matrix")
    expect_identical(coef(fr), coef(fm))
    expect_identical(fitted(fr), fitted(fm))
    expect_identical(fr$sp, fm$sp)
  }
  fb <- gam_gpu(yb ~ s(x0, bs = "cr") + s(x1) + fac, family = binomial(), data = d,
                device = "off", control = ctl)
  expect_identical(fb$device$model_matrix, "recipe")
  expect_true(fb$converged)
})

test_that("malformed recipes are classed errors, not crashes", {
  d <- recipe_data(3000)
  G <- bam_setup(y ~ s(x0, bs = "cr") + fac, data = d, chunk.size = 1000)
  plan <- gamgpu:::model_matrix_plan(G, G$mf)
  kinds <- vapply(plan$blocks, function(b) b$kind, 1L)
  cr <- which(kinds == 1L)
  fac <- which(kinds == 4L)                 # the parametric factor: codes, contrasts
  expect_length(cr, 1L)
  expect_length(fac, 1L)
  bad <- plan
  bad$blocks[[cr]]$x <- bad$blocks[[cr]]$x[-1]
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
  bad <- plan
  bad$blocks[[cr]]$ncol <- 20L
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
  bad <- plan
  bad$blocks[[1]] <- NULL
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
  bad <- plan
  bad$blocks[[cr]]$F <- bad$blocks[[cr]]$F[1:4]
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
  # a margins block: short codes, an unknown margin type, a k that is not
  # the margins' product, too many margins
  bad <- plan
  bad$blocks[[fac]]$margins[[1]]$code <- bad$blocks[[fac]]$margins[[1]]$code[-1]
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
  bad <- plan
  bad$blocks[[fac]]$margins[[1]]$type <- 9L
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
  bad <- plan
  bad$blocks[[fac]]$k <- bad$blocks[[fac]]$k + 1L
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
  bad <- plan
  bad$blocks[[fac]]$margins <- rep(bad$blocks[[fac]]$margins, 5)
  expect_error(.Call(gamgpu:::gg_xplan_build_r, bad), class = "gamgpu_bad_input")
})

test_that("on the GPU, neither the intercept nor unit prior weights cross the bus", {
  skip_if_no_device()
  d <- recipe_data(20000, seed = 4)
  n <- nrow(d)
  f <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr")
  engine_h2d <- function() {
    t <- gpu_telemetry()
    t$h2d_bytes[t$backend == "engine"]
  }
  gpu_telemetry(reset = TRUE)
  fu <- gam_gpu(f, data = d, device = "required")
  t <- gpu_telemetry()
  expect_identical(fu$device$model_matrix, "recipe")
  expect_gt(t$launches[t$backend == "engine"], 0)
  # the two covariates and y, and under half a column of knots, maps and row state
  expect_lt(t$h2d_bytes[t$backend == "engine"], 3.5 * 8 * n)
  expect_gt(t$h2d_bytes[t$backend == "engine"], 3 * 8 * n)
  expect_device_arena_empty()
  # weights of one are copied no more than no weights; other weights are
  # (a weights column is a column of bam()'s mini frame, so its fit is not
  # the unweighted one, in bam() as here: each is compared with its CPU twin)
  d1 <- d
  d1$w <- 1
  gpu_telemetry(reset = TRUE)
  f1 <- gam_gpu(f, data = d1, weights = w, device = "required")
  expect_lt(engine_h2d(), 3.5 * 8 * n)
  d$w <- runif(n) + 0.5
  gpu_telemetry(reset = TRUE)
  fw <- gam_gpu(f, data = d, weights = w, device = "required")
  expect_gt(engine_h2d(), 4 * 8 * n)
  # the device's ones give the host's fit, weighted or not
  fcu <- gam_gpu(f, data = d, device = "off")
  fc1 <- gam_gpu(f, data = d1, weights = w, device = "off")
  fcw <- gam_gpu(f, data = d, weights = w, device = "off")
  for (pair in list(list(fu, fcu), list(f1, fc1), list(fw, fcw))) {
    expect_true(pair[[1]]$converged)
    expect_lt(rel_err(coef(pair[[1]]), coef(pair[[2]])), 1e-9)
    expect_lt(rel_err(fitted(pair[[1]]), fitted(pair[[2]])), 1e-9)
  }
  expect_device_arena_empty()
})

test_that("on the GPU, X built on the device gives the fit of the copied X", {
  skip_if_no_device()
  d <- recipe_data(20000, seed = 3)
  ctl <- gam_gpu_control(chunk.size = 4000)
  for (f in recipe_forms) {
    gpu_telemetry(reset = TRUE)
    fr <- gam_gpu(f, data = d, device = "required", control = ctl)
    t <- gpu_telemetry()
    expect_identical(fr$device$backend, "cuda")
    expect_identical(fr$device$model_matrix, "recipe")
    expect_match(fr$device$placement, "built")
    expect_gt(t$launches[t$backend == "engine"], 0)
    expect_equal(sum(t$fallbacks), 0)
    # nothing near X's size crossed the bus: covariates, knots, row state,
    # and a one-variable thin plate smooth's polynomials (R/model_matrix.R's
    # tp1_table: fixed in size, (nXu + 1) x k x 2m doubles)
    expect_lt(t$h2d_bytes[t$backend == "engine"],
              nrow(d) * length(coef(fr)) * 8 / 2 + tp1_bytes(fr$smooth))
    expect_device_arena_empty()
    local({
      local_gg_options(gamgpu.x_recipe = FALSE)
      fm <<- gam_gpu(f, data = d, device = "required", control = ctl)
    })
    expect_identical(fm$device$model_matrix, "matrix")
    # cr, te(cr, cr) and one-variable thin plate bases from their piecewise
    # polynomials use only IEEE-exact operations: the device X is the host
    # X bit for bit, and so is the fit; thin plate sums in more variables
    # run on the tensor cores, and a one-variable basis on rows too few for
    # its polynomials to pay by its direct sums: they agree to rounding
    # (the test after next; 2-d thin plate also uses log, where CUDA and
    # glibc may differ by an ulp)
    if (!any(vapply(fr$smooth, device_rounds_basis, NA, n = nrow(d)))) {
      expect_identical(coef(fr), coef(fm))
      expect_identical(fitted(fr), fitted(fm))
    } else {
      # (the basis's rounding through the fit: below 1e-9 under mgcv 1.8-41,
      # 1.4e-9 under 1.9-3, whose Sl.setup() conditions the fit otherwise;
      # H200, 2026-12-04)
      expect_lt(rel_err(coef(fr), coef(fm)), 5e-9)
    }
    fc <- gam_gpu(f, data = d, device = "off", control = ctl)
    # the by-factor te sits in a flat REML direction: its log smoothing
    # parameters move by ~5e-6 between the device's and the host's rounding
    # (bench/recipe_parity.R), and its coefficients by 2.7e-10 and 1.35e-9
    # on two commits' runs on the H200; every other formula agrees to 1e-12
    # or better
    flat <- any(grepl("by = fac) + fac", deparse(f), fixed = TRUE)) &&
      any(grepl("te(", deparse(f), fixed = TRUE))
    expect_lt(rel_err(coef(fr), coef(fc)), if (flat) 1e-8 else 1e-9)
    expect_lt(rel_err(fitted(fr), fitted(fc)), 1e-9)
    # smoothing parameters in flat REML directions move by more than the
    # fit (see the richer formula in test-fit-device.R): measured up to
    # 2.9e-5 for the by-factor te, whose fit agrees to 1e-9 all the same
    expect_lt(rel_err(log(fr$sp), log(fc$sp)), 1e-3)
  }
})

test_that("the device's thin-plate kernels give the host's basis for every shape", {
  skip_if_no_device()
  d <- recipe_data(9000, seed = 5)
  ctl <- gam_gpu_control(chunk.size = 3000)
  # one covariate: on these few rows the direct sums, and under
  # gamgpu.tensor_cores = FALSE the piecewise polynomials' kernel
  # (basis_tp1_raw), for smooths and for a tp margin of te(); more: the radial functions, raw
  # widths (k columns before the constraint) 40 one pass (tensor cores:
  # 8ths, 5; else 16ths, 3), 75 a pass of 64 and one of 11 (tensor cores
  # 2; else a narrow one, run as 12), 5 one pass (1; narrow, as 6), 30 and
  # 20 (4 and 3; 2 wide and 4 narrow)
  forms <- list(
    y ~ s(x0, k = 40) + s(x1, k = 75) + s(x2, k = 5),
    y ~ s(x0, x1, x2, k = 40) + s(x0, x1, z, k = 75),
    y ~ s(x0, x1, k = 30) + s(x1, x2, k = 5) + s(x0, x1, x2, k = 20),
    y ~ te(x0, x1, bs = c("tp", "cr"), k = c(7, 5)))
  for (f in forms) {
    gpu_telemetry(reset = TRUE)
    fr <- gam_gpu(f, data = d, device = "required", control = ctl)
    expect_identical(fr$device$model_matrix, "recipe")
    expect_match(fr$device$placement, "built")
    t <- gpu_telemetry()
    expect_gt(t$launches[t$backend == "engine"], 0)
    local({
      local_gg_options(gamgpu.x_recipe = FALSE)
      fm <<- gam_gpu(f, data = d, device = "required", control = ctl)
    })
    expect_identical(fm$device$model_matrix, "matrix")
    # on the tensor cores (compute capability 8.0 on) the sums agree with
    # the host's to rounding, so do the fits, as one covariate's direct
    # sums do (its polynomials would be the host's bit for bit)
    if (any(vapply(fr$smooth, device_rounds_basis, NA, n = nrow(d)))) {
      expect_lt(rel_err(coef(fr), coef(fm)), 1e-9)
      expect_lt(rel_err(fitted(fr), fitted(fm)), 1e-9)
    } else {
      expect_identical(coef(fr), coef(fm))
      expect_identical(fitted(fr), fitted(fm))
    }
    # without them (and on older GPUs): one covariate, three: square roots
    # only, IEEE-exact -- the device X is the host's (and R's) bit for bit,
    # so is the fit; two covariates use log, where CUDA and glibc may
    # differ in the last bit
    local({
      local_gg_options(gamgpu.tensor_cores = FALSE)
      fo <<- gam_gpu(f, data = d, device = "required", control = ctl)
    })
    if (!any(vapply(fo$smooth, function(s) inherits(s, "tprs.smooth") && s$dim == 2L, NA))) {
      expect_identical(coef(fo), coef(fm))
      expect_identical(fitted(fo), fitted(fm))
    } else {
      expect_lt(rel_err(coef(fo), coef(fm)), 1e-9)
    }
    expect_device_arena_empty()
  }
})

test_that("the thin-plate basis on the tensor cores is the host's to rounding", {
  skip_if_no_device()
  d <- recipe_data(9000, seed = 6)
  n <- nrow(d)
  # (gp smooths run the same kernels: test-basis-recipe-terms.R fits them;
  # one-variable thin plate smooths build their rows from piecewise
  # polynomials, the host's bit for bit)
  G <- mgcv::gam(y ~ s(x0, k = 10) + s(x1, k = 75) + s(x0, x1, k = 30) +
                   s(x0, x1, x2, k = 20) + s(x0, x1, z, k = 75), data = d, fit = FALSE)
  # (the tensor cores from compute_80 on: the NVRTC arch of device 0)
  arch <- gpu_info()$devices$nvrtc_arch[1]
  tensor <- as.integer(sub("compute_", "", arch, fixed = TRUE)) >= 80L
  for (sm in G$smooth) {
    # (a one-variable basis from its piecewise polynomials on both: the
    # device on these few rows would otherwise take the direct sums)
    Xh <- gamgpu:::raw_basis_matrix(sm, d, n, 2L, tp1_table = TRUE)
    Xd <- gamgpu:::raw_basis_matrix(sm, d, n, 2L, dev = c(2L, 0L), tp1_table = TRUE)
    expect_identical(dim(Xd), dim(Xh))
    # the largest difference against the largest entry, column by column
    err <- max(apply(abs(Xd - Xh), 2, max) / apply(abs(Xh), 2, max))
    if (sm$dim == 1L) {
      expect_identical(Xd, Xh, label = sm$label)
      # its direct sums on the device (what it takes on few rows) are the
      # polynomials' to rounding: sums of nXu + M terms, as checked_recipe()
      # allows them against PredictMat (measured on the H200: 2.5e-11 for
      # k = 75 on 2000 knots)
      Xs <- gamgpu:::raw_basis_matrix(sm, d, n, 2L, dev = c(2L, 0L), tp1_table = FALSE)
      expect_lt(max(abs(Xs - Xh)) / max(abs(Xh)), max(1e-11, 1e-13 * nrow(sm$UZ)),
                label = sm$label)
      expect_false(identical(Xs, Xh), label = sm$label)
    } else if (tensor) {
      # measured on the H200: bench/tprs_basis.R (1e5 uniform rows) 9.5e-15
      # (2 variables, k = 30), 1.7e-14 and 9.4e-14 (3 variables, k = 20 and
      # 75); here 5.1e-13 for s(x0, x1, z, k = 75), z normal
      expect_lt(err, 2e-12, label = sm$label)
      expect_false(identical(Xd, Xh), label = sm$label)   # the tensor cores ran
    }
    local({
      local_gg_options(gamgpu.tensor_cores = FALSE)
      Xo <- gamgpu:::raw_basis_matrix(sm, d, n, 2L, dev = c(2L, 0L), tp1_table = TRUE)
      # square roots only (one or three covariates): bit for bit; log
      # (two): CUDA and glibc may differ in the last bit
      if (sm$dim != 2L) expect_identical(Xo, Xh, label = sm$label)
      else expect_lt(max(abs(Xo - Xh)) / max(abs(Xh)), 1e-13)
    })
  }
  expect_error(local({
    local_gg_options(gamgpu.tensor_cores = NA)
    gamgpu:::raw_basis_matrix(G$smooth[[1]], d, n, 2L, dev = c(2L, 0L))
  }), class = "gamgpu_bad_input")
  expect_device_arena_empty()
})
