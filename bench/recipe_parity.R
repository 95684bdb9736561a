# bench/recipe_parity.R -- diagnostic (not a test): for each formula of
# tests/testthat/test-basis-recipe.R, how far the device fit (X built on the
# device) is from the CPU engine's: coefficients, fitted values, log sp,
# REML score, and the REML gradient at the end.
suppressMessages({ library(mgcv); library(gamgpu) })
recipe_data <- function(n, seed = 1) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), z = rnorm(n),
                  fac = factor(sample(letters[1:3], n, TRUE)), off = runif(n) / 10)
  d$y <- sin(6 * d$x0) + d$x1^2 + 0.3 * as.integer(d$fac) + d$z / 4 + rnorm(n) / 3
  d
}
forms <- list(
  y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr"),
  y ~ s(x0) + s(x1, k = 12) + fac + z,
  y ~ s(x0, x1, k = 25) + s(x2, bs = "cs") + offset(off),
  y ~ s(x0, bs = "cr", by = fac) + s(x1, by = z) + fac,
  y ~ s(x0, bs = "ts") + s(x0, x1, k = 20) + s(x2, bs = "cr"),
  y ~ te(x0, x1, k = c(4, 6)) + s(x2, bs = "cr") + fac,
  y ~ te(x0, x2, by = fac) + fac)
rel <- function(a, b) max(abs(a - b)) / max(abs(b))
d <- recipe_data(20000, seed = 3)
ctl <- gam_gpu_control(chunk.size = 4000)
for (f in forms) {
  fr <- gam_gpu(f, data = d, device = "required", control = ctl)
  fc <- gam_gpu(f, data = d, device = "off", control = ctl)
  cat(sprintf("%-60s coef %.2e fitted %.2e logsp %.2e reml %.2e grad(gpu) %.1e grad(cpu) %.1e newton %s/%s\n",
              deparse(f)[1], rel(coef(fr), coef(fc)), rel(fitted(fr), fitted(fc)),
              rel(log(fr$sp), log(fc$sp)), abs(fr$gcv.ubre - fc$gcv.ubre) / abs(fc$gcv.ubre),
              max(abs(fr$outer.info$grad)), max(abs(fc$outer.info$grad)),
              fr$mgcv.conv$message, fc$mgcv.conv$message))
}
