# bench/profile_fit.R -- where one gam_gpu() fit spends its time: R's
# profiler over `reps` fits after a warm-up fit (not a test).  The models
# of bench/gam_methods.R (issue 36); on the GPU machine:
#
#   Rscript bench/profile_fit.R model family method n [reps] [device]
#
#   model   "four", "mixed" or "t2" (bench/gam_methods.R's)
#   device  "required" (default) or "off"
#
# Prints the fit's phase times (fit$device$timings), the garbage
# collector's time per fit, the profile's functions by total time and
# their allocations (megabytes, per fit) and, with GAMGPU_PROFILE_OUT,
# writes the table there.
reps <- 5L
# (the arguments, the data and fit(): bench/fit_case.R, beside this script)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1L]))
source(file.path(here, "fit_case.R"))
g <- fit()
t <- system.time(g <- fit())[["elapsed"]]
cat(sprintf("%s %s %s n = %g, device %s: %.3f s; X %s (%s)\n", model, fam, method, n, device, t,
            g$device$model_matrix, toString(g$device$model_matrix_reason)))
print(round(g$device$timings, 4))
# (R's garbage collector's share of the profiled fits, which the profile
# charges to whatever function was running; with memory profiling, the
# megabytes each function allocates per fit, as mem.total)
prof <- tempfile()
gc0 <- gc.time()[3L]
Rprof(prof, interval = 0.002, memory.profiling = TRUE)
for (i in seq_len(reps)) g <- fit()
Rprof(NULL)
cat(sprintf("garbage collection: %.4f s per fit\n", (gc.time()[3L] - gc0) / reps))
s <- summaryRprof(prof, memory = "both")$by.total
s$total.time <- s$total.time / reps
s$self.time <- s$self.time / reps
s$mem.total <- s$mem.total / reps
s <- s[s$total.time >= 0.002 | s$mem.total >= 1, ]
print(utils::head(s[, c("total.time", "self.time", "mem.total")], 70), digits = 3)
out <- Sys.getenv("GAMGPU_PROFILE_OUT")
if (nzchar(out)) utils::write.csv(cbind(fn = rownames(s), s), out, row.names = FALSE)
