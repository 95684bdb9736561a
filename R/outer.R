# gam()'s "outer" smoothing parameter selection beyond the additive model
# (issue 14): method = "REML" and "ML" (the Laplace approximate restricted
# or full marginal likelihood), "P-REML" and "P-ML" (the same with the
# Pearson scale), "GCV.Cp" and "GACV.Cp" (GCV or GACV with an estimated
# scale, UBRE with a known one) for generalized additive models with an
# exponential family, optimized as mgcv's gam.fit3() and newton() do it --
# Newton's method on the log smoothing parameters (and log scale, for REML
# and ML when it is estimated) around a fully converged penalized IRLS, the
# criterion's gradient and Hessian by implicit differentiation of the
# coefficients.
#
# With W the Newton weights (Fisher's for a canonical link), H = X'WX +
# S_lambda, D the deviance, Dp = D + beta' S_lambda beta and phi the scale:
#   REML = (Dp / (2 phi) - ls(phi)) / gamma + log|H| / 2 - log|S_lambda|+ / 2
#          - remlInd Mp / 2 (log(2 pi phi) - log gamma)
# (for "ML" remlInd = 0 and log|H| is that of H on the penalized space,
# log|H| + log|N'H^-1 N| for the null space basis N);
# ("P-REML", "P-ML": phi = P / (n - Mp) and no gamma, as gam.fit3 has them,
# P = sum w (y - mu)^2 / V(mu) the Pearson statistic);
#   GCV = n D / (n - gamma tr A)^2,  UBRE = D / n - phi + 2 gamma phi tr A / n,
#   GACV = D / n + 2 gamma P tr A / (n (n - gamma tr A))
# with tr A = tr((X'W_F X + S_lambda)^-1 X'W_F X), Fisher's weights W_F as
# gam.fit3 has them.  For rho_k = log lambda_k: d beta_k = -H^-1 lambda_k
# S_k beta, d eta_k = X d beta_k, dH_k = X' diag(w' eta_k) X + lambda_k S_k
# (w' = dW/d eta), and the second derivatives by differentiating once more.
# The O(n) work -- the penalized IRLS steps' rows and X'WX, X'Wz, the
# working weights' derivatives in eta, one X' diag(w' eta_k) X per
# smoothing parameter, products of X with p-vectors and of X' with
# n-vectors, leverages -- runs in C in a model session (src/r/session_r.c,
# src/engine/outer_rows.c) that holds X, on the device for a GPU fit; only p-sized
# results come back to R, where everything else is p x p.  The fit at the
# chosen smoothing
# parameters is then the engine's, and gam()'s covariance matrices, EDFs
# and Vc come from mgcv's own gam.fit3.post.proc() on the outer fit's
# quantities.

# The family with gam.fit3()'s derivatives of link and variance.
outer_family <- function(family) {
  fam <- mgcv::fix.family.ls(mgcv::fix.family.var(mgcv::fix.family.link(family)))
  fam$fisher <- identical(fam$link, fam$canonical)
  fam
}

# The problem: the response, weights, offset, the family, the criterion,
# and outer_session()'s penalties and model session, which does every
# O(n p) step: the penalized IRLS rows and their Gram products (eval;
# newton_gram for Newton's step), weighted Gram products (gram), leverages
# (lev), and gam.fit3's rows with the criterion's derivative products
# (rows, derivs: in C, only p-sized results returned).
# What every outer problem has (R/outer.R, R/outer_efam.R): the penalties
# at full size, mgcv's square roots of them on the total penalty's range
# (for log|S|+), its null space (Mp columns), and the fit's model session
# (model_session(): X loaded once, the device's memory for a GPU fit) with
# its weighted Gram products (gram, with weights of any sign), leverages
# (lev), X B and X' V products (xb, xt), get.null.coef()'s coefficients for
# the link of mean(y) eta_m (null_coef), the count of Gram products
# (env$grams, count()); close() records where the session ran (and closes
# it where the problem owns it: own = TRUE).
outer_session <- function(G, ms, S, own = FALSE) {
  p <- ms$p
  n <- ms$n
  rS <- mgcv_fun("mini.roots")(G$S, G$off, p, G$rank)
  Ssp <- mgcv_fun("totalPenaltySpace")(G$S, G$H, G$off, p)
  # gam()'s fixed penalty G$H (min.sp, H): in every penalty sum, and the
  # last of gam.reparam()'s roots, at no smoothing parameter of its own
  UrS <- lapply(rS, function(r) crossprod(Ssp$Y, r))
  if (!is.null(G$H)) UrS <- c(UrS, list(crossprod(Ssp$Y, mgcv_fun("mroot")(G$H))))
  ses <- ms$ptr
  # (a session's operations on its pointer, or a cluster's on its nodes)
  op <- if (is.null(ms$op)) function(name, ...) session_call(name, ses, ...) else ms$op
  env <- new.env()
  env$grams <- 0L
  # (the constant row vectors; on a cluster their value alone travels, and
  # a leader of shards never makes an n-vector: constant_rows())
  const <- function(value) if (isTRUE(ms$rows_on_nodes)) constant_rows(value) else rep(value, n)
  num <- function(v) if (inherits(v, "gamgpu_constant_rows")) v else as.double(v)
  zero <- const(0)
  one <- const(1)
  count <- function(k = 1L) env$grams <- env$grams + k
  gram <- function(v, z = zero) {
    count()
    op("gram", num(v), num(z))
  }
  list(ses = ses, op = op, env = env, count = count, n = n, p = p,
       S = embed_penalties(S, G$off, p), UrS = UrS,
       H = if (is.null(G$H)) matrix(0, p, p) else G$H + 0,
       N = Ssp$Z, Mp = ncol(Ssp$Z), gram = gram,
       lev = function(M, v = one) op("leverage", num(v), M),
       xb = function(B) op("mul", as.matrix(B) + 0, FALSE),
       xt = function(V) op("mul", as.matrix(V) + 0, TRUE),
       null_coef = function(eta_m) outer_null_coef(gram(one, const(eta_m))),
       close = function() {
         if (isTRUE(env$closed)) return(invisible())
         env$closed <- TRUE
         info <- ms$info()
         env$device <- info$device
         env$seconds <- c(transfer = info$t_transfer, rows = info$t_rows, build = info$t_build)
         env$rows <- info$rows
         if (nzchar(info$fallback)) env$fallback <- info$fallback
         if (own) ms$close()
       })
}

