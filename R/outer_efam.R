# gam()'s REML and ML for mgcv's extended families (issue 14): nb(), tw(),
# betar(), scat(), ziP() and ocat() as gam.fit4() and newton() fit them --
# Newton's method on the family's free parameters theta, the log smoothing
# parameters rho and (tw() with its scale estimated) the log scale, around
# a fully converged penalized Newton iteration, the Laplace approximate
# criterion's gradient and Hessian by implicit differentiation.
#
# With D(beta, theta) = sum dev_i the deviance, the working weights w =
# D_i'' / 2 (D_i's derivatives in eta: mgcv's dDeta()), H = X'WX + S_lambda,
# Dp = D + beta' S_lambda beta, phi the scale and ls(theta, phi) the
# family's saturated log likelihood:
#   REML = (Dp / (2 phi) - ls) / gamma + (log|H| - log|S_lambda|+) / 2
#          - remlInd Mp / 2 (log(2 pi phi) - log gamma)
# (ML: remlInd = 0, log|H| on the penalized space as in R/outer.R).  For
# each parameter k: d beta_k = -H^-1 g_k, g_k = lambda_k S_k beta (rho) or
# X' D_eta,theta_k / 2 (theta); eta_k = X d beta_k; dw_k = (D''' eta_k +
# D''_theta_k) / 2; dH_k = X' diag(dw_k) X (+ lambda_k S_k); and the second
# derivatives by differentiating once more (the row terms D'''' eta_j eta_k,
# D'''_theta, D''_theta theta, D'_theta theta of gam.fit4's gdi2).
#
# The O(n) work -- X beta, X' v, X' diag(v) X, leverages -- runs in a model
# session that holds X (src/r/session_r.c; the device's memory for a GPU
# fit).  For nb(), tw(), betar(), scat(), ziP() and ocat() (up to four
# thetas) the rows' derivatives are there too, in C (inst/include/
# efam_outer.h: their Dd and dDeta() in mgcv's expressions), kept beside
# X, so that an evaluation moves only p-sized results; otherwise they are
# mgcv's own (family$Dd through dDeta()) in R, an n-vector crossing to the
# session per product (efam_rows_r(), which fit$device$outer_rows names,
# with the reason).  Everything else is p x p.  The engine then fits at the chosen theta, smoothing
# parameters and scale, and gam()'s covariances, EDFs and Vc come from
# gam.fit3.post.proc() with Fisher's weights, as gam() reports them.

# gam()'s method for an extended family: REML or ML; every other method
# (its default GCV.Cp, GACV.Cp, P-REML, P-ML) becomes REML, as
# estimate.gam() makes it.
efam_outer_method <- function(method) if (method %in% c("REML", "ML")) method else "REML"

# The problem: the family (link derivatives to the fourth, theta's working
# values), the scale (known, or its log a parameter), outer_session()'s
# penalties and model session, and the rows' steps that every evaluation
# takes (see efam_rows_session() and efam_rows_r()).
efam_outer_problem <- function(G, ms, y, w, offset, family, S, method, gamma, scale,
                               rows = c("auto", "R"), own = FALSE, shards = NULL) {
  rows <- match.arg(rows)
  # (rows left on a cluster's nodes: their steps must be the session's, in
  # C; shard_family_ok() admits nb() alone, whose rows are)
  if (!is.null(shards) && !(rows == "auto" && efam_rows_in_c(family)))
    gamgpu_abort("gamgpu_internal_error",
                 sprintf("shards: %s's rows are not in C (%s)", family$family,
                         efam_rows_r_reason(family, rows)), call = NULL)
  B <- outer_session(G, ms, S, own)
  n <- B$n
  fam <- mgcv_fun("fix.family.link")(family)
  # (estimate.gam(): the scale given, else the family's, else 1; below 0
  # it is estimated, its log a parameter)
  if (!(scale > 0)) scale <- if (is.null(fam$scale)) 1 else fam$scale
  nth <- if (isTRUE(fam$n.theta > 0)) as.integer(fam$n.theta) else 0L
  off <- if (is.null(offset)) 0 else offset
  P <- c(B[c("ses", "n", "p", "S", "UrS", "H", "N", "Mp", "env", "gram", "lev", "xb", "xt")], list(
       y = y, w = w, off = off, fam = fam, nth = nth, shards = shards,
       ml = method == "ML", gamma = gamma, scale = scale, lphi = scale <= 0, crit = method,
       score_fn = efam_outer_score,
       null_coef = function()
         B$null_coef(fam$linkfun(if (is.null(shards)) mean(y) else shards$mean_y)),
       # the family at theta (its working values), as gam.fit4 sets it
       set_theta = function(th) if (nth > 0) fam$putTheta(th),
       # (a family with theta fixed, n.theta = 0, has it at getTheta())
       theta = function() fam$getTheta(),
       # (family$ls(), its row terms once per distinct response: R/family_ls.R)
       ls = function(th, phi) {
         if (is.null(B$env$lsf))
           B$env$lsf <- if (is.null(shards)) saturated_ls(fam, y, w) else shard_ls(shards, fam)
         B$env$lsf(th, phi)
       },
       mustart = function() efam_mustart(fam, y, w)))
  ses_rows <- rows == "auto" && efam_rows_in_c(family)
  P <- c(P, if (ses_rows)
    efam_rows_session(B, fam, family, if (is.null(shards)) y else shards$sample_y)
  else efam_rows_r(B, P))
  # (where the rows were computed: the session's "cuda:0" or "cpu", or R)
  P$close <- function() {
    B$close()
    if (!ses_rows)
      B$env$rows <- sprintf("R (mgcv's dDeta(): %s)", efam_rows_r_reason(family, rows))
  }
  P
}

