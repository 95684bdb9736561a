# The arguments gam_gpu() takes: every formal of mgcv::bam() and of
# mgcv::gam(), each honoured (with bam's meaning) or refused with advice.
# Nothing that reaches gam_gpu() is ignored: an argument in `...` that is
# not honoured here -- a refused one, an unknown name, an unnamed value --
# is an error of class "gamgpu_unsupported_argument" that says what to do
# instead.  tests/testthat/test-api-arguments.R walks names(formals()) of
# mgcv::bam and mgcv::gam and fails on any formal missing from the table,
# so an argument a future mgcv adds is classified before it can be passed.

# One row of the table.
#   argument: the name, as in formals(mgcv::bam) / formals(mgcv::gam);
#   status:   "honoured" or "refused";
#   route:    how gamgpu takes it: "formal" (a formal of gam_gpu()),
#             "setup" (in `...`, handed to mgcv's bam(fit = FALSE) setup),
#             "gamgpu" (in `...`, read by gam_gpu() itself), "none" (refused);
#   note:     for an honoured argument what gamgpu does with it; for a
#             refused one what to do instead (the error message says it).
argument_row <- function(argument, status, route, ...)
  list(argument = argument, status = status, route = route, note = paste(...))

#' The table of arguments of mgcv::bam() and mgcv::gam()
#'
#' @return a data frame with columns \code{argument}, \code{status}
#'   (\code{"honoured"} or \code{"refused"}), \code{route} and \code{note};
#'   see the comments in R/arguments.R.
#' @noRd
gg_argument_table <- function() {
  rows <- list(
    argument_row("formula", "honoured", "formal", "the model formula, as bam()"),
    argument_row("family", "honoured", "formal",
                 "the exponential and extended families gamgpu's engine has, and mgcv's",
                 "general families, mvn() included (see gam_gpu())"),
    argument_row("data", "honoured", "formal", "as bam()"),
    argument_row("weights", "honoured", "formal", "prior weights, as bam()"),
    argument_row("subset", "honoured", "formal", "as bam()"),
    argument_row("na.action", "honoured", "formal",
                 "as bam(): na.omit (default), na.exclude,",
                 "na.fail (a classed error on missing values)"),
    argument_row("offset", "honoured", "formal",
                 "as bam(); added to any offset() terms of the formula"),
    argument_row("method", "honoured", "formal",
                 "\"fREML\"; gam()'s \"REML\", \"ML\", \"P-REML\", \"P-ML\", \"GCV.Cp\" and \"GACV.Cp\"",
                 "for the exponential families (quasi families: GCV.Cp and GACV.Cp); other",
                 "families with these are refused (gamgpu_unsupported_method);",
                 "any other value is an error of class gamgpu_bad_method"),
    argument_row("control", "honoured", "formal",
                 "gam_gpu_control() or a list of its settings;",
                 "mgcv::gam.control() settings are mapped (see gam_gpu_control())"),
    argument_row("select", "honoured", "formal", "as bam()"),
    argument_row("scale", "honoured", "gamgpu",
                 "as bam(): > 0 known scale, 0 (default) 1 for binomial and poisson",
                 "else estimated, < 0 estimated"),
    argument_row("gamma", "honoured", "formal", "as bam()"),
    argument_row("knots", "honoured", "formal", "as bam()"),
    argument_row("sp", "honoured", "formal",
                 "as bam(): entries >= 0 fix a smoothing parameter, negative ones are estimated"),
    argument_row("min.sp", "honoured", "gamgpu",
                 "with gam()'s methods, as gam(): lower bounds on the smoothing parameters,",
                 "one per penalty (as full.sp), their penalty sum_k min.sp[k] S_k fixed and",
                 "the fitted sp the excess over them; with method = \"fREML\" refused",
                 "(bam() ignores it there, with a warning)"),
    argument_row("paraPen", "honoured", "setup", "penalties on parametric terms, as bam()"),
    argument_row("chunk.size", "honoured", "gamgpu",
                 "the size of the subsample mgcv's setup builds the bases on,",
                 "as control chunk.size (give one or the other, or the same value)"),
    argument_row("rho", "honoured", "setup", "AR1 correlation of the residuals, as bam()"),
    argument_row("AR.start", "honoured", "setup", "starts of the AR1 sequences, as bam()"),
    argument_row("discrete", "honoured", "gamgpu",
                 "gamgpu has no discrete method yet: discrete = TRUE fits exactly",
                 "(the answer of bam(discrete = FALSE)) and says so in a message of class",
                 "gamgpu_discrete_exact and in fit$device$discrete"),
    argument_row("cluster", "honoured", "gamgpu",
                 "a cluster of R's parallel package: the rows spread over its nodes,",
                 "each node's shard resident there for the whole fit (?gam_gpu);",
                 "method \"fREML\""),
    argument_row("nthreads", "honoured", "gamgpu",
                 "one whole number: the host threads, as control nthreads",
                 "(give one or the other, or the same value)"),
    argument_row("gc.level", "honoured", "gamgpu",
                 "0, 1 or 2: with 1 or 2, gc() after the setup and after the fit"),
    argument_row("use.chol", "honoured", "gamgpu",
                 "TRUE only: gamgpu always solves by a Cholesky factor of X'WX,",
                 "as bam(use.chol = TRUE); use.chol = FALSE (bam's QR updating) is an error:",
                 "drop the argument"),
    argument_row("samfrac", "refused", "none",
                 "gamgpu has no sampling pre-fit: drop samfrac (every fit uses all rows)"),
    argument_row("coef", "refused", "none",
                 "gamgpu takes no starting coefficients:",
                 "drop coef (the fit starts as bam's does without it)"),
    argument_row("drop.unused.levels", "honoured", "setup", "as bam()"),
    argument_row("G", "honoured", "gamgpu",
                 "a setup object from gam_gpu(fit = FALSE), bam(fit = FALSE) (not discrete)",
                 "or gam(fit = FALSE): fitted without redoing the setup, as bam(G = G) and",
                 "gam(G = G)"),
    argument_row("fit", "honoured", "gamgpu",
                 "FALSE returns the setup object, as bam(fit = FALSE)",
                 "(made with discrete = FALSE)"),
    argument_row("drop.intercept", "honoured", "setup", "as bam()"),
    argument_row("optimizer", "honoured", "gamgpu",
                 "gam()'s default only, \"outer\" or c(\"outer\", \"newton\"), with gam()'s",
                 "methods (what gamgpu's outer iteration is); other optimizers, or any",
                 "with method = \"fREML\" (bam() has none), are refused -- but for a general",
                 "family (cox.ph(), gaulss(), ...), whose fit is gam()'s own iteration:",
                 "every optimizer gam() takes"),
    argument_row("H", "honoured", "gamgpu",
                 "with gam()'s methods, as gam(): a fixed p x p penalty added to the",
                 "smoothing penalties (with min.sp's); with method = \"fREML\" refused",
                 "(bam() has no H)"),
    argument_row("in.out", "honoured", "gamgpu",
                 "list(sp =, scale =) as gam(): where the first REML optimization starts",
                 "(sp: one value per smoothing parameter, fixed ones included; scale: when",
                 "estimated); the optimum, and so the fit, is the same"),
    argument_row("nei", "refused", "none",
                 "nei is for method = \"NCV\", which gamgpu does not have: drop nei"),
    argument_row("...", "refused", "none",
                 "gamgpu passes nothing further to a fitter:",
                 "arguments beyond those of this table are an error")
  )
  data.frame(argument = vapply(rows, `[[`, "", "argument"),
             status = vapply(rows, `[[`, "", "status"),
             route = vapply(rows, `[[`, "", "route"),
             note = vapply(rows, `[[`, "", "note"),
             stringsAsFactors = FALSE)
}

