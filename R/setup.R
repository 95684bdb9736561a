# gg_setup(): the model setup object of mgcv::bam(..., fit = FALSE), built
# faster at large n.
#
# bam(fit = FALSE) spends its time at large n on work that touches every row
# although the bases are built on a subsample of chunk.size rows:
#   * two model frames (the parametric one, for its terms, and the full
#     one), each passed through na.omit(), whose `[.data.frame` copies every
#     column and checks the row names for duplicates even when no row has a
#     missing value;
#   * variable.summary(): a partial sort on four indices per numeric
#     variable (quantile type 3), after copying it twice;
#   * mini.mf(): besides the subsample it draws a full permutation of the n
#     rows (used only to find a row for every factor level) and finds each
#     numeric variable's extreme rows by which(x == min(x)).
# The lean path below does what bam() 1.8-41 does, statement by statement,
# with those pieces replaced by equivalents that give identical results:
#   * the model frames are built with na.action = na.pass; when no atomic
#     column has a missing value, na.omit()/na.exclude() would select every
#     row, and the frame is then the same object (model.frame's C code
#     copies the column attributes back after na.action; the row names are
#     re-assigned as `[.data.frame` would).  The parametric frame serves only
#     for its terms, whose predvars and dataClasses do not depend on which
#     rows na.action keeps, nor on drop.unused.levels (a factor stays a
#     factor), so it is built without dropping levels.  With missing values
#     the full frame is built with the user's na.action, as bam() does;
#   * the median is the k-th order statistic, found exactly by a radix
#     selection in C over threads (src/setup/setup_stats.c; the value at k is the
#     same however it is found; zero, whose sign the selection could
#     change, is recomputed by quantile()); min and max come from the same
#     C pass;
#   * mini.mf()'s draws are the same calls under the same temp.seed(66):
#     sample(1:n, chunk.size), then -- only when some column is a factor --
#     a prefix of the permutation sample(1:n, n), whose first m elements are
#     what sample.int(n, m, useHash = FALSE) draws from the same state
#     (R's sampling without replacement is sequential).  temp.seed() puts
#     the caller's RNG state back at the end, so the draws left out change
#     nothing after.  Extreme rows: the first minimum/maximum, as
#     which(x == min(x))[1] gives them, by one C pass over threads for plain
#     double vectors (which.min()/which.max() for plain integer ones)
#     without missing values; anything else uses mgcv's expression.  The
#     missing-value scans of the frame's double columns run in C too.
# AR.start is one more column of the model frames, "(AR.start)", as in
# bam(); rho does not reach the setup.
# What the lean path does not cover goes to bam() itself (lean_setup_ok):
# an mgcv whose bam() the probe below does not match, bam() arguments beyond the model frame's (paraPen,
# discrete, G, drop.intercept, ...), formula lists, general families,
# na.action other than na.omit/na.exclude.  Any error on
# the lean path also hands over to bam(), so errors are bam()'s own
# (warnings given before such an error are given again by bam()).  n <=
# chunk.size is covered: mini.mf() then returns the frame itself and draws
# nothing.  One difference in messages: bam() warns twice (once per frame)
# when dropping unused levels drops a factor's contrasts; here once.
# Option gamgpu.lean_setup = FALSE forces bam() throughout.

# Which mgcv the lean path reproduces is decided by behaviour, not by
# version number: once per session, lean_probe() sets up a small model
# (a factor, weights, AR.start, an offset, more rows than chunk.size) both ways and
# learns the steps that differ between mgcv releases -- whether bam()
# passes the family through fix.family() (1.9-x does), and which of the
# call's argument names it records (weights.name, AR.sname) -- then checks
# that the lean setup with those steps is identical to bam()'s.  Anything
# else that differs turns the lean path off for the session, the reason
# kept (lean_setup_status()), so that every setup is then bam()'s own.
.gg_lean <- new.env(parent = emptyenv())

lean_setup_status <- function() {
  if (is.null(.gg_lean$status))
    .gg_lean$status <- tryCatch(lean_probe(),
                                error = function(e) list(ok = FALSE, why = conditionMessage(e)))
  .gg_lean$status
}

