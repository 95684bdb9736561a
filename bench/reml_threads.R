# bench/reml_threads.R -- the REML optimizer's host threads (control
# nthreads) on the big-basis model of bench/gpu_engine.R (p = 254): the
# device fit's iteration time per thread count, against the CPU backend's
# iterations, and the agreement between thread counts (not a test).
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/reml_threads.R [n] [threads ...]
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
n <- if (length(args)) args[1] else 1e6
threads <- if (length(args) > 1) args[-1] else c(1, 4, 8, parallel::detectCores(logical = FALSE))
set.seed(1)
dat <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
f <- y ~ s(x0, k = 40) + s(x1, k = 40) + s(x2, k = 40) + s(x3, k = 40) + te(x0, x1, k = c(10, 10))
invisible(gam_gpu(f, data = dat[1:5000, ], device = "required"))   # warm-up
fit_iter <- function(device, nt) {
  fit <- gam_gpu(f, data = dat, device = device, control = gam_gpu_control(nthreads = nt))
  list(iter = fit$device$timings[["iterations"]], host = fit$device$split[["host"]],
       eta = fit$linear.predictors)
}
cpu <- fit_iter("off", max(threads))
rows <- lapply(threads, function(nt) {
  r <- lapply(1:3, function(i) fit_iter("required", nt))
  it <- vapply(r, `[[`, 0, "iter")
  data.frame(n = n, nthreads = nt, dev_iter_median = median(it), dev_iter_min = min(it),
             dev_host = r[[which.min(abs(it - median(it)))]]$host,
             cpu_iter = cpu$iter, x_iter = cpu$iter / median(it),
             eta_vs_cpu = max(abs(r[[1]]$eta - cpu$eta)) / diff(range(cpu$eta)))
})
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
