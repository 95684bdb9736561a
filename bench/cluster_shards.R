# bench/cluster_shards.R -- gam_gpu(data = gamgpu_shards(), cluster = cl)
# (issue 38): rows the nodes make and keep themselves, the leader holding
# only the set-up sample; one leader process per call, so that its peak
# memory is this fit's (not a test).
#
#   Rscript bench/cluster_shards.R n nodes [one]
#
#   n      rows in all (each node makes n / nodes of them, from its index)
#   nodes  local PSOCK nodes
#   one    1: also the one-process fit of the same rows, made in this
#          process (its time per iteration and the agreement over the
#          first 1e6 rows; it raises
#          this process's peak memory, which is then not the leader's
#          alone)
#
# Environment:
#   GAMGPU_BENCH_DEVICE  device policy of the fits and the nodes ("off" by
#                        default; "required" on the GPU machine: the nodes
#                        then share its GPU)
#   GAMGPU_BENCH_FAMILY  "binomial" (default) or "gaussian"
#   GAMGPU_BENCH_METHOD  "fREML" (default), or one of gam()'s methods
#                        ("REML", "ML", ...: the outer iteration's row sums
#                        on the nodes, R/shards_outer.R)
#   GAMGPU_BENCH_OUT     append the row to this CSV file
#   GAMGPU_BENCH_COLD    0: no first fit on fresh nodes before the measured
#                        one (which then pays the nodes' one-off costs)
#   GAMGPU_BENCH_MAKE_CORES  processes each node makes its rows with
#                        (forked, 1e7 rows each; default 1)
#
# Model: four one-variable cr smooths of gamSim(1)'s covariates, the rows
# made on the nodes (node i, chunk c: set.seed(i * 1e5 + c)).  The row: seconds of the
# cluster's second fit (its first, on fresh nodes, as cold; both with the
# nodes' making of their rows, which the one-process fit's clock does not
# see), of its smoothing parameter selection (gam()'s methods' outer
# iteration; fREML's is in its iterations) and of its iterations, the penalized IRLS iterations, round trips and bytes (both
# ways, all nodes) per iteration, the leader's and the largest node's
# peak resident memory (VmHWM, GiB), the largest node's device memory
# (its arena's buffers after the fit, GiB), and with `one` the one-process fit's
# seconds, the overhead per iteration and the agreement of the fitted
# values (of their range; above chunk.size rows the set-ups' samples
# differ, and with them the bases a little).
suppressMessages({library(mgcv); library(gamgpu); library(parallel)})
args <- commandArgs(trailingOnly = TRUE)
n <- as.numeric(args[1])
k <- as.integer(args[2])
one <- length(args) > 2 && args[3] == "1"
device <- Sys.getenv("GAMGPU_BENCH_DEVICE", "off")
fam <- Sys.getenv("GAMGPU_BENCH_FAMILY", "binomial")
out <- Sys.getenv("GAMGPU_BENCH_OUT", "")
method <- Sys.getenv("GAMGPU_BENCH_METHOD", "fREML")

peak_gib <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 2^20
}

# node i's rows (a function of its index, sent to the nodes), made 1e7 at
# a time into their columns so that a node's peak is its rows and a few
# chunks' temporaries (10^9 rows a node are 40 GB of columns).  Chunk c of
# node i draws from set.seed(i * 1e5 + c), so that the chunks can be made
# by GAMGPU_BENCH_MAKE_CORES forked processes of the node (R's arithmetic
# on one core makes 10^9 rows in ~10 minutes) with the same values.
make_rows <- function(i, n, k, fam) {
  m <- floor(n * i / k) - floor(n * (i - 1) / k)
  x0 <- double(m); x1 <- double(m); x2 <- double(m); x3 <- double(m)
  # (y as doubles: the fit takes its response as doubles, and an integer y
  # would be held twice at the node's peak, 12 bytes a row for 8)
  y <- double(m)
  starts <- seq(0, m - 1, by = 1e7)
  chunk <- function(c) {
    set.seed(i * 1e5 + c)
    len <- min(m, starts[c] + 1e7) - starts[c]
    a0 <- runif(len); a1 <- runif(len); a2 <- runif(len)
    f <- 2 * sin(pi * a0) + exp(2 * a1) + 0.2 * a2^11 * (10 * (1 - a2))^6 +
      10 * (10 * a2)^3 * (1 - a2)^10
    list(a0, a1, a2, runif(len),
         if (fam == "binomial") as.double(runif(len) < plogis((f - 7.5) / 4)) else
           f + rnorm(len, 0, 2))
  }
  cores <- max(1L, as.integer(Sys.getenv("GAMGPU_BENCH_MAKE_CORES", "1")))
  for (b in split(seq_along(starts), ceiling(seq_along(starts) / cores))) {
    parts <- if (cores > 1L) parallel::mclapply(b, chunk, mc.cores = cores) else lapply(b, chunk)
    for (j in seq_along(b)) {
      v <- parts[[j]]
      if (inherits(v, "try-error") || !is.list(v)) stop("making rows: ", as.character(v))
      r <- (starts[b[j]] + 1):(starts[b[j]] + length(v[[1]]))
      x0[r] <- v[[1]]; x1[r] <- v[[2]]; x2[r] <- v[[3]]; x3[r] <- v[[4]]; y[r] <- v[[5]]
    }
    rm(parts, v)
  }
  # (a data frame of these columns, not copied)
  structure(list(x0 = x0, x1 = x1, x2 = x2, x3 = x3, y = y), class = "data.frame",
            row.names = c(NA_integer_, -as.integer(m)))
}

