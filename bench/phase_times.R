# bench/phase_times.R -- where one gam_gpu() fit's wall time goes, by
# function: each of gamgpu's set-up, selection and fitting steps named
# below is wrapped to add up its elapsed time (nested steps count in their
# callers too), over `reps` fits after two warm-up fits (not a test).
# (Each step is called through a wrapper: a step that reads its own call,
# match.call() without its argument, would see the wrapper's; none of these does.)
# The models of bench/profile_fit.R; on the GPU machine:
#
#   Rscript bench/phase_times.R model family method n [reps] [device]
#
# Prints the mean wall time per fit, each step's per fit (largest first)
# and the fit's phase times (fit$device$timings).  R's profiler
# (bench/profile_fit.R) samples; this measures.
reps <- 10L
# (the arguments, the data and fit(): bench/fit_case.R, beside this script)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1L]))
source(file.path(here, "fit_case.R"))
steps <- c("lean_setup", "lean_mini_mf", "gam_basis_facts", "tprs_stand_ins", "tprs_knot_data",
           "tprs_facts", "cr_facts", "te_facts", "fs_facts", "gp_facts", "basis_stats",
           "raw_basis_matrix", "with_smooth_offsets", "model_matrix_plan", "checked_recipe",
           "fit_model_matrix", "model_session", "fit_engine", "gcv_smoothing", "gcv_problem",
           "gcv_magic", "gcv_flat_end_minimum", "gcv_finish", "outer_newton", "gam_postproc")
ns <- asNamespace("gamgpu")
acc <- new.env()
# (a wrapper around each step: its own on.exit() calls stay its own)
for (fn in intersect(steps, ls(ns))) local({
  orig <- get(fn, ns)
  nm <- fn
  w <- function(...) {
    t0 <- proc.time()[[3L]]
    on.exit(assign(nm, c(get0(nm, acc, inherits = FALSE), proc.time()[[3L]] - t0), envir = acc))
    orig(...)
  }
  utils::assignInNamespace(nm, w, ns)
})
for (i in 1:2) g <- fit()
rm(list = ls(acc), envir = acc)
t <- system.time(for (i in seq_len(reps)) g <- fit())[["elapsed"]] / reps
cat(sprintf("%s %s %s n = %g, device %s: %.4f s per fit (%d fits)\n", model, fam, method, n,
            device, t, reps))
s <- vapply(ls(acc), function(k) sum(acc[[k]]) / reps, 0)
print(round(sort(s, decreasing = TRUE), 4))
print(round(g$device$timings, 4))
