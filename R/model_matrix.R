# The model matrix on every row.  bam()'s setup builds its bases from a
# subsample, so G$X may hold only those rows; the fit needs X for all rows.
# This computes what predict.gam(type = "lpmatrix") would -- the parametric
# columns by model.matrix(), each smooth's columns by mgcv::PredictMat(), or
# by a C evaluator for the bases that have one (cr, cs) -- into one
# preallocated matrix, without predict.gam's per-block model frames, and
# over row blocks in forked workers where the platform forks and R-level
# basis code remains (option gamgpu.setup_cores; the workers run R only,
# never CUDA).

model_matrix_block <- function(G, mf, threads = setup_threads(nrow(mf))) {
  X <- matrix(0, nrow(mf), ncol(G$X))
  if (G$nsdf > 0)
    X[, seq_len(G$nsdf)] <- stats::model.matrix(stats::delete.response(G$pterms), mf,
                                                contrasts.arg = G$contrasts)
  for (s in G$smooth)
    X[, s$first.para:s$last.para] <- smooth_matrix(s, mf, threads)
  X
}

# One smooth's columns: C for the bases that have an evaluator (cr, cs, tp,
# ts), mgcv::PredictMat for everything else.
smooth_matrix <- function(s, mf, threads = setup_threads(nrow(mf))) {
  Xs <- recipe_matrix(s, mf, threads)
  if (is.null(Xs)) mgcv::PredictMat(s, mf) else Xs
}

# One smooth's columns through the engine's host build of its recipe
# (src/xplan.c), gam.side deletions applied after.
recipe_matrix <- function(s, mf, threads = setup_threads(nrow(mf))) {
  r <- smooth_recipe(s, mf, threads)
  if (inherits(r, "gg_no_recipe")) return(NULL)
  r$col0 <- 1L
  r$ncol <- recipe_columns(r)
  drop_deleted(s, .Call(gg_xplan_build_r, list(n = nrow(mf), p = r$ncol,
                                                threads = as.integer(threads),
                                                blocks = list(r))))
}

# Why a model (or one smooth) has no recipe, in words naming the term:
# what model_matrix_plan(), smooth_recipe() and constraint_map() return
# instead of one, and gam_gpu() reports as fit$device$model_matrix_reason.
no_recipe <- function(...) structure(list(), class = "gg_no_recipe", reason = paste0(...))

has_c_evaluator <- function(s)
  (inherits(s, c("cr.smooth", "cs.smooth", "tprs.smooth", "ts.smooth")) && is.null(s$margin)) ||
    is_te_cr2(s)

# te() of two cr/cs margins with the margins unconstrained and not
# reparameterized (mgcv's default te(x, z): its margins are "cr").
is_te_cr2 <- function(s) {
  inherits(s, "tensor.smooth") && length(s$margin) == 2L && !any(s$mc) &&
    all(vapply(s$XP, is.null, NA)) &&
    all(vapply(s$margin, function(m) inherits(m, c("cr.smooth", "cs.smooth")) &&
                 m$dim == 1L && !is.null(m$F) && m$by == "NA", NA))
}

# What PredictMat does after the raw basis, as data for the C evaluators:
# mgcv's sweep-and-drop constraint (drop, shift), the by-variable (by) and
# the QR constraint as an explicit map (Z).  A gg_no_recipe (why) when the
# smooth is outside what that covers (derivatives, matrix arguments, other
# constraint forms, missing values), so that PredictMat is used instead.
constraint_map <- function(s, mf, threads = 1L) {
  if (!is.null(s$margin) && !is_te_cr2(s))
    return(no_recipe(s$label, ": a tensor product other than te() of two cr/cs margins"))
  if (!is.null(s$deriv) && s$deriv != 0)
    return(no_recipe(s$label, ": a derivative smooth"))
  if (!is.null(attr(s, "indi")))
    return(no_recipe(s$label, ": an indexed smooth"))
  by <- NULL
  if (s$by != "NA") {
    b <- mf[[s$by]]
    if (is.null(b) || !is.null(dim(b)) || any_missing(b, threads))
      return(no_recipe(s$label, ": its by variable is not a vector without missing values"))
    by <- if (is.factor(b)) as.numeric(b == s$by.level) else if (is.numeric(b)) as.double(b)
    if (is.null(by))
      return(no_recipe(s$label, ": its by variable is neither numeric nor a factor"))
  }
  qrc <- attr(s, "qrc")
  n_cons <- attr(s, "nCons")
  map <- list(drop = 0L, shift = NULL, Z = NULL, by = by)
  if (inherits(qrc, "sweepDrop")) {
    map$drop <- as.integer(qrc[1L])
    map$shift <- as.double(qrc[-1L])
  } else if (inherits(qrc, "qr")) {
    if (is.null(n_cons) || n_cons <= 0L)
      return(no_recipe(s$label, ": a QR constraint without constraints"))
    k <- nrow(qrc$qr)
    map$Z <- qr.Q(qrc, complete = TRUE)[, (n_cons + 1L):k, drop = FALSE]
  } else if (!is.null(qrc) && !(is.character(qrc) && identical(as.integer(n_cons), 0L))) {
    # a character qrc with nCons 0 means "no constraint"
    return(no_recipe(s$label, ": a constraint form the C evaluators do not take"))
  }
  map
}

