# gam_gpu(cluster = cl): the rows on the nodes of a parallel cluster (two
# PSOCK nodes on this machine), each node's shard resident in its own
# session; the fit against the one-process fit, and a node's failure.

skip_on_os("windows")

# (one cluster for the file, stopped by its last block)
cl <- node_cluster()

cluster_data <- function(n = 6000, seed = 31) {
  set.seed(seed)
  d <- data.frame(x = runif(n), z = runif(n), v = runif(n),
                  fac = factor(sample(6, n, TRUE)), g = factor(sample(c("a", "b"), n, TRUE)))
  d$f <- sin(6 * d$x) + d$z^2 - d$v + as.numeric(d$fac) / 6
  d
}

expect_cluster_parity <- function(a, b, label) {
  rng <- function(v) diff(range(v))
  expect_true(a$converged, label = label)
  expect_true(b$converged, label = label)
  expect_lt(max(abs(b$linear.predictors - a$linear.predictors)) / rng(a$linear.predictors),
            1e-10, label = paste(label, "linear predictors"))
  expect_lt(max(abs(b$fitted.values - a$fitted.values)) / rng(a$fitted.values), 1e-10,
            label = paste(label, "fitted values"))
  expect_lt(max(abs(log(b$sp) - log(a$sp))), 1e-7, label = paste(label, "log sp"))
  expect_lt(max(abs(b$edf - a$edf)), 1e-8, label = paste(label, "edf"))
  expect_lt(max(abs(b$hat - a$hat)), 1e-10, label = paste(label, "leverages"))
  expect_equal(b$deviance, a$deviance, tolerance = 1e-11, label = paste(label, "deviance"))
  expect_equal(b$aic, a$aic, tolerance = 1e-11, label = paste(label, "aic"))
  expect_identical(b$device$backend, "cluster")
  expect_identical(b$device$cluster$nodes$rows, c(3000, 3000))
  expect_identical(b$device$cluster$nodes$model_matrix, c("recipe", "recipe"))
}

test_that("a fit over two nodes is the one-process fit (families, re, by-factor, te)", {
  d <- cluster_data()
  d$yg <- d$f + rnorm(nrow(d)) / 2
  d$yb <- rbinom(nrow(d), 1, plogis(d$f - 1))
  d$yp <- rpois(nrow(d), exp(d$f / 2))
  d$yn <- rnbinom(nrow(d), mu = exp(1 + d$f / 2), size = 2)
  # (a family made afresh for each fit: nb()'s object keeps the theta its
  # last fit estimated, where the next fit would start)
  cases <- list(
    list(yg ~ te(x, z, k = c(5, 5)) + s(v, by = g) + g, gaussian),
    list(yb ~ s(x) + s(z, bs = "cr") + s(fac, bs = "re"), binomial),
    list(yp ~ s(x, by = g) + te(z, v, k = c(4, 4)) + g, poisson),
    list(yn ~ s(x) + s(z) + s(fac, bs = "re"), mgcv::nb))
  for (cs in cases) {
    fo <- stats::as.formula(cs[[1]])
    label <- paste(cs[[2]]()$family, deparse(fo))
    a <- gam_gpu(fo, family = cs[[2]](), data = d, device = "off")
    b <- gam_gpu(fo, family = cs[[2]](), data = d, device = "off", cluster = cl)
    expect_cluster_parity(a, b, label)
  }
  # (nb: theta estimated over the shards' sums)
  expect_equal(b$family$getTheta(TRUE), a$family$getTheta(TRUE), tolerance = 1e-9)
  # the nodes' sessions are closed after the fit
  open <- parallel::clusterCall(cl, function() length(ls(gamgpu:::.node_sessions)))
  expect_identical(unlist(open), c(0L, 0L))
  expect_gt(b$device$cluster$calls, 0)
})

test_that("gam()'s GCV.Cp and UBRE of an additive model over two nodes are the one-process fit's", {
  d <- cluster_data()
  d$y <- d$f + rnorm(nrow(d)) / 2
  d$w <- runif(nrow(d), 0.5, 2)
  d$w[1:5] <- 0
  for (sc in c(0, 0.3)) {
    fo <- y ~ s(x) + te(z, v, k = c(4, 4)) + s(fac, bs = "re")
    a <- gam_gpu(fo, data = d, weights = w, method = "GCV.Cp", scale = sc, device = "off")
    b <- gam_gpu(fo, data = d, weights = w, method = "GCV.Cp", scale = sc, cluster = cl,
                 device = "off")
    label <- if (sc > 0) "UBRE" else "GCV"
    expect_cluster_parity(a, b, label)
    expect_equal(b$gcv.ubre, a$gcv.ubre, tolerance = 1e-11, label = paste(label, "score"))
    expect_equal(b$sig2, a$sig2, tolerance = 1e-11, label = paste(label, "scale"))
    expect_identical(b$method, a$method)
  }
})

