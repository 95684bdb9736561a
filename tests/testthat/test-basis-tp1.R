# A thin plate basis in one variable as piecewise polynomials
# (R/model_matrix.R's tp1_table, src/basis/basis_tprs.c's gg_tp1_table): the
# same basis as the sums over the knots (b' UZ) to their rounding, for
# every penalty order, inside and beyond the knots, on them and between.

# A 1-d tp smooth's block recipe on data x, with its polynomials and without.
tp1_recipes <- function(x, k, m, fit_x = x, threads = 2L) {
  sm <- mgcv::smoothCon(mgcv::s(x, k = k, m = m, bs = "tp"), data.frame(x = fit_x),
                        absorb.cons = FALSE)[[1]]
  r <- gamgpu:::margin_block(gamgpu:::margin_recipe(sm, data.frame(x = x), threads,
                                                    max_tp_d = Inf))
  r$col0 <- 1L
  r$ncol <- r$k
  direct <- r
  direct$pp_knots <- direct$pp_coef <- direct$pp_deg <- NULL
  list(sm = sm, pp = r, direct = direct)
}

build <- function(r, n, threads = 2L)
  .Call(gamgpu:::gg_xplan_build_r, list(n = n, p = r$ncol, threads = threads, blocks = list(r)))

test_that("one variable's polynomials are the knots' sums to rounding, every order", {
  set.seed(11)
  fit_x <- runif(6000) * 7 - 2                       # 2000 of 6000 as knots (mgcv's max)
  # data inside, on every knot, and up to a quarter of the range beyond each end
  for (cfg in list(c(k = 10, m = 2), c(k = 40, m = 2), c(k = 75, m = 2), c(k = 8, m = 1),
                   c(k = 10, m = 3), c(k = 20, m = 4))) {
    r0 <- tp1_recipes(fit_x, cfg[["k"]], cfg[["m"]])
    x <- c(runif(3000) * 10.5 - 3.75, as.double(r0$sm$Xu) + as.double(r0$sm$shift), range(fit_x))
    r <- tp1_recipes(x, cfg[["k"]], cfg[["m"]], fit_x = fit_x)
    expect_identical(r$pp$pp_deg, as.integer(2 * cfg[["m"]] - 1))
    expect_identical(r$pp$pp_knots, sort(as.double(r$sm$Xu)))
    Xp <- build(r$pp, length(x))
    Xd <- build(r$direct, length(x))
    # (the knots' sums are PredictMat's: bit for bit under the reference BLAS)
    expect_same_basis(Xd, mgcv::PredictMat(r$sm, data.frame(x = x)))
    # each entry is a sum of nXu + M (here 2000 + m) terms either way.
    # Against sums in long double (measured on 3000 points over the knots'
    # range, and over twice it), the knots' sums are off by up to 1.8e-11
    # (4.1e-11) of X's largest entry at k = 75, m = 2, and 1.8e-11 (7.3e-11)
    # at k = 20, m = 4; the polynomials by 1.5e-11 (1.2e-11) and 1.8e-11
    # (2.2e-11); at k = 10 both by 2e-13.  So the two differ by their
    # rounding, at most 9.3e-11 measured: 5e-14 per term bounds it.
    terms <- nrow(r$sm$UZ)
    err <- max(abs(Xp - Xd)) / max(abs(Xd))
    expect_lt(err, 5e-14 * terms, label = paste("k", cfg[["k"]], "m", cfg[["m"]]))
    if (cfg[["k"]] == 10) expect_lt(err, 1e-12)
    expect_false(identical(Xp, Xd))                  # the polynomials were used
  }
})

