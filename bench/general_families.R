# bench/general_families.R -- gam_gpu() with mgcv's general families
# (cox.ph, cox.ph with 10 strata "cox.strata", gaulss, ziplss, multinom
# with 3 classes, mvn with 2 responses)
# against mgcv::gam() on the same model and data, in one process on one
# machine (not a test):
#
#   Rscript bench/general_families.R [n ...]        (default 1e4 2e4)
#
# Environment:
#   GAMGPU_BENCH_FAMILIES  families to run (default "cox.ph,gaulss,ziplss,multinom,mvn")
#   GAMGPU_BENCH_GAM_MAX   the largest n for gam() (default 1e5): above it
#                          the gam() column says "not run"
#   GAMGPU_BENCH_DEVICE    gam_gpu's device (default "auto": the rows on the
#                          GPU where one is usable)
#   GAMGPU_BENCH_CSV       also write the rows to this CSV file
#   GAMGPU_BENCH_ROUTE     gam_gpu's route for the general families:
#                          "native" (default, as gam_gpu()'s: gamgpu's own
#                          Newton and outer iteration, R/general_outer.R,
#                          where it takes the fit -- not mvn()), "gam"
#                          (gam()'s iteration around gamgpu's ll():
#                          options(gamgpu.general_route = "gam"); the only
#                          route, and so the rows, of runs before the native
#                          one was the default) or "both" (a row for each);
#                          the rows' route column says which route ran
# Four smooths (k = 10) of gamSim(1)'s covariates; for the location-scale
# families, multinom and mvn a second linear predictor of two smooths.  Both
# fitters are at their defaults (REML); mgcv uses one thread, as gam()'s
# default.  Prints wall times, the ratio, gamgpu's time in its own
# products (ll_seconds), its ll() calls and X's loads into a model
# session (x_loads; device fits), and the largest difference of the linear
# predictors relative to their range; and fit$device$timings' setup,
# iterations and postproc seconds with how X was made (x: "recipe", built
# where the fit runs, or "matrix", R's).
suppressMessages({
  library(mgcv)
  library(gamgpu)
})
args <- commandArgs(trailingOnly = TRUE)
ns <- if (length(args)) as.numeric(args) else c(1e4, 2e4)
fams <- strsplit(Sys.getenv("GAMGPU_BENCH_FAMILIES", "cox.ph,gaulss,ziplss,multinom,mvn"), ",")[[1]]
gam_max <- as.numeric(Sys.getenv("GAMGPU_BENCH_GAM_MAX", "1e5"))
device <- Sys.getenv("GAMGPU_BENCH_DEVICE", "auto")
csv <- Sys.getenv("GAMGPU_BENCH_CSV", "")
route <- Sys.getenv("GAMGPU_BENCH_ROUTE", "native")
routes <- if (route == "both") c("gam", "native") else route

