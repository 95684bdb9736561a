# The rows a device session keeps (src/cuda/cuda_backend.c load()): no
# vector of prior weights when each is 1 (the kernels take 1), and in a
# lean session (a shards node's fREML) no previous eta -- a halving step
# makes eta from the halved coefficients --, the leverages' n-vector from
# its first use and no mu for a family that is not extended (made from eta
# when fetched).  Each saves 8 bytes a row of device memory; the
# results are the same to the bit as a session that keeps them, but for
# a halved eta, the same to rounding.

row_state_session <- function(X, y, unit, lean_rows) {
  gamgpu:::model_session(X, y, rep(1, length(y)), NULL, list(mode = 2L, ordinal = 0L),
                         list(nthreads = 2L), unit_weights = unit, lean_rows = lean_rows)
}

row_state_ops <- function(s, beta) {
  list(eval = s$op("eval", beta, "binomial", "logit", TRUE, NULL),
       mu = .Call(gamgpu:::gg_session_fetch_r, s$ptr, "mu"),
       start = s$op("eval", NULL, "binomial", "logit", FALSE, NULL),
       eta0 = .Call(gamgpu:::gg_session_fetch_r, s$ptr, "eta"))
}

test_that("a lean device session keeps four n-vectors fewer, with the same results", {
  skip_if_no_device()
  set.seed(4)
  n <- 3e5                                  # an n-vector: a size class of its own
  X <- cbind(1, matrix(runif(n * 5), n))
  beta <- c(-0.3, 1, -1, 0.5, 0.2, -0.4)
  y <- rbinom(n, 1, plogis(drop(X %*% beta)))
  M <- crossprod(matrix(rnorm(36), 6))
  vec_bytes <- 8 * gamgpu:::arena_size_class(n)$elements
  gpu_arena_release()

  full <- row_state_session(X, y, unit = FALSE, lean_rows = FALSE)
  used_full <- attr(gpu_arena(), "bytes_in_use")
  of <- row_state_ops(full, beta)
  hf <- .Call(gamgpu:::gg_session_leverage_r, full$ptr, rep(1, n), M)
  expect_identical(attr(gpu_arena(), "bytes_in_use"), used_full)
  full$close()
  expect_device_arena_empty()

  lean <- row_state_session(X, y, unit = TRUE, lean_rows = TRUE)
  used_lean <- attr(gpu_arena(), "bytes_in_use")
  expect_identical(lean$info()$device, "cuda:0")
  # four n-vectors fewer: the weights, h, the previous eta and mu
  expect_identical(used_full - used_lean, 4 * vec_bytes)
  # mu made from eta when fetched, chunk by chunk (no n-vector kept); h
  # at its first use
  ol <- row_state_ops(lean, beta)
  expect_identical(attr(gpu_arena(), "bytes_in_use"), used_lean)
  hl <- .Call(gamgpu:::gg_session_leverage_r, lean$ptr, rep(1, n), M)
  expect_identical(attr(gpu_arena(), "bytes_in_use"), used_lean + vec_bytes)
  lean$close()
  expect_device_arena_empty()

  expect_identical(ol, of)
  expect_identical(hl, hf)
  expect_equal(hl, rowSums((X %*% M) * X), tolerance = 1e-12)
})

node_op <- function(s, op, arg = NULL) .Call(gamgpu:::gg_node_op_r, s$ptr, op, arg, NULL)

test_that("a lean session's step halving is X b + offset at the engine's halved coefficients", {
  skip_if_no_device()
  set.seed(5)
  n <- 2e5
  X <- cbind(1, matrix(runif(n * 4), n))
  off <- runif(n, -0.1, 0.1)
  y <- rbinom(n, 1, 0.4)
  b1 <- c(0.1, -0.2, 0.3, 0.5, -1)
  b2 <- c(-0.7, 1.1, 0.2, -0.4, 0.9)
  b3 <- c(0.3, 0.3, -0.6, 0.1, 0.2)
  halved <- function(lean) {
    s <- gamgpu:::model_session(X, y, rep(1, n), off, list(mode = 2L, ordinal = 0L),
                                list(nthreads = 2L), unit_weights = TRUE, lean_rows = lean)
    on.exit(s$close())
    # the engine's sequence: X b1, keep, X b2, halve twice, then keep and
    # halve towards another step
    node_op(s, "xbeta", b1)
    node_op(s, "keep_eta")
    node_op(s, "xbeta", b2)
    node_op(s, "halve_eta")
    e1 <- node_op(s, "fetch", "eta")
    node_op(s, "halve_eta")
    e2 <- node_op(s, "fetch", "eta")
    node_op(s, "keep_eta")
    node_op(s, "xbeta", b3)
    node_op(s, "halve_eta")
    e3 <- node_op(s, "fetch", "eta")
    list(e1, e2, e3)
  }
  lean <- halved(TRUE)
  full <- halved(FALSE)
  expect_device_arena_empty()
  h1 <- (b1 + b2) / 2
  h2 <- (b1 + h1) / 2
  h3 <- (h2 + b3) / 2
  ref <- lapply(list(h1, h2, h3), function(b) drop(X %*% b) + off)
  for (k in 1:3) {
    expect_equal(lean[[k]], ref[[k]], tolerance = 1e-13, label = paste("lean halving", k))
    expect_equal(full[[k]], lean[[k]], tolerance = 1e-13, label = paste("averaged etas", k))
  }
  # keep before any X beta: an internal error, not a silent eta
  s <- gamgpu:::model_session(X, y, rep(1, n), off, list(mode = 2L, ordinal = 0L),
                              list(nthreads = 2L), unit_weights = TRUE, lean_rows = TRUE)
  expect_error(node_op(s, "keep_eta"), class = "gamgpu_internal_error")
  s$close()
  expect_device_arena_empty()
})
