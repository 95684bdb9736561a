# predict() for gam_gpu fits: the standard errors of large predictions on
# the device.  predict(fit, newdata, se.fit = TRUE) with type "link" or
# "response" needs, besides X beta, the row quadratic forms x_i' Vp x_i of
# the lp matrix -- O(n p^2), the dominant cost on large newdata.  This
# method builds the lp matrix with full_model_matrix() (C evaluators for
# cr/tp bases, forked workers for the rest) from the model frame mgcv's
# predict.gam() would build, and computes fit and se.fit in C: on the
# device (src/cuda/cuda_predict.c) or on the CPU twin (src/cpu/predict_cpu.c).
# Every other request is mgcv's predict.gam() (NextMethod()).

#' Predictions from a gam_gpu fit
#'
#' The method of [mgcv::predict.gam()] for [gam_gpu()] fits.  Predictions
#' with standard errors on the link or response scale (`se.fit = TRUE`,
#' `type = "link"` or `"response"`, no `terms` or `exclude`) are computed
#' by gamgpu: the model frame of `newdata` is built exactly as
#' `predict.gam()` builds it (its `na.action`, factor levels of the fit,
#' offsets in the formula), the lp matrix by gamgpu's basis evaluators, and
#' the fit `X beta` and standard errors `sqrt(x_i' Vp x_i)` on the GPU or
#' the CPU according to `device`.  The results equal `predict.gam()`'s to
#' rounding.  Everything else -- other types, `se.fit = FALSE`, `terms`,
#' `exclude` -- is `predict.gam()` itself, and so are the rare requests
#' the device path does not cover (for example `newdata.guaranteed = TRUE`
#' or a `newdata` that is already a model frame): under policy `"auto"`
#' that is recorded as a fallback in [gpu_telemetry()], under
#' `"required"` it is an error of class `gamgpu_unsupported_predict`.
#'
#' Under `"auto"`, newdata with fewer rows than option
#' `gamgpu.predict_min_rows` (default 10000) is predicted by
#' `predict.gam()`, and the fallback recorded with that reason; if the
#' device fails, the CPU computes the result and the fallback is recorded.
#' `"off"` always computes on the CPU.  `"required"` uses the device or
#' raises an error (`gamgpu_device_unavailable`, `gamgpu_device_oom`, ...).
#'
#' @param object a fit from [gam_gpu()].
#' @param newdata,type,se.fit,terms,exclude,block.size,newdata.guaranteed,na.action,unconditional,iterms.type
#'   as for [mgcv::predict.gam()]; `block.size` does not change the
#'   results of the gamgpu path.
#' @param device where to compute the standard errors: `"auto"`, `"off"`
#'   (the CPU) or `"required"`; see [gpu_policy()].
#' @param ... passed on to [mgcv::predict.gam()].
#' @return As [mgcv::predict.gam()]: with `se.fit = TRUE` a list of `fit`
#'   and `se.fit`.
#' @examples
#' library(mgcv)
#' set.seed(2)
#' dat <- gamSim(1, n = 2000, dist = "normal", scale = 2, verbose = FALSE)
#' fit <- gam_gpu(y ~ s(x0) + s(x1) + s(x2, bs = "cr") + s(x3), data = dat)
#' nd <- gamSim(1, n = 20000, dist = "normal", scale = 2, verbose = FALSE)
#' p <- predict(fit, nd, se.fit = TRUE)
#' str(p)
#' @method predict gam_gpu
#' @importFrom stats na.pass
#' @export
predict.gam_gpu <- function(object, newdata, type = "link", se.fit = FALSE, terms = NULL,
                            exclude = NULL, block.size = NULL, newdata.guaranteed = FALSE,
                            na.action = na.pass, unconditional = FALSE,
                            iterms.type = NULL, device = gpu_policy(), ...) {
  # NB: the formal arguments are never assigned to here, so that
  # NextMethod() passes predict.gam() exactly what the caller gave.
  policy <- check_policy(device)
  se <- if (is.logical(se.fit) || is.numeric(se.fit)) as.logical(se.fit) else NA
  if (length(se) != 1L || is.na(se))
    gamgpu_abort("gamgpu_bad_input", "'se.fit' must be TRUE or FALSE", call = NULL)
  if (!se || !is.character(type) || length(type) != 1L ||
      !(type %in% c("link", "response")) || !is.null(terms) || !is.null(exclude))
    return(NextMethod())
  if (!(is.logical(unconditional) && length(unconditional) == 1L && !is.na(unconditional)))
    gamgpu_abort("gamgpu_bad_input", "'unconditional' must be TRUE or FALSE", call = NULL)
  has_newdata <- !missing(newdata)
  if (has_newdata && !is.list(newdata))
    gamgpu_abort("gamgpu_bad_input",
                 sprintf("'newdata' must be a data frame or a list, not %s",
                         paste(class(newdata), collapse = "/")), call = NULL)
  min_rows <- predict_option("gamgpu.predict_min_rows", 1e4)
  chunk_rows <- predict_option("gamgpu.predict_chunk_rows", 0)

  # requests the gamgpu path does not cover: predict.gam(), counted
  # unless "off", an error under "required"
  why <- predict_unsupported(object, if (has_newdata) newdata, newdata.guaranteed)
  if (nzchar(why)) {
    predict_not_covered(policy, why)
    return(NextMethod())
  }
  rows <- if (has_newdata) predict_rows(newdata) else nrow(object$model)
  if (policy == "auto" && rows < min_rows) {
    record_fallback("predict", sprintf(
      "device policy \"auto\": %d rows of newdata is below the device threshold of %.0f (option gamgpu.predict_min_rows); mgcv's predict.gam() ran",
      as.integer(rows), min_rows))
    return(NextMethod())
  }

  # the model frame and lp matrix; warnings are held until the path is sure
  # (predict.gam() gives its own when it runs instead)
  held <- list()
  setup <- withCallingHandlers(
    predict_setup(object, if (has_newdata) newdata, has_newdata, na.action),
    warning = function(w) {
      held[[length(held) + 1L]] <<- w
      invokeRestart("muffleWarning")
    })
  if (is.character(setup)) {
    predict_not_covered(policy, setup)
    return(NextMethod())
  }
  for (w in held) warning(w)

  V <- if (unconditional) {
    if (is.null(object$Vc)) {
      warning("Smoothness uncertainty corrected covariance not available")
      object$Vp
    } else object$Vc
  } else object$Vp
  V <- unname(V)
  storage.mode(V) <- "double"
  beta <- as.double(object$coefficients)
  plan <- device_plan(policy, "predict")
  res <- .Call(gg_predict_r, setup$X, beta, V, plan$mode, plan$ordinal, chunk_rows,
               as.integer(setup_threads(nrow(setup$X))))

  # what predict.gam() does with the rows, in its order
  np <- nrow(setup$X)
  fit <- array(0, np)
  se <- fit
  fit[] <- res$fit + setup$offset
  se[] <- res$se.fit
  if (type == "response") {
    fam <- object$family
    se[] <- se * abs(fam$mu.eta(fit))
    fit[] <- fam$linkinv(fit)
  }
  rn <- setup$rownames
  names(fit) <- rn
  names(se) <- rn
  fit <- stats::napredict(setup$na.act, fit)
  se <- stats::napredict(setup$na.act, se)
  list(fit = fit, se.fit = se)
}

