# tools/check_workload.R -- a small workload for the memory and thread
# checkers of tools/check_memory.sh: every path of a fit at a size a
# checker can run (families, extended families, the recipe terms, X built in
# R, prediction, interrupts, bad input), on the CPU, or on the device with
# GAMGPU_CHECK_DEVICE=required.  Exits non-zero if a fit goes wrong, so a
# checker's run cannot pass by crashing early.
suppressMessages({library(gamgpu); library(mgcv)})
device <- Sys.getenv("GAMGPU_CHECK_DEVICE", "off")
n <- as.integer(Sys.getenv("GAMGPU_CHECK_N", "2000"))
set.seed(3)
d <- data.frame(x = runif(n), z = runif(n), w = runif(n),
                f = factor(sample(letters[1:4], n, TRUE)), g = factor(sample(1:3, n, TRUE)))
eta <- sin(4 * d$x) + d$z - 0.5 + c(0, 0.2, -0.2, 0.1)[d$f]
d$y <- eta + rnorm(n) / 3
d$yb <- rbinom(n, 1, plogis(eta))
d$yp <- rpois(n, exp(eta))
d$yo <- as.integer(cut(eta + rnorm(n) / 2, 3))
ctl <- gam_gpu_control(nthreads = 2, block.rows = 500, chunk.size = 1000)   # X from its recipe
fits <- list(
  list(y ~ s(x) + s(z, bs = "cr") + f, gaussian()),
  list(yb ~ s(x, bs = "cr") + te(z, w, k = c(4, 4)) + s(f, bs = "re"), binomial()),
  list(yp ~ s(x, bs = "cc") + ti(z, w, k = c(4, 4)) + s(z) + s(w) + offset(log(w + 1)), poisson()),
  list(y ~ s(x, f, bs = "fs", k = 5) + t2(z, w, k = c(4, 4)), gaussian()),
  list(y ~ s(x, by = f, bs = "ps") + f + s(z, g, bs = "sz", k = 5), gaussian()),
  list(yp ~ s(x) + s(z, bs = "cr"), nb()),
  list(yo ~ s(x, bs = "cr") + s(z, bs = "cr"), ocat(R = 3)))
for (i in seq_along(fits)) {
  g <- gam_gpu(fits[[i]][[1]], family = fits[[i]][[2]], data = d, device = device, control = ctl)
  stopifnot(isTRUE(g$converged), all(is.finite(coef(g))))
  # (a family with its own predict function, ocat, predicts in R: "required"
  # would refuse it)
  pdev <- if (is.null(fits[[i]][[2]]$predict)) device else "auto"
  p <- predict(g, d[1:200, ], se.fit = TRUE, device = pdev)
  stopifnot(all(is.finite(p$se.fit)))
  cat(sprintf("fit %d: %s, %s, X %s\n", i, fits[[i]][[2]]$family, g$device$backend,
              g$device$model_matrix))
}
local({   # X built in R
  options(gamgpu.x_recipe = FALSE)
  on.exit(options(gamgpu.x_recipe = NULL))
  g <- gam_gpu(y ~ s(x) + s(z, bs = "cr"), data = d, device = device, control = ctl)
  stopifnot(identical(g$device$model_matrix, "matrix"))
})
for (k in c(1, 7, 40)) {   # interrupts
  options(gamgpu.inject_interrupt = k)
  r <- tryCatch(gam_gpu(y ~ s(x, k = 20) + s(z), data = d, device = device, control = ctl),
                gamgpu_interrupted = function(e) "interrupted")
  options(gamgpu.inject_interrupt = NULL)
  cat("interrupt at poll", k, ":", if (identical(r, "interrupted")) r else "fit ended first", "\n")
}
bad <- d
bad$y[5] <- Inf
r <- tryCatch(gam_gpu(y ~ s(x), data = bad, device = device), error = function(e) class(e)[1])
stopifnot(is.character(r))
cat("bad input:", r, "\n")
cat("workload done\n")