# The probe's data use no random numbers (the caller's RNG state is left
# as it was; bam() restores its own draws through temp.seed()).
lean_probe <- function() {
  n <- 240L
  u <- (seq_len(n) * 0.6180339887498949) %% 1
  probe <- data.frame(x0 = u, x1 = (seq_len(n) * 0.4142135623730951) %% 1,
                      fac = factor(c("a", "b", "c")[(seq_len(n) * 7L) %% 3L + 1L]),
                      w = 1 + 0.5 * sin(seq_len(n)), off = cos(seq_len(n)) / 10,
                      ar = seq_len(n) %% 40L == 1L)
  probe$y <- sin(2 * pi * probe$x0) + probe$x1 + as.integer(probe$fac) / 4 + 0.1 * cos(7 * seq_len(n))
  env <- environment()
  # (the family as an object, as gam_gpu() puts it in the call)
  mc <- bquote(mgcv::bam(y ~ s(x0, k = 6) + s(x1, bs = "cr", k = 5) + fac + offset(off),
                         data = probe, weights = w, AR.start = ar, family = .(stats::gaussian()),
                         method = "fREML", fit = FALSE, chunk.size = 60L))
  quiet <- function(expr) suppressWarnings(expr)
  Gb <- quiet(eval(mc, env))
  steps <- list(fix_family = !identical(Gb$family$initialize, stats::gaussian()$initialize),
                call_names = intersect(c("weights.name", "AR.sname"), names(Gb)))
  .gg_lean$steps <- steps
  Gl <- quiet(lean_setup(mc, env))
  if (is.null(Gl)) return(list(ok = FALSE, why = "the lean setup handed the probe to bam()"))
  if (!identical(Gl, Gb)) {
    bad <- names(Gb)[!vapply(names(Gb), function(nm) identical(Gl[[nm]], Gb[[nm]]), NA)]
    return(list(ok = FALSE, why = sprintf("bam(fit = FALSE) of mgcv %s differs from the lean setup in %s",
                                          utils::packageVersion("mgcv"),
                                          paste(c(bad, if (!identical(names(Gl), names(Gb)))
                                            "its components' names"), collapse = ", "))))
  }
  list(ok = TRUE, why = "")
}

# The steps of bam()'s setup that differ between mgcv releases, as the
# probe found them (the probe itself runs with the defaults of 1.8-41,
# then learns bam()'s).
lean_steps <- function() {
  if (is.null(.gg_lean$steps)) lean_setup_status()
  if (is.null(.gg_lean$steps)) list(fix_family = FALSE, call_names = character(0))
  else .gg_lean$steps
}

# bam() arguments the lean path handles; anything else in the call goes to
# bam().
.gg_lean_args <- c("formula", "family", "data", "weights", "subset",
                   "na.action", "offset", "method", "knots", "gamma",
                   "select", "fit", "chunk.size", "rho", "AR.start")

#' The setup object of bam(fit = FALSE)
#'
#' @param mc the call \code{mgcv::bam(..., fit = FALSE)} that gam_gpu()
#'   builds.
#' @param env the environment to evaluate it in.
#' @return what \code{eval(mc, env)} returns (an object of class
#'   \code{"bam.prefit"}), built by the lean path where it applies.
#' @noRd
gg_setup <- function(mc, env, nthreads = 1L, gam_bases = FALSE, plan = list(mode = 0L),
                     gam_method = "REML") {
  if (!isFALSE(getOption("gamgpu.lean_setup")) && lean_setup_ok(mc, env)) {
    # (a device's failure to build gam()'s bases under "required" is the
    # caller's error, not a reason to hand over to bam())
    G <- tryCatch(lean_setup(mc, env, nthreads, gam_bases, plan),
                  error = function(e) if (device_error(e)) stop(e) else NULL)
    if (!is.null(G)) return(with_smooth_offsets(G, !gam_bases))
  }
  if (gam_bases)
    return(gam_setup(mc, env, lean_setup_why(mc, env), gam_method))
  G <- tryCatch(eval(mc, env), error = function(e) e)
  if (!inherits(G, "error")) return(with_smooth_offsets(G, TRUE))
  # bam()'s setup can fail where gam()'s works: mgcv 1.9-x's gam.side()
  # subsets a smooth's constraint as a matrix, which bam()'s sweep-and-drop
  # constraint (a column index) is not, so a model with a smooth nested in
  # another (s(x0) + te(x0, x1)) stops there.  The model is then set up
  # with gam()'s QR identifiability constraints, and said so -- by the
  # lean setup where it takes the call (bam()'s subsample, X then from its
  # recipe), else by gam(fit = FALSE).  gam.side() then drops other
  # columns of the nested term than bam() 1.8-41 drops, so the fit is
  # close to (9.7e-7 of the range in test-setup-gam), not the same as,
  # bam()'s of mgcv 1.8-41.  Where that setup fails too, the error is
  # bam()'s own.
  Gg <- if (!isFALSE(getOption("gamgpu.lean_setup")) && lean_setup_ok(mc, env))
    tryCatch(lean_setup(mc, env, nthreads, FALSE, plan, qr_cons = TRUE),
             error = function(e) NULL)
  if (is.null(Gg))
    Gg <- tryCatch(gam_setup(mc, env, "bam()'s setup failed, gam()'s did not"),
                   error = function(e) NULL)
  # (bam()'s "more coefficients than data", which gam(fit = FALSE) leaves
  # to its fit, stays bam()'s error)
  if (is.null(Gg) || ncol(Gg$X) > nrow(Gg$mf)) stop(G)
  gamgpu_inform("gamgpu_mgcv_difference",
                sprintf(paste("bam(fit = FALSE) of mgcv %s fails on this model (%s); gamgpu set it",
                              "up with gam()'s QR identifiability constraints (its side",
                              "constraints then drop other columns than bam()'s of mgcv 1.8-41,",
                              "whose fit is close to, not the same as, this one)"),
                        utils::packageVersion("mgcv"), conditionMessage(G)))
  Gg
}

