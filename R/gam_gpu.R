# gam_gpu(): formula -> mgcv's bam() model setup -> C engine -> an mgcv
# "gam" object.  The setup (bases, constraints, penalties, model frame) is
# mgcv's, so every method written for gam objects works on the result.
# gam_gpu() is one pipeline for every method: the arguments checked, the
# route chosen (R/route.R), mgcv's setup, the rows, X (or its recipe), the
# route's smoothing parameters, the engine's fit, the route's finishing and
# the common one.

.gg_links <- list(
  gaussian = c("identity", "log", "inverse"),
  binomial = c("logit", "probit", "cloglog", "cauchit", "log"),
  quasibinomial = c("logit", "probit", "cloglog", "cauchit", "log"),
  poisson = c("log", "identity", "sqrt"),
  quasipoisson = c("log", "identity", "sqrt"),
  negbin = c("log", "identity", "sqrt"),
  tweedie = c("log", "identity", "sqrt", "inverse"),
  tw = c("log", "identity", "sqrt", "inverse"),
  betar = c("logit", "probit", "cloglog", "cauchit"),
  scat = c("identity", "log", "inverse"),
  ziP = "identity",
  ocat = "identity",
  cnorm = c("identity", "log", "sqrt"),
  clog = c("identity", "log", "sqrt"),
  cpois = c("log", "identity", "sqrt"),
  Gamma = c("inverse", "log", "identity"),
  inverse.gaussian = c("1/mu^2", "inverse", "log", "identity"))
.gg_power_link_families <- c("poisson", "quasipoisson", "negbin", "Gamma", "inverse.gaussian",
                             "tweedie")

# lambda of R's power(lambda) link ("mu^lambda": lambda > 0, not 1), as the
# link's own functions hold it; NULL for any other link.
link_power <- function(family) {
  if (!is.character(family$link) || !startsWith(family$link, "mu^")) return(NULL)
  la <- get0("lambda", envir = environment(family$linkfun), inherits = FALSE)
  if (!is.numeric(la) || length(la) != 1L)
    la <- log(family$linkfun(exp(1)))              # (fix.family.link()'s way)
  if (is.finite(la) && la > 0 && la != 1) la else NULL
}

