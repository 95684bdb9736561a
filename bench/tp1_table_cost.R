# bench/tp1_table_cost.R -- what a one-variable thin plate basis's
# piecewise polynomial table (R/model_matrix.R: tp1_table()) costs against
# the rows it saves (not a test): the table on 2000 knots (k = 10, m = 2)
# over 1 and all threads, and the raw basis on n rows built with and
# without it, on the host and on the device when there is one.  It decides
# where gamgpu evaluates the basis by its direct sums instead (few rows).
#
#   Rscript bench/tp1_table_cost.R [n ...]    (1e3 1e4 1e5 1e6)
suppressMessages({library(mgcv); library(gamgpu)})
ns <- as.numeric(commandArgs(trailingOnly = TRUE))
if (!length(ns)) ns <- c(1e3, 1e4, 1e5, 1e6)
g <- asNamespace("gamgpu")
set.seed(1)
x <- runif(5000)
sm <- smoothCon(s(x), data.frame(x = x), knots = NULL)[[1]]
cores <- parallel::detectCores()
med <- function(f, reps = 5) median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
Xu <- sm$Xu; storage.mode(Xu) <- "double"
for (th in unique(c(1L, cores)))
  cat(sprintf("table, K = %d, k = %d, threads %2d: %.4f s\n", nrow(Xu), ncol(sm$UZ), th,
              med(function() g$tp1_table(Xu, sm$UZ, sm$p.order[1], 2L, th))))
gpu <- isTRUE(gpu_info()$usable)
for (n in ns) {
  d <- data.frame(x = runif(n))
  for (dev in c(FALSE, if (gpu) TRUE)) {
    dv <- if (dev) c(2L, 0L) else NULL
    ta <- med(function() g$raw_basis_matrix(sm, d, n, cores, dv, tp1_table = TRUE))
    tb <- med(function() g$raw_basis_matrix(sm, d, n, cores, dv, tp1_table = FALSE))
    a <- g$raw_basis_matrix(sm, d, n, cores, dv, tp1_table = TRUE)
    b <- g$raw_basis_matrix(sm, d, n, cores, dv, tp1_table = FALSE)
    cat(sprintf("n = %8g %-6s: with table %.4f s, direct sums %.4f s, max diff %.1e\n", n,
                if (dev) "device" else "host", ta, tb, max(abs(a - b)) / max(abs(b))))
  }
}