# A smooth can carry an offset of its own (PredictMat()'s "offset"
# attribute: a soap film's known boundary values), which gam.setup() adds
# to G$offset on the rows it sets up and gam() fits; bam()'s setup (and the
# lean one, which is bam()'s) replaces G$offset by the model frame's
# offset alone, so that bam() fits the model without it.  Here it is added
# back over every row, and for bam()'s own method (fREML) that difference
# from bam() is said.
with_smooth_offsets <- function(G, say) {
  if (!length(G$smooth) || is.null(G$mf)) return(G)
  # (mgcv's own classes of smooth but the soap films carry none: a smooth
  # of another class is asked on a few rows)
  asked <- !vapply(G$smooth, function(sm) class(sm)[1L] %in% offsetless_smooth_classes, NA)
  if (!any(asked)) return(G)
  n <- nrow(G$mf)
  few <- G$mf[seq_len(min(n, 20L)), , drop = FALSE]
  has <- asked
  has[asked] <- vapply(G$smooth[asked], function(sm)
    !is.null(tryCatch(attr(mgcv::PredictMat(sm, few), "offset"), error = function(e) NULL)), NA)
  if (!any(has)) return(G)
  off <- if (length(G$offset) == n) as.numeric(G$offset) else numeric(n)
  for (sm in G$smooth[has]) off <- off + attr(mgcv::PredictMat(sm, G$mf), "offset")
  G$offset <- off
  if (say)
    gamgpu_inform("gamgpu_mgcv_difference",
                  sprintf(paste("%s carries an offset of its own (a soap film's known boundary",
                                "values), which bam() leaves out of its fit; gamgpu includes it,",
                                "as gam() does"),
                          paste(vapply(G$smooth[has], function(sm) sm$label, ""), collapse = ", ")))
  G
}

offsetless_smooth_classes <- c("tprs.smooth", "ts.smooth", "cr.smooth", "cs.smooth",
                               "cyclic.smooth", "pspline.smooth", "cpspline.smooth",
                               "Bspline.smooth", "gp.smooth", "mrf.smooth", "sos.smooth",
                               "duchon.spline", "random.effect", "fs.interaction",
                               "sz.interaction", "tensor.smooth", "t2.smooth")

# The few rows gam.setup() runs on where gam()'s bases come from facts of
# every row (lean_setup()).
facts_mini_rows <- 500

# gam()'s bases where the lean path does not cover the call: the setup
# object of mgcv::gam(fit = FALSE) itself -- gam()'s model frame, bases,
# constraints and X on every row, whatever the mgcv release -- in the
# shape of bam()'s (as_bam_setup()).  X is then the setup's own, not built
# from a recipe; `why` says why (fit$device$model_matrix_reason).
gam_setup <- function(mc, env, why, method = "REML") {
  # (bam()'s own arguments left out; AR1 residuals are refused with gam()'s
  # methods)
  gcall <- mc[!(names(mc) %in% c("chunk.size", "rho", "AR.start", "discrete", "nthreads",
                                 "cluster", "samfrac", "use.chol", "gc.level", "coef"))]
  gcall[[1L]] <- quote(mgcv::gam)
  gcall$method <- method
  gcall$fit <- FALSE
  G <- eval(gcall, env)
  as_bam_setup(G, if (is.null(gcall$na.action)) stats::na.omit else eval(gcall$na.action, env),
               sprintf("gam()'s own setup built X on every row (%s)", why))
}

# A setup object of mgcv::gam(fit = FALSE) ("gam.prefit") with the
# components bam(fit = FALSE)'s has beside it, which gam_gpu() reads.
as_bam_setup <- function(G, na.action = stats::na.omit, why = "") {
  G$discretize <- FALSE
  G$efam <- inherits(G$family, "extended.family")
  # (gam()'s and bam()'s rule for scale = 0: known, 1, for binomial and
  # poisson; estimated otherwise)
  if (is.null(G$scale))
    G$scale <- if (G$family$family %in% c("binomial", "poisson")) 1 else -1
  G$na.action <- na.action
  if (is.null(G$gp)) G$gp <- mgcv::interpret.gam(G$formula)
  class(G) <- "bam.prefit"
  attr(G, "gg_x_reason") <- why
  G
}

