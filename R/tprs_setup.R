# gam()'s thin plate regression spline bases ("tp") without mgcv's cost
# of building them.  With more than max.knots (2000) distinct covariate
# values, smooth.construct.tp.smooth.spec() draws max.knots of them as
# knots (under its own seed), builds the basis from the knots alone -- an
# eigen-decomposition of the knots' 2000 x 2000 radial matrix by a
# single-threaded Lanczos iteration -- and then evaluates it on every row
# in one thread of C (construct_tprs): O(n k max.knots), 20 s for four
# smooths at 1e5 rows and minutes at 1e6 -- most of a gam()-method fit's
# time.  The rows enter the basis only there and in its last step, which
# scales each column to unit root mean square over the rows (UZ and S
# with it).  Here the same knots are drawn as mgcv draws them, the
# construction from them runs in gamgpu's C over threads
# (tprs_from_knots(), src/basis/tprs_construct.c: mgcv's steps, E's
# products spread over the threads), the engine's C evaluator
# (src/basis/basis_tprs.c, over threads; the device's for a GPU fit)
# evaluates the basis on every row, and the columns, UZ and S are scaled
# by the rows' root mean squares as construct_tprs would have.  The object
# is mgcv's to rounding (tests/testthat/test-basis-tprs-setup.R,
# test-basis-tprs-construct.R).  A basis as large as its knots is built by
# mgcv from the knots on max.knots stand-in rows that keep the covariates'
# means (the basis's shift).  Where a step would not reproduce mgcv's
# construction (user knots, a dropped null space, shrinkage "ts" whose
# penalty is altered before the scaling could be redone, few distinct
# values, a covariate that is not a plain double vector) mgcv's own
# constructor runs.

# The smooth specs with each "tp"/"ts" spec marked for
# smooth.construct.gg_tprs.smooth.spec() (the others as they are).
fast_tprs_specs <- function(specs, threads, plan = list(mode = 0L, ordinal = 0L)) {
  lapply(specs, function(s) {
    if (identical(class(s), "tp.smooth.spec")) {
      attr(s, "gg_threads") <- as.integer(threads)
      attr(s, "gg_device") <- device_of(plan)
      class(s) <- c("gg_tprs.smooth.spec", class(s))
    }
    s
  })
}

#' A thin plate spline basis as gam() builds it, evaluated in C
#'
#' The smooth.construct() method behind gam_gpu()'s set-up of gam()'s
#' bases (methods other than "fREML"); see R/tprs_setup.R.  Not for
#' direct use.
#' @param object a "tp" or "ts" smooth specification marked by gamgpu.
#' @param data,knots as for [mgcv::smooth.construct()].
#' @return mgcv's "tprs.smooth" (or "ts.smooth") object.
#' @keywords internal
#' @exportS3Method mgcv::smooth.construct
smooth.construct.gg_tprs.smooth.spec <- function(object, data, knots) {
  threads <- attr(object, "gg_threads")
  dev <- attr(object, "gg_device")
  attr(object, "gg_threads") <- attr(object, "gg_device") <- NULL
  class(object) <- setdiff(class(object), "gg_tprs.smooth.spec")
  sm <- tprs_construct_here(object, data, knots, if (is.null(threads)) 1L else threads,
                            if (is.null(dev)) c(0L, 0L) else dev)
  if (is.null(sm)) mgcv::smooth.construct(object, data, knots) else sm
}

# The "tp" or "ts" spec's smooth by gamgpu's construction, on the device
# `dev` (c(mode, ordinal); a device failure under "auto" is counted, and
# the host builds X) or the host's threads; NULL where mgcv's own is to run.
tprs_construct_here <- function(object, data, knots, threads, dev) {
  sm <- tprs_stand_in(object, data, knots, threads)
  if (is.null(sm)) return(NULL)
  n <- length(data[[object$term[1L]]])
  X <- raw_basis_matrix(sm, data, n, threads, dev)
  if (is.null(X)) return(NULL)
  # construct_tprs's last step on the rows: unit root mean square columns
  rms <- sqrt(colSums(X^2) / n)
  if (!all(is.finite(rms) & rms > 0)) return(NULL)
  tprs_scaled(sm, X, rms)
}

