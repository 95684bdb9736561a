# A cluster node's passes over its rows in C, without an n-vector: the
# response's moments when a shard opens and r.sq's sums at the end
# (src/setup/shard_sums.c), a column's extremes and their first rows when
# it loads -- each equal to the bit to R's expressions for them.

test_that("a shard's response sums are R's sum() and mean() to the bit", {
  set.seed(8)
  for (n in c(0, 1, 7, 10001)) {
    y <- rnorm(n, 3, 2)
    w <- runif(n) * (runif(n) > 0.2)
    r_sums <- c(rows = length(y), sy = sum(y), syy = sum((y - mean(y))^2), swy = sum(w * y),
                sw = sum(w), nonzero = sum(w != 0))
    expect_identical(.Call(gamgpu:::gg_response_sums_r, y, w), r_sums, label = paste("n =", n))
  }
  # a constant response far from 0: the mean's correcting pass matters
  y <- rep(1e8 + 0.1, 999)
  w <- rep(1, 999)
  expect_identical(.Call(gamgpu:::gg_response_sums_r, y, w)[["syy"]], sum((y - mean(y))^2))
  expect_error(.Call(gamgpu:::gg_response_sums_r, 1:3, c(1, 1, 1)), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_response_sums_r, c(1, 2), 1), class = "gamgpu_bad_input")
})

test_that("a shard's r.sq sums are R's to the bit", {
  set.seed(9)
  for (n in c(0, 3, 20000)) {
    y <- rpois(n, 4) + 0
    mu <- runif(n, 1, 6)
    w <- runif(n, 0, 2)
    sw <- sqrt(w)
    v1 <- sw * (y - mu)
    v2 <- sw * (y - 3.7)
    expect_identical(.Call(gamgpu:::gg_rsq_sums_r, y, mu, w, 3.7),
                     c(length(v1), sum(v1), sum(v1^2), sum(v2), sum(v2^2)),
                     label = paste("n =", n))
  }
  expect_error(.Call(gamgpu:::gg_rsq_sums_r, c(1, 2), 1, c(1, 1), 0), class = "gamgpu_bad_input")
})

test_that("NULL prior weights are ones to the bit in a shard's checks and sums", {
  set.seed(10)
  y <- rnorm(5001, 2)
  mu <- y + rnorm(5001) / 3
  ones <- rep(1, length(y))
  expect_identical(.Call(gamgpu:::gg_response_sums_r, y, NULL),
                   .Call(gamgpu:::gg_response_sums_r, y, ones))
  expect_identical(.Call(gamgpu:::gg_rsq_sums_r, y, mu, NULL, 1.5),
                   .Call(gamgpu:::gg_rsq_sums_r, y, mu, ones, 1.5))
  for (th in c(1L, 3L))
    expect_identical(.Call(gamgpu:::gg_check_rows_r, y, NULL, NULL, th),
                     .Call(gamgpu:::gg_check_rows_r, y, ones, NULL, th))
  expect_identical(.Call(gamgpu:::gg_check_rows_r, y, NULL, NULL, 1L)[["w_not_one"]], 0)
  expect_error(.Call(gamgpu:::gg_rsq_sums_r, y, mu, 1, 0), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_check_rows_r, y, "1", NULL, 1L), class = "gamgpu_bad_input")
})

test_that("a model session without prior weights is refused unless its device is required", {
  X <- cbind(1, seq(0, 1, length.out = 50))
  y <- rnorm(50)
  ctl <- list(nthreads = 1L)
  for (load in list(list(device_mode = 0L, unit_weights = 1L),
                    list(device_mode = 1L, unit_weights = 1L),
                    list(device_mode = 2L, unit_weights = 0L)))
    expect_error(.Call(gamgpu:::gg_session_open_r, X, y, NULL, NULL, load, ctl),
                 class = "gamgpu_bad_input")
})

test_that("a loaded column's summary is min(), max() and their first rows", {
  summ <- gamgpu:::shard_column_summary
  r_summ <- function(x) {
    lo <- min(x)
    hi <- max(x)
    list(type = "numeric", min = lo, max = hi, imin = which(x == lo)[1L],
         imax = which(x == hi)[1L], matrix = FALSE)
  }
  set.seed(2)
  for (x in list(runif(1e5), c(3, 1, 1, 5, 5), c(0, -0, 2), c(-0, 0), 7, c(2, Inf, -Inf, Inf),
                 round(rnorm(5e4)), c(NA, 1, 3), c(NaN, 2)))
    expect_identical(summ(x), r_summ(x), label = paste(head(x, 3), collapse = " "))
  expect_identical(summ(c(4L, 2L, 2L)), r_summ(c(4L, 2L, 2L)))
})
