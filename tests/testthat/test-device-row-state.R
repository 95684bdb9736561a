# The rows a device session keeps (src/cuda/cuda_backend.c load()): no
# vector of prior weights when each is 1 (the kernels take 1), and the
# leverages' n-vector only when first used where the session defers it
# (a shards node's).  Each saves 8 bytes a row of device memory; the
# results are the same to the bit as a session that keeps both.

row_state_session <- function(X, y, unit, defer_h) {
  gamgpu:::model_session(X, y, rep(1, length(y)), NULL, list(mode = 2L, ordinal = 0L),
                         list(nthreads = 2L), unit_weights = unit, defer_h = defer_h)
}

row_state_ops <- function(s, beta) {
  list(eval = s$op("eval", beta, "binomial", "logit", TRUE, NULL),
       mu = .Call(gamgpu:::gg_session_fetch_r, s$ptr, "mu"),
       start = s$op("eval", NULL, "binomial", "logit", FALSE, NULL),
       eta0 = .Call(gamgpu:::gg_session_fetch_r, s$ptr, "eta"))
}

test_that("a device session keeps no prior weights of 1 and defers h where asked, with the same results", {
  skip_if_no_device()
  set.seed(4)
  n <- 3e5                                  # an n-vector: a size class of its own
  X <- cbind(1, matrix(runif(n * 5), n))
  beta <- c(-0.3, 1, -1, 0.5, 0.2, -0.4)
  y <- rbinom(n, 1, plogis(drop(X %*% beta)))
  M <- crossprod(matrix(rnorm(36), 6))
  vec_bytes <- 8 * gamgpu:::arena_size_class(n)$elements
  gpu_arena_release()

  full <- row_state_session(X, y, unit = FALSE, defer_h = FALSE)
  used_full <- attr(gpu_arena(), "bytes_in_use")
  of <- row_state_ops(full, beta)
  hf <- .Call(gamgpu:::gg_session_leverage_r, full$ptr, rep(1, n), M)
  expect_identical(attr(gpu_arena(), "bytes_in_use"), used_full)
  full$close()
  expect_device_arena_empty()

  lean <- row_state_session(X, y, unit = TRUE, defer_h = TRUE)
  used_lean <- attr(gpu_arena(), "bytes_in_use")
  expect_identical(lean$info()$device, "cuda:0")
  # two n-vectors fewer: the weights and h
  expect_identical(used_full - used_lean, 2 * vec_bytes)
  ol <- row_state_ops(lean, beta)
  expect_identical(attr(gpu_arena(), "bytes_in_use"), used_lean)
  # h made at its first use
  hl <- .Call(gamgpu:::gg_session_leverage_r, lean$ptr, rep(1, n), M)
  expect_identical(attr(gpu_arena(), "bytes_in_use"), used_lean + vec_bytes)
  lean$close()
  expect_device_arena_empty()

  expect_identical(ol, of)
  expect_identical(hl, hf)
  expect_equal(hl, rowSums((X %*% M) * X), tolerance = 1e-12)
})
