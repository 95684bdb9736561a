# The glue's PROTECT discipline under gctorture(), which collects garbage at
# every allocation: an unprotected object is reused at once.  Before the
# fix, errors_r.c left the class string of a classed error unprotected while
# it made the message string, and the error came back with its class as its
# message.  (Slow under gctorture: a few small calls, seconds in all.)

with_torture <- function(expr) {
  gctorture(TRUE)
  on.exit(gctorture(FALSE))
  expr
}

test_that("classed errors from C keep their class and message under gctorture", {
  X <- matrix(1, 10, 2)
  y <- 1:10
  w <- rep(1, 10)
  e <- with_torture(tryCatch(.Call(gamgpu:::gg_session_open_r, X, y, w, NULL, list(), list()),
                             error = identity))
  expect_s3_class(e, "gamgpu_bad_input")
  expect_s3_class(e, "gamgpu_error")
  expect_identical(conditionMessage(e),
                   "y and weights must be double vectors with one entry per row of X")
  # a message composed in C (sexp_r.c's checked conversions)
  e <- with_torture(tryCatch(.Call(gamgpu:::gg_nvrtc_arch_r, NA_integer_, 0L),
                             error = identity))
  expect_s3_class(e, "gamgpu_bad_input")
  expect_identical(conditionMessage(e),
                   "major must be a whole number in [0, 2147483647], not NA")
})

test_that("a small fit's .Calls (session, fit) give the same result under gctorture", {
  set.seed(11)
  d <- data.frame(x = runif(60))
  d$y <- stats::rpois(60, exp(1 + sin(2 * pi * d$x)))
  a <- gg_fit_args(y ~ s(x, k = 5), d, stats::poisson())
  X <- a$X; yy <- a$y; w <- a$w; S <- a$S; off <- a$off; lsp0 <- a$lsp0
  spec <- a$spec; ctl <- a$control
  fit <- function() {
    ses <- .Call(gamgpu:::gg_session_open_r, X, yy, w, NULL, spec[c("device_mode", "device_ordinal")],
                 ctl)
    on.exit(.Call(gamgpu:::gg_session_close_r, ses))
    .Call(gamgpu:::gg_fit, ses, "poisson", "log", S, off, NULL, lsp0, spec, ctl)
  }
  # the timings differ from run to run; everything else must not
  untimed <- function(r) {
    r$device.times <- NULL
    r$scalars <- r$scalars[setdiff(names(r$scalars), c("t.iterations", "t.postproc"))]
    r
  }
  ref <- untimed(fit())
  got <- untimed(with_torture(fit()))
  expect_identical(names(got), names(ref))
  expect_identical(got, ref)
  expect_true(all(is.finite(got$coefficients)))
})
