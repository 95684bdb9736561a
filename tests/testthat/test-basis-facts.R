# gam()'s bases set up on bam()'s mini frame from facts of every row
# (R/basis_facts.R): the smooth objects are gam()'s, X is built from its
# recipe, and the fit is the one gam()'s own set-up on every row gives.

test_that("with more rows than chunk.size, gam()'s bases come from facts of every row and X from its recipe", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data()
  ctl <- gam_gpu_control(chunk.size = 800)
  cases <- list(
    # (x3's effect is zero: its smooth is left out, where gam()'s optimizer
    # stops short of the flat criterion's end)
    list(yb ~ s(x0) + s(x1) + s(x2) + x3, binomial(), "REML"),
    list(yb ~ fac + s(x0, bs = "cr") + s(x1, x2) + x3, binomial(), "GCV.Cp"),
    list(y ~ s(x0, bs = "cr", k = 7) + s(x2, k = 12), gaussian(), "REML"),
    list(y ~ s(x0) + s(x1, x2, x3), gaussian(link = "log"), "ML"),
    # te() of cr margins (its knots, constraint and scaling from every
    # row) and a random effect (mgcv's own, on the mini frame)
    list(yb ~ s(x0) + te(x1, x2, k = c(5, 6)) + s(fac, bs = "re"), binomial(), "REML"),
    list(y ~ te(x0, x2, bs = c("cr", "ps")) + s(fac, bs = "re") + s(x1, bs = "cr"), gaussian(),
         "GCV.Cp"),
    # by variables: a factor's smooth per level (the constraint over every
    # row), numbers (no constraint: the variable is not constant)
    list(yb ~ fac + s(x0, by = fac) + s(x2, bs = "cr"), binomial(), "REML"),
    list(y ~ s(x0, by = x1) + s(x2) + te(x3, x1b, by = fac), gaussian(), "REML"),
    # ti(): each margin's constraint and scaling from every row
    list(y ~ ti(x0, x1, k = c(5, 6)) + s(x2) + ti(x3, x1b, bs = c("ps", "cr")), gaussian(),
         "REML"),
    # main effects and their interaction (gam.side() deletes nothing)
    list(yb ~ s(x0) + s(x1, bs = "cr") + ti(x0, x1), binomial(), "REML"),
    # thin plate margins (their shift and scales from every row)
    list(y ~ te(x0, x2, bs = c("tp", "cr"), k = c(6, 5)) + s(x1) +
           ti(x3, x1b, bs = c("cr", "tp"), k = c(5, 5)), gaussian(), "REML"))
  expect_facts_parity(cases, d, ctl)
})

test_that("the facts route and gam()'s set-up on every row give one fit", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(2200)            # (a thin plate basis takes facts above 2000 rows)
  f <- yb ~ s(x0) + s(x1, bs = "cr") + s(x2, x3)
  g1 <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                control = gam_gpu_control(chunk.size = 600))
  g0 <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                control = gam_gpu_control(chunk.size = 1e5))
  expect_identical(g1$device$model_matrix, "recipe")
  expect_identical(g0$device$model_matrix, "matrix")
  expect_same_smooths(g1$smooth, g0$smooth, 1e-11, "facts")
  expect_lt(max(abs(g1$coefficients - g0$coefficients)) / max(abs(g0$coefficients)), 1e-8)
  expect_lt(max(abs(g1$sp / g0$sp - 1)), 1e-6)
})

