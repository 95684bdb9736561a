# A covariate's distinct values in increasing order, sort(unique(x)) (a
# radix sort in C: src/setup/setup_stats.c), for the facts' bases
# (R/basis_facts.R): a cr or cc basis's knots are quantiles of them, a
# P-spline's set-up counts them, a one-variable thin plate basis draws its
# knots from those of the covariate less its mean (R/tprs_setup.R).
# gam_basis_facts() sorts every covariate its smooths will ask for side by
# side first (sorted_distinct_prefetch(), one thread each) and hands them
# on with the model frame (its attribute "gg_sorted_distinct"), where
# sorted_distinct() finds them; any other is sorted when asked.

# The distinct values of mf's variable v (x, of v; centred: x is v less
# its mean, as a thin plate basis shifts it): prefetched, or sorted now.
sorted_distinct <- function(mf, v, threads, x = mf[[v]], centred = FALSE) {
  memo <- attr(mf, "gg_sorted_distinct", exact = TRUE)
  got <- if (!is.null(memo)) memo[[if (centred) "centred" else "raw"]][[v]]
  if (!is.null(got)) return(got)
  .Call(gg_sorted_unique_list_r, list(x), as.integer(threads))[[1L]]
}

# The same as a one-column matrix (mgcv's uniquecombs() of one covariate:
# a thin plate or gp basis's distinct points); dim<- on the fresh vector,
# not matrix()'s copy of it.
sorted_distinct_column <- function(mf, v, threads, x = mf[[v]], centred = FALSE) {
  xu <- sorted_distinct(mf, v, threads, x, centred)
  dim(xu) <- c(length(xu), 1L)
  xu
}

# mf with the distinct values of every covariate that the smooths specs
# (of facts_kind() kind) will ask for, sorted side by side: a cr, cs or cc
# basis's or margin's covariate without the user's knots, a P-spline's,
# and a one-variable thin plate basis's or margin's (centred) where it
# draws knots from more rows than max.knots.  mf as it was where fewer
# than two are wanted.
sorted_distinct_prefetch <- function(specs, kind, mf, knots, threads) {
  raw <- list()
  centred <- list()
  n <- nrow(mf)
  add_raw <- function(v) if (is.null(knots[[v]])) raw[[v]] <<- mf[[v]]
  add_centred <- function(s) {
    v <- s$term
    xt <- if (is.list(s$xt)) s$xt else list()
    max.knots <- if (is.null(xt$max.knots)) 2000 else xt$max.knots
    if (length(v) == 1L && is.null(knots[[v]]) && n > max.knots && max.knots >= 2)
      centred[[v]] <<- mf[[v]] - mean(mf[[v]])
  }
  for (i in seq_along(specs)) {
    s <- specs[[i]]
    switch(kind[i], cr = , cc = , ps = add_raw(s$term), tp = , ts = add_centred(s),
           te = , t2 = for (m in s$margin)
             if (inherits(m, "tp.smooth.spec")) add_centred(m) else add_raw(m$term))
  }
  if (length(raw) + length(centred) < 2L) return(mf)
  xu <- .Call(gg_sorted_unique_list_r, c(unname(raw), unname(centred)), as.integer(threads))
  nr <- length(raw)
  # (the centred covariates kept too: tprs_knot_data() matches rows on them)
  attr(mf, "gg_sorted_distinct") <- list(
    raw = stats::setNames(xu[seq_len(nr)], names(raw)),
    centred = stats::setNames(xu[nr + seq_along(centred)], names(centred)),
    centred_x = centred)
  mf
}
