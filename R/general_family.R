# The general families: mgcv's "general.family" objects, whose likelihood
# is not a sum of per-row deviances of one linear predictor (cox.ph()'s
# partial likelihood; the location-scale families' several predictors).
# gam() fits them with gam.fit5(): a full Newton iteration on the
# penalized log likelihood inside newton()'s outer iteration on the
# Laplace approximate REML, around the family's ll(), which returns the log
# likelihood with its derivatives in beta and those of its Hessian in the
# log smoothing parameters.
#
# gamgpu's route runs that iteration as gam() runs it -- mgcv's own code,
# through gam() on the call's arguments -- with the family's ll() replaced
# by gamgpu's: the work over the rows (for cox.ph(), the risk sets' prefix
# sums and weighted Gram products of src/family_cox.c) in gamgpu's engine,
# the p x p Newton and REML work in mgcv's.  The fitted object is gam()'s,
# with the family's own ll() put back and fit$device beside it.

# The general families gamgpu fits, by the name their ll() has here; NULL
# for any other family.
general_family_name <- function(family) {
  if (!inherits(family, "general.family")) return(NULL)
  if (identical(family$family, "Cox PH")) return("cox.ph")
  NULL
}

# cox.ph()'s ll(), with mgcv's arguments and results: y the times (or
# cbind(time, stratum)) in decreasing order of time within strata, as the
# family's preinitialize sorts them; wt the event indicators (1: event).
# deriv 0: l; 1: and lb, lbb; 2: and d1H[i] = tr(fh dH/drho_i); 3: d1H a
# list of dH/drho_i given d1b; 4: and trHid2H, the traces of Hp's
# pseudo-inverse (its first `rank` eigenvalues, scaled by D) with H's
# second derivatives given d2b.  (mgcv's ll() also returns those second
# derivatives' leading diagonals in Hp's eigenvectors, d2H, which
# gam.fit5() does not use: here NULL.)
cox_ll <- function(y, X, coef, wt, family, offset = NULL, deriv = 0, d1b = 0, d2b = 0,
                   Hp = NULL, rank = 0, fh = NULL, D = NULL, ...) {
  t0 <- proc.time()[["elapsed"]]
  level <- deriv - 1L
  clevel <- if (level == 1L) 2L else level
  p <- ncol(X)
  eta <- drop(X %*% coef)
  if (length(offset)) eta <- eta + offset
  W <- NULL
  if (clevel >= 3L) {
    ev <- if (is.list(fh)) fh else eigen(Hp, symmetric = TRUE)
    lam <- ev$values
    if (rank < p) lam[(rank + 1L):p] <- 0
    DV <- ev$vectors * D
    W <- DV %*% ((ifelse(lam > 0, 1 / lam, 0)) * t(DV))
  }
  if (clevel < 2L) d1b <- d2b <- NULL
  if (clevel < 3L) d2b <- NULL
  if (!is.null(d1b)) d1b <- matrix(as.double(d1b), p)
  if (!is.null(d2b)) d2b <- matrix(as.double(d2b), p)
  storage.mode(X) <- "double"
  tm <- if (is.matrix(y)) y[, 1L] else y
  rows <- if (is.matrix(y)) lapply(unique(y[, 2L]), function(s) which(y[, 2L] == s))
          else list(NULL)
  ev_ind <- as.integer(wt)
  out <- NULL
  for (ind in rows) {
    ts <- if (is.null(ind)) tm else tm[ind]
    times <- unique(ts)
    o <- .Call(gg_cox_ll_r,
               if (is.null(ind)) eta else eta[ind],
               if (is.null(ind)) X else X[ind, , drop = FALSE],
               match(ts, times), if (is.null(ind)) ev_ind else ev_ind[ind],
               length(times), clevel, d1b, d2b, W)
    out <- if (is.null(out)) o else
      Map(function(a, b) if (is.null(a)) NULL else a + b, out, o)
  }
  d1H <- NULL
  if (level == 1L) {
    d1H <- vapply(seq_len(dim(out$d1H)[3L]), function(i) sum(fh * out$d1H[, , i]), 0)
  } else if (level >= 2L) {
    d1H <- lapply(seq_len(dim(out$d1H)[3L]), function(i) out$d1H[, , i])
  }
  env <- environment(sys.function())
  if (exists("calls", envir = env, inherits = FALSE)) {     # (general_family_with_ll())
    env$calls <- env$calls + 1L
    env$seconds <- env$seconds + (proc.time()[["elapsed"]] - t0)
  }
  list(l = out$l, lb = out$lb, lbb = out$lbb, d1H = d1H,
       trHid2H = if (level >= 3L) out$trHid2H)
}

# The family's ll() replaced by gamgpu's, in an environment of its own
# that counts its calls and seconds.
general_family_with_ll <- function(family, name) {
  ll <- switch(name, cox.ph = cox_ll)
  env <- new.env(parent = asNamespace("gamgpu"))
  env$calls <- 0L
  env$seconds <- 0
  environment(ll) <- env
  family$ll <- ll
  family
}

