# gam_gpu()'s third step: the rows the engine fits -- the response as the
# family takes it (binomial trials, censored responses, an extended
# family's initialisation), the prior weights and the offset -- checked in
# one pass in C (src/setup/setup_stats.c).

# Fills the fit's state f (R/fit_setup.R) with y, w, offset (NULL when all
# zero), trials (binomial trials per row, or NULL), unit_weights, the family
# as the engine takes it (eng_fam) and an extended family's settings (ef).
fit_rows <- function(f) {
  G <- f$G
  family <- f$family
  r <- response_rows(G$y, as.numeric(G$w), family)
  y <- r$y
  w <- r$w
  trials <- r$trials
  offset <- as.numeric(G$offset)
  if (length(offset) != f$n) offset <- NULL
  ## one pass over y, w and the offset in C: flags, y's range
  chk <- .Call(gg_check_rows_r, y, w, offset, f$control$nthreads)
  check_rows(chk)
  eng_fam <- engine_family(family)
  check_support(family, eng_fam, chk)
  if (chk[["o_nonzero"]] == 0) offset <- NULL
  ## an extended family: bgam.fit's preinitialize and initialize, then its
  ## parameters and scale for the engine (R/families.R)
  ef <- NULL
  if (isTRUE(eng_fam$efam)) {
    pre <- efam_prepare(family, y, w)
    y <- pre$y
    family <- pre$family
    # (gam()'s REML or ML: the engine fits at the theta and scale the
    # outer iteration chooses)
    if (f$route$name != "efam_outer") ef <- efam_spec(family, f$scale, y)
    eng_fam <- engine_family(family)
  }
  f$y <- y
  f$w <- w
  f$offset <- offset
  f$trials <- trials
  f$unit_weights <- chk[["w_not_one"]] == 0
  f$n_nonzero <- sum(w != 0)     # (rows of nonzero weight: GCV's n, magic()'s n.score)
  f$family <- family
  f$eng_fam <- eng_fam
  f$ef <- ef
  invisible(f)
}

# The response as the family takes it from the model frame's response y
# and prior weights w: binomial trials (cbind(successes, failures): the
# proportion, w times the trials), a binomial factor as 0/1, a censored
# family's response; list(y, w, trials).
response_rows <- function(y, w, family) {
  binom <- family$family %in% c("binomial", "quasibinomial")
  trials <- NULL                      # binomial trials per row (family$ls's n)
  if (binom && is.matrix(y) && ncol(y) == 2L) {
    if (any(!is.finite(y)) || any(y < 0))
      gamgpu_abort("gamgpu_bad_response",
                   "binomial counts in cbind(successes, failures) must be finite and non-negative")
    nt <- y[, 1] + y[, 2]
    y <- ifelse(nt == 0, 0, y[, 1] / nt)
    w <- w * nt
    trials <- nt
  } else if (binom && is.factor(y)) {
    y <- as.numeric(y != levels(y)[1L])
  } else if (is_censored_family(family)) {
    y <- censored_response(y, family)
  } else if (is_gfam(family)) {
    y <- gfam_response(y, family)
  } else if (is.matrix(y) && ncol(y) > 1L) {
    gamgpu_abort("gamgpu_bad_response",
                 paste("a matrix response is only allowed for binomial families and the",
                       "censored families cnorm(), clog() and cpois()"))
  }
  list(y = y_double(y), w = w, trials = trials)
}

# The rows' pass (gg_check_rows_r's flags) checked: weights, response and
# offset finite, some weight positive.
check_rows <- function(chk) {
  if (chk[["w_bad"]] != 0)
    gamgpu_abort("gamgpu_bad_weights", "weights must be finite and non-negative")
  if (chk[["w_positive"]] == 0) gamgpu_abort("gamgpu_bad_weights", "all weights are zero")
  if (chk[["y_bad"]] != 0)
    gamgpu_abort("gamgpu_bad_response", "the response has non-finite values")
  if (chk[["o_nonzero"]] != 0 && chk[["o_bad"]] != 0)
    gamgpu_abort("gamgpu_bad_input", "the offset has non-finite values")
  invisible(TRUE)
}

# The response within the family's support (y's range from the rows' pass).
check_support <- function(family, eng_fam, chk) {
  bad <- switch(eng_fam$name,
                binomial = , quasibinomial = , betar = chk[["y_min"]] < 0 || chk[["y_max"]] > 1,
                poisson = , quasipoisson = , negbin = , tweedie = , tw = chk[["y_min"]] < 0,
                Gamma = , inverse.gaussian = chk[["y_min"]] <= 0,
                FALSE)
  if (bad)
    gamgpu_abort("gamgpu_bad_response",
                 sprintf("the response is outside the support of the %s family%s",
                         family$family,
                         switch(eng_fam$name,
                                binomial = , quasibinomial = , betar = " (must be in [0, 1])",
                                poisson = , quasipoisson = , negbin = , tweedie = , tw = " (must be >= 0)",
                                Gamma = , inverse.gaussian = " (must be > 0)", "")))
  invisible(TRUE)
}
