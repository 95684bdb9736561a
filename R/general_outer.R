# gamgpu's own fit of a general family (mgcv's gam.fit5() route): the
# Newton iteration on the penalized log likelihood at given smoothing
# parameters (R/general_inner.R), and the outer Newton iteration on the
# Laplace approximate REML score (scale 1) in the log smoothing parameters
# -- the algorithm of mgcv's gam.fit5() and newton(), written here on
# p-vectors and p x p matrices.  Where mgcv's versions differ (1.8-41 and
# 1.9-3 here) the route does as the installed one does, found by running
# its own functions (gf_initial_lsp(), gf_fit5_behaviour()).  X lives only in a model session (R/session.R), loaded once
# per fit: every pass over the rows is the family's log likelihood and its
# derivatives there (.Call(gg_ls_session_ll_r, ...)), where mgcv's code
# re-parameterizes and multiplies the n x p X on every call.
#
# The coefficients are those of mgcv's initial re-parameterization
# (Sl.initial.repara(): X_r = X T, block by block), in which mgcv works and
# its Sl penalties and log determinants (ldetS()) are written; the session
# holds the original X, so its ll() is given T beta_r and its results are
# mapped back (lb_r = T' lb, lbb_r = T' lbb T, ...).  mgcv's further
# re-parameterization at each set of smoothing parameters (Sl.repara(), for
# stability of log|S|) is not applied to X or beta here; ldetS() gives the
# log determinant stably on its own.
#
# The route gam_gpu() takes for a general family wherever it takes the
# call (general_native_refusal()): the location-scale families whose rows
# gamgpu's C has (ls_rows_spec()) with third and fourth derivatives, and
# cox.ph(), by REML (gam()'s for every method but "NCV");
# options(gamgpu.general_route = "gam") selects gam()'s own iteration
# around gamgpu's ll() (R/general_family.R), which fits every other call.
# Not yet done: mvn(), twlss() (gam()'s BFGS and extended Fellner-Schall
# iterations).  The model's set-up:
# R/general_setup.R (at many rows X is built from its recipe where the fit
# runs, never formed in R; the family's initialize() takes a subsample of
# its rows, gf_start()).  The fitted object: R/general_finish.R.

# Whether the native route is wanted: options(gamgpu.general_route =
# "native") (the default, as NULL) or "gam" (gam()'s own iteration); any
# other value is an error.
general_native_wanted <- function() {
  o <- getOption("gamgpu.general_route", "native")
  if (!is.character(o) || length(o) != 1L || !(o %in% c("native", "gam")))
    gamgpu_abort("gamgpu_bad_input",
                 sprintf("option gamgpu.general_route must be \"native\" or \"gam\", not %s",
                         paste(format(o), collapse = " ")), call = NULL)
  o == "native"
}

# What general_native_fit() returns where it does not take the fit after
# all: why, for fit$device$route_reason of gam()'s iteration, which fits it.
gf_declined <- function(why) structure(list(why = why), class = "gamgpu_gf_declined")

