# gam_gpu()'s last step: the engine's result as an mgcv "gam" object
# (gg_assemble(), what bam() returns), and fit$device -- where the fit ran
# and why, how X was built, the phase times and the device's split.

# gam()'s fit$residuals: gam.fit3's working residuals at the fit, z - (eta
# - offset) = (y - mu) / (mu.eta(eta) alpha) on the rows of positive
# weight (alpha = 1 + (y - mu) (V'(mu) / V(mu) + g''(mu) mu.eta(eta)), its
# Newton weights' factor, where the link is not the family's canonical
# one; 1 where it is), NA on the others.  bam()'s, fREML's, are deviance
# residuals (gg_assemble()'s).  Over the fit's threads, in C.
gam_working_residuals <- function(fit, family, y, w, nthreads = 1L) {
  mu <- fit$fitted.values
  eta <- fit$linear.predictors
  # (rows left on a cluster's nodes: the object holds no n-vectors of them)
  if (length(mu) != length(y) || length(eta) != length(y)) return(fit$residuals)
  fam <- mgcv::fix.family.link(family)
  eng <- engine_family(family)
  .Call(gg_working_residuals_r, eng$name, engine_link(family), eng$theta, as.double(y),
        as.double(mu), as.double(eta), as.double(w), identical(fam$link, fam$canonical),
        as.integer(nthreads))
}

# gam.fit4's working residuals of an extended family under gam()'s methods:
# -Deta / Deta2 at the fitted mu, the family's Dd() at its fitted theta
# with the prior weights (mgcv's dDeta()'s Deta.Deta2), NA where not finite
# (a zero prior weight's row among them).
efam_working_residuals <- function(fit, family, y, w) {
  mu <- fit$fitted.values
  if (length(mu) != NROW(y)) return(fit$residuals)
  fam <- mgcv::fix.family.link(family)
  d <- fam$Dd(y, mu, fam$getTheta(), w, level = 0)
  r <- if (identical(fam$link, "identity")) d$Dmu / d$Dmu2
    else d$Dmu / (d$Dmu2 * fam$mu.eta(fam$linkfun(mu)) - d$Dmu * fam$g2g(mu))
  r <- -as.vector(r)
  r[!is.finite(r)] <- NA
  r
}

