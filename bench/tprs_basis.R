# bench/tprs_basis.R -- the device thin-plate basis at scale (issue 13): the
# 4-smooth tp binomial model of bench/gpu_engine.R and the p = 254 model
# (four tp k = 40 and a te(), gaussian) and its two parts, each fitted on the GPU, with the
# time of the device's X build (fit$device$split["build"]) beside the fit's.
# Not a test.  On the GPU machine:
#
#   OPENBLAS_NUM_THREADS=1 Rscript bench/tprs_basis.R [n_tp [n_big]]
#
# (defaults 1e8 and 2e7).  GAMGPU_BENCH_OUT: a CSV path.  To compare two
# kernels, run it once per installed kernels/basis.cu (the module is
# compiled once per process).
suppressMessages(library(gamgpu))
args <- as.numeric(commandArgs(trailingOnly = TRUE))
n_tp <- if (length(args) >= 1) args[[1]] else 1e8
n_big <- if (length(args) >= 2) args[[2]] else 2e7
out_csv <- Sys.getenv("GAMGPU_BENCH_OUT")

# gamSim(1)'s truth, without gamSim's copies at 1e8 rows
sim <- function(n, seed = 1) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), x3 = runif(n))
  f <- 2 * sin(pi * d$x0) + exp(2 * d$x1) +
    0.2 * d$x2^11 * (10 * (1 - d$x2))^6 + 10 * (10 * d$x2)^3 * (1 - d$x2)^10
  d$y <- f + rnorm(n, 0, 2)
  d$yb <- rbinom(n, 1, plogis((f - 7.8) / 4))
  d
}

warm <- sim(20000)
invisible(gam_gpu(yb ~ s(x0) + s(x1), family = binomial(), data = warm, device = "required"))

cases <- list(
  list(model = "tp binomial", n = n_tp, family = binomial(),
       f = yb ~ s(x0) + s(x1) + s(x2) + s(x3)),
  list(model = "p=254 gaussian", n = n_big, family = gaussian(),
       f = y ~ s(x0, k = 40) + s(x1, k = 40) + s(x2, k = 40) + s(x3, k = 40) +
         te(x0, x1, k = c(10, 10))),
  # the p = 254 model's parts, to split its build time
  list(model = "4 tp k=40 gaussian", n = n_big, family = gaussian(),
       f = y ~ s(x0, k = 40) + s(x1, k = 40) + s(x2, k = 40) + s(x3, k = 40)),
  list(model = "te(cr 10x10) gaussian", n = n_big, family = gaussian(),
       f = y ~ te(x0, x1, k = c(10, 10))),
  # thin plate in two variables: the radial functions on the tensor cores
  list(model = "2 tp 2-d k=30 gaussian", n = n_big, family = gaussian(),
       f = y ~ s(x0, x1, k = 30) + s(x2, x3, k = 30)))
rows <- list()
for (cs in cases) {
  if (!is.finite(cs$n) || cs$n <= 0) next
  d <- sim(cs$n)
  invisible(gc())
  t <- system.time(g <- gam_gpu(cs$f, family = cs$family, data = d, device = "required"))[["elapsed"]]
  rows[[length(rows) + 1]] <- data.frame(
    model = cs$model, n = cs$n, p = length(coef(g)), fit = t,
    setup = g$device$timings[["setup"]], build = g$device$split[["build"]],
    transfer = g$device$split[["transfer"]], kernels = g$device$split[["kernels"]],
    iterations = g$device$timings[["iterations"]], postproc = g$device$timings[["postproc"]],
    placement = g$device$placement, model_matrix = g$device$model_matrix)
  print(rows[[length(rows)]], digits = 3, row.names = FALSE)
  rm(d, g); invisible(gc())
}
res <- do.call(rbind, rows)
if (nzchar(out_csv)) write.csv(res, out_csv, row.names = FALSE)
cat("\n"); print(res, digits = 3, row.names = FALSE)

# The device basis against its host twin (src/basis/basis_tprs.c) on 1e5 rows:
# the largest difference in a column over that column's largest entry --
# in one variable both build rows from the same piecewise polynomials (0);
# in more, with the tensor cores (sums four terms at a time: rounding) and
# without (the host's sums: 0 where the math library agrees)
d <- sim(1e5, seed = 2)
agree <- do.call(rbind, lapply(list(c(1, 10), c(1, 40), c(1, 75), c(2, 30), c(3, 20), c(3, 75)),
                               function(v) {
  f <- sprintf("y ~ s(%s, k = %d)", paste0("x", seq_len(v[1]) - 1, collapse = ", "), v[2])
  sm <- mgcv::gam(as.formula(f), data = d, fit = FALSE)$smooth[[1]]
  host <- gamgpu:::raw_basis_matrix(sm, d, nrow(d), 4L)
  rel <- function(X) max(apply(abs(X - host), 2, max) / apply(abs(host), 2, max))
  dev <- function(tc) {
    old <- options(gamgpu.tensor_cores = tc)
    on.exit(options(old))
    gamgpu:::raw_basis_matrix(sm, d, nrow(d), 4L, dev = c(2L, 0L))
  }
  data.frame(smooth = sm$label, k = v[2], tensor_cores = rel(dev(TRUE)), one_by_one = rel(dev(FALSE)))
}))
cat("\ndevice basis against the host's (largest column difference / column's largest entry):\n")
print(agree, digits = 3, row.names = FALSE)