# The link as the engine's C takes it: its name, or for a power link
# "mu^" and lambda to every digit (the name R gives it rounds lambda).
engine_link <- function(family) {
  la <- link_power(family)
  if (is.null(la)) family$link else sprintf("mu^%.17g", la)
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

# For a CPU fit by gam()'s outer iteration, whose X mgcv's setup built on
# every row: the model matrix's recipe where the CPU backend would take it
# as sparse rows (src/xsparse.h, options(gamgpu.cpu_x)), whose many
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

# Why the fit ran where it ran, in words, for fit$device$reason.
device_reason <- function(policy, backend, fallback) {
  if (backend == "cuda")
    return(sprintf("device policy \"%s\": fitted on the GPU", policy))
  if (policy == "off")
    return("device policy \"off\": fitted on the CPU")
  paste("fell back to the CPU:", fallback)
}

resolve_family <- function(family, env) {
  family <- tryCatch(family, error = function(e)
    gamgpu_abort("gamgpu_bad_family",
                 paste("invalid family:", conditionMessage(e)), call = NULL))
  if (is.character(family)) {
    fname <- family
    family <- tryCatch(get(fname, mode = "function", envir = env),
                       error = function(e) gamgpu_abort(
                         "gamgpu_bad_family",
                         sprintf("unknown family '%s'", fname), call = NULL))
  }
  if (is.function(family))
    family <- tryCatch(family(), error = function(e)
      gamgpu_abort("gamgpu_bad_family", paste("invalid family:",
                                              conditionMessage(e)), call = NULL))
  if (!inherits(family, "family") || !is.character(family$family))
    gamgpu_abort("gamgpu_bad_family", "'family' must be a family object, such as binomial()",
                 call = NULL)
  # (the general families gamgpu fits: R/general_family.R)
  if (!is.null(general_family_name(family))) return(family)
  if (inherits(family, "extended.family") && is.null(efam_name(family)))
    gamgpu_abort("gamgpu_bad_family",
                 sprintf(paste("family '%s' (an mgcv extended family) is not supported;",
                               "of mgcv's extended families gamgpu fits nb(), tw(), betar(),",
                               "scat(), ziP(), ocat(), cnorm(), clog() and cpois(), and of",
                               "the general families cox.ph(), the location-scale families",
                               "(gaulss, ziplss, twlss, gevlss, gammals, gumbls, shash) and",
                               "multinom(); fit this one with mgcv::gam()"), family$family),
                 call = NULL)
  if (identical(efam_name(family), "ocat") && length(family$getTheta()) > 10L)
    gamgpu_abort("gamgpu_bad_family",
                 sprintf(paste("ocat() with R = %d categories: gamgpu fits at most 12",
                               "categories; fit this model with mgcv::bam()"),
                         length(family$getTheta()) + 2L), call = NULL)
  if (is_negbin(family)) {
    theta <- family$getTheta()
    if (!is.numeric(theta) || length(theta) != 1L || !is.finite(theta) || theta <= 0)
      gamgpu_abort("gamgpu_bad_family",
                   paste0("negbin() with theta = ", paste(format(theta), collapse = ", "),
                          ": gamgpu takes one known theta > 0, as negbin(3) (mgcv's search ",
                          "over several theta values is not supported)"), call = NULL)
  }
  links <- .gg_links[[engine_family(family)$name]]
  if (is.null(links))
    gamgpu_abort("gamgpu_bad_family",
                 sprintf("family '%s' is not supported; supported: %s", family$family,
                         paste(names(.gg_links), collapse = ", ")), call = NULL)
  # (R's power(lambda) links, "mu^lambda", for the families of a positive
  # mean: mgcv's Tweedie() takes them by name, R's families as link-glm
  # objects)
  power_ok <- engine_family(family)$name %in% .gg_power_link_families &&
    !is.null(link_power(family))
  if (!(family$link %in% links) && !power_ok)
    gamgpu_abort("gamgpu_bad_link",
                 sprintf("link '%s' is not supported for family '%s' (supported: %s)",
                         family$link, family$family,
                         paste(c(links, if (engine_family(family)$name %in%
                                            .gg_power_link_families) "power()"),
                               collapse = ", ")),
                 call = NULL)
  family
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

#' Fit a generalized additive model with the gamgpu engine
#'
#' Fits the GAM described by an mgcv formula by penalized iteratively
#' re-weighted least squares, choosing the smoothing parameters by fast REML
#' on the working model at every iteration (the performance iteration of
#' \code{mgcv::bam(method = "fREML")}).  The model setup (bases,
#' identifiability constraints, penalties, term names) is mgcv's own,
#' built by \code{bam(..., fit = FALSE)}; the fit runs in C, with every
#' O(n) step (working weights, X'WX, X beta) in a backend: the GPU (CUDA)
#' or the CPU.  When every smooth has a C evaluator ("cr", "cs", "cc",
#' "ps", "bs", "cp", "tp" (any \code{m}), "ts" and "gp" of up to four
#' variables, "re",
#' "fs" and "sz" on one of these,
#' \code{te()}, \code{ti()} and \code{t2()} of up to four such margins,
#' and any of them \code{by} a
#' numeric or a factor), the model matrix is not formed in R: the backend
#' builds it from the covariates and factor codes, on the device for a GPU
#' fit.  Each smooth's C basis is checked against \code{mgcv::PredictMat}
#' on a sample of rows first; \code{ds}, \code{mrf}, \code{so}
#' and others have their columns built in R, and
#' \code{fit$device$model_matrix_reason} names the term.
#'
#' Every argument is honoured with \code{bam()}'s meaning or refused: an
#' argument of \code{bam()} or \code{gam()} that gamgpu does not honour
#' (\code{cluster}, \code{samfrac}, \code{coef}, \code{nei};
#' \code{optimizer} but for gam()'s default; \code{min.sp} and \code{H}
#' with \code{"fREML"}), any
#' other name
#' and any unnamed value beyond the formals is an error of class
#' \code{gamgpu_unsupported_argument} (inheriting \code{gamgpu_error}) that
#' names it and says what to do instead.
#'
#' @param formula an mgcv model formula: \code{s()}, \code{te()}, \code{ti()},
#'   \code{t2()} smooths with any basis mgcv's \code{bam()} accepts,
#'   parametric terms, \code{by=} variables and \code{offset()}.  Not given
#'   with \code{G}.
#' @param family one of \code{gaussian}, \code{binomial},
#'   \code{quasibinomial}, \code{poisson}, \code{quasipoisson}, \code{Gamma},
#'   \code{inverse.gaussian} with one of the links R allows for it;
#'   mgcv's \code{negbin(theta)} with one known theta (links log, sqrt,
#'   identity; the scale estimated, as \code{bam()}) or \code{Tweedie(p)}
#'   with a known power 1 < p <= 2 (links log, identity, sqrt, inverse; the
#'   scale estimated); R's \code{power(lambda)} links for the families of a
#'   positive mean (poisson, quasipoisson, Gamma, inverse.gaussian,
#'   \code{negbin}, \code{Tweedie}, as in \code{Tweedie(1.25,
#'   power(0.1))}); or one of mgcv's extended families \code{nb()},
#'   \code{tw()}, \code{betar()}, \code{scat()}, \code{ziP()},
#'   \code{ocat()} (at most 12 categories) and the censored families
#'   \code{cnorm()}, \code{clog()} and \code{cpois()} (the last two in mgcv
#'   >= 1.9-2), whose response is \code{cbind(y, yat)} as mgcv's (a row
#'   with \code{yat == y} observed, \code{-Inf} left and \code{Inf} right
#'   censored at \code{y}, else censored to the interval between the two;
#'   \code{cnorm()} takes only the matrix, as mgcv's has no deviance for a
#'   vector), each with the links mgcv allows,
#'   their parameters theta estimated between iterations as \code{bam()}'s
#'   \code{estimate.theta()} estimates them (on the device for a GPU fit:
#'   the row sums it needs), or fixed where the family was built with
#'   \code{theta}; \code{tw()}'s scale is estimated with its power, the
#'   others have scale 1.  One difference from mgcv 1.8-41: with
#'   \code{tw(theta = )} (p fixed) gamgpu estimates the scale, where
#'   \code{bam()} uses exp(theta), and says so (a message of class
#'   \code{gamgpu_mgcv_difference}).  A family object, function or name.
#'   Of mgcv's general families, \code{cox.ph()} (Cox proportional hazards,
#'   the response the times or \code{cbind(time, stratum)}, the weights the
#'   event indicators): fitted as \code{gam()} fits it, by gam()'s Laplace
#'   REML (whatever method of gam()'s is given, as \code{gam()}; "fREML" is
#'   refused, as \code{bam()} does not fit it), with mgcv's own Newton and
#'   outer iterations around gamgpu's log partial likelihood and its
#'   derivatives; on the CPU engine so far (a counted fallback under
#'   "auto", refused under "required"); \code{fit$device$route} says so.
#'   The same for mgcv's location-scale families \code{gaulss()},
#'   \code{gammals()}, \code{gumbls()}, \code{gevlss()}, \code{twlss()},
#'   \code{ziplss()}, \code{shash()} and for \code{multinom()} (the formula a
#'   list, one per linear predictor, as \code{gam()}'s): the rows'
#'   derivatives by the family's own \code{ll()}, the products over the rows
#'   by gamgpu's engine.  Their control settings are gam()'s: \code{trace},
#'   \code{maxit}, \code{epsilon}, \code{nthreads} and \code{newton.tol}
#'   (newton()'s \code{conv.tol}); \code{chunk.size} and \code{block.rows}
#'   have no use there (gam() builds X on every row), and \code{hat = FALSE}
#'   or another \code{newton.maxit} are refused (class
#'   \code{gamgpu_bad_control}).  Other general families (\code{mvn()}) are
#'   refused with an error of class \code{gamgpu_bad_family}.
#' @param data a data frame (or list) holding the variables of the formula.
#' @param weights prior weights (non-negative, finite), as in \code{bam()}.
#' @param subset an optional vector selecting the rows to use.
#' @param na.action what to do with missing values: \code{na.omit} (the
#'   default) or \code{na.exclude} (\code{residuals()} and \code{fitted()}
#'   of the fit are then padded with \code{NA}s, as mgcv's); with
#'   \code{na.fail},
#'   missing values are an error of class \code{gamgpu_missing_values}.
#' @param offset an offset, added to the linear predictor and to any
#'   \code{offset()} terms of the formula (not used by \code{predict()} on
#'   new data, as in mgcv).  The fit's \code{linear.predictors} include
#'   it, as \code{gam()}'s do (\code{bam()} 1.8-41 leaves it out of its
#'   linear predictors and fitted values, though its fit uses it).
#' @param method \code{"fREML"} (default: bam()'s criterion, the one for
#'   large data: for a non-gaussian model, REML of the penalized IRLS
#'   working model at each step, bam()'s performance iteration);
#'   \code{"REML"}, the criterion of \code{gam(method = "REML")}: for
#'   gaussian identity models the restricted likelihood itself, for
#'   binomial, poisson, Gamma, inverse.gaussian, negbin(theta), Tweedie(p)
#'   and non-identity gaussian models gam()'s Laplace approximation to it, optimized by Newton's
#'   method with exact derivatives around a fully converged penalized IRLS
#'   (gam.fit3's "outer" iteration: slower than \code{"fREML"}, which is an
#'   approximation to it, and the one gam() reports); \code{"ML"}, the
#'   marginal likelihood of \code{gam(method = "ML")}, the same way (the
#'   unpenalized coefficients not integrated out: smoother fits than REML,
#'   and scores that compare models with different fixed effects);
#'   \code{"P-REML"} and \code{"P-ML"}, gam()'s REML and ML with the scale
#'   at the Pearson estimate of each fit rather than optimized with the
#'   smoothing parameters (with a known scale they are REML and ML, and the
#'   fit's \code{method} says so, as gam()'s does), for every model the
#'   outer iteration takes, gaussian identity included;
#'   \code{"GCV.Cp"}, gam()'s default: the GCV score when the scale is
#'   unknown, UBRE (Mallows' Cp) when \code{scale} is given -- for
#'   gaussian identity models minimised by gam()'s optimizer,
#'   \code{mgcv::magic()}, on the problem reduced from one Gram product
#'   (by Newton's method when \code{newton.tol} or \code{newton.maxit} is
#'   given in \code{control}), for binomial, poisson, Gamma, inverse.gaussian, non-identity
#'   gaussian, quasibinomial and quasipoisson models gam.fit3's scores with
#'   exact derivatives around a fully converged penalized IRLS, as for
#'   \code{"REML"}; and \code{"GACV.Cp"}, the same with gam()'s generalized
#'   approximate cross validation score (GACV) in place of GCV (UBRE with
#'   a known scale).  These methods set up the bases as gam() does (for a
#'   fit on the device with more rows than \code{chunk.size}, thin plate
#'   and cr smooths from what gam() takes of every row -- knots, column
#'   scaling, centring constraint, penalty scaling -- computed by gamgpu's
#'   evaluators, X then built from its recipe on the device; otherwise
#'   gam()'s own set-up on every row, its thin plate bases evaluated by
#'   gamgpu's C or device evaluator; option \code{gamgpu.basis_facts}
#'   \code{TRUE} or \code{FALSE} takes the first or the second way
#'   whatever runs the fit), and do every O(n) step of the outer iteration --
#'   penalized IRLS rows, the working weights' derivatives, weighted Gram
#'   products, X b and X'v products, leverages -- in C in one model
#'   session that holds X on the device for a GPU fit.  For mgcv's
#'   extended families \code{nb()}, \code{tw()}, \code{betar()},
#'   \code{scat()}, \code{ziP()}, \code{ocat()}, \code{cnorm()},
#'   \code{clog()} and \code{cpois()}, every method but
#'   \code{"fREML"} is gam()'s: \code{"REML"} or \code{"ML"} by gam.fit4's
#'   Laplace approximation, Newton's method on the family's theta (unless
#'   fixed), the log smoothing parameters and, for \code{tw()} without a
#'   \code{scale}, the log scale (the deviance's derivatives are mgcv's own,
#'   its family's \code{Dd}; the products with X run in the model session),
#'   and \code{"GCV.Cp"}, \code{"GACV.Cp"}, \code{"P-REML"} and
#'   \code{"P-ML"} become \code{"REML"}, as gam() makes them (the score keeps
#'   the name asked for).  mgcv's \code{negbin(theta)} and
#'   \code{Tweedie(p)} take them as the exponential families do (negbin at
#'   scale 1 whatever \code{scale} says, \code{"GCV.Cp"} as UBRE, as
#'   gam()).  Other families with these
#'   methods (quasi families with "REML", "ML", "P-REML" or "P-ML") are
#'   refused (class
#'   \code{gamgpu_unsupported_method}: use \code{"fREML"} or
#'   \code{mgcv::gam()}); any other value is an error of class
#'   \code{gamgpu_bad_method}.  Pick \code{"fREML"} for big data (it is
#'   the fastest by far, and REML is less prone to under-smoothing than
#'   GCV), \code{"REML"} or \code{"ML"} to reproduce a \code{gam()} fit
#'   that used them, \code{"GCV.Cp"} one that used its default.  gam()'s
#'   methods start and step as \code{gam()} does (its optimizer,
#'   \code{newton()}, from its starting values, to its convergence test), so
#'   that a criterion with a flat end or several minima ends where
#'   \code{gam()}'s does; where gamgpu finds a lower GCV minimum than
#'   \code{magic()} stops at, \code{fit$device$optimum} says so.  With no
#'   smoothing parameter to estimate, \code{"fREML"} is \code{bam()}'s
#'   \code{"REML"}, as \code{bam()} makes it.
#' @param sp optional smoothing parameters, one per free smoothing parameter
#'   of the model; negative entries are estimated, the others fixed.
#' @param knots optional knots, passed to mgcv's setup.
#' @param gamma REML "gamma": values above 1 give smoother fits.
#' @param select add a null-space penalty to each smooth, so that terms can
#'   be penalized out of the model.
#' @param device where to run: \code{"auto"} (the GPU when one is usable
#'   and the model has at least \code{getOption("gamgpu.auto_min_rows",
#'   2000)} rows, else the CPU, as a counted fallback with its reason),
#'   \code{"off"} (CPU) or \code{"required"} (the GPU or an error of class
#'   \code{gamgpu_device_unavailable}); see \code{\link{gpu_policy}}.
#'   On a GPU of compute capability 8.0 or later, thin plate (and
#'   Gaussian process) bases built on the device sum their terms on the
#'   fp64 tensor cores, four at a time: equal to the CPU's to rounding,
#'   not bit for bit; option \code{gamgpu.tensor_cores = FALSE} keeps the
#'   CPU's sums, term by term, bit for bit where the math library agrees
#'   (slower: on an H200, 1.2 to 1.9 times the time of X's build).
#' @param control a list from \code{\link{gam_gpu_control}}, or a plain list
#'   of its settings (checked the same way); settings of
#'   \code{mgcv::gam.control()} are mapped as \code{\link{gam_gpu_control}}
#'   describes.
#' @param ... further arguments of \code{mgcv::bam()}, by name; only these
#'   are accepted:
#'   \describe{
#'   \item{\code{scale}}{as \code{bam()}: > 0 a known scale; 0 (default) 1
#'     for binomial and poisson, else estimated; < 0 estimated, for poisson
#'     and binomial too.}
#'   \item{\code{paraPen}, \code{drop.intercept},
#'     \code{drop.unused.levels}}{passed to mgcv's setup, as \code{bam()}.}
#'   \item{\code{nthreads}}{one whole number: the host threads, the same
#'     as \code{control = gam_gpu_control(nthreads =)}.  Either alone sets
#'     it; given both, they must be equal, else an error of class
#'     \code{gamgpu_bad_control}.}
#'   \item{\code{chunk.size}}{the size of the subsample mgcv's setup builds
#'     the bases on, the same as \code{gam_gpu_control(chunk.size =)}
#'     (either alone, or both equal).}
#'   \item{\code{discrete}}{gamgpu has no discrete method yet:
#'     \code{discrete = TRUE} fits exactly, giving the answer of
#'     \code{bam(discrete = FALSE)}, says so once in a message of class
#'     \code{gamgpu_discrete_exact}, and records it in
#'     \code{fit$device$discrete}.}
#'   \item{\code{fit}}{\code{FALSE} returns the setup object instead of a
#'     fit: what \code{bam(fit = FALSE)} returns (class
#'     \code{"bam.prefit"}, made with \code{discrete = FALSE}), which
#'     \code{gam_gpu(G =)} and \code{mgcv::bam(G =)} fit.}
#'   \item{\code{G}}{a setup object from \code{gam_gpu(fit = FALSE)},
#'     \code{bam(fit = FALSE)} (not discrete) or \code{gam(fit = FALSE)},
#'     fitted without redoing the setup, as \code{bam(G = G)} and
#'     \code{gam(G = G)}: the formula, family, data and the other
#'     setup arguments come from \code{G} and may not be given again;
#'     \code{sp}, \code{scale}, \code{gamma}, \code{method},
#'     \code{device} and \code{control} may.}
#'   \item{\code{gc.level}}{0 (default), 1 or 2: above 0, \code{gc()}
#'     after the setup and after the fit.}
#'   \item{\code{use.chol}}{\code{TRUE} only: gamgpu always solves by a
#'     Cholesky factor of X'WX, as \code{bam(use.chol = TRUE)};
#'     \code{FALSE} is refused.}
#'   \item{\code{in.out}}{\code{list(sp =, scale =)}, as \code{gam()}:
#'     where the first REML optimization starts (\code{sp} one positive
#'     value per smoothing parameter, those fixed by \code{sp} included;
#'     \code{scale} used when the scale is estimated), for fREML's and
#'     for the outer iteration of gam()'s methods (an extended family's
#'     theta starts from the family's, as in \code{gam()}).  It changes
#'     the path, not the optimum: the fit is the same to the optimizer's
#'     tolerance.}
#'   \item{\code{optimizer}}{gam()'s default, \code{c("outer", "newton")}
#'     (or \code{"outer"}), with gam()'s methods: the outer Newton
#'     iteration gamgpu runs for them.  Any other optimizer, or
#'     \code{optimizer} with \code{method = "fREML"} (bam()'s, which has
#'     none), is refused (\code{gamgpu_unsupported_argument}).}
#'   \item{\code{rho}, \code{AR.start}}{AR1 residuals of known
#'     correlation \code{rho} (in (-1, 1)), for gaussian identity models, as
#'     \code{bam()} fits them: the rows of the working model are
#'     transformed by the AR1 correlation's inverse Cholesky factor (by the
#'     backend, on the device for a GPU fit, as it forms X'X), the REML
#'     score carries bam's Jacobian term, and the fit has bam's
#'     \code{AR1.rho} and \code{std.rsd}.  \code{AR.start} (logical, a
#'     variable of \code{data}) marks where independent series start.
#'     For other families and links, as in \code{bam()}, rho is unused,
#'     with a warning of class \code{gamgpu_rho_unused}.  On the device the
#'     model matrix must be resident (an X too large for device memory
#'     falls back to the CPU, counted, under \code{device = "auto"}).}
#'   }
#' @return An object of class \code{c("gam_gpu", "gam", "glm", "lm")}: an
#'   mgcv gam object (see \code{mgcv::gamObject}) with, in addition,
#'   \code{device}: a list with the \code{backend} that ran the fit, the
#'   \code{reason} it was chosen, the \code{placement} of X (host, device
#'   resident, device streamed), \code{model_matrix} (\code{"recipe"}: built
#'   by the backend from the covariates, \code{"matrix"}: built in R) and
#'   with \code{"matrix"} \code{model_matrix_reason}, why (the term whose
#'   basis has no C evaluator, or the option \code{gamgpu.x_recipe}),
#'   \code{timings} (seconds of setup, of a gam() method's smoothing
#'   parameter selection before the final fit, of the fit's iterations and
#'   of post-processing) and,
#'   for a GPU fit, \code{split}: seconds of transfers, building X on the
#'   device, kernels and host work; \code{counters}, the backend's passes
#'   over the rows (\code{gram}, \code{xbeta}, \code{row_state}) and its
#'   step halvings (\code{halve_eta}); \code{reml_threads}, the host threads
#'   the REML optimizer used (see \code{nthreads} in
#'   \code{\link{gam_gpu_control}}); \code{discrete}, only when
#'   \code{discrete = TRUE} was asked for, saying that the fit is exact;
#'   \code{cpu_gram}, for a fit on the CPU, which weighted Gram product its
#'   steps took -- R's BLAS (named) or gamgpu's own kernel, as
#'   \code{options(gamgpu.cpu_gram)} asks (see \code{\link{gpu_info}}),
#'   or gamgpu's sparse rows: where the bases are local (cr, cc, ps/bs,
#'   cp, factors, linear terms and their tensor products) or one-variable
#'   thin plates, the CPU engine holds X as a few entries per row times a
#'   fixed map, the thin plate columns made per row, and never forms it
#'   (\code{placement} then says how many entries of how many; see
#'   \code{options(gamgpu.cpu_x)} in \link{gamgpu-package});
#'   for gam()'s outer iteration (methods other than \code{"fREML"} beyond
#'   the additive model) \code{outer_gram}, where its model session ran
#'   (\code{"cuda:0"}, \code{"cpu"}), \code{outer_grams}, its weighted
#'   Gram products, \code{outer_seconds}, its seconds in host-device
#'   copies, row-wise work and building X, \code{outer_rows}, where the
#'   rows of gam.fit3's (gam.fit4's for the extended families) derivatives
#'   were computed (\code{"cuda:0"}: on the device, beside X, so that no
#'   n-vector crosses the bus; \code{"cpu"}; for \code{ocat()} with more
#'   than six categories \code{"R (mgcv's dDeta() ...)"} with the reason:
#'   in R, an n-vector sent to the session per product), and \code{outer_fallback}, why it left the
#'   device, when it did.
#'   With \code{fit = FALSE}, the setup object instead (see \code{...}).
#' @examples
#' library(mgcv)
#' set.seed(2)
#' dat <- gamSim(1, n = 2000, dist = "normal", scale = 2, verbose = FALSE)
#' fit <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr") + s(x3), data = dat)
#' fit
#' summary(fit)
#' plot(fit, pages = 1)
#' predict(fit, newdata = dat[1:5, ], se.fit = TRUE)
#'
#' # a binomial model
#' dat$yb <- rbinom(nrow(dat), 1, binomial()$linkinv((dat$f - 8) / 4))
#' fitb <- gam_gpu(yb ~ s(x0) + s(x1) + s(x2), family = binomial, data = dat)
#' fitb$device
#' @export
gam_gpu <- function(formula, family = gaussian(), data = list(), weights = NULL,
                    subset = NULL, na.action = na.omit, offset = NULL,
                    method = "fREML", sp = NULL, knots = NULL, gamma = 1,
                    select = FALSE, device = gpu_policy(),
                    control = gam_gpu_control(), ...) {
  t0 <- proc.time()[["elapsed"]]
  cl <- match.call()
  env <- parent.frame()

  ## ---- the arguments: `...` against the table of R/arguments.R ------------
  dot_names <- names(match.call(expand.dots = FALSE)$...)
  if (is.null(dot_names)) dot_names <- rep("", ...length())
  check_dots(dot_names)
  tensor_cores_option()             # (a bad value refused whichever route X takes)
  dots <- read_dots(dot_names, ...)
  G_supplied <- dots$G
  fit_wanted <- dots$fit
  discrete <- dots$discrete
  gc_level <- dots$gc.level
  scale <- dots$scale
  if (!is.null(G_supplied)) {
    check_setup_object(G_supplied, names(cl)[-1L], fit_wanted)
    if (inherits(G_supplied, "gam.prefit"))
      G_supplied <- as_bam_setup(G_supplied, why = "G, gam()'s setup object, holds X")
    family <- G_supplied$family
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
  # a general family (cox.ph(), the location-scale families, multinom()):
  # gam()'s gam.fit5 route, with gam()'s optimizers (R/general_family.R)
  if (!is.null(general_family_name(family)))
    return(general_family_fit(cl, env, family, method, control, device, dots, t0))
  check_optimizer(dots$optimizer, method)
  check_fixed_penalty(dots$min.sp, dots$H, method)
  # gam()'s fixed penalty (min.sp, H, or a supplied G's H): fitted by the
  # outer iteration, whose criterion takes it (R/outer.R), for every model
  # (zero bounds, a zero H: no penalty, the fit without them)
  fixed_pen <- any(dots$min.sp != 0) || any(dots$H != 0) || !is.null(G_supplied$H)
  if (fixed_pen && identical(method, "fREML"))
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste("the setup object G has gam()'s fixed penalty (H, from min.sp or H),",
                       "which method = \"fREML\" (bam()'s) does not take: use one of gam()'s",
                       "methods (method = \"REML\", ...)"), arguments = "G")
  ar1 <- !is.null(cl$rho) && !identical(eval(cl$rho, env), 0)
  # the fit the call asks for, its refusals said there (R/route.R)
  route <- gam_route(family, method, fixed_pen, ar1, dots$in.out)
  method <- route$method
  method_given <- route$method_given
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
  if (discrete) inform_discrete_exact()
  ## AR1 residuals: rho checked before mgcv's setup sees it (R/ar1.R)
  rho <- ar1_check_rho(if (is.null(cl$rho)) 0 else eval(cl$rho, env))

  if (is.null(G_supplied)) {
    check_variables(formula, if (missing(data)) NULL else data, env)
    ## ---- mgcv's setup: bam(..., fit = FALSE), by gg_setup() (R/setup.R) ----
    ## gamgpu's own arguments leave the call; discrete = TRUE would build the
    ## bases on discretized covariates (and X not as the model matrix), so the
    ## setup is bam(discrete = FALSE)'s
    mc <- match.call(expand.dots = TRUE)
    mc[[1L]] <- quote(mgcv::bam)
    mc$device <- mc$control <- NULL
    mc <- mc[!(names(mc) %in% .gg_arguments$argument[.gg_arguments$route == "gamgpu"])]
    if (fit_wanted) mc$sp <- NULL                 # applied to L and lsp0 below
    mc$family <- family
    mc$method <- "fREML"
    mc$fit <- FALSE
    mc$chunk.size <- control$chunk.size
    # (the setup takes the data as evaluated once -- the promise that
    # check_variables() forced -- so that a data expression that draws
    # random numbers is not drawn a second time)
    setup_env <- env
    if (!missing(data)) {
      setup_env <- new.env(parent = env)
      assign(".gg_data", data, envir = setup_env)
      mc$data <- quote(.gg_data)
    }
    # gam()'s methods get gam()'s bases (R/setup.R): for "ML" they are
    # required, for "REML", "GCV.Cp" and "GACV.Cp" they make the fit gam()'s to
    # rounding rather than to the optimizer's tolerance; the lean setup
    # builds them where it takes the call, gam(fit = FALSE) elsewhere
    setup <- function(gam_bases)
      withCallingHandlers(
        tryCatch(gg_setup(mc, setup_env, control$nthreads, gam_bases, plan, method_given),
                 error = classify_setup_error),
        warning = function(w) {
          if (grepl("chunk.size", conditionMessage(w), fixed = TRUE))
            invokeRestart("muffleWarning")
        })
    basis_facts_option()
    progress <- progress_wanted(data_rows(if (!missing(data)) data))
    progress_phase(progress, "Setting up the model (mgcv's setup)")
    G <- setup(method != "fREML")
    # bam()'s scale rule: 0 is 1 for binomial and poisson, else estimated
    if (scale == 0) scale <- if (family$family %in% c("binomial", "poisson")) 1 else -1
    G$scale <- scale
    G$H <- fixed_penalty(G, dots$min.sp, dots$H)
    if (!fit_wanted) return(G)
  } else {
    G <- G_supplied
    progress <- progress_wanted(nrow(G$mf))
    if (scale <= 0) scale <- G$scale              # as bam(G = G)
  }
  # gam() fits negbin(theta) at scale 1 with every method, whatever 'scale'
  # says (estimate.gam()), GCV.Cp as UBRE then
  if (route$outer && is_negbin(family)) scale <- 1
  if (gc_level > 0) gc()
  n <- nrow(G$mf)
  if (n < 1L) gamgpu_abort("gamgpu_no_data", "no rows left after NA handling and subsetting")
  ## AR1 residuals (bam's rho and AR.start; R/ar1.R)
  ar <- ar1_settings(rho, G, family)
  p <- ncol(G$X)
  if (p > n)
    gamgpu_abort("gamgpu_too_many_coefficients",
                 sprintf("the model has %d coefficients but only %d rows of data", p, n))
  if (!is.null(G$smooth)) for (s in G$smooth)
    if (!is.null(s$updateS))
      gamgpu_abort("gamgpu_unsupported_smooth",
                   sprintf("smooth '%s' has a non-linear penalty, not supported", s$label))

  ## user smoothing parameters (as bam() does for a supplied G)
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
  # (an extended family's scale is known to each REML fit: efam_spec())
  theta_start <- in_out_start(dots$in.out, nfree,
                              if (is.null(sp)) logical(nfree) else sp >= 0,
                              scale <= 0 && is.null(efam_name(family)))

  ## ---- response, weights, offset ------------------------------------------
  y <- G$y
  w <- as.numeric(G$w)
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
  } else if (is.matrix(y) && ncol(y) > 1L) {
    gamgpu_abort("gamgpu_bad_response",
                 paste("a matrix response is only allowed for binomial families and the",
                       "censored families cnorm(), clog() and cpois()"))
  }
  y <- y_double(y)
  offset <- as.numeric(G$offset)
  if (length(offset) != n) offset <- NULL
  ## one pass over y, w and the offset in C (setup_stats.c): flags, y's range
  chk <- .Call(gg_check_rows_r, y, w, offset, control$nthreads)
  if (chk[["w_bad"]] != 0)
    gamgpu_abort("gamgpu_bad_weights", "weights must be finite and non-negative")
  if (chk[["w_positive"]] == 0) gamgpu_abort("gamgpu_bad_weights", "all weights are zero")
  if (chk[["y_bad"]] != 0)
    gamgpu_abort("gamgpu_bad_response", "the response has non-finite values")
  eng_fam <- engine_family(family)                # the family as the engine takes it
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
  if (chk[["o_nonzero"]] == 0) offset <- NULL
  else if (chk[["o_bad"]] != 0)
    gamgpu_abort("gamgpu_bad_input", "the offset has non-finite values")
  ## an extended family: bgam.fit's preinitialize and initialize, then its
  ## parameters and scale for the engine (R/families.R)
  ef <- NULL
  if (isTRUE(eng_fam$efam)) {
    pre <- efam_prepare(family, y, w)
    y <- pre$y
    family <- pre$family
    # (gam()'s REML or ML: the engine fits at the theta and scale the
    # outer iteration chooses, below)
    if (route$name != "efam_outer") ef <- efam_spec(family, scale, y)
    eng_fam <- engine_family(family)
  }

  progress_phase(progress, "Planning the model matrix")
  ## ---- the model matrix: as numbers, or as a recipe the engine builds ----
  ## (on the device for a GPU fit: model_matrix_plan() in model_matrix.R)
  ## (its threads and forked workers within control nthreads, as the fit's)
  ## (where mgcv's setup built X on every row, a CPU fit still takes its
  ## recipe when the rows are sparse: sparse_rows_recipe())
  X <- if (nrow(G$X) == n) {
    rec <- if (route$outer) sparse_rows_recipe(G, n, plan, control)
    if (!is.null(rec)) rec else
      no_recipe(if (is.null(attr(G, "gg_x_reason")))
        "mgcv's setup built X on every row (n <= chunk.size)" else attr(G, "gg_x_reason"))
  } else model_matrix_plan(G, G$mf, threads = min(setup_threads(n), control$nthreads))
  x_reason <- NULL                  # why X is built in R, naming the term
  if (inherits(X, "gg_no_recipe")) {
    x_reason <- attr(X, "reason")
    X <- if (nrow(G$X) == n) G$X else
      full_model_matrix(G, G$mf, cores = min(setup_cores(n), control$nthreads))
  }
  if (is.matrix(X)) {
    dimnames(X) <- NULL
    attr(X, "model.offset") <- NULL
    if (!is.double(X)) storage.mode(X) <- "double"
  }
  S <- lapply(G$S, function(s) { storage.mode(s) <- "double"; s })
  small <- auto_too_small(plan, n, p)
  if (nzchar(small)) {
    record_fallback("engine", small)
    plan$mode <- 0L
  }
  ## ---- the model session (R/session.R): the data loaded and X built once,
  ## on the device for a GPU fit; every route's work runs against it ----
  progress_phase(progress, "Loading the data and building X on the backend")
  ses <- model_session(X, y, w, offset, plan, control,
                       unit_weights = chk[["w_not_one"]] == 0, ar = ar)
  on.exit(ses$close(), add = TRUE)
  ## ---- the route's choice of smoothing parameters (R/route.R): GCV.Cp and
  ## GACV.Cp's from one Gram product, gam()'s outer iteration's by the
  ## Laplace approximation; the engine then fits at them ----
  f <- new.env(parent = emptyenv())
  for (nm in c("G", "X", "ses", "y", "w", "offset", "family", "S", "L", "lsp0", "sp.names",
               "sp", "nfree", "gamma", "scale", "plan", "control", "trials", "dots", "n", "ar",
               "ef", "eng_fam"))
    assign(nm, get(nm), envir = f)
  # (routes that choose smoothing parameters before the fit; fREML's and
  # engine_gam's choose nothing, their selection time is 0)
  selects <- route$name %in% c("gcv", "outer", "efam_outer")
  if (selects)
    progress_phase(progress, sprintf("Choosing the smoothing parameters (%s)", method))
  t_sel <- proc.time()[["elapsed"]]
  switched <- route$choose(f)
  t_sel <- if (selects) proc.time()[["elapsed"]] - t_sel else 0
  if (!is.null(switched)) route <- switched
  for (nm in c("L", "lsp0", "sp.names", "ef", "eng_fam", "family"))
    assign(nm, get(nm, envir = f))
  lap <- f$lap
  spec <- list(nobs = n, nobs_scale = n, scale = if (is.null(ef)) scale else ef$scale,
               gamma = gamma,
               additive = family$family == "gaussian" && family$link == "identity",
               ef = ef$ef,
               yvar = lean_var(y, control$nthreads),
               hat = control$hat,
               theta_start = theta_start, theta = eng_fam$theta,
               theta_estimated = as.integer(eng_fam$estimated),
               theta_rule = if (!is.null(ef) && (isTRUE(eng_fam$estimated) || ef$ef$scale_est == 1))
                 efam_theta_rule() else 0L,
               ml = 0L)
  rs <- route$spec(f, spec, unclass(control))
  spec <- rs$spec
  ctl_fit <- rs$ctl
  t1 <- proc.time()[["elapsed"]]

  ## ---- the fit --------------------------------------------------------------
  L <- if (!is.null(L)) { L <- unname(L); storage.mode(L) <- "double"; L }
  # (gam()'s fixed penalty G$H: one more penalty, on every coefficient, at
  # log smoothing parameter 0; the outer iteration chose the others)
  S_fit <- S
  off_fit <- G$off
  lsp0_fit <- lsp0
  if (!is.null(G$H)) {
    S_fit <- c(S, list(G$H + 0))
    off_fit <- c(G$off, 1L)
    lsp0_fit <- c(lsp0, 0)
    L <- matrix(0, length(lsp0_fit), 0L)
  }
  f$L <- L
  # (in the model session, with its y, weights and offset; closed once the
  # fit is done -- after an outer iteration, the route records first where
  # it ran)
  engine_fit <- function(spec)
    .Call(gg_fit, ses$ptr, eng_fam$name, engine_link(family), S_fit, as.integer(off_fit), L,
          if (length(S_fit)) as.numeric(lsp0_fit) else NULL, spec, ctl_fit)
  progress_phase(progress, "Fitting (penalized IRLS on the backend)")
  res <- engine_fit(spec)
  if (!is.null(G$H)) res$rho.full <- res$rho.full[seq_along(S)]
  # rank deficient (R/rank_deficient.R): with the scale estimated by REML,
  # bam()'s Mp moves the optimum -- fitted again with it where it differs
  rd <- route$name %in% c("fREML", "engine_gam") && method %in% c("fREML", "REML") &&
    res$scalars[["rank"]] < p
  f$rd <- rd
  if (rd && length(res$rho) > ncol(res$db.drho)) {
    Mp <- bam_Mp(G, res)
    if (!is.null(Mp) && Mp != res$scalars[["Mp"]]) {
      spec$Mp <- Mp
      res <- engine_fit(spec)
    }
  }
  if (!is.null(lap)) lap$P$close()
  ses$close()
  x_source <- if (is.matrix(X)) "matrix" else "recipe"
  rm(X)
  rm("X", envir = f)
  if (gc_level > 0) gc()
  t2 <- proc.time()[["elapsed"]]
  progress_phase(progress, "Post-processing")
  fit <- gg_assemble(G, res, family, y, w, offset, n, method, gamma, cl, control,
                     sp.names, scale)
  fit <- route$finish(fit, f, res)
  fit <- ar1_finish(fit, ar)
  sc <- res$scalars
  if (!is.null(ef))
    fit <- efam_finish(fit, family, res$ef.theta, sc[["theta.failed"]] != 0, G,
                       control$nthreads)
  fit <- route$last(fit, f)
  if (!fit$converged)
    gamgpu_warn("gamgpu_not_converged",
                sprintf("penalized IRLS did not converge in %d iterations (control maxit = %d)",
                        as.integer(sc[["iter"]]), control$maxit))
  route$warn(fit, f, res)
  t3 <- proc.time()[["elapsed"]]
  fit$device <- list(
    backend = res$backend,
    reason = device_reason(policy, res$backend,
                           if (nzchar(res$fallback)) res$fallback else small),
    placement = res$placement,
    # "recipe": X was built by the backend from the covariates (on the
    # device for a GPU fit); "matrix": X was built in R and handed over
    model_matrix = x_source,
    # with "matrix", why (which term has no C evaluator, or the option)
    model_matrix_reason = x_reason,
    # setup: mgcv's setup, then the engine's (allocating the results,
    # starting the backend, building or copying X, copying the data);
    # iterations: penalized IRLS with REML; postproc: everything after
    # (covariances, EDFs, leverages, the final vectors, the gam object)
    # selection: a gam() method's choice of smoothing parameters before
    # the engine's fit (the outer iteration, GCV's magic()); 0 for fREML,
    # whose REML Newton is the engine's, within its iterations
    timings = c(setup = t1 - t0 - t_sel + res$device.times[["pre"]],
                selection = t_sel,
                iterations = sc[["t.iterations"]],
                postproc = sc[["t.postproc"]] + (t3 - t2) +
                  max(0, (t2 - t1) - res$device.times[["pre"]] - sc[["t.iterations"]] -
                        sc[["t.postproc"]])),
    # on the device: copies of the data and results (load, fetch), the
    # row-wise kernels with their small result copies (every IRLS pass and
    # the leverage pass), and what the engine did on the host meanwhile (the
    # p x p REML Newton and post-processing)
    split = if (res$backend == "cuda")
      c(transfer = res$device.times[["transfer"]], build = res$device.times[["build"]],
        kernels = res$device.times[["rows"]],
        host = max(0, sc[["t.iterations"]] + sc[["t.postproc"]] - res$device.times[["rows"]])),
    counters = res$counters,
    # host threads of the REML optimizer's p x p products (1: no pool)
    reml_threads = as.integer(sc[["reml.threads"]]))
  if (discrete) fit$device$discrete <- .gg_discrete_note
  # (a CPU fit: which weighted Gram product it took, and R's BLAS)
  if (identical(res$backend, "cpu"))
    fit$device$cpu_gram <- if (startsWith(res$placement, "host (sparse rows"))
      "gamgpu's sparse rows (X = S M, options(gamgpu.cpu_x)): no dense X, no BLAS products of n rows"
    else cpu_gram_note(p)
  fit$device <- route$device(fit$device, f)
  fit
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
  # post-processing (src/family_stats.c), NA aic for the quasi families
  object$residuals <- res$residuals
  object$deviance <- sc[["resid.ss"]]       # sum(residuals^2)
  aic <- sc[["aic"]]
  if (is.na(aic) && !inherits(family, "extended.family")) {
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
    if (!is.null(d$split))
      cat(sprintf("Device: %s; transfers %.3fs, X built %.3fs, kernels %.3fs, host REML and post-processing %.3fs\n",
                  d$placement, d$split[["transfer"]], d$split[["build"]], d$split[["kernels"]],
                  d$split[["host"]]))
  }
  invisible(x)
}