# The "cr"/"cs" basis of smooth s on the rows of mf (src/basis_cr.c).
cr_matrix <- function(s, mf) {
  if (!inherits(s, c("cr.smooth", "cs.smooth"))) return(NULL)
  recipe_matrix(s, mf, 1L)
}

# What the C evaluators need to build smooth s on the rows of mf: its
# covariates, knots and constraint map -- the "recipe" block the engine
# builds X from (src/xplan.h), on the host or on the device.  kind 1 is
# cr/cs, 2 is tp/ts, 3 is te() of two cr/cs margins; a gg_no_recipe
# saying why when s has no C evaluator or its data do not suit one.
smooth_recipe <- function(s, mf, threads = 1L) {
  covariates_ok <- function(x) all(vapply(x, function(v) is.numeric(v) && is.null(dim(v)) &&
                                                       !any_missing(v, threads), NA))
  bad_covariates <- no_recipe(s$label, ": a covariate is not a numeric vector without ",
                              "missing values")
  if (!has_c_evaluator(s))
    return(no_recipe(s$label, ": its basis (", class(s)[1L], ") has no C evaluator"))
  if (is_te_cr2(s)) {
    x <- lapply(s$margin, function(m) mf[[m$term]])
    if (!covariates_ok(x)) return(bad_covariates)
    map <- constraint_map(s, mf, threads)
    if (inherits(map, "gg_no_recipe")) return(map)
    m1 <- s$margin[[1L]]
    m2 <- s$margin[[2L]]
    k1 <- length(m1$xp)
    k2 <- length(m2$xp)
    return(c(list(kind = 3L, x = matrix(as.double(unlist(x, use.names = FALSE)), ncol = 2L),
                  d = 2L, k = k1 * k2, k1 = k1, k2 = k2,
                  xk = as.double(m1$xp), F = as.double(m1$F),
                  xk2 = as.double(m2$xp), F2 = as.double(m2$F)), map))
  }
  if (inherits(s, c("cr.smooth", "cs.smooth"))) {
    if (s$dim != 1L || is.null(s$F))
      return(no_recipe(s$label, ": a cr basis without its one covariate's F matrix"))
    x <- mf[[s$term]]
    if (!covariates_ok(list(x))) return(bad_covariates)
    map <- constraint_map(s, mf, threads)
    if (inherits(map, "gg_no_recipe")) return(map)
    return(c(list(kind = 1L, x = as.double(x), d = 1L, k = length(s$xp),
                  xk = as.double(s$xp), F = as.double(s$F)), map))
  }
  if (is.null(s$UZ) || is.null(s$Xu))
    return(no_recipe(s$label, ": a thin plate basis without its UZ and Xu"))
  if (!is.null(s$drop.null) && s$drop.null > 0)
    return(no_recipe(s$label, ": a thin plate basis with its null space dropped"))
  d <- s$dim
  cols <- lapply(s$term, function(v) mf[[v]])
  if (!covariates_ok(cols)) return(bad_covariates)
  map <- constraint_map(s, mf, threads)
  if (inherits(map, "gg_no_recipe")) return(map)
  m <- s$p.order[1L]
  if (2 * m <= d) {                    # mgcv's default penalty order
    m <- 1
    while (2 * m < d + 2) m <- m + 1
  }
  Xu <- s$Xu
  storage.mode(Xu) <- "double"
  UZ <- s$UZ
  storage.mode(UZ) <- "double"
  ## n x d, column-major; one covariate goes as it is, without a copy
  x <- if (d == 1L) as.double(cols[[1L]]) else
    matrix(as.double(unlist(cols, use.names = FALSE)), ncol = d)
  c(list(kind = 2L, x = x,
         d = as.integer(d), k = ncol(UZ), tshift = as.double(s$shift),
         m = as.integer(s$p.order[1L]), M = as.integer(choose(m + d - 1, d)),
         Xu = Xu, UZ = UZ), map)
}

# Columns a recipe block maps its raw basis to, before gam.side's deletions
# (the constraint's Z, or the raw basis less the dropped column).
recipe_columns <- function(r)
  as.integer(if (is.null(r$Z)) r$k - (r$drop > 0L) else ncol(r$Z))

# gam.side's deletions for nested smooths, last in PredictMat too.
drop_deleted <- function(s, X) {
  del <- attr(s, "del.index")
  if (is.null(del)) X else X[, -del, drop = FALSE]
}

# The "tp"/"ts" basis of smooth s on the rows of mf (src/basis_tprs.c),
# over `threads` threads.
tprs_matrix <- function(s, mf, threads = setup_threads(nrow(mf))) {
  if (!inherits(s, c("tprs.smooth", "ts.smooth"))) return(NULL)
  recipe_matrix(s, mf, threads)
}

