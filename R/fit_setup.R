# gam_gpu()'s second step: mgcv's setup of the model (bases, constraints,
# penalties, model frame: bam(fit = FALSE), by gg_setup() in R/setup.R),
# then the fit's state -- the environment that every later step, and the
# route's own steps (R/route.R), read and fill -- with the free smoothing
# parameters.

# mgcv's setup for the call `mc` (gam_gpu()'s match.call(expand.dots =
# TRUE)) in environment env, with the arguments a of fit_arguments(); data
# a list holding the data as evaluated once (or NULL when the call gives
# none).  Returns G, its scale by bam()'s rule and gam()'s fixed penalty H.
model_setup <- function(mc, env, a, data) {
  ## gamgpu's own arguments leave the call; discrete = TRUE would build the
  ## bases on discretized covariates (and X not as the model matrix), so the
  ## setup is bam(discrete = FALSE)'s
  mc[[1L]] <- quote(mgcv::bam)
  mc$device <- mc$control <- NULL
  mc <- mc[!(names(mc) %in% .gg_arguments$argument[.gg_arguments$route == "gamgpu"])]
  if (a$dots$fit) mc$sp <- NULL                 # applied to L and lsp0 later
  mc$family <- a$family
  mc$method <- "fREML"
  mc$fit <- FALSE
  mc$chunk.size <- a$control$chunk.size
  # (the setup takes the data as evaluated once -- the promise that
  # check_variables() forced -- so that a data expression that draws
  # random numbers is not drawn a second time)
  setup_env <- env
  if (!is.null(data)) {
    setup_env <- new.env(parent = env)
    assign(".gg_data", data[[1L]], envir = setup_env)
    mc$data <- quote(.gg_data)
  }
  basis_facts_option()
  # gam()'s methods get gam()'s bases (R/setup.R): for "ML" they are
  # required, for "REML", "GCV.Cp" and "GACV.Cp" they make the fit gam()'s to
  # rounding rather than to the optimizer's tolerance; the lean setup
  # builds them where it takes the call, gam(fit = FALSE) elsewhere
  G <- withCallingHandlers(
    tryCatch(gg_setup(mc, setup_env, a$control$nthreads, a$method != "fREML", a$plan,
                      a$method_given),
             error = classify_setup_error),
    warning = function(w) {
      if (grepl("chunk.size", conditionMessage(w), fixed = TRUE))
        invokeRestart("muffleWarning")
    })
  # bam()'s scale rule: 0 is 1 for binomial and poisson, else estimated
  scale <- a$scale
  if (scale == 0) scale <- if (a$family$family %in% c("binomial", "poisson")) 1 else -1
  G$scale <- scale
  G$H <- fixed_penalty(G, a$dots$min.sp, a$dots$H)
  G
}

# mgcv's setup failing: its error as a classed condition.
classify_setup_error <- function(e) {
  if (device_error(e)) stop(e)           # the device's, under "required"
  msg <- conditionMessage(e)
  cls <- if (grepl("more coefficients than data", msg, fixed = TRUE) ||
             grepl("fewer unique covariate combinations", msg, fixed = TRUE))
    "gamgpu_too_many_coefficients"
  else if (grepl("non-NA) data", msg, fixed = TRUE) ||
           grepl("0 (non-NA) cases", msg, fixed = TRUE) ||
           grepl("no (non-missing) observations", msg, fixed = TRUE))
    "gamgpu_no_data"
  else if (grepl("not found", msg, fixed = TRUE))
    "gamgpu_unknown_variable"
  else if (grepl("missing values in object", msg, fixed = TRUE))  # na.action = na.fail
    "gamgpu_missing_values"
  else "gamgpu_setup_failed"
  gamgpu_abort(cls, paste("model setup failed:", msg), call = NULL)
}

# The fit's state (an environment) from the setup G and the arguments a:
# G, n, p, the family, route, scale (a scale given, else G's), control, the
# device plan, AR1 settings, the penalties S; the free smoothing
# parameters (L, lsp0, sp.names, nfree, theta_start) after the user's sp.
fit_state <- function(G, a) {
  f <- new.env(parent = emptyenv())
  f$G <- G
  f$dots <- a$dots
  f$family <- a$family
  f$route <- a$route
  f$method <- a$method
  f$control <- a$control
  f$plan <- a$plan
  f$gamma <- a$gamma
  f$sp <- a$sp
  scale <- if (a$scale > 0) a$scale else G$scale
  # gam() fits negbin(theta) at scale 1 with every method, whatever 'scale'
  # says (estimate.gam()), GCV.Cp as UBRE then
  if (a$route$outer && is_negbin(a$family)) scale <- 1
  f$scale <- scale
  if (a$dots$gc.level > 0) gc()
  n <- nrow(G$mf)
  if (n < 1L) gamgpu_abort("gamgpu_no_data", "no rows left after NA handling and subsetting")
  f$n <- n
  ## AR1 residuals (bam's rho and AR.start; R/ar1.R)
  f$ar <- ar1_settings(a$rho, G, a$family)
  p <- ncol(G$X)
  if (p > n)
    gamgpu_abort("gamgpu_too_many_coefficients",
                 sprintf("the model has %d coefficients but only %d rows of data", p, n))
  f$p <- p
  if (!is.null(G$smooth)) for (s in G$smooth)
    if (!is.null(s$updateS))
      gamgpu_abort("gamgpu_unsupported_smooth",
                   sprintf("smooth '%s' has a non-linear penalty, not supported", s$label))
  f$S <- lapply(G$S, function(s) { storage.mode(s) <- "double"; s })
  free_smoothing_parameters(f)
  f
}

# The smoothing parameters the fit chooses: G's L and lsp0 with the
# user's sp >= 0 fixed in lsp0 (as bam() does for a supplied G), and where
# the engine's REML starts (gam()'s in.out).
free_smoothing_parameters <- function(f) {
  G <- f$G
  sp <- f$sp
  L <- G$L
  lsp0 <- G$lsp0
  nfree <- if (is.null(L)) length(G$sp) else ncol(L)
  sp.names <- if (is.null(L)) names(G$sp) else colnames(L)
  if (is.null(sp.names) && length(G$sp) == nfree) sp.names <- names(G$sp)
  if (!is.null(sp)) {
    if (length(sp) != nfree)
      gamgpu_abort("gamgpu_bad_sp",
                   sprintf("'sp' has length %d but the model has %d smoothing parameters",
                           length(sp), nfree))
    if (any(sp >= 0)) {
      if (is.null(L)) L <- diag(length(G$sp))
      ind <- sp >= 0
      spind <- log(sp[ind])
      spind[!is.finite(spind)] <- -30
      lsp0 <- lsp0 + drop(L[, ind, drop = FALSE] %*% spind)
      L <- L[, !ind, drop = FALSE]
      sp.names <- sp.names[!ind]
    }
  }
  f$L <- L
  f$lsp0 <- lsp0
  f$nfree <- nfree
  f$sp.names <- sp.names
  # (an extended family's scale is known to each REML fit: efam_spec())
  f$theta_start <- in_out_start(f$dots$in.out, nfree,
                                if (is.null(sp)) logical(nfree) else sp >= 0,
                                f$scale <= 0 && is.null(efam_name(f$family)))
  invisible(f)
}