# The table, built once.
.gg_arguments <- gg_argument_table()

# Arguments of gam_gpu() that arrive in `...`: those of the table honoured
# but not formals of gam_gpu().
dots_arguments <- function() {
  tab <- .gg_arguments
  tab$argument[tab$status == "honoured" & tab$route %in% c("setup", "gamgpu")]
}

#' Check the names of gam_gpu()'s `...` against the table
#'
#' @param dot_names the names of the arguments in `...` (\code{""} for an
#'   unnamed one), in order.
#' @return \code{invisible(TRUE)}; otherwise an error of class
#'   \code{gamgpu_unsupported_argument} naming every argument not honoured
#'   and saying what to do instead.
#' @noRd
check_dots <- function(dot_names, call = sys.call(-1)) {
  if (!length(dot_names)) return(invisible(TRUE))
  tab <- .gg_arguments
  ok <- dots_arguments()
  problems <- character(0)
  bad <- character(0)
  unnamed <- sum(!nzchar(dot_names))
  if (unnamed)
    problems <- c(problems, sprintf(
      "%d unnamed argument%s beyond gam_gpu()'s own: name %s (the arguments gam_gpu() takes in '...' are %s)",
      unnamed, if (unnamed > 1) "s" else "", if (unnamed > 1) "them" else "it",
      paste(ok, collapse = ", ")))
  named <- dot_names[nzchar(dot_names)]
  dup <- unique(named[duplicated(named)])
  if (length(dup)) {
    bad <- c(bad, dup)
    problems <- c(problems, sprintf("argument%s %s given more than once: give each once",
                                    if (length(dup) > 1) "s" else "",
                                    paste0("'", dup, "'", collapse = ", ")))
  }
  for (nm in unique(named)) {
    i <- match(nm, tab$argument)
    if (!is.na(i) && nm %in% ok) next
    bad <- c(bad, nm)
    if (!is.na(i) && tab$status[i] == "refused") {
      problems <- c(problems, sprintf("'%s' is not supported: %s", nm, tab$note[i]))
    } else if (!is.na(i)) {
      # a formal of gam_gpu() that reached `...` (cannot happen by matching)
      problems <- c(problems, sprintf("'%s' could not be matched: give it once, by name", nm))
    } else {
      # bam() would take a prefix of its argument's name (partial matching)
      guess <- ok[startsWith(ok, nm) | tolower(ok) == tolower(nm)]
      problems <- c(problems, sprintf(
        "'%s' is not an argument of gam_gpu() nor of mgcv's bam(): remove it%s",
        nm, if (length(guess)) sprintf(" (did you mean %s?)",
                                       paste0("'", guess, "'", collapse = " or ")) else ""))
    }
  }
  if (length(problems))
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste(problems, collapse = "; "), call = call,
                 arguments = unique(c(bad, if (unnamed) "")))
  invisible(TRUE)
}

