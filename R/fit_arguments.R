# gam_gpu()'s first step: every argument checked before any work on the
# rows, and the route the call asks for (R/route.R) chosen, its refusals
# said there.  What the later steps read is returned as one list.

# The checked arguments of a gam_gpu() call: `dots` from read_dots()
# (R/arguments.R); the others as given.  Returns list(dots, G (a supplied
# setup object, or NULL), family, method, method_given, route, scale,
# control, policy, plan, rho, gamma, sp); for a general family only
# list(general = TRUE, family, method): its own route checks the rest.
fit_arguments <- function(cl, env, dots, family, method, gamma, sp, device, control) {
  G <- dots$G
  scale <- dots$scale
  if (!is.null(G)) {
    check_setup_object(G, names(cl)[-1L], dots$fit)
    if (inherits(G, "gam.prefit"))
      G <- as_bam_setup(G, why = "G, gam()'s setup object, holds X")
    family <- G$family
  }
  family <- resolve_family(family, env)
  if (!is.null(efam_name(family)) && is.null(family$scale) && identical(method, "fREML")) {
    # bam() fits an extended family without a scale of its own at scale 1
    # (gam()'s methods take a scale given: R/outer_efam.R)
    if (scale != 0)
      gamgpu_abort("gamgpu_unsupported_argument",
                   sprintf(paste("'scale' with %s(): bam() fits this family at scale 1",
                                 "whatever 'scale' says; drop 'scale'"), efam_name(family)),
                   arguments = "scale")
    scale <- 1
  }
  check_method(method)
  # a general family (cox.ph(), the location-scale families, multinom()):
  # gam()'s gam.fit5 route, with gam()'s optimizers (R/general_family.R)
  if (!is.null(general_family_name(family)))
    return(list(general = TRUE, family = family, method = method))
  check_optimizer(dots$optimizer, method)
  check_fixed_penalty(dots$min.sp, dots$H, method)
  # gam()'s fixed penalty (min.sp, H, or a supplied G's H): fitted by the
  # outer iteration, whose criterion takes it (R/outer.R), for every model
  # (zero bounds, a zero H: no penalty, the fit without them)
  fixed_pen <- any(dots$min.sp != 0) || any(dots$H != 0) || !is.null(G$H)
  if (fixed_pen && identical(method, "fREML"))
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste("the setup object G has gam()'s fixed penalty (H, from min.sp or H),",
                       "which method = \"fREML\" (bam()'s) does not take: use one of gam()'s",
                       "methods (method = \"REML\", ...)"), arguments = "G")
  ar1 <- !is.null(cl$rho) && !identical(eval(cl$rho, env), 0)
  route <- gam_route(family, method, fixed_pen, ar1, dots$in.out)
  ## control: a gam_gpu_control object or a list, checked the same way;
  ## bam()'s nthreads and chunk.size arguments set the same settings
  control <- as_gam_gpu_control(control)
  for (nm in c("nthreads", "chunk.size"))
    if (!is.null(dots[[nm]])) control <- control_from_argument(control, nm, dots[[nm]])
  if (!is.numeric(gamma) || length(gamma) != 1L || !is.finite(gamma) || gamma <= 0)
    gamgpu_abort("gamgpu_bad_input", "'gamma' must be a single positive number")
  if (!is.null(sp) && (!is.numeric(sp) || anyNA(sp)))
    gamgpu_abort("gamgpu_bad_sp", "'sp' must be a numeric vector without NAs")
  policy <- check_policy(device)
  plan <- device_plan(policy, "engine")
  cpu_gram_option()
  if (dots$discrete) inform_discrete_exact()
  ## AR1 residuals: rho checked before mgcv's setup sees it (R/ar1.R)
  rho <- ar1_check_rho(if (is.null(cl$rho)) 0 else eval(cl$rho, env))
  list(dots = dots, G = G, family = family, method = route$method,
       method_given = route$method_given, route = route, scale = scale, control = control,
       policy = policy, plan = plan, rho = rho, gamma = gamma, sp = sp)
}

# 'method': one of gam()'s and bam()'s that gamgpu fits, or a classed
# refusal that says what to use instead.
check_method <- function(method) {
  if (identical(method, "UBRE"))
    gamgpu_abort("gamgpu_bad_method",
                 paste("method = \"UBRE\" is not one of gam()'s: UBRE is what \"GCV.Cp\"",
                       "minimises when the scale is known (give 'scale' > 0)"))
  if (identical(method, "NCV"))
    gamgpu_abort("gamgpu_unsupported_method",
                 paste("method = \"NCV\" (mgcv 1.9's neighbourhood cross-validation) is not",
                       "available in gamgpu yet: use \"REML\" (or \"fREML\"), or mgcv's gam()",
                       "or bam() for NCV"))
  if (!is.character(method) || length(method) != 1L ||
      !(method %in% c("fREML", "REML", "ML", "P-REML", "P-ML", "GCV.Cp", "GACV.Cp")))
    gamgpu_abort("gamgpu_bad_method",
                 paste("'method' must be \"fREML\", \"REML\", \"ML\", \"P-REML\", \"P-ML\",",
                       "\"GCV.Cp\" or \"GACV.Cp\""))
  invisible(method)
}

# Variables the formula names must exist in data or the formula's environment.
check_variables <- function(formula, data, env) {
  if (!inherits(formula, "formula"))
    gamgpu_abort("gamgpu_bad_formula", "'formula' must be a formula", call = NULL)
  gp <- tryCatch(mgcv::interpret.gam(formula), error = function(e)
    gamgpu_abort("gamgpu_bad_formula", conditionMessage(e), call = NULL))
  vars <- all.vars(gp$fake.formula)
  have <- if (is.null(data)) character(0) else names(data)
  fenv <- environment(formula)
  if (is.null(fenv)) fenv <- env
  missing <- vars[!(vars %in% have) &
                    !vapply(vars, exists, logical(1), envir = fenv)]
  if (length(missing))
    gamgpu_abort("gamgpu_unknown_variable",
                 sprintf("variable%s not found in 'data' or the formula's environment: %s",
                         if (length(missing) > 1) "s" else "",
                         paste(missing, collapse = ", ")), call = NULL)
  invisible(TRUE)
}
