# bench/cpu_engine.R -- gam_gpu() on the CPU against mgcv::bam, one process,
# one machine, same thread count (not a test).
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/cpu_engine.R [n] [reps]
#
# gamSim-style data, 4 smooths (k = 10, p = 37), gaussian and binomial, with
# bs = "cr" and the default tp basis.  For each workload: gam_gpu(device =
# "off"), bam(method = "fREML") and bam(discrete = TRUE), all with one
# thread; prints seconds, ratios, where gam_gpu's time goes (setup /
# iterations / post-processing) and agreement with bam fREML.
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
reps <- if (length(args) >= 2) as.integer(args[2]) else 1L

set.seed(1)
dat <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
dat$yb <- rbinom(n, 1, binomial()$linkinv((dat$f - mean(dat$f)) / 4))

best_time <- function(expr) {
  ex <- substitute(expr)
  pf <- parent.frame()
  t <- Inf
  val <- NULL
  for (r in seq_len(reps)) {
    gc()
    tt <- system.time(val <- eval(ex, pf))[["elapsed"]]
    t <- min(t, tt)
  }
  list(time = t, value = val)
}

# warm-up (first-call costs of mgcv and gamgpu are not what we measure)
invisible(gam_gpu(y ~ s(x0) + s(x1, bs = "cr"), data = dat[1:min(n, 20000), ]))
invisible(bam(y ~ s(x0) + s(x1, bs = "cr"), data = dat[1:min(n, 20000), ]))

rows <- list()
for (bs in c("cr", "tp")) for (fam in c("gaussian", "binomial")) {
  yv <- if (fam == "gaussian") "y" else "yb"
  f <- as.formula(sprintf("%s ~ s(x0, bs = '%s') + s(x1, bs = '%s') + s(x2, bs = '%s') + s(x3, bs = '%s')",
                          yv, bs, bs, bs, bs))
  family <- get(fam)()
  g <- best_time(gam_gpu(f, family = family, data = dat, device = "off"))
  bf <- best_time(bam(f, family = family, data = dat, method = "fREML", nthreads = 1))
  bd <- best_time(bam(f, family = family, data = dat, discrete = TRUE, nthreads = 1))
  eg <- g$value$linear.predictors
  eb <- bf$value$linear.predictors
  tm <- g$value$device$timings
  rows[[length(rows) + 1]] <- data.frame(
    basis = bs, family = fam, n = n,
    gam_gpu = g$time, bam_fREML = bf$time, bam_discrete = bd$time,
    ratio_fREML = bf$time / g$time, ratio_discrete = bd$time / g$time,
    setup = tm[["setup"]], iterations = tm[["iterations"]], postproc = tm[["postproc"]],
    irls_iter = g$value$iter, bam_iter = bf$value$iter,
    eta_rel_diff = max(abs(eg - eb)) / diff(range(eb)),
    edf_diff = sum(g$value$edf) - sum(bf$value$edf),
    reml_diff = g$value$gcv.ubre[[1]] - bf$value$gcv.ubre[[1]])
  print(rows[[length(rows)]], digits = 3, row.names = FALSE)
}
res <- do.call(rbind, rows)
cat("\nSummary (seconds; ratio = mgcv time / gam_gpu time, > 1 means gam_gpu is faster)\n")
print(res, digits = 3, row.names = FALSE)
cat(sprintf("\nBLAS: %s\n", extSoftVersion()[["BLAS"]]))