# Why the lean path does not cover this call ("" when it does).
lean_setup_why <- function(mc, env) {
  if (isFALSE(getOption("gamgpu.lean_setup"))) return("option gamgpu.lean_setup = FALSE")
  st <- lean_setup_status()
  if (!st$ok) return(st$why)
  why <- attr(lean_setup_ok(mc, env), "why")
  if (is.null(why)) "the lean setup could not build gam()'s bases for this call" else why
}

# The variable summaries of the formula's variables (gp: interpret.gam()'s),
# on the data before subset and NA handling, as gam() and bam() make them
# (lean_variable_summary(); n: the model frame's rows).
data_var_summary <- function(gp, data, env, n, threads) {
  vars <- all_vars1(gp$fake.formula[-2])
  inp <- parse(text = paste("list(", paste(vars, collapse = ","), ")"))
  if (!is.list(data) && !is.data.frame(data)) data <- as.data.frame(data)
  dl <- eval(inp, data, env)
  names(dl) <- vars
  lean_variable_summary(gp$pf, dl, n, threads)
}

# Whether the lean path covers this call (cheap checks, before any data).
lean_setup_ok <- function(mc, env) {
  no <- function(why) structure(FALSE, why = why)
  if (!lean_setup_status()$ok) return(no(lean_setup_status()$why))
  m <- tryCatch(match.call(mgcv::bam, mc), error = function(e) NULL)
  if (is.null(m)) return(no("the call is not one of bam()'s"))
  nm <- names(m)[-1L]
  if (is.null(nm) || !all(nm %in% .gg_lean_args))
    return(no(sprintf("the lean setup does not take %s",
                      paste0("'", setdiff(nm, .gg_lean_args), "'", collapse = ", "))))
  if (!isFALSE(m$fit) || !identical(m$method, "fREML")) return(no("not a setup call"))
  fam <- m$family
  if (!inherits(fam, "family") || inherits(fam, "general.family") ||
      !is.null(fam$drop.intercept) || !is.character(fam$family))
    return(no(sprintf("the lean setup does not take the %s family", fam$family[1L])))
  TRUE
}

# The na.action model.frame() will use: the call's, else model.frame's
# default (the data's "na.action" attribute, else getOption("na.action")).
# TRUE when it is na.omit or na.exclude, which keep all rows of a frame
# without missing values.
lean_na_ok <- function(m, data, env) {
  na <- if (!is.null(m$na.action)) eval(m$na.action, env) else {
    naa <- attr(data, "na.action")
    if (!is.null(naa) && mode(naa) != "numeric") naa else getOption("na.action")
  }
  if (is.character(na) && length(na) == 1L) return(na %in% c("na.omit", "na.exclude"))
  is.function(na) && (identical(na, stats::na.omit) || identical(na, stats::na.exclude))
}

