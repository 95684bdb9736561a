# bench/extended_families.R -- gam_gpu() with mgcv's nb() (theta estimated)
# on the device and on the CPU against mgcv::bam() (fREML and discrete), in
# one process on one machine (not a test).  Run on the GPU machine with
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/extended_families.R [n ...]
#
# Environment: GAMGPU_BENCH_FREML_MAX (1e5): the largest n at which bam
# fREML runs (it takes minutes beyond).  gamSim data, four smooths (k = 10,
# p = 37), negative binomial response with size 3.  mgcv gets all cores.
# Prints wall times, ratios to gam_gpu on the device, and the agreement of
# theta and the linear predictors with bam.
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
ns <- if (length(args)) as.numeric(args) else c(1e5, 1e6)
freml_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_FREML_MAX", "1e5"))
threads <- parallel::detectCores()
fml <- y ~ s(x0) + s(x1) + s(x2) + s(x3)

sim <- function(n) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", verbose = FALSE)
  d$y <- rnbinom(n, size = 3, mu = exp(d$f / 6))
  d
}
timed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(time = t, value = v)
}
theta <- function(f) f$family$getTheta(TRUE)
lp_gap <- function(f, ref) max(abs(f$linear.predictors - ref$linear.predictors)) /
  diff(range(ref$linear.predictors))

invisible(gam_gpu(fml, data = sim(20000), family = nb(), device = "required"))
for (n in ns) {
  d <- sim(n)
  g <- timed(gam_gpu(fml, data = d, family = nb(), device = "required"))
  cp <- timed(gam_gpu(fml, data = d, family = nb(), device = "off"))
  bd <- timed(bam(fml, data = d, family = nb(), discrete = TRUE, nthreads = threads))
  bf <- if (n <= freml_max) timed(bam(fml, data = d, family = nb(), nthreads = threads))
  ref <- if (is.null(bf)) bd$value else bf$value
  row <- data.frame(
    n = n, gpu = g$time, cpu = cp$time,
    bam_fREML = if (is.null(bf)) NA else bf$time, bam_discrete = bd$time,
    fREML_over_gpu = if (is.null(bf)) NA else bf$time / g$time,
    discrete_over_gpu = bd$time / g$time,
    theta_gpu = theta(g$value), theta_ref = theta(ref),
    lp_gpu_vs_ref = lp_gap(g$value, ref), lp_gpu_vs_cpu = lp_gap(g$value, cp$value),
    ref = if (is.null(bf)) "discrete" else "fREML", backend = g$value$device$backend)
  print(row, digits = 4, row.names = FALSE)
}
