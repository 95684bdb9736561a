# distinct_rows() (R/distinct_rows.R): mgcv::uniquecombs(x, TRUE) of a
# numeric matrix -- its rows, their order and its index -- from each
# column's distinct values, without pasting every row.

expect_uniquecombs <- function(x, threads = 1L, cores = 1L) {
  ref <- mgcv::uniquecombs(x, TRUE)
  got <- gamgpu:::distinct_rows(x, threads, cores)
  expect_identical(got, ref)
}

test_that("the distinct rows are uniquecombs()' to the bit", {
  set.seed(21)
  n <- 5000
  expect_uniquecombs(cbind(runif(n), rnorm(n)))
  # ties: repeated rows, repeated values within a column
  expect_uniquecombs(cbind(sample(10, n, TRUE) / 3, sample(7, n, TRUE) - 3))
  expect_uniquecombs(cbind(round(runif(n), 2), round(runif(n), 1), sample(3, n, TRUE) + 0.5),
                     threads = 2L)
})

test_that("texts that sort unlike their numbers sort as uniquecombs() sorts them", {
  # negatives, scientific notation, prefixes ("0.5" and "0.55"), 9 beside
  # 10, numbers that differ beyond 15 digits (one text, the first row's
  # numbers kept), signed zeros
  v <- c(-2.5, -0.5, -0.55, 0.5, 0.55, 9.5, 10.25, 1e-20, 1e-5, 1e5, 100000.1, 1e15,
         123456789012, 0.1 + 0.2, 0.3, -0, 0, 2^-30, -1e300, 7)
  set.seed(22)
  n <- 3000
  x <- cbind(sample(v, n, TRUE), sample(v, n, TRUE))
  expect_uniquecombs(x)
  expect_uniquecombs(x[, c(2, 1)])
  expect_uniquecombs(cbind(x, sample(c(1, 1 + 1e-16, 2), n, TRUE)))
})

test_that("numbers made text in forked workers give the same rows", {
  skip_on_os("windows")
  set.seed(23)
  n <- 2.2e5
  x <- cbind(runif(n), sample(c(0.25, 1e-7, -3), n, TRUE))
  expect_uniquecombs(x, threads = 2L, cores = 2L)
  expect_identical(gamgpu:::number_text(x[, 1], 2L), paste0(x[, 1]))
})