# The problem of a fit: from gam()'s setup G (gam(..., fit = FALSE)) and
# rows(coef, deriv, d1b, d2b, Hi), the family's log likelihood on the
# model session in the original basis (gf_ls_rows(), gf_cox_rows()).
# Holds T (X_r = X T), the penalties in the re-parameterized basis at full
# size (Sr, unscaled), mgcv's Sl, Mp, and ll(), the log likelihood at
# beta_r mapped to that basis.
gf_problem <- function(G, rows, ses) {
  p <- ncol(G$X)
  lpi <- attr(G$X, "lpi")
  jj <- if (is.null(lpi)) list(seq_len(p)) else lapply(lpi, as.integer)
  Sl <- mgcv_fun("Sl.setup")(G)
  Tm <- mgcv_fun("Sl.initial.repara")(Sl, diag(p), inverse = FALSE, both.sides = FALSE)
  Sr <- lapply(embed_penalties(G$S, G$off, p), function(S) crossprod(Tm, S %*% Tm))
  Ssp <- mgcv_fun("totalPenaltySpace")(G$S, G$H, G$off, p)
  H0 <- if (is.null(G$H)) matrix(0, p, p) else crossprod(Tm, G$H %*% Tm)
  P <- new.env(parent = emptyenv())
  P$p <- p
  P$n <- G$n
  P$jj <- jj
  P$lpi <- lpi
  P$Sl <- Sl
  P$Tm <- Tm
  P$Sr <- Sr
  P$H0 <- H0
  P$Mp <- ncol(Ssp$Z)
  P$Eb <- Ssp$E
  P$ses <- ses
  # (the ll() calls and their seconds, by derivative level)
  P$calls <- c("0" = 0L, "1" = 0L, "3" = 0L, "4" = 0L)
  P$seconds <- c("0" = 0, "1" = 0, "3" = 0, "4" = 0)
  # the family's log likelihood l at beta (re-parameterized basis), with
  # lb, lbb (deriv >= 1), d1H (deriv 3: d lbb / d rho_k given d1b, a
  # list), trHid2H (deriv 4: tr(Hi d2 lbb / d rho_j d rho_k) given d2b and
  # Hi, the inverse penalized Hessian), all in that basis
  tmul <- gf_block_multiply(Tm, lapply(Sl, function(b) b$start:b$stop))
  P$ll <- function(beta, deriv, d1b = NULL, d2b = NULL, Hi = NULL) {
    t0 <- proc.time()[["elapsed"]]
    o <- rows(drop(tmul(beta)), deriv, if (deriv >= 3) ls_dmat(tmul(d1b)),
              if (deriv >= 4) ls_dmat(tmul(d2b)), if (deriv >= 4) ls_dmat(tmul(t(tmul(Hi)))))
    k <- as.character(deriv)
    P$calls[k] <- P$calls[k] + 1L
    P$seconds[k] <- P$seconds[k] + (proc.time()[["elapsed"]] - t0)
    out <- list(l = o$l)
    if (deriv >= 1) {
      out$lb <- drop(tmul(o$lb, TRUE))
      out$lbb <- tmul(t(tmul(o$lbb, TRUE)), TRUE)
    }
    if (deriv == 3)
      out$d1H <- lapply(seq_len(dim(o$d1H)[3L]), function(i)
        tmul(t(tmul(o$d1H[, , i], TRUE)), TRUE))
    if (deriv >= 4) out$trHid2H <- o$trHid2H
    out
  }
  P
}

# A location-scale family's rows on the session (R/family_ls_rows.R's C,
# spec its ls_rows_spec()): rows() of gf_problem().
gf_ls_rows <- function(G, spec, ses) {
  jj <- lapply(attr(G$X, "lpi"), as.integer)
  offsets <- ls_offsets(G$offset, length(jj), G$n)
  function(coef, deriv, d1b, d2b, Hi)
    .Call(gg_ls_session_ll_r, ses$ptr, as.double(coef), jj, spec$code,
          as.integer(spec$links), as.double(spec$link_par), offsets, as.integer(deriv),
          spec$i2, spec$i3, spec$i4, d1b, d2b, Hi)
}

# cox.ph()'s rows on the session (src/family/family_cox.c; G
# preinitialized: y the times, or cbind(time, stratum), in decreasing
# order of time within strata, G$w the event indicators): rows() of
# gf_problem(); g: cox_groups() of G$y.  (mgcv's deriv 0, 1, 3, 4 are the
# C's levels -1, 0, 2, 3, as cox_ll() maps them.)
gf_cox_rows <- function(G, ses, g) {
  event <- as.integer(G$w)
  off <- if (length(G$offset) && any(G$offset != 0)) as.double(rep_len(G$offset, G$n))
  function(coef, deriv, d1b, d2b, Hi) {
    level <- c(-1L, 0L, NA, 2L, 3L)[deriv + 1L]
    .Call(gg_cox_session_ll_r, ses$ptr, as.double(coef), off, g$grp, event, g$nt, g$gstr,
          level, d1b, d2b, Hi)
  }
}

