# bench/gam_methods.R -- gam()'s smoothness selection methods (issue 14):
# gam_gpu(method = "GCV.Cp" / "REML") on the device and on the CPU against
# mgcv::gam() with the same method, four smooths of gamSim(1), gaussian
# and binomial (logit: gam()'s outer Newton around a converged penalized
# IRLS, the Laplace approximation for REML, UBRE for GCV.Cp), in one
# process (not a test).  On the GPU machine:
#
#   Rscript bench/gam_methods.R [n ...]    (1e4 1e5 1e6)
#
# Environment:
#   GAMGPU_BENCH_MODEL     "four" (default: s(x0) + s(x1) + s(x2) + s(x3)) or
#                          "mixed" (issue 36's: s(x0) + s(x1, bs = "cr") +
#                          te(x2, x3, k = c(6, 6)) + s(fac, bs = "re"), fac
#                          of 30 levels with a random effect) or "t2"
#                          (t2(x0, x1) + t2(x2, x3, bs = c("cr", "ps")) +
#                          s(fac, bs = "re"))
#   GAMGPU_BENCH_FAMILIES  families (default "gaussian,binomial"; also
#                          "poisson", "Gamma" (log link), "nb" and "tw",
#                          mgcv's extended families)
#   GAMGPU_BENCH_METHODS   methods (default "GCV.Cp,REML")
#   GAMGPU_BENCH_CELLS     family:method pairs in place of the two above,
#                          e.g. "binomial:REML,gaussian:GCV.Cp,Gamma:ML"
#   GAMGPU_BENCH_GAM_LIMIT seconds a gam() fit may take (default 600); one
#                          still running then is stopped and reported as
#                          "> limit" (it runs in a fresh R process)
#   GAMGPU_BENCH_CPU_MAX   the largest n for gam_gpu on the CPU (default 1e5)
#   GAMGPU_BENCH_GAM_MAX   the largest n for gam() (default: every n); beyond
#                          it gam() is not run and the row says so
#   GAMGPU_BENCH_GAM_THREADS  gam()'s nthreads (default: all cores; on the
#                          GPU machine gam() with nthreads > 1 aborts in
#                          its OpenBLAS -- DGEMV error code -3, stack
#                          smashing -- so it is measured with 1 there)
#   GAMGPU_BENCH_REPS      gam_gpu() fits per cell on the GPU, the median
#                          time reported (default 3; on the CPU and gam(): once)
#   GAMGPU_BENCH_OUT       also write the rows to this CSV file
# mgcv gets all cores (gam.control(nthreads)) unless told otherwise.  Prints times, ratios
# (gam's time over gam_gpu's) and agreement with gam(): fitted values (of
# their range), the criterion (relative: negative is a lower score than
# gam()'s), total EDF.
suppressMessages({library(mgcv); library(gamgpu)})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
ns <- if (length(args)) args else c(1e4, 1e5, 1e6)
fams <- strsplit(Sys.getenv("GAMGPU_BENCH_FAMILIES", "gaussian,binomial"), ",")[[1]]
methods <- strsplit(Sys.getenv("GAMGPU_BENCH_METHODS", "GCV.Cp,REML"), ",")[[1]]
limit <- as.numeric(Sys.getenv("GAMGPU_BENCH_GAM_LIMIT", "600"))
cpu_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_CPU_MAX", "1e5"))
gam_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_GAM_MAX", "Inf"))
out_csv <- Sys.getenv("GAMGPU_BENCH_OUT")
gpu <- isTRUE(gpu_info()$usable)
cores <- as.integer(Sys.getenv("GAMGPU_BENCH_GAM_THREADS", parallel::detectCores()))
model <- Sys.getenv("GAMGPU_BENCH_MODEL", "four")
f <- switch(model, four = y ~ s(x0) + s(x1) + s(x2) + s(x3),
            mixed = y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(6, 6)) + s(fac, bs = "re"),
            t2 = y ~ t2(x0, x1) + t2(x2, x3, bs = c("cr", "ps")) + s(fac, bs = "re"),
            stop("GAMGPU_BENCH_MODEL is \"four\", \"mixed\" or \"t2\""))
cells <- Sys.getenv("GAMGPU_BENCH_CELLS")
cells <- if (nzchar(cells)) do.call(rbind, strsplit(strsplit(cells, ",")[[1]], ":")) else
  as.matrix(expand.grid(fams, methods, stringsAsFactors = FALSE))
fams <- unique(cells[, 1])
family_of <- function(fam) if (fam == "Gamma") Gamma(link = "log") else
  get(fam, mode = "function")()