case <- function(name, n) {
  set.seed(1)
  d <- gamSim(1, n = n, dist = "normal", verbose = FALSE)
  f <- (d$f - mean(d$f)) / sd(d$f)
  f1 <- (d$f1 - mean(d$f1)) / sd(d$f1)
  rhs <- ~ s(x0) + s(x1) + s(x2) + s(x3)
  switch(name,
    cox.ph = {
      d$t <- rexp(n, exp(f / 2))
      d$d <- as.numeric(d$t < quantile(d$t, 0.8))
      list(formula = t ~ s(x0) + s(x1) + s(x2) + s(x3), family = cox.ph(), data = d,
           weights = d$d)
    },
    cox.strata = {
      d$st <- sample(10, n, replace = TRUE)
      d$t <- rexp(n, exp(f / 2 + d$st / 10))
      d$d <- as.numeric(d$t < quantile(d$t, 0.8))
      list(formula = cbind(t, st) ~ s(x0) + s(x1) + s(x2) + s(x3), family = cox.ph(),
           data = d, weights = d$d)
    },
    gaulss = {
      d$y <- f + rnorm(n) * exp(f1 / 4 - 0.5)
      list(formula = list(y ~ s(x0) + s(x1) + s(x2) + s(x3), ~ s(x1) + s(x2)),
           family = gaulss(), data = d)
    },
    ziplss = {
      p0 <- binomial()$linkinv(f1 / 2 + 0.5)
      d$y <- ifelse(runif(n) < p0, rpois(n, exp(f / 2 + 0.5)), 0)
      list(formula = list(y ~ s(x0) + s(x1) + s(x2) + s(x3), ~ s(x1) + s(x2)),
           family = ziplss(), data = d)
    },
    multinom = {
      pr <- cbind(1, exp(f / 2), exp(f1 / 2))
      pr <- pr / rowSums(pr)
      d$y <- apply(pr, 1, function(p) sample(0:2, 1, prob = p))
      list(formula = list(y ~ s(x0) + s(x1) + s(x2) + s(x3), ~ s(x1) + s(x2)),
           family = multinom(K = 2), data = d)
    },
    mvn = {
      # (two responses, correlated errors: sd 1 and 0.5, correlation 0.5)
      e1 <- rnorm(n)
      d$y1 <- f + e1
      d$y2 <- f1 + 0.5 * (0.5 * e1 + sqrt(0.75) * rnorm(n))
      list(formula = list(y1 ~ s(x0) + s(x1) + s(x2) + s(x3), y2 ~ s(x1) + s(x2)),
           family = mvn(d = 2), data = d)
    })
}

fit_with <- function(fitter, cs, ...) {
  args <- list(cs$formula, family = cs$family, data = cs$data, ...)
  if (!is.null(cs$weights)) args$weights <- cs$weights
  t0 <- proc.time()[["elapsed"]]
  fit <- do.call(fitter, args)
  list(fit = fit, secs = proc.time()[["elapsed"]] - t0)
}

rows <- list()
b <- NULL
for (name in fams) for (n in ns) for (rt in routes) {
  cs <- case(name, n)
  old <- options(gamgpu.general_route = rt)
  g <- fit_with(gam_gpu, cs, method = "REML", device = device)
  options(old)
  b <- if (n <= gam_max && (rt == routes[1L] || is.null(b))) fit_with(gam, cs, method = "REML")
    else if (n <= gam_max) b
  diff <- if (is.null(b)) NA else {
    lb <- as.matrix(b$fit$linear.predictors)
    lg <- as.matrix(g$fit$linear.predictors)
    max(sweep(abs(lg - lb), 2, apply(lb, 2, function(x) diff(range(x))), "/"))
  }
  tm <- g$fit$device$timings
  ran <- if (grepl("native route", g$fit$device$route)) "native" else "gam"
  row <- data.frame(family = name, route = ran, n = n, p = length(coef(g$fit)),
                    gam_gpu_s = round(g$secs, 3), gam_s = if (is.null(b)) NA else round(b$secs, 3),
                    ratio = if (is.null(b)) NA else round(b$secs / g$secs, 2),
                    ll_s = round(g$fit$device$ll_seconds, 3),
                    ll_calls = g$fit$device$ll_calls,
                    x_loads = if (is.null(g$fit$device$ll_sessions)) NA
                              else g$fit$device$ll_sessions,
                    setup_s = round(tm[["setup"]], 3), iter_s = round(tm[["iterations"]], 3),
                    post_s = round(tm[["postproc"]], 3),
                    x = if (is.null(g$fit$device$model_matrix)) NA else g$fit$device$model_matrix,
                    backend = g$fit$device$backend, lp_diff = signif(diff, 3),
                    stringsAsFactors = FALSE)
  print(row, row.names = FALSE)
  rows[[length(rows) + 1L]] <- row
  # (written after each row: a run cut short keeps what it measured)
  if (nzchar(csv)) utils::write.csv(do.call(rbind, rows), csv, row.names = FALSE)
}
out <- do.call(rbind, rows)
cat("\n")
print(out, row.names = FALSE)
