# Model sessions (src/r/session_r.c): X loaded once into a fitting backend
# and kept there for the outer smoothing parameter iteration's products.
# Each operation against the same arithmetic in R, on the CPU backend and
# (where a GPU is usable) on the device, which must equal the CPU's.

session_data <- function(n = 3000, p = 7, seed = 11) {
  set.seed(seed)
  X <- cbind(1, matrix(runif(n * (p - 1)), n))
  beta <- c(-0.5, seq(-1, 1, length.out = p - 1))
  trials <- sample(1:4, n, TRUE)
  y <- rbinom(n, trials, plogis(drop(X %*% beta))) / trials
  list(X = X, y = y, w = as.double(trials), off = runif(n, -0.2, 0.2), n = n, p = p,
       beta = beta)
}

open_session <- function(d, mode = 0L, offset = d$off)
  test_session(d$X, d$y, d$w, offset, mode, nthreads = 2L)$ptr

session_ops <- function(s, d) {
  set.seed(5)
  v <- rnorm(d$n)                         # signed weights
  z <- rnorm(d$n)
  B <- matrix(rnorm(d$p * 3), d$p)
  V <- matrix(rnorm(d$n * 4), d$n)
  M <- crossprod(matrix(rnorm(d$p * d$p), d$p))
  list(gram = .Call(gamgpu:::gg_session_gram_r, s, v, z),
       xb = .Call(gamgpu:::gg_session_mul_r, s, B, FALSE),
       xtv = .Call(gamgpu:::gg_session_mul_r, s, V, TRUE),
       lev = .Call(gamgpu:::gg_session_leverage_r, s, abs(v), M),
       eval = .Call(gamgpu:::gg_session_eval_r, s, d$beta, "binomial", "probit", TRUE, NULL),
       eta = .Call(gamgpu:::gg_session_fetch_r, s, "eta"),
       mu = .Call(gamgpu:::gg_session_fetch_r, s, "mu"),
       start = .Call(gamgpu:::gg_session_eval_r, s, NULL, "binomial", "probit", FALSE, NULL),
       eta0 = .Call(gamgpu:::gg_session_fetch_r, s, "eta"),
       v = v, z = z, B = B, V = V, M = M)
}

test_that("a CPU session's products are R's", {
  d <- session_data()
  s <- open_session(d)
  on.exit(.Call(gamgpu:::gg_session_close_r, s))
  o <- session_ops(s, d)
  X <- d$X
  tol <- 1e-12
  expect_lt(rel_err(o$gram$XtWX, crossprod(X, o$v * X)), tol)
  expect_lt(rel_err(o$gram$XtWz, drop(crossprod(X, o$v * o$z))), tol)
  expect_lt(abs(o$gram$zWz / sum(o$v * o$z^2) - 1), tol)
  expect_lt(rel_err(o$xb, X %*% o$B), tol)
  expect_lt(rel_err(o$xtv, crossprod(X, o$V)), tol)
  expect_lt(rel_err(o$lev, abs(o$v) * rowSums((X %*% o$M) * X)), tol)
  # the penalized IRLS rows: eta with the offset, Fisher's weights
  fam <- binomial(link = "probit")
  eta <- drop(X %*% d$beta) + d$off
  mu <- fam$linkinv(eta)
  expect_lt(rel_err(o$eta, eta), tol)
  expect_lt(rel_err(o$mu, mu), tol)
  expect_lt(abs(o$eval$dev / sum(fam$dev.resids(d$y, mu, d$w)) - 1), tol)
  wf <- d$w * fam$mu.eta(eta)^2 / fam$variance(mu)
  zf <- eta - d$off + (d$y - mu) / fam$mu.eta(eta)
  expect_lt(rel_err(o$eval$XtWX, crossprod(X, wf * X)), tol)
  expect_lt(rel_err(o$eval$XtWz, drop(crossprod(X, wf * zf))), tol)
  # beta NULL: the family's start, family$initialize's mustart
  weights <- d$w
  y <- d$y
  nobs <- d$n
  mustart <- NULL
  eval(fam$initialize)
  expect_lt(rel_err(o$eta0, fam$linkfun(mustart)), tol)
  expect_identical(dim(o$start$XtWX), c(0L, 0L))
  info <- .Call(gamgpu:::gg_session_info_r, s)
  expect_identical(info$device, "cpu")
  expect_identical(info$fallback, "")
})

