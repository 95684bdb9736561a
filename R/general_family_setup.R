# The set-up of a general family's model (R/general_family.R): gam()'s own
# (gam.setup(), or gam.setup.list() for a list of formulas) with its thin
# plate bases built by gamgpu's construction (R/tprs_setup.R: mgcv's knots
# and steps, the construction from the knots and the basis on every row in
# C over threads) in place of mgcv's single-threaded one, which is most of
# gam()'s set-up above max.knots (2000) distinct values.
#
# gam() sets up the formula it is given, so each s() term that takes mgcv's
# default basis ("tp", said or not) is rewritten to bs = "gg_tp", a spec
# class whose smooth.construct() method is gamgpu's; the smooth's label,
# and the object it returns (mgcv's "tprs.smooth"), are those of "tp".  The
# fitted object carries the caller's formula again (general_family_fit()).

# A formula, or a list of them, with every s(..., bs = "tp") -- bs given as
# "tp" or left out -- as s(..., bs = "gg_tp"); other terms as they are.
gg_tp_formula <- function(formula) {
  if (is.list(formula) && !inherits(formula, "formula")) {
    out <- lapply(formula, gg_tp_formula)
    attributes(out) <- attributes(formula)
    return(out)
  }
  if (!inherits(formula, "formula")) return(formula)
  k <- length(formula)
  formula[[k]] <- gg_tp_terms(formula[[k]])
  formula
}

# gam()'s stored formula with the caller's terms again, and gam()'s
# attributes (gam.setup.list() gives a list of formulas "lpi", which
# predict() reads; gam() gives a formula its own environment).
gg_tp_restored <- function(stored, formula) {
  if (is.list(formula) && !inherits(formula, "formula")) {
    for (i in seq_along(formula)) stored[[i]] <- gg_tp_restored(stored[[i]], formula[[i]])
    return(stored)
  }
  attributes(formula) <- attributes(stored)
  formula
}

gg_tp_terms <- function(e) {
  if (!is.call(e)) return(e)
  fn <- e[[1L]]
  if (identical(fn, quote(s)) || identical(fn, quote(mgcv::s))) {
    # (a bs given by a variable, or any other basis, stays mgcv's)
    if (is.null(e$bs) || identical(e$bs, "tp")) e$bs <- "gg_tp"
    return(e)
  }
  for (i in seq_along(e)[-1L]) {
    a <- e[[i]]
    if (is.call(a)) e[[i]] <- gg_tp_terms(a)
  }
  e
}

#' A thin plate spline basis of a general family's model, built in C
#'
#' The smooth.construct() method of the "gg_tp" specs that gam_gpu()
#' writes for the \code{s()} terms of a general family's formula (see
#' R/general_family_setup.R): mgcv's thin plate regression spline ("tp")
#' basis, with the same knots and steps, built over threads.  Not for
#' direct use.
#' @param object a "gg_tp" smooth specification.
#' @param data,knots as for [mgcv::smooth.construct()].
#' @return mgcv's "tprs.smooth" object, as for \code{bs = "tp"}.
#' @keywords internal
#' @exportS3Method mgcv::smooth.construct
smooth.construct.gg_tp.smooth.spec <- function(object, data, knots) {
  class(object) <- "tp.smooth.spec"
  sm <- tprs_construct_here(object, data, knots, general_family_threads(), c(0L, 0L))
  # (counted for the fit's report: general_family_fit())
  by <- if (is.null(sm)) "mgcv" else "gamgpu"
  n <- .gamgpu_state$gg_tp_built
  if (!is.null(n)) {
    n[[by]] <- n[[by]] + 1L
    .gamgpu_state$gg_tp_built <- n
  }
  if (is.null(sm)) mgcv::smooth.construct(object, data, knots) else sm
}
