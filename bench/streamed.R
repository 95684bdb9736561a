# bench/streamed.R -- a fit whose X is built on the device in streamed
# chunks (the arena capped by option gamgpu.device_memory) against the same
# fit with X resident, in one process (not a test).  Prints both fits' wall
# time, their split (transfers, X's build, kernels, host) and time per row,
# the streamed one's chunk count from its placement, and the agreement of
# the two fits (a streamed fit equals the resident one bit for bit).
#
#   Rscript bench/streamed.R [n]
#
# Environment: GAMGPU_BENCH_FAMILY ("gaussian" or "binomial"),
# GAMGPU_BENCH_CAP (the cap that forces streaming, default "2GB").
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args)) as.numeric(args[1]) else 2e7
fam <- Sys.getenv("GAMGPU_BENCH_FAMILY", "gaussian")
cap <- Sys.getenv("GAMGPU_BENCH_CAP", "2GB")

set.seed(1)
d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), x3 = runif(n))
eta <- 2 * sin(pi * d$x0) + exp(2 * d$x1) / 4 + 0.2 * d$x2^11 * (10 * (1 - d$x2))^6 + d$x3
d$y <- if (fam == "binomial") rbinom(n, 1, binomial()$linkinv(eta - mean(eta))) else
  eta + rnorm(n)
f <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
family <- if (fam == "binomial") binomial() else gaussian()

fit_once <- function(label) {
  gc()
  gpu_telemetry(reset = TRUE)
  t <- system.time(fit <- gam_gpu(f, data = d, family = family, device = "required"))
  print(gpu_telemetry())
  sp <- fit$device$split
  cat(sprintf("%-9s n = %.0e  wall %7.3f s  (%.2f ns/row)  setup %.3f  transfer %.3f  build %.3f  kernels %.3f  host %.3f\n          %s\n",
              label, n, t[["elapsed"]], 1e9 * t[["elapsed"]] / n, fit$device$timings[["setup"]],
              sp[["transfer"]], sp[["build"]], sp[["kernels"]], sp[["host"]],
              fit$device$placement))
  fit
}
invisible(gam_gpu(f, data = d[1:1e5, ], family = family, device = "required"))  # kernels loaded
res <- fit_once("resident")
old <- options(gamgpu.device_memory = cap)
str <- fit_once("streamed")
options(old)
# device work: a resident fit builds X once (build), a streamed one in
# every pass (inside kernels)
work <- function(fit) fit$device$split[["kernels"]] + fit$device$split[["build"]]
cat(sprintf("streamed/resident: iterations + postproc %.2fx, device work (X's build included) %.3f / %.3f s = %.2fx\n",
            sum(str$device$timings[-1]) / sum(res$device$timings[-1]),
            work(str), work(res), work(str) / work(res)))
cat(sprintf("agreement: max |fitted| difference %.3g, coefficients identical: %s, iterations %d / %d\n",
            max(abs(fitted(res) - fitted(str))), identical(coef(res), coef(str)),
            res$iter, str$iter))
