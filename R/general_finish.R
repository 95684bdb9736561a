# The fitted object of gamgpu's native general-family route
# (R/general_outer.R): what gam() returns for a general family fitted by
# REML -- gam.fit5()'s fields, gam.outer()'s and estimate.gam()'s (Vp, Ve,
# Vc, the EDFs by mgcv's gam.fit5.post.proc() on the p x p quantities at
# the optimum), gam()'s own (model frame, terms, ...) from the setup G --
# with the linear predictors from one pass over the model session's X and
# the family's postproc where it has one.

# gam()'s object from the outer iteration's result e (gf_outer()), the
# problem P (gf_problem()), the setup G, the session ses, the family with
# its own ll() and gam.control() ctrl; the method REML, by which gam()
# fits a general family.
gf_finish <- function(e, P, G, ses, family, ctrl) {
  p <- P$p
  Tm <- P$Tm
  beta_r <- e$beta
  fac <- e$fac
  M <- length(e$lsp)
  # gam.fit5's object, as gam.fit5.post.proc() reads it (no per-sp
  # re-parameterization: rp empty; lbb, L, D, St of the kept coefficients,
  # bdrop the dropped ones)
  object <- list(lbb = e$ll$lbb, L = fac$L, D = fac$D, St = e$St, bdrop = !e$keep,
                 rp = list(), db.drho = e$d1b,
                 outer.info = list(hess = e$Hs), sp = exp(e$theta))
  mv <- mgcv_fun("gam.fit5.post.proc")(object, P$Sl, G$L, G$lsp0, G$S, G$off, 1)
  beta <- drop(Tm %*% beta_r)
  # the linear predictors: one pass over the session's X, a column of
  # coefficients per predictor
  jj <- P$jj
  K <- length(jj)
  B <- matrix(0, p, K)
  for (k in seq_len(K)) B[jj[[k]], k] <- beta[jj[[k]]]
  eta <- ses$op("mul", B, FALSE)
  if (is.null(P$lpi)) {
    # (one predictor, cox.ph()'s: vectors, as gam.fit5 makes them)
    eta <- drop(eta)
    if (length(G$offset) && !is.list(G$offset)) eta <- eta + G$offset
    mu <- family$linkinv(eta)
  } else {
    offsets <- ls_offsets(G$offset, K, P$n)
    for (k in seq_len(K)) if (!is.null(offsets[[k]])) eta[, k] <- eta[, k] + offsets[[k]]
    mu <- eta
    for (k in seq_len(K)) mu[, k] <- family$linfo[[k]]$linkinv(eta[, k])
  }
  pn <- G$term.names
  object <- list(
    coefficients = stats::setNames(beta, pn), family = family, y = G$y,
    prior.weights = G$w, fitted.values = mu, linear.predictors = eta,
    NCV = NULL, NCV1 = NULL, rank = sum(e$keep), aic = -2 * e$ll$l, l = e$ll$l,
    lbb = e$ll$lbb, L = fac$L, bdrop = !e$keep, D = fac$D, St = e$St, rp = list(),
    Vg = NULL, db.drho = NULL, S1 = e$ldet1, iter = e$inner_iter, H = e$ll$lbb, dH = e$d1H,
    warn = as.list(e$warn),
    sp = exp(e$theta), gcv.ubre = e$score,
    outer.info = if (!isTRUE(e$no_outer))
      list(conv = e$conv, iter = e$iter, grad = matrix(e$g, ncol = 1L), hess = e$Hs,
           score.hist = e$score.hist),
    scale.estimated = FALSE, scale = 1, control = ctrl, method = "REML")
  # (gam.fit5()'s fields as the installed mgcv has them: Vg, NULL for REML,
  # where its gam.fit5() returns one -- mgcv 1.9)
  if (!"Vg" %in% gf_fit5_behaviour()$fields) object$Vg <- NULL
  object[names(mv)] <- mv
  for (nm in c("Vp", "Ve", "Vc"))
    if (is.matrix(object[[nm]])) dimnames(object[[nm]]) <- list(pn, pn)
  object$aic <- object$aic + 2 * sum(object$edf)
  object$nsdf <- G$nsdf
  object$sig2 <- object$scale
  object$smooth <- G$smooth
  names(object$edf) <- names(object$edf1) <- pn
  if (!is.null(object$edf2)) names(object$edf2) <- pn
  # the family's postproc (gaulss(): the null deviance; cox.ph(): the
  # baseline hazard, the rows back in their order), in estimate.gam()'s
  # frame: object, G, in mgcv's namespace -- G's X the original (no initial
  # re-parameterization to undo: Sl empty)
  # (cox.ph()'s by gamgpu's C, R/family_cox_hazard.R, on G's X or, where
  # the session built X from its recipe, X from the session)
  pp <- NULL
  if (identical(family$family, "Cox PH")) {
    # (the family's own postproc, where cox_postproc() leaves it the fit,
    # reads G$X)
    if (nrow(G$X) != P$n) G$X <- structure(ses$op("mul", diag(p), FALSE),
                                           dimnames = list(NULL, colnames(G$X)))
    pp <- cox_postproc(object, G, G$X)
  }
  if (!is.null(pp)) {
    object <- pp
  } else if (!is.null(family$postproc)) {
    penv <- new.env(parent = asNamespace("mgcv"))
    penv$object <- object
    G$Sl <- list()
    penv$G <- G
    eval(family$postproc, penv)
    object <- penv$object
  }
  if (!is.null(G$L)) {
    object$full.sp <- as.numeric(exp(G$L %*% log(object$sp) + G$lsp0))
    names(object$full.sp) <- names(G$lsp0)
  }
  names(object$sp) <- names(G$sp)
  object$paraPen <- G$pP
  object$formula <- G$formula
  if (is.list(object$formula)) attr(object$formula, "lpi") <- attr(G$X, "lpi")
  object$var.summary <- G$var.summary
  object$cmX <- G$cmX
  object$model <- G$mf
  object$na.action <- attr(G$mf, "na.action")
  object$terms <- G$terms
  object$pred.formula <- G$pred.formula
  attr(object$pred.formula, "full") <- stats::reformulate(all.vars(object$terms))
  object$pterms <- G$pterms
  object$assign <- G$assign
  object$contrasts <- G$contrasts
  object$xlevels <- G$xlevels
  object$offset <- G$offset
  if (!is.null(G$Xcentre)) object$Xcentre <- G$Xcentre
  object$df.residual <- P$n - sum(object$edf)
  object$min.edf <- G$min.edf
  object$optimizer <- c("outer", "newton")
  object$call <- G$cl
  class(object) <- c("gam", "glm", "lm")
  object$deviance <- gf_deviance(object)
  names(object$gcv.ubre) <- "REML"
  # (as gam() ends: no environment of the call's kept in the object's
  # formulas and terms, which would hold it and all it refers to)
  environment(object$formula) <- environment(object$pred.formula) <-
    environment(object$terms) <- environment(object$pterms) <- .GlobalEnv
  if (!is.null(object$model)) environment(attr(object$model, "terms")) <- .GlobalEnv
  if (!is.null(attr(object$pred.formula, "full")))
    environment(attr(object$pred.formula, "full")) <- .GlobalEnv
  object
}

# gam()'s deviance of a general family: the sum of its squared deviance
# residuals.  multinom()'s residuals square to -2 log of each row's fitted
# probability of its class (their sign, whether that class was the
# likeliest, takes an R apply() over the rows: 5 s at 10^6 rows), so
# those are summed directly; any other family's through its residuals().
gf_deviance <- function(object) {
  fam <- object$family
  if (identical(fam$family, "multinom") && is.function(fam$predict)) {
    p <- fam$predict(fam, eta = object$linear.predictors)[[1L]]
    n <- nrow(p)
    return(sum(-2 * log(pmax(.Machine$double.eps, p[seq_len(n) + object$y * n]))))
  }
  sum(stats::residuals(object, "deviance")^2)
}