# T v (or T' v, transpose) for T = Tm, p x p, and v a p-vector or a
# matrix of p rows: by T's diagonal blocks where T is the identity outside
# the blocks (index sets) given -- Sl.initial.repara()'s, one per smooth:
# O(p^2 k) for p x p v in place of O(p^3) -- else by the whole of T.
gf_block_multiply <- function(Tm, blocks) {
  p <- ncol(Tm)
  inside <- sort(unique(unlist(blocks)))
  pattern <- diag(p)
  for (b in blocks) pattern[b, b] <- 1
  by_blocks <- length(blocks) > 0L && all(Tm[pattern == 0] == 0) &&
    all(Tm[cbind(setdiff(seq_len(p), inside), setdiff(seq_len(p), inside))] == 1)
  if (!by_blocks)
    return(function(v, transpose = FALSE) if (transpose) crossprod(Tm, v) else Tm %*% v)
  Tb <- lapply(blocks, function(b) Tm[b, b, drop = FALSE])
  Tbt <- lapply(Tb, t)
  function(v, transpose = FALSE) {
    v <- as.matrix(v)
    out <- v
    for (i in seq_along(blocks)) {
      b <- blocks[[i]]
      out[b, ] <- (if (transpose) Tbt[[i]] else Tb[[i]]) %*% v[b, , drop = FALSE]
    }
    out
  }
}

# The total penalty at log smoothing parameters lsp (re-parameterized
# basis), with G$H's fixed penalty.
gf_total_penalty <- function(P, lsp) {
  St <- P$H0
  for (k in seq_along(lsp)) St <- St + exp(lsp[k]) * P$Sr[[k]]
  St
}

