# bench/cluster_cost.R -- the cost model of a fit over a cluster's nodes
# (issue 38), fitted to the measured rows of bench/cluster.R and
# bench/cluster_shards.R, and what it predicts (not a test).
#
#   Rscript bench/cluster_cost.R [csv ...]
#
# (default: every inst/benchmarks/cluster_*.csv and shards_*.csv)
#
# Per penalized IRLS iteration,
#   t_iter = t_leader + b * rows per node + r * round trips
#            + nodes * (8 p^2 + 16 p * round trips) bytes / bandwidth
# where b is a node's seconds per row (its slowest node's; fitted per kind
# of node: the CPU rows and the GPU rows separately), the round trips and
# bytes are the measured ones (a round trip's cost r and the leader's p x p
# work t_leader fitted together as the intercept on one host, where the
# network is local), and the bandwidth is the network's (an assumption,
# GAMGPU_COST_GBPS, default 10 Gbit/s; localhost's is far above it).
# Prints the fit per kind of node and, for each kind, the predicted time
# per iteration and per fit (GAMGPU_COST_ITER iterations, default 6) at
# 1e10 and 1e11 rows over 10, 100 and 1000 nodes, with a round trip of
# GAMGPU_COST_RTT_MS (default 0.5 ms) on a real network.
args <- commandArgs(trailingOnly = TRUE)
files <- if (length(args)) args else
  Sys.glob(file.path("inst", "benchmarks", c("cluster_*.csv", "shards_*.csv")))
gbps <- as.numeric(Sys.getenv("GAMGPU_COST_GBPS", "10"))
iters <- as.numeric(Sys.getenv("GAMGPU_COST_ITER", "6"))
rtt <- as.numeric(Sys.getenv("GAMGPU_COST_RTT_MS", "0.5")) / 1000
p <- as.integer(Sys.getenv("GAMGPU_COST_P", "37"))
if (!length(files)) stop("no measured rows: run bench/cluster.R or bench/cluster_shards.R first")

rows <- do.call(rbind, lapply(files, function(f) {
  d <- utils::read.csv(f, stringsAsFactors = FALSE)
  kind <- if ("node_device" %in% names(d)) ifelse(grepl("cuda", d$node_device), "gpu", "cpu")
          else ifelse(d$device == "off", "cpu", "gpu")
  data.frame(file = basename(f), n = d$n, nodes = d$nodes, rows_per_node = d$rows_per_node,
             kind = kind, t_iter = d$t_iter_cluster, calls_per_iter = d$calls_per_iter,
             # (bench/cluster.R's bytes count the shards sent at the set-up
             # and the n-vectors gathered at the end: per iteration only the
             # rows of bench/cluster_shards.R are the iterations' own)
             bytes_per_iter = if ("leader_peak_gib" %in% names(d)) d$bytes_per_iter else NA)
}))
cat(sprintf("%d measured rows from %s\n", nrow(rows), paste(unique(rows$file), collapse = ", ")))
print(rows[, c("kind", "n", "nodes", "rows_per_node", "t_iter", "calls_per_iter",
               "bytes_per_iter")], digits = 3, row.names = FALSE)
for (kind in unique(rows$kind)) {
  r <- rows[rows$kind == kind, ]
  if (length(unique(r$rows_per_node)) < 2L) {
    cat(sprintf("\n%s nodes: too few distinct shard sizes to fit\n", kind))
    next
  }
  m <- stats::lm(t_iter ~ rows_per_node, data = r)
  # (a negative intercept is noise about a small one: then through 0)
  if (stats::coef(m)[[1]] < 0) m <- stats::lm(t_iter ~ 0 + rows_per_node, data = r)
  a <- if (length(stats::coef(m)) == 2L) stats::coef(m)[[1]] else 0
  b <- stats::coef(m)[["rows_per_node"]]
  cat(sprintf(paste("\n%s nodes: t_iter = %.3g s + %.3g ns x rows per node",
                    "(R^2 %.3f, %d rows)\n"), kind, a, b * 1e9, summary(m)$r.squared, nrow(r)))
  trips <- stats::median(r$calls_per_iter)
  # bytes per node and iteration: the Gram (p^2 doubles) and a few
  # p-vectors (beta out, X'Wz back) per round trip
  bytes <- 8 * p^2 + 8 * p * 2 * trips
  measured <- r$bytes_per_iter / r$nodes
  cat(sprintf("  per node and iteration: %.1f round trips (measured), %.0f bytes (8 p^2 + 16 p per trip, p = %d; measured: %s)\n",
              trips, bytes, p,
              if (all(is.na(measured))) "none" else paste(round(stats::na.omit(measured)), collapse = ", ")))
  grid <- expand.grid(n = c(1e10, 1e11), nodes = c(10, 100, 1000))
  grid$rows_per_node <- grid$n / grid$nodes
  grid$t_iter <- a + b * grid$rows_per_node + trips * rtt + grid$nodes * bytes * 8 / (gbps * 1e9)
  grid$t_fit <- iters * grid$t_iter
  cat(sprintf("  predicted (%.0f iterations, %.1f ms round trips, %g Gbit/s at the leader):\n",
              iters, rtt * 1000, gbps))
  print(grid, digits = 3, row.names = FALSE)
}
