# Tweedie(p) (mgcv's Tweedie family with a known power 1 < p <= 2, a plain
# "family", variance mu^p, the scale estimated) is the engine's "tweedie"
# rows with theta = p; its aic is R's (ldTweedie).
#
# mgcv's negbin(theta): a plain "family" with one known theta, the scale
# estimated (bam() treats it as any exponential family), is the engine's
# "negbin" rows (family_math.h: variance mu + mu^2 / theta).
#
# mgcv's extended families nb(), tw(), betar(), scat(), ziP() and ocat()
# are fitted as bgam.fit fits them: penalized IRLS rows from the family's
# deviance derivatives and theta estimated between iterations by
# estimate.theta(), over row sums from the backend (inst/include/
# efam_math.h, one header per family; rows_ef_sums on the device), or
# fixed where the family was built with theta.  efam_spec() gives the
# engine the family's parameters, efam_finish() does what bam() does after
# the fit.  Other extended families are refused by resolve_family().

# mgcv's negbin(theta): a plain "family" (not an extended one) whose name
# is "Negative Binomial(theta)" and whose theta is known.
is_negbin <- function(family)
  !inherits(family, "extended.family") && is.character(family$family) &&
    all(startsWith(family$family, "Negative Binomial")) && is.function(family$getTheta)

# mgcv's Tweedie(p): a plain "family" named "Tweedie(p)", p in its closure.
is_tweedie <- function(family)
  !inherits(family, "extended.family") && is.character(family$family) &&
    length(family$family) == 1L && startsWith(family$family, "Tweedie(") &&
    is.function(family$variance) && exists("p", envir = environment(family$variance),
                                            inherits = FALSE)

tweedie_power <- function(family) get("p", envir = environment(family$variance))

# mgcv's extended families that gamgpu fits, by the name their constructor
# gives (a fitted model's family is renamed by postproc, "Negative
# Binomial(2.3)", "Tweedie(p=1.5)": the part before "(" compared without
# case), and the engine's name for each (inst/include/efam_math.h).
.gg_efam <- c("negative binomial" = "negbin", "tweedie" = "tw", "beta regression" = "betar",
              "scaled t" = "scat", "zero inflated poisson" = "ziP",
              "ordered categorical" = "ocat", "cnorm" = "cnorm", "censored normal" = "cnorm",
              "clogistic" = "clog",
              "cpois" = "cpois")

# The engine's name of an extended family gamgpu fits, or NULL.  (cnorm()
# is "censored normal" in mgcv 1.8-41, "cnorm" in 1.9-x, where cpois()
# calls itself "cnorm" too until its fit's postproc renames it: it is the
# "cnorm" without a theta.)
efam_name <- function(family) {
  if (!inherits(family, "extended.family") || !is.character(family$family) ||
      length(family$family) != 1L || !is.function(family$getTheta))
    return(NULL)
  if (is_gfam(family)) return("gfam")
  key <- tolower(trimws(sub("\\(.*$", "", family$family)))
  if (key == "cnorm" && length(family$getTheta()) == 0L) return("cpois")
  if (key %in% names(.gg_efam)) .gg_efam[[key]] else NULL
}

# mgcv's gfam(fl) (mgcv >= 1.9): "gfam{member,...}", its members in getfl().
is_gfam <- function(family)
  is.character(family$family) && length(family$family) == 1L &&
    startsWith(family$family, "gfam{") && is.function(family$getfl)

