# gam()'s methods (REML, ML, P-REML, P-ML, GCV.Cp/UBRE and GACV.Cp beyond
# the additive model; R/outer.R) on shards left on a cluster's nodes
# (R/shards.R): the outer iteration's O(n) work is already its model
# session's operations, summed over the nodes (R/cluster.R's op); what
# gam.fit3 reads of the rows in R is here a sum the nodes return --
# family$ls() at each scale, the deviance at mean(y), Fletcher's two sums
# and X'W_F X at the optimum, the aic's sums -- and the fitted object's
# leverages and weights are the set-up sample's rows, as its other
# n-vectors (shard_finish()).  Exponential families with one trial a row,
# and the extended families fitted on shards (nb()) with their rows in C.

# ---- on a node ----------------------------------------------------------

#' The outer iteration's sums over a cluster node's rows
#'
#' For gam()'s methods on shards (R/shards_outer.R): "ls", the family's
#' ls() of the node's rows at scale arg (its three numbers; built once a
#' fit); "null", sum(dev.resids(y, arg, w)); "fisher", at the session's
#' last eval, list(XtWX with Fisher's weights, the Pearson statistic,
#' s.bar's sum) (arg: the engine's family, link and theta); "aic", the
#' family's aic sums at the session's fitted values (arg: the scale of
#' Gamma's aic); for an extended family, "ls" at arg = list(theta,
#' scale), "efam_start", X'WX with initial.spg()'s weights at the family's
#' starting mu, "efam_fisher", X'W_F X at the session's last rows.
#' @param key the fit's key.
#' @param what "ls", "null", "fisher", "aic", "efam_start" or "efam_fisher".
#' @param family the fit's family with gam.fit3's derivatives
#'   (outer_family()).
#' @param arg see what.
#' @return the node's sums.
#' @keywords internal
#' @export
gg_shard_outer <- function(key, what, family, arg) {
  s <- node_session(key)
  s$w <- node_weights(s)
  node_fault(paste0("outer_", what))
  switch(what,
         ls = {
           efam <- inherits(family, "extended.family")
           if (is.null(s$lsf)) {
             s$lsf <- if (efam) saturated_ls(family, s$y, s$w) else
               saturated_ls(family, s$y, s$w, rep(1, length(s$y)))
             .node_sessions[[key]] <- s
           }
           # (an extended family's: its sums, not its rows' terms LSTH1)
           if (efam) do.call(s$lsf, arg)[c("ls", "lsth1", "lsth2")] else s$lsf(arg)
         },
         efam_start = {
           w0 <- efam_start_weights(family, s$y, s$w)
           session_call("gram", s$ses$ptr, as.double(w0), numeric(length(w0)))$XtWX
         },
         efam_fisher = {
           r <- session_call("ef_rows", s$ses$ptr, 0L, FALSE, FALSE, TRUE)
           session_call("gram", s$ses$ptr, as.double(r$wf), numeric(length(r$wf)))$XtWX
         },
         null = sum(family$dev.resids(s$y, arg + 0 * s$y, s$w)),
         fisher = {
           r <- session_call("rows", s$ses$ptr, arg$name, arg$link, TRUE, FALSE,
                             c("eta", "mu"), arg$theta)
           wf <- s$w * family$mu.eta(r$eta)^2 / family$variance(r$mu)
           wf[!is.finite(wf)] <- 0
           g <- session_call("gram", s$ses$ptr, as.double(wf), numeric(length(wf)))
           list(XtWX = g$XtWX, pearson = r$pearson, sbar = r$sbar_sum)
         },
         aic = {
           mu <- .Call(gg_node_op_r, s$ses$ptr, "fetch", "mu", NULL)
           y <- s$y
           w <- s$w
           switch(family$family,
                  gaussian = c(length(y), sum(log(w))),
                  Gamma = sum(stats::dgamma(y, 1 / arg, scale = mu * arg, log = TRUE) * w),
                  inverse.gaussian = c(sum(w), sum(log(y) * w)),
                  binomial = , poisson = family$aic(y, 1, mu, w, 0),
                  NA_real_)
         },
         gamgpu_abort("gamgpu_bad_input", "gg_shard_outer: unknown sum", call = NULL))
}

# ---- on the leader ------------------------------------------------------

# What outer_problem() takes of shards: the nodes' sums (over(fun, ...):
# fun(key, ...) on every node) and every row's counts.
shard_outer_problem <- function(f) {
  if (!is.null(f$trials))
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste("gam()'s methods on shards take a binomial response of one trial a row:",
                       "use method = \"fREML\" for cbind() trials"), call = NULL)
  list(over = f$ses$over_nodes, n_pos = f$n_nonzero, sum_w = f$shards$sw,
       mean_y = f$shards$mean_rows_y, sample_y = f$y)
}