# bam(fit = FALSE) of mgcv 1.8-41, non-discrete, one formula, a family of
# class "family" or "extended.family" (not a general family); returns NULL
# where it hands over to bam().
lean_setup <- function(mc, env, nthreads = 1L, gam_bases = FALSE, plan = list(mode = 0L),
                       qr_cons = FALSE) {
  control <- mgcv::gam.control()
  m <- match.call(mgcv::bam, mc)
  family <- m$family
  steps <- lean_steps()
  if (steps$fix_family) family <- mgcv_fun("fix.family")(family)
  scale <- if (family$family %in% c("poisson", "binomial")) 1 else -1
  efam <- inherits(family, "extended.family")
  if (efam) family <- mgcv::fix.family.link(family)
  formula <- eval(m$formula, env)
  if (!inherits(formula, "formula")) return(NULL)
  gp <- mgcv::interpret.gam(formula)
  if (!is.null(gp$nlp)) return(NULL)
  data <- if (is.null(m$data)) list() else eval(m$data, env)
  if (!lean_na_ok(m, data, env)) return(NULL)
  knots <- if (is.null(m$knots)) NULL else eval(m$knots, env)
  select <- if (is.null(m$select)) FALSE else eval(m$select, env)
  na.action <- if (is.null(m$na.action)) stats::na.omit else eval(m$na.action, env)
  chunk.size <- if (is.null(m$chunk.size)) 10000 else eval(m$chunk.size, env)
  cl <- m

  ## the model frames, as bam() builds them
  mf <- match.call(mgcv::bam, mc, expand.dots = FALSE)
  mf$formula <- gp$fake.formula
  mf$method <- mf$family <- mf$control <- mf$scale <- mf$knots <- mf$sp <- mf$min.sp <-
    mf$gc.level <- mf$gamma <- mf$paraPen <- mf$chunk.size <- mf$rho <- mf$cluster <-
    mf$discrete <- mf$use.chol <- mf$samfrac <- mf$nthreads <- mf$G <- mf$fit <-
    mf$select <- mf$drop.intercept <- mf$coef <- NULL
  # (bam()'s `mf$... <- NULL`, without the byte compiler's note on `...`)
  if ("..." %in% names(mf)) mf[["..."]] <- NULL
  mf$drop.unused.levels <- TRUE
  mf[[1]] <- quote(stats::model.frame)
  mfp <- mf
  mfp$na.action <- stats::na.pass
  pmf <- mfp
  pmf$formula <- gp$pf
  pmf$drop.unused.levels <- FALSE                  # the terms are the same; no unique() per factor
  pmf <- eval(pmf, env)
  pterms <- attr(pmf, "terms")
  rm(pmf)
  mfp <- eval(mfp, env)
  if (lean_complete(mfp, nthreads)) {
    mfp <- lean_reset_row_names(mfp)
    mf <- mfp
  } else {
    rm(mfp)
    mf <- eval(mf, env)
  }
  if (nrow(mf) < 2) return(NULL)
  terms <- attr(mf, "terms")

  var.summary <- data_var_summary(gp, data, env, nrow(mf), nthreads)
  rm(data)
  drop.intercept <- FALSE

  # gam_bases: the bases as gam() sets them up -- on every row, with its
  # QR identifiability constraints (sparse.cons = 0) -- for the methods
  # whose answer is gam()'s; bam's sweep-and-drop constraints span the
  # same space in other coordinates, in which "ML" (not invariant to them)
  # has another optimum
  # With many rows, gam()'s bases on bam()'s mini frame from facts of every
  # row (R/basis_facts.R), X then built from its recipe where the fit
  # runs; else on every row, the thin plate bases evaluated in C
  # (R/tprs_setup.R)
  gp_setup <- gp
  facts <- if (gam_bases && nrow(mf) > chunk.size && use_basis_facts(plan))
    gam_basis_facts(gp$smooth.spec, mf, knots, nthreads, plan)
  # (why gam()'s bases, and so X, are then set up in R on every row)
  x_why <- if (!gam_bases || !is.null(facts$specs)) NULL else
    if (nrow(mf) <= chunk.size) "mgcv's setup built X on every row (n <= chunk.size)" else
    if (!use_basis_facts(plan))
      paste("gam()'s bases set up on every row in R: a CPU fit takes the route over the",
            "rows' facts only with options(gamgpu.basis_facts = TRUE)") else
    if (!is.null(attr(facts, "why"))) attr(facts, "why") else
      "gam()'s bases set up on every row in R"
  if (!length(facts)) facts <- NULL
  # (on the facts' route the few rows' only parts are gam.setup()'s rows to
  # run on -- every basis, constraint and scaling comes from every row --
  # and gam.side()'s test of nested smooths, which on fewer rows can only
  # find more to delete, and then sets up on every row below; so fewer
  # than bam()'s chunk.size, at least 4 per coefficient)
  mini_rows <- if (is.null(facts)) chunk.size else min(chunk.size, facts_mini_rows)
  mini <- function(chunk.size) {
    mf0 <- lean_mini_mf(mf, chunk.size, nthreads)
    if (!is.null(facts)) mf0 <- lean_mini_with_rows(mf0, mf, facts$rows)
    mf0
  }
  mf0 <- if (gam_bases && is.null(facts)) mf else mini(mini_rows)
  if (!is.null(facts)) {
    gp_setup$smooth.spec <- facts$specs
  } else if (gam_bases) {
    gp_setup$smooth.spec <- fast_tprs_specs(gp$smooth.spec, nthreads, plan)
  }
  # (gam.setup() on mf0; repeated with mgcv's own bases on every row where
  # gam.side() deleted columns of a smooth nested in another on the facts'
  # few rows: which columns it deletes depends on the rows' numbers)
  for (attempt in 1:2) {
  reset <- TRUE
  while (reset) {
    G <- do.call("gam.setup", list(formula = gp_setup, pterms = pterms, data = mf0,
                                   knots = knots, sp = NULL, min.sp = NULL, H = NULL,
                                   absorb.cons = TRUE,
                                   sparse.cons = if (gam_bases || qr_cons) 0 else -1,
                                   select = select,
                                   idLinksBases = TRUE,
                                   scale.penalty = control$scalePenalty, paraPen = NULL,
                                   apply.by = TRUE, drop.intercept = drop.intercept,
                                   modCon = if (gam_bases) 0 else 2),
                 envir = asNamespace("mgcv"))
    if (!is.null(facts) && 4 * ncol(G$X) > mini_rows && mini_rows < chunk.size) {
      mini_rows <- 4 * ncol(G$X)
      mf0 <- if (mini_rows >= nrow(mf)) mf else mini(mini_rows)
    } else if (ncol(G$X) >= chunk.size) {
      chunk.size <- 4 * ncol(G$X)
      warning(gettextf("chunk.size < number of coefficients. Reset to %d", chunk.size),
              call. = FALSE)
      if (chunk.size >= nrow(mf)) mf0 <- mf else if (!is.null(facts)) mf0 <- mini(chunk.size)
      else reset <- FALSE
    } else reset <- FALSE
  }
  if (is.null(facts) || !any(vapply(G$smooth, function(sm) length(attr(sm, "del.index")) > 0,
                                    NA)))
    break
  facts <- NULL
  x_why <- paste("gam()'s bases set up on every row in R: gam.side() deletes columns of a",
                 "smooth nested in another, which its rows decide")
  mf0 <- mf
  gp_setup$smooth.spec <- fast_tprs_specs(gp$smooth.spec, nthreads, plan)
  }
  if (!is.null(facts)) G$cmX <- lean_facts_cmX(G, facts, mf)
  G$var.summary <- var.summary
  G$family <- family
  G$terms <- terms
  G$pred.formula <- gp$pred.formula
  n <- nrow(mf)
  # (bam()'s rep(1, n) and rep(0, n), filled over threads in C)
  if (is.null(mf$"(weights)")) G$w <- lean_rep(1, n, nthreads) else G$w <- mf$"(weights)"
  G$y <- mf[[gp$response]]
  G$offset <- stats::model.offset(mf)
  if (is.null(G$offset)) G$offset <- lean_rep(0, n, nthreads)
  if (ncol(G$X) > nrow(mf)) return(NULL)           # bam() stops: more coefficients than data
  if (ncol(G$X) > chunk.size) {
    chunk.size <- 4 * ncol(G$X)
    warning(gettextf("chunk.size < number of coefficients. Reset to %d", chunk.size),
            call. = FALSE)
  }
  G$cl <- cl
  G$am <- family$family == "gaussian" && family$link == "identity"
  G$min.edf <- G$nsdf
  if (G$m) for (i in 1:G$m) G$min.edf <- G$min.edf + G$smooth[[i]]$null.space.dim
  G$discretize <- FALSE
  G$formula <- formula
  for (nm in steps$call_names)        # (bam()'s substitute(weights), substitute(AR.start))
    G[[nm]] <- m[[switch(nm, weights.name = "weights", AR.sname = "AR.start")]]
  environment(G$pterms) <- environment(G$terms) <- environment(G$pred.formula) <-
    environment(G$formula) <- .BaseNamespaceEnv
  G$efam <- efam
  G$scale <- scale
  G$mf <- mf
  G$na.action <- na.action
  G$gp <- gp
  class(G) <- "bam.prefit"
  if (!is.null(x_why)) attr(G, "gg_x_reason") <- x_why
  G
}