# mgcv's thin plate basis built from the knots it would draw from data:
# by tprs_from_knots() (columns unscaled), else by mgcv on
# tprs_knot_data()'s stand-in rows (columns scaled by the stand-ins' root
# mean squares); the caller scales them by the rows'.  NULL where mgcv's
# own construction is to run.  (built: the construction from the knots,
# where tprs_stand_ins() made it beside others'.)
tprs_stand_in <- function(object, data, knots, threads = 1L, kd = NULL, built = NULL) {
  if (is.null(kd)) kd <- tprs_knot_data(object, data, knots, threads)
  if (is.null(kd)) return(NULL)
  sm <- if (!is.null(built)) built else tprs_from_knots(object, kd, threads)
  if (!is.null(sm)) return(sm)
  sm <- mgcv::smooth.construct(object, kd$data, kd$knots)
  if (!identical(as.vector(sm$shift), kd$shift) || nrow(sm$Xu) != kd$nk ||
      !all(is.finite(sm$UZ)))
    return(NULL)
  sm
}

# tprs_stand_in() for several "tp" specs (a model's, under gam()'s
# methods), their constructions from the knots side by side in C, the
# threads split between them (gg_tprs_construct_all_r): a list of their
# smooths, NULL for each spec whose own construction is to run.
tprs_stand_ins <- function(specs, data, knots, threads = 1L) {
  kds <- lapply(specs, tprs_knot_data, data = data, knots = knots, threads = threads)
  preps <- Map(function(s, kd) if (!is.null(kd)) tprs_knots_prep(s, kd), specs, kds)
  go <- which(!vapply(preps, is.null, NA))
  built <- vector("list", length(specs))
  if (length(go)) {
    r <- .Call(gg_tprs_construct_all_r, lapply(preps[go], `[[`, "Xu"),
               vapply(preps[go], `[[`, 0L, "m"), vapply(preps[go], `[[`, 0L, "k"),
               as.integer(threads))
    built[go] <- Map(tprs_knots_finish, preps[go], kds[go], r)
  }
  Map(function(s, kd, b) {
    if (is.null(kd)) NULL else tprs_stand_in(s, data, knots, threads, kd = kd, built = b)
  }, specs, kds, built)
}

# smooth.construct.tp.smooth.spec() on the knots of tprs_knot_data(), its
# C step (construct_tprs) by gamgpu's own over threads
# (src/basis/tprs_construct.c: mgcv's Lanczos iteration, E's products
# spread over the threads) and without the basis on the rows, which the
# caller evaluates on every row; the columns unscaled (the caller scales
# them by the rows' root mean squares).  NULL where mgcv's own steps are to
# run: a basis as large as the knots (no eigen-decomposition), k raised to
# the null space's, shrinkage.
tprs_from_knots <- function(object, kd, threads) {
  prep <- tprs_knots_prep(object, kd)
  if (is.null(prep)) return(NULL)
  r <- .Call(gg_tprs_construct_r, prep$Xu, prep$m, prep$k, as.integer(threads))
  tprs_knots_finish(prep, kd, r)
}

# tprs_from_knots()'s steps before the construction (the object as mgcv
# sets it up, the knots in its order, m and k), or NULL; and after it.
tprs_knots_prep <- function(object, kd) {
  if (!is.null(attr(object, "shrink"))) return(NULL)
  d <- object$dim
  object$p.order[is.na(object$p.order)] <- 0
  M <- mgcv::null.space.dimension(d, object$p.order[1L])
  object$drop.null <- 0
  if (object$bs.dim[1L] < 0) object$bs.dim <- M + c(8, 27, 100)[min(d, 3L)]
  k <- object$bs.dim
  if (k < M + 1 || k >= kd$nk) return(NULL)
  # mgcv's knots: shifted, sorted as its Xd_strip() sorts them
  Xu <- vapply(seq_len(d), function(i) kd$knots[[i]] - kd$shift[i], numeric(kd$nk))
  Xu <- matrix(Xu, kd$nk, d)
  Xu <- Xu[do.call(order, lapply(seq_len(d), function(i) Xu[, i])), , drop = FALSE]
  list(object = object, Xu = Xu, m = as.integer(object$p.order[1L]), k = as.integer(k), M = M)
}

tprs_knots_finish <- function(prep, kd, r) {
  object <- prep$object
  k <- prep$k
  object$X <- matrix(0, 0L, k)
  object$S <- list()
  if (!object$fixed) object$S[[1L]] <- (r$S + t(r$S)) / 2
  object$UZ <- r$UZ
  object$Xu <- prep$Xu
  object$df <- object$bs.dim
  object$shift <- array(kd$shift, object$dim)
  object$rank <- k - prep$M
  object$null.space.dim <- prep$M
  class(object) <- "tprs.smooth"
  object
}

# construct_tprs's last step with the columns' scales sc: X (the raw basis
# on the rows) and UZ divided by them column by column, the penalty by
# their outer product.
tprs_scaled <- function(sm, X, sc) {
  sm$X <- X / rep(sc, each = nrow(X))
  sm$UZ <- sm$UZ / rep(sc, each = nrow(sm$UZ))
  if (length(sm$S)) sm$S[[1L]] <- sm$S[[1L]] / outer(sc, sc)
  sm
}

