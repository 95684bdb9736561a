# The inner iteration of gamgpu's native general-family route
# (R/general_outer.R): Newton's iteration on the penalized log likelihood
# at given smoothing parameters, as mgcv's gam.fit5() runs it -- its
# factoring of the penalized Hessian (diagonal pre-conditioning, the shift
# of an indefinite one), its step halving and steepest ascent, its
# perturbation off a saddle and its rank check that drops unidentifiable
# coefficients -- on p-vectors and p x p matrices, the rows' log likelihood
# and derivatives coming from the problem's ll() (gf_problem()).
#
# gam.fit5()'s iteration differs between mgcv versions in ways that move
# the fit (mgcv 1.9 against 1.8-41): halving stops after two trials that
# leave the penalized log likelihood exactly unchanged; a step that does not
# lower it is taken where the Hessian was indefinite even when halving ran
# out; after a perturbation the gradient and Hessian are those at the
# perturbed coefficients (1.8-41: still those before it); the rank check
# uses Sl.setup()'s balanced penalty S (1.8-41: E'E of its root E).  Each
# is followed as the installed mgcv does it, decided by what its gam.fit5()
# does on small probe problems (gf_fit5_behaviour()) and by whether Sl has
# the attribute "S" -- not by mgcv's version number.

# What the installed mgcv's gam.fit5() does in its Newton iteration where
# versions differ, found by running it on three one-coefficient problems
# of a stand-in general family (no penalty, no rows) whose ll() records
# each call:
#   no_change: halving stops after two trials with the penalized log
#     likelihood exactly unchanged (a flat ll(): a handful of trials, where
#     without the rule halving goes on until the step vanishes, ~35);
#   indefinite_accept: a step that leaves it unchanged is taken where the
#     Hessian is indefinite although halving ran out (flat ll(), lbb > 0:
#     the iteration goes on past its first step where without the rule the
#     step fails there);
#   perturb_regrad: after the perturbation off an indefinite "optimum" the
#     next Newton step is from the gradient at the perturbed coefficients
#     (ll()'s gradient 1e-20 at b >= 1 and 1e-3 below: a step of ~0.1 from
#     the perturbed point, where the gradient from before gives ~1e-12);
#   fields: the names of gam.fit5()'s result (mgcv 1.9 adds Vg, NCV's
#     jackknife gradients: NULL for REML), for gam()'s object's fields.
# Kept for the session, keyed by the gam.fit5() it was found for.
gf_fit5_cache <- new.env(parent = emptyenv())
gf_fit5_behaviour <- function() {
  fit5 <- mgcv_fun("gam.fit5")
  if (identical(gf_fit5_cache$fit5, fit5)) return(gf_fit5_cache$behaviour)
  failed <- character()
  run <- function(l, lb, lbb, maxit = 3L, max_calls = 5000L) {
    calls <- list()
    fam <- structure(list(
      family = "gamgpu_probe", linkinv = function(eta) eta, initialize = expression(NULL),
      ll = function(y, X, coef, wt, family, offset = NULL, deriv = 0, ...) {
        calls[[length(calls) + 1L]] <<- c(coef = coef[1], deriv = deriv)
        if (length(calls) > max_calls)
          stop(structure(class = c("gamgpu_probe_done", "error", "condition"),
                         list(message = "probe done", call = NULL)))
        list(l = l(coef), lb = lb(coef), lbb = matrix(lbb, 1L, 1L))
      }), class = c("general.family", "extended.family", "family"))
    fit <- tryCatch(
      suppressWarnings(fit5(x = matrix(1, 1L, 1L), y = 0, lsp = numeric(0), Sl = list(),
                            weights = 1, offset = 0, deriv = 0, family = fam,
                            control = mgcv::gam.control(maxit = maxit), start = 1)),
      gamgpu_probe_done = function(e) NULL,
      error = function(e) {
        failed <<- c(failed, conditionMessage(e))
        NULL
      })
    list(fit = fit, calls = do.call(rbind, calls))
  }
  flat <- run(function(b) 1, function(b) 1, -1)
  indef <- run(function(b) 1, function(b) 1, 1)
  pert <- run(function(b) b, function(b) if (b >= 1) 1e-20 else 1e-3, 1, max_calls = 6L)
  # (probe 3's calls: the start, the first Newton trial, the perturbed
  # point, then the second Newton trial from it)
  regrad <- !is.null(pert$calls) && nrow(pert$calls) >= 4L &&
    pert$calls[4L, "coef"] - pert$calls[3L, "coef"] > 1e-6
  behaviour <- list(
    no_change = !is.null(flat$calls) && sum(flat$calls[, "deriv"] == 0) <= 8L,
    indefinite_accept = !is.null(indef$fit) && indef$fit$iter > 1L,
    perturb_regrad = regrad,
    fields = names(flat$fit))
  if (is.null(flat$fit) || is.null(indef$fit) || is.null(pert$calls))
    gamgpu_abort("gamgpu_internal_error",
                 paste("the installed mgcv's gam.fit5() did not run on gamgpu's probe problems",
                       "of its Newton iteration (the native general-family route follows its",
                       "rules):", paste(unique(failed), collapse = "; ")),
                 call = NULL)
  gf_fit5_cache$fit5 <- fit5
  gf_fit5_cache$behaviour <- behaviour
  behaviour
}

