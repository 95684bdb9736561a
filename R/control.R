# Control settings of gam_gpu(): iteration limits, tolerances, trace, block
# sizes, threads.  Every control value is validated however it is passed:
# gam_gpu_control() checks its arguments, and gam_gpu() sends a plain list
# (or a gam_gpu_control object it receives) through as_gam_gpu_control(),
# which maps mgcv::gam.control() names and calls gam_gpu_control() again.

#' Control settings for gam_gpu()
#'
#' Every setting is checked: a value of the wrong kind is an error of class
#' \code{gamgpu_bad_control} naming the setting.  The whole-number settings
#' (\code{maxit}, \code{newton.maxit}, \code{chunk.size},
#' \code{block.rows}, \code{nthreads}) must be whole numbers from 1 to
#' \code{.Machine$integer.max}.
#'
#' \code{gam_gpu(control =)} also takes a plain list of these settings,
#' checked the same way.  Such a list may hold settings of
#' \code{mgcv::gam.control()} too, as an mgcv user passes them to
#' \code{bam()}: \code{trace}, \code{maxit}, \code{epsilon} and
#' \code{nthreads} mean the same here and are used; the others
#' (\code{mgcv.tol}, \code{newton}, \code{scalePenalty}, ...) have no use in
#' gamgpu's fit (most have none in \code{bam(method = "fREML")} either) and
#' are accepted only at their \code{gam.control()} default; another value
#' is an error of class \code{gamgpu_bad_control} naming them.  A whole
#' \code{gam.control()} object (a list with all of its names) asks for
#' nothing by its defaults: entries equal to \code{gam.control()}'s are left
#' out, so its \code{nthreads = 1} does not replace gamgpu's default.  Names
#' that are neither gamgpu's nor mgcv's are an error of class
#' \code{gamgpu_bad_control}.
#'
#' @param trace print one line per IRLS iteration: iteration, REML score,
#'   deviance, total effective degrees of freedom and seconds.
#' @param maxit maximum number of penalized IRLS iterations (a warning of
#'   class \code{gamgpu_not_converged} is given if reached).
#' @param epsilon convergence tolerance on the relative change of the
#'   deviance, as in \code{mgcv::gam.control()}.
#' @param newton.maxit maximum Newton iterations of each smoothing
#'   parameter optimization: bam()'s fREML iteration, and gam()'s outer
#'   iteration (mgcv's \code{newton()}, which gam_gpu follows step for step,
#'   for \code{"REML"}, \code{"ML"}, \code{"GACV.Cp"} and \code{"GCV.Cp"}
#'   beyond additive models).  For \code{method = "GCV.Cp"} on an
#'   additive model gamgpu takes gam()'s optimizer, \code{mgcv::magic()} at
#'   \code{gam.control()}'s defaults; given \code{newton.maxit} or
#'   \code{newton.tol}, it takes Newton's method on the GCV or UBRE score
#'   with these settings instead.
#' @param newton.tol convergence tolerance of the fREML Newton iteration
#'   (mgcv's \code{fast.REML.fit} uses \code{sqrt(.Machine$double.eps)}).
#'   For gam()'s methods it is \code{newton()}'s \code{conv.tol} where it
#'   is given, else \code{gam.control()}'s (1e-6), so that gam_gpu stops
#'   where \code{gam()} stops.
#' @param chunk.size the size of the subsample of rows mgcv's \code{bam()}
#'   setup builds the bases on (\code{bam()}'s \code{chunk.size}; with at
#'   most this many rows the setup uses them all).  Under gam()'s methods
#'   with more rows than this, the bases come from what they take of every
#'   row (see \link{gamgpu-methods}) and mgcv's setup runs on at most 500
#'   of them (4 per coefficient where the model has more than 125).
#'   \code{gam_gpu(chunk.size =)} sets the same.  The CPU backend's row
#'   blocks are \code{block.rows}.
#' @param block.rows rows per block of the CPU backend's BLAS passes over
#'   a dense X (X'WX and X'Wz, the leverages).  The answer does not depend
#'   on it beyond rounding.  Sparse rows (\code{options(gamgpu.cpu_x)}, see
#'   \link{gamgpu-package}) and gamgpu's own Gram kernel pass over the rows
#'   in fixed ranges of their own.
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
#'   \code{_R_CHECK_LIMIT_CORES_}).  \code{gam_gpu(nthreads =)}, as in
#'   \code{bam()}, sets the same.
#' @return a list of class \code{gam_gpu_control}; its attribute
#'   \code{"given"} names the settings given explicitly (so that
#'   \code{gam_gpu()} can tell a conflict between, say,
#'   \code{gam_gpu(nthreads = 2)} and \code{gam_gpu_control(nthreads = 4)}).
#' @examples
#' gam_gpu_control(trace = TRUE, epsilon = 1e-9)
#' @export
gam_gpu_control <- function(trace = FALSE, maxit = 200L, epsilon = 1e-7,
                            newton.maxit = 200L,
                            newton.tol = sqrt(.Machine$double.eps),
                            chunk.size = 10000L, block.rows = 4096L,
                            hat = TRUE, nthreads = default_threads()) {
  given <- names(match.call())[-1L]
  structure(list(trace = control_flag(trace, "trace"),
                 maxit = control_whole(maxit, "maxit"),
                 epsilon = control_positive(epsilon, "epsilon"),
                 newton.maxit = control_whole(newton.maxit, "newton.maxit"),
                 newton.tol = control_positive(newton.tol, "newton.tol"),
                 chunk.size = control_whole(chunk.size, "chunk.size"),
                 block.rows = control_whole(block.rows, "block.rows"),
                 hat = control_flag(hat, "hat"),
                 nthreads = control_whole(nthreads, "nthreads")),
            given = if (is.null(given)) character(0) else given,
            class = "gam_gpu_control")
}

