# gam_gpu()'s routes: which fit a call asks for, as an object with its own
# steps around the engine's penalized IRLS (gam_gpu() runs them in turn).
#
#   "fREML"      bam()'s: the engine's REML (the default);
#   "engine_gam" gam()'s REML or ML for an additive model, by the engine
#                (with AR1 residuals, or where the Laplace route has no
#                identifiable reduced problem), with gam()'s conventions;
#   "gcv"        gam()'s GCV.Cp or GACV.Cp for an additive model, from one
#                Gram product (route_gcv() in R/gcv.R);
#   "outer"      gam.fit3's REML, ML, GCV/UBRE, GACV (route_outer() in
#                R/outer.R);
#   "efam_outer" gam.fit4's REML or ML for an extended family
#                (route_efam_outer() in R/outer_efam.R).
# The first two, and the outer iterations' common steps (route_laplace()),
# are here.
#
# A route is a list: name; method (as fitted; gam() maps an extended
# family's method to REML) and method_given (as asked, which names gam()'s
# score); outer (whether it runs gam()'s outer iteration in a model
# session); and its steps, each taking the fit's state f (an environment:
# the setup G, the rows y, w, offset, X, the penalties, L, lsp0, sp.names,
# ...):
#   choose(f)               the smoothing parameters (and scale, theta)
#                           before the engine's fit: updates f; returns
#                           NULL, or the route to fit by instead
#                           ("engine_gam" where the outer iteration has
#                           nothing to do);
#   spec(f, spec, ctl)      the engine's settings: list(spec, ctl);
#   finish(fit, f, res)     the fitted object after gg_assemble();
#   warn(fit, f, res)       its warnings where it stopped short;
#   device(dev, f)          its part of fit$device;
#   last(fit, f)            what it sets after the families' finishing.
# Everything else -- arguments, mgcv's setup, the rows, X, the engine's fit,
# the common finishing -- is gam_gpu()'s, the same for every route.

# The route of a call, its refusals said once here.
gam_route <- function(family, method, fixed_pen, ar1, in_out) {
  if (fixed_pen && ar1)
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste("gam()'s fixed penalty (min.sp, H) with AR1 residuals (rho) is not",
                       "available: drop one of them"), arguments = "rho")
  additive <- family$family == "gaussian" && family$link == "identity"
  method_given <- method
  # GCV.Cp and GACV.Cp for additive models: the prediction-error criteria,
  # from one Gram product (GCV.Cp's magic() takes gam()'s fixed penalty, as
  # gam.fit()'s does)
  if (additive && (method == "GCV.Cp" || (method == "GACV.Cp" && !fixed_pen))) {
    if (!is.null(in_out))
      gamgpu_abort("gamgpu_unsupported_argument",
                   sprintf("'in.out' with method = \"%s\" is not available; drop it", method),
                   arguments = "in.out")
    if (ar1)
      gamgpu_abort("gamgpu_unsupported_method",
                   sprintf("method = \"%s\" with AR1 residuals (rho) is not available; use \"fREML\"",
                           method))
    return(route_gcv(method))
  }
  # An extended family: gam.fit4()'s REML or ML, which gam() uses whatever
  # method it is given but "ML" (estimate.gam())
  efam <- !is.null(efam_name(family)) && method != "fREML"
  if (efam) method <- efam_outer_method(method)
  # REML, ML and GCV.Cp beyond the additive model: gam.fit3()'s criteria
  # with its outer Newton around a fully converged penalized IRLS, for the
  # exponential families (and P-REML, P-ML for every model); an additive
  # model's REML and ML too, on the problem reduced to p rows (gam()'s
  # optimizer; with AR1 residuals bam()'s, the engine's)
  outer <- efam || method %in% c("P-REML", "P-ML") || fixed_pen ||
    (!additive && method %in% c("REML", "ML", "GCV.Cp", "GACV.Cp")) ||
    (additive && method %in% c("REML", "ML") && !ar1)
  if (outer) {
    outer_families <- c("gaussian", "binomial", "poisson", "Gamma", "inverse.gaussian",
                        "negbin", "tweedie", "quasibinomial", "quasipoisson")
    if (!efam && !(engine_family(family)$name %in% outer_families))
      gamgpu_abort("gamgpu_unsupported_method",
                   sprintf(paste("method = \"%s\" is available for the %s families so far",
                                 "(not %s); use \"fREML\", or mgcv::gam() for this family"),
                           method, paste(outer_families, collapse = ", "), family$family))
    if (ar1)
      gamgpu_abort("gamgpu_unsupported_method",
                   sprintf("method = \"%s\" with AR1 residuals (rho) is available for gaussian identity models only; use \"fREML\"",
                           method))
    return(if (efam) route_efam_outer(method, method_given) else route_outer(method))
  }
  if (method == "fREML") route_freml() else route_engine_gam(method)
}

# The steps a route leaves as they are.
route_base <- function(name, method, method_given = method, outer = FALSE) {
  r <- list(name = name, method = method, method_given = method_given, outer = outer)
  r$choose <- function(f) NULL
  r$spec <- function(f, spec, ctl) list(spec = spec, ctl = ctl)
  r$finish <- function(fit, f, res) fit
  r$warn <- function(fit, f, res) invisible(NULL)
  r$device <- function(dev, f) dev
  r$last <- function(fit, f) fit
  r
}

# The engine's REML Newton stopping at its limit: gam()'s warning.
warn_engine_newton <- function(method, res, control) {
  if (res$scalars[["newton.status"]] == 2)
    gamgpu_warn("gamgpu_not_converged",
                sprintf("%s Newton iteration reached its limit of %d iterations",
                        method, control$newton.maxit))
}