# The REML score at log smoothing parameters lsp (all of them, mgcv's
# order), with its gradient and Hessian in lsp where deriv (gam.fit5's
# REML, REML1, REML2, scale 1): from the inner fit started at beta.
#   V = -(l - b'St b/2 + log|St|+/2 - log|Hp|/2 + Mp log(2 pi)/2)
# with d beta / d rho_k = -Hp^-1 lambda_k S_k beta, the Hessian's
# derivatives dHp_k = -d lbb / d rho_k + lambda_k S_k from ll() (deriv 3),
# the second derivatives of beta, and tr(Hp^-1 d2 lbb) from ll() (deriv 4).
# On the coefficients the inner fit kept (f$keep); ll() is given the
# dropped ones' derivatives as 0, and d1b (p x M) comes back with 0 rows.
# keep: gf_inner()'s.
gf_score <- function(P, lsp, beta, deriv, control, keep = NULL, fallback = NULL) {
  M <- length(lsp)
  p <- P$p
  lam <- exp(lsp)
  f <- gf_inner(P, gf_total_penalty(P, lsp), beta, control$epsilon, control$maxit, keep,
                fallback)
  keep <- f$keep
  idx <- which(keep)
  q <- length(idx)
  b <- f$beta[idx]
  St <- f$St
  fac <- f$fac
  ll <- f$ll
  ldS <- if (M) mgcv_fun("ldetS")(P$Sl, rho = lsp, fixed = rep(FALSE, M), np = p,
                                  root = FALSE, repara = TRUE, deriv = if (deriv) 2 else 0)
         else list(ldetS = 0, ldet1 = numeric(0), ldet2 = matrix(0, 0, 0))
  bSb <- sum(b * drop(St %*% b))
  score <- -(ll$l - bSb / 2 + ldS$ldetS / 2 - fac$ldet / 2 + P$Mp * log(2 * pi) / 2)
  out <- list(score = score, beta = f$beta, keep = keep, ll = ll, St = St, fac = fac,
              lsp = lsp, ldet1 = ldS$ldet1, inner_iter = f$iter,
              inner_converged = f$converged, warn = f$warn)
  if (!deriv || M == 0L) return(out)
  to_full <- function(A) { F <- matrix(0, p, ncol(A)); F[idx, ] <- A; F }
  Sk <- lapply(P$Sr, function(S) S[idx, idx, drop = FALSE])
  Hi <- fac$solve(diag(q))
  Hi <- (Hi + t(Hi)) / 2
  Sb <- vapply(seq_len(M), function(k) lam[k] * drop(Sk[[k]] %*% b), numeric(q))
  dim(Sb) <- c(q, M)
  d1b <- -Hi %*% Sb
  l3 <- P$ll(f$beta, 3L, d1b = to_full(d1b))
  d1H <- lapply(l3$d1H, function(A) A[idx, idx, drop = FALSE])
  dHp <- lapply(seq_len(M), function(k) -d1H[[k]] + lam[k] * Sk[[k]])
  HdH <- lapply(dHp, function(A) Hi %*% A)
  pairs <- which(upper.tri(diag(M), diag = TRUE), arr.ind = TRUE)
  pairs <- pairs[order(pairs[, 1L], pairs[, 2L]), , drop = FALSE]  # (i <= j, i outer)
  d2b <- matrix(0, q, nrow(pairs))
  for (r in seq_len(nrow(pairs))) {
    i <- pairs[r, 1L]
    j <- pairs[r, 2L]
    v <- -d1H[[i]] %*% d1b[, j] + lam[i] * (Sk[[i]] %*% d1b[, j]) +
      lam[j] * (Sk[[j]] %*% d1b[, i])
    d2b[, r] <- -Hi %*% v + if (i == j) d1b[, i] else 0
  }
  Hi_full <- matrix(0, p, p)
  Hi_full[idx, idx] <- Hi
  l4 <- P$ll(f$beta, 4L, d1b = to_full(d1b), d2b = to_full(d2b), Hi = Hi_full)
  trHS <- vapply(seq_len(M), function(k) lam[k] * sum(Hi * Sk[[k]]), 0)
  d1ldetH <- vapply(HdH, function(A) sum(diag(A)), 0)
  d1bSb <- colSums(b * Sb)
  grad <- -(-d1bSb / 2 + ldS$ldet1 / 2 - d1ldetH / 2)
  d2l <- crossprod(d1b, ll$lbb %*% d1b)
  d2ldetH <- matrix(0, M, M)
  d2bSb <- matrix(0, M, M)
  StD <- St %*% d1b
  for (r in seq_len(nrow(pairs))) {
    i <- pairs[r, 1L]
    j <- pairs[r, 2L]
    v <- -sum(HdH[[i]] * t(HdH[[j]])) - l4$trHid2H[r] + if (i == j) trHS[i] else 0
    d2ldetH[i, j] <- d2ldetH[j, i] <- v
    w <- 2 * (sum(d1b[, i] * Sb[, j]) + sum(d1b[, j] * Sb[, i]) + sum(d1b[, j] * StD[, i])) +
      if (i == j) d1bSb[i] else 0
    d2bSb[i, j] <- d2bSb[j, i] <- w
  }
  hess <- -((d2l - d2bSb / 2) + ldS$ldet2 / 2 - d2ldetH / 2)
  out$grad <- grad
  out$hess <- hess
  out$d1b <- to_full(d1b)
  out$d1H <- d1H
  out
}

# The rows the family's initialize() starts from: all of them up to
# 2 gf_start_rows rows, else gf_start_rows evenly spaced ones (the start
# only sets the iteration's path: its optimum is the same).
gf_start_rows <- 10000L
gf_start_subset <- function(n) {
  if (n <= 2L * gf_start_rows) return(NULL)
  unique(as.integer(round(seq(1, n, length.out = gf_start_rows))))
}

# gam.fit5's starting coefficients: the family's initialize() (start NULL)
# on X_r's rows of gf_start_subset() -- an R matrix of at most
# 2 gf_start_rows rows, made once and kept in P$Xr until the outer
# iteration starts -- with E, a root of the penalty (use_unscaled: least
# squares with E's rows appended, E scaled to the rows taken, so that the
# penalty weighs as on all rows).
gf_start <- function(P, G, family, E, use_unscaled) {
  env <- new.env(parent = environment(family$ll))
  n <- P$n
  rows <- gf_start_subset(n)
  if (is.null(P$Xr)) {
    P$Xr <- if (is.null(rows)) P$ses$op("mul", P$Tm + 0, FALSE) else
      (if (is.null(P$x_rows)) G$X[rows, , drop = FALSE] else P$x_rows(rows)) %*% P$Tm
    attr(P$Xr, "lpi") <- attr(G$X, "lpi")
  }
  sub <- function(v) if (is.null(rows) || NROW(v) != n) v else
    if (is.matrix(v)) v[rows, , drop = FALSE] else v[rows]
  env$x <- P$Xr
  env$y <- sub(G$y)
  env$nobs <- NROW(env$y)
  env$weights <- sub(G$w)
  env$offset <- if (is.list(G$offset)) lapply(G$offset, sub) else sub(G$offset)
  env$family <- family
  env$start <- NULL
  env$mustart <- env$etastart <- NULL
  if (!is.null(rows)) E <- E * sqrt(length(rows) / n)
  if (use_unscaled) attr(E, "use.unscaled") <- TRUE
  env$E <- E
  eval(family$initialize, env)
  as.numeric(env$start)
}

