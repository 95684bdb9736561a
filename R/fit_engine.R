# gam_gpu()'s fourth step: the engine's fit.  X (as numbers, or as the
# recipe the backend builds it from: on the device for a GPU fit), the
# model session that loads the rows and builds X once (R/session.R), the
# route's choice of smoothing parameters against it, the engine's settings
# and its penalized IRLS.

# Fills f with X (a matrix, or its recipe), x_reason (why X was built in
# R, naming the term; NULL for a recipe) and the plan (the CPU where the
# model is too small for the device under "auto": `small` says so).
fit_model_matrix <- function(f) {
  G <- f$G
  n <- f$n
  control <- f$control
  ## (its threads and forked workers within control nthreads, as the fit's;
  ## where mgcv's setup built X on every row, a CPU fit still takes its
  ## recipe when the rows are sparse: sparse_rows_recipe())
  X <- if (nrow(G$X) == n) {
    rec <- if (f$route$outer) sparse_rows_recipe(G, n, f$plan, control)
    if (!is.null(rec)) rec else
      no_recipe(if (is.null(attr(G, "gg_x_reason")))
        "mgcv's setup built X on every row (n <= chunk.size)" else attr(G, "gg_x_reason"))
  } else model_matrix_plan(G, G$mf, threads = min(setup_threads(n), control$nthreads),
                           dev = device_of(f$plan))
  f$x_reason <- NULL
  if (inherits(X, "gg_no_recipe")) {
    f$x_reason <- attr(X, "reason")
    X <- if (nrow(G$X) == n) G$X else
      full_model_matrix(G, G$mf, cores = min(setup_cores(n), control$nthreads))
  }
  if (is.matrix(X)) {
    dimnames(X) <- NULL
    attr(X, "model.offset") <- NULL
    if (!is.double(X)) storage.mode(X) <- "double"
  }
  f$X <- X
  f$x_source <- if (is.matrix(X)) "matrix" else "recipe"
  f$small <- auto_too_small(f$plan, n, f$p)
  if (nzchar(f$small)) {
    record_fallback("engine", f$small)
    f$plan$mode <- 0L
  }
  invisible(f)
}

# For a CPU fit by gam()'s outer iteration, whose X mgcv's setup built on
# every row: the model matrix's recipe where the CPU backend would take it
# as sparse rows (src/cpu/xsparse.h, options(gamgpu.cpu_x)), whose many
# products then cost a row's few entries squared rather than p^2; else
# NULL (X stays mgcv's).  (A route of one product -- GCV.Cp's additive
# model -- keeps mgcv's X: its recipe costs more than it saves.)
sparse_rows_recipe <- function(G, n, plan, control) {
  o <- cpu_x_option()
  if (plan$mode != 0L || o == "dense" || (o == "auto" && n < 50000)) return(NULL)
  rec <- model_matrix_plan(G, G$mf, threads = min(setup_threads(n), control$nthreads))
  if (inherits(rec, "gg_no_recipe") || !.Call(gg_xsparse_takes_r, rec)) return(NULL)
  rec
}

# Under "auto", a model this small fits faster on the CPU than the device's
# fixed costs (launches, copies) allow: the threshold is option
# gamgpu.auto_min_rows (rows), measured with bench/auto_threshold.R on an
# H200: after setup, the device was 1.35x (gaussian) and 1.15x (binomial)
# faster than the CPU engine at n = 2000, and 2.5x / 5.9x at n = 1e5.
# Returns the reason when the CPU is chosen, else "".
auto_too_small <- function(plan, n, p) {
  min_rows <- getOption("gamgpu.auto_min_rows", 2000)
  if (plan$mode != 1L || n >= min_rows) return("")
  sprintf("device policy \"auto\": %d rows is below the device threshold of %d (option gamgpu.auto_min_rows)",
          n, as.integer(min_rows))
}

# The engine's settings for the route's fit (the route amends them).
engine_spec <- function(f) {
  eng_fam <- f$eng_fam
  ef <- f$ef
  spec <- list(nobs = f$n, nobs_scale = f$n, scale = if (is.null(ef)) f$scale else ef$scale,
               gamma = f$gamma,
               additive = f$family$family == "gaussian" && f$family$link == "identity",
               ef = ef$ef,
               yvar = if (!is.null(f$yvar)) f$yvar else lean_var(f$y, f$control$nthreads),
               hat = f$control$hat,
               theta_start = f$theta_start, theta = eng_fam$theta,
               theta_estimated = as.integer(eng_fam$estimated),
               theta_rule = if (!is.null(ef) && (isTRUE(eng_fam$estimated) || ef$ef$scale_est == 1))
                 efam_theta_rule() else 0L,
               ml = 0L)
  f$route$spec(f, spec, unclass(f$control))
}

# The engine's penalized IRLS in the model session f$ses at the settings
# rs = list(spec, ctl) of engine_spec(); a rank-deficient fit fitted again
# with bam()'s Mp where that moves the optimum (R/rank_deficient.R).
# Returns the engine's result; sets f$rd.
fit_engine <- function(f, rs) {
  G <- f$G
  spec <- rs$spec
  L <- f$L
  L <- if (!is.null(L)) { L <- unname(L); storage.mode(L) <- "double"; L }
  # (gam()'s fixed penalty G$H: one more penalty, on every coefficient, at
  # log smoothing parameter 0; the outer iteration chose the others)
  S_fit <- f$S
  off_fit <- G$off
  lsp0_fit <- f$lsp0
  if (!is.null(G$H)) {
    S_fit <- c(f$S, list(G$H + 0))
    off_fit <- c(G$off, 1L)
    lsp0_fit <- c(f$lsp0, 0)
    L <- matrix(0, length(lsp0_fit), 0L)
  }
  f$L <- L
  run <- function(spec)
    .Call(gg_fit, f$ses$ptr, f$eng_fam$name, engine_link(f$family), S_fit,
          as.integer(off_fit), L, if (length(S_fit)) as.numeric(lsp0_fit) else NULL,
          spec, rs$ctl)
  res <- run(spec)
  if (!is.null(G$H)) res$rho.full <- res$rho.full[seq_along(f$S)]
  # with the scale estimated by REML, bam()'s Mp moves the optimum: fitted
  # again with it where it differs
  f$rd <- f$route$name %in% c("fREML", "engine_gam") && f$method %in% c("fREML", "REML") &&
    res$scalars[["rank"]] < f$p
  if (f$rd && length(res$rho) > ncol(res$db.drho)) {
    Mp <- bam_Mp(G, res)
    if (!is.null(Mp) && Mp != res$scalars[["Mp"]]) {
      spec$Mp <- Mp
      res <- run(spec)
    }
  }
  res
}
