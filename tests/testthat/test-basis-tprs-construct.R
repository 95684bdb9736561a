# mgcv's thin plate construction from knots in gamgpu's C
# (src/basis/tprs_construct.c): E, its Lanczos eigen-decomposition, T'U's
# null space, UZ and the penalty, against smooth.construct.tp's own, which
# scales each column to unit root mean square over its rows (so columns
# are compared up to that scale).

construct <- function(Xu, m, k, threads)
  .Call(gamgpu:::gg_tprs_construct_r, Xu, as.integer(m), as.integer(k), as.integer(threads))

# mgcv's object on the knots themselves (no more rows than max.knots: its
# knots are the data's distinct values), and gamgpu's construction on its
# Xu; the column scales c that map gamgpu's UZ onto mgcv's.
tprs_pair <- function(spec, dat, threads) {
  sm <- mgcv::smooth.construct(spec, dat, NULL)
  m <- spec$p.order
  m[is.na(m)] <- 0
  r <- construct(sm$Xu, m[1], sm$bs.dim, threads)
  sc <- colSums(sm$UZ * r$UZ) / colSums(r$UZ^2)
  list(sm = sm, r = r, sc = sc)
}

rel <- function(a, b) max(abs(a - b)) / max(abs(b))

# The construction's agreement with mgcv's: its one-thread Lanczos calls
# R's BLAS dsymv as mgcv does (bitwise); with threads, its own products,
# which under the reference BLAS keep dsymv's order, and under another
# BLAS (OpenBLAS on the GPU machine) differ by rounding that the
# iteration carries into U and S (measured to 4.2e-11 of the largest).
construct_tol <- function(threads, tight) if (threads == 1L || reference_blas()) tight else 1e-10

test_that("the construction from knots is mgcv's, column scales apart", {
  set.seed(2)
  n <- 600
  d <- data.frame(x = runif(n), z = runif(n), w = rnorm(n))
  for (spec in list(mgcv::s(x), mgcv::s(x, k = 20), mgcv::s(x, m = 3), mgcv::s(x, z),
                    mgcv::s(x, z, k = 50), mgcv::s(x, z, m = 3, k = 25),
                    mgcv::s(x, z, w, k = 40))) {
    for (threads in 1:2) {
      p <- tprs_pair(spec, d, threads)
      label <- paste(spec$label, "k", p$sm$bs.dim, "threads", threads)
      expect_identical(dim(p$r$UZ), dim(p$sm$UZ), label = label)
      expect_lt(rel(p$r$UZ * rep(p$sc, each = nrow(p$r$UZ)), p$sm$UZ),
                construct_tol(threads, 1e-12), label = label)
      S <- (p$r$S + t(p$r$S)) / 2 * outer(p$sc, p$sc)
      expect_lt(rel(S, p$sm$S[[1]]), construct_tol(threads, 1e-12), label = label)
      # the null space: the last M columns, the identity on the
      # polynomials' rows, and no penalty
      M <- p$sm$null.space.dim
      k <- p$sm$bs.dim
      nk <- nrow(p$sm$Xu)
      expect_identical(p$r$UZ[nk + seq_len(M), k - M + seq_len(M)], diag(M), label = label)
      expect_true(all(p$r$UZ[seq_len(nk), k - M + seq_len(M)] == 0), label = label)
      expect_true(all(p$r$S[, k - M + seq_len(M)] == 0), label = label)
      expect_identical(length(p$r$ev), as.integer(k))
    }
  }
})

test_that("threads split E's products, not the result", {
  set.seed(3)
  Xu <- cbind(sort(runif(900)))
  a <- construct(Xu, 0, 12, 1)
  b <- construct(Xu, 0, 12, 2)
  expect_lt(rel(b$UZ, a$UZ), construct_tol(2L, 1e-13))
  expect_lt(rel(b$S, a$S), construct_tol(2L, 1e-12))
  expect_lt(rel(b$ev, a$ev), construct_tol(2L, 1e-13))
})