mgcv_fun <- function(name) get(name, envir = asNamespace("mgcv"), inherits = FALSE)

# mgcv's all.vars1() (named all_vars1() from 1.9-0), whichever this mgcv has.
all_vars1 <- function(formula) {
  ns <- asNamespace("mgcv")
  f <- if (exists("all_vars1", envir = ns, inherits = FALSE)) mgcv_fun("all_vars1")
       else mgcv_fun("all.vars1")
  f(formula)
}

# The mini frame with the rows `rows` of mf in place of its last (random)
# rows: the rows where each smooth's basis has its largest absolute row
# sum, so that smoothCon()'s penalty scaling (norm(X, "I")) is every row's.
lean_mini_with_rows <- function(mf0, mf, rows) {
  if (!length(rows)) return(mf0)
  at <- nrow(mf0) - seq_along(rows) + 1L
  mf0[at, ] <- mf[rows, , drop = FALSE]
  mf0
}

# gam.setup()'s colMeans of X over every row, for a set-up on the mini
# frame from facts: the parametric columns' over mf, each smooth's from its
# basis's column means through its constraint.
lean_facts_cmX <- function(G, facts, mf) {
  cm <- G$cmX
  if (G$nsdf > 0) {
    Xp <- stats::model.matrix(G$pterms, mf)
    if (ncol(Xp) == G$nsdf) cm[seq_len(G$nsdf)] <- colMeans(Xp)
  }
  # (each smooth's spec by its set of variables, which no two specs share; a
  # factor by variable makes one smooth per level of one spec)
  spec_terms <- vapply(facts$specs, function(s) paste(sort(s$term), collapse = ","), "")
  for (i in seq_along(G$smooth)) {
    sm <- G$smooth[[i]]
    cols <- sm$first.para:sm$last.para
    # (a random effect of one factor: its levels' shares of the rows)
    if (inherits(sm, "random.effect")) {
      x <- mf[[sm$term]]
      cm[cols] <- tabulate(as.integer(x), nlevels(x)) / length(x)
      next
    }
    f <- attr(facts$specs[[match(paste(sort(sm$term), collapse = ","), spec_terms)]], "gg_facts")
    if (is.null(f)) next
    # (an sz smooth: the level means of its base's columns, level after
    # level as its columns, through smoothCon()'s sum-to-zero contrasts)
    if (!is.null(f$sz_means)) {
      m <- as.vector(t(f$sz_means))
      cm[cols] <- as.vector(mgcv_fun("XZKr")(matrix(m, 1L), vapply(sm$flev, length, 0L)))
      next
    }
    # the raw basis's column means over every row, times the by variable
    m <- if (!is.null(f$by_means)) f$by_means[sm$by.level, ] else
      if (!is.null(f$by_mean)) f$by_mean else f$mean
    qrc <- attr(sm, "qrc")
    if (inherits(qrc, "qr")) {
      Z <- qr.Q(qrc, complete = TRUE)[, -seq_len(attr(sm, "nCons")), drop = FALSE]
      cm[cols] <- drop(crossprod(Z, m))
    } else if (identical(as.numeric(attr(sm, "nCons")), 0) && length(m) == length(cols)) {
      cm[cols] <- m                     # (no constraint: a numeric by variable's smooth)
    }
  }
  cm
}