reps <- as.integer(Sys.getenv("GAMGPU_BENCH_REPS", "3"))
# the median of `reps` timings of fit() (the GPU machine's times vary by a
# third between runs of one fit), with the last fit
elapsed <- function(fit, k = reps) {
  t <- numeric(k)
  for (i in seq_len(k)) t[i] <- system.time(v <- fit())[["elapsed"]]
  list(time = stats::median(t), value = v)
}
# gam() in a fresh R process (a forked child can hang in mgcv's OpenMP
# once this process has used it), stopped after `limit` seconds; NULL then
gam_limited <- function(formula, family, data, method) {
  io <- tempfile(c("in", "out", "script"), fileext = c(".rds", ".rds", ".R"))
  on.exit(unlink(io))
  saveRDS(list(formula = formula, family = family, data = data, method = method,
               cores = cores), io[1])
  writeLines(c("suppressMessages(library(mgcv))",
               "a <- readRDS(commandArgs(TRUE)[1])",
               "t <- system.time(b <- gam(a$formula, family = a$family, data = a$data,",
               "  method = a$method, control = gam.control(nthreads = a$cores)))[['elapsed']]",
               "saveRDS(list(time = t, value = b[c('fitted.values', 'gcv.ubre', 'edf', 'sp')]),",
               "        commandArgs(TRUE)[2])"), io[3])
  system2("timeout", c(limit, file.path(R.home("bin"), "Rscript"), io[3], io[1], io[2]))
  if (file.exists(io[2])) readRDS(io[2])
}
sim <- function(n, fam) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  z <- (d$f - mean(d$f)) / stats::sd(d$f)
  d$fac <- factor(sample(30, n, replace = TRUE))
  if (model == "mixed") {
    z <- z + stats::rnorm(30, sd = 0.5)[d$fac]
    if (fam == "gaussian") d$y <- d$f + stats::rnorm(30)[d$fac] + stats::rnorm(n, sd = 2)
  }
  if (fam == "binomial") d$y <- stats::rbinom(n, 1, stats::plogis(z))
  if (fam == "poisson") d$y <- stats::rpois(n, exp(1 + z / 2))
  if (fam == "Gamma") d$y <- stats::rgamma(n, shape = 2, rate = 2 / exp(1 + z / 2))
  # the extended families (gam.fit4's REML, R/outer_efam.R)
  if (fam == "nb") d$y <- stats::rnbinom(n, mu = exp(1 + z / 2), size = 3)
  if (fam == "tw") d$y <- rTweedie(exp(1 + z / 2), p = 1.5, phi = 1)
  d
}
# (every kernel compiled and loaded before the first timing: the additive
# fit's, the outer iteration's and the bases' on every row)
for (fam in unique(c("binomial", fams))) {
  warm <- sim(30000, fam)
  invisible(gam_gpu(f, family = family_of(fam), data = warm, method = "REML",
                    device = if (gpu) "required" else "off"))
}
rows <- list()
for (n in ns) for (fam in fams) {
  d <- sim(n, fam)
  family <- family_of(fam)
  for (method in cells[cells[, 1] == fam, 2]) {
    dev <- if (gpu) elapsed(function() gam_gpu(f, family = family, data = d, method = method,
                                               device = "required"))
    cpu <- if (n <= cpu_max) elapsed(function() gam_gpu(f, family = family, data = d,
                                                        method = method, device = "off"), 1L)
    ref <- if (n <= gam_max) gam_limited(f, family, d, method)
    g <- if (gpu) dev else cpu
    a <- if (is.null(ref) || is.null(g)) c(NA, NA, NA) else {
      b <- ref$value
      c(max(abs(g$value$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)),
        (g$value$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]),
        sum(g$value$edf) - sum(b$edf))
    }
    row <- data.frame(n = n, model = model, family = fam, method = method,
                      gpu = if (gpu) dev$time else NA,
                      cpu = if (is.null(cpu)) NA else cpu$time,
                      gam = if (is.null(ref)) NA else ref$time,
                      gam_note = if (n > gam_max) "not run" else
                        if (is.null(ref)) sprintf("> %g s", limit) else "",
                      gam_threads = cores,
                      x_gam_gpu = if (gpu && !is.null(ref)) ref$time / dev$time else NA,
                      x_gam_cpu = if (!is.null(ref) && !is.null(cpu)) ref$time / cpu$time else NA,
                      fit = a[1], score = a[2], edf = a[3],
                      outer_iter = if (is.null(g$value$outer.info$iter)) NA else
                        g$value$outer.info$iter,
                      grams = if (is.null(g$value$device$outer_grams)) NA else
                        g$value$device$outer_grams,
                      x = if (is.null(g)) NA else g$value$device$model_matrix,
                      setup = if (is.null(g)) NA else g$value$device$timings[["setup"]],
                      selection = if (is.null(g)) NA else g$value$device$timings[["selection"]],
                      iterations = if (is.null(g)) NA else g$value$device$timings[["iterations"]],
                      postproc = if (is.null(g)) NA else g$value$device$timings[["postproc"]])
    print(row, digits = 3, row.names = FALSE)
    rows[[length(rows) + 1]] <- row
    if (nzchar(out_csv)) write.csv(do.call(rbind, rows), out_csv, row.names = FALSE)
  }
}
cat("\nall (seconds; x_* = gam()'s time over gam_gpu's):\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
