# bench/fit_case.R -- the one fit that bench/profile_fit.R and
# bench/phase_times.R take apart, from their command line
#
#   model family method n [reps] [device]
#
# (model "four", "mixed" or "t2": bench/gam_methods.R's models; device
# "required" by default, or "off").  Sourced by them; defines model, fam,
# method, n, reps, device, the data d and fit(), one gam_gpu() fit.
suppressMessages({library(mgcv); library(gamgpu)})
a <- commandArgs(trailingOnly = TRUE)
model <- a[1]
fam <- a[2]
method <- a[3]
n <- as.numeric(a[4])
reps <- if (length(a) > 4) as.integer(a[5]) else reps
device <- if (length(a) > 5) a[6] else "required"
f <- switch(model, four = y ~ s(x0) + s(x1) + s(x2) + s(x3),
            mixed = y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(6, 6)) + s(fac, bs = "re"),
            t2 = y ~ t2(x0, x1) + t2(x2, x3, bs = c("cr", "ps")) + s(fac, bs = "re"),
            stop("model is \"four\", \"mixed\" or \"t2\""))
set.seed(1)
d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
z <- (d$f - mean(d$f)) / stats::sd(d$f)
d$fac <- factor(sample(30, n, replace = TRUE))
if (fam == "binomial") d$y <- stats::rbinom(n, 1, stats::plogis(z))
if (fam == "poisson") d$y <- stats::rpois(n, exp(1 + z / 2))
family <- get(fam, mode = "function")()
fit <- function() gam_gpu(f, family = family, data = d, method = method, device = device)
