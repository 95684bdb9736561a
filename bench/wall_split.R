# bench/wall_split.R -- where a gam_gpu() fit's wall time goes, by R
# function (not a test).  Rprof (bench/setup_split.R) samples CPU time, so
# a thread pool spinning after its work (mgcv's OpenMP, gamgpu's threads)
# is charged to whatever R line runs next, and time spent waiting for the
# device is not charged at all; here gamgpu's own functions are wrapped
# with wall-clock timers instead (nested ones count inside their callers).
# One warm-up fit, then one timed fit.
#
#   Rscript bench/wall_split.R [n] [model] [family] [method]
#
# model: "cr" (four cr smooths, the default), "tp" (four thin plate
# smooths) or "big" (the p = 254 model of bench/gpu_engine.R); family
# "gaussian" or "binomial"; method "fREML" (default), "REML", "GCV.Cp", ...
# The data are made column by column (runif, then the response), as in
# bench/billion.R.  Environment: GAMGPU_BENCH_DEVICE ("required"; "off").
suppressMessages(library(gamgpu))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[[1L]]) else 1e7
model <- if (length(args) >= 2L) args[[2L]] else "cr"
fam <- if (length(args) >= 3L) args[[3L]] else "gaussian"
method <- if (length(args) >= 4L) args[[4L]] else "fREML"
device <- Sys.getenv("GAMGPU_BENCH_DEVICE", "required")

set.seed(1)
d <- data.frame(x0 = runif(n))
d$x1 <- runif(n)
d$x2 <- runif(n)
d$x3 <- runif(n)
eta <- 2 * sin(pi * d$x0) + exp(2 * d$x1) / 4 + d$x2^2 - d$x3
d$y <- if (fam == "binomial") as.numeric(runif(n) < 1 / (1 + exp(-(eta - 1.5)))) else
  eta + rnorm(n)
rm(eta)
f <- switch(model,
  cr = y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr"),
  tp = y ~ s(x0) + s(x1) + s(x2) + s(x3),
  big = y ~ s(x0, k = 40) + s(x1, k = 40) + s(x2, k = 40) + s(x3, k = 40) +
    te(x0, x1, k = c(10, 10)),
  stop("model must be cr, tp or big"))
family <- if (fam == "binomial") binomial() else gaussian()

ns <- asNamespace("gamgpu")
acc <- new.env()
calls <- new.env()
timed <- c("gg_setup", "lean_setup", "lean_complete", "lean_variable_summary", "lean_mini_mf",
           "lean_rep", "gam_basis_facts", "tprs_stand_in", "tprs_knot_data",
           "raw_basis_matrix", "model_matrix_plan", "parametric_blocks", "checked_recipe",
           "full_model_matrix", "gcv_smoothing", "gcv_finish", "outer_smoothing",
           "outer_finish", "gg_assemble")
wrap <- function(fn) {
  f0 <- get(fn, ns)
  acc[[fn]] <- 0
  calls[[fn]] <- 0L
  f1 <- function(...) {
    t0 <- proc.time()[["elapsed"]]
    on.exit({
      acc[[fn]] <- acc[[fn]] + proc.time()[["elapsed"]] - t0
      calls[[fn]] <- calls[[fn]] + 1L
    })
    f0(...)
  }
  unlockBinding(fn, ns)
  assign(fn, f1, ns)
  lockBinding(fn, ns)
}
for (fn in intersect(timed, ls(ns))) wrap(fn)
fit_once <- function() gam_gpu(f, data = d, family = family, method = method, device = device)
invisible(fit_once())
for (fn in ls(acc)) { acc[[fn]] <- 0; calls[[fn]] <- 0L }
wall <- system.time(fit <- fit_once())[["elapsed"]]
cat(sprintf("n = %g, %s %s, %s, %s: wall %.3f s, converged %s\n", n, model, fam, method,
            fit$device$backend, wall, fit$converged))
print(round(c(fit$device$timings, unlist(fit$device$split)), 3))
tab <- data.frame(seconds = unlist(mget(ls(acc), acc)), calls = unlist(mget(ls(acc), calls)))
tab <- tab[tab$calls > 0, , drop = FALSE]
print(tab[order(-tab$seconds), , drop = FALSE], digits = 3)