# The balanced penalty gam.fit5() checks the rank of the Hessian against:
# Sl.setup()'s S where it has one (mgcv 1.9), else E'E of its root E;
# NULL where the model has no penalty.
gf_balanced_penalty <- function(Sl) {
  if (!length(Sl)) return(NULL)
  S <- attr(Sl, "S")
  if (is.null(S)) crossprod(attr(Sl, "E")) else as.matrix(S)
}

# The penalized Hessian Hp factored for Newton's step as gam.fit5 factors
# it: scaled by D = diag(Hp)^-1/2 to unit diagonal and Choleski-factored
# with pivoting; where its diagonal shows it indefinite a multiple of the
# identity is added first (D = 1), and `indefinite` says so; where the
# factor is rank deficient a ridge is added, 100 times larger each time
# (from sqrt(eps), or sqrt(eps) max|diag| where indefinite).  solve(v) is
# Hp^-1 v (of the modified Hp), ldet log|Hp| (of the modified one),
# kappa() the condition number of the unmodified Hp (gam.fit5's kappaH).
gf_factor <- function(Hp) {
  p <- ncol(Hp)
  eps <- .Machine$double.eps
  d <- diag(Hp)
  if (!all(is.finite(d)))
    gamgpu_abort("gamgpu_numerical", "non-finite penalized Hessian in the Newton iteration",
                 call = NULL)
  Hp0 <- Hp
  indefinite <- FALSE
  if (min(d) <= 0) {
    thresh <- max(d) * sqrt(eps)
    if (-min(d) < thresh) d[d < thresh] <- thresh else indefinite <- TRUE
  }
  if (indefinite) {
    # (shifted positive: the step is then a damped, not a full, Newton step)
    ridge <- abs(max(d)) * sqrt(eps)
    Hp <- Hp + diag(abs(min(d)) + ridge, p)
    D <- rep(1, p)
  } else {
    ridge <- sqrt(eps)
    D <- d^-0.5
    Hp <- D * t(D * Hp)
  }
  L <- suppressWarnings(chol(Hp, pivot = TRUE))
  while (attr(L, "rank") < p) {
    L <- suppressWarnings(chol(Hp + diag(ridge, p), pivot = TRUE))
    ridge <- ridge * 100
    indefinite <- TRUE
  }
  piv <- attr(L, "pivot")
  ipiv <- order(piv)
  solve <- function(v) {
    v <- as.matrix(v)
    D * backsolve(L, forwardsolve(t(L), (D * v)[piv, , drop = FALSE]))[ipiv, , drop = FALSE]
  }
  list(L = L, D = D, piv = piv, ipiv = ipiv, indefinite = indefinite, solve = solve,
       kappa = function() kappa(Hp0), ldet = 2 * sum(log(diag(L))) - 2 * sum(log(D)))
}