# TRUE when na.omit() would keep every row of model frame mf: every column
# atomic, none with a missing value (na.omit.data.frame skips non-atomic
# columns; those send the frame through the user's na.action instead).
lean_complete <- function(mf, nthreads = 1L) {
  for (x in mf) if (!is.atomic(x) || any_missing(x, nthreads)) return(FALSE)
  TRUE
}

# rep(value, n) for a double value, its n values written over threads in C
# (setup_stats.c: the first touch of a large vector's pages is most of
# rep()'s time at 1e8 rows and more).
lean_rep <- function(value, n, nthreads = 1L)
  .Call(gg_fill_r, as.double(n), as.double(value), as.integer(nthreads))

# stats::var(x) for the finite response of a fit (the start of REML's log
# scale, as bam() takes it): from 2^20 values over threads in C
# (setup_stats.c: R's algorithm, its long double sums added block by block,
# so equal to R's to rounding) in place of R's three passes on one thread
# (0.2 s at 3e7 rows on the 2-core machine).
lean_var <- function(x, nthreads = 1L) {
  if (length(x) < 2^20 || !is.double(x)) return(stats::var(x))
  .Call(gg_variance_r, x, as.integer(nthreads))
}

# anyNA(x); for a double vector or matrix a count over threads in C
# (setup_stats.c).
any_missing <- function(x, nthreads = 1L) {
  if (is.double(x)) .Call(gg_column_extremes_r, x, TRUE, as.integer(nthreads))[[1L]] > 0
  else anyNA(x)
}

# mgcv:::variable.summary(pf, dl, n), with the numeric summary (min, median
# by quantile type 3, max) taken by lean_range_median(), and factors without
# missing values summarized without the copy that drops them.
lean_variable_summary <- function(pf, dl, n, nthreads = 1L) {
  v.n <- length(dl)
  v.name <- v.name1 <- names(dl)
  if (v.n) {
    k <- 0
    for (i in 1:v.n) if (length(dl[[i]]) >= n) {
      k <- k + 1
      v.name[k] <- v.name1[i]
    }
    if (k > 0) v.name <- v.name[1:k] else v.name <- rep("", k)
  }
  p.name <- all.vars(pf[-2])
  vs <- list()
  v.n <- length(v.name)
  if (v.n > 0) for (i in 1:v.n) {
    para <- v.name[i] %in% p.name
    if (para && is.matrix(dl[[v.name[i]]]) && ncol(dl[[v.name[i]]]) > 1) {
      x <- matrix(apply(dl[[v.name[i]]], 2, stats::quantile, probs = 0.5, type = 3,
                        na.rm = TRUE), 1, ncol(dl[[v.name[i]]]))
    } else {
      x <- dl[[v.name[i]]]
      if (is.character(x)) x <- as.factor(x)
      if (is.factor(x)) {
        if (anyNA(x)) x <- x[!is.na(x)]            # else: the same levels and codes
        lx <- levels(x)
        freq <- tabulate(x)
        ii <- min((1:length(lx))[freq == max(freq)])
        x <- factor(lx[ii], levels = lx)
      } else {
        x <- lean_range_median(as.numeric(x), nthreads)
      }
    }
    vs[[v.name[i]]] <- x
  }
  vs
}

# c(min(x, na.rm = TRUE), lean_median(x), max(x, na.rm = TRUE)) for a double
# vector x, in C over nthreads threads (setup_stats.c: from 2^20 rows one
# pass and a selection among the values a sample's bracket gathered, else
# radix selection; exact).  A zero median, whose sign the selection does not
# keep as R's sort does, and a vector with no value left after dropping NAs
# (min() warns) take R's own route.
lean_range_median <- function(x, nthreads = 1L) {
  s <- .Call(gg_column_summary_r, x, as.integer(nthreads))
  if (s[[1L]] == 0 || s[[3L]] == 0)
    return(c(min(x, na.rm = TRUE), lean_median(x), max(x, na.rm = TRUE)))
  s[2:4]
}

