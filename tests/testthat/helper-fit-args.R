# The arguments of a fit's .Calls as gam_gpu() prepares them (from
# mgcv's own setup), for tests that call the C entry point directly: its
# checks of spec and control, and its behaviour under gctorture().
gg_fit_args <- function(formula, data, family = stats::gaussian(),
                        control = gam_gpu_control(nthreads = 1L)) {
  G <- mgcv::gam(formula, family = family, data = data, fit = FALSE)
  X <- G$X
  dimnames(X) <- NULL
  y <- as.numeric(G$y)
  list(X = X, y = y, w = as.numeric(G$w), offset = NULL,
       family = family$family, link = family$link,
       S = lapply(G$S, function(s) { storage.mode(s) <- "double"; s }),
       off = as.integer(G$off), L = NULL, lsp0 = as.numeric(G$lsp0),
       spec = list(nobs = nrow(X),
                   scale = if (family$family %in% c("binomial", "poisson")) 1 else -1,
                   gamma = 1,
                   additive = family$family == "gaussian" && family$link == "identity",
                   yvar = stats::var(y), hat = TRUE, device_mode = 0L, device_ordinal = 0L),
       control = unclass(control))
}

# .Call(gg_fit, ...) on such arguments, with some of them replaced: the
# data, the device settings and the control's threads and row block open
# the model session (gg_session_open_r), the rest go to the fit
call_gg_fit <- function(a, ...) {
  a <- utils::modifyList(a, list(...), keep.null = TRUE)
  load_keys <- c("device_mode", "device_ordinal", "unit_weights", "ar_rho", "ar_start")
  ses <- .Call(gamgpu:::gg_session_open_r, a$X, a$y, a$w, a$offset,
               a$spec[intersect(names(a$spec), load_keys)], a$control)
  on.exit(.Call(gamgpu:::gg_session_close_r, ses))
  .Call(gamgpu:::gg_fit, ses, a$family, a$link, a$S, a$off, a$L, a$lsp0,
        a$spec[setdiff(names(a$spec), load_keys)], a$control)
}
