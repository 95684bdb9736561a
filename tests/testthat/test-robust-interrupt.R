# A user interrupt (interrupt.h) stops a fit at its next block of rows in
# any long C loop -- the model matrix's build on host threads, the Gram
# product, the engine's iterations, the leverages -- with the helper
# threads joined and an error of class gamgpu_interrupted; the next fit is
# the same as ever.  options(gamgpu.inject_interrupt = k) makes the k-th
# poll for an interrupt (on R's thread, at every check) report one;
# tools/interrupt_latency.R measures real Ctrl-C latency.  The count runs
# on over the armed calls of one gam_gpu() call (the recipe's self-check,
# then the fit), so gg_interrupt_polls_r() after a fit is the whole call's.

interrupt_data <- function(n = 20000) {
  set.seed(7)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$y <- sin(6 * d$x0) + d$x1^2 + rnorm(n) / 3
  d
}

fit_with_interrupt <- function(k, f, d, ...) {
  local_gg_options(gamgpu.inject_interrupt = k)
  tryCatch(gam_gpu(f, data = d, device = "off", ...),
           gamgpu_interrupted = function(e) e)
}

test_that("an interrupt stops every stage of a CPU fit, and the next fit is unchanged", {
  d <- interrupt_data()
  f <- y ~ s(x0, k = 20) + s(x1, bs = "cr") + te(x1, x2, k = c(4, 4))
  ctl <- gam_gpu_control(nthreads = 2, block.rows = 2000)
  ref <- gam_gpu(f, data = d, device = "off", control = ctl)
  expect_identical(ref$device$model_matrix, "recipe")
  # a fit that polls at every check without being interrupted: how many
  # polls it makes (only loops' block boundaries count, not a wait's
  # repeated polls; a few more where a helper thread's slot was taken by
  # work running beside, so that R's thread did that block itself)
  polls <- function() {
    g <- fit_with_interrupt(1e9, f, d, control = ctl)
    expect_identical(coef(g), coef(ref))
    .Call(gamgpu:::gg_interrupt_polls_r)
  }
  P <- polls()
  expect_gt(P, 100)
  stages <- character()
  all_seen <- function()
    any(grepl("model matrix", stages)) && any(grepl("Gram|iteration", stages)) &&
      any(grepl("leverages", stages))
  try_at <- function(k) {
    r <- fit_with_interrupt(k, f, d, control = ctl)
    # the helper threads are joined: none holds a slot of the budget (a
    # reset starts the count at the threads working now, this one only)
    .Call(gamgpu:::gg_threads_peak_r, TRUE)
    expect_identical(.Call(gamgpu:::gg_threads_peak_r, FALSE), 1L)
    if (k == 1) expect_s3_class(r, "gamgpu_interrupted")
    if (inherits(r, "gamgpu_interrupted")) {
      expect_s3_class(r, "gamgpu_error")
      expect_match(conditionMessage(r), "interrupted by the user during")
      stages <<- c(stages, sub(".*interrupted by the user during ", "", conditionMessage(r)))
    } else {
      expect_identical(coef(r), coef(ref))     # the run polled less than k times
    }
  }
  # interrupts at the first poll and at polls counted back from the last,
  # to reach the late stages (the build polls the most); then, should a
  # run's count have moved the last stage's ten polls (the leverages) past
  # these, at each of the last polls of a count measured again
  for (k in unique(c(1, P - 2^(0:floor(log2(P - 1)))))) try_at(k)
  for (again in 1:5) {
    if (all_seen()) break
    P <- polls()
    for (k in P - 1:12) if (!all_seen()) try_at(k)
  }
  expect_true(any(grepl("model matrix", stages)))
  expect_true(any(grepl("Gram|iteration", stages)))
  expect_true(any(grepl("leverages", stages)))
  g <- gam_gpu(f, data = d, device = "off", control = ctl)
  expect_identical(coef(g), coef(ref))
  expect_identical(g$sp, ref$sp)
})

test_that("an interrupt during the engine of a fit with X built in R stops it", {
  d <- interrupt_data(8000)
  f <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr")
  local_gg_options(gamgpu.x_recipe = FALSE)
  r <- fit_with_interrupt(1, f, d, control = gam_gpu_control(block.rows = 1000))
  expect_s3_class(r, "gamgpu_interrupted")
  expect_match(conditionMessage(r), "Gram|iteration")
  expect_s3_class(gam_gpu(f, data = d, device = "off"), "gam_gpu")
})