# Build the mgcv-compatible object (mirrors what mgcv::bam() returns).
gg_assemble <- function(G, res, family, y, w, offset, n, method, gamma, cl, control,
                        sp.names, scale) {
  sc <- res$scalars
  p <- length(res$coefficients)
  nsp <- ncol(res$db.drho)
  est <- scale <= 0
  object <- list()
  object$coefficients <- res$coefficients
  names(object$coefficients) <- G$term.names
  object$edf <- res$edf
  names(object$edf) <- G$term.names
  object$edf1 <- res$edf1
  object$edf2 <- res$edf2
  names(object$edf1) <- names(object$edf2) <- G$term.names
  object$Vp <- res$Vp
  object$Ve <- res$Ve
  object$Vc <- res$Vc
  object$V.sp <- res$V.sp
  if (!is.null(G$L)) attr(object$V.sp, "L") <- G$L
  object$db.drho <- res$db.drho
  object$gcv.ubre <- sc[["reml"]]
  names(object$gcv.ubre) <- method
  object$hat <- res$hat
  conv.msg <- c("full convergence", "step failed", "iteration limit reached")[sc[["newton.status"]] + 1]
  object$mgcv.conv <- list(iter = as.integer(sc[["newton.iter"]]), message = conv.msg)
  object$rank <- as.integer(sc[["rank"]])
  object$outer.info <- list(conv = conv.msg, iter = as.integer(sc[["newton.iter"]]),
                            grad = res$grad, hess = res$hess)
  # gam()'s label for its REML and ML (an outer Newton iteration, which the
  # engine's Newton on the exact criterion is); bam()'s for fREML
  object$optimizer <- if (method %in% c("REML", "ML")) c("outer", "newton") else c("perf", "newton")
  object$scale.estimated <- est
  # the scale at the REML optimum; gam()'s REML and ML report the scale
  # estimate over every row (gam.fit3's scale.est, Vp's) as sig2, which
  # differs from it by rounding, or with prior weights of 0 (nobs_scale)
  object$reml.scale <- sc[["sig2"]]
  object$sig2 <- if (method %in% c("REML", "ML") && est) sc[["scale.vp"]] else sc[["sig2"]]
  object$scale <- object$sig2
  object$sp <- exp(res$rho[seq_len(nsp)])
  names(object$sp) <- sp.names
  full.sp <- exp(res$rho.full)
  names(full.sp) <- names(G$lsp0)
  if (!(length(full.sp) == length(object$sp) &&
        isTRUE(all.equal(unname(object$sp), unname(full.sp)))))
    object$full.sp <- full.sp
  object$R <- res$R
  object$iter <- as.integer(sc[["iter"]])
  object$wt <- res$weights
  object$weights <- res$weights
  object$y <- y
  object$prior.weights <- w
  object$AR1.rho <- 0
  object$gamma <- gamma
  object$assign <- G$assign
  object$boundary <- FALSE
  object$call <- cl
  object$cmX <- G$cmX
  object$contrasts <- G$contrasts
  object$control <- mgcv::gam.control()            # gamgpu's settings replace mgcv's
  object$control[names(control)] <- unclass(control)
  object$converged <- sc[["converged"]] == 1
  object$data <- NA
  object$df.null <- n
  object$df.residual <- n - sum(object$edf)
  object$family <- family
  object$formula <- G$formula
  object$method <- method
  object$min.edf <- G$min.edf
  object$model <- G$mf
  object$na.action <- attr(G$mf, "na.action")
  object$NA.action <- G$na.action
  object$nsdf <- G$nsdf
  object$offset <- G$offset
  object$pterms <- G$pterms
  object$pred.formula <- G$pred.formula
  object$smooth <- G$smooth
  object$terms <- G$terms
  object$var.summary <- G$var.summary
  object$xlevels <- G$xlevels
  object$linear.predictors <- res$linear.predictors
  object$fitted.values <- res$fitted.values
  # deviance residuals, their sum of squares, the null deviance and
  # family$aic(y, 1, mu, w, dev): computed by the fit beside its
  # post-processing (src/family/family_stats.c), NA aic for the quasi families
  object$residuals <- res$residuals
  object$deviance <- sc[["resid.ss"]]       # sum(residuals^2)
  aic <- sc[["aic"]]
  if (is.na(aic) && !inherits(family, "extended.family") &&
      length(object$fitted.values) == length(y)) {    # (rows left on a cluster's nodes: R/shards.R)
    dev <- if (family$family != "gaussian") object$sig2 * sum(w) else object$deviance
    aic <- family$aic(y, 1, object$fitted.values, w, dev)
  }                                            # extended families: efam_finish()
  object$aic <- aic + 2 * sum(object$edf)
  object$null.deviance <- sc[["null.deviance"]]
  environment(object$formula) <- environment(object$pred.formula) <-
    environment(object$terms) <- environment(object$pterms) <- .GlobalEnv
  if (!is.null(attr(object$model, "terms")))
    environment(attr(object$model, "terms")) <- .GlobalEnv
  class(object) <- c("gam_gpu", "gam", "glm", "lm")
  object
}

# gam()'s last step (estimate.gam()): where a smooth's constraint for
# prediction differs from its constraint for the fit (a t2() smooth's
# null space constraint: gam.setup()'s Xp, with modCon = 0), the
# coefficients and their covariances Vp and Ve go to the prediction
# parameterisation by G$P; the rest stays in the fit's, as in gam().
prediction_parameters <- function(fit, G) {
  P <- G$P
  if (is.null(P)) return(fit)
  nm <- names(fit$coefficients)
  fit$coefficients <- stats::setNames(as.numeric(P %*% fit$coefficients), nm)
  for (v in c("Vp", "Ve")) {
    V <- P %*% fit[[v]] %*% t(P)
    dimnames(V) <- dimnames(fit[[v]])
    fit[[v]] <- V
  }
  fit
}

# Why the fit ran where it ran, in words, for fit$device$reason.
device_reason <- function(policy, backend, fallback) {
  if (backend == "cuda")
    return(sprintf("device policy \"%s\": fitted on the GPU", policy))
  if (backend == "cluster")
    return(sprintf("device policy \"%s\" on each node of a parallel cluster (fit$device$cluster)",
                   policy))
  if (policy == "off")
    return("device policy \"off\": fitted on the CPU")
  paste("fell back to the CPU:", fallback)
}