outer_problem <- function(G, ms, y, w, offset, family, S, method, gamma, scale,
                          trials = NULL, own = FALSE, shards = NULL) {
  B <- outer_session(G, ms, S, own)
  ses <- B$ses
  env <- B$env
  count <- B$count
  n <- B$n
  fam <- outer_family(family)
  # the engine's name of the family, and negbin's theta or Tweedie's p
  eng <- engine_family(family)
  # family$ls()'s n: the binomial trials per row (1 without cbind())
  ls_n <- if (is.null(shards)) { if (is.null(trials)) rep(1, n) else trials }
  c(B[c("ses", "n", "p", "S", "UrS", "H", "N", "Mp", "env", "gram", "lev", "close")], list(
       y = y, w = w, off = if (is.null(offset)) 0 else offset,
       # (rows of positive weight: P-REML's and P-ML's scale)
       n_pos = if (is.null(shards)) sum(w > 0) else shards$n_pos,
       sum_w = if (is.null(shards)) sum(w) else shards$sum_w,
       # (rows left on a cluster's nodes: shard_outer_problem(); y and w are
       # then NULL, and the row sums the nodes')
       shards = shards,
       fam = fam,
       ml = method %in% c("ML", "P-ML"), gamma = gamma, scale = scale,
       # (P-REML and P-ML with a known scale are REML and ML, as in gam())
       crit = if (method %in% c("REML", "ML")) method else
         if (method %in% c("P-REML", "P-ML")) (if (scale > 0) sub("P-", "", method) else method)
         else if (scale > 0) "UBRE" else if (method == "GACV.Cp") "GACV" else "GCV",
       # log scale is a parameter of REML and ML when the scale is estimated
       lphi = method %in% c("REML", "ML") && scale <= 0,
       # the penalized IRLS rows at beta (NULL: the family's start) with
       # Fisher's weights: the deviance, and X'WX, X'Wz
       eval = function(beta, gram = TRUE) {
         if (gram) count()
         B$op("eval", if (!is.null(beta)) as.double(beta), eng$name,
               engine_link(fam), gram, eng$theta)
       },
       null_coef = function()
         B$null_coef(fam$linkfun(if (is.null(shards)) mean(y) else shards$mean_y)),
       # gam.fit3's rows at the last eval, kept in the session (C:
       # src/engine/outer_rows.c): Newton's weights and their derivatives in eta
       # (Fisher's too for a link that is not canonical), the deviance's
       # and, with pearson, the Pearson statistic's; returns the Pearson
       # statistic, X'WX with Newton's weights (gram), the vectors (vectors: TRUE,
       # or the names of those wanted)
       rows = function(pearson = FALSE, gram = FALSE, vectors = FALSE) {
         if (gram) count()
         B$op("rows", eng$name, engine_link(fam), pearson, gram, vectors, eng$theta)
       },
       # Newton's penalized IRLS step at the last eval (X'WX, X'Wz), NULL
       # where some Newton weight is not positive
       newton_gram = function() {
         g <- B$op("newton_gram", eng$name, engine_link(fam), eng$theta)
         if (!is.null(g)) count()
         g
       },
       # the criterion's O(n p) derivative products at the rows (see
       # src/engine/outer_rows.h): one X' diag(w' eta_k) X per smoothing parameter
       # (dH), X' of the second derivatives' row terms (RHS), X' dev' (Xd),
       # X' p' (Xp), with leverages h = diag(X Ml X'): X' (h w') (u),
       # eta' diag(h w'') eta (hww), colSums(h w' eta) (hd); eta' diag(w)
       # eta (Dw), eta' diag(p'') eta (Dp2)
       derivs = function(db, Ml, fisher, pe, pearson) {
         count(ncol(db))
         B$op("derivs", db, Ml, as.integer(c(fisher, pe, pearson)))
       },
       ls_n = ls_n, unit_trials = is.null(trials),
       # family$ls() at phi (R/family_ls.R), remembered for the last phi (an
       # O(n) sum that, for a known scale, every evaluation would repeat)
       ls = function(phi) {
         if (!identical(env$ls_phi, phi)) {
           if (is.null(env$lsf))
             env$lsf <- if (is.null(shards)) saturated_ls(fam, y, w, ls_n) else shard_ls(shards, fam)
           env$ls_value <- env$lsf(phi)
           env$ls_phi <- phi
         }
         env$ls_value
       }))
}

# log|H| as REML takes it and the matrix whose leverages and traces give
# its derivatives: H^-1 (Hd: sym_inverse_logdet(H)); for ML (P$ml) on the
# penalized space, log|H| + log|N'H^-1 N| and H^-1 - H^-1 N (N'H^-1 N)^-1
# N'H^-1 for the total penalty's null space N.
outer_ldet <- function(P, Hd) {
  if (!P$ml || P$Mp == 0) return(list(ldet = Hd$ldet, Pm = Hd$inv))
  PN <- Hd$inv %*% P$N
  Nd <- sym_inverse_logdet(crossprod(P$N, PN))
  list(ldet = Hd$ldet + Nd$ldet, Pm = Hd$inv - PN %*% Nd$inv %*% t(PN))
}

# get.null.coef()'s coefficients from X'X and X' eta_m (g: a session's
# Gram product with unit weights and z = the link of mean(y)): the least
# squares fit of the constant eta_m, 0 for a column qr() leaves out.
outer_null_coef <- function(g) {
  b <- qr.coef(qr(g$XtWX), g$XtWz)
  b[is.na(b)] <- 0
  b
}