# smooth.construct.ts.smooth.spec()'s shrinkage on a thin plate smooth
# whose columns are scaled as on every row: the penalty's null space
# penalized at `shrink` times its smallest positive eigenvalue, the rank
# full -- mgcv's steps, which it takes after its own scaling.
tprs_shrunk <- function(sm, shrink) {
  S <- sm$S[[1L]]
  k <- ncol(S)
  M <- sm$null.space.dim
  es <- eigen(S, symmetric = TRUE)
  es$values[(k - M + 1):k] <- es$values[k - M] * shrink
  sm$S[[1L]] <- es$vectors %*% (as.numeric(es$values) * t(es$vectors))
  sm$rank <- k
  sm$null.space.dim <- 0
  attr(sm, "shrink") <- shrink
  class(sm) <- "ts.smooth"
  sm
}

# What smooth.construct.tp.smooth.spec() is to be given so that it builds
# the basis it would build from `data`, but for the rows' scaling and
# without the rows: the knots it would draw (as data values, so that its
# shift gives its knots to the bit) and max.knots stand-in rows, half a
# power of two above and half below the covariates' means, which keep the
# means (the basis's shift) to the bit.  NULL where mgcv's own
# construction is to run.
tprs_knot_data <- function(object, data, knots, threads = 1L) {
  xt <- if (is.list(object$xt)) object$xt else list()
  max.knots <- if (is.null(xt$max.knots)) 2000 else xt$max.knots
  seed <- if (is.null(xt$seed)) 1 else xt$seed
  d <- object$dim
  xs <- lapply(object$term, function(v) data[[v]])
  n <- length(xs[[1L]])
  if (n <= max.knots || max.knots < 2 ||
      !all(vapply(xs, function(v) is.double(v) && is.null(dim(v)) && length(v) == n &&
                    is.null(attr(v, "matrix")), NA)))
    return(NULL)
  # user knots for every variable: mgcv's construction takes them as given
  if (!is.null(knots) && !any(vapply(object$term, function(v) is.null(knots[[v]]), NA)))
    return(NULL)
  p.order <- object$p.order
  p.order[is.na(p.order)] <- 0
  if (length(p.order) > 1L && p.order[2L] == 0) return(NULL)   # null space dropped
  shift <- vapply(xs, mean, 0)
  # mgcv's distinct (shifted) covariate values in its order, uniquecombs()'s
  # ascending rows: for one covariate sort(unique()), by radix sort in C;
  # for more, distinct_rows() (R/distinct_rows.R)
  if (d == 1L) {
    # (the centred covariate the prefetch made, R/sorted_distinct.R)
    xsh <- attr(data, "gg_sorted_distinct", exact = TRUE)$centred_x[[object$term]]
    if (is.null(xsh)) xsh <- xs[[1L]] - shift
    xu <- sorted_distinct_column(data, object$term, threads, xsh, centred = TRUE)
  } else {
    xu <- distinct_rows(matrix(unlist(lapply(seq_len(d), function(i) xs[[i]] - shift[i])),
                               n, d), threads, min(setup_cores(n), threads))
  }
  nu <- nrow(xu)
  if (nu <= max.knots) return(NULL)
  temp_seed <- mgcv_fun("temp.seed")
  rngs <- temp_seed(seed)
  ind <- sample(1:nu, max.knots, replace = FALSE)
  temp_seed(rngs)
  # a data row at each drawn knot: match() in C over threads (a binary
  # search among the knots per row, not a hash of every row)
  rows <- .Call(gg_first_rows_r, if (d == 1L) xsh else attr(xu, "index"),
                if (d == 1L) xu[ind, 1L] else ind, as.integer(threads))
  kn <- stats::setNames(lapply(xs, function(v) v[rows]), object$term)
  sgn <- rep_len(c(1, -1), max.knots)
  if (max.knots %% 2L) sgn[max.knots] <- 0
  stand_in <- vector("list", d)
  for (i in seq_len(d)) {
    if (!identical(kn[[i]] - shift[i], unname(xu[ind, i]))) return(NULL)
    sdi <- stats::sd(xs[[i]][rows])
    if (!is.finite(sdi) || sdi <= 0) return(NULL)
    delta <- 2^round(log2(sdi))
    for (halving in 0:30) {
      v <- shift[i] + sgn * delta
      if (identical(mean(v), shift[i]) && all(v[sgn != 0] != shift[i])) break
      v <- NULL
      delta <- delta / 2
    }
    if (is.null(v)) return(NULL)
    stand_in[[i]] <- v
  }
  names(stand_in) <- object$term
  list(data = stand_in, knots = kn, shift = shift, nk = max.knots)
}
