# bench/cluster_methods.R -- gam()'s methods (REML, ML, GCV.Cp beyond the
# additive model) with the rows on k local PSOCK nodes (issue 38), against
# mgcv::gam() and the one-process gam_gpu() fit of the same data, in one
# leader process (not a test).
#
#   Rscript bench/cluster_methods.R [n ...]        (default 2e4 1e5)
#
# Environment:
#   GAMGPU_BENCH_NODES    node counts (default "2")
#   GAMGPU_BENCH_METHODS  methods (default "REML,ML")
#   GAMGPU_BENCH_DEVICE   device policy of the fits and the nodes ("off" by
#                         default; "required" on the GPU machine: the nodes
#                         then share its GPU)
#   GAMGPU_BENCH_GAM_MAX  the largest n that gam() is timed at (default 1e5)
#   GAMGPU_BENCH_OUT      also write the rows to this CSV file
#   GAMGPU_BENCH_DATA     "memory" (default: the data in the leader's
#                         session) or "shards" (the rows in one file per
#                         node, which the nodes read: gamgpu_shards(); the
#                         leader's set-up on its chunk.size sample, so the
#                         fit agrees with the others as their bases do)
#
# Model: binomial, y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(5, 5)),
# gamSim(1)'s covariates.  Per row: gam()'s seconds (nthreads = the
# machine's cores), the one-process and the cluster fit's (the cluster's
# second fit on its nodes), the ratios, the cluster's round trips and
# bytes, and the agreement of the fitted values (over the first 1e4 rows,
# of their range) and the score with gam()'s and the one-process fit's.
suppressMessages({library(mgcv); library(gamgpu); library(parallel)})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
ns <- if (length(args)) args else c(2e4, 1e5)
nodes <- as.integer(strsplit(Sys.getenv("GAMGPU_BENCH_NODES", "2"), ",")[[1]])
methods <- strsplit(Sys.getenv("GAMGPU_BENCH_METHODS", "REML,ML"), ",")[[1]]
device <- Sys.getenv("GAMGPU_BENCH_DEVICE", "off")
gam_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_GAM_MAX", "1e5"))
out <- Sys.getenv("GAMGPU_BENCH_OUT", "")
data_kind <- Sys.getenv("GAMGPU_BENCH_DATA", "memory")
cores <- parallel::detectCores()

fo <- y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(5, 5))
rng <- function(v) diff(range(v))
rows <- list()
for (n in ns) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$y <- rbinom(n, 1, plogis((d$f - mean(d$f)) / 4))
  for (m in methods) {
    tg <- NA
    g <- NULL
    if (n <= gam_max)
      tg <- system.time(g <- gam(fo, family = binomial, data = d, method = m,
                                 control = gam.control(nthreads = cores)))[["elapsed"]]
    t1 <- system.time(a <- gam_gpu(fo, family = binomial, data = d, method = m,
                                   device = device))[["elapsed"]]
    for (k in nodes) {
      cl <- makePSOCKcluster(k)
      invisible(clusterCall(cl, function(lib) {
        .libPaths(lib); suppressPackageStartupMessages(library(gamgpu)); NULL
      }, .libPaths()))
      dk <- d
      if (data_kind == "shards") {
        cut <- floor(seq(0, n, length.out = k + 1L))
        files <- vapply(seq_len(k), function(i) {
          f <- tempfile(fileext = ".rds")
          saveRDS(d[(cut[i] + 1):cut[i + 1L], c("x0", "x1", "x2", "x3", "y")], f)
          f
        }, "")
        dk <- gamgpu_shards(files)
      }
      gam_gpu(fo, family = binomial, data = dk, method = m, device = device, cluster = cl)
      t2 <- system.time(b <- gam_gpu(fo, family = binomial, data = dk, method = m,
                                     device = device, cluster = cl))[["elapsed"]]
      stopCluster(cl)
      if (data_kind == "shards") unlink(files)
      cc <- b$device$cluster
      # (the fitted values over the first 1e4 rows: a shards fit's object
      # holds its set-up sample's rows)
      rr <- seq_len(min(n, 1e4))
      fb <- if (data_kind == "shards") predict(b, d[rr, ], type = "response") else
        b$fitted.values[rr]
      r <- data.frame(
        n = n, method = m, nodes = k, device = device, data = data_kind, gam = tg,
        one_process = t1,
        cluster = t2, gam_over_cluster = tg / t2, cluster_over_one = t2 / t1,
        calls = cc$calls, bytes = cc$bytes,
        fit_vs_gam = if (!is.null(g)) max(abs(fb - g$fitted.values[rr])) / rng(g$fitted.values) else NA,
        score_vs_gam = if (!is.null(g)) b$gcv.ubre[[1]] / g$gcv.ubre[[1]] - 1 else NA,
        fit_vs_one = max(abs(fb - a$fitted.values[rr])) / rng(a$fitted.values),
        score_vs_one = b$gcv.ubre[[1]] / a$gcv.ubre[[1]] - 1)
      rows[[length(rows) + 1L]] <- r
      cat(sprintf("n %g %s nodes %d: gam() %.2f s, one process %.2f s, cluster %.2f s (gam/cluster x%.2f, cluster/one x%.2f); %d calls, %.2g bytes; fit vs gam %.1e, vs one %.1e\n",
                  n, m, k, tg, t1, t2, r$gam_over_cluster, r$cluster_over_one, cc$calls,
                  cc$bytes, r$fit_vs_gam, r$fit_vs_one))
    }
  }
}
tab <- do.call(rbind, rows)
print(tab, digits = 3)
if (nzchar(out)) utils::write.csv(tab, out, row.names = FALSE)
