# predict(fit, newdata, se.fit = TRUE) on large newdata: gamgpu with device
# "auto" (the GPU when usable) and "off" (the CPU twin) against mgcv's
# predict.gam, in one process.  Prints times, ratios and the largest
# relative differences of fit and se.fit; then the row step alone (fit =
# X beta, se = sqrt(x_i' Vp x_i) on a ready lp matrix) on the device, the
# CPU twin and R's rowSums((X %*% Vp) * X).
#   Rscript bench/predict.R               (1e6 rows of newdata)
#   GAMGPU_BENCH_SMALL=1 Rscript bench/predict.R   (1e5 rows)
library(gamgpu)
library(mgcv)
options(width = 250)
n_new <- if (nzchar(Sys.getenv("GAMGPU_BENCH_SMALL"))) 1e5 else 1e6
sim <- function(n, seed) {
  set.seed(seed)
  d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$fac <- factor(sample(letters[1:4], n, TRUE))
  d$yb <- rbinom(n, 1, binomial()$linkinv((d$f - mean(d$f)) / 3))
  d
}
dat <- sim(20000, 1)
newdata <- sim(n_new, 2)
models <- list(
  gaussian_cr_tp_by = list(y ~ fac + s(x0, bs = "cr") + s(x1, by = fac, bs = "cr") +
                             s(x2, k = 20) + s(x3), gaussian(), "link"),
  gaussian_te = list(y ~ s(x0, bs = "cr") + te(x1, x2) + s(x3), gaussian(), "link"),
  binomial_response = list(yb ~ fac + s(x0, bs = "cr") + s(x1) + s(x2, bs = "cr") + s(x3),
                           binomial(), "response"))
rel <- function(a, b) max(abs(a - b), na.rm = TRUE) / max(abs(b), na.rm = TRUE)
elapsed <- function(expr) system.time(expr)[["elapsed"]]
dev_ok <- isTRUE(gpu_info()$usable)
cat(sprintf("gamgpu predict benchmark: %.0f rows of newdata; device: %s\n\n", n_new,
            if (dev_ok) gpu_info()$devices$name[1] else "none usable (\"auto\" runs on the CPU)"))
rows <- list()
for (nm in names(models)) {
  m <- models[[nm]]
  fit <- gam_gpu(m[[1]], family = m[[2]], data = dat)
  type <- m[[3]]
  p <- length(coef(fit))
  # warm: module compile, arena, forked workers
  invisible(predict(fit, newdata[1:20000, ], type = type, se.fit = TRUE, device = "auto"))
  gpu_telemetry(reset = TRUE)
  t_auto <- elapsed(a <- predict(fit, newdata, type = type, se.fit = TRUE, device = "auto"))
  tel <- gpu_telemetry()
  ran <- if (any(tel$backend == "predict" & tel$launches > 0)) "gpu" else "cpu"
  t_off <- elapsed(o <- predict(fit, newdata, type = type, se.fit = TRUE, device = "off"))
  t_mgcv <- elapsed(b <- mgcv::predict.gam(fit, newdata, type = type, se.fit = TRUE))
  # the row step alone on the lp matrix
  X <- predict(fit, newdata, type = "lpmatrix")
  attributes(X) <- list(dim = dim(X))
  V <- unname(fit$Vp)
  beta <- unname(coef(fit))
  t_rows_dev <- if (dev_ok) elapsed(rd <- gamgpu:::predict_rows_c(X, beta, V, "required")) else NA
  t_rows_cpu <- elapsed(rc <- gamgpu:::predict_rows_c(X, beta, V, "off",
                                                      threads = gamgpu:::setup_threads(nrow(X))))
  t_rows_r <- elapsed(rr <- sqrt(pmax(0, rowSums((X %*% V) * X))))
  row <- data.frame(
    model = nm, p = p, auto_ran = ran, auto_s = t_auto, off_s = t_off, mgcv_s = t_mgcv,
    mgcv_over_auto = t_mgcv / t_auto, mgcv_over_off = t_mgcv / t_off,
    fit_rel_diff = max(rel(a$fit, b$fit), rel(o$fit, b$fit)),
    se_rel_diff = max(rel(a$se.fit, b$se.fit), rel(o$se.fit, b$se.fit)),
    rows_dev_s = t_rows_dev, rows_cpu_s = t_rows_cpu, rows_R_s = t_rows_r,
    rows_dev_vs_cpu = if (dev_ok) rel(rd$se.fit, rc$se.fit) else NA,
    rows_cpu_vs_R = rel(rc$se.fit, rr))
  print(row, digits = 3, row.names = FALSE)
  rows[[length(rows) + 1L]] <- row
  rm(X, a, o, b)
  invisible(gc())
}
cat("\nall models (times in seconds; *_over_* = mgcv time / gamgpu time):\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