test_that("the facts' few rows grow to 4 per coefficient in a model of many", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  # (the few rows' number made small, so that a small model has more than a
  # quarter as many coefficients: at the default 500 rows it takes over 125)
  ns <- asNamespace("gamgpu")
  rows0 <- get("facts_mini_rows", ns)
  utils::assignInNamespace("facts_mini_rows", 200, ns)
  on.exit(utils::assignInNamespace("facts_mini_rows", rows0, ns), add = TRUE)
  d <- facts_data(2600)
  set.seed(3)
  d$many <- factor(sample(60, nrow(d), replace = TRUE))
  d$y <- d$y + rnorm(60)[as.integer(d$many)]
  p <- 10L + nlevels(d$many)
  f <- y ~ s(x0, bs = "cr") + s(many, bs = "re")
  ctl <- gam_gpu_control(chunk.size = 1000)
  expect_facts_parity(list(list(f, gaussian(), "GCV.Cp")), d, ctl)
  # (the sizes of the mini frames drawn: 200 rows, then 4 p)
  rec <- new.env()
  rec$sizes <- numeric(0)
  trace("lean_mini_mf", where = ns, print = FALSE,
        tracer = bquote(assign("sizes", c(get("sizes", envir = .(rec)), chunk.size),
                               envir = .(rec))))
  on.exit(untrace("lean_mini_mf", where = ns), add = TRUE)
  g <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off", control = ctl)
  expect_length(g$coefficients, p)
  expect_equal(rec$sizes, c(200, 4 * p))
  # (fewer coefficients: the few rows once)
  rec$sizes <- numeric(0)
  g <- gam_gpu(y ~ s(x0, bs = "cr") + s(fac, bs = "re"), data = d, method = "GCV.Cp",
               device = "off", control = ctl)
  expect_equal(rec$sizes, 200)
})

test_that("smooths the facts do not cover take gam()'s set-up on every row", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(2200)
  for (f in list(yb ~ s(x0, id = 1) + s(x2, id = 1),   # linked smooths (id)
                 yb ~ s(x0) + te(x0, x1),              # nested: gam.side() deletes columns
                 yb ~ s(x0, bs = "ad") + s(x1),        # a basis without facts
                 yb ~ t2(x0, x1, bs = "tp") + s(x2),   # a t2() of thin plate margins
                 yb ~ s(x0, fac, bs = "fs") + s(x2),   # a factor smooth of a tp base
                 yb ~ te(x0, x1, bs = "cc") + s(x2),   # a te() margin without facts
                 yb ~ s(fac, x0, bs = "re") + s(x2))) {  # a random slope

    g <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                 control = gam_gpu_control(chunk.size = 500))
    g0 <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                  control = gam_gpu_control(chunk.size = 1e5))
    expect_identical(g$device$model_matrix, "matrix", label = deparse(f))
    expect_identical(g$coefficients, g0$coefficients, label = deparse(f))
  }
})

test_that("gg_basis_stats is colMeans, the RMS scaling and norm(X, 'I') of R", {
  set.seed(2)
  X <- matrix(rnorm(20011 * 5), ncol = 5) * rep(c(1, 3, 0.5, 10, 2), each = 20011)
  for (rms in c(FALSE, TRUE)) {
    st <- .Call(gamgpu:::gg_basis_stats_r, X, rms, 2L)
    sc <- if (rms) sqrt(colSums(X^2) / nrow(X)) else rep(1, 5)
    Xs <- X / rep(sc, each = nrow(X))
    expect_lt(max(abs(st$scale - sc) / sc), 1e-15)
    expect_lt(max(abs(st$mean - colMeans(Xs))), 1e-15 * max(abs(Xs)))
    expect_equal(st$rowmax, norm(Xs, "I"), tolerance = 1e-15)
    expect_identical(st$imax, as.double(which.max(rowSums(abs(Xs)))))
    # the same for any thread count
    expect_identical(.Call(gamgpu:::gg_basis_stats_r, X, rms, 1L), st)
  }
  expect_error(.Call(gamgpu:::gg_basis_stats_r, 1:3, TRUE, 1L), class = "gamgpu_bad_input")
})

# raw bases of three kinds, as the facts take them: a thin plate basis
# (its columns' RMS scaling), a cr basis and a te() of cr margins
stats_bases <- function(d) {
  list(tp = mgcv::smooth.construct(mgcv::s(x0, k = 8, xt = list(max.knots = 300)), d, NULL),
       cr = mgcv::smooth.construct(mgcv::s(x1, bs = "cr"), d, NULL),
       te = mgcv::smooth.construct(mgcv::te(x2, x3, k = c(5, 5)), d, NULL))
}

test_that("a basis's statistics from its recipe are gg_basis_stats() of its matrix", {
  d <- facts_data(20000)
  for (b in stats_bases(d)) {
    rms <- inherits(b, "tprs.smooth")
    X <- gamgpu:::raw_basis_matrix(b, d, nrow(d), 2L, c(0L, 0L))
    st <- gamgpu:::raw_basis_stats(b, d, nrow(d), 2L, c(0L, 0L), rms)
    expect_identical(st, .Call(gamgpu:::gg_basis_stats_r, X, rms, 2L))
  }
})

