# bench/gam_methods.R -- gam()'s smoothness selection methods (issue 14):
# gam_gpu(method = "GCV.Cp" / "REML") on the device and on the CPU against
# mgcv::gam() with the same method, four smooths of gamSim(1), in one
# process (not a test).  On the GPU machine:
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/gam_methods.R [n ...]    (1e4 1e5 1e6)
#
# GAMGPU_BENCH_GAM_MAX (1e6): the largest n gam() is asked to fit;
# GAMGPU_BENCH_OUT: a CSV path.  Prints times, ratios (gam's time over
# gam_gpu's) and agreement: linear predictors (of their range), the
# criterion (relative), total EDF.
suppressMessages({library(mgcv); library(gamgpu)})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
ns <- if (length(args)) args else c(1e4, 1e5, 1e6)
gam_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_GAM_MAX", "1e6"))
out_csv <- Sys.getenv("GAMGPU_BENCH_OUT")
gpu <- isTRUE(gpu_info()$usable)
f <- y ~ s(x0) + s(x1) + s(x2) + s(x3)
elapsed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(time = t, value = v)
}
warm <- gamSim(1, n = 5000, dist = "normal", verbose = FALSE)
invisible(gam_gpu(f, data = warm, method = "GCV.Cp", device = if (gpu) "required" else "off"))
rows <- list()
for (n in ns) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  for (method in c("GCV.Cp", "REML")) {
    dev <- if (gpu) elapsed(gam_gpu(f, data = d, method = method, device = "required"))
    cpu <- elapsed(gam_gpu(f, data = d, method = method, device = "off"))
    ref <- if (n <= gam_max) elapsed(gam(f, data = d, method = method))
    agree <- function(g) {
      if (is.null(ref) || is.null(g)) return(c(NA, NA, NA))
      b <- ref$value
      c(max(abs(g$value$linear.predictors - b$linear.predictors)) / diff(range(b$linear.predictors)),
        (g$value$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]),
        sum(g$value$edf) - sum(b$edf))
    }
    a <- agree(if (gpu) dev else cpu)
    row <- data.frame(n = n, method = method, gpu = if (gpu) dev$time else NA,
                      cpu = cpu$time, gam = if (is.null(ref)) NA else ref$time,
                      x_gam_gpu = if (gpu && !is.null(ref)) ref$time / dev$time else NA,
                      x_gam_cpu = if (!is.null(ref)) ref$time / cpu$time else NA,
                      eta = a[1], score = a[2], edf = a[3])
    print(row, digits = 3, row.names = FALSE)
    rows[[length(rows) + 1]] <- row
    if (nzchar(out_csv)) write.csv(do.call(rbind, rows), out_csv, row.names = FALSE)
  }
}
cat("\nall (seconds; x_* = gam()'s time over gam_gpu's):\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