test_that("no injected interrupt without the option, and a bad option value is none", {
  d <- interrupt_data(3000)
  f <- y ~ s(x0, bs = "cr")
  for (v in list(NULL, 0, -1, "a", c(1, 2), NA_real_)) {
    local_gg_options(gamgpu.inject_interrupt = v)
    expect_s3_class(gam_gpu(f, data = d, device = "off"), "gam_gpu")
  }
})

test_that("an interrupt stops a CPU prediction and the host build of a recipe", {
  d <- interrupt_data(6000)
  g <- gam_gpu(y ~ s(x0, bs = "cr") + s(x1, k = 20), data = d, device = "off")
  local({
    local_gg_options(gamgpu.inject_interrupt = 1)
    expect_error(predict(g, d, se.fit = TRUE, device = "off"), class = "gamgpu_interrupted")
  })
  p <- predict(g, d, se.fit = TRUE, device = "off")
  expect_equal(as.vector(p$fit), as.vector(fitted(g)), tolerance = 1e-12)
  G <- mgcv::bam(y ~ s(x1, k = 20), data = d, fit = FALSE)
  plan <- gamgpu:::model_matrix_plan(G, G$mf)
  local({
    local_gg_options(gamgpu.inject_interrupt = 1)
    expect_error(.Call(gamgpu:::gg_xplan_build_r, plan), class = "gamgpu_interrupted")
  })
  expect_identical(dim(.Call(gamgpu:::gg_xplan_build_r, plan)), c(6000L, ncol(G$X)))
})

test_that("an interrupt stops a fit, a prediction and a Gram product on the device, and frees the arena", {
  skip_if_no_device()
  d <- interrupt_data()
  f <- y ~ s(x0, k = 20) + s(x1, bs = "cr") + te(x1, x2, k = c(4, 4))
  ctl <- gam_gpu_control(chunk.size = 5000)          # X from its recipe, built on the device
  ref <- gam_gpu(f, data = d, device = "required", control = ctl)
  expect_identical(ref$device$model_matrix, "recipe")
  g <- local({
    local_gg_options(gamgpu.inject_interrupt = 1e9)
    gam_gpu(f, data = d, device = "required", control = ctl)
  })
  expect_identical(coef(g), coef(ref))
  P <- .Call(gamgpu:::gg_interrupt_polls_r)
  expect_gt(P, 10)
  stages <- character()
  for (k in unique(c(1, 2, 3, P - 2^(0:floor(log2(P - 1)))))) {
    r <- local({
      local_gg_options(gamgpu.inject_interrupt = k)
      tryCatch(gam_gpu(f, data = d, device = "required", control = ctl),
               gamgpu_interrupted = function(e) e)
    })
    expect_device_arena_empty()
    if (k == 1) expect_s3_class(r, "gamgpu_interrupted")
    if (inherits(r, "gamgpu_interrupted")) {
      stages <- c(stages, sub(".*interrupted by the user during ", "", conditionMessage(r)))
    } else {
      expect_identical(coef(r), coef(ref))
    }
  }
  # the device's own waits hear it: the build of X and the row kernels
  expect_true(any(grepl("on the device", stages)), info = paste(unique(stages), collapse = "; "))
  expect_identical(coef(expect_device_fit(gam_gpu(f, data = d, device = "required",
                                                  control = ctl))), coef(ref))

  X <- predict(ref, d, type = "lpmatrix")
  local({
    local_gg_options(gamgpu.inject_interrupt = 1)
    expect_error(predict(ref, d, se.fit = TRUE, device = "required"),
                 class = "gamgpu_interrupted")
    expect_error(gpu_gram(X, w = d$x0, device = "required"), class = "gamgpu_interrupted")
    expect_error(gpu_gram(X, w = d$x0, device = "off"), class = "gamgpu_interrupted")
  })
  expect_device_arena_empty()
  p <- predict(ref, d, se.fit = TRUE, device = "required")
  expect_equal(as.vector(p$fit), as.vector(ref$linear.predictors), tolerance = 1e-12)
})

