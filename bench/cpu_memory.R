# bench/cpu_memory.R -- the peak memory of a CPU fit: gam_gpu()'s CPU
# engine against bam(discrete = TRUE) on issue 40's models (those of
# bench/cpu_discrete.R), each fit in a process of its own (not a test).
#
#   Rscript bench/cpu_memory.R [n ...]        (default 1e6)
#
# A fit's memory is the peak resident set (Linux's VmHWM) of a process that
# simulates the data and fits, less that of one that only simulates it: the
# same for both engines, whatever R and malloc keep between calls.
# Environment: GAMGPU_BENCH_THREADS (default 2), GAMGPU_BENCH_OUT (CSV),
# GAMGPU_BENCH_MODELS (a subset of the models, e.g. "2,3").
args <- commandArgs(trailingOnly = TRUE)
child <- length(args) && args[1] == "--child"

hwm_gib <- function() {
  l <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", l)) / 2^20
}

if (child) {
  suppressMessages({library(mgcv); library(gamgpu)})
  n <- as.numeric(args[2]); model <- as.integer(args[3]); engine <- args[4]
  th <- as.integer(Sys.getenv("GAMGPU_BENCH_THREADS", "2"))
  source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                   "cpu_models.R"))
  d <- cpu_sim(n)
  m <- cpu_models[[model]]
  gc()
  t <- system.time(switch(engine,
    data = NULL,
    gam_gpu = gam_gpu(m$f, family = m$family, data = d, device = "off",
                      control = gam_gpu_control(nthreads = th)),
    bam_discrete = bam(m$f, family = m$family, data = d, discrete = TRUE, nthreads = th)))
  cat(sprintf("%.6f %.3f\n", hwm_gib(), t[["elapsed"]]))
  quit(save = "no")
}

script <- sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))
source(file.path(dirname(script), "cpu_models.R"))
ns <- if (length(args)) as.numeric(args) else 1e6
out_csv <- Sys.getenv("GAMGPU_BENCH_OUT")
run <- function(n, model, engine) {
  r <- system2(file.path(R.home("bin"), "Rscript"),
               c(shQuote(script), "--child", format(n, scientific = FALSE), model, engine),
               stdout = TRUE)
  as.numeric(strsplit(utils::tail(r, 1), " ")[[1]])
}
sel <- Sys.getenv("GAMGPU_BENCH_MODELS")
ks <- if (nzchar(sel)) as.integer(strsplit(sel, ",")[[1]]) else seq_along(cpu_models)
rows <- list()
for (n in ns) for (k in ks) {
  base <- run(n, k, "data")[1]
  g <- run(n, k, "gam_gpu")
  b <- run(n, k, "bam_discrete")
  r <- data.frame(n = n, model = cpu_models[[k]]$name,
                  gam_gpu_gib = g[1] - base, bam_discrete_gib = b[1] - base,
                  gam_gpu_s = g[2], bam_discrete_s = b[2], data_gib = base,
                  stringsAsFactors = FALSE)
  print(r, row.names = FALSE, digits = 3)
  rows[[length(rows) + 1L]] <- r
}
tab <- do.call(rbind, rows)
if (nzchar(out_csv)) utils::write.csv(tab, out_csv, row.names = FALSE)