# Penalized IRLS to full convergence at the penalty Sl, from beta (NULL:
# the family's starting values), with step halving on the penalized
# deviance (gam.fit3's inner loop; Fisher's and Newton's steps reach the
# same optimum).  The rows and their Gram products are the session's.
outer_pirls <- function(P, Sl, beta, maxit, eps) {
  fam <- P$fam
  pen <- function(b) sum(b * drop(Sl %*% b))
  e <- P$eval(beta)
  pdev <- e$dev + if (is.null(beta)) 0 else pen(beta)
  converged <- FALSE
  for (iter in seq_len(maxit)) {
    # (Newton's step, gam.fit3's weights with its alpha, for a link that is
    # not canonical: NULL where some weight is not positive)
    g <- if (!fam$fisher && !is.null(beta)) P$newton_gram()
    if (is.null(g)) g <- e
    R <- tryCatch(chol(g$XtWX + Sl), error = function(e) NULL)
    if (is.null(R))
      gamgpu_abort("gamgpu_numerical",
                   "the penalized IRLS system is not positive definite (the model is not identifiable); use method = \"fREML\"",
                   call = NULL)
    b1 <- backsolve(R, forwardsolve(t(R), drop(g$XtWz)))
    halves <- 0L
    # (the first step halves towards gam.fit3's null coefficients, the
    # least squares fit of the link of mean(y))
    base <- beta
    # (where no halving lowers the penalized deviance -- a rise at rounding
    # level, as when a smoothing parameter of 1e7 or more makes the penalty
    # most of it -- the full step is taken if it rose by no more than
    # gam.fit3's div.thresh, as gam.fit3 takes it)
    div_thresh <- 10 * (0.1 + abs(pdev)) * sqrt(.Machine$double.eps)
    full <- NULL
    repeat {
      # an invalid linear predictor gives a non-finite deviance: halved
      e1 <- tryCatch(P$eval(b1), gamgpu_nonfinite = function(err) NULL)
      pdev1 <- if (is.null(e1)) Inf else e1$dev + pen(b1)
      if (is.finite(pdev1) && (is.null(beta) || pdev1 <= pdev + 1e-12 * abs(pdev))) break
      if (is.null(full)) full <- list(b1 = b1, pdev1 = pdev1)
      if (halves >= 60L && is.finite(full$pdev1) && full$pdev1 - pdev <= div_thresh) {
        b1 <- full$b1
        e1 <- P$eval(b1)
        pdev1 <- full$pdev1
        break
      }
      if (halves >= 60L)
        gamgpu_abort("gamgpu_numerical", "the penalized IRLS step could not be corrected",
                     call = NULL)
      if (is.null(base)) base <- P$null_coef()
      b1 <- (b1 + base) / 2
      halves <- halves + 1L
    }
    # converged when the step is negligible, or the penalized deviance
    # stops changing at rounding level
    small <- !is.null(beta) &&
      (max(abs(b1 - beta)) <= eps * (1 + max(abs(b1))) ||
         abs(pdev1 - pdev) <= 1e-15 * (1 + abs(pdev1)))
    beta <- b1
    e <- e1
    pdev <- pdev1
    if (small) {
      converged <- TRUE
      break
    }
  }
  pb <- pen(beta)
  # (the session's last eval was at beta: its rows are the fit's)
  list(beta = beta, dev = pdev - pb, pen = pb, XtWX = e$XtWX, converged = converged,
       iter = iter)
}

