# predict(se.fit = TRUE) on gam_gpu fits: the CPU twin against mgcv's
# predict.gam(), the device path against the CPU twin (with chunking, a
# device-memory failure and resource hygiene), and the requests that stay
# with predict.gam().

pred_data <- function(n, seed) {
  set.seed(seed)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$fac <- factor(sample(letters[1:3], n, TRUE))
  d$expo <- runif(n, 0.5, 2)
  d$yb <- rbinom(n, 1, binomial()$linkinv((d$f - mean(d$f)) / 3 + c(0, 0.4, -0.3)[d$fac]))
  d$yp <- rpois(n, exp((d$f - mean(d$f)) / 6 + log(d$expo)))
  d
}

pred_fits <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      d <- pred_data(3000, 11)
      cache <<- list(
        cr_tp = gam_gpu(y ~ s(x0, bs = "cr") + s(x1) + s(x2, x3), data = d, device = "off"),
        te_by_fac = gam_gpu(y ~ fac + te(x0, x1) + s(x2, by = fac, bs = "cr") + s(x3),
                            data = d, device = "off"),
        offset_pois = gam_gpu(yp ~ fac + s(x0) + s(x2, bs = "cr") + offset(log(expo)),
                              family = poisson, data = d, device = "off"),
        binom = gam_gpu(yb ~ fac + s(x0, bs = "cr") + te(x1, x2) + s(x3), family = binomial,
                        data = d, device = "off"))
    }
    cache
  }
})

pred_newdata <- function(n, seed, na_rows = integer(0)) {
  nd <- pred_data(n, seed)
  nd$x1[na_rows] <- NA
  nd
}

rel_na <- function(a, b) max(abs(a - b), na.rm = TRUE) / max(abs(b), na.rm = TRUE)

expect_same_prediction <- function(a, b, tol = 1e-12) {
  expect_named(a, c("fit", "se.fit"))
  expect_identical(attributes(a$fit), attributes(b$fit))
  expect_identical(attributes(a$se.fit), attributes(b$se.fit))
  expect_identical(is.na(a$fit), is.na(b$fit))
  expect_identical(is.na(a$se.fit), is.na(b$se.fit))
  expect_lt(rel_na(a$fit, b$fit), tol)
  expect_lt(rel_na(a$se.fit, b$se.fit), tol)
  expect_lt(max(abs(a$se.fit / b$se.fit - 1), na.rm = TRUE), 1e-10)
}

test_that("the CPU path equals mgcv's predict.gam (cr, tp, te, by factor, offset, binomial)", {
  nd <- pred_newdata(4000, 12, na_rows = c(3, 100))
  for (nm in names(pred_fits())) {
    fit <- pred_fits()[[nm]]
    for (type in c("link", "response")) {
      gpu_telemetry(reset = TRUE)
      a <- predict(fit, nd, type = type, se.fit = TRUE, device = "off")
      b <- mgcv::predict.gam(fit, nd, type = type, se.fit = TRUE)
      expect_same_prediction(a, b)
      t <- gpu_telemetry()
      expect_false("predict" %in% t$backend, label = nm)   # no device, no fallback
    }
  }
})