# A single TRUE or FALSE.
control_flag <- function(x, name, what = sprintf("control '%s'", name)) {
  if (!is.logical(x) || length(x) != 1L || is.na(x))
    gamgpu_abort("gamgpu_bad_control", sprintf("%s must be TRUE or FALSE", what),
                 call = NULL)
  x
}

# A single finite number > 0.
control_positive <- function(x, name, what = sprintf("control '%s'", name)) {
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x <= 0)
    gamgpu_abort("gamgpu_bad_control", sprintf("%s must be a single finite number > 0", what),
                 call = NULL)
  as.numeric(x)
}

# A single whole number from 1 to .Machine$integer.max, as an integer.
control_whole <- function(x, name, what = sprintf("control '%s'", name)) {
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x < 1 ||
      x > .Machine$integer.max || x != round(x))
    gamgpu_abort("gamgpu_bad_control",
                 sprintf("%s must be a whole number from 1 to %d", what,
                         .Machine$integer.max), call = NULL)
  as.integer(x)
}

# Settings of mgcv::gam.control() that gamgpu uses with the same meaning
# (they are gam_gpu_control()'s names too).
.gg_mgcv_control_shared <- c("trace", "maxit", "epsilon", "nthreads")

# What to do instead of an mgcv::gam.control() setting gamgpu has no use for.
mgcv_control_advice <- function(name) {
  switch(name,
         newton = "for the REML Newton iteration use gam_gpu_control(newton.tol =, newton.maxit =)",
         mgcv.tol = , mgcv.half = , rank.tol = , irls.reg = , nlm = , optim = ,
         outerPIsteps = , edge.correct = , efs.lspmax = , efs.tol = , ncv.threads = ,
         keepData = , scale.est = , idLinksBases =
           "it steers mgcv's gam() fitters, which bam(method = \"fREML\") does not use either",
         scalePenalty = "gamgpu's setup scales penalties as mgcv's default (the fit does not depend on it beyond the smoothing parameters' scale)",
         "gamgpu has no such setting")
}

