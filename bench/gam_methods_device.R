# bench/gam_methods_device.R -- issue 36's mixed model under gam()'s
# methods on the device: s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(6, 6))
# + s(fac, bs = "re") (30 levels), binomial REML and gaussian GCV.Cp at
# 1e5 and 1e6 rows, with where X was built (its recipe, on the device),
# the phase times and split, the outer iteration's Gram products and the
# device telemetry (host-to-device bytes against the data's size: bounded
# by the data, not by the Newton steps).  GAM_REF=1 also fits gam() at
# 1e5 (binomial REML) in the same process and prints agreement.  On the
# GPU machine (not a test):
#
#   Rscript bench/gam_methods_device.R
suppressMessages({library(gamgpu); library(mgcv)})
sim <- function(n, fam) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  z <- (d$f - mean(d$f)) / sd(d$f)
  d$fac <- factor(sample(30, n, replace = TRUE))
  z <- z + rnorm(30, sd = 0.5)[d$fac]
  d$y <- if (fam == "binomial") rbinom(n, 1, plogis(z)) else d$f + rnorm(30)[d$fac] + rnorm(n, sd = 2)
  d
}
f <- y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(6, 6)) + s(fac, bs = "re")
invisible(gam_gpu(f, family = binomial(), data = sim(3e4, "binomial"), method = "REML", device = "required"))
for (n in c(1e5, 1e6)) for (cell in list(c("binomial", "REML"), c("gaussian", "GCV.Cp"))) {
  d <- sim(n, cell[1])
  fam <- if (cell[1] == "binomial") binomial() else gaussian()
  gpu_telemetry(reset = TRUE)
  t <- system.time(g <- gam_gpu(f, family = fam, data = d, method = cell[2], device = "required"))[[3]]
  tel <- gpu_telemetry()
  data_mb <- (5 * 8 + 4) * n / 2^20
  cat(sprintf("\n== n %g %s %s: %.3f s; X %s (%s); placement %s\n", n, cell[1], cell[2], t,
              g$device$model_matrix, toString(g$device$model_matrix_reason), g$device$placement))
  print(round(g$device$timings, 3)); print(round(g$device$split, 4)); print(g$device$counters)
  cat("outer grams", toString(g$device$outer_grams), "outer_rows", toString(g$device$outer_rows), "\n")
  print(tel); cat(sprintf("data (5 doubles + 1 int per row) %.1f MiB\n", data_mb))
}
if (nzchar(Sys.getenv("GAM_REF"))) {
  d <- sim(1e5, "binomial")
  t <- system.time(b <- gam(f, family = binomial(), data = d, method = "REML"))[[3]]
  g <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "required")
  cat(sprintf("gam() 1e5 binomial REML %.2f s; fit diff %.2e of range\n", t,
              max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values))))
}
