# bench/cluster_cost.R -- the cost model of a fit over a cluster's nodes
# (issue 38), fitted to the measured rows of bench/cluster.R and
# bench/cluster_shards.R, and what it predicts (not a test).
#
#   Rscript bench/cluster_cost.R [csv ...]
#
# (default: every inst/benchmarks/cluster_*.csv and shards_*.csv)
#
# Per penalized IRLS iteration, over N nodes of n rows in all,
#   t_iter = t_one(n / N) + o + r * round trips
#            + N * (8 p^2 + 16 p * round trips) bytes / bandwidth
# where t_one(m) is one machine's time per iteration on m rows, per kind
# of node (CPU, GPU): through the measured points -- the one-process fits
# beside the clusters, and the clusters whose nodes shared one machine (m
# = all their rows, less o) -- linear between them and from 0 to the
# smallest, and beyond the largest at the largest's time per row (a GPU
# whose rows leave no room for X streams it, at about twice a resident
# X's time per row: the rate of the largest measured is the one that
# holds there); o the measured
# overhead of a cluster's iteration over one process's on the same rows
# (its median over the rows with more than one node, at least 0: with the
# nodes sharing one machine, as measured, their parallel speed-up is not
# counted), and the network's: a round trip of GAMGPU_COST_RTT_MS (default
# 0.5 ms) and GAMGPU_COST_GBPS (default 10 Gbit/s) at the leader, p =
# GAMGPU_COST_P coefficients (default 37: the four cr smooths measured).
# Prints the fit per kind of node and the predicted time per iteration and
# per fit (GAMGPU_COST_ITER iterations, default 6) at 1e10 and 1e11 rows
# over 10, 100 and 1000 nodes of that kind, with each node's host memory
# at the measured peak per row (a shard larger than a machine holds is
# out of the model's reach: on the H200 host, 128 GiB).  GAMGPU_COST_OUT:
# also write the predictions to this CSV file.
args <- commandArgs(trailingOnly = TRUE)
files <- if (length(args)) args else
  Sys.glob(file.path("inst", "benchmarks", c("cluster_*.csv", "shards_*.csv")))
gbps <- as.numeric(Sys.getenv("GAMGPU_COST_GBPS", "10"))
iters <- as.numeric(Sys.getenv("GAMGPU_COST_ITER", "6"))
rtt <- as.numeric(Sys.getenv("GAMGPU_COST_RTT_MS", "0.5")) / 1000
p <- as.integer(Sys.getenv("GAMGPU_COST_P", "37"))
out <- Sys.getenv("GAMGPU_COST_OUT", "")
pred <- list()
if (!length(files)) stop("no measured rows: run bench/cluster.R or bench/cluster_shards.R first")

rows <- do.call(rbind, lapply(files, function(f) {
  d <- utils::read.csv(f, stringsAsFactors = FALSE)
  # (the fREML fits' rows alone: not this script's predictions, nor
  # bench/cluster_methods.R's gam() methods)
  if (!"t_iter_cluster" %in% names(d)) return(NULL)
  # (and fREML's: gam()'s methods' time is their outer iteration's)
  if ("method" %in% names(d)) d <- d[d$method == "fREML", , drop = FALSE]
  if (!nrow(d)) return(NULL)
  kind <- if ("node_device" %in% names(d)) ifelse(grepl("cuda", d$node_device), "gpu", "cpu")
          else ifelse(d$device == "off", "cpu", "gpu")
  it_one <- if ("t_iter_one" %in% names(d)) d$t_iter_one else d$iter_one / d$iterations
  data.frame(file = basename(f), n = d$n, nodes = d$nodes, kind = kind,
             t_iter = d$t_iter_cluster, t_iter_one = it_one,
             overhead = d$t_iter_cluster - it_one, calls_per_iter = d$calls_per_iter,
             # (bench/cluster.R's bytes count the shards sent at the set-up
             # and the n-vectors gathered at the end: per iteration only the
             # rows of bench/cluster_shards.R are the iterations' own)
             bytes_per_iter = if ("leader_peak_gib" %in% names(d)) d$bytes_per_iter else NA,
             node_bytes_per_row = if ("node_peak_gib" %in% names(d))
               d$node_peak_gib * 2^30 / d$rows_per_node else NA)
}))
cat(sprintf("%d measured rows from %s\n", nrow(rows), paste(unique(rows$file), collapse = ", ")))
print(rows[, c("kind", "n", "nodes", "t_iter", "t_iter_one", "overhead", "calls_per_iter",
               "bytes_per_iter")], digits = 3, row.names = FALSE)