#' The arguments in `...` that gam_gpu() reads itself, checked
#'
#' Forces only those (rho, AR.start and the other setup arguments stay
#' unevaluated: mgcv's setup evaluates them, some in the data).
#' @param dot_names the names of gam_gpu()'s `...`, in order (after
#'   check_dots()).
#' @param ... gam_gpu()'s `...`.
#' @param call the call for the errors' messages.
#' @return a list: \code{G} (or NULL), \code{fit}, \code{discrete},
#'   \code{gc.level}, \code{scale} (0 when not given), and \code{nthreads},
#'   \code{chunk.size} (NULL when not given; checked with the control),
#'   \code{in.out} (NULL when not given; checked by in_out_start()).
#' @noRd
read_dots <- function(dot_names, ..., call = sys.call(-1)) {
  frame <- environment()
  value <- function(name, default = NULL) {        # forces only that argument
    i <- match(name, dot_names)
    if (is.na(i)) default else eval(as.symbol(sprintf("..%d", i)), frame)
  }
  flag <- function(x, name) {
    if (!is.logical(x) || length(x) != 1L || is.na(x))
      gamgpu_abort("gamgpu_bad_input", sprintf("'%s' must be TRUE or FALSE", name), call = call)
    x
  }
  out <- list(G = value("G"), fit = flag(value("fit", TRUE), "fit"),
              discrete = flag(value("discrete", FALSE), "discrete"),
              gc.level = value("gc.level", 0), scale = value("scale", 0),
              nthreads = value("nthreads"), chunk.size = value("chunk.size"),
              in.out = value("in.out"), optimizer = value("optimizer"),
              min.sp = value("min.sp"), H = value("H"), cluster = value("cluster"))
  if (!isTRUE(value("use.chol", TRUE)))
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste("use.chol must be TRUE: gamgpu always solves by a Cholesky factor of",
                       "X'WX (bam's use.chol = TRUE), never by bam's QR updating;",
                       "drop the argument"), call = call, arguments = "use.chol")
  if (!is.numeric(out$gc.level) || length(out$gc.level) != 1L || !(out$gc.level %in% 0:2))
    gamgpu_abort("gamgpu_bad_input", "'gc.level' must be 0, 1 or 2", call = call)
  if (!is.numeric(out$scale) || length(out$scale) != 1L || !is.finite(out$scale))
    gamgpu_abort("gamgpu_bad_input", "'scale' must be a single finite number", call = call)
  out
}