# The criterion at log smoothing parameters lsp (one per penalty) and, with
# an estimated scale (REML, ML), log scale lphi: value, gradient and Hessian
# in (lsp, lphi), with the fit it was evaluated at.  P$crit: "REML", "ML",
# or gam.fit3's prediction-error scores "GCV" (n D / (n - gamma tr A)^2) and
# "UBRE" (D / n - phi + 2 gamma phi tr A / n), D the deviance and tr A =
# tr(H^-1 X'WX) = p - tr(H^-1 S_lambda).
outer_score <- function(P, lsp, lphi, beta, control, deriv = TRUE) {
  M <- length(lsp)
  lam <- exp(lsp)
  p <- P$p
  Sl <- P$H
  for (k in seq_len(M)) Sl <- Sl + lam[k] * P$S[[k]]
  f <- outer_pirls(P, Sl, beta, control$maxit, 1e-11)
  fam <- P$fam
  beta <- f$beta
  gam <- P$gamma
  pe <- P$crit %in% c("GCV", "UBRE", "GACV")
  # (the scores with the Pearson statistic, whose derivatives they take)
  pearson <- P$crit %in% c("P-REML", "P-ML", "GACV")
  # the rows at the fit, in the session: Newton's weights and their
  # derivatives (Newton's X'WX for a link that is not canonical; for a
  # canonical one they are Fisher's, the last penalized IRLS step's)
  # (GCV, UBRE, GACV beyond the additive model: the Pearson statistic and
  # s.bar's sum too, for gam.fit3's scale estimate that newton() scales its
  # tests by)
  fletcher <- pe && !identical(fam$family, "gaussian")
  rw <- P$rows(pearson = pearson || fletcher, gram = !fam$fisher)
  H <- (if (fam$fisher) f$XtWX else rw$XtWX) + Sl
  Hd <- sym_inverse_logdet(H)
  if (is.null(Hd))
    gamgpu_abort("gamgpu_numerical",
                 "X'WX + S is singular at the fit (Newton weights); use method = \"fREML\"",
                 call = NULL)
  Hi <- Hd$inv
  n <- P$n
  out <- list(beta = beta, dev = f$dev, Sl = Sl, Hi = Hi, pirls_iter = f$iter,
              pirls_converged = f$converged)
  if (pe) {
    # gam.fit3's tr A is Fisher's, tr((X'W_F X + S)^-1 X'W_F X), whatever
    # weights the fit's Hessian has
    HiF <- if (fam$fisher) Hi else chol2inv(chol(f$XtWX + Sl))
    HS <- HiF %*% Sl
    trA <- p - sum(diag(HS))
    delta <- n - gam * trA
    phi <- if (P$scale > 0) P$scale else NA
    # GACV's Pearson statistic (gam.fit3's P: the sum, not over n - Mp)
    Pst <- rw$pearson
    V <- switch(P$crit,
                GCV = n * f$dev / delta^2,
                GACV = f$dev / n + 2 * gam * Pst * trA / (n * delta),
                UBRE = f$dev / n - phi + 2 * gam * phi * trA / n)
    # the fit's scale, for newton()'s convergence scale: gam.fit3's
    # scale.est, Fletcher's (whatever the scale; for gaussian data the
    # Pearson statistic is the deviance)
    out$scale.est <- if (fletcher) fletcher_scale(rw$pearson, rw$sbar_sum, n, trA) else
      f$dev / (n - trA)
  } else {
    lm <- outer_ldet(P, Hd)
    ldetH <- lm$ldet
    Pm <- lm$Pm
    rp <- if (length(P$UrS)) mgcv_fun("gam.reparam")(P$UrS, lsp, if (deriv) 2 else 0) else
      list(det = 0, det1 = numeric(0), det2 = matrix(0, 0, 0))
    known <- P$scale > 0
    remlInd <- if (P$ml) 0 else 1
    Dp <- f$dev + f$pen
    if (pearson) {
      # P-REML, P-ML: the scale is the Pearson statistic over n - Mp (n the
      # rows of positive weight, as gam.fit3 counts them), moving with the
      # fit (gam.fit3 leaves gamma out of these scores)
      phi <- rw$pearson / (P$n_pos - P$Mp)
      ls <- P$ls(phi)
      V <- (Dp / (2 * phi) - ls[1]) + ldetH / 2 - rp$det / 2 -
        remlInd * P$Mp / 2 * log(2 * pi * phi)
    } else {
      phi <- if (known) P$scale else exp(lphi)
      ls <- P$ls(phi)
      V <- (Dp / (2 * phi) - ls[1]) / gam + ldetH / 2 - rp$det / 2 -
        remlInd * P$Mp / 2 * (log(2 * pi * phi) - log(gam))
    }
    out$Dp <- Dp
  }
  out$score <- V
  out$phi <- phi
  if (!deriv) return(out)
  # d beta / d rho_k, and in the session d eta / d rho_k = X d beta_k,
  # dH_k = X' diag(w' eta_k) X (+ lambda_k S_k here), the second
  # derivatives' row terms X' (w' eta_j eta_k) and the leverages' sums
  # (with Fisher's weights for GCV, UBRE and GACV's tr A, whose leverages
  # are those of Mm = H_F^-1 S_lambda H_F^-1; REML's of Pm)
  Sb <- vapply(seq_len(M), function(k) lam[k] * drop(P$S[[k]] %*% beta), numeric(p))
  dim(Sb) <- c(p, M)
  db <- -Hi %*% Sb
  if (pe) Mm <- HS %*% HiF                         # H_F^-1 S_lambda H_F^-1
  d <- P$derivs(db, if (pe) Mm else Pm, fisher = pe, pe = pe, pearson = pearson)
  dH <- lapply(seq_len(M), function(k) d$dH[, , k] + lam[k] * P$S[[k]])
  # the second derivatives of beta, pair by pair (columns of B2)
  pairs <- which(upper.tri(diag(M), diag = TRUE), arr.ind = TRUE)
  RHS <- d$RHS
  for (q in seq_len(nrow(pairs))) {
    j <- pairs[q, 1]
    k <- pairs[q, 2]
    RHS[, q] <- RHS[, q] + lam[j] * drop(P$S[[j]] %*% db[, k]) +
      lam[k] * drop(P$S[[k]] %*% db[, j]) + if (j == k) Sb[, k] else 0
  }
  B2 <- -Hi %*% RHS
  sym <- function(v) {
    A <- matrix(0, M, M)
    A[pairs] <- v
    A[pairs[, 2:1, drop = FALSE]] <- v
    A
  }
  if (pe) {
    # the deviance: D_k = dev' eta_k, D_jk = 2 eta_j' W eta_k + dev' eta_jk
    D1 <- drop(crossprod(db, d$Xd))
    D2 <- 2 * d$Dw + sym(drop(crossprod(B2, d$Xd)))
    # tr A = p - t, t = tr(H_F^-1 S_lambda), H_F moving with W_F(eta)
    # (dH is dH_F here)
    Tm <- lapply(dH, function(A) HiF %*% A)
    HSk <- lapply(seq_len(M), function(k) lam[k] * (HiF %*% P$S[[k]]))
    trHSk <- vapply(HSk, function(A) sum(diag(A)), 0)
    t1 <- vapply(seq_len(M), function(k) -sum(Tm[[k]] * t(HS)), 0) + trHSk
    u2 <- d$u
    hw2 <- d$hww
    t2v <- vapply(seq_len(nrow(pairs)), function(q) {
      j <- pairs[q, 1]
      k <- pairs[q, 2]
      v <- sum((Tm[[j]] %*% Tm[[k]]) * t(HS)) + sum((Tm[[k]] %*% Tm[[j]]) * t(HS)) -
        (hw2[j, k] + sum(u2 * B2[, q]) + if (j == k) lam[k] * sum(P$S[[k]] * Mm) else 0) -
        sum(Tm[[k]] * t(HSk[[j]])) - sum(Tm[[j]] * t(HSk[[k]]))
      if (j == k) v <- v + trHSk[k]
      v
    }, 0)
    trA1 <- -t1
    trA2 <- -sym(t2v)
    delta <- n - gam * trA
    if (P$crit == "GACV") {
      # D / n + 2 gamma P f / n, f = tr A / delta: f_k = n trA_k / delta^2,
      # f_jk = n trA_jk / delta^2 + 2 n gamma trA_j trA_k / delta^3
      # (gam.fit3's derivatives leave gamma out of some terms; these are
      # the score's own, and equal to them at gamma = 1)
      P1 <- drop(crossprod(db, d$Xp))
      P2 <- d$Dp2 + sym(drop(crossprod(B2, d$Xp)))
      grad <- D1 / n + 2 * gam * P1 * trA / (n * delta) + 2 * gam * Pst * trA1 / delta^2
      PT <- outer(P1, trA1)
      hess <- D2 / n + 2 * gam * P2 * trA / (n * delta) + 2 * gam * (PT + t(PT)) / delta^2 +
        2 * gam * Pst * trA2 / delta^2 + 4 * gam^2 * Pst * outer(trA1, trA1) / delta^3
    } else if (P$crit == "GCV") {
      grad <- n * D1 / delta^2 + 2 * n * f$dev * trA1 * gam / delta^3
      G2 <- outer(trA1, D1)
      hess <- (G2 + t(G2)) * gam * 2 * n / delta^3 +
        6 * n * f$dev * outer(trA1, trA1) * gam^2 / delta^4 + n * D2 / delta^2 +
        2 * n * f$dev * gam * trA2 / delta^3
    } else {
      grad <- D1 / n + gam * trA1 * 2 * phi / n
      hess <- D2 / n + 2 * gam * trA2 * phi / n
    }
    out$trA <- trA
  } else {
    D1 <- colSums(beta * Sb)
    trPS <- vapply(seq_len(M), function(k) lam[k] * sum(Pm * P$S[[k]]), 0)
    dldet <- d$hd + trPS
    grad <- D1 / (2 * phi * gam) + dldet / 2 - rp$det1 / 2
    Tm <- lapply(dH, function(A) Pm %*% A)
    u <- d$u
    hww <- d$hww
    d2 <- vapply(seq_len(nrow(pairs)), function(q) {
      j <- pairs[q, 1]
      k <- pairs[q, 2]
      v <- hww[j, k] + sum(u * B2[, q]) - sum(Tm[[j]] * t(Tm[[k]]))
      if (j == k) v <- v + trPS[k]
      v
    }, 0)
    D2 <- 2 * crossprod(Sb, db)
    diag(D2) <- diag(D2) + D1
    hess <- D2 / (2 * phi * gam) + sym(d2) / 2 - rp$det2 / 2
    if (pearson) {
      # gam.fit3's P-REML derivatives, with phi_k = p' eta_k / (n - Mp),
      # phi_jk = (eta_j' diag(p'') eta_k + p' eta_jk) / (n - Mp)
      nm <- P$n_pos - P$Mp
      phi1 <- drop(crossprod(db, d$Xp)) / nm
      phi2 <- (d$Dp2 + sym(drop(crossprod(B2, d$Xp)))) / nm
      K1 <- dldet / 2 - rp$det1 / 2
      K2 <- sym(d2) / 2 - rp$det2 / 2
      c1 <- Dp / (2 * phi^2) + P$Mp / (2 * phi) * remlInd + ls[2]
      grad <- D1 / (2 * phi) - phi1 * c1 + K1
      hess <- D2 / (2 * phi) - (outer(D1, phi1) + outer(phi1, D1)) / (2 * phi^2) +
        (Dp / phi^3 - ls[3] + P$Mp / (2 * phi^2) * remlInd) * outer(phi1, phi1) -
        c1 * phi2 + K2
    } else if (!known) {
      dlphi <- (-Dp / (2 * phi) - ls[2] * phi) / gam - remlInd * P$Mp / 2
      d2lphi <- (Dp / (2 * phi) - ls[3] * phi^2 - ls[2] * phi) / gam
      dsp_lphi <- -D1 / (2 * phi * gam)
      grad <- c(grad, dlphi)
      hess <- rbind(cbind(hess, dsp_lphi), c(dsp_lphi, d2lphi))
    }
  }
  out$grad <- grad
  out$hess <- hess
  out$db <- db
  out
}

