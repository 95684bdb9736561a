# bench/auto_threshold.R -- where the device starts to pay: gam_gpu() on the
# device against gam_gpu() on the CPU for small n, one process (not a test).
# The crossover sets the default of option gamgpu.auto_min_rows.
#   OPENBLAS_NUM_THREADS=1 Rscript bench/auto_threshold.R
suppressMessages({ library(mgcv); library(gamgpu) })
ns <- c(2e3, 5e3, 1e4, 2e4, 5e4, 1e5)
set.seed(1)
big <- gamSim(1, n = max(ns), dist = "normal", scale = 2, verbose = FALSE)
big$yb <- rbinom(nrow(big), 1, binomial()$linkinv((big$f - mean(big$f)) / 4))
invisible(gam_gpu(y ~ s(x0, bs = "cr"), data = big[1:5000, ], device = "required"))
invisible(gam_gpu(yb ~ s(x0, bs = "cr"), family = binomial(), data = big[1:5000, ], device = "required"))
med <- function(f) median(vapply(1:3, function(i) {
  v <- f(); v$device$timings[["iterations"]] + v$device$timings[["postproc"]] +
    if (is.null(v$device$split)) 0 else v$device$split[["transfer"]] }, 0))
rows <- list()
for (fam in c("gaussian", "binomial")) for (n in ns) {
  d <- big[seq_len(n), ]
  f <- as.formula(sprintf("%s ~ s(x0, bs = 'cr') + s(x1, bs = 'cr') + s(x2, bs = 'cr') + s(x3, bs = 'cr')",
                          if (fam == "gaussian") "y" else "yb"))
  family <- get(fam)()
  dev <- med(function() gam_gpu(f, family = family, data = d, device = "required"))
  cpu <- med(function() gam_gpu(f, family = family, data = d, device = "off"))
  rows[[length(rows) + 1]] <- data.frame(family = fam, n = n, device_fit_s = dev, cpu_fit_s = cpu,
                                         cpu_over_device = cpu / dev)
}
cat("fit time after setup (iterations + post-processing + transfers), median of 3:\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
