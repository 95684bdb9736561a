# gam()'s methods on shards left on the nodes (R/shards_outer.R): the
# outer iteration's row sums from the nodes, the fitted object's rows the
# set-up sample's; against the one-process fit of the same rows (every
# row in the set-up: the same bases) and mgcv's gam().

skip_on_os("windows")

cl <- node_cluster()

shards_outer_data <- function(n = 1800, seed = 7) {
  set.seed(seed)
  d <- data.frame(x = runif(n), z = runif(n), fac = factor(sample(5, n, TRUE)))
  d$f <- sin(6 * d$x) + d$z^2 + as.numeric(d$fac) / 5
  d$yb <- rbinom(n, 1, plogis(d$f - 1))
  d$yp <- rpois(n, exp(d$f / 2))
  d$yg <- rgamma(n, 3, rate = 3 / exp(d$f / 2))
  d$yi <- statmod_free_invgauss(n, exp(d$f / 3))
  d$yn <- exp(d$f / 3) + rnorm(n) / 4
  d$w <- runif(n, 0.5, 2)
  d$o <- runif(n, -0.2, 0.2)
  d
}
# (inverse Gaussian draws by Michael, Schucany and Haas, shape 4)
statmod_free_invgauss <- function(n, mu, shape = 4) {
  v <- rnorm(n)^2
  x <- mu + mu^2 * v / (2 * shape) - mu / (2 * shape) * sqrt(4 * mu * shape * v + mu^2 * v^2)
  ifelse(runif(n) <= mu / (mu + x), x, mu^2 / x)
}

shard_files <- function(d, k = 2L) {
  cut <- floor(seq(0, nrow(d), length.out = k + 1L))
  vapply(seq_len(k), function(i) {
    f <- tempfile(fileext = ".rds")
    saveRDS(d[(cut[i] + 1):cut[i + 1L], ], f)
    f
  }, "")
}

d <- shards_outer_data()
files <- shard_files(d)
sh <- gamgpu_shards(files)

# (tol scales the fit's tolerances: where the criterion is flat along a
# smoothing parameter, the rounding of the sums' order moves Newton's stop
# within its convergence tolerance -- inverse.gaussian's REML here, 9e-10
# of the linear predictor's range)
expect_shards_outer_parity <- function(a, b, label, tol = 1) {
  rng <- function(v) diff(range(v))
  expect_true(a$converged, label = label)
  expect_true(b$converged, label = label)
  expect_s3_class(b, "gam_gpu_shards")
  expect_identical(b$outer.info$conv, a$outer.info$conv, label = label)
  expect_identical(b$method, a$method, label = label)
  expect_lt(max(abs(b$linear.predictors - a$linear.predictors)) / rng(a$linear.predictors),
            tol * 1e-10, label = paste(label, "linear predictors"))
  expect_lt(max(abs(log(b$sp) - log(a$sp))), tol * 1e-7, label = paste(label, "log sp"))
  expect_lt(abs(b$gcv.ubre[[1]] / a$gcv.ubre[[1]] - 1), 1e-11, label = paste(label, "score"))
  expect_lt(abs(b$scale / a$scale - 1), tol * 1e-10, label = paste(label, "scale"))
  expect_lt(max(abs(b$edf - a$edf)), tol * 1e-8, label = paste(label, "edf"))
  expect_lt(max(abs(b$hat - a$hat)), tol * 1e-10, label = paste(label, "leverages"))
  expect_lt(max(abs(b$weights - a$weights)) / max(abs(a$weights)), tol * 1e-10,
            label = paste(label, "weights"))
  expect_lt(max(abs(b$working.weights - a$working.weights)) / max(abs(a$working.weights)),
            tol * 1e-10, label = paste(label, "working weights"))
  expect_lt(max(abs(b$Vp - a$Vp)) / max(abs(a$Vp)), tol * 1e-8, label = paste(label, "Vp"))
  if (!is.null(a$Vc))
    expect_lt(max(abs(b$Vc - a$Vc)) / max(abs(a$Vc)), tol * 1e-8, label = paste(label, "Vc"))
  expect_equal(b$deviance, a$deviance, tolerance = tol * 1e-11, label = paste(label, "deviance"))
  if (is.finite(a$aic)) expect_lt(abs(b$aic - a$aic), 1e-8 * abs(a$aic), label = paste(label, "aic"))
  else expect_identical(b$aic, a$aic, label = paste(label, "aic"))
  expect_equal(b$df.residual, a$df.residual, tolerance = tol * 1e-12)
  expect_identical(b$device$outer_rows, "cluster: cpu", label = label)
}