# The map of the outer iteration's free parameters ([nth theta's], the free
# rho's, [log scale]) to the criterion's ([theta], lsp, [log scale]): L
# between identities.
outer_param_map <- function(L, nth, lphi) {
  nr <- ncol(L)
  J <- matrix(0, nth + nrow(L), nth + nr)
  J[seq_len(nth), seq_len(nth)] <- diag(nth)
  J[nth + seq_len(nrow(L)), nth + seq_len(nr)] <- L
  if (lphi) J <- rbind(cbind(J, matrix(0, nrow(J), 1L)), c(numeric(nth + nr), 1))
  J
}

# Newton's method on the free parameters theta = ([theta], rho, [log
# phi]), log sp = L rho + lsp0: mgcv's newton() (mgcv_newton()), gam()'s
# outer optimizer, at gam.control()'s conv.tol or newton.tol where it is
# given; each evaluation starts its penalized IRLS from the last accepted
# fit.
outer_newton <- function(P, L, lsp0, theta0, control) {
  nr <- ncol(L)
  known <- !P$lphi
  # (an extended family's parameters come first: P$nth of them, its
  # criterion P$score_fn, R/outer_efam.R)
  nth <- if (is.null(P$nth)) 0L else P$nth
  J <- outer_param_map(L, nth, !known)
  eval_at <- function(theta, deriv, from) {
    lsp <- drop(L %*% theta[nth + seq_len(nr)]) + lsp0
    lphi <- if (known) NULL else theta[nth + nr + 1L]
    beta <- if (is.null(from)) NULL else from$beta
    e <- if (is.null(P$score_fn)) outer_score(P, lsp, lphi, beta, control, deriv = deriv) else
      P$score_fn(P, lsp, lphi, beta, control, deriv = deriv, th = theta[seq_len(nth)])
    if (deriv) {
      # the gradient and Hessian in ([theta], lsp, [lphi]) mapped to theta
      e$g <- drop(crossprod(J, e$grad))
      e$Hs <- crossprod(J, e$hess %*% J)
    }
    e
  }
  # newton()'s scale of the score: |score| + |log scale| for REML and ML,
  # |score| + the fit's scale estimate for GCV, GACV and UBRE
  scale_of <- function(e) abs(e$score) +
    if (is.null(e$scale.est)) abs(log(e$phi)) else abs(e$scale.est)
  e <- mgcv_newton(eval_at, theta0, scale_of, conv.tol = gam_conv_tol(control),
                   maxit = control$newton.maxit)
  e$lsp <- drop(L %*% e$theta[nth + seq_len(nr)]) + lsp0
  e
}

