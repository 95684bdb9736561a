# bench/setup_split.R -- where gam_gpu()'s setup time goes at large n (not a
# test).  For each case it fits once to warm up, then once under Rprof's
# line profiling, and prints the fit's timings and the R source lines that
# took the most time (the gg_fit .Call line holds the engine's own
# preparation, the iterations and the post-processing).  Run with
#
#   R_KEEP_PKG_SOURCE=yes R CMD INSTALL .      # line numbers need srcrefs
#   OPENBLAS_NUM_THREADS=1 Rscript bench/setup_split.R [n] [device]
#
# n defaults to 1e7, device to "required" ("off" for the CPU).
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[[1L]]) else 1e7
device <- if (length(args) >= 2L) args[[2L]] else "required"
set.seed(1)
dat <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
dat$yb <- rbinom(n, 1, binomial()$linkinv((dat$f - 8) / 4))
cases <- list(
  "cr gaussian" = y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr"),
  "tp binomial" = yb ~ s(x0) + s(x1) + s(x2) + s(x3))
for (nm in names(cases)) {
  fam <- if (grepl("binomial", nm)) binomial() else gaussian()
  invisible(gam_gpu(cases[[nm]], family = fam, data = dat, device = device))
  prof <- tempfile()
  Rprof(prof, interval = 0.005, line.profiling = TRUE)
  wall <- system.time(fit <- gam_gpu(cases[[nm]], family = fam, data = dat,
                                     device = device))[["elapsed"]]
  Rprof(NULL)
  cat(sprintf("\n== %s, n = %g, %s: wall %.3f s\n", nm, n, fit$device$backend, wall))
  print(round(c(fit$device$timings, fit$device$split), 4))
  lines <- summaryRprof(prof, lines = "show")$by.self
  print(head(lines[, c("self.time", "self.pct")], 12))
  unlink(prof)
}
