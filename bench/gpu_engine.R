# bench/gpu_engine.R -- gam_gpu() on the device against gam_gpu() on the
# CPU and mgcv (bam fREML, bam discrete, and gam REML up to n = 1e5), in one
# process on one machine (not a test).  Run on the GPU machine with
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/gpu_engine.R [n ...]
#
# Environment: GAMGPU_BENCH_BASES ("cr,tp"), GAMGPU_BENCH_FAMILIES
# ("gaussian,binomial"), GAMGPU_BENCH_PEERS ("cpu,fREML,discrete,gam"),
# GAMGPU_BENCH_BIG=1 adds the p = 254 model (GAMGPU_BENCH_BASES= with an
# empty value runs it alone), GAMGPU_BENCH_REPS (1) device fits per case of
# which the median one is reported, GAMGPU_BENCH_OUT a CSV path.
# mgcv gets all cores (nthreads), the BLAS one thread.  Prints, per case,
# wall times, ratios to gam_gpu on the device, agreement of the fitted
# values and REML score with bam fREML, and the device fit's time split.
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
ns <- if (length(args)) as.numeric(args) else c(1e5, 1e6)
env_list <- function(var, default) strsplit(Sys.getenv(var, default), ",")[[1]]
bases <- env_list("GAMGPU_BENCH_BASES", "cr,tp")
families <- env_list("GAMGPU_BENCH_FAMILIES", "gaussian,binomial")
peers <- env_list("GAMGPU_BENCH_PEERS", "cpu,fREML,discrete,gam")
big <- nzchar(Sys.getenv("GAMGPU_BENCH_BIG"))
reps <- max(1L, as.integer(Sys.getenv("GAMGPU_BENCH_REPS", "1")))
out_csv <- Sys.getenv("GAMGPU_BENCH_OUT")
threads <- parallel::detectCores()

elapsed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(time = t, value = v)
}

formula_for <- function(y, bs, big) {
  if (big)
    return(as.formula(sprintf(
      "%s ~ s(x0, k = 40) + s(x1, k = 40) + s(x2, k = 40) + s(x3, k = 40) + te(x0, x1, k = c(10, 10))", y)))
  as.formula(sprintf("%s ~ s(x0, bs = '%s') + s(x1, bs = '%s') + s(x2, bs = '%s') + s(x3, bs = '%s')",
                     y, bs, bs, bs, bs))
}

# warm-up: first-call costs (context, NVRTC, mgcv's code paths) are not measured
warm <- gamSim(1, n = 20000, dist = "normal", verbose = FALSE)
invisible(gam_gpu(y ~ s(x0) + s(x1, bs = "cr"), data = warm, device = "required"))
warm$yb <- rbinom(nrow(warm), 1, 0.5)
invisible(gam_gpu(yb ~ s(x0) + s(x1, bs = "cr"), data = warm, family = binomial(),
                  device = "required"))
invisible(bam(y ~ s(x0) + s(x1, bs = "cr"), data = warm, discrete = TRUE))

rows <- list()
report <- function(row) {
  print(row, digits = 3, row.names = FALSE)
  rows[[length(rows) + 1]] <<- row
  if (nzchar(out_csv)) write.csv(do.call(rbind, rows), out_csv, row.names = FALSE)
}

for (n in ns) {
  set.seed(1)
  dat <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  dat$yb <- rbinom(n, 1, binomial()$linkinv((dat$f - mean(dat$f)) / 4))
  cases <- expand.grid(bs = bases, fam = families, stringsAsFactors = FALSE)
  cases$big <- rep(FALSE, nrow(cases))
  if (big && n <= 1e6) cases <- rbind(cases, data.frame(bs = "tp", fam = "gaussian", big = TRUE))
  for (i in seq_len(nrow(cases))) {
    bs <- cases$bs[i]; fam <- cases$fam[i]; is_big <- cases$big[i]
    f <- formula_for(if (fam == "gaussian") "y" else "yb", bs, is_big)
    family <- get(fam)()
    gc()
    devs <- lapply(seq_len(reps), function(i)
      elapsed(gam_gpu(f, family = family, data = dat, device = "required")))
    dev <- devs[[order(vapply(devs, `[[`, 0, "time"))[(reps + 1) %/% 2]]]
    rm(devs)
    cpu <- if ("cpu" %in% peers) elapsed(gam_gpu(f, family = family, data = dat, device = "off"))
    bf <- if ("fREML" %in% peers)
      elapsed(bam(f, family = family, data = dat, method = "fREML", nthreads = threads))
    bd <- if ("discrete" %in% peers)
      elapsed(bam(f, family = family, data = dat, discrete = TRUE, nthreads = threads))
    gr <- if ("gam" %in% peers && n <= 1e5)
      elapsed(gam(f, family = family, data = dat, method = "REML"))
    tm <- dev$value$device$timings
    t_or_na <- function(x) if (is.null(x)) NA_real_ else x$time
    eb <- if (!is.null(bf)) bf$value$linear.predictors
    report(data.frame(
      model = if (is_big) "p=254" else bs, family = fam, n = n, p = length(coef(dev$value)),
      device = dev$time, cpu = t_or_na(cpu), bam_fREML = t_or_na(bf),
      bam_discrete = t_or_na(bd), gam_REML = t_or_na(gr),
      x_cpu = t_or_na(cpu) / dev$time, x_fREML = t_or_na(bf) / dev$time,
      x_discrete = t_or_na(bd) / dev$time,
      dev_setup = tm[["setup"]], dev_iter = tm[["iterations"]], dev_post = tm[["postproc"]],
      dev_transfer = dev$value$device$split[["transfer"]],
      dev_build = dev$value$device$split[["build"]],
      dev_kernels = dev$value$device$split[["kernels"]],
      dev_host = dev$value$device$split[["host"]],
      cpu_iter = if (is.null(cpu)) NA else cpu$value$device$timings[["iterations"]],
      cpu_post = if (is.null(cpu)) NA else cpu$value$device$timings[["postproc"]],
      # the issue's "iterations (everything after setup)", both readings
      x_iter = if (is.null(cpu)) NA else cpu$value$device$timings[["iterations"]] / tm[["iterations"]],
      x_after_setup = if (is.null(cpu)) NA else
        sum(cpu$value$device$timings[c("iterations", "postproc")]) /
          sum(tm[c("iterations", "postproc")]),
      eta_vs_fREML = if (is.null(eb)) NA else
        max(abs(dev$value$linear.predictors - eb)) / diff(range(eb)),
      reml_vs_fREML = if (is.null(bf)) NA else
        (dev$value$gcv.ubre[[1]] - bf$value$gcv.ubre[[1]]) / abs(bf$value$gcv.ubre[[1]]),
      eta_vs_cpu = if (is.null(cpu)) NA else
        max(abs(dev$value$linear.predictors - cpu$value$linear.predictors)) /
          diff(range(cpu$value$linear.predictors))))
  }
  rm(dat); invisible(gc())
}
cat("\nall cases (times in seconds; x_* = peer time / gam_gpu device time):\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
