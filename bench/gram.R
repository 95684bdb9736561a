# Weighted Gram product X'WX (+ X'Wz, z'Wz): gamgpu on the device against
# gamgpu's CPU twin (BLAS over row chunks) and R's crossprod(X, w * X), in
# one process.  Prints times, ratios, achieved GFLOP/s and agreement.
#   Rscript bench/gram.R            (OPENBLAS_NUM_THREADS=1 for the table in DESIGN)
library(gamgpu)
cases <- list(c(1e6, 37), c(1e7, 37), c(1e6, 254))
if (nzchar(Sys.getenv("GAMGPU_BENCH_SMALL"))) cases <- list(c(1e5, 37), c(1e5, 254))
time_median <- function(f, reps = 3) median(vapply(seq_len(reps), function(i)
  system.time(f())[["elapsed"]], 0))
rows <- list()
for (cs in cases) {
  n <- cs[1]; p <- cs[2]
  set.seed(1)
  X <- matrix(runif(n * p, -1, 1), n); w <- runif(n); z <- runif(n, -1, 1)
  flops <- 2 * n * (p + 1)^2 / 2   # the symmetric half, as the kernel computes
  dev_ok <- isTRUE(gpu_info()$usable)
  if (dev_ok) gpu_gram(X, w, z, device = "required")    # compile + warm the arena
  t_dev <- if (dev_ok) time_median(function() gpu_gram(X, w, z, device = "required")) else NA
  t_cpu <- time_median(function() gpu_gram(X, w, z, device = "off"), reps = 1)
  t_r   <- if (n * p <= 1e8) time_median(function() crossprod(X, w * X), reps = 1) else NA
  g_cpu <- gpu_gram(X, w, z, device = "off")
  agree <- if (dev_ok) { g <- gpu_gram(X, w, z, device = "required")
    max(abs(g$XtWX - g_cpu$XtWX)) / max(abs(g_cpu$XtWX)) } else NA
  row <- data.frame(
    n = n, p = p, device_s = t_dev, cpu_s = t_cpu, crossprod_s = t_r,
    cpu_over_device = t_cpu / t_dev, device_gflops = flops / t_dev / 1e9,
    rel_diff = agree)
  print(row, digits = 3, row.names = FALSE)
  rows[[length(rows) + 1]] <- row
  rm(X); invisible(gc())
}
cat("\nall cases:\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
