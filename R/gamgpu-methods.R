#' Smoothness selection methods and families in gamgpu
#'
#' Which criteria \code{gam_gpu()} chooses the smoothing parameters by, for
#' which families, and how each fit relates to mgcv's -- as mgcv's
#' \code{?gam.selection} does for \code{gam()}.
#'
#' @section Methods:
#' \describe{
#'   \item{\code{"fREML"} (the default)}{\code{bam()}'s fast REML: a
#'     penalized IRLS whose smoothing parameters are re-estimated by REML at
#'     every iteration (the performance iteration), the method for big data.
#'     Every row-wise step runs on the device for a GPU fit; the answer is
#'     \code{bam(method = "fREML")}'s to rounding.  With AR1 residuals
#'     (\code{rho}, \code{AR.start}) as \code{bam()}.}
#'   \item{\code{"REML"}, \code{"ML"}, \code{"P-REML"}, \code{"P-ML"}}{
#'     \code{gam()}'s Laplace approximate (restricted) marginal likelihood,
#'     by \code{gam()}'s outer Newton iteration on the log smoothing
#'     parameters around a converged penalized IRLS (gam.fit3), with exact
#'     derivatives; the P- variants with the Pearson scale.  The answer is
#'     \code{gam()}'s to rounding where the criterion is not flat.}
#'   \item{\code{"GCV.Cp"}, \code{"GACV.Cp"}}{\code{gam()}'s default:
#'     generalized cross validation with the scale unknown, UBRE (Mallows'
#'     Cp) with \code{scale} given; GACV in place of GCV.  For an additive
#'     (gaussian identity) model by \code{mgcv::magic()} on the problem
#'     reduced to p rows, as \code{gam()}; otherwise by the outer Newton
#'     iteration.}
#'   \item{\code{"NCV"}}{mgcv 1.9's neighbourhood cross validation: not
#'     available (an error of class \code{gamgpu_unsupported_method}).}
#' }
#'
#' @section Families:
#' \describe{
#'   \item{R's exponential families}{gaussian, binomial (a 0/1, proportion
#'     or \code{cbind(successes, failures)} response), poisson, Gamma,
#'     inverse.gaussian with the links R allows (and \code{power()} links
#'     for those of a positive mean); quasibinomial and quasipoisson.
#'     Every method (quasi families: fREML, GCV.Cp and GACV.Cp).}
#'   \item{mgcv's \code{negbin(theta)}, \code{Tweedie(p)}}{known theta or
#'     power: every method.}
#'   \item{mgcv's extended families}{\code{nb()}, \code{tw()},
#'     \code{betar()}, \code{scat()}, \code{ziP()}, \code{ocat()} and the
#'     censored \code{cnorm()}, \code{clog()}, \code{cpois()}, and
#'     \code{gfam()} (mgcv >= 1.9) of gaussian, poisson, binomial, Gamma,
#'     inverse.gaussian and \code{nb()} members: fREML as
#'     \code{bam()} (theta estimated between iterations on the device's row
#'     sums), and \code{gam()}'s gam.fit4 REML or ML (as in \code{gam()},
#'     \code{"GCV.Cp"}, \code{"GACV.Cp"} and the P- methods become REML).}
#'   \item{mgcv's general families}{\code{cox.ph()}, \code{gaulss()},
#'     \code{gammals()}, \code{gumbls()}, \code{gevlss()}, \code{twlss()},
#'     \code{ziplss()}, \code{shash()}, \code{multinom()} and \code{mvn()}: \code{gam()}'s
#'     REML by gam.fit5.  With any method but "NCV" (REML, as in
#'     \code{gam()}) gamgpu's native route
#'     fits \code{cox.ph()} (strata too) and the location-scale families
#'     and \code{multinom()} but \code{twlss()}: gam.fit5's Newton and
#'     newton()'s outer iterations run by gamgpu on p x p quantities, X in
#'     one model session; the others (and every call under
#'     \code{options(gamgpu.general_route = "gam")}) by mgcv's own Newton and
#'     outer iterations (every optimizer \code{gam()} takes); on either
#'     route the work over the rows in gamgpu's engine
#'     (\code{fit$device$route} says which route, \code{route_reason} why
#'     gam()'s): on the GPU (the
#'     log likelihood's rows, the products and REML's traces; X loaded once
#'     a fit; \code{cox.ph()}'s risk sets as prefix sums, segmented by
#'     stratum).
#'     \code{mvn()}'s log likelihood from the rows' sufficient statistics
#'     (the residuals' products with X and with themselves, on the device
#'     for a GPU fit).
#'     \code{"fREML"} is refused, as \code{bam()} does not fit them.}
#' }
#'
#' @section The model matrix under gam()'s methods:
#' \code{gam()} sets its bases up on every row.  With more rows than
#' \code{chunk.size} gamgpu computes what they take of every row (knots,
#' centring constraints, scalings) in C -- on the device for a GPU fit --
#' sets the bases up on a few rows, and builds X from its recipe where the
#' fit runs, for smooths \code{tp}, \code{ts}, \code{cr}, \code{cs}, \code{cc},
#' \code{ps}, \code{cp}, \code{bs}, \code{gp}, \code{fs} (cr base),
#' \code{sz} (cr or tp base; its smooth's \code{Xb}, mgcv's copy of the
#' base's basis on every row for \code{gamm()}'s conversion, is left
#' \code{NULL}),
#' \code{te()} and \code{ti()} of cr, ps and tp margins, with by
#' variables, \code{t2()} of cr and ps margins (each margin's natural
#' parameterisation from its cross products over every row; X built with
#' gam()'s fit constraint, the coefficients reported in its prediction
#' parameterisation as gam() reports them), and random effects.  Any other
#' term (for example a \code{t2()} of thin plate margins or with a by
#' variable, a thin plate factor smooth, linked smooths by \code{id}):
#' X is built in R on every row, and \code{fit$device$model_matrix_reason}
#' says which term.
#'
#' @section On a cluster:
#' With \code{cluster = cl} and the data in this session every method
#' above is fitted but for the general and censored families and AR1
#' residuals: fREML's and GCV.Cp's (additive) products summed over the
#' nodes by the engine, gam()'s outer
#' iteration's (REML, ML, GCV.Cp/UBRE, P-REML, P-ML, an extended family's
#' REML) by its session operations, each run on every node's shard and
#' summed in node order.  With \code{data = gamgpu_shards()} (rows that stay
#' on the nodes) fREML (for the families \code{\link{gamgpu_shards}} lists),
#' the additive GCV.Cp and gam()'s outer iteration for R's exponential and
#' quasi families and \code{nb()} are (its row sums computed on the nodes);
#' \code{cbind()} trials are refused there
#' (\code{gamgpu_unsupported_argument}).
#'
#' Every family, link or method outside these lists is refused with a
#' classed error (\code{gamgpu_bad_family}, \code{gamgpu_bad_link},
#' \code{gamgpu_unsupported_method}) that says what to use instead; none is
#' fitted as something else.
#'
#' @seealso \code{\link{gam_gpu}}, \code{mgcv::gam.selection},
#'   \code{mgcv::family.mgcv}
#' @name gamgpu-methods
#' @aliases gamgpu-methods
NULL
