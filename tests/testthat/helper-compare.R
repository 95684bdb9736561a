# Agreement of a gam_gpu() fit with an mgcv fit of the same call, at the
# tolerances the engine achieves against bam: the fit converged, linear
# predictors within eta_tol of their range, total and per-smooth EDF within
# edf_tol, and the REML score within reml_tol relative on either side (a
# better optimum than mgcv's is a difference too, to be explained where it
# happens).  Callers that need looser bounds say why.
#
# Two tiers, by whether the arithmetic is mgcv's:
# - same arithmetic (the CPU engine under the reference BLAS, as on CI):
#   both fits take the same iterations through the same roundings, and
#   agree to 7e-11 of the range for gaussian, 7e-10 for other families at
#   epsilon 1e-10, EDF to 7e-9, REML scores to 1e-10 relative: eta_tol,
#   edf_tol and reml_tol hold there;
# - other arithmetic (the GPU's summation order, or an optimized BLAS under
#   mgcv as well as under us): each fit stops inside the same stopping
#   rules at a point the roundings pick, so the fits agree to the stopping
#   rules, not to rounding.  On the GPU machine (OpenBLAS), bam's own
#   answer moves by 3e-8 of the range and 1e-9 of its score between
#   OPENBLAS_NUM_THREADS=1 and 16; over the suite the GPU fits agree with
#   bam to 2e-8 of the range, EDF to 1.2e-7 and scores to 2e-9 relative
#   (2026-12-01).  cross_tol scales the three tolerances there (default
#   100x: 1e-7, 1e-5, 1e-7); a case with a flat REML direction says so and
#   passes its own.  gamgpu's own CPU Gram kernel (src/cpu/gram_kernel.c,
#   taken where it is faster than R's BLAS: fit$device$cpu_gram) sums in
#   another order than the BLAS, as an optimised BLAS does: the same
#   cross-arithmetic bounds.
same_arithmetic <- function(g) {
  identical(g$device$backend, "cpu") && reference_blas() &&
    !startsWith(if (is.null(g$device$cpu_gram)) "" else g$device$cpu_gram, "gamgpu's")
}

expect_agrees_with_mgcv <- function(g, b, eta_tol = 1e-9, edf_tol = 1e-7, reml_tol = 1e-9,
                                    reml = TRUE, eta_b = b$linear.predictors,
                                    cross_tol = 100) {
  expect_s3_class(g, c("gam_gpu", "gam", "glm", "lm"))
  expect_true(isTRUE(g$converged))
  if (!same_arithmetic(g)) {
    eta_tol <- eta_tol * cross_tol
    edf_tol <- edf_tol * cross_tol
    reml_tol <- reml_tol * cross_tol
  }
  expect_equal(length(g$coefficients), length(b$coefficients))
  expect_identical(names(g$coefficients), names(b$coefficients))
  r <- diff(range(eta_b))
  expect_lt(max(abs(g$linear.predictors - eta_b)) / r, eta_tol)
  expect_lt(abs(sum(g$edf) - sum(b$edf)), edf_tol)
  for (s in b$smooth) {
    ii <- s$first.para:s$last.para
    expect_lt(abs(sum(g$edf[ii]) - sum(b$edf[ii])), edf_tol)
  }
  if (reml)
    expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]), reml_tol * abs(b$gcv.ubre[[1]]))
  invisible(TRUE)
}

tight <- function() mgcv::gam.control(epsilon = 1e-10)
tight_gg <- function() gam_gpu_control(epsilon = 1e-10)
# gam()'s methods beside gam(control = gam.control(epsilon = 1e-10, newton =
# list(conv.tol = 1e-9))): newton()'s test at the same conv.tol
tight_gam_gg <- function() gam_gpu_control(epsilon = 1e-10, newton.tol = 1e-9)

sim_data <- function(n = 3000, seed = 3) {
  set.seed(seed)
  dat <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  dat$fac <- factor(sample(letters[1:3], n, TRUE))
  dat$re <- factor(sample(1:20, n, TRUE))
  dat$t <- runif(n)
  dat$expo <- runif(n, 0.5, 2)
  lp <- (dat$f - mean(dat$f)) / 4 + 0.3 * sin(2 * pi * dat$t) +
    stats::rnorm(20, 0, 0.3)[dat$re] + c(0, 0.3, -0.2)[dat$fac]
  dat$yb <- stats::rbinom(n, 1, stats::binomial()$linkinv(lp))
  dat$yp <- stats::rpois(n, exp(lp / 2 + log(dat$expo)))
  dat$yg <- stats::rgamma(n, shape = 3, scale = exp(lp / 2) / 3)
  dat
}

