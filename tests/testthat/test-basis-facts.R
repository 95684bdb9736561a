# gam()'s bases set up on bam()'s mini frame from facts of every row
# (R/basis_facts.R): the smooth objects are gam()'s, X is built from its
# recipe, and the fit is the one gam()'s own set-up on every row gives.

facts_data <- function(n = 2400) {
  set.seed(11)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$yb <- rbinom(n, 1, plogis((d$f - mean(d$f)) / 3))
  d$fac <- factor(sample(letters[1:3], n, replace = TRUE))
  d$x1b <- runif(n)
  d
}

# (on the CPU the route is taken only when asked for, by option
# gamgpu.basis_facts = TRUE; a device fit takes it by default)

# every field and attribute of two lists of smooths, to `tol` relative
# (a te() margin's X, its basis on the rows it was built on -- every row for
# gam(), stand-ins for the facts -- by its columns: nothing after the set-up
# reads its rows)
expect_same_smooths <- function(a, b, tol, label) {
  expect_equal(length(a), length(b), label = label)
  margins_X <- function(s) {
    if (!is.null(s$margin))
      s$margin <- lapply(s$margin, function(m) { m$X <- ncol(m$X); m })
    s
  }
  a <- lapply(a, margins_X)
  b <- lapply(b, margins_X)
  # (an sz smooth's Xb, the base's basis on every row for gamm(), is not
  # kept by the facts' route)
  for (i in seq_along(a)) if (inherits(a[[i]], "sz.interaction")) {
    expect_null(a[[i]]$Xb, label = label)
    b[[i]]["Xb"] <- list(NULL)
  }
  for (i in seq_along(b)) {
    for (k in union(names(a[[i]]), names(b[[i]])))
      expect_true(isTRUE(all.equal(a[[i]][[k]], b[[i]][[k]], tolerance = tol)),
                  label = paste(label, "smooth", i, k))
    expect_true(isTRUE(all.equal(attributes(a[[i]]), attributes(b[[i]]), tolerance = tol)),
                label = paste(label, "smooth", i, "attributes"))
  }
}

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
    # cyclic (place.knots() of every row) and P-splines (the range)
    list(yb ~ s(x0, bs = "cc") + s(x2, bs = "ps", k = 12) + s(x1), binomial(), "REML"),
    # their kin: cyclic P-splines and B-splines (the range), and a
    # shrinkage cr (the knots; mgcv shrinks the penalty from them alone)
    list(yb ~ s(x0, bs = "cp") + s(x2, bs = "bs", k = 12) + s(x1, bs = "cs"), binomial(), "REML"),
    list(y ~ s(x0, bs = "bs", m = c(3, 1)) + s(x2, bs = "cp", k = 8) + s(x1, bs = "cs"),
         gaussian(), "GCV.Cp"),
    # ti(): each margin's constraint and scaling from every row
    list(y ~ ti(x0, x1, k = c(5, 6)) + s(x2) + ti(x3, x1b, bs = c("ps", "cr")), gaussian(),
         "REML"),
    # main effects and their interaction (gam.side() deletes nothing)
    list(yb ~ s(x0) + s(x1, bs = "cr") + ti(x0, x1), binomial(), "REML"),
    # Gaussian process smooths (the knots drawn from every row's distinct
    # rows, the shift their means): one and three variables, by a factor
    list(yb ~ s(x0, bs = "gp") + s(x1, x2, x3, bs = "gp", k = 25, xt = list(max.knots = 300)),
         binomial(), "REML"),
    list(y ~ s(x0, bs = "gp", m = c(3, 0.4), by = fac) + fac + s(x2, bs = "cr"), gaussian(),
         "GCV.Cp"),
    # factor smooths of a cr base (its knots, and its natural
    # parameterisation by nat.param() over every row)
    list(yb ~ s(x1, fac, bs = "fs", k = 6, xt = list(bs = "cr")) + s(x2, bs = "cr"), binomial(),
         "REML"),
    list(y ~ s(x0, fac, bs = "fs", xt = "cr") + s(x2), gaussian(), "GCV.Cp"),
    # shrinkage thin plates (the shrinkage after every row's scaling)
    list(yb ~ s(x0, bs = "ts") + s(x1, x2, bs = "ts", k = 20), binomial(), "REML"),
    list(y ~ s(x0, bs = "ts", k = 12) + s(x2, bs = "ts"), gaussian(), "GCV.Cp"),
    # sum-to-zero factor smooths of a cr and a tp base (the base's facts;
    # the rest mgcv's own construction)
    list(y ~ s(x0) + s(x0, fac, bs = "sz", xt = "cr") + s(x2), gaussian(), "REML"),
    list(yb ~ s(x1, fac, bs = "sz") + s(x2, bs = "cr"), binomial(), "REML"),
    list(y ~ s(x0, x2, fac, bs = "sz", k = 12) + s(x1), gaussian(), "GCV.Cp"),
    # thin plate margins (their shift and scales from every row)
    list(y ~ te(x0, x2, bs = c("tp", "cr"), k = c(6, 5)) + s(x1) +
           ti(x3, x1b, bs = c("cr", "tp"), k = c(5, 5)), gaussian(), "REML"))
  for (cs in cases) {
    label <- paste(deparse(cs[[1]]), cs[[3]])
    dd <- d
    if (cs[[2]]$link == "log") dd$y <- dd$y + 10
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = dd, method = cs[[3]])
    # (the facts' stand-in rows give no warning of their own)
    expect_no_warning(g <- gam_gpu(cs[[1]], family = cs[[2]], data = dd, method = cs[[3]],
                                   device = "off", control = ctl))
    expect_identical(g$device$model_matrix, "recipe", label = label)
    expect_same_smooths(g$smooth, b$smooth, 1e-10, label)
    expect_lt(max(abs(g$cmX - b$cmX)), 1e-12, label = label)
    # the fit is gam()'s
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)),
              1e-5, label = label)
    expect_lt((g$gcv.ubre - b$gcv.ubre) / abs(b$gcv.ubre), 1e-6, label = label)
    expect_lt(max(abs(g$edf - b$edf)), 0.01, label = label)
    nd <- dd[1:40, ]
    expect_lt(max(abs(predict(g, nd) - predict(b, nd))), 1e-4 * diff(range(predict(b, nd))),
              label = label)
  }
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