# gfam()'s members as the engine takes them (efam_par.h's gg_fm_gfmem, by
# name: src/r/efam_r.c's gfam_members()): each one's family and link, its
# own theta values' first index th0 and count nth in gfam's theta (0-based),
# and the index of its log scale there (isc, -1: none) -- the order of
# gfam()'s getTheta(): each member's thetas, then its log scale where
# its scale is unknown.  A member the engine does not fit is refused,
# classed, by name.
.gg_gfam_max <- 8L
gfam_members <- function(family) {
  fl <- family$getfl()
  nf <- length(fl)
  refuse <- function(why)
    gamgpu_abort("gamgpu_bad_family",
                 sprintf(paste("gfam(): %s; gamgpu fits gfam() members gaussian, poisson,",
                               "binomial, Gamma, inverse.gaussian (their links as for the",
                               "family alone) and nb() with its theta estimated; fit this",
                               "model with mgcv::gam()"), why), call = NULL)
  if (nf < 1L || nf > .gg_gfam_max)
    refuse(sprintf("%d members (gamgpu takes 1 to %d)", nf, .gg_gfam_max))
  exp_fams <- c("gaussian", "poisson", "binomial", "Gamma", "inverse.gaussian")
  out <- list(family = character(nf), link = character(nf), th0 = integer(nf),
              nth = integer(nf), isc = integer(nf))
  i0 <- 0L
  for (k in seq_len(nf)) {
    m <- fl[[k]]
    if (inherits(m, "general.family"))
      refuse(sprintf("member %d, %s, is a general family", k, m$family))
    link <- engine_link(m)
    if (inherits(m, "extended.family")) {
      if (!identical(efam_name(m), "negbin"))
        refuse(sprintf("member %d, %s, is an extended family other than nb()", k, m$family))
      if (!isTRUE(m$n.theta == 1L))
        refuse(sprintf("member %d, nb() with its theta fixed, is not fitted", k))
      if (!(m$link %in% .gg_links$negbin))
        refuse(sprintf("member %d, nb(), has link '%s'", k, m$link))
      fname <- "nb"
      nth <- 1L
    } else {
      if (!(m$family %in% exp_fams))
        refuse(sprintf("member %d is family '%s'", k, m$family))
      power_ok <- m$family %in% .gg_power_link_families && !is.null(link_power(m))
      if (!(m$link %in% .gg_links[[m$family]]) && !power_ok)
        refuse(sprintf("member %d, %s, has link '%s'", k, m$family, m$link))
      fname <- m$family
      nth <- 0L
    }
    sc <- isTRUE(m$scale < 0)
    out$family[k] <- fname
    out$link[k] <- link
    out$th0[k] <- i0
    out$nth[k] <- nth
    out$isc[k] <- if (sc) i0 + nth else -1L
    i0 <- i0 + nth + sc
  }
  if (i0 != length(family$getTheta()))
    refuse("its theta does not have the members' count of values")
  if (i0 > 10L)
    refuse(sprintf("%d theta values (gamgpu takes at most 10)", i0))
  out
}

# gfam()'s response cbind(y, index): the first column, the member index as
# attr(y, "censor") (the engine's second response column), checked as
# gfam()'s preinitialize checks it.
gfam_response <- function(y, family) {
  if (!is.matrix(y) || ncol(y) != 2L)
    gamgpu_abort("gamgpu_bad_response",
                 "gfam(): the response must be a two-column matrix cbind(y, index)", call = NULL)
  nf <- length(family$getfl())
  fi <- as.double(y[, 2])
  if (anyNA(fi) || any(fi != round(fi)) || !all(fi %in% seq_len(nf)) ||
      !all(seq_len(nf) %in% fi))
    gamgpu_abort("gamgpu_bad_response",
                 "gfam(): the family index does not match the family list (each of 1..length(fl), and only those)",
                 call = NULL)
  y <- as.double(y[, 1])
  attr(y, "censor") <- fi
  y
}

# mgcv's censored families, whose response is cbind(y, yat) (efam_cens.h).
is_censored_family <- function(family)
  isTRUE(efam_name(family) %in% c("cnorm", "clog", "cpois"))

