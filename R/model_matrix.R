# The model matrix on every row.  bam()'s setup builds its bases from a
# subsample, so G$X may hold only those rows; the fit needs X for all rows.
# This computes what predict.gam(type = "lpmatrix") would -- the parametric
# columns by model.matrix(), each smooth's columns by mgcv::PredictMat() --
# into one preallocated matrix, without predict.gam's per-block model
# frames, and over row blocks in forked workers where the platform forks
# (option gamgpu.setup_cores; the workers run R only, never CUDA).

model_matrix_block <- function(G, mf) {
  X <- matrix(0, nrow(mf), ncol(G$X))
  if (G$nsdf > 0)
    X[, seq_len(G$nsdf)] <- stats::model.matrix(stats::delete.response(G$pterms), mf,
                                                contrasts.arg = G$contrasts)
  for (s in G$smooth)
    X[, s$first.para:s$last.para] <- mgcv::PredictMat(s, mf)
  X
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
