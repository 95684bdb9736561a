# bench/cpu_discrete.R -- the CPU engine against bam(discrete = TRUE), the
# peer a user without a GPU would pick (issue 40), one process, one
# machine, the same threads (not a test).
#
#   Rscript bench/cpu_discrete.R [n ...]        (default 1e6)
#
# Environment: GAMGPU_BENCH_THREADS (default 2), GAMGPU_BENCH_OUT (also
# write the rows to this CSV), GAMGPU_BENCH_FREML (1: also bam fREML, the
# exact fit, for agreement; default 1).
#
# Models (issue 40): gaussian with a 20-level factor, two cr smooths
# (k = 20) and te(8, 8) (p = 117); binomial with three tp smooths (k = 20)
# and a linear term; poisson with a random effect (50 levels) and a
# by-factor smooth.  gam_gpu(device = "off") with its CPU Gram product
# chosen as on any machine ("auto": gamgpu's kernel where it beats R's
# BLAS) and with R's BLAS forced, bam(discrete = TRUE) and bam(method =
# "fREML").  Prints seconds, ratios (bam discrete's time over gam_gpu's)
# and agreement with bam fREML (linear predictors, of their range).
suppressMessages({library(mgcv); library(gamgpu)})
args <- as.numeric(commandArgs(trailingOnly = TRUE))
ns <- if (length(args)) args else 1e6
th <- as.integer(Sys.getenv("GAMGPU_BENCH_THREADS", "2"))
out_csv <- Sys.getenv("GAMGPU_BENCH_OUT")
freml <- Sys.getenv("GAMGPU_BENCH_FREML", "1") == "1"

sim <- function(n) {
  set.seed(1)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), x3 = runif(n),
                  fac = factor(sample(letters[1:20], n, TRUE)),
                  re = factor(sample(1:50, n, TRUE)), g = factor(sample(1:3, n, TRUE)))
  f <- sin(2 * pi * d$x0) + exp(d$x1) / 3 + d$x2 * d$x3 + (as.integer(d$fac) %% 4) / 4
  d$y <- f + rnorm(n)
  d$yb <- rbinom(n, 1, plogis(f - 1))
  d$yp <- rpois(n, exp(0.3 * f + rnorm(50, 0, 0.3)[d$re] + 0.2 * as.integer(d$g)))
  d
}
models <- list(
  list(name = "gaussian fac + 2 cr(20) + te(8,8)", family = gaussian(),
       f = y ~ fac + s(x0, bs = "cr", k = 20) + s(x1, bs = "cr", k = 20) + te(x2, x3, k = c(8, 8))),
  list(name = "binomial 3 tp(20) + linear", family = binomial(),
       f = yb ~ s(x0, k = 20) + s(x1, k = 20) + s(x2, k = 20) + x3),
  list(name = "poisson re(50) + by-factor", family = poisson(),
       f = yp ~ g + s(re, bs = "re") + s(x0, by = g, bs = "cr") + s(x1, bs = "cr")))

elapsed <- function(expr) {
  gc()
  t <- system.time(v <- expr)[["elapsed"]]
  list(time = t, value = v)
}
mode <- function(m) options(gamgpu.cpu_gram = m)   # (gam_gpu() applies it)
rows <- list()
cat(sprintf("CPU: %d threads; R's BLAS: %s\n", th, gamgpu:::r_blas()))
for (n in ns) {
  d <- sim(n)
  for (m in models) {
    mode("auto")
    own <- elapsed(gam_gpu(m$f, family = m$family, data = d, device = "off",
                           control = gam_gpu_control(nthreads = th)))
    mode("blas")
    blas <- elapsed(gam_gpu(m$f, family = m$family, data = d, device = "off",
                            control = gam_gpu_control(nthreads = th)))
    disc <- elapsed(bam(m$f, family = m$family, data = d, discrete = TRUE, nthreads = th))
    ex <- if (freml) elapsed(bam(m$f, family = m$family, data = d, nthreads = th))
    agree <- function(g) if (is.null(ex)) NA else
      max(abs(g$linear.predictors - ex$value$linear.predictors)) /
        diff(range(ex$value$linear.predictors))
    r <- data.frame(n = n, model = m$name, p = length(coef(own$value)),
                    gam_gpu = own$time, gam_gpu_blas = blas$time, bam_discrete = disc$time,
                    bam_freml = if (is.null(ex)) NA else ex$time,
                    x_discrete = disc$time / own$time,
                    gram = own$value$device$cpu_gram,
                    agree_gam_gpu = agree(own$value), agree_discrete = agree(disc$value),
                    stringsAsFactors = FALSE)
    print(r[, c("n", "model", "p", "gam_gpu", "gam_gpu_blas", "bam_discrete", "bam_freml",
                "x_discrete", "agree_gam_gpu", "agree_discrete")], row.names = FALSE)
    rows[[length(rows) + 1L]] <- r
  }
}
tab <- do.call(rbind, rows)
if (nzchar(out_csv)) utils::write.csv(tab, out_csv, row.names = FALSE)