test_that("few data: every unique x a knot; threads change nothing", {
  set.seed(12)
  x <- round(runif(400) * 3, 2)                      # ties: fewer unique knots than rows
  r <- tp1_recipes(x, 12, 2)
  expect_lt(nrow(r$sm$Xu), length(x))
  Xp <- build(r$pp, length(x))
  expect_lt(max(abs(Xp - build(r$direct, length(x)))) / max(abs(Xp)), 1e-14 * nrow(r$sm$UZ))
  one <- tp1_recipes(x, 12, 2, threads = 1L)
  expect_identical(one$pp$pp_coef, r$pp$pp_coef)
  expect_identical(build(r$pp, length(x), threads = 1L), Xp)
})

test_that("the polynomials meet at every knot", {
  set.seed(13)
  r <- tp1_recipes(runif(3000), 10, 2)$pp
  K <- length(r$pp_knots)
  D <- r$pp_deg
  C <- array(r$pp_coef, c(D + 1L, r$k, K + 1L))     # [power, column, interval]
  h <- diff(r$pp_knots)
  # interval j (1-based j + 1 in C) at its right end against interval j + 1 at t = 0
  for (j in c(1L, K %/% 2L, K - 1L)) {
    left <- vapply(seq_len(r$k), function(c) sum(C[, c, j + 1L] * h[j]^(0:D)), 0)
    expect_lt(max(abs(left - C[1L, , j + 2L])), 1e-12 * max(abs(C[1L, , ])))
  }
})

test_that("a thin plate table or plan that does not fit is refused, classed", {
  Xu <- matrix(c(0.1, 0.5, 0.9, 0.3), ncol = 1)
  UZ <- matrix(rnorm(6 * 3), 6, 3)
  expect_error(gamgpu:::tp1_table(Xu, UZ, 2L, 3L), class = "gamgpu_bad_input")   # M is 2
  expect_error(gamgpu:::tp1_table(cbind(Xu, Xu), UZ, 2L, 2L), class = "gamgpu_bad_input")
  expect_error(gamgpu:::tp1_table(Xu, UZ[-1, ], 2L, 2L), class = "gamgpu_bad_input")
  Xu[2] <- NA
  expect_error(gamgpu:::tp1_table(Xu, UZ, 2L, 2L), class = "gamgpu_bad_input")
  r <- tp1_recipes(runif(500), 10, 2)$pp
  bad <- r
  bad$pp_deg <- 5L                                    # order 2 has degree 3
  expect_error(build(bad, 500), class = "gamgpu_bad_input")
  bad <- r
  bad$pp_knots <- rev(bad$pp_knots)
  expect_error(build(bad, 500), class = "gamgpu_bad_input")
  bad <- r
  bad$pp_coef <- bad$pp_coef[-1]
  expect_error(build(bad, 500), class = "gamgpu_bad_input")
})

test_that("the table is taken where it costs less than the direct sums", {
  set.seed(7)
  x <- runif(3000)
  sm <- mgcv::smoothCon(mgcv::s(x), data.frame(x = x), knots = NULL)[[1]]
  K <- nrow(sm$Xu)                                    # 2000 knots, k = 10, degree 3
  expect_identical(K, 2000L)
  pays <- gamgpu:::tp1_table_pays
  # on the host: (K + 1) K 4 multiply-adds against n (K + 2), the change
  # at about 8000 rows; on the device tp1_device_rate times further on
  expect_false(pays(sm, 7000))
  expect_true(pays(sm, 9000))
  rate <- gamgpu:::tp1_device_rate
  expect_false(pays(sm, 7000 * rate, dev = c(2L, 0L)))
  expect_true(pays(sm, 9000 * rate, dev = c(2L, 0L)))
  expect_true(pays(sm, 9000, dev = c(0L, 0L)))        # (mode 0: the host)
  st <- mgcv::smoothCon(mgcv::s(x, bs = "ts"), data.frame(x = x), knots = NULL)[[1]]
  expect_true(pays(st, 9000))                         # ("ts": a tp basis of its own class)
  # a basis without a one-variable table: never
  sm2 <- mgcv::smoothCon(mgcv::s(x, z), data.frame(x = x, z = rev(x)), knots = NULL)[[1]]
  expect_false(pays(sm2, 1e9))
  expect_false(pays(mgcv::smoothCon(mgcv::s(x, bs = "cr"), data.frame(x = x), NULL)[[1]], 1e9))
  # the two ways agree to rounding, and the choice is what ran
  d <- data.frame(x = runif(500))
  Xt <- gamgpu:::raw_basis_matrix(sm, d, 500L, 2L, tp1_table = TRUE)
  Xs <- gamgpu:::raw_basis_matrix(sm, d, 500L, 2L, tp1_table = FALSE)
  expect_lt(max(abs(Xt - Xs)) / max(abs(Xs)), 1e-12)
  expect_false(identical(Xt, Xs))
  expect_identical(gamgpu:::raw_basis_matrix(sm, d, 500L, 2L), Xs)   # 500 rows: the sums
  expect_equal(unname(Xs), unname(mgcv::PredictMat(sm, d)), tolerance = 1e-12)
})