# Smoothing parameters (and scale) by REML, ML, GCV or UBRE: returns the
# optimiser's result with the problem, and what gam.fit3.post.proc() needs
# of the rows at the optimum (X'W_F X and the leverages, Fisher's weights
# W_F), so that X is not needed after the model session closes.  L: the
# free log smoothing parameters' map (identity when none is fixed), lsp0
# its offset.  ms: the fit's model session (model_session()), which the
# final fit runs on; P$close() records where it ran.
outer_smoothing <- function(G, ms, y, w, offset, family, S, L, lsp0, method, gamma, scale,
                            control, trials = NULL, start = NULL, shards = NULL) {
  P <- outer_problem(G, ms, y, w, offset, family, S, method, gamma, scale, trials,
                     shards = shards)
  handed <- FALSE
  on.exit(if (!handed) P$close())
  fam <- P$fam
  nr <- ncol(L)
  # (an additive model's criterion is a function of X'WX, X'Wz and z'Wz:
  # the optimizer works on the problem reduced to p rows, one Gram product
  # over the data)
  # (NULL where X'WX + S is not of full rank: the engine's route, which
  # fits rank-deficient models in bam()'s convention)
  Pn <- P
  if (identical(fam$family, "gaussian") && identical(fam$link, "identity")) {
    Pn <- outer_reduced_problem(P, G, S, family, method, gamma, scale, control)
    # (with gam()'s fixed penalty, which the engine's REML does not take:
    # the rows themselves, as for the other families)
    if (is.null(Pn) && is.null(G$H)) return(NULL)
    if (is.null(Pn)) Pn <- P else on.exit(Pn$close(), add = TRUE)
  }
  # mgcv's starting smoothing parameters from X'WX at the family's start
  # (initial.sp())
  # (or gam()'s in.out: start$lsp, the free log smoothing parameters, and
  # start$lscale, the log scale where it is estimated)
  theta0 <- numeric(nr)
  if (!is.null(start)) {
    theta0 <- start$lsp
    if (P$lphi) theta0 <- c(theta0, start$lscale)
  } else if (nr > 0) {
    sp0 <- mgcv_fun("initial.sp")(Pn$eval(NULL)$XtWX, G$S, G$off, XX = TRUE)
    if (length(sp0) == nrow(L)) {
      theta0 <- qr.coef(qr(L), log(pmax(sp0, .Machine$double.xmin)) - lsp0)
      theta0[!is.finite(theta0)] <- 0
    }
  }
  # (log scale starts, as gam()'s, from get.null.coef()'s null scale over
  # 10: the deviance per row of the fit at mean(y))
  if (P$lphi && is.null(start))
    theta0 <- c(theta0, log(outer_null_deviance(P) / P$n / 10))
  res <- outer_newton(Pn, L, lsp0, theta0, control)
  # the rows at the optimum (the session's last eval may be a rejected
  # trial step's): eta, mu and Newton's weights
  P$eval(res$beta, gram = FALSE)
  if (!is.null(shards)) {
    res <- shard_outer_rows(res, P)
    handed <- TRUE
    return(res)
  }
  v <- P$rows(vectors = c("eta", "mu", "w"))
  res$eta <- v$eta
  res$mu <- v$mu
  res$w <- v$w
  # Fisher's weights at the optimum, X'W_F X and the leverages with them
  # (gam() reports covariances, EDFs and leverages with Fisher's weights,
  # as gam.fit3's 'weights'; Newton's are its 'working.weights')
  wf <- P$w * fam$mu.eta(res$eta)^2 / fam$variance(res$mu)
  wf[!is.finite(wf)] <- 0
  res <- outer_fisher_rows(res, P, wf)
  handed <- TRUE
  res
}

# The additive model's problem on p rows: Rx (Rx'Rx = X'WX, pivoted
# Cholesky) in X's place with unit weights, f (Rx'f = X'Wz) as the
# response, and the residual sum of squares beyond them added to every
# deviance, so that the penalized IRLS, the deviance, its derivatives and
# the criterion are those of the n rows at p x p cost (as gcv_magic()
# reduces GCV's); the likelihood's terms in n and the weights (ls, n) stay
# the full problem's.  The reduced rows are host work, not the device's.
# NULL where the model is not identifiable (X'WX + S not of full rank).
outer_reduced_problem <- function(P, G, S, family, method, gamma, scale, control) {
  # (X'WX, X'Wz with z = y - offset: on shards the nodes' eval at beta = 0,
  # the gaussian identity's z being exactly that)
  g <- if (is.null(P$shards)) P$gram(P$w, P$y - P$off) else P$eval(numeric(P$p))
  p <- P$p
  red <- gram_reduction(g$XtWX, g$XtWz, g$zWz)
  extra <- red$extra
  # identifiable: X'WX + S of full rank, each penalty scaled to X'WX's size
  nx <- max(abs(g$XtWX))
  St <- g$XtWX / nx + P$H / max(1, max(abs(P$H)))
  for (Sk in P$S) St <- St + Sk / max(abs(Sk))
  if (attr(suppressWarnings(chol(St, pivot = TRUE)), "rank") < p) return(NULL)
  ms <- model_session(red$Rx, red$f, rep(1, p), NULL, list(mode = 0L, ordinal = 0L), control)
  Pr <- outer_problem(G, ms, red$f, rep(1, p), NULL, family, S, method, gamma, scale,
                      own = TRUE)
  eval0 <- Pr$eval
  rows0 <- Pr$rows
  Pr$eval <- function(beta, gram = TRUE) {
    e <- eval0(beta, gram)
    e$dev <- e$dev + extra
    e
  }
  Pr$rows <- function(pearson = FALSE, gram = FALSE, vectors = FALSE) {
    rw <- rows0(pearson, gram, vectors)
    if (pearson) rw$pearson <- rw$pearson + extra
    rw
  }
  for (nm in c("n", "n_pos", "ls", "ls_n", "unit_trials")) Pr[[nm]] <- P[[nm]]
  Pr
}