# initial.spg()'s starting smoothing parameters for a general family,
# from lbb at the start: the installed mgcv's own initial.spg(), handed a
# stand-in general family whose initialize() starts at 0 and whose ll()
# gives lbb -- all initial.spg() takes from a general family is that lbb
# (mgcv 1.8: for each penalty, the power of 5 at which a ratio of
# curvatures falls through 0.4; mgcv 1.9: 0.3 max|lbb| / max|S| on the
# penalty's range space), so the rule is whichever the installed mgcv
# has, on no pass over the rows.  S, off, rank: G's penalties (original
# basis, as gam() hands them to initial.spg(), with lbb in the
# re-parameterized one); L, lsp0: G's (NULL: none).  Returns the free
# log smoothing parameters (initial.spg()'s least squares fit of L rho +
# lsp0 to the log lambdas where L is given).
gf_initial_lsp <- function(lbb, S, off, rank, L = NULL, lsp0 = NULL) {
  p <- ncol(lbb)
  stand_in <- structure(list(
    family = "gamgpu_initial_sp",
    initialize = expression(start <- rep(0, ncol(x))),
    ll = function(y, X, coef, wt, family, offset = NULL, deriv = 0, ...) list(lbb = lbb)),
    class = c("general.family", "extended.family", "family"))
  lam <- mgcv_fun("initial.spg")(matrix(0, 1L, p), 0, 1, stand_in, S, rank, off,
                                 L = L, lsp0 = lsp0)
  log(as.numeric(lam))
}

# The outer iteration: Newton on the free log smoothing parameters rho
# (lsp = L rho + lsp0) by mgcv_newton() (R/newton.R, mgcv's newton()),
# each evaluation's inner fit started from the last accepted one's
# coefficients, the coefficients it dropped staying dropped (where gam()
# starts each evaluation from all of them, its drops coming and going with
# the rounding of a nearly singular Hessian: the score then jumps between
# evaluations).  b_sp: the coefficients initial.spg() starts its
# smoothing parameters from (gf_start() with G's penalty root Eb).
# Returns mgcv_newton()'s result (theta the free rho) with lsp and the last
# accepted evaluation's fields (gf_score()).
gf_outer <- function(P, G, family, control, conv.tol, b_sp) {
  M <- length(G$S)
  L <- if (is.null(G$L)) diag(M) else G$L
  lsp0 <- if (is.null(G$lsp0)) rep(0, M) else G$lsp0
  # starting coefficients for initial.spg()'s curvature, then its
  # smoothing parameters, then gam.fit5's own start at them
  nfree <- ncol(L)
  theta0 <- if (nfree) gf_initial_lsp(P$ll(b_sp, 1L)$lbb, G$S, G$off, G$rank, G$L, G$lsp0) else
    numeric(0)
  lsp_start <- drop(L %*% theta0) + lsp0
  St0 <- gf_total_penalty(P, lsp_start)
  ev <- eigen(St0, symmetric = TRUE)
  keep <- ev$values > max(ev$values, 0) * .Machine$double.eps^0.8
  E0 <- sqrt(ev$values[keep]) * t(ev$vectors[, keep, drop = FALSE])
  beta0 <- gf_start(P, G, family, E0, TRUE)
  recent <- list()
  eval_at <- function(theta, deriv, from) {
    lsp <- drop(L %*% theta) + lsp0
    # (the inner fit starts from the last accepted fit's coefficients moved
    # to first order in the log smoothing parameters, d beta / d rho:
    # fewer Newton steps, each a pass over the rows; from the accepted
    # coefficients themselves where that leaves the likelihood's support.
    # newton() evaluates a trial point without derivatives, then again
    # with them where it accepts it: the second fit starts from the first's
    # coefficients, kept for the last few points)
    keep <- from$keep
    start <- if (is.null(from)) beta0 else if (is.null(from$d1b)) from$beta else
      from$beta + drop(from$d1b %*% (lsp - from$lsp))
    for (s in recent) if (identical(theta, s$theta)) {
      start <- s$beta
      keep <- s$keep
    }
    e <- gf_score(P, lsp, start, deriv, control, keep, from$beta)
    recent <<- c(list(list(theta = theta, beta = e$beta, keep = e$keep)),
                 recent)[seq_len(min(length(recent) + 1L, 8L))]
    if (deriv && M) {
      e$g <- drop(crossprod(L, e$grad))
      e$Hs <- crossprod(L, e$hess %*% L)
    }
    e
  }
  if (nfree == 0L) {
    # (every smoothing parameter fixed: the one fit, no outer iteration --
    # gam()'s "no.sps")
    e <- gf_score(P, lsp0, beta0, FALSE, control)
    e$theta <- numeric(0)
    e$no_outer <- TRUE
  } else {
    e <- mgcv_newton(eval_at, theta0, function(e) abs(e$score), conv.tol = conv.tol,
                     maxit = 200L)
  }
  e$L <- L
  e$lsp0 <- lsp0
  e$lsp <- drop(L %*% e$theta) + lsp0
  e
}