#' Check gam()'s optimizer argument
#'
#' gam()'s default, c("outer", "newton") (or "outer", whose Newton is the
#' default second element), is what gamgpu's outer iteration does for
#' gam()'s methods (R/outer.R; for the additive model's GCV.Cp gam() then
#' takes magic(), as gamgpu does): honoured.  Any other optimizer would
#' follow another path to the same criterion, which gamgpu does not have;
#' and method "fREML" (bam()'s) has no optimizer argument at all.
#'
#' @param optimizer the argument, or NULL when not given.
#' @param method gam_gpu()'s method.
#' @return \code{invisible(TRUE)}, else an error of class
#'   \code{gamgpu_unsupported_argument}.
#' @noRd
check_optimizer <- function(optimizer, method, call = sys.call(-1)) {
  if (is.null(optimizer)) return(invisible(TRUE))
  if (!is.character(optimizer) || !(length(optimizer) %in% 1:2) || anyNA(optimizer))
    gamgpu_abort("gamgpu_bad_input",
                 "'optimizer' must be one or two strings, as gam()'s: c(\"outer\", \"newton\")",
                 call = call)
  if (identical(method, "fREML"))
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste("'optimizer' is gam()'s, and method = \"fREML\" is bam()'s performance",
                       "iteration, which has none: drop optimizer, or use one of gam()'s methods",
                       "(\"REML\", \"ML\", \"GCV.Cp\", ...) with c(\"outer\", \"newton\")"),
                 call = call, arguments = "optimizer")
  if (!(optimizer[1L] == "outer" && (length(optimizer) == 1L || optimizer[2L] == "newton")))
    gamgpu_abort("gamgpu_unsupported_argument",
                 sprintf(paste("optimizer = %s is not available: gamgpu's outer iteration is",
                               "gam()'s default, Newton's method (c(\"outer\", \"newton\")), which",
                               "reaches the same optimum; drop optimizer or give that"),
                         deparse(optimizer)),
                 call = call, arguments = "optimizer")
  invisible(TRUE)
}

