# Bad input gives classed R errors (all inheriting "gamgpu_error"), never a
# crash; non-convergence gives a classed warning naming the iteration count.
set.seed(5)
d <- data.frame(x = runif(300), z = runif(300))
d$y <- sin(3 * d$x) + rnorm(300, 0, 0.3)
d$yb <- rbinom(300, 1, 0.4)
d$yp <- rpois(300, 2)
d$yg <- rgamma(300, 2)

test_that("no rows left after NA handling", {
  dn <- d; dn$x <- NA
  expect_error(gam_gpu(y ~ s(x), data = dn), class = "gamgpu_no_data")
  expect_error(gam_gpu(y ~ s(x), data = dn), class = "gamgpu_error")
  expect_error(gam_gpu(y ~ s(x), data = d, subset = x > 2), class = "gamgpu_no_data")
})

test_that("responses outside the family's support", {
  db <- d; db$yb[1] <- 2
  expect_error(gam_gpu(yb ~ s(x), family = binomial, data = db), class = "gamgpu_bad_response")
  db$yb[1] <- -1
  expect_error(gam_gpu(yb ~ s(x), family = binomial, data = db), class = "gamgpu_bad_response")
  dp <- d; dp$yp[3] <- -1
  expect_error(gam_gpu(yp ~ s(x), family = poisson, data = dp), class = "gamgpu_bad_response")
  dg <- d; dg$yg[2] <- 0
  expect_error(gam_gpu(yg ~ s(x), family = Gamma(link = "log"), data = dg),
               class = "gamgpu_bad_response")
  dg$yg[2] <- -3
  expect_error(gam_gpu(yg ~ s(x), family = inverse.gaussian, data = dg),
               class = "gamgpu_bad_response")
  di <- d; di$y[4] <- Inf
  expect_error(gam_gpu(y ~ s(x), data = di), class = "gamgpu_bad_response")
})

test_that("non-finite or negative weights", {
  w <- rep(1, 300); w[5] <- -1
  expect_error(gam_gpu(y ~ s(x), data = d, weights = w), class = "gamgpu_bad_weights")
  w[5] <- Inf
  expect_error(gam_gpu(y ~ s(x), data = d, weights = w), class = "gamgpu_bad_weights")
  expect_error(gam_gpu(y ~ s(x), data = d, weights = rep(0, 300)),
               class = "gamgpu_bad_weights")
})

test_that("a non-finite offset", {
  expect_error(gam_gpu(y ~ s(x), data = d, offset = c(Inf, rep(0, 299))),
               class = "gamgpu_bad_input")
  expect_error(gam_gpu(y ~ s(x) + offset(o), data = transform(d, o = c(rep(0, 299), -Inf))),
               class = "gamgpu_bad_input")
})

test_that("the row checks find a bad value in any thread's range of rows", {
  n <- 300000
  set.seed(9)
  y <- rnorm(n); w <- runif(n); o <- numeric(n)
  for (th in c(1L, 4L)) {
    ok <- .Call(gamgpu:::gg_check_rows_r, y, w, o, th)
    expect_identical(ok, c(w_bad = 0, w_positive = 1, w_not_one = 1, y_bad = 0, o_nonzero = 0,
                           o_bad = 0, y_min = min(y), y_max = max(y)))
    # unit weights are seen as such, and one weight off 1 in any thread's rows is seen
    ones <- rep(1, n)
    expect_identical(.Call(gamgpu:::gg_check_rows_r, y, ones, NULL, th)[["w_not_one"]], 0)
    for (i in c(1, 150001, n)) {
      w1 <- ones; w1[i] <- 1 + 2^-52
      expect_identical(.Call(gamgpu:::gg_check_rows_r, y, w1, NULL, th)[["w_not_one"]], 1)
    }
    for (i in c(1, 150001, n)) {
      yb <- y; yb[i] <- NaN
      wb <- w; wb[i] <- -0.5
      ob <- o; ob[i] <- Inf
      r <- .Call(gamgpu:::gg_check_rows_r, yb, wb, ob, th)
      expect_identical(r[c("w_bad", "y_bad", "o_nonzero", "o_bad")],
                       c(w_bad = 1, y_bad = 1, o_nonzero = 1, o_bad = 1))
      expect_identical(r[c("y_min", "y_max")], c(y_min = min(yb, na.rm = TRUE),
                                                 y_max = max(yb, na.rm = TRUE)))
    }
  }
  expect_identical(.Call(gamgpu:::gg_check_rows_r, c(NA_real_, Inf), c(0, 0), NULL, 2L),
                   c(w_bad = 0, w_positive = 0, w_not_one = 1, y_bad = 1, o_nonzero = 0,
                     o_bad = 0, y_min = NA_real_, y_max = NA_real_))
  expect_error(.Call(gamgpu:::gg_check_rows_r, 1:3, c(1, 1, 1), NULL, 1L),
               class = "gamgpu_bad_input")
})

