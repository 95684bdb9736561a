# The model session: how a fit's data reach the engine (src/r/session_r.c).
# gam_gpu() opens one per fit -- y, the prior weights, the offset and X
# (as numbers, or the recipe the backend builds it from: on the device for
# a GPU fit) loaded once -- and every route's work runs against it: GCV's
# Gram product, gam()'s outer iteration, the engine's fit, the leverages.
# It is closed when the fit is done, or on an error.

#' Open a model session
#'
#' @param X the model matrix (double) or its recipe (`model_matrix_plan()`).
#' @param y,w,offset the response, prior weights and offset (`NULL`: none;
#'   `w` `NULL` only with unit_weights on a required device).
#' @param plan the device plan (`device_plan()`): mode and ordinal.
#' @param control `gam_gpu_control()`'s settings (nthreads, block.rows).
#' @param unit_weights every prior weight is 1 (no vector of them kept on a device).
#' @param ar AR1 residuals (`ar1_settings()`), or `NULL`.
#' @param lean_rows a device keeps the least row state (a shards node's
#'   fREML fit, whose leverages are the leader's sample's): the leverages'
#'   n-vector made at its first use, no previous eta (a halving step makes
#'   eta from the halved coefficients: the same to rounding), and mu only
#'   for an extended family (else made from eta when fetched); gam()'s
#'   outer rows are refused.
#' @return a list: `ptr` (the session), `n`, `p`, `info()` (where it runs,
#'   its fallback, counters and seconds) and `close()` (idempotent).
#' @noRd
model_session <- function(X, y, w, offset, plan, control, unit_weights = FALSE, ar = NULL,
                          lean_rows = FALSE) {
  if (is.matrix(X) && !is.double(X)) storage.mode(X) <- "double"
  load <- list(device_mode = plan$mode, device_ordinal = plan$ordinal,
               unit_weights = as.integer(unit_weights), lean_rows = as.integer(lean_rows),
               ar_rho = if (is.null(ar)) 0 else ar$rho,
               ar_start = if (!is.null(ar$start)) as.double(ar$start))
  ptr <- .Call(gg_session_open_r, X, y_double(y), if (!is.null(w)) as.double(w),
               if (is.null(offset)) NULL else as.double(offset), load, unclass(control))
  closed <- FALSE
  list(ptr = ptr,
       n = if (is.matrix(X)) nrow(X) else X$n,
       p = if (is.matrix(X)) ncol(X) else X$p,
       info = function() .Call(gg_session_info_r, ptr),
       op = function(name, ...) session_call(name, ptr, ...),
       close = function() {
         if (closed) return(invisible())
         closed <<- TRUE
         .Call(gg_session_close_r, ptr)
         invisible()
       })
}

# .Call() of the session operation `name` on session ptr (through
# do.call(), which R CMD check's registration check does not evaluate).
session_call <- function(name, ptr, ...)
  do.call(.Call, c(list(session_entry(name), ptr), list(...)))

# The model session's operations that gam()'s outer iteration calls
# (R/outer.R: outer_session()), by name: src/r/session_r.c's entry points,
# each called as .Call(entry, ptr, ...).  A cluster's session (R/cluster.R)
# runs the same ones on its nodes' sessions.
session_entry <- function(name)
  switch(name,
         eval = gg_session_eval_r, gram = gg_session_gram_r,
         leverage = gg_session_leverage_r, mul = gg_session_mul_r,
         rows = gg_session_rows_r, newton_gram = gg_session_newton_gram_r,
         derivs = gg_session_derivs_r, ef_eval = gg_session_ef_eval_r,
         ef_rows = gg_session_ef_rows_r, ef_newton = gg_session_ef_newton_r,
         gamgpu_abort("gamgpu_internal_error", paste("no session operation", name), call = NULL))