predict_not_covered <- function(policy, why) {
  if (policy == "required")
    gamgpu_abort("gamgpu_unsupported_predict",
                 sprintf("device = \"required\" but the device path does not cover this prediction (%s); use device = \"auto\" or \"off\"",
                         why), call = NULL)
  if (policy == "auto")
    record_fallback("predict", paste("mgcv's predict.gam() ran:", why))
  invisible(NULL)
}

predict_option <- function(name, default) {
  v <- getOption(name, default)
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0)
    gamgpu_abort("gamgpu_bad_input",
                 sprintf("option %s must be a non-negative number of rows", name), call = NULL)
  as.double(v)
}

predict_rows <- function(newdata) {
  if (is.data.frame(newdata)) return(nrow(newdata))
  if (!length(newdata)) return(0L)
  x <- newdata[[1L]]
  if (is.null(dim(x))) length(x) else dim(x)[1L]
}

# Why the gamgpu path does not cover this fit or newdata ("" when it does):
# the branches of predict.gam() it does not replicate.
predict_unsupported <- function(object, newdata, newdata.guaranteed) {
  if (!isFALSE(newdata.guaranteed))
    return("newdata.guaranteed = TRUE")
  if (is.list(object$formula) || is.list(object$pterms))
    return("a model with several linear predictors")
  if (!is.null(object$family$predict))
    return(sprintf("family '%s' has its own predict function", object$family$family))
  if (!is.null(object$Xcentre))
    return("a model with centred columns (Xcentre)")
  if (!is.null(object$family$drop.intercept) || !is.null(attr(object$nsdf, "drop.ind")))
    return("a model with a dropped intercept")
  if (!is.null(newdata)) {
    if (!is.null(attr(newdata, "terms")))
      return("newdata is a model frame")
    if (!is.data.frame(newdata))
      return("newdata is a list, not a data frame")
    if (!length(newdata) || !nrow(newdata))
      return("newdata has no columns or no rows")
  }
  if (anyNA(object$coefficients))
    return("the fit has NA coefficients")
  ""
}