test_that("a formula naming a variable not in data", {
  expect_error(gam_gpu(y ~ s(x) + s(nosuchvar), data = d), class = "gamgpu_unknown_variable")
  expect_error(gam_gpu(y ~ s(x) + s(nosuchvar), data = d), "nosuchvar")
  expect_error(gam_gpu(nosuchy ~ s(x), data = d), class = "gamgpu_unknown_variable")
})

test_that("more coefficients than rows", {
  small <- d[1:8, ]
  # (bam()'s error, without a word of another setup: gam(fit = FALSE)
  # would set the model up and leave the count to its fit)
  msgs <- character(0)
  withCallingHandlers(
    expect_error(gam_gpu(y ~ s(x, k = 20), data = small), class = "gamgpu_too_many_coefficients"),
    message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    })
  expect_length(msgs, 0)
  tiny <- data.frame(y = rnorm(5), a = rnorm(5), b = rnorm(5), c = rnorm(5),
                     e = rnorm(5), f = rnorm(5))
  expect_error(gam_gpu(y ~ a + b + c + e + f + I(a^2), data = tiny),
               class = "gamgpu_too_many_coefficients")
})

test_that("an sp of the wrong length", {
  expect_error(gam_gpu(y ~ s(x) + s(z), data = d, sp = c(1, 2, 3)), class = "gamgpu_bad_sp")
  expect_error(gam_gpu(y ~ s(x) + s(z), data = d, sp = 1), class = "gamgpu_bad_sp")
  expect_error(gam_gpu(y ~ s(x), data = d, sp = NA), class = "gamgpu_bad_sp")
})

test_that("unknown families and links", {
  expect_error(gam_gpu(y ~ s(x), family = "nosuchfamily", data = d), class = "gamgpu_bad_family")
  expect_error(gam_gpu(y ~ s(x), family = stats::quasi(), data = d), class = "gamgpu_bad_family")
  expect_error(gam_gpu(y ~ s(x), family = 42, data = d), class = "gamgpu_bad_family")
  expect_error(gam_gpu(yb ~ s(x), family = binomial(link = "nolink"), data = d),
               class = "gamgpu_bad_family")
  expect_error(gam_gpu(y ~ s(x), family = gaussian(link = power(1/3)), data = d),
               class = "gamgpu_bad_link")
  expect_error(gam_gpu(yb ~ s(x), family = binomial(link = "logit"), data = d,
                       method = "GCV"), class = "gamgpu_bad_method")
})

test_that("bad control values", {
  expect_error(gam_gpu_control(maxit = -1), class = "gamgpu_bad_control")
  expect_error(gam_gpu_control(trace = "yes"), class = "gamgpu_bad_control")
})

test_that("no valid starting values is an error, not a crash", {
  dz <- d; dz$y[1] <- 0
  expect_error(gam_gpu(y ~ s(x), family = gaussian(link = "log"), data = dz),
               class = "gamgpu_bad_start")
})

test_that("stopping at the iteration limit warns with the count", {
  expect_warning(gam_gpu(yb ~ s(x), family = binomial, data = d,
                         control = gam_gpu_control(maxit = 2)),
                 class = "gamgpu_not_converged")
  expect_warning(gam_gpu(yb ~ s(x), family = binomial, data = d,
                         control = gam_gpu_control(maxit = 2)),
                 "2 iterations")
  w <- tryCatch(gam_gpu(yb ~ s(x), family = binomial, data = d,
                        control = gam_gpu_control(maxit = 2)),
                warning = function(w) w)
  expect_s3_class(w, "gamgpu_warning")
  expect_warning(gam_gpu(y ~ s(x) + s(z), data = d,
                         control = gam_gpu_control(newton.maxit = 1)),
                 class = "gamgpu_not_converged")
})

test_that("the C entry point rejects malformed input with classed errors", {
  X <- matrix(1, 10, 2)
  expect_error(.Call(gamgpu:::gg_session_open_r, X, 1:10, rep(1, 10), NULL, list(), list()),
               class = "gamgpu_bad_input")
  ses <- .Call(gamgpu:::gg_session_open_r, X, rnorm(10), rep(1, 10), NULL, list(), list())
  on.exit(.Call(gamgpu:::gg_session_close_r, ses))
  expect_error(.Call(gamgpu:::gg_fit, ses, "gaussian", "identity", list(diag(3)), 1L, NULL, 0,
                     list(), list()),
               class = "gamgpu_bad_input")
  # the load and control settings
  expect_error(.Call(gamgpu:::gg_session_open_r, X, rnorm(10), rep(1, 10), NULL,
                     list(ar_rho = 1), list()), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_open_r, X, rnorm(10), rep(1, 10), NULL,
                     list(ar_rho = 0.5, ar_start = 1), list()), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_open_r, X, rnorm(10), rep(1, 10), NULL,
                     list(), list(block.rows = -1)), class = "gamgpu_bad_control")
  expect_error(.Call(gamgpu:::gg_session_open_r, X, rnorm(10), rep(1, 10), NULL, 1, list()),
               class = "gamgpu_bad_input")
})