# nb(), tw(), betar(), scat(), ziP(), ocat(), cnorm(), clog() and cpois()
# with the links mgcv gives them have their rows in C (inst/include/
# efam_outer.h) for up to four thetas (GG_FM_EFO_MAXTH); ocat() with more
# than six categories (R - 2 > 4 cut points) keeps mgcv's dDeta() in R.
efam_rows_in_c <- function(family) {
  name <- efam_name(family)
  # gfam(): up to four thetas, its members' links those dDeta() has in C
  if (identical(name, "gfam"))
    return(length(family$getTheta()) <= 4L &&
             all(gfam_members(family)$link %in% c("identity", "log", "sqrt", "inverse", "logit",
                                                  "probit", "cloglog", "cauchit")))
  cens <- c("identity", "log", "sqrt")
  links <- list(negbin = c("log", "identity", "sqrt"), tw = c("log", "identity", "sqrt"),
                betar = c("logit", "probit", "cloglog", "cauchit"),
                scat = c("identity", "log", "inverse"), ziP = "identity",
                ocat = "identity", cnorm = cens, clog = cens, cpois = cens)
  nth <- length(family$getTheta())
  !is.null(name) && name %in% names(links) && family$link %in% links[[name]] &&
    nth >= (name != "cpois") && nth <= 4L
}

# Why an extended family's rows are mgcv's dDeta() in R (fit$device$outer_rows).
efam_rows_r_reason <- function(family, rows) {
  if (rows == "R") return("rows = \"R\" was asked for")
  nth <- length(family$getTheta())
  if (identical(efam_name(family), "gfam"))
    return(sprintf("%s: %d theta values or a member's link without rows in C", family$family,
                   nth))
  if (nth > 4L && identical(efam_name(family), "ocat"))
    return(sprintf("%s has %d cut points to estimate, C's rows take at most 4", family$family, nth))
  sprintf("%s has no rows in C", family$family)
}

