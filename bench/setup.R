# Model setup at n = 1e6: mgcv's bam(fit = FALSE) against gamgpu's
# gg_setup() (R/setup.R), on the call gam_gpu() builds, in one process.
# Prints the median seconds of each, their ratio, the seconds saved and
# whether the two setup objects are identical.
#   Rscript bench/setup.R          (GAMGPU_BENCH_N=2e5 for a quick run)
suppressMessages({library(mgcv); library(gamgpu)})
n <- as.numeric(Sys.getenv("GAMGPU_BENCH_N", "1e6"))
reps <- 5
set.seed(1)
dat <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
dat$fac <- factor(sample(letters[1:4], n, TRUE))
models <- list(
  cr = y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr"),
  tp = y ~ s(x0) + s(x1) + s(x2) + s(x3),
  "cr+factor" = y ~ fac + s(x0, bs = "cr", by = fac) + s(x1, bs = "cr") +
    s(x2, bs = "cr") + s(x3, bs = "cr"))
# the call gam_gpu() hands to the setup (chunk.size from gam_gpu_control())
setup_call <- function(f) as.call(list(quote(mgcv::bam), formula = f, data = quote(dat),
                                       family = gaussian(), method = "fREML", fit = FALSE,
                                       chunk.size = gam_gpu_control()$chunk.size))
timed <- function(f) { t <- system.time(r <- f())[["elapsed"]]; list(t = t, r = r) }
rows <- list()
for (nm in names(models)) {
  mc <- setup_call(models[[nm]])
  old <- function() eval(mc)
  lean <- function() gamgpu:::gg_setup(mc, environment())
  invisible(old()); invisible(lean())                   # warm
  t_old <- t_lean <- numeric(reps)
  for (i in seq_len(reps)) {                            # alternate the order
    a <- timed(old); b <- timed(lean)
    t_old[i] <- a$t; t_lean[i] <- b$t
  }
  row <- data.frame(model = nm, n = n, bam_fit_false_s = median(t_old),
                    gg_setup_s = median(t_lean),
                    ratio = median(t_old) / median(t_lean),
                    saved_s = median(t_old) - median(t_lean),
                    identical = identical(a$r, b$r))
  print(row, digits = 3, row.names = FALSE)
  rows[[nm]] <- row
}
cat("\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
