# The step rules shared by the R-level Newton optimizers of the smoothing
# parameters (R/gcv.R's GCV/GACV for additive models, R/outer.R's outer
# iteration): mgcv's fast.REML.fit and newton() rules -- the Hessian's
# eigenvalues made positive, steps of at most 5 in any parameter, halved
# while the score rises.

# The Newton step -H^-1 g with H's eigenvalues replaced by their absolute
# values (floored at 1e-7 of the largest), scaled to at most 5 in any
# coordinate.
newton_step <- function(H, g) {
  ev <- eigen(H, symmetric = TRUE)
  d <- pmax(abs(ev$values), 1e-7 * max(abs(ev$values), 1e-300))
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
    e1 <- score_at(step)
    if (e1$score <= score || k >= 30L) break
    step <- step / 2
    k <- k + 1L
  }
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