# A censored family's response as the engine and the family's functions
# take it, as its initialize makes it: the first column, the second as
# attr(y, "censor") (yat == y uncensored, -Inf left and Inf right censored,
# else the interval between the two).  cnorm()'s deviance has no rows
# without the attribute (mgcv's dev.resids is 0 there), so its response
# must be the matrix.
censored_response <- function(y, family) {
  name <- efam_name(family)
  if (is.matrix(y)) {
    if (ncol(y) != 2L)
      gamgpu_abort("gamgpu_bad_response",
                   sprintf("%s(): the response must be a two-column matrix cbind(y, yat)", name),
                   call = NULL)
    yat <- as.double(y[, 2])
    y <- as.double(y[, 1])
    attr(y, "censor") <- yat
  } else if (name == "cnorm") {
    gamgpu_abort("gamgpu_bad_response",
                 paste("cnorm() needs a two-column response cbind(y, yat) (cbind(y, y) where",
                       "nothing is censored): mgcv's cnorm() has no deviance for a vector",
                       "response"), call = NULL)
  }
  yat <- attr(y, "censor")
  if (!is.null(yat) && anyNA(yat))
    gamgpu_abort("gamgpu_bad_response",
                 sprintf("%s(): the response's second column has missing values", name),
                 call = NULL)
  if (name == "cpois") {
    # (mgcv's cpois() has no deviance for an observed count that is not a
    # whole number >= 0: dpois() is 0 there)
    yy <- as.double(y)
    obs <- if (is.null(yat)) rep(TRUE, length(yy)) else yat == yy
    if (any(obs & (yy < 0 | yy != round(yy))))
      gamgpu_abort("gamgpu_bad_response",
                   "cpois(): an uncensored response must be a whole number >= 0", call = NULL)
  }
  y
}

# y as a double vector, a censored family's attr(y, "censor") kept.
y_double <- function(y) {
  yat <- attr(y, "censor")
  y <- as.double(y)
  if (!is.null(yat)) attr(y, "censor") <- as.double(yat)
  y
}

#' The family as the engine names it
#'
#' @param family a family object, checked by resolve_family().
#' @return \code{list(name, theta, estimated)}: the engine's family name,
#'   its theta (\code{NULL} for the families without one) and whether the
#'   engine estimates theta (nb() with \code{n.theta > 0}).
#' @noRd
engine_family <- function(family) {
  if (is_negbin(family))
    return(list(name = "negbin", theta = family$getTheta(), estimated = FALSE))
  ef <- efam_name(family)
  if (!is.null(ef))
    return(list(name = ef, theta = if (ef == "negbin") exp(family$getTheta()),
                estimated = isTRUE(family$n.theta > 0), efam = TRUE))
  if (is_tweedie(family))
    return(list(name = "tweedie", theta = tweedie_power(family), estimated = FALSE))
  list(name = family$family, theta = NULL, estimated = FALSE)
}

#' An extended family's parameters for the engine
#'
#' What bgam.fit sets before its iterations: the family's theta (its
#' getTheta(), the working parameters), the fixed settings the row
#' functions need (\code{aux}: tw's a and b, betar's eps, scat's min.df,
#' ziP's b) and the scale: 1 for the families without one; tw()'s
#' estimated with theta by estimate.theta() (from var(y) / 10) when bam's
#' \code{scale} is not positive, else fixed at it.
#' @param family an extended family (efam_name() not NULL).
#' @param scale bam's \code{scale} argument.
#' @param y the response (after the family's preinitialize).
#' @return \code{list(ef, scale)}: \code{ef} for the engine
#'   (\code{list(theta, aux, log_scale, scale_est)}) and the scale the REML
#'   fit starts with (known to it).
#' @noRd
efam_spec <- function(family, scale, y) {
  name <- efam_name(family)
  aux <- switch(name,
                tw = c(get(".a", envir = environment(family$Dd)),
                       get(".b", envir = environment(family$Dd))),
                betar = get(".betarEps", envir = environment(family$dev.resids)),
                scat = get(".min.df", envir = environment(family$getTheta)),
                ziP = c(get(".b", envir = environment(family$Dd)), 0),
                # (the censored families' start, pmax(y, min(y > 0)), or y)
                cnorm = , clog = , cpois =
                  if (family$link == "identity") -Inf else as.numeric(min(y > 0)),
                numeric(0))
  gm <- if (name == "gfam") gfam_members(family)
  if (name == "tw" && !(aux[1] > 1 && aux[1] < aux[2] && aux[2] < 2))
    gamgpu_abort("gamgpu_bad_family",
                 sprintf(paste("tw(a = %g, b = %g): the power's bounds must satisfy",
                               "1 < a < b < 2"), aux[1], aux[2]), call = NULL)
  scale_est <- 0L
  eng_scale <- 1
  if (!is.null(family$scale) && family$scale < 0) {
    if (scale > 0) eng_scale <- scale else {
      scale_est <- 1L
      eng_scale <- stats::var(y) * 0.1
    }
  } else if (!is.null(family$scale) && family$scale > 0) eng_scale <- family$scale
  if (name == "tw" && scale_est == 1L && !isTRUE(family$n.theta > 0))
    message(structure(
      class = c("gamgpu_mgcv_difference", "gamgpu_message", "message", "condition"),
      list(message = paste(
        "tw(theta = ) with the scale estimated: gamgpu estimates the scale by maximum",
        "likelihood (mgcv's estimate.theta() with p fixed); bam() in mgcv 1.8-41 uses",
        "exp(theta) as the scale here instead, so the fits differ\n"), call = NULL)))
  ef <- list(theta = as.numeric(family$getTheta()), aux = as.numeric(aux),
             log_scale = log(eng_scale), scale_est = scale_est)
  if (!is.null(gm)) ef$gfam <- gm
  list(ef = ef, scale = eng_scale)
}

