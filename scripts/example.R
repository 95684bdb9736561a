# What scripts/setup.sh runs after installing: the device runtime, and the
# weighted Gram product X'WX on the GPU when one is usable, else the CPU.
library(gamgpu)
print(gpu_info())
set.seed(1)
n <- 1e6
p <- 37
X <- cbind(1, matrix(rnorm(n * (p - 1)), n))
w <- runif(n)
z <- rnorm(n)
cpu <- system.time(g_cpu <- gpu_gram(X, w, z, device = "off"))[["elapsed"]]
dev <- system.time(g <- gpu_gram(X, w, z))[["elapsed"]]
cat(sprintf("\nX'WX of a %.0e x %d matrix on %s: %.3f s (CPU: %.3f s); ",
            n, p, g$device, dev, cpu))
cat(sprintf("max relative difference from the CPU: %.2e\n",
            max(abs(g$XtWX - g_cpu$XtWX)) / max(abs(g_cpu$XtWX))))
if (nzchar(g$fallback)) cat("ran on the CPU because:", g$fallback, "\n")
print(gpu_telemetry())
