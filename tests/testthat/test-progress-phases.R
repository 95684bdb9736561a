# Progress of long fits (R/progress.R): a message per phase through cli,
# on where asked (options(gamgpu.progress = TRUE)), never with FALSE, and
# by default only in interactive sessions (never in this one).

progress_data <- function() {
  set.seed(1)
  d <- data.frame(x = runif(300))
  d$y <- sin(3 * d$x) + rnorm(300) * 0.2
  d
}

phase_messages <- function(expr) {
  msgs <- character(0)
  withCallingHandlers(expr, message = function(m) {
    msgs <<- c(msgs, conditionMessage(m))
    invokeRestart("muffleMessage")
  })
  msgs
}

test_that("options(gamgpu.progress = TRUE) reports each phase of a fit", {
  local_gg_options(gamgpu.progress = TRUE)
  d <- progress_data()
  m <- phase_messages(gam_gpu(y ~ s(x), data = d, device = "off"))
  expect_true(any(grepl("Setting up the model", m)))
  expect_true(any(grepl("Planning the model matrix", m)))
  expect_true(any(grepl("Fitting", m)))
  expect_true(any(grepl("Post-processing", m)))
  d$count <- rpois(nrow(d), exp(d$y))
  m <- phase_messages(gam_gpu(count ~ s(x), data = d, method = "REML", family = poisson(),
                              device = "off"))
  expect_true(any(grepl("Choosing the smoothing parameters \\(REML\\)", m)))
})

test_that("no phase messages with FALSE, nor by default outside interactive sessions", {
  d <- progress_data()
  local_gg_options(gamgpu.progress = FALSE)
  expect_length(phase_messages(gam_gpu(y ~ s(x), data = d, device = "off")), 0L)
  local_gg_options(gamgpu.progress = NULL)
  skip_if(interactive())
  expect_length(phase_messages(gam_gpu(y ~ s(x), data = d, device = "off")), 0L)
})

test_that("a bad gamgpu.progress is a classed error", {
  local_gg_options(gamgpu.progress = "yes")
  expect_error(gam_gpu(y ~ s(x), data = progress_data(), device = "off"),
               class = "gamgpu_bad_input")
})