for (kind in unique(rows$kind)) {
  r <- rows[rows$kind == kind & is.finite(rows$t_iter_one), ]
  multi <- r$nodes > 1
  o <- max(0, if (any(multi)) stats::median(r$overhead[multi], na.rm = TRUE) else 0)
  if (!is.finite(o)) o <- 0
  rr <- rows[rows$kind == kind, ]
  pts <- rbind(data.frame(m = r$n, t = r$t_iter_one),
               data.frame(m = rr$n[rr$nodes > 1 & !is.finite(rr$t_iter_one)],
                          t = rr$t_iter[rr$nodes > 1 & !is.finite(rr$t_iter_one)] - o))
  one <- stats::aggregate(t ~ m, data = unique(pts), FUN = stats::median)
  one <- one[order(one$m), ]
  t_one <- function(m) {
    top <- one[nrow(one), ]
    ifelse(m > top$m, top$t * m / top$m,
           stats::approx(c(0, one$m), c(0, one$t), xout = pmin(m, top$m))$y)
  }
  trips <- stats::median(r$calls_per_iter)
  # bytes per node and iteration: the Gram (p^2 doubles) and a few
  # p-vectors (beta out, X'Wz back) per round trip
  bytes <- 8 * p^2 + 8 * p * 2 * trips
  measured <- r$bytes_per_iter / r$nodes
  cat(sprintf(paste("\n%s nodes: one machine's time per iteration at %s rows: %s s (%s ns a row);",
                    "a cluster's overhead %.1f ms per iteration (median of %d rows)\n"),
              kind, paste(format(one$m), collapse = ", "), paste(signif(one$t, 3), collapse = ", "),
              paste(signif(1e9 * one$t / one$m, 3), collapse = ", "), 1000 * o, sum(multi)))
  cat(sprintf("  per node and iteration: %.1f round trips (measured), %.0f bytes (8 p^2 + 16 p per trip, p = %d; measured: %s)\n",
              trips, bytes, p,
              if (all(is.na(measured))) "none" else paste(round(stats::na.omit(measured)), collapse = ", ")))
  grid <- expand.grid(n = c(1e10, 1e11), nodes = c(10, 100, 1000))
  grid$rows_per_node <- grid$n / grid$nodes
  grid$t_iter <- t_one(grid$rows_per_node) + o + trips * rtt +
    grid$nodes * bytes * 8 / (gbps * 1e9)
  grid$t_fit <- iters * grid$t_iter
  # (a node's host memory at the measured peak per row, largest shard:
  # whether one machine holds the shard)
  per_row <- r$node_bytes_per_row[which.max(ifelse(is.na(r$node_bytes_per_row), -1,
                                                  r$n / r$nodes))]
  grid$node_gib <- if (length(per_row) && is.finite(per_row)) grid$rows_per_node * per_row / 2^30 else NA
  cat(sprintf("  predicted (%.0f iterations, %.1f ms round trips, %g Gbit/s at the leader):\n",
              iters, rtt * 1000, gbps))
  print(grid, digits = 3, row.names = FALSE)
  pred[[kind]] <- cbind(kind = kind, grid, ns_per_row_largest = 1e9 * one$t[nrow(one)] / one$m[nrow(one)],
                        largest_measured = one$m[nrow(one)], overhead_ms = 1000 * o,
                        round_trips = trips, bytes_per_node = bytes, rtt_ms = rtt * 1000,
                        gbps = gbps, iterations = iters,
                        measured = paste(unique(r$file), collapse = ";"))
}
if (nzchar(out)) utils::write.csv(do.call(rbind, pred), out, row.names = FALSE)