# gam_gpu()'s fit of a general family on the native route: the model's
# set-up (gf_setup(), R/general_setup.R: gam()'s, X the n x p matrix or,
# at many rows, its recipe), X loaded once into a model session (on the
# device of dev's plan, or the CPU backend; built there from a recipe), the
# outer iteration (gf_outer()) and gam()'s object (gf_finish(),
# R/general_finish.R) with fit$device (policy: the call's device policy).
# gf_declined(why) where the route does not take the fit after all
# (gamgpu's rows differ from the family's own on the first rows, or a
# device's from the CPU engine's on the check's rows): the caller goes on
# with gam()'s iteration, which says so and, for the rows, takes the
# family's own or the CPU's (a counted fallback).
general_native_fit <- function(gcall, env, family, name, spec, dev, control, ctrl, t0,
                               policy) {
  plan <- if (is.null(dev)) list(mode = 0L, ordinal = 0L) else dev$plan
  S <- gf_setup(gcall, env, plan, control$nthreads)
  G <- S$G
  t_model <- proc.time()[["elapsed"]]
  cox <- name == "cox.ph"
  # the fitted object's family: gam()'s, with the family's own ll()
  fam_out <- G$family
  fam_out$ll <- family$ll
  if (!is.null(family$hazard)) fam_out$hazard <- family$hazard
  p <- ncol(G$X)
  jj <- attr(G$X, "lpi")
  # (X's recipe built where the fit runs: on the device by the session;
  # for a CPU fit on the host by gamgpu's C, handed over as the matrix the
  # host's ll()s read)
  X <- if (!is.matrix(S$X) && plan$mode == 0L) .Call(gg_xplan_build_r, S$X) else S$X
  ses <- model_session(X, if (cox) as.double(G$w) else ls_response(spec, G$y, length(jj)),
                       if (plan$mode == 2L) NULL else rep(1, G$n), NULL, plan, control,
                       unit_weights = TRUE)
  rm(X)
  on.exit(ses$close(), add = TRUE)
  t_session <- proc.time()[["elapsed"]]
  groups <- if (cox) cox_groups(G$y)
  P <- gf_problem(G, if (cox) gf_cox_rows(G, ses, groups) else gf_ls_rows(G, spec, ses), ses)
  # (X's rows the family's initialize() and the checks below take: the
  # matrix's, or built from the recipe on those rows)
  P$x_rows <- function(rows) gf_x_rows(S, rows)
  # (initial.spg()'s starting coefficients; gamgpu's location-scale rows
  # against the family's own on the first rows there, as ls_ll() checks
  # them; cox.ph()'s rows on a device against the CPU engine's, as
  # cox_ll() checks them -- the CPU engine's are checked against mgcv's in
  # their tests)
  b_sp <- gf_start(P, G, fam_out, P$Eb, FALSE)
  if (cox && plan$mode != 0L && identical(ses$info()$backend, "cuda")) {
    rows <- cox_check_rows(G$n, groups$grp, groups$gstr)
    why <- cox_device_agrees(dev, P$x_rows(rows), drop(P$Tm %*% b_sp), G$offset, groups$grp,
                             as.integer(G$w), groups$gstr, rows)
    if (!is.null(why))
      return(gf_declined(sprintf(paste("gamgpu's cox.ph() rows on the device %s on the",
                                       "check's rows"),
                                 why)))
  }
  if (!cox) {
    chk <- new.env(parent = emptyenv())
    chk$own <- general_family_with_ll(family, name, NULL, NULL)$ll
    chk$spec <- spec
    if (!ls_rows_agree(chk, G$y, P$x_rows(seq_len(min(G$n, 100L))), drop(P$Tm %*% b_sp), G$w,
                       family, G$offset))
      return(gf_declined(sprintf(paste("gamgpu's %s() rows differed from the family's own on",
                                       "the first rows (another mgcv release?)"), name)))
  }
  t1 <- proc.time()[["elapsed"]]
  e <- gf_outer(P, G, fam_out, ctrl, ctrl$newton$conv.tol, b_sp)
  P$Xr <- NULL
  t2 <- proc.time()[["elapsed"]]
  # (a family whose postproc reads X is given X from the session, where the
  # recipe built it; cox.ph()'s runs in gamgpu's C, cox_postproc(), which
  # takes it from the session itself)
  if (!cox && !is.matrix(S$X) && "X" %in% all.names(fam_out$postproc)) {
    X <- ses$op("mul", diag(p), FALSE)
    dimnames(X) <- dimnames(G$X)
    attr(X, "lpi") <- attr(G$X, "lpi")
    G$X <- X
    rm(X)
  }
  # (by REML, as gam() fits a general family whatever method it is given
  # but "NCV": general_native_refusal())
  object <- gf_finish(e, P, G, ses, fam_out, ctrl)
  info <- ses$info()
  t3 <- proc.time()[["elapsed"]]
  backend <- if (identical(info$backend, "cuda") && !nzchar(info$fallback)) "cuda" else "cpu"
  # (fit$device as gam()'s iteration reports it, R/general_family.R, where
  # a field means the same; the session's fallback is counted where it
  # left the device, R/session.R)
  object$device <- list(
    backend = backend,
    reason = device_reason(policy, backend, if (nzchar(info$fallback)) info$fallback else
      "the model session ran on the CPU"),
    # (where the session held X for the whole fit: on the device, resident
    # or built there; on the host, as a matrix or sparse rows)
    placement = if (backend == "cuda")
      paste(c(setdiff(info$placement, "host"), "one model session for the fit"),
            collapse = "; ") else info$placement,
    # "recipe": X built by the model session from its recipe (on the
    # device for a GPU fit); "matrix": gam()'s setup built it in R, and
    # model_matrix_reason says why
    model_matrix = S$source,
    model_matrix_reason = S$reason,
    route = sprintf(paste("general family, gamgpu's native route: gamgpu's Newton iteration",
                          "(gam.fit5's algorithm) and outer REML iteration (newton()'s) on p x p",
                          "quantities, %s()'s rows' log likelihood and derivatives on a model",
                          "session's X"), name),
    ll_rows = "gamgpu",
    ll_calls = sum(P$calls),
    # (mgcv's gamlss.gH() is not called on this route)
    ll_delegated = 0L,
    ll_seconds = sum(P$seconds),
    # (by derivative level: 0 the halvings' trials, 1 Newton's steps, 3 and
    # 4 the REML derivatives)
    ll_calls_by_deriv = P$calls,
    ll_seconds_by_deriv = P$seconds,
    # X's loads into a model session (one a fit here) and the session's
    # seconds in copies and in the rows' work
    ll_sessions = 1L,
    ll_session_seconds = c(transfer = info$t_transfer, rows = info$t_rows),
    inner_converged = e$inner_converged,
    # setup: gam_gpu()'s checks, the model's set-up, the session's load
    # (X built or copied there), the problem's p x p set-up, the starting
    # coefficients and the first rows' checks -- split in setup_split;
    # iterations: the Newton and outer iterations; postproc: gam()'s object
    timings = c(setup = t1 - t0, selection = 0, iterations = t2 - t1, postproc = t3 - t2),
    setup_split = c(model = t_model - t0, session = t_session - t_model,
                    start = t1 - t_session),
    # (cox.ph()'s Gram products on the CPU go through gg_cpu_gram(), as on
    # gam()'s iteration)
    cpu_gram = if (cox && backend == "cpu") cpu_gram_note(p))
  object$call <- gcall
  class(object) <- c("gam_gpu", class(object))
  # (gam()'s warnings: the outer iteration short of convergence, the inner
  # fit's at the optimum)
  if (!isTRUE(e$no_outer) && !isTRUE(e$converged))
    gamgpu_warn("gamgpu_not_converged",
                if (identical(e$conv, "step failed"))
                  "REML Newton iteration terminated with step failure - check results carefully"
                else "REML Newton iteration reached its limit of 200 iterations", call = NULL)
  for (w in e$warn) gamgpu_warn("gamgpu_not_converged", w, call = NULL)
  object
}