#' Check gam()'s min.sp and H against the method
#'
#' Both are gam()'s: a fixed penalty added to the smoothing penalties
#' (\code{H}, and \code{sum_k min.sp[k] S_k}).  bam()'s fREML ignores
#' min.sp (with a warning) and has no H, so with \code{"fREML"} they are
#' refused, saying to use one of gam()'s methods.  Their values are checked
#' here as far as they can be before the setup (\code{fixed_penalty()} checks
#' what needs the model's size).
#'
#' @param min.sp,H the arguments (\code{NULL} when not given).
#' @param method the method.
#' @return \code{invisible(TRUE)}, else a classed error.
#' @noRd
check_fixed_penalty <- function(min.sp, H, method, call = sys.call(-1)) {
  for (nm in c("min.sp", "H")[c(!is.null(min.sp), !is.null(H))]) {
    if (identical(method, "fREML"))
      gamgpu_abort("gamgpu_unsupported_argument",
                   sprintf(paste("'%s' is gam()'s, and method = \"fREML\" is bam()'s, which %s:",
                                 "use one of gam()'s methods (method = \"REML\", \"ML\",",
                                 "\"GCV.Cp\", ...) with %s, or drop it"),
                           nm, if (nm == "min.sp") "ignores it" else "has none", nm),
                   call = call, arguments = nm)
  }
  if (!is.null(min.sp) &&
      (!is.numeric(min.sp) || !is.null(dim(min.sp)) || anyNA(min.sp) ||
         any(!is.finite(min.sp)) || any(min.sp < 0)))
    gamgpu_abort("gamgpu_bad_sp",
                 "'min.sp' must be a numeric vector of finite, non-negative values", call = call)
  if (!is.null(H) &&
      (!is.numeric(H) || !is.matrix(H) || nrow(H) != ncol(H) || any(!is.finite(H))))
    gamgpu_abort("gamgpu_bad_input", "'H' must be a square numeric matrix of finite values",
                 call = call)
  invisible(TRUE)
}

#' gam()'s fixed penalty from min.sp and H
#'
#' As gam.setup(): \code{H} (p x p), plus \code{min.sp[k]} times each
#' penalty \code{G$S[[k]]} in its place (one value per penalty, in the order
#' of full.sp; values beyond the penalties are dropped, as gam.setup()
#' drops them).  NULL when neither is given.
#'
#' @param G the setup object.
#' @param min.sp,H the arguments, checked by \code{check_fixed_penalty()}.
#' @return a p x p matrix or \code{NULL}, else a classed error.
#' @noRd
fixed_penalty <- function(G, min.sp, H, call = sys.call(-1)) {
  if (is.null(min.sp) && is.null(H)) return(NULL)
  p <- ncol(G$X)
  M <- length(G$S)
  if (!is.null(H)) {
    if (nrow(H) != p)
      gamgpu_abort("gamgpu_bad_input",
                   sprintf("'H' is %d x %d but the model has %d coefficients", nrow(H),
                           ncol(H), p), call = call)
    if (max(abs(H - t(H))) > 1e-10 * max(1, max(abs(H))))
      gamgpu_abort("gamgpu_bad_input", "'H' must be symmetric", call = call)
  }
  Hf <- if (is.null(H)) matrix(0, p, p) else H + 0
  if (!is.null(min.sp)) {
    if (length(min.sp) < M)
      gamgpu_abort("gamgpu_bad_sp",
                   sprintf(paste("'min.sp' has length %d but the model has %d penalties",
                                 "(one lower bound per penalty, as full.sp)"),
                           length(min.sp), M), call = call)
    Sk <- embed_penalties(G$S, G$off, p)
    for (k in seq_len(M)) Hf <- Hf + min.sp[k] * Sk[[k]]
  }
  # (a zero penalty is none: the fit is the one without it)
  if (all(Hf == 0)) NULL else Hf
}

