# gam_gpu(data = gamgpu_shards(...), cluster = cl): each node loads its own
# rows (files, or a function of its index) and keeps them; the leader sees
# a sample.  Against the one-process fit of the concatenated data, and,
# where the set-up sample is smaller than the data, against every row's
# deviance, aic and summary computed here from the fit's predictions.

skip_on_os("windows")

cl <- node_cluster()

shard_frames <- function(n = 3000, seed = 7) {
  set.seed(seed)
  d <- data.frame(x = runif(n), z = runif(n), fac = factor(sample(c("a", "b", "c"), n, TRUE)),
                  w = runif(n, 0.5, 2), off = runif(n, -0.2, 0.2))
  d$f <- sin(6 * d$x) + d$z^2 + as.numeric(d$fac) / 4
  d$yg <- d$f + rnorm(n) / 2
  d$yb <- rbinom(n, 1, plogis(d$f - 1))
  d$yp <- rpois(n, exp(d$f / 2 + d$off))
  d
}

save_shards <- function(parts) {
  vapply(seq_along(parts), function(i) {
    f <- tempfile(sprintf("shard%d-", i), fileext = ".rds")
    saveRDS(parts[[i]], f)
    f
  }, "")
}

expect_shard_parity <- function(a, b, label, tol = 1e-10, sums_tol = 1e-11) {
  rng <- function(v) diff(range(v))
  expect_true(a$converged, label = label)
  expect_true(b$converged, label = label)
  expect_lt(max(abs(coef(b) - coef(a))) / rng(coef(a)), tol, label = paste(label, "coefficients"))
  expect_lt(max(abs(log(b$sp) - log(a$sp))), 1e-7, label = paste(label, "log sp"))
  expect_lt(max(abs(b$edf - a$edf)), 1e-8, label = paste(label, "edf"))
  for (v in c("deviance", "null.deviance", "aic", "df.residual"))
    expect_equal(b[[v]], a[[v]], tolerance = sums_tol, label = paste(label, v))
  sa <- summary(a)
  sb <- summary(b)
  expect_equal(sb$r.sq, sa$r.sq, tolerance = 1e-10, label = paste(label, "r.sq"))
  expect_equal(sb$dev.expl, sa$dev.expl, tolerance = 1e-10, label = paste(label, "dev.expl"))
  expect_identical(sb$n, sa$n)
  expect_equal(sb$residual.df, sa$residual.df, tolerance = 1e-12, label = paste(label, "residual.df"))
  expect_equal(sb$s.pv, sa$s.pv, tolerance = 1e-8, label = paste(label, "smooth p-values"))
  expect_equal(sb$p.pv, sa$p.pv, tolerance = 1e-8, label = paste(label, "parametric p-values"))
  expect_identical(b$device$backend, "cluster")
}

