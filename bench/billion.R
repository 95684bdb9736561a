# bench/billion.R -- one gam_gpu() fit on the GPU at very large n (issue 13:
# 3e8 and 1e9 rows of a cr gaussian or binomial model with four smooths;
# not a test).  The data are made column by column in place (runif, then
# the response), so the host holds the data frame and what gam_gpu()'s
# setup adds.  Prints the fit's wall time and split, where X lived (resident
# or streamed in chunks), the host's peak resident memory (VmHWM, before
# and after the fit) and the device arena's peak as gpu_arena() saw it.
#
#   Rscript bench/billion.R [n] [family]      # defaults 1e9 gaussian
#
# Environment: GAMGPU_BENCH_OUT, a CSV file to add the fit's line to (with
# a header when new; bench/scaling_plot.R reads it);
# GAMGPU_BENCH_DEVICE ("required"; "off" to try the script on the CPU).
suppressMessages(library(gamgpu))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[[1L]]) else 1e9
fam <- if (length(args) >= 2L) args[[2L]] else "gaussian"
out <- Sys.getenv("GAMGPU_BENCH_OUT")

hwm_gb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", s, value = TRUE))) / 2^20
}
t0 <- proc.time()[["elapsed"]]
set.seed(1)
d <- data.frame(x0 = runif(n))
d$x1 <- runif(n)
d$x2 <- runif(n)
d$x3 <- runif(n)
eta <- 2 * sin(pi * d$x0)
eta <- eta + exp(2 * d$x1) / 4
eta <- eta + d$x2^2 - d$x3
d$y <- if (fam == "binomial") as.numeric(runif(n) < 1 / (1 + exp(-(eta - 1.5)))) else
  eta + rnorm(n)
rm(eta)
invisible(gc())
t_data <- proc.time()[["elapsed"]] - t0
hwm_data <- hwm_gb()
f <- y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr")
family <- if (fam == "binomial") binomial() else gaussian()
invisible(gam_gpu(f, data = d[1:1e5, ], family = family, device = Sys.getenv("GAMGPU_BENCH_DEVICE", "required")))  # kernels loaded
t <- system.time(fit <- gam_gpu(f, data = d, family = family, device = Sys.getenv("GAMGPU_BENCH_DEVICE", "required")))
a <- gpu_arena()
dev_gb <- (attr(a, "bytes_cached") + attr(a, "bytes_in_use")) / 2^30
sp <- fit$device$split
if (is.null(sp)) sp <- c(transfer = NA, build = NA, kernels = NA, host = NA)   # a CPU fit
cat(sprintf(paste0("n = %.0e %s: data made in %.1f s (host %.1f GiB)\n",
                   "  fit %.2f s: setup %.2f, iterations %.2f, postproc %.2f; transfer %.2f, ",
                   "build %.2f, kernels %.2f, host %.2f\n  %s\n",
                   "  host peak %.1f GiB, device arena held after the fit (its peak) %.1f GiB, converged %s, ",
                   "iterations %d\n"),
            n, fam, t_data, hwm_data, t[["elapsed"]], fit$device$timings[["setup"]],
            fit$device$timings[["iterations"]], fit$device$timings[["postproc"]],
            sp[["transfer"]], sp[["build"]], sp[["kernels"]], sp[["host"]],
            fit$device$placement, hwm_gb(), dev_gb, fit$converged, fit$iter))
# (the columns bench/scaling_plot.R reads from bench/gpu_engine.R's CSV:
# model, family, n, p, device -- the fit's seconds -- and more)
if (nzchar(out)) {
  row <- data.frame(model = "cr", family = fam, n = n, p = length(coef(fit)),
                    device = t[["elapsed"]], dev_setup = fit$device$timings[["setup"]],
                    dev_kernels = sp[["kernels"]], host_peak_gib = hwm_gb(),
                    device_arena_gib = dev_gb, placement = fit$device$placement)
  utils::write.table(row, out, sep = ",", row.names = FALSE, append = file.exists(out),
                     col.names = !file.exists(out))
}
