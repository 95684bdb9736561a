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
# A fit on the CPU: sparse rows for local bases and one-variable thin plates
# (fit$device$placement) need no BLAS; other dense ones (tp in several
# variables, gp) go faster with an optimised one than with R's reference
# BLAS, which Debian and many R installs use by default.
info <- gpu_info()
if (!info$usable && grepl("/blas/libblas", info$blas, fixed = TRUE))
  message("R uses the reference BLAS (", info$blas, "). For faster CPU fits of ",
          "dense bases (tp in several variables, gp): apt-get install ",
          "libopenblas0-pthread (Debian/Ubuntu).")
