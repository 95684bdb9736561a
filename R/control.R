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
#' @param nthreads host threads for the REML optimizer's p x p products
#'   (the inverse of the penalized normal equations and the per-penalty
#'   products of its gradient and Hessian).  They are used only where they
#'   pay, for p >= 128 and at least 4 threads.  Fits agree across thread
#'   counts to rounding, which the REML optimizer can carry further only
#'   along directions where the score is flat.  The same threads compute
#'   the deviance residuals, null deviance and aic of large fits (by blocks
#'   of 65536 rows: the same numbers for any thread count), and the
#'   setup's passes over all rows (the covariates' medians and extremes,
#'   the checks of the response, weights and offset: exact, whatever the
#'   thread count).  The default is
#'   the option \code{gamgpu.threads},
#'   else the number of physical cores (at most 2 under
#'   \code{_R_CHECK_LIMIT_CORES_}).
#' @return a list of class \code{gam_gpu_control}.
#' @examples
#' gam_gpu_control(trace = TRUE, epsilon = 1e-9)
#' @export
gam_gpu_control <- function(trace = FALSE, maxit = 200L, epsilon = 1e-7,
                            newton.maxit = 200L,
                            newton.tol = sqrt(.Machine$double.eps),
                            chunk.size = 10000L, block.rows = 4096L,
                            hat = TRUE, nthreads = default_threads()) {
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
                 hat = isTRUE(hat),
                 nthreads = as.integer(num1(nthreads, "nthreads"))),
            class = "gam_gpu_control")
}

# Host threads of the engine: option gamgpu.threads, else physical cores,
# at most 2 under R CMD check's core limit.
default_threads <- function() {
  n <- getOption("gamgpu.threads", parallel::detectCores(logical = FALSE))
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 1) n <- 1L
  if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_"))) n <- min(n, 2L)
  as.integer(n)
}