# The rows' steps of an evaluation, in the model session (src/r/session_r.c:
# on the device for a GPU fit, beside X; src/engine/outer_rows.c on the CPU),
# where nothing n-sized crosses to R:
#   eval(b, th): eta = X b + offset and mu at b (NULL: the family's start),
#     the deviance (not finite where mu is not valid);
#   rows(th, level, gram, xg, vectors): the rows at the last eval -- level 0,
#     Newton's weights w = Deta2 / 2 and Deta; 2, and the derivatives' row
#     terms -- with the count of rows not finite (bad), sum Dth and Dth2
#     (theta's values and pairs), X'WX (gram), X' Detath / 2 (xg, p x nth),
#     the vectors eta, mu, w, wf (vectors);
#   newton(mask): gam.fit4's Newton system X'WX, X'(w (eta - offset) -
#     Deta / 2), with mask the rows of w <= 0 left out;
#   derivs(b1, Pm): efam_outer_derivs()'s row products (efam_rows_r()).
efam_rows_session <- function(B, fam, family, y) {
  eng <- engine_family(family)
  # (tw()'s bounds of p, betar()'s eps, the censored families' floor for
  # its starting mu: efam_spec())
  ef0 <- efam_spec(family, 1, y)$ef
  aux <- ef0$aux
  spec <- function(th) {
    th <- as.numeric(if (length(th)) th else fam$getTheta())
    ef <- list(theta = th, aux = aux)
    if (!is.null(ef0$gfam)) ef$gfam <- ef0$gfam     # (gfam()'s members)
    list(theta = if (eng$name == "negbin") exp(th), ef = ef)
  }
  env <- new.env()
  list(
    eval = function(b, th) {
      sp <- spec(th)
      env$th <- th
      B$op("ef_eval", if (!is.null(b)) as.double(b), eng$name, engine_link(fam), sp$theta, sp$ef)
    },
    rows = function(th, level, gram = FALSE, xg = FALSE, vectors = FALSE) {
      # (the session's rows are at the last eval's theta)
      if (!identical(th, env$th))
        gamgpu_abort("gamgpu_internal_error", "the extended family's rows asked at a theta other than their eval's",
                     call = NULL)
      if (gram) B$count()
      B$op("ef_rows", as.integer(level), gram, xg, vectors)
    },
    newton = function(mask) {
      B$count()
      B$op("ef_newton", mask)
    },
    derivs = function(b1, Pm, nth) {
      B$count(ncol(b1))
      d <- B$op("derivs", b1 + 0, Pm + 0, as.integer(c(0, 0, 0, nth)))
      list(dH = lapply(seq_len(ncol(b1)), function(k) d$dH[, , k]), RHS = d$RHS, u = d$u,
           hww = d$hww, hd = d$hd, tg = if (nth > 0) d$tg)
    })
}

# The same steps in R, on mgcv's dDeta() (every extended family, any
# number of theta values): the rows' n-vectors in R, X's products in the
# session.
efam_rows_r <- function(B, P) {
  fam <- P$fam
  y <- P$y
  w <- P$w
  dDeta <- mgcv_fun("dDeta")
  env <- new.env()
  list(
    eval = function(b, th) {
      if (is.null(b)) {
        env$mu <- P$mustart()
        env$eta <- fam$linkfun(env$mu)
        return(NaN)
      }
      env$eta <- drop(B$xb(b)) + P$off
      env$mu <- fam$linkinv(env$eta)
      if (fam$valideta(env$eta) && fam$validmu(env$mu))
        sum(fam$dev.resids(y, env$mu, w, th)) else NaN
    },
    rows = function(th, level, gram = FALSE, xg = FALSE, vectors = FALSE) {
      dd <- dDeta(y, env$mu, w, th, fam, level)
      env$dd <- dd
      good <- is.finite(dd$Deta) & is.finite(dd$Deta2)
      if (level >= 2) good <- good & is.finite(dd$Deta3) & is.finite(dd$Deta4) &
        is.finite(rowSums(as.matrix(dd$Dth))) & is.finite(rowSums(as.matrix(dd$Detath))) &
        is.finite(rowSums(as.matrix(dd$Deta2th)))
      list(bad = sum(!good),
           Dth = if (level >= 2) colSums(as.matrix(dd$Dth)) else NA_real_,
           Dth2 = if (level >= 2) colSums(as.matrix(dd$Dth2)) else NA_real_,
           XtWX = if (gram) B$gram(dd$Deta2 / 2)$XtWX,
           Xg = if (xg) B$xt(as.matrix(dd$Detath) / 2),
           eta = if (vectors) env$eta, mu = if (vectors) env$mu,
           w = if (vectors) dd$Deta2 / 2, wf = if (vectors) pmax(0, dd$EDeta2 / 2))
    },
    newton = function(mask) {
      dd <- env$dd
      wn <- dd$Deta2 / 2
      h <- dd$Deta / 2
      e <- env$eta - P$off
      # (gam.fit4's good rows: w and w (eta - offset) - Deta / 2 finite)
      good <- is.finite(wn) & is.finite(wn * e - h)
      keep <- good & (!mask | dd$Deta2 > 0)
      wn[!keep] <- 0
      h[!keep] <- 0
      e[!good] <- 0
      g <- B$gram(wn, e)
      list(XtWX = g$XtWX, XtWz = g$XtWz - drop(B$xt(h)))
    },
    # the row products of the derivatives in (theta, rho) at the level-2
    # rows, b1 = d beta / d (theta, rho) (p x nt, theta's nth first), Pm the
    # leverages' matrix: with e = X b1 and dw_k = e_k Deta3 / 2 (+ Deta2th_k
    # / 2 for theta's), dH_k = X' diag(dw_k) X, hd_k = sum h dw_k, u = X'(h
    # Deta3 / 2), and pair by pair (j <= k, column by column of the upper
    # triangle) RHS = X' r_jk and hww = sum h s_jk / 2 of gdi2's row terms;
    # tg[i, k] = sum Detath_i e_k
    derivs = function(b1, Pm, nth) {
      dd <- env$dd
      nt <- ncol(b1)
      ist <- seq_len(nt) <= nth
      col <- function(m, j) as.matrix(m)[, j]   # (a family with one theta has vectors)
      e1 <- B$xb(b1)
      dw <- e1 * (dd$Deta3 / 2)
      if (nth > 0) dw[, seq_len(nth)] <- dw[, seq_len(nth)] + as.matrix(dd$Deta2th) / 2
      dH <- lapply(seq_len(nt), function(k) B$gram(dw[, k])$XtWX)
      hP <- B$lev(Pm)
      pairs <- efam_pairs(nt)
      npr <- nrow(pairs)
      RW <- matrix(0, P$n, npr + 1L)
      hww <- matrix(0, nt, nt)
      for (q in seq_len(npr)) {
        j <- pairs[q, 1]
        k <- pairs[q, 2]
        ej <- e1[, j]
        ek <- e1[, k]
        r <- dd$Deta3 / 2 * ej * ek
        s <- dd$Deta4 * ej * ek
        if (ist[k]) {
          r <- r + col(dd$Deta2th, k) / 2 * ej
          s <- s + col(dd$Deta3th, k) * ej
        }
        if (ist[j]) {
          r <- r + col(dd$Deta2th, j) / 2 * ek
          s <- s + col(dd$Deta3th, j) * ek
        }
        if (ist[j] && ist[k]) {
          r <- r + col(dd$Detath2, efam_pk(j, k, nth)) / 2
          s <- s + col(dd$Deta2th2, efam_pk(j, k, nth))
        }
        RW[, q] <- r
        hww[j, k] <- hww[k, j] <- sum(hP * s / 2)
      }
      RW[, npr + 1L] <- hP * dd$Deta3 / 2
      XR <- B$xt(RW)
      list(dH = dH, RHS = XR[, seq_len(npr), drop = FALSE], u = XR[, npr + 1L], hww = hww,
           hd = colSums(hP * dw),
           tg = if (nth > 0) crossprod(as.matrix(dd$Detath), e1))
    })
}

