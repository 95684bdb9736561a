# A user interrupt (interrupt.h) stops a fit at its next block of rows in
# any long C loop -- the model matrix's build on host threads, the Gram
# product, the engine's iterations, the leverages -- with the helper
# threads joined and an error of class gamgpu_interrupted; the next fit is
# the same as ever.  options(gamgpu.inject_interrupt = k) makes the k-th
# poll for an interrupt (on R's thread, at every check) report one;
# tools/interrupt_latency.R measures real Ctrl-C latency.

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
  # polls it makes (a few more or less from run to run, as the waits for
  # helper threads time out)
  g <- fit_with_interrupt(1e9, f, d, control = ctl)
  expect_identical(coef(g), coef(ref))
  P <- .Call(gamgpu:::gg_interrupt_polls_r)
  expect_gt(P, 100)
  # interrupts at the first poll and at polls counted back from the last,
  # to reach the late stages (the build polls the most)
  ks <- unique(c(1, P - 2^(0:floor(log2(P - 1)))))
  stages <- character()
  for (k in ks) {
    r <- fit_with_interrupt(k, f, d, control = ctl)
    # the helper threads are joined: none holds a slot of the budget (a
    # reset starts the count at the threads working now, this one only)
    .Call(gamgpu:::gg_threads_peak_r, TRUE)
    expect_identical(.Call(gamgpu:::gg_threads_peak_r, FALSE), 1L)
    if (k == 1) expect_s3_class(r, "gamgpu_interrupted")
    if (inherits(r, "gamgpu_interrupted")) {
      expect_s3_class(r, "gamgpu_error")
      expect_match(conditionMessage(r), "interrupted by the user during")
      stages <- c(stages, sub(".*interrupted by the user during ", "", conditionMessage(r)))
    } else {
      expect_identical(coef(r), coef(ref))     # the run polled less than P times
    }
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
