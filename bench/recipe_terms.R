# bench/recipe_terms.R -- models as users write them (a random effect, a
# by-factor smooth, a parametric factor, a cyclic smooth, a te(), a factor
# smooth), with X built on the device from its recipe, against
# bam(discrete = TRUE) in the same process (not a test).  Prints, per model
# and n: gam_gpu's wall time and its setup share, where X was built, bam's
# time, the ratio, and the agreement of the linear predictors (bam discrete
# discretizes covariates, so agreement is to its discretization, ~1e-3).
#
#   Rscript bench/recipe_terms.R
#
# Environment: GAMGPU_BENCH_N (sizes, default "1e6,1e7"), GAMGPU_BENCH_DEVICE
# ("required"; "off" for the CPU engine), GAMGPU_BENCH_SKIP_BAM (sizes at
# which bam is not run), GAMGPU_BENCH_CSV (a file for the table),
# GAMGPU_BENCH_THREADS (bam's nthreads, default all cores),
# GAMGPU_BENCH_MODELS (which models, by number, default all).
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
env_num <- function(name, dflt) {
  v <- Sys.getenv(name)
  if (nzchar(v)) as.numeric(strsplit(v, ",")[[1]]) else dflt
}
sizes <- env_num("GAMGPU_BENCH_N", c(1e6, 1e7))
skip_bam <- env_num("GAMGPU_BENCH_SKIP_BAM", numeric())
device <- Sys.getenv("GAMGPU_BENCH_DEVICE", "required")
threads <- env_num("GAMGPU_BENCH_THREADS", parallel::detectCores())
csv <- Sys.getenv("GAMGPU_BENCH_CSV")

make_data <- function(n, seed = 1) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), doy = runif(n, 0, 365),
                  f = factor(sample(sprintf("g%03d", 1:200), n, TRUE)),
                  h = factor(sample(sprintf("l%02d", 1:20), n, TRUE)),
                  k = factor(sample(c("a", "b", "c", "d"), n, TRUE)),
                  expo = runif(n, 0.5, 2))
  re <- rnorm(200, sd = 0.3)[as.integer(d$f)]
  eta <- sin(2 * pi * d$x0) + (d$x1 - 0.5)^2 + 0.4 * cos(2 * pi * d$doy / 365) +
    0.2 * as.integer(d$k) + re + 0.3 * sin(3 * d$x2 * as.integer(d$h) / 5)
  d$y <- eta + rnorm(n) / 2
  d$cnt <- rpois(n, d$expo * exp(eta / 2))
  d$pos <- rgamma(n, shape = 3, rate = 3 / exp(eta / 3))
  d
}

models <- list(
  "gaussian, random effect + cr" = list(
    f = y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(f, bs = "re"), fam = gaussian()),
  "poisson offset, cr + te + tp + re" = list(
    f = cnt ~ s(x0, bs = "cr") + te(x1, x2) + s(doy) + s(f, bs = "re") + offset(log(expo)),
    fam = poisson()),
  "Gamma log, 2 cr + by-factor (20)" = list(
    f = pos ~ s(x0, bs = "cr") + s(x1, bs = "cr") + h + s(x2, by = h, bs = "cr", k = 6),
    fam = Gamma(link = "log")),
  "gaussian, factor + cc + te(cr, cr)" = list(
    f = y ~ k + s(doy, bs = "cc") + s(x0, bs = "cr") + te(x1, x2, bs = "cr"),
    fam = gaussian()),
  "gaussian, factor smooth fs (20) + cc" = list(
    f = y ~ s(x2, h, bs = "fs", k = 5) + s(doy, bs = "cc") + s(x0, bs = "ps"),
    fam = gaussian())
)

pick <- env_num("GAMGPU_BENCH_MODELS", seq_along(models))
models <- models[pick]

rows <- list()
warm <- FALSE
for (n in sizes) {
  d <- make_data(n)
  for (nm in names(models)) {
    m <- models[[nm]]
    if (!warm) {                # NVRTC modules and the device, once
      invisible(gam_gpu(m$f, family = m$fam, data = d[seq_len(2e4), ], device = device))
      warm <- TRUE
    }
    gc()
    t_gg <- system.time(g <- gam_gpu(m$f, family = m$fam, data = d, device = device))[["elapsed"]]
    setup <- g$device$timings[["setup"]]
    t_bam <- NA_real_
    agree <- NA_real_
    if (!(n %in% skip_bam)) {
      gc()
      t_bam <- system.time(b <- bam(m$f, family = m$fam, data = d, discrete = TRUE,
                                    nthreads = threads))[["elapsed"]]
      agree <- max(abs(g$linear.predictors - b$linear.predictors)) /
        diff(range(b$linear.predictors))
      rm(b)
    }
    rows[[length(rows) + 1L]] <- data.frame(
      model = nm, n = n, backend = g$device$backend, x_built = g$device$model_matrix,
      gam_gpu_s = t_gg, setup_s = setup, bam_discrete_s = t_bam, ratio = t_bam / t_gg,
      eta_agreement = agree, stringsAsFactors = FALSE)
    cat(sprintf("%-38s n=%-6g %-4s X %-6s gam_gpu %7.2f s (setup %5.2f)  bam discrete %7.2f s  %5.1fx  eta %.1e%s\n",
                nm, n, g$device$backend, g$device$model_matrix, t_gg, setup, t_bam,
                t_bam / t_gg, agree,
                if (is.null(g$device$model_matrix_reason)) "" else
                  paste0("  [", g$device$model_matrix_reason, "]")))
    rm(g)
  }
  rm(d)
}
tab <- do.call(rbind, rows)
print(tab, digits = 3, row.names = FALSE)
if (nzchar(csv)) utils::write.csv(tab, csv, row.names = FALSE)