# The pairs (j <= k) column by column of the upper triangle, and mgcv's
# packing of theta's second derivatives (row by row of the upper triangle)
efam_pairs <- function(nt) which(upper.tri(diag(nt), diag = TRUE), arr.ind = TRUE)
efam_pk <- function(i, j, nth) {
  a <- min(i, j)
  b <- max(i, j)
  (a - 1) * nth - (a - 1) * (a - 2) / 2 + (b - a + 1)
}

# gam.fit4's inner iteration to full convergence at theta th and penalty
# Sl, from beta (NULL: the family's starting mu): Newton's steps on the
# penalized deviance (weights w = D'' / 2, with gam.fit4's rule of the
# positive ones only where H is not positive definite), halved while the
# deviance is not finite or the penalized deviance rises.
efam_pirls <- function(P, Sl, th, beta, maxit, eps) {
  pen <- function(b) sum(b * drop(Sl %*% b))
  state <- function(b) {
    dev <- P$eval(b, th)
    list(beta = b, dev = dev, pdev = dev + pen(b))
  }
  if (is.null(beta)) {
    P$eval(NULL, th)
    cur <- list(beta = NULL, pdev = Inf)
  } else cur <- state(beta)
  converged <- FALSE
  for (iter in seq_len(maxit)) {
    if (P$rows(th, 0L)$bad > 0)
      gamgpu_abort("gamgpu_numerical",
                   "the extended family's deviance derivatives are not finite at the fit; use method = \"fREML\"",
                   call = NULL)
    # Newton's step from the working response: H b1 = X'(w (eta - off) - D' / 2)
    g <- P$newton(FALSE)
    R <- tryCatch(chol(g$XtWX + Sl), error = function(e) NULL)
    if (is.null(R)) {
      g <- P$newton(TRUE)
      R <- tryCatch(chol(g$XtWX + Sl), error = function(e) NULL)
    }
    if (is.null(R))
      gamgpu_abort("gamgpu_numerical",
                   "the penalized Newton system is not positive definite (the model is not identifiable); use method = \"fREML\"",
                   call = NULL)
    b1 <- backsolve(R, forwardsolve(t(R), g$XtWz))
    nxt <- state(b1)
    halves <- 0L
    # (the first step halves towards gam.fit4's null coefficients; where no
    # halving lowers the penalized deviance, the full step is taken if it
    # rose by no more than gam.fit4's div.thresh, as outer_pirls() does)
    base <- cur$beta
    full <- nxt
    div_thresh <- 10 * (0.1 + abs(cur$pdev)) * sqrt(.Machine$double.eps)
    while (!is.finite(nxt$pdev) ||
           (!is.null(cur$beta) && nxt$pdev > cur$pdev + 1e-12 * abs(cur$pdev))) {
      if (halves >= 60L && is.finite(full$pdev) && full$pdev - cur$pdev <= div_thresh) {
        nxt <- state(full$beta)
        break
      }
      if (halves >= 60L)
        gamgpu_abort("gamgpu_numerical", "the penalized Newton step could not be corrected",
                     call = NULL)
      if (is.null(base)) base <- P$null_coef()
      nxt <- state((nxt$beta + base) / 2)
      halves <- halves + 1L
    }
    small <- !is.null(cur$beta) &&
      (max(abs(nxt$beta - cur$beta)) <= eps * (1 + max(abs(nxt$beta))) ||
         abs(nxt$pdev - cur$pdev) <= 1e-15 * (1 + abs(nxt$pdev)))
    cur <- nxt
    if (small) {
      converged <- TRUE
      break
    }
  }
  pb <- pen(cur$beta)
  c(cur, list(pen = pb, converged = converged, iter = iter))
}