# Newton's iteration on the penalized log likelihood l(beta) - beta' St
# beta / 2 from beta (gam.fit5's inner iteration): full Newton steps,
# each at most a tenth of |beta| long, halved while they do not raise the
# penalized log likelihood (from the sixth halving divided by 5), then,
# unless the start was already converged, a steepest ascent step shrunk by
# 10 where no halving does; converged when max |gradient| < eps |penalized
# log likelihood|.  Converged where the Hessian was indefinite, it perturbs
# the coefficients and iterates on (early on, or after a rank check), or
# checks the rank of the Hessian's likelihood and penalty parts together
# and drops the coefficients beyond it (set to 0: the session's X keeps its
# columns); at most 5 perturbations.  Where no step raises the penalized
# log likelihood it stops, converged where the gradient is within what
# rounding leaves at Hp's condition number (gam.fit5 warns otherwise).
# The installed mgcv's variant of each rule: gf_fit5_behaviour().
# Returns beta (all p, dropped ones 0) with keep (the coefficients not
# dropped), ll() at it (deriv 1; lb, lbb of the kept), the kept St and the
# factor of Hp there (gf_factor()), iterations, convergence and warnings.
# keep: the coefficients to start from (NULL: all; an earlier fit's, whose
# dropped ones stay dropped); fallback: the start to take where beta's log
# likelihood is not finite.
gf_inner <- function(P, St, beta, eps, maxit, keep = NULL, fallback = NULL) {
  rules <- gf_fit5_behaviour()
  p <- P$p
  if (is.null(keep)) keep <- rep(TRUE, p)
  full <- function(b) { f <- numeric(p); f[keep] <- b; f }
  St <- St[keep, keep, drop = FALSE]
  beta <- beta[keep]
  ll_at <- function(b, deriv) {
    o <- P$ll(full(b), deriv)
    if (deriv >= 1) {
      o$lb <- o$lb[keep]
      o$lbb <- o$lbb[keep, keep, drop = FALSE]
    }
    o
  }
  pen <- function(ll, b) ll$l - sum(b * drop(St %*% b)) / 2
  ll <- ll_at(beta, 1L)
  ll0 <- pen(ll, beta)
  if (!is.finite(ll0) && !is.null(fallback)) {
    # (a predicted start off the likelihood's support: the given one)
    beta <- fallback[keep]
    ll <- ll_at(beta, 1L)
    ll0 <- pen(ll, beta)
  }
  grad <- ll$lb - drop(St %*% beta)
  Hp <- -ll$lbb + St
  small <- function(g, l0) max(abs(g)) < eps * abs(l0)
  conv0 <- small(grad, ll0)
  converged <- FALSE
  rank_checked <- FALSE
  perturbed <- 0L
  warn <- character()
  iter <- 0L
  fac <- NULL
  try_step <- function(st, deriv) {
    b1 <- beta + st
    l1 <- ll_at(b1, deriv)
    list(beta = b1, ll = l1, pen = pen(l1, b1))
  }
  # (a trial's penalized log likelihood exactly that of the current point:
  # no.change in gam.fit5's halving, where the rule is there)
  unchanged <- function(tr) rules$no_change && isTRUE(tr$pen == ll0)
  worse <- function(tr) !is.finite(tr$pen) || tr$pen <= ll0
  # (fac_now: fac is the factor of the current Hp)
  fac_now <- FALSE
  for (iter in seq_len(2L * maxit)) {
    fac <- gf_factor(Hp)
    fac_now <- TRUE
    if (converged) break
    step <- drop(fac$solve(grad))
    b_norm <- sqrt(sum(beta^2))
    s_norm <- sqrt(sum(step^2))
    if (b_norm > 0 && s_norm > 0.1 * b_norm) step <- step * 0.1 * b_norm / s_norm
    s_norm <- sqrt(sum(step^2))
    tr <- try_step(step, 1L)
    # halving: the log likelihood alone (deriv 0) until the step succeeds
    halvings <- 0L
    div <- 2
    n_same <- 0L
    while (worse(tr) && halvings < 25L) {
      step <- step / div
      tr <- try_step(step, 0L)
      if (unchanged(tr)) n_same <- n_same + 1L
      if (max(abs(step)) < max(abs(beta)) * .Machine$double.eps || n_same > 1L)
        halvings <- 100L
      halvings <- halvings + 1L
      if (halvings > 5L) div <- 5
    }
    if (!is.finite(tr$pen) || (tr$pen <= ll0 && !conv0)) {
      # steepest ascent, from the Newton step's length down
      step <- grad * s_norm / sqrt(sum(grad^2))
      halvings <- 0L
    }
    n_same <- 0L
    while ((!is.finite(tr$pen) || (tr$pen <= ll0 && !conv0)) && halvings < 25L) {
      step <- step / 10
      tr <- try_step(step, 0L)
      if (unchanged(tr)) n_same <- n_same + 1L
      if (max(abs(step)) < max(abs(beta)) * .Machine$double.eps || n_same > 1L)
        halvings <- 100L
      halvings <- halvings + 1L
    }
    taken <- is.finite(tr$pen) && tr$pen >= ll0 &&
      (halvings < 25L || (rules$indefinite_accept && fac$indefinite))
    if (!taken && !(iter == maxit && is.finite(tr$pen))) {
      # no step raises the penalized log likelihood: at its maximum to
      # rounding where the gradient is within what rounding leaves of it
      # at Hp's condition number (as gam.fit5 judges it: kappa(Hp) times
      # the penalty's scale on a perturbation of beta by eps^0.9, times the
      # machine epsilon, at most 1e-3), or where the start was converged
      # and this is the first step
      db <- beta * rep_len(c(-1, 1), length(beta)) * .Machine$double.eps^0.9
      stiff <- if (any(db != 0)) mean(abs(drop(St %*% db))) / mean(abs(db)) else 0
      err <- min(1e-3, fac$kappa() * max(1, stiff) * .Machine$double.eps)
      converged <- (conv0 && iter == 1L) || max(abs(grad)) / abs(ll0) <= max(err, 2 * eps)
      # (gam.fit5's warning, in its words)
      if (!converged)
        warn <- c(warn, paste("gam.fit5 step failed: max magnitude relative grad =",
                              max(abs(grad)) / abs(ll0)))
      break
    }
    # (the step taken -- or, at the iteration limit, whatever it came to)
    if (is.null(tr$ll$lb)) tr$ll <- ll_at(tr$beta, 1L)
    beta <- tr$beta
    ll <- tr$ll
    grad <- ll$lb - drop(St %*% beta)
    Hp <- -ll$lbb + St
    fac_now <- FALSE
    if (!(small(grad, ll0) || iter == maxit)) {
      ll0 <- tr$pen
      next
    }
    if (!fac$indefinite) {
      converged <- TRUE
      next
    }
    # converged where the Hessian was indefinite (gam.fit5 keeps the
    # penalized log likelihood of the point before this step as the one to
    # beat, except after a perturbation or a drop)
    if (perturbed == 5L)
      gamgpu_abort("gamgpu_numerical", "indefinite penalized likelihood in the Newton iteration",
                   call = NULL)
    if (iter < 4L || rank_checked) {
      # perturbed off the saddle, and on
      perturbed <- perturbed + 1L
      alt <- rep_len(c(0, 1), length(beta))
      beta <- beta * (1 + (alt * 0.02 - 0.01) * perturbed) +
        (alt - 0.5) * mean(abs(beta)) * 1e-5 * perturbed
      ll <- ll_at(beta, 1L)
      ll0 <- pen(ll, beta)
      # (mgcv 1.8-41 steps on from the gradient and Hessian before the
      # perturbation)
      if (rules$perturb_regrad) {
        grad <- ll$lb - drop(St %*% beta)
        Hp <- -ll$lbb + St
      }
    } else {
      # the rank of the likelihood's and the penalty's curvature together
      # (each scaled to unit norm, then to unit diagonal), by pivoted QR;
      # the coefficients past it dropped
      rank_checked <- TRUE
      Sb <- gf_balanced_penalty(P$Sl)
      Hb <- -ll$lbb / norm(ll$lbb, "F")
      if (!is.null(Sb)) Hb <- Hb + Sb[keep, keep, drop = FALSE] / norm(Sb[keep, keep, drop = FALSE], "F")
      d <- abs(diag(Hb))
      d[d < 1e-50] <- 1
      d <- d^-0.5
      Hb <- t(d * Hb) * d
      qrh <- qr(Hb, LAPACK = TRUE)
      rank <- mgcv_fun("Rrank")(qr.R(qrh))
      if (rank == length(beta)) next
      gone <- sort(qrh$pivot[(rank + 1L):length(beta)])
      keep[which(keep)[gone]] <- FALSE
      beta <- beta[-gone]
      St <- St[-gone, -gone, drop = FALSE]
      ll <- ll_at(beta, 1L)
      ll0 <- pen(ll, beta)
      grad <- ll$lb - drop(St %*% beta)
      Hp <- -ll$lbb + St
    }
  }
  if (iter == 2L * maxit && !converged)
    warn <- c(warn, sprintf("gam.fit5 iteration limit reached: max abs grad = %g",
                            max(abs(grad))))
  # (the factor of the final Hp where the loop ran out after a step)
  if (!fac_now) fac <- gf_factor(Hp)
  if (fac$indefinite)
    warn <- c(warn, "the penalized Hessian is indefinite at the fit (a shifted one was used)")
  list(beta = full(beta), keep = keep, ll = ll, St = St, pen_ll = pen(ll, beta), fac = fac,
       Hp = Hp, iter = iter, converged = converged, warn = warn)
}