test_that("smooths the facts do not cover take gam()'s set-up on every row", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(2200)
  for (f in list(yb ~ s(x0, id = 1) + s(x2, id = 1),   # linked smooths (id)
                 yb ~ s(x0) + te(x0, x1),              # nested: gam.side() deletes columns
                 yb ~ s(x0, bs = "ad") + s(x1),        # a basis without facts
                 yb ~ t2(x0, x1) + s(x2),              # a t2() tensor product
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
  f <- yb ~ s(x0) + s(x1, bs = "cr") + s(x2, x3)
  gpu_telemetry(reset = TRUE)
  g <- expect_device_fit(gam_gpu(f, family = binomial(), data = d, method = "REML",
                                 device = "required"))
  t <- gpu_telemetry()
  expect_identical(g$device$model_matrix, "recipe")
  expect_identical(g$device$outer_gram, "cuda:0")
  expect_gt(sum(t$launches[t$backend == "engine"]), 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_device_arena_empty()
  c <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off")
  expect_identical(c$device$model_matrix, "recipe")
  expect_same_smooths(g$smooth, c$smooth, 1e-11, "device")
  rel <- function(a, b) max(abs(a - b)) / max(abs(b))
  expect_lt(rel(coef(g), coef(c)), 1e-9)
  expect_lt(rel(fitted(g), fitted(c)), 1e-9)
})

test_that("gg_sorted_unique is sort(unique(x)), whatever the threads", {
  su <- function(x, threads = 2L) .Call(gamgpu:::gg_sorted_unique_r, x, threads)
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

test_that("the thin plate constructions run in forked workers give the ones made in turn", {
  skip_on_os("windows")
  skip_if(nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_")), "R CMD check allows two cores")
  local_gg_options(gamgpu.setup_cores = 4L)       # (whatever this machine's cores)
  set.seed(11)
  n <- 3000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  specs <- mgcv::interpret.gam(~ s(x0) + s(x1, k = 7) + s(x2, bs = "cr"))$smooth.spec
  st <- gamgpu:::tprs_stand_ins(specs, d, NULL, 4L)
  # (the cr spec is none of theirs)
  expect_identical(vapply(st, function(x) class(x)[1], ""), c("tprs.smooth", "tprs.smooth", "NULL"))
  for (i in 1:2) expect_identical(st[[i]], gamgpu:::tprs_stand_in(specs[[i]], d, NULL, 1L))
  # one thread: none forked; nor on fewer than 4 cores, where a fork costs
  # as much as a construction
  expect_true(all(vapply(gamgpu:::tprs_stand_ins(specs, d, NULL, 1L), is.null, NA)))
  local_gg_options(gamgpu.setup_cores = 3L)
  expect_true(all(vapply(gamgpu:::tprs_stand_ins(specs, d, NULL, 4L), is.null, NA)))
})

test_that("a P-spline column no row reaches: gam()'s own set-up, and its warning", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- facts_data(2200)
  d$x0 <- ifelse(d$x0 < 0.5, d$x0 * 0.4, 0.6 + d$x0 * 0.4)      # no rows in (0.2, 0.8)
  # (a P-spline, a B-spline, a cyclic P-spline: each warns in mgcv)
  for (f in list(yb ~ s(x0, bs = "ps", k = 30) + s(x2), yb ~ s(x0, bs = "bs", k = 30) + s(x2),
                 yb ~ s(x0, bs = "cp", k = 30) + s(x2))) {
    expect_warning(b <- mgcv::gam(f, family = binomial(), data = d, method = "REML"),
                   "no\\* information")
    expect_warning(g <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
                                control = gam_gpu_control(chunk.size = 500)),
                   "no\\* information")
    expect_identical(g$device$model_matrix, "matrix", label = deparse(f))
    expect_match(g$device$model_matrix_reason, "a column no row reaches", fixed = TRUE)
  }
})