# The criterion at theta th, log smoothing parameters lsp and (scale
# estimated) log scale lphi: value, gradient and Hessian in (th, lsp,
# lphi), with the fit.
efam_outer_score <- function(P, lsp, lphi, beta, control, deriv = TRUE, th = numeric(0)) {
  M <- length(lsp)
  nth <- P$nth
  lam <- exp(lsp)
  p <- P$p
  n <- P$n
  gam <- P$gamma
  Sl <- P$H
  for (k in seq_len(M)) Sl <- Sl + lam[k] * P$S[[k]]
  if (nth == 0) th <- P$theta()
  P$set_theta(th)
  f <- efam_pirls(P, Sl, th, beta, control$maxit, 1e-11)
  beta <- f$beta
  rw <- P$rows(th, if (deriv) 2L else 0L, gram = TRUE, xg = deriv && nth > 0)
  if (rw$bad > 0)
    gamgpu_abort("gamgpu_numerical",
                 sprintf("the extended family's deviance derivatives are not finite at %d rows of the fit; use method = \"fREML\"",
                         rw$bad), call = NULL)
  XWX <- rw$XtWX
  Hd <- sym_inverse_logdet(XWX + Sl)
  if (is.null(Hd))
    gamgpu_abort("gamgpu_numerical",
                 "X'WX + S is singular at the fit (Newton weights); use method = \"fREML\"",
                 call = NULL)
  Hi <- Hd$inv
  lm <- outer_ldet(P, Hd)
  ldetH <- lm$ldet
  Pm <- lm$Pm
  rp <- if (length(P$UrS)) mgcv_fun("gam.reparam")(P$UrS, lsp, if (deriv) 2 else 0) else
    list(det = 0, det1 = numeric(0), det2 = matrix(0, 0, 0))
  known <- !P$lphi
  phi <- if (known) P$scale else exp(lphi)
  ls <- P$ls(th, phi)
  remlInd <- if (P$ml) 0 else 1
  Dp <- f$dev + f$pen
  V <- (Dp / (2 * phi) - ls$ls) / gam + (ldetH - rp$det) / 2 -
    remlInd * P$Mp / 2 * (log(2 * pi * phi) - log(gam))
  out <- list(beta = beta, dev = f$dev, Sl = Sl, Hi = Hi, pirls_iter = f$iter,
              pirls_converged = f$converged, score = V, phi = phi, Dp = Dp, th = th)
  if (!deriv) return(out)
  nt <- nth + M
  d <- if (nt > 0) efam_outer_derivs(P, rw, beta, lam, Pm, Hi, Sl) else
    list(Dp1 = numeric(0), ldet1 = numeric(0), Dp2 = matrix(0, 0, 0),
         ldet2 = matrix(0, 0, 0), b1 = matrix(0, p, 0))
  lsth1 <- c(ls$lsth1[seq_len(nth)], numeric(M))
  ls2 <- matrix(0, nt, nt)
  if (nth > 0) ls2[seq_len(nth), seq_len(nth)] <- as.matrix(ls$lsth2)[seq_len(nth), seq_len(nth)]
  det1 <- c(numeric(nth), rp$det1)
  det2 <- matrix(0, nt, nt)
  if (M > 0) det2[nth + seq_len(M), nth + seq_len(M)] <- rp$det2
  Dp1 <- d$Dp1
  grad <- (Dp1 / (2 * phi) - lsth1) / gam + (d$ldet1 - det1) / 2
  hess <- (d$Dp2 / (2 * phi) - ls2) / gam + (d$ldet2 - det2) / 2
  if (!known) {
    # (ls's derivatives in log phi follow the family's theta, estimated or
    # fixed)
    js <- length(th) + 1L
    l1 <- ls$lsth1[js]
    l2 <- as.matrix(ls$lsth2)
    dlphi <- (-Dp / (2 * phi) - l1) / gam - remlInd * P$Mp / 2
    d2lphi <- (Dp / (2 * phi) - l2[js, js]) / gam
    cross <- -Dp1 / (2 * phi * gam)
    if (nth > 0) cross[seq_len(nth)] <- cross[seq_len(nth)] - l2[js, seq_len(nth)] / gam
    grad <- c(grad, dlphi)
    hess <- rbind(cbind(hess, cross), c(cross, d2lphi))
  }
  out$grad <- grad
  out$hess <- hess
  out$db <- d$b1
  out
}