#' What bgam.fit does with an extended family before its iterations
#'
#' The family's preinitialize (betar() clamps y into (eps, 1 - eps); scat()
#' and ocat() set theta's start with putTheta, as bam() does, in the family
#' object itself) and its initialize, evaluated as bgam.fit evaluates it,
#' for the checks it makes (negative counts, non-integer categories, y out
#' of range): its errors become classed ones.
#' @return \code{list(y, family)}.
#' @noRd
efam_prepare <- function(family, y, w) {
  if (is.function(family$preinitialize)) {
    # (gfam()'s takes cbind(y, index) and sets the index in the family)
    gf <- is_gfam(family)
    pini <- family$preinitialize(if (gf) cbind(y, attr(y, "censor")) else y, family)
    if (!is.null(pini$Theta)) family$putTheta(pini$Theta)
    if (!is.null(pini$y)) y <- if (gf) structure(as.double(pini$y), censor = attr(y, "censor"))
                               else pini$y
  }
  env <- list2env(list(y = y, weights = w, nobs = length(y), family = family,
                       mustart = NULL, etastart = NULL, start = NULL),
                  parent = environment(family$Dd))
  name <- efam_name(family)
  tryCatch(eval(family$initialize, env), error = function(e)
    gamgpu_abort("gamgpu_bad_response",
                 sprintf("the response does not suit %s(): %s", name, conditionMessage(e)),
                 call = NULL))
  # mgcv truncates a category that is not a whole number (alpha[y]): refused
  if (name == "ocat" && any(y != round(y)))
    gamgpu_abort("gamgpu_bad_response",
                 "ocat(): the response must be whole category numbers 1..R", call = NULL)
  list(y = y, family = family)
}

