# The R-level Newton optimizer of the smoothing parameters (R/gcv.R's
# GACV and GCV for additive models, R/outer.R's outer iteration): mgcv's
# newton(), and the p x p helpers they share.

# The weighted least squares problem reduced to p rows from its Gram
# products: Rx (Rx'Rx = X'WX, pivoted Cholesky; rows past its rank zero),
# f (Rx'f = X'Wz) and the residual sum of squares beyond them, extra (as
# bam() reduces its rows by QR).
gram_reduction <- function(XtWX, XtWz, zWz) {
  p <- ncol(XtWX)
  R <- suppressWarnings(chol(XtWX, pivot = TRUE))
  piv <- attr(R, "pivot")
  r <- attr(R, "rank")
  f <- numeric(p)
  if (r > 0)
    f[seq_len(r)] <- backsolve(R[seq_len(r), seq_len(r), drop = FALSE],
                               drop(XtWz)[piv][seq_len(r)], transpose = TRUE)
  if (r < p) R[(r + 1L):p, ] <- 0
  list(Rx = R[, order(piv), drop = FALSE], f = f, extra = max(0, zWz - sum(f^2)))
}

# newton()'s conv.tol for gam()'s methods: newton.tol where it is given,
# else gam.control()'s.
gam_conv_tol <- function(control) {
  if ("newton.tol" %in% attr(control, "given")) control$newton.tol else
    mgcv::gam.control()$newton$conv.tol
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

# mgcv's newton() (gam.outer()'s optimizer) step for step, on an
# evaluator instead of gam.fit3(): eval_at(theta, deriv, from) returns the
# score at theta (with its gradient g and Hessian Hs in theta where deriv)
# and the fit that later evaluations start from; scale_of(e) is newton()'s
# scale of the score.  The same Newton steps on the same parameters (those
# whose gradient or curvature is not negligible), the same halvings and
# steepest-descent trials, the same acceptance of a step (the score lower
# and the quadratic model within qerror.thresh of it) and the same
# convergence test at conv.tol: on a criterion with a flat end or several
# minima it stops where gam() stops, not merely at an equally good point.
# A trial evaluation that fails with a condition of class fail scores as
# gam.fit3's failed fit does: not finite, so the step is halved (the
# start's failure stands).  Returns the last accepted evaluation with
# theta, iter, calls, conv (newton()'s words) and converged, score.hist.
mgcv_newton <- function(eval_at, theta, scale_of, conv.tol = 1e-6, maxNstep = 5,
                        maxSstep = 2, maxHalf = 30, maxit = 200L, fail = "gamgpu_numerical") {
  eps <- .Machine$double.eps
  calls <- 0L
  ev <- function(th, deriv, from) {
    calls <<- calls + 1L
    if (is.null(from)) return(eval_at(th, deriv, from))
    tryCatch(eval_at(th, deriv, from), error = function(err)
      if (inherits(err, fail)) list(score = Inf) else stop(err))
  }
  quad <- function(step) sum(grad * step) + 0.5 * drop(crossprod(step, hess %*% step))
  qerr <- function(pc, sc) abs(pc - sc) / (max(abs(pc), abs(sc)) + score.scale * conv.tol)
  e <- b <- ev(theta, TRUE, NULL)
  old.score <- score <- e$score
  grad <- e$g
  hess <- e$Hs
  score.scale <- scale_of(e)
  uconv.ind <- abs(grad) > score.scale * conv.tol
  if (!any(uconv.ind)) uconv.ind[] <- TRUE
  hist <- numeric(0)
  qerror.thresh <- 0.8
  ii <- 0L
  converged <- !length(theta)
  i <- 0L
  accept <- function(f, th) {
    old.score <<- score
    e <<- b <<- f
    theta <<- th
    score <<- f$score
    grad <<- f$g
    hess <<- f$Hs
  }
  if (length(theta)) for (i in seq_len(maxit)) {
    if (!any(uconv.ind)) uconv.ind[which(abs(grad) == max(abs(grad)))] <- TRUE
    eh <- eigen(hess[uconv.ind, uconv.ind, drop = FALSE], symmetric = TRUE)
    d <- eh$values
    U <- eh$vectors
    indef <- sum(-d > abs(d[1]) * eps^0.5) > 0
    if (indef && length(d) == 1L) indef <- d < -score.scale * eps^0.5
    pdef <- !any(d < 0)
    d <- abs(d)
    low.d <- max(d) * eps^0.7
    if (any(d < low.d)) pdef <- FALSE
    d[d < low.d] <- low.d
    d[d != 0] <- 1 / d[d != 0]
    Nstep <- 0 * grad
    Nstep[uconv.ind] <- -drop(U %*% (d * crossprod(U, grad[uconv.ind])))
    Sstep <- -grad / max(abs(grad))
    ms <- max(abs(Nstep))
    if (ms > maxNstep) Nstep <- maxNstep * Nstep / ms
    sd.unused <- TRUE
    lsp1 <- theta + Nstep
    b <- ev(lsp1, pdef, e)
    score1 <- b$score
    ii <- 0L
    score.change <- score1 - score
    qerror <- qerr(quad(Nstep), score.change)
    score2 <- NA_real_
    if (is.finite(score1) && score.change < 0 && pdef && qerror < qerror.thresh) {
      accept(b, lsp1)
    } else if (!is.finite(score1) || score1 >= score || qerror >= qerror.thresh) {
      step <- Nstep
      while ((!is.finite(score1) || score1 >= score || qerror >= qerror.thresh) && ii < maxHalf) {
        if (ii == 3L && i < 10L) {
          s.length <- min(sqrt(sum(step^2)), maxSstep)
          step <- Sstep * s.length / sqrt(sum(Sstep^2))
          sd.unused <- FALSE
        } else step <- step / 2
        lsp1 <- theta + step
        b1 <- ev(lsp1, FALSE, e)
        score1 <- b1$score
        score.change <- score1 - score
        qerror <- if (ii > min(4, maxHalf / 2)) qerror.thresh / 2 else
          qerr(quad(step), score.change)
        if (is.finite(score1) && score.change < 0 && qerror < qerror.thresh) {
          if (pdef || !sd.unused) {
            accept(ev(lsp1, TRUE, e), lsp1)
          } else {
            b <- b1
            score2 <- score1
          }
          score1 <- score - abs(score) - 1
        }
        if (!is.finite(score1) || score1 >= score || qerror >= qerror.thresh) ii <- ii + 1L
      }
      if (!pdef && sd.unused && ii < maxHalf) score1 <- score2
    }
    if (!pdef && sd.unused) {
      # the steepest-descent line, halved until the score rises again
      step <- Sstep * 2
      kk <- 0L
      score2 <- NA_real_
      lsp2 <- NULL
      repeat {
        step <- step / 2
        kk <- kk + 1L
        lsp3 <- theta + step
        b1 <- ev(lsp3, FALSE, e)
        score3 <- b1$score
        score.change <- score3 - score
        qerror <- qerr(quad(step), score.change)
        if (!is.finite(score2) || (is.finite(score3) && score3 <= score2 &&
                                     qerror < qerror.thresh)) {
          score2 <- score3
          lsp2 <- lsp3
        }
        if ((is.finite(score2) && is.finite(score3) && score2 < score && score3 > score2) ||
            kk == 40L) break
      }
      if (is.finite(score2) && (!is.finite(score1) || score2 < score1)) {
        lsp1 <- lsp2
        score1 <- score2
      }
      accept(ev(lsp1, TRUE, e), lsp1)
    }
    hist <- c(hist, score)
    converged <- !indef
    score.scale <- scale_of(b)
    uconv.ind <- abs(grad) > score.scale * conv.tol * 0.1 |
      abs(diag(hess)) > score.scale * conv.tol * 0.1
    if (any(abs(grad) > score.scale * conv.tol * 5)) converged <- FALSE
    if (abs(old.score - score) > score.scale * conv.tol) {
      if (converged) uconv.ind[] <- TRUE
      converged <- FALSE
    }
    if (ii == maxHalf) converged <- TRUE
    if (converged) break
  }
  # (newton() calls it "step failed" where no halving lowers the score; where
  # its gradient test is met too the score is at its minimum to rounding --
  # whether a last halving lowers it by 1e-13 is chance -- and gamgpu calls
  # that convergence)
  if (ii == maxHalf && !any(abs(grad) > score.scale * conv.tol * 5)) ii <- 0L
  e$theta <- theta
  e$iter <- i
  e$calls <- calls
  e$conv <- if (ii == maxHalf) "step failed" else
    if (!converged) "iteration limit reached" else "full convergence"
  e$converged <- converged && ii < maxHalf
  e$score.hist <- hist
  e
}