# The model matrix as a recipe for the engine (src/xplan.h): the dense
# parametric columns, then one block per smooth with its covariates, knots
# and constraint map.  The engine builds X from it where it computes -- on
# the device for a GPU fit, so X is never formed in R nor copied over the
# bus.  A gg_no_recipe saying why (which term) when some smooth has no C
# evaluator (or the option gamgpu.x_recipe is FALSE): the caller then
# builds X in R.  Thin plate smooths of more than 4 variables stay on the
# R path (the device kernel keeps a row's coordinates in registers).
model_matrix_plan <- function(G, mf, threads = setup_threads(nrow(mf))) {
  if (!isTRUE(getOption("gamgpu.x_recipe", TRUE)))
    return(no_recipe("option gamgpu.x_recipe is FALSE"))
  n <- nrow(mf)
  p <- ncol(G$X)
  blocks <- list()
  if (G$nsdf > 0) {
    D <- if (G$nsdf == 1L && identical(attr(G$pterms, "intercept"), 1L) &&
             !length(attr(G$pterms, "term.labels")))
      matrix(1, n, 1L)              # the intercept alone: model.matrix()'s column of ones
    else
      stats::model.matrix(stats::delete.response(G$pterms), mf, contrasts.arg = G$contrasts)
    if (ncol(D) != G$nsdf)
      return(no_recipe("the parametric terms' model matrix has ", ncol(D),
                       " columns where the setup has ", G$nsdf))
    storage.mode(D) <- "double"
    dimnames(D) <- NULL
    attr(D, "assign") <- attr(D, "contrasts") <- NULL
    blocks[[1L]] <- list(kind = 0L, col0 = 1L, ncol = as.integer(G$nsdf), D = D)
  }
  for (s in G$smooth) {
    r <- smooth_recipe(s, mf, threads)
    if (inherits(r, "gg_no_recipe")) return(r)
    if (r$kind == 2L && r$d > 4L)
      return(no_recipe(s$label, ": a thin plate basis of more than 4 variables"))
    kc <- recipe_columns(r)
    del <- attr(s, "del.index")
    if (!is.null(del)) {
      col_of <- rep(0L, kc)
      keep <- setdiff(seq_len(kc), del)
      col_of[keep] <- seq_along(keep)
      r$col_of <- col_of
    }
    r$col0 <- as.integer(s$first.para)
    r$ncol <- as.integer(s$last.para - s$first.para + 1L)
    blocks[[length(blocks) + 1L]] <- r
  }
  # the device takes each n-row array (covariates, by-variables, dense
  # columns) as a buffer of its own: a model with very many stays in R
  n_arrays <- sum(vapply(blocks, function(b) 1L + !is.null(b$by), 1L))
  if (n_arrays > 40L)
    return(no_recipe(n_arrays, " covariate and by-variable arrays (the device takes at most 40)"))
  list(n = n, p = p, threads = as.integer(threads), blocks = blocks)
}

# Workers for building the model matrix: option gamgpu.setup_cores
# (default: the physical cores), at least rows_per_worker rows each, at most
# two under R CMD check; gam_gpu() caps them at control nthreads.  setup_threads() sizes the C evaluators' threads,
# setup_cores() the forked R workers (which only pay for R-level bases).
setup_workers <- function(n, rows_per_worker) {
  w <- getOption("gamgpu.setup_cores", parallel::detectCores(logical = FALSE))
  if (!is.numeric(w) || length(w) != 1L || is.na(w)) w <- 1L
  if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_"))) w <- min(w, 2L)
  max(1L, as.integer(min(w, n %/% rows_per_worker)))
}

setup_threads <- function(n) setup_workers(n, 5000)

setup_cores <- function(n) if (.Platform$OS.type == "unix") setup_workers(n, 1e5) else 1L

full_model_matrix <- function(G, mf, cores = setup_cores(nrow(mf))) {
  n <- nrow(mf)
  # forked workers pay for R-level basis code; the C evaluators need none
  if (all(vapply(G$smooth, has_c_evaluator, NA)))
    cores <- 1L
  if (cores <= 1L)
    return(model_matrix_block(G, mf))
  rows <- split(seq_len(n), cut(seq_len(n), min(cores, n), labels = FALSE))
  # one thread per forked worker: the workers already fill the cores
  parts <- parallel::mclapply(rows, function(r) model_matrix_block(G, mf[r, , drop = FALSE], 1L),
                              mc.cores = cores, mc.preschedule = TRUE)
  failed <- vapply(parts, function(x) !is.matrix(x), NA)
  if (any(failed))
    gamgpu_abort("gamgpu_setup_failed",
                 paste("building the model matrix failed in a worker:",
                       conditionMessage(attr(parts[[which(failed)[1]]], "condition"))))
  do.call(rbind, parts)
}