# Why the native route does not take gam_gpu()'s call (cl, evaluated in
# env) for this family, NULL where it does: cox.ph() or a family whose rows
# gamgpu's C has (spec), with third and fourth derivatives (gam() fits
# twlss(), which has none, by its extended Fellner-Schall iteration
# instead), any method but "NCV" (gam()'s REML), gam()'s default
# optimizer, gamma 1, no in.out, no setup object G, fit not FALSE, and
# REML among the family's methods where it names some (estimate.gam() of
# mgcv 1.9 fits by the family's first otherwise).  (Under mgcv 1.8-41 and 1.9-3 alike: where gam()'s fit
# of these families changed between them -- initial.spg()'s starting
# smoothing parameters, gam.fit5()'s Newton iteration, its Vg field -- the
# route follows the installed mgcv, found by what its functions do:
# gf_initial_lsp(), gf_fit5_behaviour().)  The reason is
# fit$device$route_reason of gam()'s iteration, which fits the call.
general_native_refusal <- function(family, spec, method, cl, env, dots) {
  name <- general_family_name(family)
  derivs <- family$available.derivs
  not <- function(what) sprintf("the native route does not take %s yet", what)
  if (is.null(spec) && !identical(name, "cox.ph"))
    return(not(if (identical(name, "mvn")) "mvn()" else
      sprintf("%s() with these links (gamgpu's C has not its rows)", name)))
  if (!is.null(derivs) && derivs != 2)
    return(sprintf(paste("%s() has no third and fourth derivatives: gam() fits it by its",
                         "extended Fellner-Schall iteration"), name))
  # (gam() fits a general family by REML for every method but "NCV",
  # estimate.gam(): so does the native route)
  if (!method %in% c("REML", "ML", "P-REML", "P-ML", "GCV.Cp", "GACV.Cp"))
    return(not(sprintf("method \"%s\"", method)))
  if (!is.null(family$method) && !"REML" %in% family$method)
    return(sprintf("%s() does not list REML among its methods", name))
  if (!is.null(dots$G)) return(not("a setup object G"))
  if (isFALSE(eval(cl$fit, env))) return("fit = FALSE: gam()'s set-up is returned")
  if (!is.null(cl$optimizer)) return(not("an optimizer"))
  if (!is.null(cl$in.out)) return(not("in.out"))
  if (!is.null(cl$gamma) && !identical(as.numeric(eval(cl$gamma, env)), 1))
    return(not("gamma other than 1"))
  NULL
}
