# bench/efam_rows.R -- gam()'s REML for nb() and tw() (issue 14) with the
# outer iteration's rows in C, kept beside X in the model session
# (inst/include/efam_outer.h; on the device for a GPU fit), against the
# same fit with the rows from mgcv's dDeta() in R (R/outer_efam.R's
# efam_rows_r(), what every extended family used before and the other
# extended families still use), four smooths of gamSim(1), one process
# (not a test).  On the GPU machine:
#
#   Rscript bench/efam_rows.R [n ...]     (default 1e5 1e6)
#
# GAMGPU_BENCH_REPS fits per cell (default 3, the median reported);
# device = "required" where a GPU is usable, else "off".  Prints both
# times, their ratio, where the rows ran, and the two fits' agreement
# (fitted values relative to their range, the criterion relative).
suppressMessages({library(mgcv); library(gamgpu)})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
ns <- if (length(args)) args else c(1e5, 1e6)
reps <- as.integer(Sys.getenv("GAMGPU_BENCH_REPS", "3"))
device <- if (isTRUE(gpu_info()$usable)) "required" else "off"
f <- y ~ s(x0) + s(x1) + s(x2) + s(x3)
ns_env <- asNamespace("gamgpu")
in_c <- get("efam_rows_in_c", ns_env)
rows_in <- function(where) {
  fn <- if (where == "C") in_c else function(family) FALSE
  utils::assignInNamespace("efam_rows_in_c", fn, "gamgpu")
}
fit <- function(d, fam) gam_gpu(f, family = fam, data = d, method = "REML", device = device)
timed <- function(d, fam) {
  t <- numeric(reps)
  for (r in seq_len(reps)) t[r] <- system.time(g <- fit(d, fam))[["elapsed"]]
  list(t = stats::median(t), g = g)
}
cat(sprintf("device = %s, %d reps\n", device, reps))
cat(sprintf("%-6s %-4s %10s %10s %7s %-8s %-40s %9s %9s\n", "n", "fam", "C rows", "R rows",
            "ratio", "C at", "R at", "fit diff", "score"))
for (n in ns) {
  set.seed(1)
  d <- gamSim(1, n = n, verbose = FALSE)
  eta <- (d$f - mean(d$f)) / 4
  d_nb <- d
  d_nb$y <- stats::rnbinom(n, mu = exp(1 + eta), size = 3)
  d_tw <- d
  d_tw$y <- rTweedie(exp(1 + eta), p = 1.5, phi = 1.2)
  for (cs in list(list("nb", d_nb, nb), list("tw", d_tw, tw))) {
    fit(cs[[2]], cs[[3]]())                        # (kernels compiled, caches warm)
    rows_in("C")
    a <- timed(cs[[2]], cs[[3]]())
    rows_in("R")
    b <- timed(cs[[2]], cs[[3]]())
    rows_in("C")
    fd <- max(abs(fitted(a$g) - fitted(b$g))) / diff(range(fitted(b$g)))
    sd <- (a$g$gcv.ubre[[1]] - b$g$gcv.ubre[[1]]) / abs(b$g$gcv.ubre[[1]])
    cat(sprintf("%-6g %-4s %9.3fs %9.3fs %6.2fx %-8s %-40s %9.1e %9.1e\n", n, cs[[1]], a$t,
                b$t, b$t / a$t, a$g$device$outer_rows, substr(b$g$device$outer_rows, 1, 40),
                fd, sd))
  }
}