#' What bam() sets after an extended family's fit
#'
#' The final theta into the family (putTheta), the family's postproc (its
#' name with theta, and for some the deviance and null deviance), the
#' residuals as residuals() gives them for the families that have their
#' own, the deviance as their sum of squares, the null deviance of the
#' intercept-only fit at the final theta, the aic of an extended family
#' (family$aic(y, mu, theta, wt, dev) + 2 sum(edf)) and bam's scale fields
#' (scale.estimated TRUE, as bam() leaves it for a family that is neither
#' binomial nor poisson; sig2 the scale: 1, or tw()'s estimate).  A failed
#' theta step is mgcv's warning, classed.
#' @noRd
efam_finish <- function(object, family, theta, theta_failed, G, nthreads = 1L) {
  if (theta_failed)
    gamgpu_warn("gamgpu_theta_step_failed", "step failure in theta estimation", call = NULL)
  if (isTRUE(family$n.theta > 0)) family$putTheta(theta)
  object$family <- family
  y <- object$y
  w <- object$prior.weights
  name <- efam_name(family)
  fam_post <- family
  posr <- NULL
  ef <- efam_spec(family, 1, y)$ef     # the final theta, for the C parts below
  dev_rows <- function(y, mu, wt, theta = NULL)
    .Call(gg_efam_dev_resids_r, name, y_double(y), as.double(mu), as.double(wt), ef,
          nthreads)
  if (name == "ziP") {
    # ziP's postproc, as mgcv's, with its row-wise parts in C: the
    # saturated fit of every row and the null deviance's search
    lf <- .Call(gg_zip_saturated_r, y, w, ef, nthreads)
    l2 <- family$dev.resids(y, object$linear.predictors, w)
    object$residuals <- efam_deviance_residuals(object, family, lf, l2)
    meany <- mean(y)
    fnull <- function(gamma) sum(dev_rows(y, rep(gamma, length(y)), w))
    posr <- list(
      family = paste("Zero inflated Poisson(", paste(round(family$getTheta(TRUE), 3),
                                                     collapse = ","), ")", sep = ""),
      deviance = sum(l2 - lf),
      null.deviance = stats::optimize(fnull, interval = c(meany / 5, meany * 3))$objective -
        sum(lf))
  } else if (name == "betar") {
    # its saturated log likelihood (an iteration over rows, in R) once, for
    # the residuals and for postproc (which gets it from a family copy)
    lf <- family$saturated.ll(y, w, family$getTheta(TRUE))
    fam_post$saturated.ll <- function(...) lf
    object$residuals <- efam_deviance_residuals(object, family, lf)
  } else if (!is.null(family$residuals)) {
    object$residuals <- stats::residuals(object)
  } else {
    object$residuals <- sqrt(pmax(dev_rows(y, object$fitted.values, w), 0)) *
      sign(y - object$fitted.values)
  }
  off <- G$offset
  if (name %in% c("negbin", "tw", "scat", "ocat", "cnorm", "clog", "cpois")) {
    # postproc's find.null.dev() sums dev.resids over all rows some twenty
    # times (optimize()): the family copy it gets has them from C; and a
    # zero offset goes as the number 0, so that each step takes the inverse
    # link of one number, not of every row (the same mu on every row, the
    # same sums: these postprocs read the offset nowhere else)
    # With one mu for every row the copy returns the rows' sum, summed in C
    # over threads (find.null.dev() sums what it returns; no n-vectors):
    # the search was 62% of nb()'s post-processing at 3e5 rows on the
    # 2-core machine.
    fam_post$dev.resids <- function(y, mu, wt, theta = NULL)
      if (length(mu) == 1L && NROW(y) != 1L)
        .Call(gg_efam_dev_sum_r, name, y_double(y), as.double(mu), as.double(wt), ef, nthreads)
      else dev_rows(y, mu, wt)
    if (length(off) && !anyNA(off) && all(off == 0)) off <- 0
  }
  if (is.null(posr) && is.function(family$postproc))
    posr <- family$postproc(family = fam_post, y = y, prior.weights = w,
                    fitted = object$fitted.values,
                    linear.predictors = object$linear.predictors,
                    offset = off, intercept = G$intercept)
  if (!is.null(posr$family)) object$family$family <- posr$family
  object$deviance <- if (!is.null(posr$deviance)) posr$deviance else sum(object$residuals^2)
  object$null.deviance <- if (!is.null(posr$null.deviance)) posr$null.deviance else
    sum(family$dev.resids(y, stats::weighted.mean(y, w), w, family$getTheta()))
  dev <- object$sig2 * sum(w)
  aic <- if (name == "tw")        # its ldTweedie series over threads in C
    .Call(gg_tw_aic_r, y, object$fitted.values, w, ef, dev, nthreads)
  else efam_aic(family, name, y, object$fitted.values, w, dev)
  object$aic <- aic + 2 * sum(object$edf)
  object$scale.estimated <- TRUE
  if (name == "gfam") {
    # (gam()'s and bam()'s y and residuals are plain vectors: the index is
    # in the family, set by its preinitialize)
    attr(object$y, "censor") <- NULL
    attr(object$residuals, "censor") <- NULL
  }
  object
}