# A real Ctrl-C: SIGINT from a forked helper `delay` seconds after the fit
# starts.  A fit that ends first waits for the signal inside the handler.
# Returns how the fit ended and the seconds from the signal to that end.
sigint_fit <- function(delay, fit) {
  parent <- Sys.getpid()
  child <- parallel::mcparallel({
    Sys.sleep(delay)
    tools::pskill(parent, tools::SIGINT)
    Sys.time()
  })
  finished <- FALSE
  how <- tryCatch({
    fit()
    finished <- TRUE
    Sys.sleep(delay + 60)
    "no signal"
  }, interrupt = function(e) "R interrupt",
     gamgpu_interrupted = function(e) "gamgpu_interrupted")
  t1 <- Sys.time()
  sent <- parallel::mccollect(child)[[1]]
  list(how = if (finished) "fit ended first" else how,
       latency = as.numeric(difftime(t1, sent, units = "secs")))
}

sigint_check <- function(device, bound) {
  set.seed(3)
  n <- 3e5
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), x3 = runif(n))
  # (binomial: the engine's penalized IRLS, in C, is a good part of the fit)
  d$y <- rbinom(n, 1, plogis(sin(6 * d$x0) + d$x1^2 + d$x2 * d$x3 - 1))
  f <- y ~ s(x0, bs = "cr", k = 20) + s(x1, k = 12) + te(x2, x3, k = c(6, 6))
  fit <- function() gam_gpu(f, family = binomial(), data = d, device = device)
  invisible(fit())                      # (the first fit's one-off costs)
  t_fit <- system.time(ref <- fit())[["elapsed"]]
  outcomes <- character()
  # the signals: first within the engine's iterations as the timed fit
  # placed them (after its setup), then at fractions of the whole fit while
  # none has landed in gamgpu's C -- on a fast machine most of a fit is R,
  # and where a signal lands is a matter of timing
  tm <- ref$device$timings
  at <- c(tm[["setup"]] + c(0.3, 0.6, 0.15, 0.8, 0.45) * tm[["iterations"]],
          c(0.6, 0.7, 0.8, 0.9, 0.5, 0.4) * t_fit)
  for (i in seq_along(at)) {
    if (i > 4 && "gamgpu_interrupted" %in% outcomes) break
    r <- sigint_fit(at[i], fit)
    outcomes <- c(outcomes, r$how)
    label <- sprintf("SIGINT at %.2f s of a %.2f s fit: %s after %.3f s", at[i], t_fit,
                     r$how, r$latency)
    expect_true(r$how %in% c("gamgpu_interrupted", "R interrupt", "fit ended first"),
                label = label)
    # gamgpu's C polls every 20 ms; mgcv's setup in R makes LAPACK calls
    # that R cannot interrupt (tp's eigen-decomposition of up to 2000 knots,
    # whatever n), hence the looser bound there
    if (r$how == "gamgpu_interrupted") expect_lt(r$latency, bound, label = label)
    # (R's own interrupt waits for those calls to return: 3.4 s measured
    # on the 2-core CI machine while another test run shared its cores)
    if (r$how == "R interrupt") expect_lt(r$latency, 5, label = label)
    .Call(gamgpu:::gg_threads_peak_r, TRUE)
    expect_identical(.Call(gamgpu:::gg_threads_peak_r, FALSE), 1L, label = label)
    if (device != "off") expect_device_arena_empty()
  }
  g <- fit()
  expect_identical(coef(g), coef(ref))
  expect_identical(g$sp, ref$sp)
  outcomes
}

test_that("Ctrl-C (SIGINT) stops a CPU fit within 0.5 s, and the next fit is the same", {
  skip_on_os("windows")
  # (where a signal lands is a matter of timing: the suite runs this check,
  # R CMD check's second run of the suite does not)
  skip_if(nzchar(Sys.getenv("_R_CHECK_PACKAGE_NAME_")),
          "timing-dependent: run by the test suite, not again under R CMD check")
  # X built dense: with sparse rows (options(gamgpu.cpu_x)) this model's C
  # part takes a fraction of its R part, and the signals land in R
  local_gg_options(gamgpu.cpu_x = "dense")
  outcomes <- sigint_check("off", bound = 0.5)
  # the fit spends most of its time in gamgpu's C: some signal lands there
  expect_true("gamgpu_interrupted" %in% outcomes, info = paste(outcomes, collapse = ", "))
})

test_that("Ctrl-C (SIGINT) stops a device fit within 1 s, frees the arena, and the next fit is the same", {
  skip_if_no_device()
  # at this n the device's part takes a fraction of a second: the signals
  # mostly land in R's setup; the device's waits are polled (tested with
  # injected interrupts above, and at 1e8 rows by tools/interrupt_latency.R)
  sigint_check("required", bound = 1)
})