# inverse Gaussian draws without statmod (Michael, Schucany & Haas 1976)
statmod_free_rinvgauss <- function(n, mu, lambda = 2) {
  nu <- stats::rnorm(n)^2
  x <- mu + mu^2 * nu / (2 * lambda) -
    mu / (2 * lambda) * sqrt(4 * mu * lambda * nu + mu^2 * nu^2)
  ifelse(stats::runif(n) <= mu / (mu + x), x, mu^2 / x)
}

# Is R linked to the reference BLAS?  mgcv's PredictMat multiplies by BLAS
# (thin plate: B %*% UZ; the QR constraint), so our C evaluators, which sum
# in the reference BLAS's order, equal it bit for bit there, and to rounding
# under an optimized BLAS (OpenBLAS sums in another order, with FMA).
reference_blas <- function() {
  blas <- tolower(extSoftVersion()[["BLAS"]])
  !grepl("openblas|mkl|blis|atlas|accelerate|flexiblas", blas)
}

# X equals mgcv's matrix ref: bit for bit under the reference BLAS, else to
# the rounding of a different summation order.  terms: the longest sum an
# entry of ref takes where X takes another (a one-variable thin plate
# basis, tp1_terms()); X is then ref to the rounding of that many terms.
expect_same_basis <- function(X, ref, exact = TRUE, terms = 1) {
  tol <- if (reference_blas()) 1e-14 * max(1, terms) else 1e-10
  expect_lt(max(abs(X - ref)), tol * max(1, max(abs(ref))))
  if (exact && terms <= 1 && reference_blas()) expect_identical(X, ref)
}

# The C basis of a thin plate smooth in one variable (the smooth itself, a
# margin or an fs/sz base) is piecewise polynomials (R/model_matrix.R's
# tp1_table), not PredictMat's sum over the nXu knots and M null-space
# functions: equal to it to the rounding of those nXu + M terms (measured
# against long double sums, both are as close to the exact basis).  The
# longest such sum among smooths, 1 where none has one.
tp1_terms <- function(smooths) {
  terms <- vapply(smooths, function(s) {
    max(1, vapply(c(list(s), s[["margin"]]), function(m)
      if (is_tp1_part(m)) nrow(m[["UZ"]]) else 1, 0))
  }, 0)
  max(1, terms)
}

# Whether a smooth or margin has a one-variable thin plate basis (an fs or
# sz smooth carries its base's Xu and UZ itself).
is_tp1_part <- function(m)
  !inherits(m, "gp.smooth") && is.matrix(m[["Xu"]]) && ncol(m[["Xu"]]) == 1L &&
    is.matrix(m[["UZ"]])

# Bytes of the one-variable thin plate polynomials among smooths (R/model_matrix.R's
# tp1_table: (nXu + 1) x k x 2m doubles each, at most), which a device
# fit uploads beside the covariates: fixed in size, not O(n).
tp1_bytes <- function(smooths) {
  sum(vapply(smooths, function(s) {
    parts <- c(list(s), s[["margin"]])
    sum(vapply(parts, function(m) if (is_tp1_part(m))
      8 * (nrow(m[["Xu"]]) + 1) * ncol(m[["UZ"]]) * 2 * max(2, m$p.order[1], na.rm = TRUE)
      else 0, 0))
  }, 0))
}

# bam(formula, data, ..., fit = FALSE)'s setup object; where mgcv's bam()
# fails on the model (mgcv 1.9-x's gam.side() on a smooth nested in
# another), the one gam_gpu() makes then (R/setup.R: gg_setup()).
bam_setup <- function(formula, data, ...) {
  mc <- as.call(c(list(quote(mgcv::bam), formula = formula, data = data), list(...),
                  list(fit = FALSE)))
  tryCatch(eval(mc), error = function(e) {
    mc$family <- stats::gaussian()
    mc$method <- "fREML"
    suppressMessages(gamgpu:::gg_setup(mc, environment()))
  })
}

# Covariates of every kind the recipe terms take (numeric, factor, ordered
# factor) and gaussian and binomial responses: test-basis-recipe-terms.R,
# test-gram-sparse-rows.R.
terms_data <- function(n, seed = 2) {
  set.seed(seed)
  d <- data.frame(x = runif(n), z = runif(n), w = rnorm(n),
                  f = factor(sample(letters[1:5], n, TRUE)),
                  g = factor(sample(1:3, n, TRUE)))
  d$o <- factor(sample(1:3, n, TRUE), ordered = TRUE)
  d$y <- sin(2 * pi * d$x) + cos(2 * pi * d$z) + as.numeric(d$f) * 0.3 + d$w / 3 +
    rnorm(n) / 2
  d$yb <- rbinom(n, 1, binomial()$linkinv(d$y - mean(d$y)))
  d
}