# The criterion's derivatives in (theta, rho) at a converged fit (see the
# top of this file): the penalized deviance's (Dp1, Dp2), log|H|'s on the
# penalized space of Pm (ldet1, ldet2), and d beta (b1, p x nt), from the
# level-2 rows rw (P$rows()) and their row products (P$derivs(): X b1, one
# X' diag(dw_k) X per parameter, the leverages of Pm, X' of the second
# derivatives' row terms); the rest is p x p.
efam_outer_derivs <- function(P, rw, beta, lam, Pm, Hi, Sl) {
  nth <- P$nth
  M <- length(lam)
  p <- P$p
  nt <- nth + M
  ist <- seq_len(nt) <= nth                 # which parameters are theta's
  # d beta / d (theta, rho)
  G1 <- matrix(0, p, nt)
  if (nth > 0) G1[, seq_len(nth)] <- rw$Xg
  Sb <- matrix(0, p, M)
  for (k in seq_len(M)) Sb[, k] <- lam[k] * drop(P$S[[k]] %*% beta)
  G1[, nth + seq_len(M)] <- Sb
  b1 <- -Hi %*% G1
  d <- P$derivs(b1, Pm, nth)
  dH <- lapply(seq_len(nt), function(k)
    if (ist[k]) d$dH[[k]] else d$dH[[k]] + lam[k - nth] * P$S[[k - nth]])
  trPS <- vapply(seq_len(M), function(k) lam[k] * sum(Pm * P$S[[k]]), 0)
  ldet1 <- d$hd + c(numeric(nth), trPS)
  pairs <- efam_pairs(nt)
  npr <- nrow(pairs)
  Dp2 <- matrix(0, nt, nt)
  RHS <- d$RHS
  for (q in seq_len(npr)) {
    j <- pairs[q, 1]
    k <- pairs[q, 2]
    # the penalized deviance's second derivatives (theta's first: j <= k)
    Dp2[j, k] <- Dp2[k, j] <- if (ist[j]) d$tg[j, k] +
      (if (ist[k]) rw$Dth2[efam_pk(j, k, nth)] else 0) else
      2 * sum(Sb[, j - nth] * b1[, k]) + if (j == k) sum(beta * Sb[, k - nth]) else 0
    if (!ist[k]) RHS[, q] <- RHS[, q] + lam[k - nth] * drop(P$S[[k - nth]] %*% b1[, j])
    if (!ist[j]) RHS[, q] <- RHS[, q] + lam[j - nth] * drop(P$S[[j - nth]] %*% b1[, k])
    if (j == k && !ist[k]) RHS[, q] <- RHS[, q] + Sb[, k - nth]
  }
  b2 <- -Hi %*% RHS
  Tm <- lapply(dH, function(A) Pm %*% A)
  ldet2 <- matrix(0, nt, nt)
  for (q in seq_len(npr)) {
    j <- pairs[q, 1]
    k <- pairs[q, 2]
    v <- d$hww[j, k] + sum(d$u * b2[, q]) - sum(Tm[[j]] * t(Tm[[k]]))
    if (j == k && !ist[k]) v <- v + trPS[k - nth]
    ldet2[j, k] <- ldet2[k, j] <- v
  }
  Dp1 <- c(if (nth > 0) rw$Dth[seq_len(nth)], colSums(beta * Sb))
  list(Dp1 = Dp1, ldet1 = ldet1, Dp2 = Dp2, ldet2 = ldet2, b1 = b1)
}