# family$ls() of every row: function(scale), or function(theta, scale) for
# an extended family (its ls, lsth1, lsth2), the nodes' sums.
shard_ls <- function(shards, fam) {
  if (!inherits(fam, "extended.family"))
    return(function(phi) Reduce(`+`, shards$over(gg_shard_outer, "ls", fam, phi)))
  function(th, phi) {
    parts <- shards$over(gg_shard_outer, "ls", fam, list(th, phi))
    out <- parts[[1L]]
    for (nm in names(out)) out[[nm]] <- Reduce(`+`, lapply(parts, `[[`, nm))
    out
  }
}

shard_null_deviance <- function(shards, fam)
  sum(unlist(shards$over(gg_shard_outer, "null", fam, shards$mean_y)))

# outer_fisher_rows() on shards at the optimum (the session's last eval):
# X'W_F X and Fletcher's sums from the nodes; the leverages and weights
# come later from the sample (shard_outer_sample()).
shard_outer_rows <- function(res, P) {
  eng <- engine_family(P$fam)
  parts <- P$shards$over(gg_shard_outer, "fisher", P$fam,
                         list(name = eng$name, link = engine_link(P$fam), theta = eng$theta))
  res$XWX <- Reduce(`+`, lapply(parts, `[[`, "XtWX"))
  res$fletcher <- c(sum(vapply(parts, `[[`, 0, "pearson")), sum(vapply(parts, `[[`, 0, "sbar")))
  Rf <- chol(res$XWX + res$Sl)
  res$rV <- backsolve(Rf, diag(P$p))
  res$P <- P
  res
}

# The same for an extended family at its optimum (the session's last
# eval, at theta res$th): X'W_F X with gam.fit4's Fisher weights.
shard_efam_outer_rows <- function(res, P) {
  P$rows(res$th, 0L)
  res$XWX <- Reduce(`+`, P$shards$over(gg_shard_outer, "efam_fisher", P$fam, NULL))
  Rf <- chol(res$XWX + res$Sl)
  res$rV <- backsolve(Rf, diag(P$p))
  res$P <- P
  res
}

# An extended family's optimum on shards, after the engine's pass from it:
# the nodes' rows evaluated at it again (the aic, deviance and null
# deviance sums read them: shard_efam_finish()), and the sample's rows
# at it -- eta, mu, Newton's weights (D'' / 2), Fisher's (pmax(E D'' / 2,
# 0)) and the leverages, from mgcv's dDeta().
shard_efam_outer_sample <- function(lap, fit, G) {
  P <- lap$P
  fam <- P$fam
  P$eval(lap$beta, lap$th)
  X <- if (nrow(G$X) == nrow(G$mf)) G$X else full_model_matrix(G, G$mf, cores = 1L)
  off <- if (length(G$offset) == nrow(G$mf)) as.numeric(G$offset) else 0
  eta <- drop(X %*% lap$beta) + off
  mu <- fam$linkinv(eta)
  dd <- mgcv_fun("dDeta")(fit$y, mu, fit$prior.weights, lap$th, fam, 0)
  wf <- pmax(0, dd$EDeta2 / 2)
  lap$eta <- eta
  lap$mu <- mu
  lap$w <- dd$Deta2 / 2
  lap$wf <- wf
  lap$hat <- wf * rowSums((X %*% tcrossprod(lap$rV)) * X)
  lap
}

# The optimum's rows of the set-up sample (the fitted object's rows, at
# the fit's coefficients: shard_finish()): Fisher's weights wf, Newton's
# w (gam.fit3's alpha), the leverages with X'W_F X + S's inverse.
shard_outer_sample <- function(lap, fit, G) {
  fam <- lap$P$fam
  X <- if (nrow(G$X) == nrow(G$mf)) G$X else full_model_matrix(G, G$mf, cores = 1L)
  eta <- fit$linear.predictors
  mu <- fit$fitted.values
  V <- fam$variance(mu)
  me <- fam$mu.eta(eta)
  wf <- fit$prior.weights * me^2 / V
  wf[!is.finite(wf)] <- 0
  w <- if (fam$fisher) wf else
    wf * (1 + (fit$y - mu) * (fam$dvar(mu) / V + fam$d2link(mu) * me))
  lap$eta <- eta
  lap$mu <- mu
  lap$wf <- wf
  lap$w <- w
  lap$hat <- wf * rowSums((X %*% tcrossprod(lap$rV)) * X)
  lap
}

# family$aic(y, 1, mu, w, dev) of every row from the nodes' sums at the
# fit's fitted values, as R's families write it; NA for a family without
# one (the quasi families).
shard_outer_aic <- function(P, dev) {
  fam <- P$fam
  disp <- dev / P$sum_w
  s <- Reduce(`+`, P$shards$over(gg_shard_outer, "aic", fam, disp))
  switch(fam$family,
         gaussian = s[[1L]] * (log(2 * pi * dev / s[[1L]]) + 1) + 2 - s[[2L]],
         Gamma = -2 * s[[1L]] + 2,
         inverse.gaussian = s[[1L]] * (log(dev / s[[1L]] * 2 * pi) + 1) + 3 * s[[2L]] + 2,
         binomial = , poisson = s[[1L]],
         NA_real_)
}