# as.numeric(quantile(x, 0.5, type = 3, na.rm = TRUE)) for a double vector:
# quantile type 3 at p = 0.5 is the k-th order statistic of the non-missing
# values, k below; one partial sort at k finds it.
lean_median <- function(x) {
  if (anyNA(x)) x <- x[!is.na(x)]
  n <- length(x)
  if (n == 0L) return(as.numeric(stats::quantile(x, probs = 0.5, type = 3, na.rm = TRUE)))
  nppm <- n * 0.5 - 0.5
  j <- floor(nppm)
  k <- if (nppm != j || (j %% 2L) == 1L) j + 1 else max(j, 1)
  v <- sort.int(x, partial = k)[k]
  if (v == 0) v <- as.numeric(stats::quantile(x, probs = 0.5, type = 3, na.rm = TRUE))
  v
}

# attr(mf, "row.names") <- attr(mf, "row.names"), as `[.data.frame` leaves
# them: automatic row names (stored compactly as c(NA, +-n)) come back as
# 1:n, which R stores as c(NA, n) when n > 2; that is set here without
# expanding 1:n.  Other row names are re-assigned as they are.
lean_reset_row_names <- function(mf) {
  rn <- .row_names_info(mf, 0L)
  if (is.integer(rn) && length(rn) == 2L && is.na(rn[1L]) && abs(rn[2L]) > 2L)
    attr(mf, "row.names") <- c(NA_integer_, abs(rn[2L]))
  else
    attr(mf, "row.names") <- attr(mf, "row.names")
  mf
}

# mgcv:::mini.mf(mf, chunk.size): the same rows, drawn by the same calls
# under temp.seed(66); see the notes at the top for what differs.
lean_mini_mf <- function(mf, chunk.size, nthreads = 1L) {
  mn <- 0
  for (j in 1:length(mf)) mn <- mn + if (is.factor(mf[[j]])) length(levels(mf[[j]])) else 2
  if (chunk.size < mn) chunk.size <- mn
  n <- nrow(mf)
  if (n <= chunk.size) return(mf)
  temp.seed <- mgcv_fun("temp.seed")
  rngs <- temp.seed(66)
  restored <- FALSE
  on.exit(if (!restored) temp.seed(rngs))
  ind <- sample(1:n, chunk.size)
  mf0 <- mf[ind, , drop = FALSE]
  facs <- vapply(mf, is.factor, NA)
  perm <- if (any(facs)) lean_perm_prefix(n, mf[facs])
  # (the rows that replace mf0's first ones, as mini.mf() replaces them one
  # by one: collected, then put in place at once)
  src <- integer(0)
  for (j in 1:length(mf)) if (is.numeric(mf0[[j]])) {
    x <- mf[[j]]
    if (is.matrix(x)) {
      j.min <- min((1:n)[as.logical(rowSums(x == min(x)))])
      j.max <- min((1:n)[as.logical(rowSums(x == max(x)))])
    } else if (is.double(x) && is.null(attributes(x)) &&
               (e <- .Call(gg_column_extremes_r, x, FALSE, as.integer(nthreads)))[[1L]] == 0) {
      j.min <- as.integer(e[[2L]])               # which.min(x), over threads in C
      j.max <- as.integer(e[[3L]])
    } else if (is.integer(x) && is.null(attributes(x)) && !anyNA(x)) {
      j.min <- which.min(x)
      j.max <- which.max(x)
    } else {
      j.min <- min(which(x == min(x)))
      j.max <- min(which(x == max(x)))
    }
    src <- c(src, j.min, j.max)
  } else if (is.factor(mf[[j]])) {
    # ind[fac[ind] == level][1] for each level, ind the permutation
    fac <- mf[[j]]
    find <- perm[match(seq_along(levels(fac)), as.integer(fac)[perm])]
    src <- c(src, find[is.finite(find)])
  }
  if (length(src)) mf0[seq_along(src), ] <- mf[src, , drop = FALSE]
  restored <- TRUE
  temp.seed(rngs)
  mf0
}

# The prefix of mini.mf()'s permutation sample(1:n, n) that holds a row of
# every level of the factors in facs (all of it if some level is absent), so
# that each level's first row in the prefix is its first in the permutation.
# Called with the RNG where mini.mf() draws the permutation; leaves it
# anywhere (temp.seed() restores the caller's state afterwards).
lean_perm_prefix <- function(n, facs) {
  seed <- get(".Random.seed", envir = .GlobalEnv)
  m <- min(n, 4096)
  repeat {
    assign(".Random.seed", seed, envir = .GlobalEnv)
    if (m >= n) return(sample(1:n, n, replace = FALSE))
    ind <- sample.int(n, m, useHash = FALSE)
    ok <- TRUE
    for (f in facs)
      if (anyNA(match(seq_along(levels(f)), as.integer(f)[ind]))) {
        ok <- FALSE
        break
      }
    if (ok) return(ind)
    m <- min(n, 4 * m)
  }
}
