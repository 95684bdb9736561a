# bench/ar1.R -- AR1 residuals: gam_gpu(rho =, AR.start =) on the device and
# on the CPU against mgcv::bam(rho =, AR.start =) (fREML and discrete), in
# one process on one machine (not a test).  Run on the GPU machine with
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/ar1.R [n ...]
#
# gamSim data with AR1 errors (rho = 0.6) in 10 series of equal length,
# four cr smooths (p = 37).  mgcv gets all cores (nthreads), the BLAS one
# thread.  Prints wall times, ratios to gam_gpu on the device, and the
# agreement of the linear predictors (relative to their range) and of the
# REML score with bam fREML.
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
ns <- if (length(args)) as.numeric(args) else c(1e5, 1e6)
threads <- parallel::detectCores()
rho <- 0.6
fml <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")

sim <- function(n) {
  set.seed(1)
  dat <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  start <- rep(FALSE, n)
  start[seq(1, n, by = n %/% 10)] <- TRUE
  e <- stats::filter(rnorm(n), rho, method = "recursive")   # one series, then restarted below
  e <- as.numeric(e)
  for (s in which(start)[-1]) {
    idx <- s:min(n, s + n %/% 10 - 1)
    e[idx] <- as.numeric(stats::filter(rnorm(length(idx)), rho, method = "recursive"))
  }
  dat$y <- dat$f + 2 * sqrt(1 - rho^2) * e
  dat$start <- start
  dat
}

timed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(time = t, value = v)
}

warm <- sim(20000)
invisible(gam_gpu(fml, data = warm, rho = rho, AR.start = start, device = "required"))

for (n in ns) {
  dat <- sim(n)
  g <- timed(gam_gpu(fml, data = dat, rho = rho, AR.start = start, device = "required"))
  cp <- timed(gam_gpu(fml, data = dat, rho = rho, AR.start = start, device = "off"))
  b <- timed(bam(fml, data = dat, rho = rho, AR.start = start, nthreads = threads))
  bd <- timed(bam(fml, data = dat, rho = rho, AR.start = start, discrete = TRUE,
                  nthreads = threads))
  lp <- b$value$linear.predictors
  agree <- function(f) max(abs(f$linear.predictors - lp)) / diff(range(lp))
  row <- data.frame(
    n = n, gpu = g$time, cpu = cp$time, bam_fREML = b$time, bam_discrete = bd$time,
    fREML_over_gpu = b$time / g$time, discrete_over_gpu = bd$time / g$time,
    gpu_iter = g$value$device$timings[["iterations"]],
    lp_gpu_vs_bam = agree(g$value), lp_cpu_vs_bam = agree(cp$value),
    reml_gpu_vs_bam = abs(g$value$gcv.ubre - b$value$gcv.ubre) / abs(b$value$gcv.ubre),
    lp_gpu_vs_cpu = max(abs(g$value$linear.predictors - cp$value$linear.predictors)) /
      diff(range(cp$value$linear.predictors)),
    backend = g$value$device$backend)
  print(row, digits = 3, row.names = FALSE)
}