#' A control list, checked as gam_gpu_control() checks its arguments
#'
#' @param control a \code{gam_gpu_control} object or a plain list of its
#'   settings, possibly with \code{mgcv::gam.control()} settings (see
#'   \code{\link{gam_gpu_control}}).
#' @return a \code{gam_gpu_control} object.
#' @noRd
as_gam_gpu_control <- function(control) {
  if (is.null(control)) control <- list()
  if (!is.list(control) || is.data.frame(control))
    gamgpu_abort("gamgpu_bad_control",
                 "'control' must come from gam_gpu_control() or be a list of its settings",
                 call = NULL)
  given <- attr(control, "given")
  from_gg <- inherits(control, "gam_gpu_control")
  control <- unclass(control)
  attributes(control) <- list(names = names(control))
  nms <- names(control)
  if (length(control) && (is.null(nms) || anyNA(nms) || any(!nzchar(nms))))
    gamgpu_abort("gamgpu_bad_control", "every entry of 'control' must be named", call = NULL)
  if (anyDuplicated(nms))
    gamgpu_abort("gamgpu_bad_control",
                 sprintf("control setting%s given more than once: %s",
                         if (sum(duplicated(nms)) > 1) "s" else "",
                         paste(unique(nms[duplicated(nms)]), collapse = ", ")), call = NULL)
  ours <- names(formals(gam_gpu_control))
  mgcv_defaults <- mgcv::gam.control()
  # the defaults of the settings gamgpu does not use: gam.control() derives
  # some (nlm) from its epsilon
  eps <- control$epsilon
  unused_defaults <- if (is.numeric(eps) && length(eps) == 1L && is.finite(eps) && eps > 0)
    mgcv::gam.control(epsilon = eps) else mgcv_defaults
  unknown <- setdiff(nms, c(ours, names(mgcv_defaults)))
  if (length(unknown))
    gamgpu_abort("gamgpu_bad_control",
                 sprintf("unknown control setting%s %s: gamgpu's settings are %s (see ?gam_gpu_control)",
                         if (length(unknown) > 1) "s" else "",
                         paste0("'", unknown, "'", collapse = ", "),
                         paste(ours, collapse = ", ")), call = NULL)
  # mgcv settings: a whole gam.control() object asks for nothing by its
  # defaults; settings gamgpu has no use for are accepted at their default
  mgcv_object <- !from_gg && all(names(mgcv_defaults) %in% nms)
  at_default <- function(nm, defaults)
    nm %in% names(defaults) && isTRUE(all.equal(control[[nm]], defaults[[nm]]))
  unused <- nms[!(nms %in% ours)]
  refused <- unused[!vapply(unused, at_default, NA, unused_defaults)]
  if (length(refused))
    gamgpu_abort("gamgpu_bad_control",
                 paste0(sprintf("mgcv::gam.control() setting '%s' is not used by gamgpu: %s",
                                refused, vapply(refused, mgcv_control_advice, "")),
                        collapse = "; "), call = NULL)
  keep <- nms %in% ours
  if (mgcv_object) keep <- keep & !vapply(nms, at_default, NA, mgcv_defaults)
  control <- control[keep]
  out <- do.call(gam_gpu_control, control)
  attr(out, "given") <- if (from_gg) intersect(given, ours) else names(control)
  out
}

#' Set a control setting from an argument of gam_gpu() (bam()'s nthreads or
#' chunk.size)
#'
#' The argument and the control setting must agree when both are given:
#' either alone sets it.
#' @param control a \code{gam_gpu_control} object.
#' @param name the setting (\code{"nthreads"}, \code{"chunk.size"}).
#' @param value the argument's value, a whole number.
#' @return \code{control} with the setting replaced.
#' @noRd
control_from_argument <- function(control, name, value) {
  if (name == "nthreads" && is.numeric(value) && length(value) == 2L)
    gamgpu_abort("gamgpu_bad_control",
                 paste("argument 'nthreads' must be one number: bam()'s second number is the",
                       "threads of its discrete method, which gamgpu does not have"),
                 call = NULL)
  value <- control_whole(value, name, sprintf("argument '%s'", name))
  given <- attr(control, "given")
  if (name %in% given && control[[name]] != value)
    gamgpu_abort("gamgpu_bad_control",
                 sprintf("%s = %d and control %s = %d disagree: give one of them (or the same value)",
                         name, value, name, control[[name]]), call = NULL)
  control[[name]] <- value
  attr(control, "given") <- union(given, name)
  control
}

# Host threads of the engine: option gamgpu.threads, else physical cores,
# at most 2 under R CMD check's core limit.
default_threads <- function() {
  n <- getOption("gamgpu.threads", physical_cores())
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 1) n <- 1L
  if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_"))) n <- min(n, 2L)
  as.integer(n)
}

# The machine's physical cores, parallel::detectCores(logical = FALSE) once
# per session (it reads /proc/cpuinfo: 2 to 13 ms a call, twice a fit).
physical_cores <- function() {
  n <- .gamgpu_state$physical_cores
  if (is.null(n)) n <- .gamgpu_state$physical_cores <- parallel::detectCores(logical = FALSE)
  n
}
