# Package documentation and the native routine registration (useDynLib).
#' gamgpu: generalized additive models fitted on GPUs or the CPU
#'
#' Fits GAMs written as 'mgcv' formulas with a C engine: penalized IRLS
#' whose smoothing parameters are chosen by fast REML at every iteration,
#' as \code{mgcv::bam(method = "fREML")}.  Model setup (bases, constraints,
#' penalties) is mgcv's own, and the fitted object is an mgcv \code{gam}
#' object, so mgcv's \code{predict}, \code{summary}, \code{plot},
#' \code{anova} and \code{gam.check} work on it.  See \code{\link{gam_gpu}}.
#'
#' @keywords internal
#' @useDynLib gamgpu, .registration = TRUE
#' @importFrom stats gaussian binomial poisson Gamma inverse.gaussian
#'   quasibinomial quasipoisson na.omit var weighted.mean
"_PACKAGE"
