# gam()'s methods (REML, ML, GCV.Cp/UBRE beyond the additive model, an
# extended family's REML) with the rows on a parallel cluster's nodes: the
# outer iteration's session operations run on every node's session and
# are summed (R/cluster.R: outer_combine()); the fit against the
# one-process fit of the same rows.

skip_on_os("windows")

cl <- node_cluster()

outer_data <- function(n = 2000, seed = 41) {
  set.seed(seed)
  d <- data.frame(x = runif(n), z = runif(n), v = runif(n),
                  fac = factor(sample(8, n, TRUE)))
  d$f <- sin(6 * d$x) + d$z^2 - d$v + as.numeric(d$fac) / 8
  d$yb <- rbinom(n, 1, plogis(d$f - 0.5))
  d$yp <- rpois(n, exp(d$f / 2 + 0.5))
  d$yg <- d$f + rnorm(n) / 2
  d$w <- runif(n, 0.5, 2)
  d
}

expect_outer_parity <- function(a, b, label, sp_tol = 1e-7) {
  rng <- function(v) diff(range(v))
  expect_true(a$converged, label = label)
  expect_true(b$converged, label = label)
  expect_identical(b$outer.info$conv, a$outer.info$conv, label = label)
  expect_identical(b$device$backend, "cluster", label = label)
  expect_lt(max(abs(b$linear.predictors - a$linear.predictors)) / rng(a$linear.predictors),
            1e-10, label = paste(label, "linear predictors"))
  expect_lt(max(abs(log(b$sp) - log(a$sp))), sp_tol, label = paste(label, "log sp"))
  expect_lt(max(abs(b$edf - a$edf)), 1e-8, label = paste(label, "edf"))
  expect_lt(max(abs(b$hat - a$hat)), 1e-10, label = paste(label, "leverages"))
  expect_lt(abs(b$gcv.ubre[[1]] / a$gcv.ubre[[1]] - 1), 1e-11, label = paste(label, "score"))
  expect_equal(b$deviance, a$deviance, tolerance = 1e-11, label = paste(label, "deviance"))
  expect_lt(max(abs(b$Vp - a$Vp)) / max(abs(a$Vp)), 1e-8, label = paste(label, "Vp"))
  expect_gt(b$device$cluster$calls, 0)
  expect_identical(b$device$outer_rows, "cluster: cpu", label = label)
}

test_that("REML, ML and UBRE of exponential families over two nodes are the one-process fit's", {
  d <- outer_data()
  cases <- list(
    list(fo = yb ~ s(x) + te(z, v, k = c(4, 4)) + s(fac, bs = "re"), fam = binomial(),
         method = "REML"),
    list(fo = yp ~ s(x) + s(z, bs = "cr") + s(v), fam = poisson(), method = "ML"),
    list(fo = yb ~ s(x) + s(z), fam = binomial(), method = "GCV.Cp"),
    list(fo = yp ~ s(x) + s(z), fam = Gamma(link = "log"), method = "REML", y = "pos"),
    list(fo = yg ~ s(x) + s(z) + s(fac, bs = "re"), fam = gaussian(), method = "REML"))
  for (k in cases) {
    dd <- d
    if (identical(k$y, "pos")) dd$yp <- dd$yp + 0.5
    a <- gam_gpu(k$fo, family = k$fam, data = dd, weights = w, method = k$method,
                 device = "off")
    b <- gam_gpu(k$fo, family = k$fam, data = dd, weights = w, method = k$method,
                 cluster = cl, device = "off")
    label <- paste(k$fam$family, k$method)
    expect_identical(b$method, a$method, label = label)
    expect_outer_parity(a, b, label)
    expect_equal(b$sig2, a$sig2, tolerance = 1e-10, label = paste(label, "scale"))
    expect_identical(unlist(b$device$cluster$nodes$rows), c(1000, 1000))
  }
  open <- parallel::clusterCall(cl, function() length(ls(gamgpu:::.node_sessions)))
  expect_identical(unlist(open), c(0L, 0L))
})

test_that("nb()'s REML with theta over two nodes is the one-process fit's", {
  d <- outer_data(seed = 42)
  a <- gam_gpu(yp ~ s(x) + s(z), family = mgcv::nb(), data = d, method = "REML",
               device = "off")
  b <- gam_gpu(yp ~ s(x) + s(z), family = mgcv::nb(), data = d, method = "REML",
               cluster = cl, device = "off")
  expect_outer_parity(a, b, "nb REML")
  # (REML is flat in theta here: its gradient 1e-2 at gam()'s own optimum)
  expect_lt(abs(b$family$getTheta() / a$family$getTheta() - 1), 1e-7)
})