# A rank-deficient fit's score as bam() reports it (R/rank_deficient.R).
finish_rank_deficient <- function(fit, f, res) {
  if (isTRUE(f$rd)) {
    v <- reml_bam_convention(f$G, res, f$n, f$gamma)
    if (!is.null(v)) fit$gcv.ubre[] <- v
  }
  fit
}

route_freml <- function() {
  r <- route_base("fREML", "fREML")
  r$finish <- function(fit, f, res) {
    fit <- finish_rank_deficient(fit, f, res)
    # (no smoothing parameter to estimate: bam()'s "REML", R/bam_no_sp.R)
    if (f$nfree == 0 && is.null(f$ar))
      fit <- bam_no_sp_reml(fit, f$G, res, f$family, f$n, f$gamma, f$scale)
    fit
  }
  r$warn <- function(fit, f, res) warn_engine_newton("fREML", res, f$control)
  r
}

route_engine_gam <- function(method) {
  r <- route_base("engine_gam", method)
  # (gam()'s REML and ML count the rows of positive weight in the
  # likelihood, family$ls's nobs, and every row in the scale estimate)
  gam_ml <- method %in% c("REML", "ML")
  r$spec <- function(f, spec, ctl) {
    if (gam_ml) spec$nobs <- sum(f$w > 0)
    spec$ml <- as.integer(method == "ML")
    list(spec = spec, ctl = ctl)
  }
  r$finish <- function(fit, f, res) {
    fit <- finish_rank_deficient(fit, f, res)
    # (an AR1 fit keeps bam()'s residuals, its std.rsd's)
    if (is.null(f$ar))
      fit$residuals <- gam_working_residuals(fit, f$family, f$y, f$w, f$control$nthreads)
    if (!gam_ml) return(fit)
    # gam()'s REML and ML scores keep the gaussian log likelihood's weight
    # term, sum(log(w)) / 2 (family$ls), which bam()'s leaves out; and its
    # Vc keeps the log scale among the parameters (R/outer.R)
    w <- f$w
    fit$gcv.ubre[] <- fit$gcv.ubre - sum(log(w[w > 0])) / (2 * f$gamma)
    if (!isTRUE(f$rd) && is.null(f$ar))
      fit <- reml_vc_finish(fit, f$G, if (is.null(f$L)) diag(length(f$lsp0)) else f$L,
                            f$lsp0, f$gamma, f$control)
    # gam.fit3's aic with a known scale takes the scale, not the deviance
    # (its dev1 = scale * sum(w)); bam()'s, the engine's, the deviance
    if (!isTRUE(fit$scale.estimated))
      fit$aic <- f$family$aic(f$y, f$n, fit$fitted.values, w, fit$sig2 * sum(w)) +
        2 * sum(fit$edf)
    fit
  }
  r$warn <- function(fit, f, res) warn_engine_newton(method, res, f$control)
  r
}

# The outer iteration's common steps: gam.fit3's (route_outer()) and
# gam.fit4's (route_efam_outer()); smoothing() is theirs.
route_laplace <- function(name, method, method_given, smoothing) {
  r <- route_base(name, method, method_given, outer = TRUE)
  r$choose <- function(f) {
    Lg <- if (is.null(f$L)) diag(length(f$lsp0)) else f$L
    # (gam()'s in.out: where the outer iteration starts)
    in_out <- f$dots$in.out
    start <- if (!is.null(in_out))
      list(lsp = log(in_out$sp)[if (is.null(f$sp)) TRUE else f$sp < 0],
           lscale = log(in_out$scale))
    lap <- smoothing(f, Lg, start)
    # (an additive model that is not identifiable: the engine's REML or ML)
    if (is.null(lap)) return(route_engine_gam(method))
    lsp0 <- lap$lsp
    lap$sp.names <- f$sp.names
    lap$L <- Lg
    nth <- if (is.null(lap$P$nth)) 0L else lap$P$nth    # (gam.fit4's thetas first)
    lap$lsp0 <- lsp0 - drop(Lg %*% lap$theta[nth + seq_len(ncol(Lg))])
    f$lap <- lap
    f$lsp0 <- lsp0
    f$L <- Lg[, integer(0), drop = FALSE]
    f$sp.names <- character(0)
    NULL
  }
  r$spec <- function(f, spec, ctl) {
    # (the leverages are the outer iteration's own, outer_post_proc(); the
    # engine's penalized IRLS starts at its optimum, where it then stops)
    spec$hat <- FALSE
    spec$theta_start <- NULL
    spec$beta_start <- as.double(f$lap$beta)
    list(spec = spec, ctl = ctl)
  }
  r$warn <- function(fit, f, res) {
    lap <- f$lap
    if (!lap$converged)
      gamgpu_warn("gamgpu_not_converged",
                  if (identical(lap$conv, "step failed"))
                    sprintf("%s Newton iteration terminated with step failure - check results carefully",
                            method)
                  else sprintf("%s Newton iteration reached its limit of %d iterations",
                               method, f$control$newton.maxit))
  }
  r$device <- function(dev, f) {
    P <- f$lap$P
    # where its Gram products ran, and how many; its seconds in host-device
    # copies, row-wise work, X's build; where gam.fit3's rows were computed
    # ("cuda:0", kept on the device beside X; "cpu"); a device failure
    # under "auto" (the products went on on the CPU)
    dev$outer_gram <- P$env$device
    dev$outer_grams <- P$env$grams
    dev$outer_seconds <- P$env$seconds
    rows_at <- P$env$rows
    if (!is.null(rows_at) && nzchar(rows_at)) dev$outer_rows <- rows_at
    if (!is.null(P$env$fallback)) dev$outer_fallback <- P$env$fallback
    dev
  }
  r
}
