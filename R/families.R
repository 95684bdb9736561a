# Tweedie(p) (mgcv's Tweedie family with a known power 1 < p <= 2, a plain
# "family", variance mu^p, the scale estimated) is the engine's "tweedie"
# rows with theta = p; its aic is R's (ldTweedie).
#
# The negative binomial families of mgcv, as the engine takes them: both
# are the engine's "negbin" rows (inst/kernels/family_math.h: variance
# mu + mu^2 / theta), with
#   * negbin(theta): a plain "family" with one known theta, the scale
#     estimated (bam() treats it as any exponential family);
#   * nb(): mgcv's extended family, theta estimated between iterations as
#     bgam.fit's estimate.theta() does (the engine's estimate_theta(), over
#     row sums from the backend: rows_nb_theta on the device), or fixed by
#     nb(theta = ) with theta > 0; the scale is 1, as bgam.fit sets it for
#     an extended family without a scale.  What bam() does after the fit
#     (the family's postproc: its name with theta, the null deviance; the
#     aic of an extended family) is nb_finish().
# Other extended families (tw, ziP, betar, scat, ocat, ...) are refused by
# resolve_family().

# mgcv's negbin(theta): a plain "family" (not an extended one) whose name
# is "Negative Binomial(theta)" and whose theta is known.
is_negbin <- function(family)
  !inherits(family, "extended.family") && is.character(family$family) &&
    all(startsWith(family$family, "Negative Binomial")) && is.function(family$getTheta)

# mgcv's Tweedie(p): a plain "family" named "Tweedie(p)", p in its closure.
is_tweedie <- function(family)
  !inherits(family, "extended.family") && is.character(family$family) &&
    length(family$family) == 1L && startsWith(family$family, "Tweedie(") &&
    is.function(family$variance) && exists("p", envir = environment(family$variance),
                                            inherits = FALSE)

tweedie_power <- function(family) get("p", envir = environment(family$variance))

# mgcv's nb(): the extended family "negative binomial".
is_nb <- function(family)
  inherits(family, "extended.family") && identical(family$family, "negative binomial") &&
    is.function(family$getTheta) && is.function(family$putTheta)

#' The family as the engine names it
#'
#' @param family a family object, checked by resolve_family().
#' @return \code{list(name, theta, estimated)}: the engine's family name,
#'   its theta (\code{NULL} for the families without one) and whether the
#'   engine estimates theta (nb() with \code{n.theta > 0}).
#' @noRd
engine_family <- function(family) {
  if (is_negbin(family))
    return(list(name = "negbin", theta = family$getTheta(), estimated = FALSE))
  if (is_nb(family))
    return(list(name = "negbin", theta = exp(family$getTheta()),
                estimated = isTRUE(family$n.theta > 0)))
  if (is_tweedie(family))
    return(list(name = "tweedie", theta = tweedie_power(family), estimated = FALSE))
  list(name = family$family, theta = NULL, estimated = FALSE)
}

#' What bam() sets after an nb() fit
#'
#' The final theta into the family (putTheta), the family's postproc (its
#' name with theta, the null deviance of the intercept-only model), the
#' aic of an extended family (family$aic(y, mu, theta, wt, dev) + 2
#' sum(edf)) and bam's scale fields (sig2 = 1; scale.estimated TRUE, as
#' bam() leaves it for a family that is neither binomial nor poisson).  A
#' failed theta step is mgcv's warning, classed.
#' @noRd
nb_finish <- function(object, family, theta, theta_failed, G) {
  if (theta_failed)
    gamgpu_warn("gamgpu_theta_step_failed", "step failure in theta estimation", call = NULL)
  if (isTRUE(family$n.theta > 0)) family$putTheta(log(theta))
  object$family <- family
  posr <- family$postproc(family = family, y = object$y, prior.weights = object$prior.weights,
                          fitted = object$fitted.values,
                          linear.predictors = object$linear.predictors,
                          offset = G$offset, intercept = G$intercept)
  if (!is.null(posr$family)) object$family$family <- posr$family
  if (!is.null(posr$deviance)) object$deviance <- posr$deviance
  if (!is.null(posr$null.deviance)) object$null.deviance <- posr$null.deviance
  dev <- object$sig2 * sum(object$prior.weights)
  object$aic <- family$aic(object$y, object$fitted.values, family$getTheta(),
                           object$prior.weights, dev) + 2 * sum(object$edf)
  object$scale.estimated <- TRUE
  object
}