# fit$device for the engine's result res of the fit's state f: clock the
# elapsed times at gam_gpu()'s start (t0), before the engine's fit (t1),
# after it (t2) and at its end (t3); t_sel the route's selection time.
device_report <- function(f, res, policy, clock, t_sel) {
  sc <- res$scalars
  dt <- res$device.times
  t0 <- clock[["t0"]]; t1 <- clock[["t1"]]; t2 <- clock[["t2"]]; t3 <- clock[["t3"]]
  dev <- list(
    backend = res$backend,
    reason = device_reason(policy, res$backend,
                           if (nzchar(res$fallback)) res$fallback else f$small),
    placement = res$placement,
    # "recipe": X was built by the backend from the covariates (on the
    # device for a GPU fit); "matrix": X was built in R and handed over
    model_matrix = f$x_source,
    # with "matrix", why (which term has no C evaluator, or the option)
    model_matrix_reason = f$x_reason,
    # setup: mgcv's setup, then the engine's (allocating the results,
    # starting the backend, building or copying X, copying the data);
    # iterations: penalized IRLS with REML; postproc: everything after
    # (covariances, EDFs, leverages, the final vectors, the gam object)
    # selection: a gam() method's choice of smoothing parameters before
    # the engine's fit (the outer iteration, GCV's magic()); 0 for fREML,
    # whose REML Newton is the engine's, within its iterations
    timings = c(setup = t1 - t0 - t_sel + dt[["pre"]],
                selection = t_sel,
                iterations = sc[["t.iterations"]],
                postproc = sc[["t.postproc"]] + (t3 - t2) +
                  max(0, (t2 - t1) - dt[["pre"]] - sc[["t.iterations"]] - sc[["t.postproc"]])),
    # on the device: copies of the data and results (load, fetch), the
    # row-wise kernels with their small result copies (every IRLS pass and
    # the leverage pass), and what the engine did on the host meanwhile (the
    # p x p REML Newton and post-processing)
    split = if (res$backend == "cuda")
      c(transfer = dt[["transfer"]], build = dt[["build"]], kernels = dt[["rows"]],
        host = max(0, sc[["t.iterations"]] + sc[["t.postproc"]] - dt[["rows"]])),
    counters = res$counters,
    # host threads of the REML optimizer's p x p products (1: no pool)
    reml_threads = as.integer(sc[["reml.threads"]]))
  if (f$dots$discrete) dev$discrete <- .gg_discrete_note
  # (a CPU fit: which weighted Gram product it took, and R's BLAS)
  if (identical(res$backend, "cpu"))
    dev$cpu_gram <- if (startsWith(res$placement, "host (sparse rows"))
      "gamgpu's sparse rows (X = S M, options(gamgpu.cpu_x)): no dense X, no BLAS products of n rows"
    else cpu_gram_note(f$p)
  f$route$device(dev, f)
}

#' @export
print.gam_gpu <- function(x, ...) {
  NextMethod()
  d <- x$device
  if (!is.null(d)) {
    tm <- d$timings
    cat(sprintf("Device: %s (%s)\n", d$backend, d$reason))
    cat(sprintf("Time: setup %.3fs, %siterations %.3fs, post-processing %.3fs (%d IRLS iteration%s)\n",
                tm[["setup"]],
                if (isTRUE(tm[["selection"]] > 0))
                  sprintf("smoothing parameter selection %.3fs, ", tm[["selection"]]) else "",
                tm[["iterations"]], tm[["postproc"]], as.integer(x$iter),
                if (x$iter == 1) "" else "s"))
    if (!is.null(d$model_matrix_reason))
      cat(sprintf("Model matrix: built in R (%s)\n", d$model_matrix_reason))
    if (!is.null(x$shards))
      cat(sprintf("Rows: %s on %d nodes; the object's n-vectors hold the set-up sample's %d (fit$shards)\n",
                  format(x$shards$rows, big.mark = ","), as.integer(x$shards$nodes),
                  as.integer(x$shards$sample_rows)))
    if (!is.null(d$split))
      cat(sprintf("Device: %s; transfers %.3fs, X built %.3fs, kernels %.3fs, host REML and post-processing %.3fs\n",
                  d$placement, d$split[["transfer"]], d$split[["build"]], d$split[["kernels"]],
                  d$split[["host"]]))
  }
  invisible(x)
}
