# Agreement of gam_gpu() on the GPU, on the CPU engine and mgcv::bam() for
# the suite cases whose fits stop at points the arithmetic picks (flat REML
# directions, PIRLS stopping rules): run on the GPU machine under
# OPENBLAS_NUM_THREADS=1 and 16 to see how far the stopping rules, not
# rounding, set the agreement.  Rscript bench/parity_arithmetic.R
# (DIAG_DEV=off for a machine without a GPU).
suppressMessages({library(gamgpu); library(mgcv)})
cat("BLAS:", extSoftVersion()[["BLAS"]], "\n"); print(La_library())
source("tests/testthat/helper-compare.R")
tight <- function() mgcv::gam.control(epsilon = 1e-10)
dat <- sim_data()
rel <- function(a, b) max(abs(a - b)) / diff(range(b))
cmp <- function(label, f, family, data, ctl = TRUE) {
  cg <- if (ctl) gam_gpu_control(epsilon = 1e-10) else gam_gpu_control()
  cb <- if (ctl) tight() else mgcv::gam.control()
  g <- gam_gpu(f, family = family, data = data, control = cg, device = Sys.getenv("DIAG_DEV", "required"))
  c <- gam_gpu(f, family = family, data = data, control = cg, device = "off")
  b <- mgcv::bam(f, family = family, data = data, method = "fREML", control = cb)
  cat(sprintf("%-12s gpu-bam %.2e cpu-bam %.2e gpu-cpu %.2e | score g %.12g c %.12g b %.12g | iter g %s c %s b %s | lsp g-c %.2e g-b %.2e\n",
    label, rel(g$linear.predictors, b$linear.predictors), rel(c$linear.predictors, b$linear.predictors),
    rel(g$linear.predictors, c$linear.predictors), g$gcv.ubre, c$gcv.ubre, b$gcv.ubre,
    paste(g$outer.info$iter, g$iter), paste(c$outer.info$iter, c$iter), paste(b$outer.info$iter, b$iter),
    max(abs(log(g$sp) - log(c$sp))), max(abs(log(g$sp) - log(b$sp)))))
  cat("   sp g:", signif(log(g$sp), 10), "\n   sp c:", signif(log(c$sp), 10), "\n   sp b:", signif(log(b$sp), 10), "\n")
}
cmp("gamma", yg ~ s(x0) + s(x1, bs = "cr") + te(x2, x3) + s(t, bs = "cc"), Gamma(link = "log"), dat)
f <- Ozone ~ s(Temp) + s(Wind, bs = "cr") + s(Solar.R)
cmp("airq-gauss", f, gaussian(), airquality, ctl = FALSE)
cmp("airq-gamma", f, Gamma(link = "log"), airquality)
cmp("chick", weight ~ s(Time) + s(Chick, bs = "re") + Diet, Gamma(link = "log"), ChickWeight)
cmp("binom", yb ~ s(x0) + s(x1, bs = "cr") + s(t, bs = "cc") + te(x2, x3) + fac + s(x1, by = fac) + s(re, bs = "re"), binomial(), dat)
