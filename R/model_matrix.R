# The model matrix on every row.  bam()'s setup builds its bases from a
# subsample, so G$X may hold only those rows; the fit needs X for all rows.
# This computes what predict.gam(type = "lpmatrix") would -- the parametric
# columns by model.matrix(), each smooth's columns by mgcv::PredictMat(), or
# by a C evaluator for the bases that have one (cr, cs) -- into one
# preallocated matrix, without predict.gam's per-block model frames, and
# over row blocks in forked workers where the platform forks and R-level
# basis code remains (option gamgpu.setup_cores; the workers run R only,
# never CUDA).

model_matrix_block <- function(G, mf) {
  X <- matrix(0, nrow(mf), ncol(G$X))
  if (G$nsdf > 0)
    X[, seq_len(G$nsdf)] <- stats::model.matrix(stats::delete.response(G$pterms), mf,
                                                contrasts.arg = G$contrasts)
  for (s in G$smooth)
    X[, s$first.para:s$last.para] <- smooth_matrix(s, mf)
  X
}

# One smooth's columns: C for the bases that have an evaluator (cr_matrix),
# mgcv::PredictMat for everything else.
smooth_matrix <- function(s, mf) {
  Xs <- cr_matrix(s, mf)
  if (is.null(Xs)) mgcv::PredictMat(s, mf) else Xs
}

# The "cr"/"cs" basis of smooth s on the rows of mf, computed in C
# (src/basis_cr.c) exactly as PredictMat does it: raw basis, mgcv's
# sweep-and-drop constraint, by-variable, qr constraint.  NULL when the
# smooth is outside what that covers (derivatives, matrix arguments,
# other constraint forms, missing values), so PredictMat is used instead.
cr_matrix <- function(s, mf) {
  if (!inherits(s, c("cr.smooth", "cs.smooth")) || s$dim != 1L || is.null(s$F) ||
      !is.null(s$margin) || (!is.null(s$deriv) && s$deriv != 0) ||
      !is.null(attr(s, "indi")))
    return(NULL)
  x <- mf[[s$term]]
  if (!is.numeric(x) || !is.null(dim(x)) || anyNA(x)) return(NULL)
  by <- NULL
  if (s$by != "NA") {
    b <- mf[[s$by]]
    if (is.null(b) || !is.null(dim(b)) || anyNA(b)) return(NULL)
    by <- if (is.factor(b)) as.numeric(b == s$by.level) else if (is.numeric(b)) as.double(b)
    if (is.null(by)) return(NULL)
  }
  qrc <- attr(s, "qrc")
  n_cons <- attr(s, "nCons")
  drop <- 0L
  shift <- NULL
  Z <- NULL
  if (inherits(qrc, "sweepDrop")) {
    drop <- as.integer(qrc[1L])
    shift <- as.double(qrc[-1L])
  } else if (inherits(qrc, "qr")) {
    if (is.null(n_cons) || n_cons <= 0L) return(NULL)
    k <- nrow(qrc$qr)
    Z <- qr.Q(qrc, complete = TRUE)[, (n_cons + 1L):k, drop = FALSE]
  } else if (!is.null(qrc) && !(is.character(qrc) && identical(as.integer(n_cons), 0L))) {
    return(NULL)                      # a character qrc with nCons 0 means "no constraint"
  }
  .Call(gg_cr_basis_r, as.double(x), as.double(s$xp), as.double(s$F), drop, shift, Z, by)
}

setup_cores <- function(n) {
  cores <- getOption("gamgpu.setup_cores", parallel::detectCores(logical = FALSE))
  if (!is.numeric(cores) || length(cores) != 1L || is.na(cores)) cores <- 1L
  if (.Platform$OS.type != "unix" || n < 2e5) cores <- 1L
  # R CMD check allows at most two processes
  if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_"))) cores <- min(cores, 2L)
  max(1L, as.integer(min(cores, n %/% 1e5)))
}

full_model_matrix <- function(G, mf, cores = setup_cores(nrow(mf))) {
  n <- nrow(mf)
  # forked workers pay for R-level basis code; the C evaluators need none
  if (all(vapply(G$smooth, inherits, NA, what = c("cr.smooth", "cs.smooth"))))
    cores <- 1L
  if (cores <= 1L)
    return(model_matrix_block(G, mf))
  rows <- split(seq_len(n), cut(seq_len(n), min(cores, n), labels = FALSE))
  parts <- parallel::mclapply(rows, function(r) model_matrix_block(G, mf[r, , drop = FALSE]),
                              mc.cores = cores, mc.preschedule = TRUE)
  failed <- vapply(parts, function(x) !is.matrix(x), NA)
  if (any(failed))
    gamgpu_abort("gamgpu_setup_failed",
                 paste("building the model matrix failed in a worker:",
                       conditionMessage(attr(parts[[which(failed)[1]]], "condition"))))
  do.call(rbind, parts)
}