# The parameters by REML or ML: outer_newton() over (theta, rho, [log
# phi]) from the family's theta, initial.spg()'s smoothing parameters and
# (scale estimated) a tenth of the null model's deviance per row; then the
# rows at the optimum that gam.fit3.post.proc() needs: Fisher's weights
# (pmax(E D'' / 2, 0), gam.fit4's), X'W_F X and the leverages.  start:
# gam()'s in.out (start$lsp the free log smoothing parameters, start$lscale
# the log scale where it is a parameter; theta starts from the family's).
efam_outer_smoothing <- function(G, ms, y, w, offset, family, S, L, lsp0, method, gamma,
                                 scale, control, start = NULL, shards = NULL) {
  P <- efam_outer_problem(G, ms, y, w, offset, family, S, method, gamma, scale,
                          shards = shards)
  # (the session stays open for the final fit, as outer_smoothing()'s)
  handed <- FALSE
  on.exit(if (!handed) P$close())
  fam <- P$fam
  nr <- ncol(L)
  th0 <- if (P$nth > 0) P$theta() else numeric(0)
  rho0 <- numeric(nr)
  if (!is.null(start)) {
    rho0 <- start$lsp
  } else if (nr > 0) {
    # initial.spg(): the weights at the family's start
    XtWX0 <- if (is.null(shards)) P$gram(efam_start_weights(fam, y, w))$XtWX else
      Reduce(`+`, shards$over(gg_shard_outer, "efam_start", fam, NULL))
    sp0 <- mgcv_fun("initial.sp")(XtWX0, G$S, G$off, XX = TRUE)
    if (length(sp0) == nrow(L)) {
      rho0 <- qr.coef(qr(L), log(pmax(sp0, .Machine$double.xmin)) - lsp0)
      rho0[!is.finite(rho0)] <- 0
    }
  }
  theta0 <- c(th0, rho0)
  if (P$lphi) {
    # get.null.coef()'s null scale over 10, or in.out's
    null_scale <- (if (is.null(shards)) sum(fam$dev.resids(y, mean(y) + 0 * y, w)) else
      shard_null_deviance(shards, fam)) / P$n
    theta0 <- c(theta0, if (!is.null(start)) start$lscale else log(null_scale / 10))
  }
  res <- outer_newton(P, L, lsp0, theta0, control)
  # the fit at the optimum (the last evaluation may be a rejected step's)
  e <- efam_outer_score(P, res$lsp, if (P$lphi) res$theta[P$nth + nr + 1L], res$beta,
                        control, deriv = FALSE, th = res$theta[seq_len(P$nth)])
  P$set_theta(e$th)
  res$th <- e$th
  res$beta <- e$beta
  res$pirls_converged <- e$pirls_converged
  res$pirls_iter <- e$pirls_iter
  if (!is.null(shards)) {
    res <- shard_efam_outer_rows(res, P)
    handed <- TRUE
    return(res)
  }
  fr <- P$rows(e$th, 0L, vectors = TRUE)
  res$eta <- fr$eta
  res$mu <- fr$mu
  res$w <- fr$w
  res <- outer_fisher_rows(res, P, fr$wf)
  handed <- TRUE
  res
}

# The family's starting mu for the rows y, w (its initialize, as gam.fit4
# evaluates it).
efam_mustart <- function(fam, y, w) {
  e <- list2env(list(y = y, weights = w, nobs = length(y), family = fam, mustart = NULL,
                     etastart = NULL, start = NULL),
                parent = environment(fam$Dd))
  eval(fam$initialize, e)
  e$mustart
}