test_that("shards the nodes read from files fit as the one-process fit of their rows", {
  d <- shard_frames()
  # (three files over two nodes; the last shard lacks level "c" and a
  # level order of its own: the levels are rbind()'s union)
  parts <- split(d, rep(1:3, c(1200, 1000, 800)))
  parts[[3]] <- parts[[3]][parts[[3]]$fac != "c", ]
  parts[[3]]$fac <- factor(as.character(parts[[3]]$fac), levels = c("b", "a"))
  files <- save_shards(parts)
  on.exit(unlink(files))
  whole <- do.call(rbind, parts)
  cases <- list(
    list(yg ~ s(x) + s(z, bs = "cr") + fac, gaussian(), NULL),
    list(yb ~ s(x) + te(x, z, k = c(4, 4)) + s(fac, bs = "re"), binomial(), NULL),
    list(yp ~ s(x, by = fac) + s(z) + fac, poisson(), "off"))
  for (cs in cases) {
    label <- paste(cs[[2]]$family, deparse(cs[[1]]))
    a <- if (is.null(cs[[3]])) gam_gpu(cs[[1]], family = cs[[2]], data = whole, weights = w)
         else gam_gpu(cs[[1]], family = cs[[2]], data = whole, offset = off)
    b <- if (is.null(cs[[3]]))
      gam_gpu(cs[[1]], family = cs[[2]], data = gamgpu_shards(files), weights = w, cluster = cl)
    else gam_gpu(cs[[1]], family = cs[[2]], data = gamgpu_shards(files), offset = off,
                 cluster = cl)
    expect_shard_parity(a, b, label)
    expect_identical(levels(b$model$fac), levels(a$model$fac))
    expect_identical(b$device$cluster$nodes$rows, c(1200, 1000 + nrow(parts[[3]])))
    # (two nodes on this host share its cores)
    expect_identical(b$device$cluster$nodes$threads,
                     rep(as.integer(min(b$control$nthreads,
                                        max(1, parallel::detectCores(logical = FALSE) %/% 2))), 2L))
    # (every row sat in the set-up: the object holds them all)
    expect_equal(b$fitted.values, unname(a$fitted.values), tolerance = 1e-10)
    # (the CPU backend reads prior weights, ones included, as an n-vector; a
    # node whose GPU runs the fit keeps none where there are none)
    expect_identical(b$device$cluster$nodes$weights_vector,
                     is.null(cs[[3]]) | !startsWith(b$device$cluster$nodes$device, "cuda"))
  }
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("GCV.Cp of an additive model on shards: the rows of nonzero weight counted there", {
  d <- shard_frames(2000, seed = 3)
  d$w[1:7] <- 0
  files <- save_shards(split(d, rep(1:2, each = 1000)))
  on.exit(unlink(files))
  a <- gam_gpu(yg ~ s(x) + s(z) + fac, data = d, weights = w, method = "GCV.Cp")
  b <- gam_gpu(yg ~ s(x) + s(z) + fac, data = gamgpu_shards(files), weights = w,
               method = "GCV.Cp", cluster = cl)
  expect_shard_parity(a, b, "GCV.Cp")
  expect_equal(b$gcv.ubre, a$gcv.ubre, tolerance = 1e-11)
  expect_equal(b$sig2, a$sig2, tolerance = 1e-11)
})

test_that("nb() and negbin(theta) on shards: theta, null deviance and aic over every row", {
  d <- shard_frames(2400, seed = 5)
  d$yn <- rnbinom(nrow(d), mu = exp(1 + d$f / 2), size = 2)
  parts <- split(d, rep(1:2, c(1000, 1400)))
  files <- save_shards(parts)
  on.exit(unlink(files))
  for (fo in list(yn ~ s(x) + s(z) + s(fac, bs = "re"), yn ~ s(x) + s(z) + offset(off))) {
    a <- gam_gpu(fo, family = mgcv::nb(), data = d)
    b <- gam_gpu(fo, family = mgcv::nb(), data = gamgpu_shards(files), cluster = cl)
    label <- paste("nb", deparse(fo))
    # (with an offset, the null deviance's search and theta's sums over the
    # nodes' shards: 1.1e-10 of the deviance on the GPU machine)
    expect_shard_parity(a, b, label, sums_tol = 1e-9)
    expect_equal(b$family$getTheta(TRUE), a$family$getTheta(TRUE), tolerance = 1e-8,
                 label = paste(label, "theta"))
    expect_identical(b$family$family, a$family$family)
    expect_equal(b$weights, a$weights, tolerance = 1e-9, label = paste(label, "weights"))
    expect_equal(b$residuals, a$residuals, tolerance = 1e-9, label = paste(label, "residuals"))
  }
  a <- gam_gpu(yn ~ s(x) + s(z), family = mgcv::negbin(2), data = d)
  b <- gam_gpu(yn ~ s(x) + s(z), family = mgcv::negbin(2), data = gamgpu_shards(files),
               cluster = cl)
  expect_shard_parity(a, b, "negbin(2)")
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("a function of the node's index loads its shard; subset and NA rows drop there", {
  d <- shard_frames(2400, seed = 9)
  d$x[c(5, 1500)] <- NA
  d$yg[77] <- NA
  d$part <- rep(1:2, each = 1200)
  half <- split(d, d$part)
  files <- save_shards(half)
  on.exit(unlink(files))
  load_part <- function(i) readRDS(files[i])
  a <- gam_gpu(yg ~ s(x) + s(z), data = d, subset = z > 0.1, weights = w)
  b <- gam_gpu(yg ~ s(x) + s(z), data = gamgpu_shards(load_part), subset = z > 0.1,
               weights = w, cluster = cl)
  expect_shard_parity(a, b, "function shards, subset, NA")
  expect_identical(b$shards$na_rows, 3)
  expect_identical(b$shards$rows, nrow(a$model))
  # a node whose rows the subset removes takes no further part
  a <- gam_gpu(yg ~ s(x) + s(z), data = half[[1]], subset = part == 1, weights = w)
  b <- gam_gpu(yg ~ s(x) + s(z), data = gamgpu_shards(load_part), subset = part == 1,
               weights = w, cluster = cl)
  expect_identical(b$device$cluster$nodes$rows, as.numeric(nrow(a$model)))
  expect_shard_parity(a, b, "one node without rows")
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("a set-up sample smaller than the data: every row's deviance, aic and summary", {
  d <- shard_frames(3000, seed = 11)
  parts <- split(d, rep(1:2, each = 1500))
  files <- save_shards(parts)
  on.exit(unlink(files))
  fit <- gam_gpu(yp ~ s(x) + s(z) + fac + offset(off), family = poisson(),
                 data = gamgpu_shards(files), cluster = cl, chunk.size = 400)
  expect_true(fit$converged)
  expect_identical(fit$shards$rows, 3000L)
  expect_identical(fit$shards$sample_rows, 400L)
  expect_length(fit$fitted.values, 400L)
  expect_identical(nobs(fit), 3000L)
  # the fit's summaries over every row, from its own predictions here
  mu <- predict(fit, newdata = d, type = "response")
  expect_equal(fit$deviance, sum(poisson()$dev.resids(d$yp, mu, rep(1, 3000))),
               tolerance = 1e-12)
  expect_equal(fit$null.deviance,
               sum(poisson()$dev.resids(d$yp, mean(d$yp), rep(1, 3000))), tolerance = 1e-12)
  expect_equal(fit$aic, poisson()$aic(d$yp, 1, mu, rep(1, 3000), 0) + 2 * sum(fit$edf),
               tolerance = 1e-12)
  expect_equal(fit$df.residual, 3000 - sum(fit$edf), tolerance = 1e-14)
  # summary() against mgcv's summary.gam() of the object with every row
  full <- fit
  class(full) <- c("gam", "glm", "lm")
  full$y <- d$yp
  full$fitted.values <- unname(mu)
  full$prior.weights <- rep(1, 3000)
  full$model <- d
  s_full <- mgcv::summary.gam(full)
  s_fit <- summary(fit)
  expect_identical(s_fit$n, 3000L)
  for (v in c("r.sq", "residual.df", "s.pv", "p.pv", "dev.expl", "pTerms.pv"))
    expect_equal(s_fit[[v]], s_full[[v]], tolerance = 1e-10, label = v)
  # the minima, medians and maxima of every row in var.summary, as
  # variable.summary() makes them from every row
  for (v in c("x", "z"))
    expect_identical(fit$var.summary[[v]],
                     c(min(d[[v]]), quantile(d[[v]], 0.5, type = 3, names = FALSE), max(d[[v]])))
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("every row's median is selected over the shards exactly, ties and all", {
  # (shard_median()'s rounds, with few values drawn and fetched so that
  # they run here: uneven shards, heavy ties, an empty node's part)
  key <- "median-test"
  on.exit(parallel::clusterCall(cl, gamgpu:::gg_shard_drop, key), add = TRUE)
  set.seed(7)
  cases <- list(runif(5001), round(rnorm(4000), 1), c(rep(2, 3000), runif(999)),
                c(rep(0, 10), 1:2000), as.numeric(sample(3, 1500, TRUE)))
  for (x in cases) {
    cut <- sort(sample(length(x), 1))
    parts <- list(data.frame(v = x[seq_len(cut)]), data.frame(v = x[-seq_len(cut)]))
    parallel::clusterApply(cl, parts, function(p, key) {
      assign(key, p, envir = gamgpu:::.node_shards)
      NULL
    }, key)
    rows <- vapply(parts, nrow, 0)
    for (fetch in c(30, 200)) {
      m <- gamgpu:::shard_median(cl, key, "v", rows, new.env(), draw = 50, fetch = fetch)
      expect_identical(m, quantile(x, 0.5, type = 3, names = FALSE))
    }
  }
})

test_that("shards without a cluster, of tw() or lacking a variable are refused", {
  d <- shard_frames(600)
  files <- save_shards(split(d, rep(1:2, each = 300)))
  on.exit(unlink(files))
  expect_error(gam_gpu(yg ~ s(x), data = gamgpu_shards(files)), class = "gamgpu_bad_input")
  expect_error(gamgpu_shards(1:3), class = "gamgpu_bad_input")
  expect_error(gamgpu_shards(character(0)), class = "gamgpu_bad_input")
  expect_error(gam_gpu(yp ~ s(x), family = mgcv::tw(), data = gamgpu_shards(files),
                       cluster = cl), class = "gamgpu_unsupported_argument")
  expect_error(gam_gpu(yg ~ s(x) + s(nope), data = gamgpu_shards(files), cluster = cl),
               class = "gamgpu_cluster_node_error")
  # (a variable of another type in one shard: refused after the loading,
  # which is then let go)
  mixed <- split(d, rep(1:2, each = 300))
  mixed[[2]]$x <- as.character(mixed[[2]]$x)
  mf <- save_shards(mixed)
  on.exit(unlink(mf), add = TRUE)
  expect_error(gam_gpu(yg ~ s(x), data = gamgpu_shards(mf), cluster = cl),
               class = "gamgpu_bad_input")
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
  expect_error(gam_gpu(yg ~ s(x), data = gamgpu_shards(files), cluster = cl,
                       na.action = na.pass),
               class = "gamgpu_unsupported_argument")
  d$yb[3] <- 2
  bad <- save_shards(split(d, rep(1:2, each = 300)))
  on.exit(unlink(bad), add = TRUE)
  expect_error(gam_gpu(yb ~ s(x), family = binomial(), data = gamgpu_shards(bad), cluster = cl),
               class = "gamgpu_bad_response")
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("a node lost mid-fit is a classed error; the shards of the live node are let go", {
  d <- shard_frames(1200)
  files <- save_shards(split(d, rep(1:2, each = 600)))
  on.exit(unlink(files))
  cl2 <- node_cluster()
  on.exit(stop_nodes(cl2), add = TRUE)
  parallel::clusterCall(cl2[2], function() options(gamgpu.node_fault = list(op = "gram",
                                                                           action = "exit")))
  t0 <- proc.time()[["elapsed"]]
  expect_error(gam_gpu(yg ~ s(x) + s(z), data = gamgpu_shards(files), cluster = cl2),
               class = "gamgpu_cluster_node_lost")
  expect_lt(proc.time()[["elapsed"]] - t0, 30)
  expect_identical(nodes_hold_nothing(cl2[1]), list(c(0L, 0L)))
})

test_that("on the GPU the nodes build X on the device, their summaries as the CPU's", {
  skip_if_no_device()
  d <- shard_frames(4000, seed = 13)
  files <- save_shards(split(d, rep(1:2, each = 2000)))
  on.exit(unlink(files))
  a <- gam_gpu(yb ~ s(x) + s(z) + fac, family = binomial(), data = d, device = "off")
  b <- gam_gpu(yb ~ s(x) + s(z) + fac, family = binomial(), data = gamgpu_shards(files),
               cluster = cl, device = "required")
  expect_identical(b$device$cluster$nodes$device, rep("cuda:0", 2))
  expect_identical(b$device$cluster$nodes$model_matrix, rep("recipe", 2))
  # (no prior weights: a node whose device runs the fit keeps no ones; the
  # summaries that read them -- aic, r.sq -- take NULL as ones)
  expect_identical(b$device$cluster$nodes$weights_vector, c(FALSE, FALSE))
  expect_shard_parity(a, b, "GPU nodes against the CPU", sums_tol = 1e-10)
  aw <- gam_gpu(yp ~ s(x) + s(z) + fac, family = poisson(), data = d, weights = w,
                device = "off")
  bw <- gam_gpu(yp ~ s(x) + s(z) + fac, family = poisson(), data = gamgpu_shards(files),
                weights = w, cluster = cl, device = "required")
  expect_identical(bw$device$cluster$nodes$weights_vector, c(TRUE, TRUE))
  expect_shard_parity(aw, bw, "GPU nodes with prior weights", sums_tol = 1e-10)
  expect_identical(nodes_hold_nothing(cl), list(c(0L, 0L), c(0L, 0L)))
})

test_that("an interrupt while the nodes answer a shard fit ends it; the cluster is not asked again", {
  skip_if(identical(Sys.getenv("GAMGPU_TEST_SIGINT"), "0"), "GAMGPU_TEST_SIGINT=0: no SIGINT sent")
  d <- shard_frames(1200)
  files <- save_shards(split(d, rep(1:2, each = 600)))
  on.exit(unlink(files))
  cl3 <- node_cluster()
  on.exit(stop_nodes(cl3), add = TRUE)
  parallel::clusterCall(cl3[1], function(pid) options(gamgpu.node_fault = list(
    op = "gram", action = "interrupt", pid = pid)), Sys.getpid())
  t0 <- proc.time()[["elapsed"]]
  r <- tryCatch(gam_gpu(yb ~ s(x), family = binomial, data = gamgpu_shards(files),
                        cluster = cl3, device = "off"),
                gamgpu_interrupted = function(e) e, interrupt = function(e) e)
  expect_s3_class(r, "gamgpu_interrupted")
  expect_lt(proc.time()[["elapsed"]] - t0, 30)
  expect_null(parallel::stopCluster(cl3))
})

parallel::stopCluster(cl)
