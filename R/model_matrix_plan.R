# The model matrix as the engine builds it: model_matrix_plan(), X's
# recipe (the parametric columns and one block per smooth, src/basis/
# xplan.h) that the model session builds X from where the fit runs -- on
# the device for a GPU fit -- with parametric_blocks() for the parametric
# columns; and full_model_matrix(), X on every row in R over forked
# workers where no recipe takes a term.  One smooth's columns and its
# recipe: R/model_matrix.R.

# The model matrix as a recipe for the engine (src/basis/xplan.h): the dense
# parametric columns, then one block per smooth with its covariates, knots
# and constraint map.  The engine builds X from it where it computes -- on
# the device for a GPU fit, so X is never formed in R nor copied over the
# bus.  A gg_no_recipe saying why (which term) when some smooth has no C
# evaluator (or the option gamgpu.x_recipe is FALSE): the caller then
# builds X in R.  Thin plate smooths of more than 4 variables stay on the
# R path (the device kernel keeps a row's coordinates in registers).
# A one-variable thin plate basis takes tp1_table()'s polynomials, so that
# X built on the device is R's route's X bit for bit -- but for a fit on
# device dev = c(mode, ordinal) that may sum to rounding (option
# gamgpu.tensor_cores), where the device's direct sums on these rows cost
# less than the table (tp1_table_pays(): at 1e5 rows on 2000 knots).
# parametric: the parametric columns' blocks made by the caller (a general
# family's, each linear predictor's at its columns: R/general_setup.R) in
# place of parametric_blocks(G, mf).
model_matrix_plan <- function(G, mf, threads = setup_threads(nrow(mf)), dev = NULL,
                              parametric = NULL) {
  if (!isTRUE(getOption("gamgpu.x_recipe", TRUE)))
    return(no_recipe("option gamgpu.x_recipe is FALSE"))
  # (gam()'s set-up of a t2() smooth, modCon = 0: its fit's constraint is
  # not its prediction's, which is the one its object keeps; G$P maps the
  # one to the other.  A t2() block is then built with its fit constraint
  # (t2_fit_constraint()) and checked against gam()'s columns, which G$P
  # makes of PredictMat's (t2_fit_reference()).
  # bam()'s set-up has one constraint, and G$P the identity to rounding.)
  fit_cons <- !is.null(G$P) && max(abs(G$P - diag(nrow(G$P)))) > 1e-8
  n <- nrow(mf)
  p <- ncol(G$X)
  blocks <- list()
  codes <- new.env(parent = emptyenv())
  if (!is.null(parametric)) {
    blocks <- parametric
  } else if (G$nsdf > 0) {
    pb <- parametric_blocks(G, mf, codes)
    if (inherits(pb, "gg_no_recipe")) return(pb)
    blocks <- pb
  }
  codes <- new.env(parent = emptyenv())
  if (!is.null(dev) && dev[1L] != 0L && tensor_cores_option()) {
    codes$tp1_table <- NA
    codes$tp1_dev <- dev
  }
  for (s in G$smooth) {
    reference <- NULL
    if (fit_cons) {
      cols <- s$first.para:s$last.para
      if (inherits(s, "t2.smooth")) {
        Z <- t2_fit_constraint(s)
        if (inherits(Z, "gg_no_recipe")) return(Z)
        attr(s, "fit_Z") <- Z
        reference <- t2_fit_reference(G, s)
        if (inherits(reference, "gg_no_recipe")) return(reference)
      } else if (max(abs(G$P[, cols] - diag(p)[, cols])) > 1e-8) {
        # (any other smooth's columns are the same in both: G$P's columns
        # for it are the identity's)
        return(no_recipe(s$label, ": gam()'s fit takes a constraint other than the prediction ",
                         "one its object keeps (G$P)"))
      }
    }
    r <- checked_recipe(s, mf, threads, codes, reference = reference)
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
  # the device takes each n-row array (covariates, by-variables, factor
  # codes, dense columns) as a buffer of its own, one per distinct vector
  # (the variable caches above share them): a model with very many stays in R
  n_arrays <- sum(grepl("^[xf]:", ls(codes, all.names = TRUE))) +
    sum(vapply(blocks, function(b) b$kind == 0L, NA)) +
    sum(vapply(blocks, function(b) isTRUE(b$kind == 2L && b$d > 1L) +
                 sum(vapply(b$margins, function(m) isTRUE(m$type == 2L && m$d > 1L), 1L)),
               1L))
  if (n_arrays > 40L)
    return(no_recipe(n_arrays, " covariate and by-variable arrays (the device takes at most 40)"))
  list(n = n, p = p, threads = as.integer(threads), tensor_cores = tensor_cores_option(),
       blocks = blocks)
}

# Option gamgpu.tensor_cores (TRUE by default): whether a device may sum a
# thin plate basis's terms on its fp64 tensor cores (to rounding) rather
# than one by one as the host does (bit for bit); see ?gam_gpu, device.
tensor_cores_option <- function() {
  o <- getOption("gamgpu.tensor_cores", TRUE)
  if (!is.logical(o) || length(o) != 1L || is.na(o))
    gamgpu_abort("gamgpu_bad_input", "option gamgpu.tensor_cores must be TRUE or FALSE",
                 call = NULL)
  o
}

# The parametric columns as recipe blocks: a factor's main effect as its
# codes times its contrast matrix (a margins block: no n x levels columns
# in R or on the bus), a numeric variable as itself, the rest (intercept,
# interactions, transformations) as dense columns from model.matrix().
# Which columns are which comes from model.matrix() on a sample of rows
# (its assign attribute; the columns depend on the formula and the
# factors' levels, not on the rows), and the blocks built on that sample
# must give model.matrix()'s values there, bit for bit; otherwise every
# parametric column goes dense, as before.
parametric_blocks <- function(G, mf, codes = new.env(parent = emptyenv())) {
  n <- nrow(mf)
  tt <- stats::delete.response(G$pterms)
  labels <- attr(tt, "term.labels")
  dense_all <- function() {
    # the intercept alone: model.matrix()'s column of ones, written by the
    # backend where it builds X (no n-vector in R or on the bus)
    if (G$nsdf == 1L && identical(attr(tt, "intercept"), 1L) && !length(labels))
      return(list(list(kind = 5L, col0 = 1L, ncol = 1L)))
    D <- stats::model.matrix(tt, mf, contrasts.arg = G$contrasts)
    if (ncol(D) != G$nsdf)
      return(no_recipe("the parametric terms' model matrix has ", ncol(D),
                       " columns where the setup has ", G$nsdf))
    storage.mode(D) <- "double"
    dimnames(D) <- NULL
    attr(D, "assign") <- attr(D, "contrasts") <- NULL
    list(list(kind = 0L, col0 = 1L, ncol = as.integer(G$nsdf), D = D))
  }
  if (!length(labels) || n < 1000L) return(dense_all())
  rows <- unique(round(seq(1, n, length.out = min(n, 256L))))
  make <- function(data, cache, Msample, probe) {
    assign <- attr(Msample, "assign")
    blocks <- list()
    dense_cols <- integer()
    for (t in unique(assign)) {
      cols <- which(assign == t)
      v <- if (t > 0L) data[[labels[t]]]
      if (t > 0L && is.factor(v) && is.null(dim(v))) {
        # the contrast rows: model.matrix()'s row of each level's first row;
        # a level without rows keeps zeros (no row has its code)
        # (looked for among the probe rows first, then among all)
        code <- factor_codes(labels[t], v, cache)
        L <- nlevels(v)
        first <- probe[match(seq_len(L), code[probe])]
        if (anyNA(first))
          first[is.na(first)] <- match(which(is.na(first)), code)
        C <- matrix(0, L, length(cols))
        have <- !is.na(first)
        if (any(have)) {
          Mf <- stats::model.matrix(tt, data[first[have], , drop = FALSE],
                                    contrasts.arg = G$contrasts)
          C[have, ] <- Mf[, cols, drop = FALSE]
        }
        blocks[[length(blocks) + 1L]] <- list(
          kind = 4L, col0 = cols[1L], ncol = length(cols), k = L, drop = 0L,
          Z = unname(C), margins = list(list(type = 5L, k = L, drop = 0L, code = code)))
      } else if (t > 0L && is.numeric(v) && is.null(dim(v)) && length(cols) == 1L) {
        blocks[[length(blocks) + 1L]] <- list(
          kind = 4L, col0 = cols[1L], ncol = 1L, k = 1L, drop = 0L,
          margins = list(list(type = 6L, k = 1L, drop = 0L,
                              x = row_double(labels[t], v, cache))))
      } else {
        dense_cols <- c(dense_cols, cols)
      }
    }
    list(blocks = blocks, dense_cols = dense_cols)
  }
  Ms <- stats::model.matrix(tt, mf[rows, , drop = FALSE], contrasts.arg = G$contrasts)
  if (ncol(Ms) != G$nsdf || any(diff(attr(Ms, "assign")) < 0)) return(dense_all())
  # the blocks on the sample, against model.matrix() there
  chk <- make(mf[rows, , drop = FALSE], new.env(parent = emptyenv()), Ms, seq_along(rows))
  if (length(chk$blocks)) {
    Xc <- .Call(gg_xplan_build_r, list(n = length(rows), p = G$nsdf, threads = 1L,
                                       blocks = c(chk$blocks, lapply(chk$dense_cols, function(j)
                                         list(kind = 0L, col0 = j, ncol = 1L,
                                              D = as.double(Ms[, j]))))))
    if (!identical(Xc, matrix(as.double(Ms), nrow(Ms))))
      return(dense_all())
  }
  out <- make(mf, codes, Ms, rows)
  dc <- out$dense_cols
  if (identical(dc, 1L) && identical(attr(tt, "intercept"), 1L)) {
    # the intercept alone: a column of ones the backend writes
    out$blocks[[length(out$blocks) + 1L]] <- list(kind = 5L, col0 = 1L, ncol = 1L)
  } else if (length(dc)) {
    # the dense columns in runs of adjacent ones, from one model.matrix()
    # of the terms they belong to
    M <- stats::model.matrix(tt, mf, contrasts.arg = G$contrasts)
    D <- M[, dc, drop = FALSE]
    storage.mode(D) <- "double"
    dimnames(D) <- NULL
    attr(D, "assign") <- attr(D, "contrasts") <- NULL
    runs <- split(seq_along(dc), cumsum(c(1L, diff(dc) != 1L)))
    for (r in runs)
      out$blocks[[length(out$blocks) + 1L]] <- list(
        kind = 0L, col0 = dc[r[1L]], ncol = length(r),
        D = if (length(runs) == 1L) D else D[, r, drop = FALSE])
  }
  lapply(out$blocks, function(b) { b$col0 <- as.integer(b$col0); b$ncol <- as.integer(b$ncol); b })
}

# Workers for building the model matrix: option gamgpu.setup_cores
# (default: the physical cores), at least rows_per_worker rows each, at most
# two under R CMD check; gam_gpu() caps them at control nthreads.  setup_threads() sizes the C evaluators' threads,
# setup_cores() the forked R workers (which only pay for R-level bases).
setup_workers <- function(n, rows_per_worker) {
  w <- getOption("gamgpu.setup_cores", physical_cores())
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