test_that("the CPU path follows predict.gam without newdata, with na.action and unconditional", {
  fit <- pred_fits()$te_by_fac
  expect_same_prediction(predict(fit, se.fit = TRUE, device = "off"),
                         mgcv::predict.gam(fit, se.fit = TRUE))
  expect_same_prediction(predict(fit, type = "response", se.fit = TRUE, device = "off"),
                         mgcv::predict.gam(fit, type = "response", se.fit = TRUE))
  nd <- pred_newdata(500, 13, na_rows = c(1, 7, 499))
  expect_same_prediction(predict(fit, nd, se.fit = TRUE, na.action = na.omit, device = "off"),
                         mgcv::predict.gam(fit, nd, se.fit = TRUE, na.action = na.omit))
  expect_same_prediction(predict(fit, nd, se.fit = TRUE, na.action = na.exclude, device = "off"),
                         mgcv::predict.gam(fit, nd, se.fit = TRUE, na.action = na.exclude))
  expect_same_prediction(predict(fit, nd, se.fit = TRUE, unconditional = TRUE, device = "off"),
                         mgcv::predict.gam(fit, nd, se.fit = TRUE, unconditional = TRUE))
  # a factor given as character, with a subset of the levels
  nd2 <- nd[nd$fac != "b", ]
  nd2$fac <- as.character(nd2$fac)
  expect_same_prediction(predict(fit, nd2, se.fit = TRUE, device = "off"),
                         mgcv::predict.gam(fit, nd2, se.fit = TRUE))
  # a level the fit never saw: whatever predict.gam does (here: its
  # warning, then its error), once
  nd3 <- nd[1:50, ]
  nd3$fac <- as.character(nd3$fac)
  nd3$fac[2] <- "zz"
  catch <- function(expr) tryCatch(expr, error = function(e) conditionMessage(e))
  expect_warning(a <- catch(predict(fit, nd3, se.fit = TRUE, device = "off")),
                 "not in original fit")
  expect_warning(b <- catch(mgcv::predict.gam(fit, nd3, se.fit = TRUE)), "not in original fit")
  expect_identical(a, b)
})

test_that("the CPU twin is the kernels' arithmetic, independent of threads", {
  set.seed(5)
  n <- 5003
  p <- 17
  X <- matrix(rnorm(n * p), n)
  beta <- rnorm(p)
  A <- matrix(rnorm(p * p), p)
  V <- crossprod(A)
  r1 <- gamgpu:::predict_rows_c(X, beta, V, "off", threads = 1L)
  r3 <- gamgpu:::predict_rows_c(X, beta, V, "off", threads = 3L)
  expect_identical(r1, r3)
  expect_identical(r1$backend, "cpu")
  # row i in the kernel's order: sum_j x_ij (sum_k V[k, j] x_ik)
  i <- 4242
  s <- 0
  for (j in 1:p) {
    t <- 0
    for (k in 1:p) t <- t + V[k, j] * X[i, k]
    s <- s + X[i, j] * t
  }
  f <- 0
  for (j in 1:p) f <- f + X[i, j] * beta[j]
  expect_identical(r1$se.fit[i], sqrt(s))
  expect_identical(r1$fit[i], f)
  expect_lt(rel_err(r1$se.fit, sqrt(rowSums((X %*% V) * X))), 1e-13)
})

test_that("requests outside the gamgpu path are mgcv's predict.gam", {
  fit <- pred_fits()$te_by_fac
  nd <- pred_newdata(300, 14)
  gpu_telemetry(reset = TRUE)
  for (dev in c("off", "auto")) {
    expect_identical(predict(fit, nd, device = dev), mgcv::predict.gam(fit, nd))
    expect_identical(predict(fit, nd, type = "terms", se.fit = TRUE, device = dev),
                     mgcv::predict.gam(fit, nd, type = "terms", se.fit = TRUE))
    expect_identical(predict(fit, nd, type = "lpmatrix", device = dev),
                     mgcv::predict.gam(fit, nd, type = "lpmatrix"))
    expect_identical(predict(fit, nd, se.fit = TRUE, exclude = "s(x3)", device = dev),
                     mgcv::predict.gam(fit, nd, se.fit = TRUE, exclude = "s(x3)"))
  }
  # none of these is a device fallback
  t <- gpu_telemetry()
  expect_false("predict" %in% t$backend)
})

test_that("'auto' below gamgpu.predict_min_rows runs predict.gam and counts the fallback", {
  fit <- pred_fits()$binom
  nd <- pred_newdata(200, 15)
  gpu_telemetry(reset = TRUE)
  a <- predict(fit, nd, type = "response", se.fit = TRUE, device = "auto")
  expect_identical(a, mgcv::predict.gam(fit, nd, type = "response", se.fit = TRUE))
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "predict"], 1)
  expect_match(attr(t, "fallback_reasons")$reason, "gamgpu.predict_min_rows", all = FALSE)
  # a structural case under "auto": counted, with its reason
  gpu_telemetry(reset = TRUE)
  expect_identical(predict(fit, nd, se.fit = TRUE, newdata.guaranteed = TRUE, device = "auto"),
                   mgcv::predict.gam(fit, nd, se.fit = TRUE, newdata.guaranteed = TRUE))
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "predict"], 1)
})