test_that("REML, ML, P-REML, GCV.Cp and UBRE on shards are the one-process fits", {
  cases <- list(
    list(yb ~ s(x) + s(z) + fac, binomial(), "REML", ~w, 1),
    list(yp ~ s(x) + s(z), poisson(), "ML", NULL, 1),
    list(yp ~ s(x) + s(z) + offset(o), poisson(), "P-REML", NULL, 1),
    list(yg ~ s(x) + s(z), Gamma(link = "log"), "REML", ~w, 1),
    list(yg ~ s(x) + s(z), Gamma(link = "log"), "GCV.Cp", NULL, 1),
    list(yb ~ s(x) + s(z), binomial(), "GCV.Cp", NULL, 1),
    list(yi ~ s(x) + s(z), inverse.gaussian(link = "log"), "REML", NULL, 20),
    list(yn ~ s(x) + s(z), gaussian(link = "log"), "ML", NULL, 1),
    list(yp ~ s(x) + s(z), quasipoisson(), "REML", NULL, 1))
  for (cs in cases) {
    label <- paste(cs[[2]]$family, cs[[2]]$link, cs[[3]])
    args <- list(cs[[1]], family = cs[[2]], method = cs[[3]], device = "off")
    if (!is.null(cs[[4]])) args$weights <- cs[[4]][[2]]
    a <- do.call(gam_gpu, c(args, list(data = d)))
    b <- do.call(gam_gpu, c(args, list(data = sh, cluster = cl)))
    expect_shards_outer_parity(a, b, label, cs[[5]])
  }
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("the additive model's GCV.Cp and GACV.Cp on shards: the one-process leverages", {
  for (m in c("GCV.Cp", "GACV.Cp")) {
    a <- gam_gpu(yn ~ s(x) + s(z), data = d, method = m, device = "off")
    b <- gam_gpu(yn ~ s(x) + s(z), data = sh, method = m, device = "off", cluster = cl)
    rng <- diff(range(a$linear.predictors))
    expect_lt(max(abs(b$linear.predictors - a$linear.predictors)) / rng, 1e-10, label = m)
    expect_lt(abs(b$gcv.ubre[[1]] / a$gcv.ubre[[1]] - 1), 1e-11, label = m)
    # (the leverages from Vp over the scale it was made with)
    expect_lt(max(abs(b$hat - a$hat)), 1e-10, label = m)
    expect_lt(abs(sum(b$hat) - sum(b$edf)), 1e-8, label = m)
  }
})

test_that("a REML fit on shards is gam()'s", {
  g <- mgcv::gam(yg ~ s(x) + s(z), family = Gamma(link = "log"), data = d, method = "REML")
  b <- gam_gpu(yg ~ s(x) + s(z), family = Gamma(link = "log"), data = sh, method = "REML",
               cluster = cl, device = "off")
  expect_lt(max(abs(b$fitted.values - g$fitted.values)) / diff(range(g$fitted.values)), 1e-6)
  expect_lt(abs(b$gcv.ubre[[1]] - g$gcv.ubre[[1]]), 1e-6 * abs(g$gcv.ubre[[1]]))
  expect_lt(abs(b$aic - g$aic), 1e-6 * abs(g$aic))
  expect_lt(abs(b$scale / g$scale - 1), 1e-6)
})

test_that("beyond the set-up sample the object keeps the sample's rows and counts every row", {
  b <- gam_gpu(yp ~ s(x) + s(z), family = poisson(), data = sh, method = "REML", cluster = cl,
               device = "off", chunk.size = 1000)
  expect_true(b$converged)
  m <- b$shards$sample_rows
  expect_lt(m, nrow(d))
  expect_length(b$hat, m)
  expect_length(b$working.weights, m)
  expect_identical(nobs(b), nrow(d))
  expect_identical(b$df.residual, nrow(d) - sum(b$edf))
  expect_true(all(b$hat > 0 & b$hat < 1))
  expect_true(is.finite(b$aic))
  expect_s3_class(summary(b), "summary.gam")
})

test_that("nb()'s REML and ML on shards, theta estimated or fixed, are the one-process fits", {
  # (a family object made for each fit: a fit puts its theta into the
  # object it is given)
  cases <- list(list(function() mgcv::nb(), "REML"), list(function() mgcv::nb(), "ML"),
                list(function() mgcv::nb(theta = 3), "REML"),
                list(function() mgcv::nb(link = "sqrt"), "REML"))
  for (cs in cases) {
    a <- gam_gpu(yp ~ s(x) + s(z), family = cs[[1]](), data = d, method = cs[[2]],
                 device = "off")
    b <- gam_gpu(yp ~ s(x) + s(z), family = cs[[1]](), data = sh, method = cs[[2]],
                 device = "off", cluster = cl)
    label <- paste(a$family$family, a$family$link, cs[[2]])
    expect_equal(b$family$getTheta(TRUE), a$family$getTheta(TRUE), tolerance = 1e-10,
                 label = label)
    expect_lt(abs(b$null.deviance / a$null.deviance - 1), 1e-10, label = paste(label, "null"))
    expect_shards_outer_parity(a, b, label)
  }
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("cbind() trials' methods on shards are refused, the shards let go", {
  expect_error(gam_gpu(cbind(yp, 3L) ~ s(x), family = binomial(), data = sh, method = "REML",
                       cluster = cl, device = "off"),
               class = "gamgpu_unsupported_argument")
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("a node's error in the outer iteration's sums is a classed error; the nodes let go", {
  parallel::clusterCall(cl[2], function() options(gamgpu.node_fault = list(op = "outer_ls",
                                                                            action = "error")))
  on.exit(parallel::clusterCall(cl[2], function() options(gamgpu.node_fault = NULL)))
  expect_error(gam_gpu(yg ~ s(x), family = Gamma(link = "log"), data = sh, method = "REML",
                       cluster = cl, device = "off"),
               class = "gamgpu_cluster_node_error")
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("the file's cluster stops", {
  unlink(files)
  expect_null(parallel::stopCluster(cl))
})