# predict.gam()'s get.na.action().
na_action_name <- function(na.action) {
  if (is.character(na.action)) {
    if (na.action %in% c("na.omit", "na.exclude", "na.pass", "na.fail"))
      return(na.action)
    stop("unrecognised na.action")
  }
  if (!is.function(na.action)) stop("na.action not character or function")
  a <- try(na.action(c(0, NA)), silent = TRUE)
  if (inherits(a, "try-error")) return("na.fail")
  if (inherits(attr(a, "na.action"), "omit")) return("na.omit")
  if (inherits(attr(a, "na.action"), "exclude")) return("na.exclude")
  "na.pass"
}

# The model frame and lp matrix as predict.gam() (mgcv 1.8) builds them for
# a single linear predictor without a family predict function: returns
# list(X, offset, rownames, na.act), or a string saying why this case is
# left to predict.gam().
predict_setup <- function(object, newdata, has_newdata, na.action) {
  Terms <- stats::delete.response(object$pterms)
  if (!has_newdata) {
    data <- object$model
    na.act <- object$na.action
    Xp <- stats::model.matrix(Terms, object$model)
    mf <- data
  } else {
    if (is.null(na.action)) {
      na.act <- NULL
    } else {
      na.txt <- if (is.character(na.action) || is.function(na.action))
        na_action_name(na.action) else "na.pass"
      na.act <- if (na.txt == "na.pass") "na.exclude"
                else if (na.txt == "na.exclude") "na.omit" else na.action
    }
    all_terms <- stats::delete.response(stats::terms(object))
    all_names <- if (is.null(object$pred.formula)) all.vars(all_terms)
                 else all.vars(object$pred.formula)
    data <- newdata
    if (length(all_names) > 0L) {
      ff <- if (is.null(object$pred.formula)) stats::reformulate(all_names)
            else object$pred.formula
      if (!all(all_names %in% names(newdata)))
        return("not all required variables are in newdata")
      data <- stats::model.frame(ff, data = newdata, na.action = na.act)
    }
    na.act <- attr(data, "na.action")
    # factors get the fit's levels (a warning names levels not in the fit)
    nn <- names(data)
    mn <- colnames(object$model)
    for (i in seq_along(data)) if (nn[i] %in% mn && is.factor(object$model[, nn[i]])) {
      levm <- levels(object$model[, nn[i]])
      levn <- if (any(is.na(levm))) levels(factor(data[[i]], exclude = NULL))
              else levels(factor(data[[i]]))
      if (sum(!levn %in% levm) > 0)
        warning(paste("factor levels", paste(levn[!levn %in% levm], collapse = ", "),
                      "not in original fit", collapse = ""))
      if (is.matrix(data[[i]])) {
        dum <- factor(data[[i]], levels = levm, exclude = NULL)
        dim(dum) <- dim(data[[i]])
        data[[i]] <- dum
      } else data[[i]] <- factor(data[[i]], levels = levm, exclude = NULL)
    }
    if (!nrow(data)) return("no rows of newdata are left after its na.action")
    mf <- stats::model.frame(Terms, data, xlev = object$xlevels)
    if (!is.null(cl <- attr(object$pterms, "dataClasses")))
      stats::.checkMFClasses(cl, mf)
    oc <- if (length(object$contrasts) == 0) object$contrasts
          else object$contrasts[names(object$contrasts) %in% attr(Terms, "term.labels")]
    Xp <- stats::model.matrix(Terms, mf, contrasts = oc)
  }
  np <- nrow(data)
  if (nrow(mf) != np || nrow(Xp) != np)
    return("the parametric model frame drops rows of newdata")
  p <- length(object$coefficients)
  if (object$nsdf > 0 && ncol(Xp) != object$nsdf)
    return("the parametric columns of newdata do not match the fit's")
  # smooths with an offset (from PredictMat) are left to predict.gam
  for (s in object$smooth) if (!has_c_evaluator(s)) {
    probe <- tryCatch(mgcv::PredictMat(s, data[1L, , drop = FALSE]), error = function(e) NULL)
    if (is.null(probe) || !is.null(attr(probe, "offset")))
      return(sprintf("smooth '%s' may carry an offset", s$label))
  }
  X <- full_model_matrix(list(nsdf = 0L, smooth = object$smooth, X = matrix(0, 0L, p)), data)
  if (object$nsdf > 0) X[, seq_len(object$nsdf)] <- Xp
  attributes(X) <- list(dim = dim(X))
  if (!is.double(X)) storage.mode(X) <- "double"
  if (anyNA(X)) return("the lp matrix of newdata has missing values")
  k <- attr(attr(object$model, "terms"), "offset")
  offset <- 0
  if (!is.null(k)) {
    offset <- stats::model.offset(mf)
    if (is.null(offset) || length(offset) != np)
      return("the offset of the fit is not in the parametric model frame")
  }
  list(X = X, offset = offset, rownames = rownames(data), na.act = na.act)
}
