# AR1 residuals, as mgcv::bam(rho =, AR.start =) fits them.
#
# bam() fits a Gaussian identity model whose residuals follow an AR1
# process of known parameter rho by weighted least squares on rows
# transformed with the Cholesky factor of the inverse AR1 correlation
# matrix (bam.fit's rwMatrix): a series' first row stays, every other row r
# becomes ld x'_r + sd x'_{r-1} (x' = sqrt(w) x, ld = 1 / sqrt(1 - rho^2),
# sd = -rho ld); AR.start marks where independent series start.  The
# backend applies that transform as it forms X'X and the leverages
# (inst/include/ar1_math.h, on the device for a GPU fit); here are the
# checks, what the engine is told, and what bam() then changes in the
# fitted object (the REML score's Jacobian term, std.rsd, the aic).
#
# For other families and links bam() warns that rho is unused and fits
# without it; gam_gpu() does the same, with a classed warning.
#
# One difference from bam() 1.8-41, deliberately: with an offset and at
# most chunk.size rows, bam.fit() transforms y instead of y - offset (its
# blocked branch for more rows, and gam_gpu() always, use y - offset), so
# there its fit ignores the offset while its linear predictors include it.

#' The AR1 parameter, checked before the setup (bam's setup would coerce it)
#' @noRd
ar1_check_rho <- function(rho) {
  if (!is.numeric(rho) || length(rho) != 1L || !is.finite(rho) || abs(rho) >= 1)
    gamgpu_abort("gamgpu_bad_input",
                 "'rho' (the AR1 residual correlation) must be a single number in (-1, 1)",
                 call = NULL)
  as.numeric(rho)
}

#' The AR1 settings of a fit
#'
#' @param rho the AR1 parameter given to gam_gpu() (0: none), checked by
#'   ar1_check_rho().
#' @param G the setup object (its model frame holds "(AR.start)").
#' @param family the family object.
#' @return \code{NULL} when the fit has no AR1 residuals, else a list with
#'   \code{rho} and \code{start} (a double vector, 1 where a series starts,
#'   or \code{NULL} for one series).
#' @noRd
ar1_settings <- function(rho, G, family) {
  if (rho == 0) return(NULL)
  if (!(family$family == "gaussian" && family$link == "identity")) {
    gamgpu_warn("gamgpu_rho_unused",
                "AR1 parameter rho unused with generalized model (as in mgcv::bam)",
                call = NULL)
    return(NULL)
  }
  start <- G$mf[["(AR.start)"]]
  if (!is.null(start)) {
    if (!is.logical(start))
      gamgpu_abort("gamgpu_bad_input", "'AR.start' must be logical", call = NULL)
    if (anyNA(start))
      gamgpu_abort("gamgpu_bad_input", "'AR.start' has missing values", call = NULL)
    start <- as.numeric(start)
  }
  list(rho = rho, start = start)
}

#' What bam() sets in the fitted object of an AR1 fit
#'
#' The REML score loses the log-determinant of the transform, (n - df)
#' log(ld) with df the number of series (bam.fit); std.rsd are the
#' residuals transformed as the rows were; the aic uses them and adds the
#' same Jacobian (bam()).
#' @noRd
ar1_finish <- function(object, ar) {
  if (is.null(ar)) return(object)
  rho <- ar$rho
  ld <- 1 / sqrt(1 - rho^2)
  n <- length(object$y)
  start <- object$model[["(AR.start)"]]
  df <- if (is.null(start)) 1 else sum(start)
  object$gcv.ubre <- object$gcv.ubre - (n - df) * log(ld)
  object$AR1.rho <- rho
  object$std.rsd <- ar1_resid(object$residuals, rho, start)
  dev <- sum(object$std.rsd^2)
  object$aic <- object$family$aic(object$y, 1, object$fitted.values, object$prior.weights,
                                  dev) -
    2 * (n - sum(sum(start))) * log(ld) + 2 * sum(object$edf)
  object
}

#' mgcv:::AR.resid(rsd, rho, AR.start), vectorized
#'
#' AR.resid builds index and weight vectors of 2n entries for rwMatrix();
#' the same sums in the same order (sd r[i-1] + ld r[i]; r[i] where a series
#' starts, which rwMatrix forms as 0 r[i-1] + 1 r[i]) without them.  Equal
#' to AR.resid bit for bit while the residuals are finite (test-fit-ar1.R).
#' @noRd
ar1_resid <- function(rsd, rho, start = NULL) {
  n <- length(rsd)
  if (rho == 0 || n < 2L) return(rsd)
  ld <- 1 / sqrt(1 - rho^2)
  sd <- -rho * ld
  out <- c(rsd[1L], sd * rsd[-n] + ld * rsd[-1L])
  if (!is.null(start)) {
    ii <- which(start == TRUE)
    ii <- ii[ii > 1L]
    out[ii] <- 0 * rsd[ii - 1L] + 1 * rsd[ii]
  }
  out
}
