# Control settings of gam_gpu(): iteration limits, tolerances, trace, block sizes.
#' Control settings for gam_gpu()
#'
#' @param trace print one line per IRLS iteration: iteration, REML score,
#'   deviance, total effective degrees of freedom and seconds.
#' @param maxit maximum number of penalized IRLS iterations (a warning of
#'   class \code{gamgpu_not_converged} is given if reached).
#' @param epsilon convergence tolerance on the relative change of the
#'   deviance, as in \code{mgcv::gam.control()}.
#' @param newton.maxit maximum Newton iterations of each REML optimization.
#' @param newton.tol convergence tolerance of the REML Newton iteration
#'   (mgcv's \code{fast.REML.fit} uses \code{sqrt(.Machine$double.eps)}).
#' @param chunk.size rows per block when mgcv builds the model matrix; also
#'   the size of the subsample mgcv's \code{bam()} setup builds the bases on.
#' @param block.rows rows per block of the CPU backend's X'WX accumulation.
#' @param hat compute the leverages (one extra pass over the data).
#' @return a list of class \code{gam_gpu_control}.
#' @examples
#' gam_gpu_control(trace = TRUE, epsilon = 1e-9)
#' @export
gam_gpu_control <- function(trace = FALSE, maxit = 200L, epsilon = 1e-7,
                            newton.maxit = 200L,
                            newton.tol = sqrt(.Machine$double.eps),
                            chunk.size = 10000L, block.rows = 4096L,
                            hat = TRUE) {
  num1 <- function(x, nm, lo = 0) {
    if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x <= lo)
      gamgpu_abort("gamgpu_bad_control",
                   sprintf("control '%s' must be a single number > %g", nm, lo))
    x
  }
  if (!is.logical(trace) || length(trace) != 1L || is.na(trace))
    gamgpu_abort("gamgpu_bad_control", "control 'trace' must be TRUE or FALSE")
  structure(list(trace = trace,
                 maxit = as.integer(num1(maxit, "maxit")),
                 epsilon = num1(epsilon, "epsilon"),
                 newton.maxit = as.integer(num1(newton.maxit, "newton.maxit")),
                 newton.tol = num1(newton.tol, "newton.tol"),
                 chunk.size = as.integer(num1(chunk.size, "chunk.size")),
                 block.rows = as.integer(num1(block.rows, "block.rows")),
                 hat = isTRUE(hat)),
            class = "gam_gpu_control")
}
