# bench/cpu_discrete.R -- the CPU engine against bam(discrete = TRUE), the
# peer a user without a GPU would pick (issue 40), one process, one
# machine, the same threads (not a test).
#
#   Rscript bench/cpu_discrete.R [n ...]        (default 1e6)
#
# Environment: GAMGPU_BENCH_THREADS (default 2), GAMGPU_BENCH_OUT (also
# write the rows to this CSV), GAMGPU_BENCH_FREML_MAX (bam fREML, the exact
# fit, for agreement, up to this many rows; default 1e6),
# GAMGPU_BENCH_DENSE_MAX (gam_gpu with X built dense and R's BLAS, the
# engine before sparse rows, up to this many rows; default 1e6),
# GAMGPU_BENCH_MODELS (a subset of the models, e.g. "2,3").
#
# Models (issue 40, bench/cpu_models.R): gaussian with a 20-level factor,
# two cr smooths (k = 20) and te(8, 8) (p = 121); binomial with three tp
# smooths (k = 20) and a linear term; poisson with a random effect (50
# levels) and a by-factor smooth.  gam_gpu(device = "off") as on any
# machine (its defaults: sparse rows where the bases are local,
# options(gamgpu.cpu_x); gamgpu's Gram kernel where it beats R's BLAS,
# options(gamgpu.cpu_gram)), gam_gpu with X dense and R's BLAS, bam(discrete
# = TRUE) and bam(method = "fREML").  Prints seconds, ratios (bam discrete's
# time over gam_gpu's) and agreement with bam fREML (linear predictors, of
# their range) and, where bam fREML is too slow to run, with the dense
# route's fit (the same exact fit in other arithmetic: agree_dense).  Peak
# memory: bench/cpu_memory.R (a process per fit).
suppressMessages({library(mgcv); library(gamgpu)})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
ns <- if (length(args)) args else 1e6
th <- as.integer(Sys.getenv("GAMGPU_BENCH_THREADS", "2"))
out_csv <- Sys.getenv("GAMGPU_BENCH_OUT")
freml_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_FREML_MAX", "1e6"))
dense_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_DENSE_MAX", "1e6"))

script <- sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))
source(file.path(dirname(script), "cpu_models.R"))   # cpu_sim(), cpu_models
sim <- cpu_sim
models <- cpu_models
# GAMGPU_BENCH_MODELS: a comma-separated subset (1, 2, 3) of the models
sel <- Sys.getenv("GAMGPU_BENCH_MODELS")
if (nzchar(sel)) models <- models[as.integer(strsplit(sel, ",")[[1]])]

elapsed <- function(expr) {
  gc()
  t <- system.time(v <- expr)[["elapsed"]]
  list(time = t, value = v)
}
modes <- function(x, gram) options(gamgpu.cpu_x = x, gamgpu.cpu_gram = gram)
rows <- list()
cat(sprintf("CPU: %d threads; R's BLAS: %s\n", th, gamgpu:::r_blas()))
for (n in ns) {
  d <- sim(n)
  for (m in models) {
    modes("auto", "auto")
    own <- elapsed(gam_gpu(m$f, family = m$family, data = d, device = "off",
                           control = gam_gpu_control(nthreads = th)))
    modes("dense", "blas")
    dense <- if (n <= dense_max)
      elapsed(gam_gpu(m$f, family = m$family, data = d, device = "off",
                      control = gam_gpu_control(nthreads = th)))
    modes("auto", "auto")
    disc <- elapsed(bam(m$f, family = m$family, data = d, discrete = TRUE, nthreads = th))
    ex <- if (n <= freml_max) elapsed(bam(m$f, family = m$family, data = d, nthreads = th))
    agree <- function(g) if (is.null(ex)) NA else
      max(abs(g$linear.predictors - ex$value$linear.predictors)) /
        diff(range(ex$value$linear.predictors))
    r <- data.frame(n = n, model = m$name, p = length(coef(own$value)),
                    gam_gpu = own$time, gam_gpu_dense_blas = if (is.null(dense)) NA else dense$time,
                    bam_discrete = disc$time,
                    bam_freml = if (is.null(ex)) NA else ex$time,
                    x_discrete = disc$time / own$time,
                    x = own$value$device$placement, gram = own$value$device$cpu_gram,
                    agree_gam_gpu = agree(own$value), agree_discrete = agree(disc$value),
                    agree_dense = if (is.null(dense)) NA else
                      max(abs(own$value$linear.predictors - dense$value$linear.predictors)) /
                        diff(range(dense$value$linear.predictors)),
                    blas = gamgpu:::r_blas(), threads = th, stringsAsFactors = FALSE)
    print(r[, c("n", "model", "p", "gam_gpu", "gam_gpu_dense_blas", "bam_discrete", "bam_freml",
                "x_discrete", "agree_gam_gpu",
                "agree_discrete", "agree_dense")], row.names = FALSE, digits = 3)
    rows[[length(rows) + 1L]] <- r
    rm(own, dense, disc, ex)
  }
}
tab <- do.call(rbind, rows)
if (nzchar(out_csv)) utils::write.csv(tab, out_csv, row.names = FALSE)
