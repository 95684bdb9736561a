# gam_gpu(): formula -> mgcv's bam() model setup -> C engine -> an mgcv
# "gam" object.  The setup (bases, constraints, penalties, model frame) is
# mgcv's, so every method written for gam objects works on the result.
# gam_gpu() is one short pipeline for every method, each step in a file of
# its own:
#   1. the arguments checked, the route chosen   R/fit_arguments.R, R/route.R
#   2. mgcv's setup, the fit's state             R/fit_setup.R
#   3. the rows (response, weights, offset)      R/fit_rows.R
#   4. X or its recipe, the model session, the route's smoothing
#      parameters, the engine's fit              R/fit_engine.R, R/session.R
#   5. the gam object and fit$device             R/fit_report.R
# The routes (fREML, gam()'s GCV.Cp, its outer iterations) supply their own
# steps around the engine's fit (R/route.R, R/gcv.R, R/outer.R,
# R/outer_efam.R); general families take gam.fit5's (R/general_family.R).
# Here: the families and links gamgpu fits, and gam_gpu() itself.

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
  # (gfam(): each row its member's link, in the family's parameters)
  if (is_gfam(family)) return("identity")
  la <- link_power(family)
  if (is.null(la)) family$link else sprintf("mu^%.17g", la)
}

# The family argument as a family object gamgpu fits (a name, a function or
# an object), or a classed refusal naming what it does not fit.
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
                 sprintf(paste("family '%s' (an mgcv %s family) is not supported;",
                               "of mgcv's extended families gamgpu fits nb(), tw(), betar(),",
                               "scat(), ziP(), ocat(), cnorm(), clog() and cpois(), and of",
                               "the general families cox.ph(), the location-scale families",
                               "(gaulss, ziplss, twlss, gevlss, gammals, gumbls, shash),",
                               "multinom() and mvn(); fit this one with mgcv::gam()"),
                         family$family,
                         if (inherits(family, "general.family")) "general" else "extended"),
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
  if (is_gfam(family)) {
    gfam_members(family)     # (its members, or the classed refusal)
    return(family)
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
#' With \code{cluster = cl}, a cluster of R's \pkg{parallel} package
#' (\code{parallel::makeCluster()}: PSOCK nodes on this or other hosts,
#' FORK, or snow-style clusters), the rows are split into contiguous shards,
#' one per node; each node holds its shard in a model session of its own for
#' the whole fit (X built there from its recipe: on the node's GPU where it
#' has a usable one and the device policy allows, else by its CPU; a node's
#' GPU is then required for the whole fit, as its state cannot move to its
#' CPU mid-fit), and the engine on this process takes per iteration only
#' sums of p-sized results from them (the deviance, X'WX, X'Wz, an extended
#' family's theta sums), in node order.  Every node must have gamgpu (the
#' same version) installed and loaded.  Each node computes with the fit's
#' \code{nthreads} or its host's physical cores shared out among the
#' cluster's nodes on that host, whichever is fewer.  The fitted object is an ordinary
#' \code{gam} object: the n-vectors (linear predictors, fitted values,
#' working weights and residuals, leverages) are gathered from the nodes at
#' the end of the fit; \code{fit$device$cluster} lists the nodes (host, threads, rows,
#' device, model matrix route, whether it keeps its prior weights as an
#' n-vector -- a node that loaded its own shard with none and whose GPU
#' runs the fit keeps none --, process id) and counts the operations and
#' the bytes exchanged.  Every method: \code{"fREML"}; for a gaussian
#' identity model \code{"GCV.Cp"} (GCV or UBRE from one Gram product summed
#' over the nodes); and gam()'s outer iteration (REML, ML, GCV.Cp/UBRE
#' beyond the additive model, P-REML, P-ML, an extended family's REML),
#' whose O(np) products -- the penalized IRLS rows, Newton's Gram products,
#' the criterion's derivative products -- each node computes on its shard
#' and this process sums, in node order, while the response, weights and
#' the rows' vectors it reads stay here.  A node's error
#' is an error of class \code{gamgpu_cluster_node_error}, a lost node one of
#' class \code{gamgpu_cluster_node_lost}, and the live nodes' sessions are
#' closed either way.  An interrupt while the nodes are answering ends the
#' fit (class \code{gamgpu_interrupted}) but leaves their answers unread on
#' the cluster's connections: stop that cluster
#' (\code{parallel::stopCluster()}) and make a new one.
#'
#' With \code{data = gamgpu_shards(...)} as well, the rows never sit in
#' this session: each node reads its own (files, or a function of its
#' index: \code{\link{gamgpu_shards}}), drops there the rows that
#' \code{subset} and \code{na.action} (\code{na.omit}, \code{na.exclude}
#' or \code{na.fail}) remove, and keeps them for the fit; \code{weights},
#' \code{offset} and \code{subset} are expressions in the shards' columns.
#' This session runs mgcv's set-up on a sample: every row when there are at
#' most \code{chunk.size} (the fit is then the one-process fit of the
#' shards' rows in node order, to rounding), else \code{mini.mf()}'s recipe
#' over the shards (\code{chunk.size} rows drawn over the nodes, the rows
#' with each numeric variable's extremes and one of each factor level),
#' whose bases differ from a one-process set-up's only through which rows
#' the sample holds; factor levels are the union over the shards, as
#' \code{rbind()} makes them.  The fitted object (class
#' \code{"gam_gpu_shards"}, a \code{gam}) holds every row's deviance,
#' null deviance, aic, \code{df.residual} and, through \code{summary()},
#' r.sq, n and the tests' residual degrees of freedom (sums computed on the
#' nodes), but its n-vectors -- \code{model}, \code{y},
#' \code{fitted.values}, \code{linear.predictors}, \code{residuals},
#' \code{weights}, \code{prior.weights}, \code{hat} -- are the set-up
#' sample's rows, at the fit's coefficients: \code{predict()} without
#' \code{newdata}, \code{plot()}'s rug and partial residuals and
#' \code{gam.check()} see those rows (\code{fit$shards} says how many of
#' how many).  Every row's fitted values: \code{predict(fit, newdata)} on
#' the nodes.  var.summary's minima, medians (selected exactly over the
#' nodes), maxima and modal levels are every row's (a matrix variable's
#' medians the sample's).  Families: R's exponential and quasi
#' families, \code{negbin(theta)}, \code{Tweedie(p)} and \code{nb()} (others refused).
#' Methods: fREML, the additive GCV.Cp, and gam()'s outer iteration for R's
#' exponential and quasi families with one trial a row (REML, ML, P-REML,
#' P-ML, GCV.Cp/UBRE, GACV.Cp) and for \code{nb()} (REML, ML): what it
#' reads of the rows -- the saturated log likelihood at each scale and
#' theta, the deviance at mean(y), the starting weights, X'W_F X and
#' Fletcher's scale sums at the optimum, the aic -- is summed on the nodes;
#' \code{cbind()} trials are refused there
#' (\code{gamgpu_unsupported_argument}).  For fREML a node's GPU keeps
#' the least state a row: the response, the linear predictor, the working
#' weights and response, and the recipe's covariates (8 bytes each: 64 a
#' row for four covariates) -- no previous linear predictor (a step halving
#' makes it from the halved coefficients, the same to rounding), no
#' leverages' vector, and mu only for an extended family (else made from
#' the linear predictor when the node's sums ask for it); gam()'s methods
#' keep the full state.  (No GPU fit keeps prior weights that are all 1.)
#'
#' Every argument is honoured with \code{bam()}'s meaning or refused: an
#' argument of \code{bam()} or \code{gam()} that gamgpu does not honour
#' (\code{samfrac}, \code{coef}, \code{nei};
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
#'   vector), and \code{gfam(fl)} (mgcv >= 1.9: response
#'   \code{cbind(y, index)}, row i following member \code{fl[[index_i]]}
#'   with its link; members gaussian, poisson, binomial, Gamma,
#'   inverse.gaussian and \code{nb()} with theta estimated, at most 8
#'   members and 10 theta values (the members' log scales and nb's thetas);
#'   other members are refused), each with the links mgcv allows,
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
#'   refused, as \code{bam()} does not fit it).  With any method of
#'   gam()'s but "NCV" (and no \code{G}, \code{optimizer}, \code{in.out} or
#'   \code{gamma} other than 1), \code{cox.ph()} (with or without strata) and the
#'   location-scale families below whose rows gamgpu's C has (all but
#'   \code{twlss()}, whose missing third and fourth derivatives gam() meets
#'   by another iteration) are fitted by gamgpu's native route: gam.fit5's
#'   Newton iteration and newton()'s outer REML iteration, the algorithm of
#'   the installed mgcv, run by gamgpu on p x p quantities, X loaded once
#'   into a model session (built there from its recipe at many rows on a
#'   GPU), every pass over the rows gamgpu's -- the fit gam()'s to the
#'   tolerances both stop at.  Every other call (method "NCV",
#'   \code{mvn()}, \code{twlss()}, a set-up object \code{G}, ...), and
#'   every call under \code{options(gamgpu.general_route = "gam")}, is
#'   fitted by mgcv's own Newton and outer iterations (\code{gam()} on the
#'   call's arguments) around gamgpu's log likelihood and its derivatives;
#'   \code{fit$device$route} says which route ran and
#'   \code{fit$device$route_reason} why gam()'s did (the option is
#'   \code{"native"}, the default, or \code{"gam"}).  Either route runs
#'   the rows on the GPU where one is usable (see below).
#'   The same for mgcv's location-scale families \code{gaulss()},
#'   \code{gammals()}, \code{gumbls()}, \code{gevlss()}, \code{twlss()},
#'   \code{ziplss()}, \code{shash()} and for \code{multinom()} (the formula a
#'   list, one per linear predictor, as \code{gam()}'s): for
#'   \code{gaulss()}, \code{gumbls()}, \code{gammals()}, \code{ziplss()},
#'   \code{gevlss()}, \code{twlss()}, \code{shash()} and \code{multinom()}
#'   (up to 5 categories) the rows' log likelihood and its derivatives in
#'   gamgpu's C too (checked against the family's own \code{ll()} on the
#'   first rows, which runs instead where they differ; \code{shash()}'s
#'   own \code{ll()} for its offsets, which it refuses), for the others the
#'   family's own \code{ll()}; the products over the rows by gamgpu's
#'   engine, over \code{nthreads}; \code{fit$device$ll_rows} says whose
#'   rows ran ("gamgpu" or "family").  On a GPU (\code{device = "auto"}
#'   or \code{"required"}) the \code{ll()} of \code{gaulss()},
#'   \code{gumbls()}, \code{gammals()}, \code{ziplss()}, \code{gevlss()},
#'   \code{twlss()}, \code{shash()} and \code{multinom()} runs on the device: the model matrix
#'   is loaded into a model session once (\code{fit$device$ll_sessions}
#'   counts the loads -- on gam()'s iteration one per X it hands the
#'   \code{ll()} --, \code{ll_session_seconds} the sessions' copies and
#'   row work) and the rows, Gram products and REML's traces stay in
#'   device memory; the Newton and outer iterations run on the host (on
#'   gam()'s iteration, with its set-up, in R as for \code{gam()}).  So does \code{cox.ph()}'s \code{ll()}:
#'   the risk sets' sums as prefix sums down the rows (segmented by
#'   stratum), the Gram products and REML's traces on the device, checked
#'   at the first call against the CPU engine's on 2000 rows (5000 across
#'   the first stratum's end with strata).
#'   The location-scale
#'   families' and \code{multinom()}'s \code{ll()} reads no prior weights:
#'   \code{gam()} fits them without any, as does \code{gam_gpu()}, with a
#'   warning of class \code{gamgpu_weights_unused} where weights are
#'   given; \code{gam()} fits \code{twlss()} (by its extended
#'   Fellner-Schall iteration) without its offsets, as does
#'   \code{gam_gpu()}, with a warning of class \code{gamgpu_offset_unused}.
#'   The \code{s()} terms' thin plate
#'   bases are built by gamgpu's construction (\code{fit$device$tp_bases}:
#'   how many by gamgpu's and by mgcv's).  Their control settings are
#'   gam()'s: \code{trace},
#'   \code{maxit}, \code{epsilon}, \code{nthreads} and \code{newton.tol}
#'   (newton()'s \code{conv.tol}); \code{chunk.size} and \code{block.rows}
#'   have no use there (gam() builds X on every row), and \code{hat = FALSE}
#'   or another \code{newton.maxit} are refused (class
#'   \code{gamgpu_bad_control}).  \code{mvn()} (the multivariate normal
#'   additive model, a list of formulas with a matrix response as
#'   \code{gam()}'s) is fitted the same way: its \code{ll()} reads the rows
#'   only through \eqn{X'X} (the family's own), the residuals' products
#'   with X and with themselves and n, which gamgpu forms over the rows --
#'   on a model session's X, on the device for a GPU fit -- and all of
#'   \code{mgcv}'s algebra on them runs in gamgpu's C (checked against the
#'   family's own \code{ll()} on the first rows, which runs instead where
#'   they differ); it reads no prior weights (warned as above) and refuses
#'   offsets, as \code{gam()} does.  Other general families (one written
#'   by a user, with an \code{ll()} of its own) are refused with an error
#'   of class \code{gamgpu_bad_family}.
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
#'   fp64 tensor cores, four at a time, and a one-variable thin plate
#'   basis on up to some 10^5 rows by its direct sums rather than the
#'   CPU's table of piecewise polynomials (which costs more to make there
#'   than it saves): equal to the CPU's to rounding, not bit for bit;
#'   option \code{gamgpu.tensor_cores = FALSE} keeps the CPU's sums, term
#'   by term, bit for bit where the math library agrees (slower: on an
#'   H200, 1.2 to 1.9 times the time of X's build).
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
#'   mgcv gam object (see \code{mgcv::gamObject}); its \code{residuals}
#'   are those of the mgcv function the method belongs to: gam()'s working
#'   residuals for gam()'s methods (gam.fit3's for the exponential
#'   families, gam.fit4's, -Deta / Deta2, for the extended families; what
#'   \code{residuals(fit, "working")} and \code{plot()}'s partial residuals
#'   read), bam()'s deviance residuals for \code{"fREML"}; with, in addition,
#'   \code{device}: a list with the \code{backend} that ran the fit, the
#'   \code{reason} it was chosen, the \code{placement} of X (host, device
#'   resident, device streamed), \code{model_matrix} (\code{"recipe"}: built
#'   by the backend from the covariates, \code{"matrix"}: built in R,
#'   \code{"cluster"}: built on a cluster's nodes, each node's route in
#'   \code{cluster$nodes}) and
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

  ## ---- 1. the arguments (R/fit_arguments.R): `...` against the table of
  ## R/arguments.R, then every argument, and the route the call asks for
  dot_names <- names(match.call(expand.dots = FALSE)$...)
  if (is.null(dot_names)) dot_names <- rep("", ...length())
  check_dots(dot_names)
  tensor_cores_option()             # (a bad value refused whichever route X takes)
  dots <- read_dots(dot_names, ...)
  a <- fit_arguments(cl, env, dots, family, method, gamma, sp, device, control)
  # (a general family: gam.fit5's route, R/general_family.R)
  if (isTRUE(a$general)) {
    if (!is.null(dots$cluster))
      gamgpu_abort("gamgpu_unsupported_argument",
                   paste("cluster: the general families (gam()'s gam.fit5 route) are not fitted",
                         "on a cluster; drop cluster ="), call = NULL, arguments = "cluster")
    return(general_family_fit(cl, env, a$family, a$method, control, device, dots, t0))
  }

  ## ---- 2. mgcv's setup (R/fit_setup.R), and the fit's state ----------------
  ## (data = gamgpu_shards(): the nodes load their rows, the set-up runs on
  ## a sample of them, R/shards.R)
  sh <- if (!missing(data) && inherits(data, "gamgpu_shards")) {
    if (!is.null(a$G))
      gamgpu_abort("gamgpu_bad_input", "data = gamgpu_shards() takes no G =", call = NULL)
    if (!shard_family_ok(a$family))
      gamgpu_abort("gamgpu_unsupported_argument",
                   sprintf(paste("data = gamgpu_shards(): the %s family is not fitted on shards",
                                 "left on the nodes yet (R's exponential and quasi families,",
                                 "negbin(theta), Tweedie(p) and nb() are); use in-memory data",
                                 "with cluster ="), a$family$family),
                   call = NULL, arguments = "data")
    # (a method not fitted on a cluster refused before the nodes load)
    if (!is.null(dots$cluster) && inherits(dots$cluster, "cluster"))
      check_cluster(dots$cluster, list(route = a$route, method = a$method))
    shards_load(data, dots$cluster, cl, env, formula, a$control$chunk.size)
  }
  if (!is.null(sh)) on.exit(sh$drop(), add = TRUE)
  if (is.null(a$G)) {
    mc <- match.call(expand.dots = TRUE)
    if (!is.null(sh)) {
      data <- sh$data
      mc$subset <- mc$na.action <- NULL        # (applied on the nodes)
    }
    check_variables(formula, if (missing(data)) NULL else data, env)
    progress <- progress_wanted(data_rows(if (!missing(data)) data))
    progress_phase(progress, "Setting up the model (mgcv's setup)")
    G <- model_setup(mc, env, a, if (!missing(data)) list(data))
    if (!is.null(sh)) G$var.summary <- shard_var_summary(G$var.summary, sh$cols)
    if (!dots$fit) return(G)
  } else {
    G <- a$G
    progress <- progress_wanted(nrow(G$mf))
  }
  f <- fit_state(G, a)

  ## ---- 3. the rows: response, weights, offset (R/fit_rows.R) ---------------
  fit_rows(f)

  ## ---- 4. the engine's fit (R/fit_engine.R): X or its recipe; the model
  ## session (R/session.R) that loads the rows and builds X once, on the
  ## device for a GPU fit; the route's smoothing parameters chosen against
  ## it (GCV.Cp's from one Gram product, gam()'s outer iteration's by the
  ## Laplace approximation); the engine's penalized IRLS at them
  if (is.null(dots$cluster)) {
    progress_phase(progress, "Planning the model matrix")
    fit_model_matrix(f)
    progress_phase(progress, "Loading the data and building X on the backend")
    f$ses <- model_session(f$X, f$y, f$w, f$offset, f$plan, f$control,
                           unit_weights = f$unit_weights, ar = f$ar)
  } else {
    # (the rows on the nodes of a parallel cluster, X built there: R/cluster.R)
    check_cluster(dots$cluster, f)
    progress_phase(progress, "Loading the shards and building X on the cluster's nodes")
    f$X <- NULL
    f$x_source <- "cluster"
    f$x_reason <- NULL
    f$small <- ""
    if (!is.null(sh))
      f$shards <- list(weights = cl$weights, offset = cl$offset, levels = sh$levels,
                       na_rows = sh$na_rows)
    f$ses <- cluster_session(f, dots$cluster, a$policy, shards = sh)
  }
  on.exit(f$ses$close(), add = TRUE)
  # (routes that choose smoothing parameters before the fit; fREML's and
  # engine_gam's choose nothing, their selection time is 0)
  selects <- f$route$name %in% c("gcv", "outer", "efam_outer")
  if (selects)
    progress_phase(progress, sprintf("Choosing the smoothing parameters (%s)", f$method))
  t_sel <- proc.time()[["elapsed"]]
  switched <- f$route$choose(f)
  t_sel <- if (selects) proc.time()[["elapsed"]] - t_sel else 0
  if (!is.null(switched)) f$route <- switched
  rs <- engine_spec(f)
  t1 <- proc.time()[["elapsed"]]
  progress_phase(progress, "Fitting (penalized IRLS on the backend)")
  res <- fit_engine(f, rs)
  if (!is.null(f$lap)) f$lap$P$close()
  if (is.null(sh)) f$ses$close()           # (shards: their summaries first)
  rm("X", envir = f)
  if (dots$gc.level > 0) gc()
  t2 <- proc.time()[["elapsed"]]

  ## ---- 5. the fitted object (R/fit_report.R), the route's finishing -------
  progress_phase(progress, "Post-processing")
  route <- f$route
  fit <- gg_assemble(G, res, f$family, f$y, f$w, f$offset, f$n, f$method, f$gamma, cl,
                     f$control, f$sp.names, f$scale)
  if (!is.null(sh)) fit <- shard_finish(fit, f, res)
  fit <- route$finish(fit, f, res)
  fit <- ar1_finish(fit, f$ar)
  sc <- res$scalars
  if (!is.null(f$ef) && !is.null(sh))
    fit <- shard_efam_finish(fit, f, res$ef.theta, sc[["theta.failed"]] != 0)
  else if (!is.null(f$ef))
    fit <- efam_finish(fit, f$family, res$ef.theta, sc[["theta.failed"]] != 0, G,
                       f$control$nthreads)
  if (!is.null(sh)) f$ses$close()           # (the shards' summaries are in)
  fit <- route$last(fit, f)
  fit <- prediction_parameters(fit, G)
  if (!fit$converged)
    gamgpu_warn("gamgpu_not_converged",
                sprintf("penalized IRLS did not converge in %d iterations (control maxit = %d)",
                        as.integer(sc[["iter"]]), f$control$maxit))
  route$warn(fit, f, res)
  fit$device <- device_report(f, res, a$policy,
                              c(t0 = t0, t1 = t1, t2 = t2, t3 = proc.time()[["elapsed"]]),
                              t_sel)
  if (!is.null(f$ses$nodes))
    fit$device$cluster <- c(list(nodes = f$ses$nodes), as.list(f$ses$traffic()))
  fit
}