test_that("bad predict input is a classed error", {
  fit <- pred_fits()$cr_tp
  nd <- pred_newdata(20, 16)
  expect_error(predict(fit, nd, se.fit = TRUE, device = "gpu"), class = "gamgpu_bad_policy")
  expect_error(predict(fit, nd, se.fit = "yes", device = "off"), class = "gamgpu_bad_input")
  expect_error(predict(fit, nd, se.fit = NA, device = "off"), class = "gamgpu_bad_input")
  expect_error(predict(fit, as.matrix(nd), se.fit = TRUE, device = "off"),
               class = "gamgpu_bad_input")
  expect_error(predict(fit, nd, se.fit = TRUE, unconditional = NA, device = "off"),
               class = "gamgpu_bad_input")
  local_gg_options(gamgpu.predict_min_rows = -1)
  expect_error(predict(fit, nd, se.fit = TRUE, device = "auto"), class = "gamgpu_bad_input")
  options(gamgpu.predict_min_rows = NULL, gamgpu.predict_chunk_rows = "many")
  expect_error(predict(fit, nd, se.fit = TRUE, device = "off"), class = "gamgpu_bad_input")
  options(gamgpu.predict_chunk_rows = NULL)
  expect_error(predict(fit, nd, se.fit = TRUE, newdata.guaranteed = TRUE, device = "required"),
               class = "gamgpu_unsupported_predict")
  X <- matrix(1, 3, 2)
  expect_error(gamgpu:::predict_rows_c(X, 1, diag(2)), class = "gamgpu_bad_input")
  expect_error(gamgpu:::predict_rows_c(X, c(1, 1), diag(3)), class = "gamgpu_bad_input")
  expect_error(gamgpu:::predict_rows_c(matrix(1L, 3, 2), c(1, 1), diag(2)),
               class = "gamgpu_bad_input")
})

test_that("'required' without a usable device is gamgpu_device_unavailable", {
  skip_if(device_usable(), "a GPU is usable here")
  fit <- pred_fits()$cr_tp
  expect_error(predict(fit, pred_newdata(50, 17), se.fit = TRUE, device = "required"),
               class = "gamgpu_device_unavailable")
})

test_that("'auto' on large newdata without a device computes on the CPU and counts it", {
  skip_if(device_usable(), "a GPU is usable here")
  fit <- pred_fits()$binom
  nd <- pred_newdata(500, 18)
  local_gg_options(gamgpu.predict_min_rows = 100)
  gpu_telemetry(reset = TRUE)
  a <- predict(fit, nd, type = "response", se.fit = TRUE, device = "auto")
  expect_same_prediction(a, mgcv::predict.gam(fit, nd, type = "response", se.fit = TRUE))
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "predict"], 1)
})

## ---- the device path ------------------------------------------------------

test_that("device predictions equal the CPU twin's to 1e-12", {
  skip_if_no_device()
  nd <- pred_newdata(30000, 19, na_rows = c(2, 29999))
  for (nm in names(pred_fits())) {
    fit <- pred_fits()[[nm]]
    for (type in c("link", "response")) {
      gpu_telemetry(reset = TRUE)
      d <- predict(fit, nd, type = type, se.fit = TRUE, device = "required")
      t <- gpu_telemetry()
      expect_equal(t$launches[t$backend == "predict"], 2, label = nm)
      expect_gt(t$h2d_bytes[t$backend == "predict"], 0)
      expect_equal(t$fallbacks[t$backend == "predict"], 0)
      expect_device_arena_empty()
      expect_same_prediction(d, predict(fit, nd, type = type, se.fit = TRUE, device = "off"))
      expect_same_prediction(d, mgcv::predict.gam(fit, nd, type = type, se.fit = TRUE))
    }
  }
  # "auto" above the threshold runs on the device; the default threshold is 1e4
  fit <- pred_fits()$binom
  gpu_telemetry(reset = TRUE)
  a <- predict(fit, nd, type = "response", se.fit = TRUE, device = "auto")
  t <- gpu_telemetry()
  expect_equal(t$launches[t$backend == "predict"], 2)
  expect_equal(t$fallbacks[t$backend == "predict"], 0)
  # without newdata: the fit's own rows
  gpu_telemetry(reset = TRUE)
  expect_same_prediction(predict(fit, se.fit = TRUE, device = "required"),
                         predict(fit, se.fit = TRUE, device = "off"))
  t <- gpu_telemetry()
  expect_gt(t$launches[t$backend == "predict"], 0)
  expect_device_arena_empty()
})