# gam_gpu() for a general family: gam()'s fit on the call's arguments with
# gamgpu's ll() (see the top of this file).  cl: gam_gpu()'s call, env its
# frame; the arguments already read by gam_gpu() beside it.
general_family_fit <- function(cl, env, family, method, control, device, dots, t0) {
  name <- general_family_name(family)
  if (identical(method, "fREML"))
    gamgpu_abort("gamgpu_unsupported_method",
                 sprintf(paste("method = \"fREML\" is bam()'s, and bam() does not fit general",
                               "families such as %s(): use method = \"REML\" (gam()'s Laplace",
                               "approximate REML, by which gam() fits them)"), name), call = NULL)
  if (!is.null(dots$optimizer) && !identical(dots$optimizer[1L], "outer"))
    gamgpu_abort("gamgpu_unsupported_argument",
                 sprintf("optimizer \"%s\": gamgpu fits %s() by gam()'s outer Newton iteration only",
                         dots$optimizer[1L], name), arguments = "optimizer", call = NULL)
  if (!is.null(cl$rho) && !identical(eval(cl$rho, env), 0))
    gamgpu_abort("gamgpu_unsupported_argument",
                 sprintf("AR1 residuals (rho) are bam()'s, which does not fit %s(): drop rho",
                         name), arguments = "rho", call = NULL)
  if (isTRUE(dots$discrete)) inform_discrete_exact()
  control <- as_gam_gpu_control(control)
  for (nm in c("nthreads", "chunk.size"))
    if (!is.null(dots[[nm]])) control <- control_from_argument(control, nm, dots[[nm]])
  given <- attr(control, "given")
  if ("newton.maxit" %in% given && control$newton.maxit != 200L)
    gamgpu_abort("gamgpu_bad_control",
                 sprintf(paste("control newton.maxit: gam()'s outer iteration, which fits %s(),",
                               "takes at most 200 Newton steps and has no setting for it"), name))
  policy <- check_policy(device)
  why <- sprintf("%s()'s rows have no device kernels yet: the CPU engine ran them", name)
  if (policy == "required")
    gamgpu_abort("gamgpu_device_unavailable",
                 sprintf("device = \"required\", but %s; use device = \"auto\" or \"off\"", why),
                 call = NULL)
  if (policy == "auto") record_fallback("general_family", why)

  fam <- general_family_with_ll(family, name)
  gcall <- cl
  gcall[[1L]] <- quote(mgcv::gam)
  drop_args <- c("device", "control", "chunk.size", "rho", "AR.start", "discrete", "nthreads",
                 "cluster", "samfrac", "use.chol", "gc.level", "coef")
  gcall <- gcall[!(names(gcall) %in% drop_args)]
  gcall$family <- fam
  gcall$method <- method
  newton <- if ("newton.tol" %in% given) list(conv.tol = control$newton.tol) else list()
  gcall$control <- mgcv::gam.control(nthreads = control$nthreads, epsilon = control$epsilon,
                                     maxit = control$maxit, trace = control$trace,
                                     newton = newton)
  if (!is.null(dots$G)) {
    # (gam()'s setup object: its family, with gamgpu's ll())
    G <- dots$G
    G$family <- general_family_with_ll(G$family, name)
    gcall$G <- G
    gcall$family <- NULL
  }
  t1 <- proc.time()[["elapsed"]]
  object <- withCallingHandlers(
    tryCatch(eval(gcall, env), error = function(e) {
      if (inherits(e, "gamgpu_error")) stop(e)
      gamgpu_abort("gamgpu_setup_failed", paste0("gam() could not fit the model: ",
                                                 conditionMessage(e)))
    }))
  if (!inherits(object, "gam")) return(object)               # fit = FALSE: the setup
  ll_env <- environment(object$family$ll)
  object$family$ll <- family$ll
  object$call <- cl
  if (dots$gc.level > 0) gc()
  t2 <- proc.time()[["elapsed"]]
  object$device <- list(
    backend = "cpu",
    reason = device_reason(policy, "cpu", why),
    placement = "host",
    model_matrix = "matrix",
    model_matrix_reason = sprintf("gam()'s own setup built X on every row (%s(), a general family)",
                                  name),
    route = sprintf(paste("general family: gam()'s Newton iteration (gam.fit5) and outer",
                          "REML iteration, %s()'s log likelihood and its derivatives by",
                          "gamgpu's engine"), name),
    ll_calls = ll_env$calls,
    # setup: gam_gpu()'s checks; iterations: gam()'s setup, fit and
    # post-processing, of which ll_seconds in gamgpu's ll()
    timings = c(setup = t1 - t0, iterations = t2 - t1, postproc = 0),
    ll_seconds = ll_env$seconds,
    cpu_gram = cpu_gram_note(length(object$coefficients)))
  class(object) <- c("gam_gpu", class(object))
  object
}