test_that("a gam() thin plate basis on more rows than max.knots is built from the knots in C", {
  set.seed(5)
  n <- 2600
  d <- data.frame(x = runif(n), z = runif(n))
  calls <- new.env()
  calls$n <- 0L
  trace(gamgpu:::tprs_from_knots, bquote(assign("n", get("n", .(calls)) + 1L, envir = .(calls))), print = FALSE,
        where = asNamespace("gamgpu"))
  on.exit(untrace(gamgpu:::tprs_from_knots, where = asNamespace("gamgpu")))
  for (spec in list(mgcv::s(x), mgcv::s(x, z, k = 20))) {
    sm <- gamgpu:::tprs_stand_in(spec, d, NULL, 2L)
    expect_s3_class(sm, "tprs.smooth")
    kd <- gamgpu:::tprs_knot_data(spec, d, NULL, 2L)
    ref <- mgcv::smooth.construct(spec, kd$data, kd$knots)
    expect_identical(sm$Xu, ref$Xu)
    expect_identical(sm$shift, ref$shift)
    nm <- setdiff(names(ref), c("X", "UZ", "S"))
    expect_identical(sm[nm], ref[nm])
    sc <- colSums(ref$UZ * sm$UZ) / colSums(sm$UZ^2)
    expect_lt(rel(sm$UZ * rep(sc, each = nrow(sm$UZ)), ref$UZ), construct_tol(2L, 1e-12))
  }
  expect_identical(calls$n, 2L)
  # a basis as large as its knots: mgcv's own construction on stand-ins
  spec <- mgcv::s(x, k = 50, xt = list(max.knots = 50))
  kd <- gamgpu:::tprs_knot_data(spec, d, NULL, 1L)
  expect_null(gamgpu:::tprs_from_knots(spec, kd, 1L))
  expect_s3_class(gamgpu:::tprs_stand_in(spec, d, NULL, 1L), "tprs.smooth")
})

test_that("bad knots and sizes are refused with a classed error", {
  Xu <- cbind(seq(0, 1, length.out = 30))
  expect_error(construct(Xu, 0, 30, 1), class = "gamgpu_bad_input")
  expect_error(construct(Xu, 0, 2, 1), class = "gamgpu_bad_input")
  Xu[3] <- NA
  expect_error(construct(Xu, 0, 10, 1), class = "gamgpu_bad_input")
  expect_error(construct(matrix(1:30 + 0.5, 30), 0, 10, 0), class = "gamgpu_bad_input")
  expect_error(construct(1:30, 0, 10, 1), class = "gamgpu_bad_input")
})

test_that("a model's thin plate smooths constructed side by side are each one's own", {
  set.seed(12)
  n <- 6000
  d <- data.frame(x = runif(n), z = runif(n), v = rnorm(n))
  specs <- list(mgcv::s(x), mgcv::s(x, z, k = 20), mgcv::s(v, k = 7, m = 3),
                mgcv::s(x, k = 50, xt = list(max.knots = 50)))
  # (the last: a basis as large as its knots, mgcv's own construction)
  for (threads in c(1L, 2L, 5L)) {
    all <- gamgpu:::tprs_stand_ins(specs, d, NULL, threads)
    expect_length(all, length(specs))
    for (i in seq_along(specs)) {
      # each with its share of the threads (1 where there are fewer threads
      # than smooths, 2 for the first two of three at 5), whose split of
      # the products decides the sums: the one construction's to the bit
      share <- max(1L, threads %/% 3L + (i <= threads %% 3L))
      one <- gamgpu:::tprs_stand_in(specs[[i]], d, NULL, if (i == 4L) 1L else share)
      expect_s3_class(all[[i]], "tprs.smooth")
      expect_identical(all[[i]], one, label = i)
    }
  }
  Xu <- cbind(seq(0, 1, length.out = 30))
  all <- function(...) .Call(gamgpu:::gg_tprs_construct_all_r, ...)
  expect_error(all(list(Xu), 0L, 30L, 1L), class = "gamgpu_bad_input")
  expect_error(all(list(Xu, Xu), 0L, 10L, 1L), class = "gamgpu_bad_input")
  expect_error(all(list(), integer(), integer(), 1L), class = "gamgpu_bad_input")
  expect_error(all(list(Xu), 0, 10, 1L), class = "gamgpu_bad_input")
})