test_that("sessions refuse bad input and closed handles with classed errors", {
  d <- session_data(n = 200)
  expect_error(test_session(as.data.frame(d$X), d$y, d$w),
               class = "gamgpu_bad_input")
  expect_error(test_session(d$X, d$y[-1], d$w),
               class = "gamgpu_bad_input")
  s <- open_session(d, offset = NULL)
  expect_error(.Call(gamgpu:::gg_session_gram_r, s, 1, numeric(d$n)), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_mul_r, s, matrix(1, d$p + 1, 2), FALSE),
               class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_leverage_r, s, rep(1, d$n), diag(d$p + 1)),
               class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_fetch_r, s, "mu"), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_fetch_r, s, "w"), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_eval_r, s, NULL, "nosuch", "logit", TRUE, NULL),
               class = "gamgpu_error")
  expect_error(.Call(gamgpu:::gg_session_gram_r, gpu_policy(), 1, 1), class = "gamgpu_bad_input")
  .Call(gamgpu:::gg_session_close_r, s)
  .Call(gamgpu:::gg_session_close_r, s)                 # closing twice is fine
  expect_error(.Call(gamgpu:::gg_session_mul_r, s, diag(d$p), FALSE),
               class = "gamgpu_stale_pointer")
  # a handle that went through serialization is NULL inside
  s2 <- unserialize(serialize(open_session(d), NULL))
  expect_error(.Call(gamgpu:::gg_session_info_r, s2), class = "gamgpu_stale_pointer")
  gc()
})

test_that("a device session equals the CPU's, its kernels launch, and it leaves no memory", {
  skip_if_no_device()
  d <- session_data(n = 50000, p = 70)             # two tiles of columns
  sc <- open_session(d)
  oc <- session_ops(sc, d)
  .Call(gamgpu:::gg_session_close_r, sc)
  gpu_telemetry(reset = TRUE)
  sg <- open_session(d, mode = 2L)
  og <- session_ops(sg, d)
  info <- .Call(gamgpu:::gg_session_info_r, sg)
  .Call(gamgpu:::gg_session_close_r, sg)
  t <- gpu_telemetry()
  expect_identical(info$device, "cuda:0")
  expect_identical(info$backend, "cuda")
  expect_gt(sum(t$launches[t$backend == "engine"]), 10)
  expect_device_arena_empty()
  tol <- 1e-12
  for (nm in c("xb", "xtv", "lev", "eta", "mu", "eta0"))
    expect_lt(rel_err(og[[nm]], oc[[nm]]), tol, label = nm)
  expect_lt(rel_err(og$gram$XtWX, oc$gram$XtWX), tol)
  expect_lt(rel_err(og$gram$XtWz, oc$gram$XtWz), tol)
  expect_lt(rel_err(og$eval$XtWX, oc$eval$XtWX), tol)
  expect_lt(abs(og$eval$dev / oc$eval$dev - 1), tol)
})

test_that("a device fault in a session: 'auto' moves it to the CPU, 'required' is an error", {
  skip_if_no_device()
  d <- session_data(n = 20000)
  sc <- open_session(d)
  oc <- session_ops(sc, d)
  .Call(gamgpu:::gg_session_close_r, sc)
  on.exit(gamgpu:::gpu_inject_fault("none"), add = TRUE)
  for (at in c(1, 3, 9)) {
    gpu_arena_release()
    gamgpu:::gpu_inject_fault("launch", at)
    s <- open_session(d, mode = 1L)
    o <- session_ops(s, d)
    info <- .Call(gamgpu:::gg_session_info_r, s)
    .Call(gamgpu:::gg_session_close_r, s)
    expect_gt(gamgpu:::gpu_inject_fault("none"), 0)
    expect_identical(info$device, "cpu", label = paste("launch", at))
    expect_match(info$fallback, ".+")
    expect_lt(rel_err(o$xtv, oc$xtv), 1e-12)
    expect_lt(rel_err(o$mu, oc$mu), 1e-12)
    expect_lt(rel_err(o$eta0, oc$eta0), 1e-12)
    expect_device_arena_empty()
    gamgpu:::gpu_inject_fault("launch", at)
    s <- NULL
    expect_error({
      s <- open_session(d, mode = 2L)
      session_ops(s, d)
    }, class = "gamgpu_error")
    gamgpu:::gpu_inject_fault("none")
    if (!is.null(s)) .Call(gamgpu:::gg_session_close_r, s)
    expect_device_arena_empty()
  }
})

test_that("a fit in a session that served other work equals one in a fresh session; a closed one is refused", {
  d <- session_data()
  fit_on <- function(s)
    .Call(gamgpu:::gg_fit, s, "binomial", "probit", list(diag(d$p - 1)), 2L, NULL,
          log(0.5), list(nobs = d$n, scale = 1, beta_start = d$beta),
          unclass(gam_gpu_control()))
  s <- open_session(d)
  on.exit(.Call(gamgpu:::gg_session_close_r, s), add = TRUE)
  ops <- session_ops(s, d)                    # (the outer iteration's kind of work first)
  a <- fit_on(s)
  s2 <- open_session(d)
  b <- fit_on(s2)
  .Call(gamgpu:::gg_session_close_r, s2)
  # (only a session carries the data: X itself is refused)
  expect_error(fit_on(d$X), class = "gamgpu_bad_input")
  expect_identical(a$backend, "cpu")
  expect_identical(a$coefficients, b$coefficients)
  expect_identical(a$fitted.values, b$fitted.values)
  expect_identical(a$scalars[["reml"]], b$scalars[["reml"]])
  # (the session's backend counted the fit's passes only)
  expect_identical(a$counters, b$counters)
  .Call(gamgpu:::gg_session_close_r, s)
  expect_error(fit_on(s), class = "gamgpu_stale_pointer")
})
