# What scripts/setup.sh runs after installing: the device runtime, then a
# GAM fitted with gam_gpu() -- on the GPU when one is usable, else the CPU
# (the policy "auto"; fit$device says which ran and why).
suppressMessages({
  library(gamgpu)
  library(mgcv)
})
print(gpu_info())
set.seed(2)
n <- 2e5
dat <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
fit <- gam_gpu(y ~ s(x0, bs = "cr") + s(x1, bs = "cr") + s(x2, bs = "cr") + s(x3, bs = "cr"),
               data = dat)
print(fit)
print(summary(fit))
print(gpu_telemetry())