# gam.fit3's scale.est at fitted values mu with tr(A) trA: Fletcher's,
# the Pearson statistic over n - tr(A), divided by 1 + s.bar (s.bar the
# mean of dvar(mu) (y - mu) / V(mu) over the rows).
outer_fletcher_scale <- function(P, mu, trA) {
  fam <- P$fam
  V <- fam$variance(mu)
  fletcher_scale(sum(P$w * (P$y - mu)^2 / V), sum(fam$dvar(mu) * (P$y - mu) / V), P$n, trA)
}

# The deviance of every row at mean(y) (get.null.coef()'s null scale).
outer_null_deviance <- function(P) {
  fam <- P$fam
  if (!is.null(P$shards)) return(shard_null_deviance(P$shards, fam))
  sum(fam$dev.resids(P$y, mean(P$y) + 0 * P$y, P$w))
}

# The same from the two sums over the rows (the session's rows compute them).
fletcher_scale <- function(pearson, sbar_sum, n, trA) {
  scale.est <- pearson / (n - trA)
  s.bar <- max(-0.9, sbar_sum / n)
  if (is.finite(s.bar)) scale.est <- scale.est / (1 + s.bar)
  scale.est
}

# What gam.fit3.post.proc() needs of the rows at the optimum, with
# Fisher's weights wf: X'W_F X, rV (rV rV' = (X'W_F X + S)^-1) and the
# leverages, into the optimizer's result res with the problem P.
outer_fisher_rows <- function(res, P, wf) {
  res$wf <- wf
  res$XWX <- P$gram(wf)$XtWX
  Rf <- chol(res$XWX + res$Sl)
  res$rV <- backsolve(Rf, diag(P$p))                   # rV rV' = (X'W_F X + S)^-1
  res$hat <- P$lev(tcrossprod(res$rV), wf)
  res$P <- P
  res
}

# gam()'s fields of a REML, ML, GCV or UBRE fit (gam.outer() and
# gam.fit3.post.proc()) on the engine's object fitted at the chosen
# smoothing parameters.
outer_finish <- function(fit, lap, G, L, lsp0, method, sp.names, control, aic0 = NA_real_) {
  P <- lap$P
  known <- P$scale > 0
  nr <- ncol(L)
  pe <- P$crit %in% c("GCV", "UBRE", "GACV")
  # (gam()'s method says which score it used: "GCV" or "UBRE" for
  # "GCV.Cp", "REML" and "ML" for "P-REML" and "P-ML" with a known scale)
  fit$method <- P$crit
  fit$gcv.ubre <- stats::setNames(lap$score, method)
  fit$scale.estimated <- !known
  fam <- P$fam
  # gam()'s scale when estimated is not the REML one (reml.scale) but
  # gam.fit3's scale.est: Fletcher's Pearson estimate with tr(A)
  trA <- P$p - sum(tcrossprod(lap$rV) * lap$Sl)
  scale.est <- if (known) NA else if (!is.null(P$shards))
    fletcher_scale(lap$fletcher[[1L]], lap$fletcher[[2L]], P$n, trA) else
    outer_fletcher_scale(P, lap$mu, trA)
  # (shards: gam.fit3.post.proc()'s leverages and weights of the set-up
  # sample's rows, the fitted object's n-vectors)
  if (!is.null(P$shards)) lap <- shard_outer_sample(lap, fit, G)
  fit$reml.scale <- if (pe) NA else lap$phi
  fit$scale <- fit$sig2 <- if (known) P$scale else scale.est
  fit <- outer_post_proc(fit, lap, G, outer_param_map(L, 0L, P$lphi), c(lsp0, if (P$lphi) 0),
                         list(scale.estimated = !known, scale.est = scale.est, scale = P$scale,
                              reml.scale = fit$reml.scale, family = fit$family,
                              method = method),
                         control, seq_len(nr), sp.names)
  # gam.fit3's dev1 for the aic
  dev <- if (known) P$scale * P$sum_w else if (fam$family == "gaussian") lap$dev else
    if (pe) scale.est * P$sum_w else lap$phi * P$sum_w
  # (binomial's and poisson's aic do not read dev: without cbind() trials
  # theirs is the fit's own, aic0, family$aic(y, 1, mu, w) summed in C
  # over threads beside the residuals -- an O(n) pass of R spared)
  reuse <- fam$family %in% c("binomial", "poisson") && isTRUE(P$unit_trials) &&
    is.finite(aic0)
  aic <- if (reuse) aic0 else if (!is.null(P$shards)) shard_outer_aic(P, dev) else
    outer_aic(fam, P, fit$fitted.values, dev, control$nthreads)
  fit$aic <- aic + 2 * sum(fit$edf)
  fit
}

# family$aic(y, n, mu, w, dev) of an outer fit: Gamma's and
# inverse.gaussian's summed over threads in C (R's is an n-vector of
# dgamma()s: 0.1 s at 3e5 rows on the 2-core machine, most of Gamma's
# post-processing), to rounding; any other family's by R.
outer_aic <- function(fam, P, mu, dev, nthreads) {
  if (fam$family %in% c("Gamma", "inverse.gaussian") && is.double(P$y) &&
      length(P$w) == length(P$y) && is.finite(dev)) {
    return(.Call(gg_family_aic_r, fam$family, P$y, as.double(mu), as.double(P$w), dev,
                 as.integer(nthreads)))
  }
  mgcv_visible(fam$aic)(P$y, P$ls_n, mu, P$w, dev)
}

