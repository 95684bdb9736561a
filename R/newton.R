# The step rules shared by the R-level Newton optimizers of the smoothing
# parameters (R/gcv.R's GCV/GACV for additive models, R/outer.R's outer
# iteration): mgcv's fast.REML.fit and newton() rules -- the Hessian's
# eigenvalues made positive, steps of at most 5 in any parameter, halved
# while the score rises.

# The Newton step -H^-1 g with H's eigenvalues replaced by their absolute
# values (floored at .Machine$double.eps^0.7 of the largest, as newton()
# floors them: a flat end's curvature, far below the others', keeps its
# full step), scaled to at most 5 in any coordinate.
newton_step <- function(H, g) {
  ev <- eigen(H, symmetric = TRUE)
  d <- pmax(abs(ev$values), .Machine$double.eps^0.7 * max(abs(ev$values), 1e-300))
  step <- -drop(ev$vectors %*% (crossprod(ev$vectors, g) / d))
  if (max(abs(step)) > 5) step <- step * 5 / max(abs(step))
  step
}

# Halves `step` (at most 30 times) until score_at(step)'s $score is no
# higher than `score`; returns the last evaluation (e1), the step taken and
# the number of evaluations.
halve_step <- function(score_at, score, step) {
  k <- 0L
  repeat {
    # (a trial point whose penalized IRLS cannot be corrected is no better:
    # halved like a higher score; the error stands where every halving fails)
    e1 <- tryCatch(score_at(step), gamgpu_numerical = function(err) err)
    ok <- !inherits(e1, "error")
    if ((ok && e1$score <= score) || k >= 30L) break
    step <- step / 2
    k <- k + 1L
  }
  if (!ok) stop(e1)
  list(e1 = e1, step = step, calls = k + 1L)
}

# The penalties at full size: S[[j]] placed at rows and columns off[j] ...
# of a p x p zero matrix.
embed_penalties <- function(S, off, p) {
  lapply(seq_along(S), function(j) {
    M <- matrix(0, p, p)
    ii <- off[j] - 1L + seq_len(ncol(S[[j]]))
    M[ii, ii] <- S[[j]]
    M
  })
}

# The inverse and log |determinant| of a symmetric matrix: by Cholesky
# where it is positive definite; otherwise (Newton's weights of a link that
# is not canonical can be negative enough to make X'WX + S indefinite, and
# mgcv's gdi1 and gdi2 then work with |det|) by its eigen-decomposition.
# NULL where it is singular to rounding.
sym_inverse_logdet <- function(H) {
  R <- tryCatch(chol(H), error = function(e) NULL)
  if (!is.null(R)) return(list(inv = chol2inv(R), ldet = 2 * sum(log(diag(R))), posdef = TRUE))
  ev <- eigen(H, symmetric = TRUE)
  d <- ev$values
  if (!all(is.finite(d)) || min(abs(d)) <= 1e-13 * max(abs(d))) return(NULL)
  list(inv = ev$vectors %*% (t(ev$vectors) / d), ldet = sum(log(abs(d))), posdef = FALSE)
}