fo <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
family <- if (fam == "binomial") binomial() else gaussian()
shards <- gamgpu_shards(function(i) make_rows(i, n, k, fam))
environment(make_rows) <- globalenv()

cl <- makePSOCKcluster(k)
invisible(clusterCall(cl, function(lib) {
  .libPaths(lib); suppressPackageStartupMessages(library(gamgpu)); NULL
}, .libPaths()))
clusterExport(cl, c("make_rows", "n", "k", "fam"))
invisible(clusterCall(cl, Sys.setenv,
                      GAMGPU_BENCH_MAKE_CORES = Sys.getenv("GAMGPU_BENCH_MAKE_CORES", "1")))
# (GAMGPU_BENCH_COLD=0: one fit only, on fresh nodes -- for the largest n)
t_cold <- if (Sys.getenv("GAMGPU_BENCH_COLD", "1") == "0") NA else
  system.time(gam_gpu(fo, family = family, data = shards, device = device, method = method,
                      cluster = cl))[["elapsed"]]
t2 <- system.time(b <- gam_gpu(fo, family = family, data = shards, device = device, method = method,
                               cluster = cl))[["elapsed"]]
node_peak <- max(unlist(clusterCall(cl, function() {
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 2^20
})))
# (the device memory each node's fit held: its arena's cached buffers,
# which a fit leaves for the next; NA where the nodes have no device)
node_device <- max(unlist(clusterCall(cl, function() {
  a <- gamgpu::gpu_arena()
  if (is.na(attr(a, "device"))) NA_real_ else attr(a, "bytes_cached") / 2^30
})))
stopCluster(cl)
leader_peak <- peak_gib()
it <- as.integer(b$iter)
cc <- b$device$cluster
tb <- b$device$timings
row <- data.frame(n = n, nodes = k, rows_per_node = n / k, family = fam, method = method,
                  device = device,
                  node_device = paste(unique(cc$nodes$device), collapse = ";"),
                  cluster = t2, cluster_cold = t_cold, selection = tb[["selection"]],
                  iter_cluster = tb[["iterations"]],
                  iterations = it, calls = cc$calls, bytes = cc$bytes,
                  calls_per_iter = cc$calls / it, bytes_per_iter = cc$bytes / it,
                  t_iter_cluster = tb[["iterations"]] / it, leader_peak_gib = leader_peak,
                  node_peak_gib = node_peak, node_device_gib = node_device,
                  sample_rows = b$shards$sample_rows,
                  one_process = NA, t_iter_one = NA, overhead_per_iter = NA, agreement = NA)
# (gam()'s methods: the round trips and bytes are the outer iteration's,
# not the final fit's iterations')
if (method != "fREML") row$calls_per_iter <- row$bytes_per_iter <- NA
if (one) {
  d <- do.call(rbind, lapply(seq_len(k), make_rows, n = n, k = k, fam = fam))
  t1 <- system.time(a <- gam_gpu(fo, family = family, data = d, device = device,
                                 method = method))[["elapsed"]]
  ta <- a$device$timings
  row$one_process <- t1
  row$t_iter_one <- ta[["iterations"]] / a$iter
  row$overhead_per_iter <- row$t_iter_cluster - row$t_iter_one
  # (of the fitted values over the first 1e6 rows -- predict() in R over
  # every row of 1e8 takes minutes; above chunk.size rows the two set-ups
  # drew different samples, so their bases differ a little)
  r <- seq_len(min(nrow(d), 1e6))
  row$agreement <- max(abs(predict(b, newdata = d[r, ], type = "response") -
                           a$fitted.values[r])) / diff(range(a$fitted.values))
}
print(row, digits = 3)
cat(sprintf("n %g over %d nodes, %s: %.2f s (%d iterations; %d round trips and %.0f bytes in all); leader peak %.2f GiB, node peak %.2f GiB%s\n",
            n, k, method, t2, it, as.integer(cc$calls), cc$bytes, leader_peak, node_peak,
            if (one) sprintf("; one process %.2f s, overhead %.1f ms per iteration, agreement %.1e",
                             row$one_process, 1000 * row$overhead_per_iter, row$agreement) else ""))
if (nzchar(out))
  utils::write.table(row, out, sep = ",", row.names = FALSE, append = file.exists(out),
                     col.names = !file.exists(out), qmethod = "double")