test_that("on the GPU a basis's statistics are reduced there: the host's to rounding", {
  skip_if_no_device()
  d <- facts_data(300000)
  for (b in stats_bases(d)) {
    rms <- inherits(b, "tprs.smooth")
    h <- gamgpu:::raw_basis_stats(b, d, nrow(d), 2L, c(0L, 0L), rms)
    gpu_telemetry(reset = TRUE)
    g <- gamgpu:::raw_basis_stats(b, d, nrow(d), 2L, c(2L, 0L), rms)
    t <- gpu_telemetry()
    # (kernels launched; back came the statistics, not X's 8 bytes a cell)
    expect_gt(sum(t$launches[t$backend == "engine"]), 0)
    expect_lt(sum(t$d2h_bytes), 8 * nrow(d))
    expect_device_arena_empty()
    expect_lt(max(abs(g$scale - h$scale) / h$scale), 1e-14)
    expect_lt(max(abs(g$mean - h$mean)), 1e-14 * max(abs(h$mean), 1))
    expect_lt(abs(g$rowmax - h$rowmax) / h$rowmax, 1e-14)
    # (the row of the largest scaled row sum, or one within rounding of it)
    expect_true(g$imax == h$imax || abs(g$rowmax - h$rowmax) < 1e-14 * h$rowmax)
  }
})

test_that("on the GPU the facts' bases are evaluated on the device and X built there", {
  skip_if_no_device()
  # (the CPU's fit set up as the device's is: gam()'s bases from facts of
  # every row, which a CPU fit takes only when asked for)
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(30000)
  g <- expect_device_facts_fit(yb ~ s(x0) + s(x1, bs = "cr") + s(x2, x3), d)
  expect_identical(g$device$outer_gram, "cuda:0")
})

test_that("gg_sorted_unique is sort(unique(x)), whatever the threads", {
  su <- function(x, threads = 2L) .Call(gamgpu:::gg_sorted_unique_list_r, list(x), threads)[[1L]]
  set.seed(4)
  x <- c(round(rnorm(5e4), 2), -0, 0, Inf, -Inf, 1e-300, -1e-300, .Machine$double.xmax)
  expect_identical(su(x), sort(unique(x)))
  # (more rows than one segment of the parallel sort: 16 of them)
  y <- c(round(rnorm(1.2e6) * 1e3, 1), -0, 0, runif(1e4))
  expect_identical(su(y, 1L), sort(unique(y)))
  expect_identical(su(y, 2L), sort(unique(y)))
  expect_identical(su(c(3, 3, 3)), 3)
  expect_identical(su(numeric(0)), numeric(0))
  expect_error(su(c(1, NA)), class = "gamgpu_bad_input")
  expect_error(su(1:3), class = "gamgpu_bad_input")
  expect_error(su(1, 0L), class = "gamgpu_bad_input")
})

test_that("sorted_quantile() is quantile() of sorted values, names included", {
  set.seed(8)
  for (n in c(1, 2, 9, 10, 11, 1000, 12345)) for (nk in c(3, 5, 10, 21)) {
    xu <- sort(unique(round(rnorm(n), 3)))
    p <- seq(0, 1, length = nk)
    expect_identical(gamgpu:::sorted_quantile(xu, p), stats::quantile(xu, p))
  }
})

test_that("the route is the device's by default; option gamgpu.basis_facts decides otherwise", {
  d <- facts_data(2400)
  f <- yb ~ s(x0) + s(x1, bs = "cr")
  ctl <- gam_gpu_control(chunk.size = 800)
  fit <- function() gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                            control = ctl)
  # on the CPU a thin plate basis would be evaluated on every row twice
  expect_identical(fit()$device$model_matrix, "matrix")
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op))
  expect_identical(fit()$device$model_matrix, "recipe")
  options(gamgpu.basis_facts = FALSE)
  expect_identical(fit()$device$model_matrix, "matrix")
  options(gamgpu.basis_facts = "yes")
  expect_error(fit(), class = "gamgpu_bad_input")
})