test_that("offsets, gam()'s fixed penalty and tw() over two nodes are the one-process fits", {
  set.seed(44)
  n <- 2000
  d <- data.frame(x = runif(n), z = runif(n), off = log(runif(n, 1, 3)))
  d$yp <- rpois(n, exp(sin(3 * d$x) + d$off))
  # (each fit its own family object: tw()'s keeps the p a fit ends at, and
  # the next fit -- gam()'s too -- starts from it)
  fits <- list(
    list(fo = yp ~ s(x) + s(z) + offset(off), fam = quasipoisson, method = "P-REML"),
    list(fo = yp ~ s(x) + s(z) + offset(off), fam = poisson, method = "ML",
         min.sp = c(0.01, 0.01)),
    list(fo = yp ~ s(x) + s(z) + offset(off), fam = mgcv::tw, method = "REML"))
  for (k in fits) {
    args <- function() {
      a <- list(k$fo, family = k$fam(), data = d, method = k$method, device = "off")
      if (!is.null(k$min.sp)) a$min.sp <- k$min.sp
      a
    }
    a <- do.call(gam_gpu, args())
    b <- do.call(gam_gpu, c(args(), list(cluster = cl)))
    expect_outer_parity(a, b, paste(a$family$family, k$method), sp_tol = 1e-6)
  }
})

test_that("a t2() model under gam()'s methods: the nodes build gam()'s fit columns from its recipe", {
  d <- outer_data(1500, seed = 43)
  a <- gam_gpu(yg ~ t2(x, z) + s(v), data = d, method = "REML", device = "off")
  b <- gam_gpu(yg ~ t2(x, z) + s(v), data = d, method = "REML", device = "off", cluster = cl)
  expect_outer_parity(a, b, "t2 REML")
  expect_identical(b$device$cluster$nodes$model_matrix, c("recipe", "recipe"))
  expect_lt(max(abs(b$coefficients - a$coefficients)) / max(abs(a$coefficients)), 1e-8)
})

test_that("a row-sized argument goes to each node as its rows; one value as that value", {
  is_constant <- gamgpu:::is_constant
  expect_true(is_constant(c(2, 2, 2)))
  expect_false(is_constant(c(2, 2, 3)))
  expect_false(is_constant(c(2, NA, 2)))
  expect_false(is_constant(c(NA_real_, NA_real_)))
  expect_false(is_constant(matrix(1, 3, 2)))
  x <- gamgpu:::node_rows(gamgpu:::constant_rows(0.5), 4, 9)
  expect_identical(c(x$value, x$rows), c(0.5, 6))
  expect_identical(gamgpu:::node_rows(as.double(1:10), 4, 9), as.double(4:9))
  m <- matrix(as.double(1:20), 10)
  expect_identical(gamgpu:::node_rows(m, 4, 9), m[4:9, ])
})

test_that("a node's error in the outer iteration is a classed error; the nodes close", {
  d <- outer_data(n = 1000)
  parallel::clusterCall(cl[2], function() options(gamgpu.node_fault = list(op = "derivs",
                                                                            action = "error")))
  on.exit(parallel::clusterCall(cl[2], function() options(gamgpu.node_fault = NULL)))
  expect_error(gam_gpu(yb ~ s(x), family = binomial, data = d, method = "REML", cluster = cl,
                       device = "off"),
               class = "gamgpu_cluster_node_error")
  open <- parallel::clusterCall(cl, function() length(ls(gamgpu:::.node_sessions)))
  expect_identical(unlist(open), c(0L, 0L))
})

test_that("on the GPU the nodes' outer rows and products run on their devices, as the CPU's", {
  skip_if_no_device()
  d <- outer_data(seed = 43)
  fo <- yb ~ s(x) + s(z) + s(fac, bs = "re")
  a <- gam_gpu(fo, family = binomial, data = d, method = "REML", device = "off")
  invisible(parallel::clusterCall(cl, function() gamgpu::gpu_telemetry(reset = TRUE)))
  b <- gam_gpu(fo, family = binomial, data = d, method = "REML", cluster = cl,
               device = "required")
  expect_identical(b$device$cluster$nodes$device, rep("cuda:0", 2))
  expect_identical(b$device$outer_rows, "cluster: cuda:0")
  # (each node's outer iteration's rows computed by its device's kernels)
  tel <- parallel::clusterCall(cl, function() gamgpu::gpu_telemetry())
  for (t in tel) {
    expect_gt(t$launches[t$backend == "outer"], 0)
    expect_identical(sum(t$fallbacks), 0)
  }
  expect_true(b$converged)
  rng <- diff(range(a$linear.predictors))
  expect_lt(max(abs(b$linear.predictors - a$linear.predictors)) / rng, 1e-9)
  expect_lt(max(abs(log(b$sp) - log(a$sp))), 1e-6)
  expect_lt(abs(b$gcv.ubre[[1]] / a$gcv.ubre[[1]] - 1), 1e-10)
})

test_that("the file's cluster stops", {
  expect_null(parallel::stopCluster(cl))
})
