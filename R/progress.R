# Progress of long fits: one message per phase (mgcv's setup, the model
# matrix, the smoothing parameters, the fit, the post-processing), each
# closed with its time, through cli's progress steps -- written from R's
# own thread between the phases, never from the engine's workers.  On in
# interactive sessions for fits of getOption("gamgpu.progress_rows", 1e6)
# rows or more; options(gamgpu.progress = TRUE) asks for them anywhere,
# FALSE never.

# Whether a fit of about n rows (NA: not known) reports its phases.
progress_wanted <- function(n) {
  opt <- getOption("gamgpu.progress")
  if (!is.null(opt) && !(isTRUE(opt) || isFALSE(opt)))
    gamgpu_abort("gamgpu_bad_input",
                 "option gamgpu.progress must be TRUE, FALSE or NULL (NULL: interactive large fits)",
                 call = NULL)
  if (!is.null(opt)) return(opt)
  rows <- getOption("gamgpu.progress_rows", 1e6)
  interactive() && !is.na(n) && n >= rows
}

# Opens the phase `msg` (closing the one before), for the frame .envir:
# the step closes when that frame exits, marked failed on an error.
progress_phase <- function(on, msg, .envir = parent.frame()) {
  if (isTRUE(on)) cli::cli_progress_step(msg, .envir = .envir)
  invisible(NULL)
}

# Rows of `data` where they are cheap to know (a data frame), else NA.
data_rows <- function(data) if (is.data.frame(data)) nrow(data) else NA_real_