test_that("a device fit's plan takes the table where it pays, the host's always", {
  set.seed(8)
  n <- 12000
  d <- data.frame(x = runif(n), z = runif(n), y = rnorm(n))
  G <- mgcv::gam(y ~ s(x) + te(x, z, bs = c("tp", "cr"), k = c(6, 5)), data = d, fit = FALSE)
  has_table <- function(plan) {
    vapply(plan$blocks, function(b) !is.null(b$pp_coef) ||
             any(vapply(b$margins, function(m) !is.null(m$pp_coef), NA)), NA)
  }
  blocks <- function(plan) plan$blocks[vapply(plan$blocks, function(b) b$col0 > 1L, NA)]
  plan_of <- function(dev) gamgpu:::model_matrix_plan(G, G$mf, threads = 2L, dev = dev)
  # the host (no device, or mode 0): the table, so that X is R's bit for bit
  expect_true(all(has_table(list(blocks = blocks(plan_of(NULL))))))
  expect_true(all(has_table(list(blocks = blocks(plan_of(c(0L, 0L)))))))
  # a device on 12000 rows of 2000 knots: its direct sums cost less
  dev <- c(2L, 0L)
  expect_false(gamgpu:::tp1_table_pays(G$smooth[[1]], n, dev))
  expect_false(any(has_table(list(blocks = blocks(plan_of(dev))))))
  # (where it pays -- tp1_table_pays(), above -- the device takes the
  # table too); and under gamgpu.tensor_cores = FALSE, which keeps the
  # host's sums bit for bit, always
  local({
    local_gg_options(gamgpu.tensor_cores = FALSE)
    expect_true(all(has_table(list(blocks = blocks(plan_of(dev))))))
  })
})

test_that("a device fit's plan loaded on the CPU builds the host plan's X, bit for bit", {
  set.seed(9)
  n <- 12000
  d <- data.frame(x = runif(n), z = runif(n), y = rnorm(n))
  G <- mgcv::gam(y ~ s(x) + te(x, z, bs = c("tp", "cr"), k = c(6, 5)), data = d, fit = FALSE)
  host <- gamgpu:::model_matrix_plan(G, G$mf, threads = 2L)
  dev <- gamgpu:::model_matrix_plan(G, G$mf, threads = 2L, dev = c(2L, 0L))
  X_of <- function(plan) {
    # (a session at mode 0, as one moved to the CPU after a device failure
    # or chosen under "auto"; X B with B the identity is X itself)
    s <- test_session(plan, d$y, rep(1, n), nthreads = 2L)
    on.exit(s$close())
    s$op("mul", diag(plan$p), FALSE)
  }
  Xh <- X_of(host)
  expect_identical(X_of(dev), Xh)
  # (without the tables the host's direct sums differ in the last bits:
  # the tables were made)
  Xs <- .Call(gamgpu:::gg_xplan_build_r, dev)
  expect_false(identical(Xs, Xh))
  expect_lt(max(abs(Xs - Xh)) / max(abs(Xh)), 1e-12)
})