test_that("what a cluster does not fit is refused with a classed error", {
  d <- cluster_data(n = 3000)
  d$y <- d$f + rnorm(nrow(d))
  expect_error(gam_gpu(y ~ s(x), data = d, cluster = list(1, 2), device = "off"),
               class = "gamgpu_bad_input")
  expect_error(gam_gpu(y ~ s(x), data = d, rho = 0.3, cluster = cl, device = "off"),
               class = "gamgpu_unsupported_argument")
  # (a general family's route is gam()'s own: refused, not fitted in one process)
  expect_error(gam_gpu(list(y ~ s(x), ~ s(z)), family = mgcv::gaulss(), data = d,
                       method = "REML", cluster = cl, device = "off"),
               class = "gamgpu_unsupported_argument")
})

test_that("a node's error or death mid-fit is a classed error; the live nodes close", {
  d <- cluster_data(n = 3000)
  d$y <- rbinom(nrow(d), 1, plogis(d$f - 1))
  parallel::clusterCall(cl[2], function() options(gamgpu.node_fault = list(op = "gram",
                                                                            action = "error")))
  expect_error(gam_gpu(y ~ s(x), family = binomial, data = d, cluster = cl, device = "off"),
               class = "gamgpu_cluster_node_error")
  parallel::clusterCall(cl[2], function() options(gamgpu.node_fault = NULL))
  open <- parallel::clusterCall(cl, function() length(ls(gamgpu:::.node_sessions)))
  expect_identical(unlist(open), c(0L, 0L))

  cl2 <- node_cluster()
  on.exit(stop_nodes(cl2))
  parallel::clusterCall(cl2[2], function() options(gamgpu.node_fault = list(op = "gram",
                                                                             action = "exit")))
  t <- system.time(expect_error(
    gam_gpu(y ~ s(x), family = binomial, data = d, cluster = cl2, device = "off"),
    class = "gamgpu_cluster_node_lost"))[["elapsed"]]
  expect_lt(t, 10)
  open <- parallel::clusterCall(cl2[1], function() length(ls(gamgpu:::.node_sessions)))
  expect_identical(unlist(open), 0L)
})

test_that("a cluster fit is an mgcv gam object: predict, summary, plot", {
  d <- cluster_data(n = 4000)
  d$y <- rbinom(nrow(d), 1, plogis(d$f - 1))
  a <- gam_gpu(y ~ s(x) + s(z) + g, family = binomial, data = d, device = "off")
  b <- gam_gpu(y ~ s(x) + s(z) + g, family = binomial, data = d, device = "off", cluster = cl)
  nd <- d[1:50, ]
  expect_lt(max(abs(predict(b, nd) - predict(a, nd))), 1e-10)
  expect_lt(max(abs(predict(b, nd, type = "response", se.fit = TRUE)$se.fit -
                    predict(a, nd, type = "response", se.fit = TRUE)$se.fit)), 1e-10)
  sa <- summary(a)
  sb <- summary(b)
  expect_equal(sb$s.table, sa$s.table, tolerance = 1e-8)
  expect_equal(sb$dev.expl, sa$dev.expl, tolerance = 1e-10)
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(b, pages = 1))
})

test_that("gpu_cluster() needs a usable GPU, and gives one node per GPU", {
  if (!isTRUE(gpu_info("auto")$usable)) {
    expect_error(gpu_cluster(), class = "gamgpu_device_unavailable")
    skip("no usable GPU: one node per GPU not tried")
  }
  expect_error(gpu_cluster(gpus = 99), class = "gamgpu_bad_input")
  g <- gpu_cluster(gpus = 0)
  on.exit(parallel::stopCluster(g))
  expect_length(g, 1L)
  d <- cluster_data(n = 4000)
  d$y <- d$f + rnorm(nrow(d))
  b <- gam_gpu(y ~ s(x) + s(z), data = d, cluster = g, device = "required")
  expect_identical(b$device$cluster$nodes$device, "cuda:0")
  a <- gam_gpu(y ~ s(x) + s(z), data = d, device = "required")
  expect_lt(max(abs(b$fitted.values - a$fitted.values)) / diff(range(a$fitted.values)), 1e-10)
})

test_that("an interrupt while the nodes answer ends the fit and says to stop the cluster", {
  skip_if(identical(Sys.getenv("GAMGPU_TEST_SIGINT"), "0"), "GAMGPU_TEST_SIGINT=0: no SIGINT sent")
  skip_on_os("windows")
  d <- cluster_data(n = 3000)
  d$y <- rbinom(nrow(d), 1, plogis(d$f - 1))
  cl3 <- node_cluster()
  on.exit(stop_nodes(cl3))
  parallel::clusterCall(cl3[1], function(pid) options(gamgpu.node_fault = list(
    op = "gram", action = "interrupt", pid = pid)), Sys.getpid())
  r <- tryCatch(gam_gpu(y ~ s(x), family = binomial, data = d, cluster = cl3, device = "off"),
                gamgpu_interrupted = function(e) e, interrupt = function(e) e)
  expect_s3_class(r, "gamgpu_interrupted")
  expect_match(conditionMessage(r), "stop it (parallel::stopCluster()", fixed = TRUE)
  expect_null(parallel::stopCluster(cl3))
})

test_that("the file's cluster stops", {
  expect_null(parallel::stopCluster(cl))
})