#' Check a setup object given as G, and the arguments given with it
#'
#' @param G the object.
#' @param given the names of the arguments of the call.
#' @param fit_wanted the \code{fit} argument.
#' @return \code{invisible(TRUE)}, else a classed error.
#' @noRd
check_setup_object <- function(G, given, fit_wanted, call = sys.call(-1)) {
  setup_given <- intersect(given, .gg_setup_arguments)
  if (length(setup_given))
    gamgpu_abort("gamgpu_unsupported_argument",
                 sprintf("with G, the setup is fixed: %s cannot change it; give %s to %s",
                         paste0("'", setup_given, "'", collapse = ", "),
                         if (length(setup_given) > 1) "them" else "it",
                         "gam_gpu(fit = FALSE) when making G"),
                 call = call, arguments = setup_given)
  if (!fit_wanted)
    gamgpu_abort("gamgpu_unsupported_argument",
                 "fit = FALSE with G: G is already the setup object", call = call,
                 arguments = "fit")
  if (!inherits(G, c("bam.prefit", "gam.prefit")) || is.null(G$mf))
    gamgpu_abort("gamgpu_bad_input",
                 paste("'G' must be the setup object of gam_gpu(fit = FALSE),",
                       "mgcv::bam(fit = FALSE) or mgcv::gam(fit = FALSE)"),
                 call = call)
  if (isTRUE(G$discretize))
    gamgpu_abort("gamgpu_unsupported_argument",
                 paste("'G' comes from bam(discrete = TRUE, fit = FALSE), whose bases are built",
                       "on discretized covariates; make it with gam_gpu(fit = FALSE) or",
                       "bam(fit = FALSE) without discrete"), call = call, arguments = "G")
  invisible(TRUE)
}

# The arguments that fix mgcv's setup, refused with a supplied G (bam()
# ignores them when G is given; here they would be ignored too).
.gg_setup_arguments <- c("formula", "family", "data", "weights", "subset", "na.action",
                         "offset", "knots", "select", "paraPen", "drop.unused.levels",
                         "drop.intercept", "AR.start", "discrete", "chunk.size", "min.sp",
                         "H")

# Signal the message that discrete = TRUE was fitted exactly: a condition of
# class c("gamgpu_discrete_exact", "gamgpu_message", "message", "condition").
.gg_discrete_note <- paste(
  "exact fit: gamgpu has no discrete method yet, so discrete = TRUE was fitted",
  "exactly (the answer of bam(discrete = FALSE))")

inform_discrete_exact <- function(call = sys.call(-1)) {
  message(structure(class = c("gamgpu_discrete_exact", "gamgpu_message", "message",
                              "condition"),
                    list(message = paste0(.gg_discrete_note, "\n"), call = call)))
}

#' Where the first REML optimization starts, from gam()'s in.out
#'
#' @param in.out \code{NULL} or \code{list(sp =, scale =)}: \code{sp} one
#'   positive value per smoothing parameter of the model (\code{nfree}, those
#'   fixed by \code{sp =} included), \code{scale} a positive number, used
#'   when the scale is estimated (as gam(), which takes it then).
#' @param nfree the number of smoothing parameters before fixing.
#' @param fixed logical, length \code{nfree}: those fixed by \code{sp =}.
#' @param scale_estimated whether the scale is estimated.
#' @return \code{NULL}, or the engine's theta_start: the free log smoothing
#'   parameters, then the log scale when estimated.
#' @noRd
in_out_start <- function(in.out, nfree, fixed, scale_estimated, call = sys.call(-1)) {
  if (is.null(in.out)) return(NULL)
  bad <- function(msg) gamgpu_abort("gamgpu_bad_input", paste("'in.out':", msg), call = call)
  if (!is.list(in.out) || is.null(in.out$sp) || is.null(in.out$scale) ||
      !all(names(in.out) %in% c("sp", "scale")))
    bad("must be list(sp = , scale = ), as gam()'s")
  sp <- in.out$sp
  if (!is.numeric(sp) || length(sp) != nfree || any(!is.finite(sp)) || any(sp <= 0))
    bad(sprintf("sp must hold %d positive smoothing parameters (one per smoothing parameter of the model, fixed ones included)",
                nfree))
  sc <- in.out$scale
  if (!is.numeric(sc) || length(sc) != 1L || !is.finite(sc) || sc <= 0)
    bad("scale must be a single positive number")
  c(log(sp)[!fixed], if (scale_estimated) log(sc))
}