test_that("device predictions in row chunks equal the unchunked ones", {
  skip_if_no_device()
  fit <- pred_fits()$te_by_fac
  nd <- pred_newdata(25001, 20, na_rows = 5)
  whole <- predict(fit, nd, se.fit = TRUE, device = "required")
  local_gg_options(gamgpu.predict_chunk_rows = 1000)
  gpu_telemetry(reset = TRUE)
  chunked <- predict(fit, nd, se.fit = TRUE, device = "required")
  t <- gpu_telemetry()
  expect_equal(t$launches[t$backend == "predict"], 2 * 25)   # 25000 rows left, 25 chunks
  expect_equal(t$fallbacks[t$backend == "predict"], 0)
  expect_identical(chunked, whole)
  expect_same_prediction(chunked, predict(fit, nd, se.fit = TRUE, device = "off"))
  expect_device_arena_empty()
  # an odd chunk (not a divisor, smaller than a block of threads)
  options(gamgpu.predict_chunk_rows = 77)
  expect_identical(predict(fit, nd, se.fit = TRUE, device = "required"), whole)
  expect_device_arena_empty()
})

test_that("chunks shrink to fit the device memory cap", {
  skip_if_no_device()
  set.seed(21)
  n <- 300000
  p <- 30
  X <- matrix(rnorm(n * p), n)          # 128 MiB as one buffer
  beta <- rnorm(p)
  V <- crossprod(matrix(rnorm(p * p), p)) / p
  cpu <- gamgpu:::predict_rows_c(X, beta, V, "off")
  gpu_arena_release()
  local_gg_options(gamgpu.device_memory = "64MB")
  gpu_telemetry(reset = TRUE)
  dev <- gamgpu:::predict_rows_c(X, beta, V, "required")
  expect_identical(dev$backend, "cuda:0")
  expect_lt(rel_err(dev$fit, cpu$fit), 1e-12)
  expect_lt(rel_err(dev$se.fit, cpu$se.fit), 1e-12)
  t <- gpu_telemetry()
  expect_gt(t$launches[t$backend == "predict"], 2)       # streamed in several chunks
  expect_device_arena_empty()
})

test_that("a device failure returns every buffer; 'required' errors, 'auto' falls back", {
  skip_if_no_device()
  fit <- pred_fits()$te_by_fac
  nd <- pred_newdata(20000, 22)
  cpu <- predict(fit, nd, se.fit = TRUE, device = "off")
  gpu_arena_release()
  local_gg_options(gamgpu.device_memory = "1KB")   # beta fits, V does not
  gpu_telemetry(reset = TRUE)
  expect_error(predict(fit, nd, se.fit = TRUE, device = "required"), class = "gamgpu_device_oom")
  expect_device_arena_empty()
  a <- predict(fit, nd, se.fit = TRUE, device = "auto")
  expect_same_prediction(a, cpu)
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "predict"], 1)
  expect_match(attr(t, "fallback_reasons")$reason, "budget", all = FALSE)
  expect_device_arena_empty()
  options(gamgpu.device_memory = NULL)
  gpu_telemetry(reset = TRUE)
  expect_same_prediction(predict(fit, nd, se.fit = TRUE, device = "required"), cpu)
  t <- gpu_telemetry()
  expect_equal(t$fallbacks[t$backend == "predict"], 0)
})
