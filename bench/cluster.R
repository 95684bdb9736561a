# bench/cluster.R -- gam_gpu(cluster = cl) (issue 38): a fit over k local
# PSOCK nodes against the one-process fit of the same data, in one leader
# process (not a test).
#
#   Rscript bench/cluster.R [n ...]          (default 1e6)
#
# Environment:
#   GAMGPU_BENCH_NODES   node counts (default "1,2")
#   GAMGPU_BENCH_DEVICE  device policy of the fits and the nodes ("off" by
#                        default; "required" on the GPU machine: the nodes
#                        then share its GPU)
#   GAMGPU_BENCH_FAMILY  "binomial" (default) or "gaussian"
#   GAMGPU_BENCH_OUT     also write the rows to this CSV file
#
# Model: four one-variable cr smooths of gamSim(1)'s covariates.  Per row:
# the one-process fit's and the cluster fit's seconds (total, setup,
# iterations; the cluster's second fit, its first on fresh nodes as cold;
# iterations), the penalized IRLS iterations, the cluster's round trips
# and bytes (both ways, all nodes), their mean per iteration, the
# overhead per iteration ((cluster - one process) iterations' time over
# the iterations), and the agreement of the fitted values (of their
# range).  The cost model of the docs fits
#   t_iter = a + b * rows per node + c * nodes
# to these rows (lm), printed at the end.
suppressMessages({library(mgcv); library(gamgpu); library(parallel)})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
ns <- if (length(args)) args else 1e6
nodes <- as.integer(strsplit(Sys.getenv("GAMGPU_BENCH_NODES", "1,2"), ",")[[1]])
device <- Sys.getenv("GAMGPU_BENCH_DEVICE", "off")
fam <- Sys.getenv("GAMGPU_BENCH_FAMILY", "binomial")
out <- Sys.getenv("GAMGPU_BENCH_OUT", "")

sim <- function(n) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  if (fam == "binomial") d$y <- rbinom(n, 1, plogis((d$f - mean(d$f)) / 4))
  d
}
fo <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
family <- if (fam == "binomial") binomial() else gaussian()
rows <- list()
for (n in ns) {
  d <- sim(n)
  t1 <- system.time(a <- gam_gpu(fo, family = family, data = d, device = device))[["elapsed"]]
  for (k in nodes) {
    cl <- makePSOCKcluster(k)
    invisible(clusterCall(cl, function(lib) {
      .libPaths(lib); suppressPackageStartupMessages(library(gamgpu)); NULL
    }, .libPaths()))
    # (a first fit on fresh nodes also pays their one-off costs -- loading
    # mgcv, timing the CPU's Gram products, compiling kernels -- reported
    # as cold; the row's times are a second fit's)
    t_cold <- system.time(gam_gpu(fo, family = family, data = d, device = device,
                                  cluster = cl))[["elapsed"]]
    t2 <- system.time(b <- gam_gpu(fo, family = family, data = d, device = device,
                                   cluster = cl))[["elapsed"]]
    stopCluster(cl)
    it <- as.integer(b$iter)
    cc <- b$device$cluster
    ta <- a$device$timings
    tb <- b$device$timings
    rows[[length(rows) + 1L]] <- data.frame(
      n = n, nodes = k, rows_per_node = n / k, family = fam, device = device,
      one_process = t1, cluster = t2, ratio = t2 / t1, cluster_cold = t_cold,
      setup_one = ta[["setup"]], setup_cluster = tb[["setup"]],
      iter_one = ta[["iterations"]], iter_cluster = tb[["iterations"]],
      iterations = it, calls = cc$calls, bytes = cc$bytes,
      calls_per_iter = cc$calls / it, bytes_per_iter = cc$bytes / it,
      t_iter_cluster = tb[["iterations"]] / it,
      overhead_per_iter = (tb[["iterations"]] - ta[["iterations"]]) / it,
      fit = max(abs(b$fitted.values - a$fitted.values)) / diff(range(a$fitted.values)))
    r <- rows[[length(rows)]]
    cat(sprintf("n %g nodes %d: one process %.2f s, cluster %.2f s (x%.2f); %d iterations, %.1f calls and %.0f bytes per iteration; overhead %.1f ms per iteration; fit %.1e\n",
                n, k, t1, t2, r$ratio, it, r$calls_per_iter, r$bytes_per_iter,
                1000 * r$overhead_per_iter, r$fit))
  }
}
tab <- do.call(rbind, rows)
print(tab[, c("n", "nodes", "one_process", "cluster", "ratio", "iterations", "calls_per_iter",
              "bytes_per_iter", "overhead_per_iter", "fit")], digits = 3)
if (nrow(tab) >= 3 && length(unique(tab$nodes)) > 1) {
  m <- lm(t_iter_cluster ~ rows_per_node + nodes, data = tab)
  cat("cost model: t_iter = a + b rows_per_node + c nodes\n")
  print(coef(m))
}
if (nzchar(out)) utils::write.csv(tab, out, row.names = FALSE)
