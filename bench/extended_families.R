# bench/extended_families.R -- gam_gpu() with mgcv's extended families
# (theta estimated) on the device and on the CPU against mgcv::bam()
# (fREML and discrete), in one process on one machine (not a test).  Run
# on the GPU machine with
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/extended_families.R [n ...]
#
# Environment:
#   GAMGPU_BENCH_FAMILIES  families to run (default "nb,tw,ziP,ocat"; also
#                          betar, scat)
#   GAMGPU_BENCH_BAM_LIMIT seconds a bam() fit may take (default 240); a
#                          fit still running then is stopped and reported
#                          as "> limit" (it runs in a forked child)
#   GAMGPU_BENCH_CPU_MAX   the largest n for the CPU engine (default 1e5)
#   GAMGPU_BENCH_FREML_MAX the largest n for bam fREML (default Inf); above
#                          it the column says "not run"
#   GAMGPU_BENCH_CSV       also write the rows to this CSV file
#   GAMGPU_BENCH_SKIP_BAM  1: no bam() fits (their columns say "not run")
#   GAMGPU_BENCH_BAM       which bam() fits to run (default "fREML,discrete");
#                          the other column says "not run"
#   GAMGPU_BENCH_DEVICE    gam_gpu's device for the "gpu" column (default
#                          "required"; "off" tries the script without a GPU)
#   GAMGPU_BENCH_THREADS   mgcv's threads (default all cores): 16 for each of
#                          two processes on a 32-core machine, one family
#                          each, to fit bam's 1e6 runs in one 10-minute call
# gamSim data, four smooths (k = 10, p = 37), the family's response
# simulated from the smooths' sum.  mgcv gets all cores.  Prints wall
# times, ratios to gam_gpu on the device, and the agreement of theta and
# the linear predictors with bam (fREML where it finished, else discrete).
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
ns <- if (length(args)) as.numeric(args) else c(1e5, 1e6)
fams <- strsplit(Sys.getenv("GAMGPU_BENCH_FAMILIES", "nb,tw,ziP,ocat"), ",")[[1]]
limit <- as.numeric(Sys.getenv("GAMGPU_BENCH_BAM_LIMIT", "240"))
cpu_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_CPU_MAX", "1e5"))
freml_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_FREML_MAX", "Inf"))
skip_bam <- identical(Sys.getenv("GAMGPU_BENCH_SKIP_BAM"), "1")
bam_methods <- strsplit(Sys.getenv("GAMGPU_BENCH_BAM", "fREML,discrete"), ",")[[1]]
run_freml <- !skip_bam && "fREML" %in% bam_methods
run_discrete <- !skip_bam && "discrete" %in% bam_methods
csv <- Sys.getenv("GAMGPU_BENCH_CSV", "")
device <- Sys.getenv("GAMGPU_BENCH_DEVICE", "required")
threads <- as.integer(Sys.getenv("GAMGPU_BENCH_THREADS", parallel::detectCores()))
fml <- y ~ s(x0) + s(x1) + s(x2) + s(x3)

family_of <- function(name) switch(name, nb = nb(), tw = tw(), ziP = ziP(),
                                   ocat = ocat(R = 4), betar = betar(), scat = scat())
sim <- function(name, n) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", verbose = FALSE)
  f <- (d$f - mean(d$f)) / sd(d$f)
  d$y <- switch(name,
    nb = rnbinom(n, size = 3, mu = exp(f / 2 + 1)),
    tw = rTweedie(exp(f / 2 + 1), p = 1.5, phi = 1.2),
    ziP = {
      lambda <- exp(f / 2 + 1)
      p <- binomial()$linkinv(-0.5 + 1.2 * log(lambda))
      ind <- runif(n) < p
      y <- numeric(n)
      y[ind] <- qpois(runif(sum(ind), dpois(0, lambda[ind]), 1), lambda[ind])
      y
    },
    ocat = as.numeric(cut(f + rlogis(n), c(-Inf, -1, 0, 1.5, Inf))),
    betar = {
      mu <- plogis(f / 2)
      rbeta(n, mu * 8, (1 - mu) * 8)
    },
    scat = f + 0.7 * rt(n, df = 4))
  d
}
timed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(time = t, value = v)
}
# bam() in a forked child, stopped after `limit` seconds: NULL then
bam_limited <- function(...) {
  t0 <- proc.time()[["elapsed"]]
  job <- parallel::mcparallel(bam(...), silent = TRUE)
  res <- parallel::mccollect(job, wait = FALSE, timeout = limit)
  if (is.null(res)) {
    tools::pskill(job$pid)
    parallel::mccollect(job, wait = TRUE)
    return(NULL)
  }
  v <- res[[1]]
  if (inherits(v, "try-error")) stop(v)
  list(time = proc.time()[["elapsed"]] - t0, value = v)
}
theta <- function(f) paste(format(f$family$getTheta(TRUE), digits = 5), collapse = "/")
theta_gap <- function(f, ref) max(abs(f$family$getTheta(TRUE) - ref$family$getTheta(TRUE)) /
                                    pmax(abs(ref$family$getTheta(TRUE)), 1e-3))
lp_gap <- function(f, ref) max(abs(f$linear.predictors - ref$linear.predictors)) /
  diff(range(ref$linear.predictors))
fmt_time <- function(r) if (is.null(r)) sprintf("> %.0f", limit) else sprintf("%.2f", r$time)

rows <- list()
for (name in fams) {
  invisible(gam_gpu(fml, data = sim(name, 20000), family = family_of(name), device = device))
  for (n in ns) {
    d <- sim(name, n)
    g <- timed(gam_gpu(fml, data = d, family = family_of(name), device = device))
    cp <- if (n <= cpu_max) timed(gam_gpu(fml, data = d, family = family_of(name), device = "off"))
    bf <- if (run_freml && n <= freml_max) bam_limited(fml, data = d, family = family_of(name),
                                          nthreads = threads)
    bd <- if (run_discrete) bam_limited(fml, data = d, family = family_of(name),
                                     discrete = TRUE, nthreads = threads)
    ref <- if (!is.null(bf)) bf$value else if (!is.null(bd)) bd$value
    row <- data.frame(
      family = name, n = n, gpu = g$time,
      gpu_setup = g$value$device$timings[["setup"]],
      gpu_iter = g$value$device$timings[["iterations"]],
      gpu_post = g$value$device$timings[["postproc"]],
      cpu = if (is.null(cp)) NA else cp$time,
      bam_fREML = if (!run_freml || n > freml_max) "not run" else fmt_time(bf),
      bam_discrete = if (!run_discrete) "not run" else fmt_time(bd),
      fREML_over_gpu = if (is.null(bf)) NA else bf$time / g$time,
      discrete_over_gpu = if (is.null(bd)) NA else bd$time / g$time,
      theta_gpu = theta(g$value),
      theta_vs_ref = if (is.null(ref)) NA else theta_gap(g$value, ref),
      lp_vs_ref = if (is.null(ref)) NA else lp_gap(g$value, ref),
      lp_gpu_vs_cpu = if (is.null(cp)) NA else lp_gap(g$value, cp$value),
      bam_threads = threads,
      ref = if (!is.null(bf)) "fREML" else if (!is.null(bd)) "discrete" else "none",
      backend = g$value$device$backend, iter = g$value$iter)
    print(row, digits = 4, row.names = FALSE)
    rows[[length(rows) + 1]] <- row
    if (nzchar(csv)) utils::write.csv(do.call(rbind, rows), csv, row.names = FALSE)
  }
}