# residuals(object) of ziP() and betar() (their family$residuals(object,
# "deviance")) from their saturated log likelihood lf (and for ziP the
# deviance l2), computed once by efam_finish(): mgcv's expressions, except that ziP's fitted response
# comes from its family$predict() at the linear predictors instead of
# predict.gam(), which would build the model matrix again.
efam_deviance_residuals <- function(object, family, lf, l2 = NULL) {
  y <- object$y
  w <- object$prior.weights
  if (identical(efam_name(family), "ziP")) {
    lp <- object$linear.predictors
    res <- l2 - lf
    s <- attr(res, "sign")
    if (is.null(s)) s <- sign(y - family$predict(family, eta = lp)[[1]])
    return(as.numeric(sqrt(pmax(res, 0)) * s))
  }
  mu <- object$fitted.values
  res <- 2 * lf$term + family$dev.resids(y, mu, w)
  res[res < 0] <- 0
  sqrt(res) * sign(y - mu)
}

# mgcv's tw() and cnorm() keep some of their functions (aic, ls,
# dev.resids) in environments whose parent is the global environment, where
# they look for mgcv's ldTweedie and dpnorm: found only while mgcv is
# attached.  The copy of f returned here finds them without attaching mgcv
# (and still finds the family's own settings).
mgcv_visible <- function(f) {
  if (!is.function(f)) return(f)
  env <- new.env(parent = environment(f))
  env$ldTweedie <- mgcv::ldTweedie
  env$dpnorm <- mgcv_fun("dpnorm")
  environment(f) <- env
  f
}

# Which release's estimate.theta() bam() estimates an extended family's
# theta with, found by behaviour, not version number: mgcv 1.9-0 changed
# it (only the parameters not yet converged step; other thresholds), and
# the engine has both (engine_pirls.c: 0 is 1.8-41's, 1 is 1.9-x's).  Once
# per session a small scat() model, whose theta the two rules estimate
# apart, is fitted by bam() and by the engine under each rule; the rule
# whose theta is bam()'s is used for every fit (efam_theta_rule_status()
# says which, and how far apart).
.gg_theta <- new.env(parent = emptyenv())

efam_theta_rule <- function() {
  if (!is.null(.gg_theta$probing)) return(.gg_theta$probing)
  efam_theta_rule_status()$rule
}

efam_theta_rule_status <- function() {
  if (is.null(.gg_theta$status))
    .gg_theta$status <- tryCatch(efam_theta_probe(), error = function(e)
      list(rule = 0L, why = paste("the probe failed:", conditionMessage(e))))
  .gg_theta$status
}

efam_theta_probe <- function() {
  n <- 1000L
  i <- seq_len(n)
  x <- (i * 0.6180339887498949) %% 1
  # (t(4) noise without random numbers: its quantiles at a low-discrepancy
  # sequence)
  e <- 0.7 * stats::qt((i * 0.4142135623730951 + 0.5 / n) %% 1, df = 4)
  probe <- data.frame(x = x, y = sin(2 * pi * x) + e)
  b <- mgcv::bam(y ~ s(x, k = 8), family = mgcv::scat(), data = probe)
  th_b <- b$family$getTheta()
  dist <- vapply(0:1, function(r) {
    .gg_theta$probing <- r
    on.exit(.gg_theta$probing <- NULL)
    g <- gam_gpu(y ~ s(x, k = 8), family = mgcv::scat(), data = probe, device = "off")
    max(abs(g$family$getTheta() - th_b))
  }, 0)
  rule <- which.min(dist) - 1L
  if (min(dist) > 1e-8)
    gamgpu_inform("gamgpu_mgcv_difference",
                  sprintf(paste("neither of gamgpu's estimate.theta() rules reproduces bam()'s",
                                "theta under mgcv %s (%.2g apart at best): extended families'",
                                "theta may differ from bam()'s by that much"),
                          utils::packageVersion("mgcv"), min(dist)))
  list(rule = rule, distance = dist,
       why = sprintf("bam()'s theta is %.2g from the 1.8-41 rule's, %.2g from the 1.9-x rule's",
                     dist[1], dist[2]))
}
