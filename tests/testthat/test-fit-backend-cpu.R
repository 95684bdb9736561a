# The CPU backend's operations (backend.h) against plain R, with row blocks
# of 7 rows so that the chunking is exercised; the same entry point is the
# oracle a GPU backend is checked against.
test_that("xbeta, row state, gram, leverage and fetch are right", {
  set.seed(9)
  n <- 103; p <- 5
  X <- cbind(1, matrix(rnorm(n * (p - 1)), n))
  beta <- rnorm(p, 0, 0.3)
  off <- runif(n, -0.2, 0.2)
  y <- rpois(n, 2) + 0
  pw <- runif(n, 0.5, 2); pw[3] <- 0
  M <- crossprod(matrix(rnorm(p * p), p)) / 10
  r <- .Call(gamgpu:::gg_backend_check, X, y, pw, off, "poisson", "log", beta, M)
  fam <- poisson()
  eta <- drop(X %*% beta) + off
  mu <- fam$linkinv(eta)
  w <- pw * fam$mu.eta(eta)^2 / fam$variance(mu)
  z <- eta - off + (y - mu) / fam$mu.eta(eta)
  z[pw == 0] <- 0
  expect_equal(r$eta, eta, tolerance = 1e-14)
  expect_equal(r$mu, mu, tolerance = 1e-14)
  expect_equal(r$w, w, tolerance = 1e-13)
  expect_equal(r$z, z, tolerance = 1e-13)
  expect_equal(r$deviance, sum(fam$dev.resids(y, mu, pw)), tolerance = 1e-13)
  expect_equal(r$A, crossprod(X, w * X), tolerance = 1e-13)
  expect_equal(r$b, drop(crossprod(X, w * z)), tolerance = 1e-13)
  expect_equal(r$zwz, sum(w * z^2), tolerance = 1e-13)
  expect_equal(r$h, w * rowSums((X %*% M) * X), tolerance = 1e-13)
  r0 <- .Call(gamgpu:::gg_backend_check, X, y, pw, NULL, "poisson", "log", beta, M)
  expect_equal(r0$eta, drop(X %*% beta), tolerance = 1e-14)
})