# gam.fit3.post.proc() on an outer fit (lap: outer_smoothing()'s or
# efam_outer_smoothing()'s result): Vp = phi H^-1, Ve, the EDFs, Vc with
# the parameters' uncertainty, into fit with the leverages, the weights
# (Fisher's; Newton's as working.weights), d beta / d rho and the free
# smoothing parameters (lap$theta[sp_index]).  post.proc reads X only
# through X'W_F X (its F, its R factor, Vb.corr) and the leverages, so it
# is given Rx, p x p with Rx'Rx = X'W_F X, in X's place with unit weights,
# and the leverages the session computed.  Lx, lsp0x: the map of every
# outer parameter to gam.fit3's and its offset; obj: post.proc's object's
# fields that differ between the callers (scales, family, method).  Also
# gam()'s record of the Newton iteration (optimizer, outer.info).
outer_post_proc <- function(fit, lap, G, Lx, lsp0x, obj, control, sp_index, sp.names) {
  P <- lap$P
  fit$optimizer <- c("outer", "newton")
  fit$outer.info <- list(conv = lap$conv, iter = lap$iter, grad = lap$g, hess = lap$Hs,
                         score.hist = lap$score.hist)
  fit$mgcv.conv <- NULL
  ev <- eigen(lap$XWX, symmetric = TRUE)
  Rx <- sqrt(pmax(ev$values, 0)) * t(ev$vectors)
  # (one thread: post.proc's QR of the p x p Rx is mgcv's pqr(), which
  # on a square matrix takes 0.1 - 2.4 s with 2 or more threads where one
  # takes a millisecond -- p = 20 - 100, mgcv 1.8-41)
  obj <- c(obj, list(rV = lap$rV, K = Rx %*% lap$rV, weights = rep(1, P$p),
                     control = list(nthreads = 1L),
                     db.drho = if (ncol(Lx) > 0 && NCOL(lap$db) > 0) lap$db, outer.info = list(hess = lap$Hs),
                     sp = exp(lap$theta), coefficients = lap$beta))
  mv <- mgcv_fun("gam.fit3.post.proc")(Rx, Lx, lsp0x, G$S, G$off, obj, P$gamma)
  pn <- names(fit$coefficients)
  for (nm in c("Vp", "Ve", "Vc")) {
    fit[nm] <- list(mv[[nm]])
    if (!is.null(fit[[nm]])) dimnames(fit[[nm]]) <- list(pn, pn)
  }
  fit$V.sp <- mv$V.sp
  fit$edf <- stats::setNames(mv$edf, pn)
  fit$edf1 <- stats::setNames(mv$edf1, pn)
  fit["edf2"] <- list(if (!is.null(mv$edf2)) stats::setNames(mv$edf2, pn))
  fit$hat <- lap$hat
  fit$R <- mv$R
  fit$weights <- fit$wt <- lap$wf
  fit$working.weights <- lap$w
  fit$db.drho <- lap$db
  fit$sp <- exp(lap$theta[sp_index])
  names(fit$sp) <- sp.names
  fit$df.residual <- P$n - sum(fit$edf)
  fit
}

# gam()'s Vc, V.sp and edf2 for a "REML" or "ML" fit of an additive model,
# which the engine makes (its Newton iteration on the exact criterion,
# with the log scale among the parameters when it is estimated: the fit's
# outer.info$hess is gam()'s).  The engine's own Vc follows bam(), which
# profiles the scale out of the smoothing parameters' covariance; gam()'s
# gam.fit3.post.proc() keeps it in, 14% apart on airquality.  Here that
# function runs on the fit: R (R'R = X'WX) in X's place with unit weights,
# H^-1 = Vp / scale, d beta / d rho for every smoothing parameter
# (-H^-1 lambda_k S_k beta), the free ones' map L with lsp0 (and the log
# scale's row).  All p x p; no pass over the rows.
reml_vc_finish <- function(fit, G, L, lsp0, gamma, control) {
  known <- !isTRUE(fit$scale.estimated)
  nr <- ncol(L)
  if (nr == 0L || !is.matrix(fit$R) || is.null(fit$outer.info$hess) ||
      nrow(fit$outer.info$hess) != nr + !known)
    return(fit)
  scale <- fit$sig2
  Hi <- fit$Vp / scale
  beta <- unname(fit$coefficients)
  lsp <- drop(L %*% log(fit$sp)) + lsp0
  p <- length(beta)
  S <- embed_penalties(G$S, G$off, p)
  db <- vapply(seq_along(S), function(k) -exp(lsp[k]) * drop(Hi %*% (S[[k]] %*% beta)),
               numeric(p))
  db <- matrix(db, p, length(S))
  rV <- t(chol(Hi))
  Lx <- if (known) L else rbind(cbind(L, 0), c(numeric(nr), 1))
  obj <- list(scale.estimated = !known, scale.est = scale, scale = if (known) scale else 0,
              rV = rV, K = fit$R %*% rV, weights = rep(1, p),
              control = list(nthreads = control$nthreads), reml.scale = fit$reml.scale,
              db.drho = db, outer.info = list(hess = fit$outer.info$hess),
              sp = c(fit$sp, if (!known) fit$reml.scale), family = fit$family,
              method = fit$method, coefficients = beta)
  mv <- mgcv_fun("gam.fit3.post.proc")(fit$R, Lx, c(lsp0, if (!known) 0), G$S, G$off, obj,
                                        gamma)
  pn <- names(fit$coefficients)
  fit["Vc"] <- list(mv$Vc)
  if (!is.null(fit$Vc)) dimnames(fit$Vc) <- list(pn, pn)
  fit$V.sp <- mv$V.sp
  fit["edf2"] <- list(if (!is.null(mv$edf2)) stats::setNames(mv$edf2, pn))
  fit$db.drho <- db
  fit
}

# The route of gam.fit3's outer iteration (R/route.R: route_laplace()'s
# steps, with outer_smoothing() and outer_finish()).
route_outer <- function(method) {
  r <- route_laplace("outer", method, method, function(f, Lg, start)
    if (is.null(f$shards))
      outer_smoothing(f$G, f$ses, f$y, f$w, f$offset, f$family, f$S, Lg, f$lsp0, method,
                      f$gamma, f$scale, f$control, f$trials, start = start)
    else outer_smoothing(f$G, f$ses, NULL, NULL, NULL, f$family, f$S, Lg, f$lsp0, method,
                         f$gamma, f$scale, f$control, start = start,
                         shards = shard_outer_problem(f)))
  r$finish <- function(fit, f, res) {
    lap <- f$lap
    fit <- outer_finish(fit, lap, f$G, lap$L, lap$lsp0, method, lap$sp.names, f$control,
                        res$scalars[["aic"]])
    fit$residuals <- gam_working_residuals(fit, f$family, f$y, f$w, f$control$nthreads)
    fit
  }
  r
}