# initial.spg()'s working weights at the family's starting mu (the rows'
# own: a shard's are its rows').
efam_start_weights <- function(fam, y, w) {
  mu0 <- efam_mustart(fam, y, w)
  Dd0 <- fam$Dd(y, mu0, fam$getTheta(), w)
  me2 <- fam$mu.eta(fam$linkfun(mu0))^2
  w0 <- 0.5 * as.numeric(Dd0$Dmu2 * me2)
  if (any(w0 < 0)) w0 <- 0.5 * as.numeric(Dd0$EDmu2 * me2)
  w0
}

# gam()'s fields of an extended family's REML or ML fit, on the engine's
# object fitted at the chosen theta, smoothing parameters and scale
# (before efam_finish(), which then takes this fit's EDFs for the aic).
# method_given: the method asked for, whose name gam() gives the score.
efam_outer_finish <- function(fit, lap, G, L, lsp0, method, sp.names, control,
                              method_given = method) {
  P <- lap$P
  known <- !P$lphi
  nr <- ncol(L)
  nth <- P$nth
  # the fit is gam.fit4's at the optimum: its coefficients and vectors (the
  # engine's bgam.fit iteration, from there, ends elsewhere for a family
  # whose expected weights are not Newton's, cpois()'s)
  fit$coefficients[] <- lap$beta
  # (shards: the nodes' rows at the optimum again, which the engine's pass
  # moved, and the sample's rows for the object)
  if (!is.null(P$shards)) lap <- shard_efam_outer_sample(lap, fit, G)
  fit$linear.predictors <- lap$eta
  fit$fitted.values <- lap$mu
  fit$converged <- isTRUE(lap$pirls_converged)
  fit$iter <- as.integer(lap$pirls_iter)
  fit$method <- method
  fit$gcv.ubre <- stats::setNames(lap$score, method_given)
  phi <- lap$phi
  fit$reml.scale <- phi
  fit$scale <- fit$sig2 <- phi
  outer_post_proc(fit, lap, G, outer_param_map(L, nth, !known),
                  c(numeric(nth), lsp0, if (!known) 0),
                  list(scale.estimated = !known, scale.est = phi,
                       scale = if (known) P$scale else 0, reml.scale = phi,
                       family = P$fam, method = method),
                  control, nth + seq_len(nr), sp.names)
}

# The route of gam.fit4's outer iteration for an extended family (R/route.R:
# route_laplace()'s steps, with efam_outer_smoothing() and
# efam_outer_finish(); the engine then fits at the chosen theta and scale).
route_efam_outer <- function(method, method_given) {
  r <- route_laplace("efam_outer", method, method_given, function(f, Lg, start)
    if (is.null(f$shards))
      efam_outer_smoothing(f$G, f$ses, f$y, f$w, f$offset, f$family, f$S, Lg, f$lsp0, method,
                           f$gamma, f$scale, f$control, start = start)
    else efam_outer_smoothing(f$G, f$ses, NULL, NULL, NULL, f$family, f$S, Lg, f$lsp0, method,
                              f$gamma, f$scale, f$control, start = start,
                              shards = shard_outer_problem(f)))
  laplace_choose <- r$choose
  r$choose <- function(f) {
    rt <- laplace_choose(f)
    if (!is.null(rt)) return(rt)
    lap <- f$lap
    # the engine fits at the chosen theta and scale, both held fixed
    if (lap$P$nth > 0) f$family$putTheta(lap$th)
    f$ef <- efam_spec(f$family, lap$phi, f$y)
    f$eng_fam <- engine_family(f$family)
    f$eng_fam$estimated <- FALSE
    NULL
  }
  laplace_spec <- r$spec
  # (the outer iteration's gam.fit4 fit is the fit, efam_outer_finish(); the
  # engine's one pass from it makes the object's other parts)
  r$spec <- function(f, spec, ctl) {
    s <- laplace_spec(f, spec, ctl)
    s$ctl$maxit <- 1L
    s
  }
  r$finish <- function(fit, f, res) {
    lap <- f$lap
    efam_outer_finish(fit, lap, f$G, lap$L, lap$lsp0, method, lap$sp.names, f$control,
                      method_given)
  }
  # (gam()'s scale of an extended family is estimated only where its log
  # was a parameter of the outer iteration, tw()'s)
  # (and its residuals gam.fit4's working ones, after efam_finish()'s)
  r$last <- function(fit, f) {
    fit$scale.estimated <- f$lap$P$lphi
    fit$residuals <- efam_working_residuals(fit, f$family, f$y, f$w)
    fit
  }
  r
}
