# The model set-up of gamgpu's native route for the general families
# (R/general_outer.R): what gam(..., fit = FALSE) gives -- gam.setup.list()
# for a list of formulas (gaulss(), ziplss(), multinom(), ...; X's columns
# of each linear predictor in attr(G$X, "lpi")), gam.setup() for one
# (cox.ph()) -- with X either gam()'s own n x p R matrix or, at many rows,
# never formed in R: built from its recipe (model_matrix_plan()) by the
# model session, on the device for a GPU fit.
#
# The recipe route does for the general families what lean_setup()
# (R/setup.R) does for one formula: the model frame of every row (built as
# gam() builds it), the variable summary and the parametric terms of every
# row, gam()'s bases from facts of every row (gam_basis_facts(),
# R/basis_facts.R: knots, centring constraint, penalty scaling), then
# gam.setup() or gam.setup.list() on a mini model frame (lean_mini_mf()
# with each smooth's row of largest basis row sum), and what gam() and
# gam.setup() take of every row put back on G: y, the prior weights, the
# offsets, the column means cmX (lean_facts_cmX(), linear predictor by
# linear predictor), n, the model frame.  G$X is then a matrix of no rows
# (its columns, names and "lpi"): X is the recipe's, and rows of it that R
# needs (the family's initialize() on a subsample, the first rows' checks)
# are built from the recipe on those rows (gf_x_rows()).  A family whose
# preinitialize() reorders the rows (cox.ph(): by time) is given a one
# column X of row numbers, which it reorders as it would reorder X: the
# model frame X is built from takes that order.
#
# gam(fit = FALSE) on every row (X then the matrix, fit$device$model_matrix
# "matrix", with its reason in model_matrix_reason) where the recipe route
# does not apply: n <= gf_setup_min_rows; a CPU fit without
# options(gamgpu.basis_facts = TRUE) (use_basis_facts(); the CPU would
# evaluate the bases twice); arguments beyond the model frame's, sp,
# min.sp, H, knots, select (paraPen, drop.intercept, ...); a family with a
# presetup; linear predictors that share terms (mvn()'s "1 + 2 ~");
# smooths the facts do not cover (gam_basis_facts()'s reason); a smooth
# nested in another whose columns gam.side() deletes; a term without a C
# evaluator (model_matrix_plan()'s reason); or any error on the way.

# Rows up to which gam()'s own set-up runs (its X then the matrix), as
# bam()'s chunk.size for lean_setup().
gf_setup_min_rows <- 10000L

# gam() arguments the recipe route takes (beside the model frame's, the
# ones that do not depend on the rows); any other goes to gam(fit = FALSE).
gf_setup_args <- c("formula", "family", "data", "weights", "subset", "na.action", "offset",
                   "method", "control", "scale", "select", "knots", "sp", "min.sp", "H",
                   "gamma", "fit", "drop.unused.levels")

# The set-up of gam_gpu()'s call gcall (mgcv::gam(...), evaluated in env)
# for the native route, the rows' X on the device of `plan` (a device
# plan: mode, ordinal) or the CPU: list(G = the set-up, the family's
# preinitialize() applied; X = the n x p matrix or its recipe; source =
# "matrix" or "recipe"; reason = why X is the matrix (NULL for a recipe);
# mf_x = the model frame in X's row order (recipe); drop = each linear
# predictor's drop.intercept; threads).
gf_setup <- function(gcall, env, plan, threads) {
  gcall$fit <- FALSE
  why <- if (!use_basis_facts(plan))
    paste("gam()'s bases set up on every row in R: a CPU fit takes the route over the",
          "rows' facts only with options(gamgpu.basis_facts = TRUE)") else ""
  S <- NULL
  if (!nzchar(why)) {
    S <- tryCatch(gf_recipe_setup(gcall, env, plan, threads), error = function(e) {
      if (device_error(e)) stop(e)
      gf_no_recipe(paste("the set-up from the rows' facts failed:", conditionMessage(e)))
    })
    if (!length(S)) {
      why <- attr(S, "why")
      S <- NULL
    }
  }
  if (!is.null(S)) return(S)
  G <- eval(gcall, env)
  G <- gf_preinitialize(G)
  X <- G$X
  if (!is.double(X)) storage.mode(X) <- "double"
  list(G = G, X = X, source = "matrix", reason = sprintf("gam()'s own setup built X on every row (%s)", why),
       threads = threads)
}

# Why the recipe route does not take a set-up: what gf_recipe_setup()
# returns then.
gf_no_recipe <- function(why) structure(list(), why = why)

# The recipe route (see the top of this file): gf_setup()'s list, or
# gf_no_recipe() with the reason.
gf_recipe_setup <- function(gcall, env, plan, threads) {
  m <- match.call(mgcv::gam, gcall, expand.dots = FALSE)
  args <- setdiff(names(m)[-1L], "...")
  extra <- c(setdiff(args, gf_setup_args), names(m[["..."]]))
  if (length(extra))
    return(gf_no_recipe(sprintf("gam()'s own setup built X on every row (the recipe route does not take %s)",
                                paste0("'", extra, "'", collapse = ", "))))
  control <- do.call(mgcv::gam.control, as.list(eval(m$control, env)))
  family <- eval(m$family, env)
  if (!inherits(family, "family"))
    return(gf_no_recipe("gam()'s own setup built X on every row (the family is not a family object)"))
  if (!is.null(family$presetup))
    return(gf_no_recipe(sprintf("gam()'s own setup built X on every row (%s() has a presetup)",
                                family$family[1L])))
  formula <- eval(m$formula, env)
  gp <- mgcv::interpret.gam(formula)
  lengthf <- if (is.list(formula)) length(formula) else 1L
  if ((is.list(formula) && (is.null(family$nlp) || family$nlp != gp$nlp)) ||
      (!is.list(formula) && !is.null(family$npl) && family$npl > 1))
    return(gf_no_recipe("gam()'s own setup built X on every row (the formulas do not match the family)"))
  if (is.list(formula) && gp$nlp < lengthf)
    return(gf_no_recipe(paste("gam()'s own setup built X on every row (linear predictors that share",
                              "terms)")))
  drop.intercept <- if (is.null(family$drop.intercept)) rep(FALSE, lengthf) else
    as.logical(family$drop.intercept)
  data <- if (is.null(m$data)) list() else eval(m$data, env)
  knots <- if (is.null(m$knots)) NULL else eval(m$knots, env)
  sp <- if (is.null(m$sp)) NULL else eval(m$sp, env)
  min.sp <- if (is.null(m$min.sp)) NULL else eval(m$min.sp, env)
  H <- if (is.null(m$H)) NULL else eval(m$H, env)
  select <- if (is.null(m$select)) FALSE else eval(m$select, env)

  ## the model frame of every row, as gam() builds it (with na.pass where
  ## na.omit / na.exclude would keep every row: lean_setup()'s reasoning)
  mf <- m
  mf$formula <- gp$fake.formula
  mf <- mf[!(names(mf) %in% c("family", "control", "scale", "knots", "sp", "min.sp", "H",
                              "select", "gamma", "method", "fit", "..."))]
  mf$drop.unused.levels <- if (is.null(m$drop.unused.levels)) TRUE else m$drop.unused.levels
  mf[[1L]] <- quote(stats::model.frame)
  pmf <- mf
  mfp <- NULL
  if (lean_na_ok(m, data, env)) {
    mfp <- mf
    mfp$na.action <- stats::na.pass
    mfp <- eval(mfp, env)
    if (!lean_complete(mfp, threads)) mfp <- NULL
  }
  mf <- if (is.null(mfp)) eval(mf, env) else lean_reset_row_names(mfp)
  rm(mfp)
  n <- nrow(mf)
  if (n <= gf_setup_min_rows)
    return(gf_no_recipe(sprintf("gam()'s own setup built X on every row (n <= %d)",
                                gf_setup_min_rows)))
  terms <- attr(mf, "terms")
  var.summary <- data_var_summary(gp, data, env, n, threads)
  rm(data)
  # (the parametric terms: their predvars and dataClasses are the same
  # whichever rows na.action keeps and whatever levels are dropped)
  pmf$na.action <- stats::na.pass
  pmf$drop.unused.levels <- FALSE
  if (is.list(formula)) {
    environment(formula) <- environment(formula[[1L]])
    pterms <- list()
    tlab <- character(0)
    for (i in seq_len(lengthf)) {
      pmf$formula <- gp[[i]]$pf
      pterms[[i]] <- attr(eval(pmf, env), "terms")
      tlabi <- attr(pterms[[i]], "term.labels")
      if (i > 1L && length(tlabi) > 0L) tlabi <- paste(tlabi, i - 1L, sep = ".")
      tlab <- c(tlab, tlabi)
    }
    attr(pterms, "term.labels") <- tlab
  } else {
    pmf$formula <- gp$pf
    pterms <- attr(eval(pmf, env), "terms")
  }

  ## gam()'s bases from facts of every row, predictor by predictor (the
  ## smooths of one predictor are set up together: gam.side()); a smooth
  ## that an earlier predictor has too (gaulss()'s s(x1) in both) takes
  ## that one's facts, the same basis of the same rows
  gp_setup <- gp
  rows <- integer(0)
  facts <- vector("list", lengthf)
  done <- list()
  # (the same smooth but for its label: s.1(x1) is s(x1) in the second)
  unlabelled <- function(s) `[[<-`(s, "label", NULL)
  for (i in seq_len(lengthf)) {
    specs <- if (is.list(formula)) gp[[i]]$smooth.spec else gp$smooth.spec
    if (!length(specs)) next
    # (gamgpu's thin plate construction, gg_tp, is mgcv's tp: the facts
    # take the spec as tp)
    specs <- lapply(specs, function(s) {
      if (identical(class(s), "gg_tp.smooth.spec")) class(s) <- "tp.smooth.spec"
      s
    })
    at <- vapply(specs, function(s)
      Position(function(d) identical(d$spec, unlabelled(s)), done, nomatch = 0L), 0L)
    seen <- at > 0L
    f <- if (all(seen)) list(specs = list(), rows = integer(0)) else
      gam_basis_facts(specs[!seen], mf, knots, threads, plan)
    if (is.null(f$specs))
      return(gf_no_recipe(if (!is.null(attr(f, "why"))) attr(f, "why") else
        "gam()'s bases set up on every row in R"))
    out <- vector("list", length(specs))
    out[!seen] <- f$specs
    out[seen] <- Map(function(s, d) structure(s, class = class(d$facts),
                                              gg_facts = attr(d$facts, "gg_facts")),
                     specs[seen], done[at[seen]])
    done <- c(done, Map(function(s, o) list(spec = unlabelled(s), facts = o), specs[!seen],
                        f$specs))
    f$specs <- out
    facts[[i]] <- f
    rows <- c(rows, f$rows)
    if (is.list(formula)) gp_setup[[i]]$smooth.spec <- f$specs else gp_setup$smooth.spec <- f$specs
  }

  ## gam.setup() / gam.setup.list() on the mini frame (at least 4 rows a
  ## coefficient)
  mini <- function(k) lean_mini_with_rows(lean_mini_mf(mf, k, threads), mf, unique(rows))
  mini_rows <- facts_mini_rows
  mf0 <- mini(mini_rows)
  setup <- mgcv_fun(if (is.list(formula)) "gam.setup.list" else "gam.setup")
  repeat {
    G <- setup(formula = gp_setup, pterms = pterms, data = mf0, knots = knots, sp = sp,
               min.sp = min.sp, H = H, absorb.cons = TRUE, sparse.cons = 0, select = select,
               idLinksBases = control$idLinksBases, scale.penalty = control$scalePenalty,
               paraPen = NULL, drop.intercept = if (is.list(formula)) drop.intercept
                                                else drop.intercept[1L])
    if (4L * ncol(G$X) <= mini_rows || mini_rows >= gf_setup_min_rows) break
    mini_rows <- min(4L * ncol(G$X), gf_setup_min_rows)
    mf0 <- mini(mini_rows)
  }
  if (any(vapply(G$smooth, function(sm) length(attr(sm, "del.index")) > 0L, NA)))
    return(gf_no_recipe(paste("gam()'s bases set up on every row in R: gam.side() deletes",
                              "columns of a smooth nested in another, which its rows decide")))

  ## what gam() and gam.setup() take of every row
  lpi <- attr(G$X, "lpi")
  G$cmX <- gf_facts_cmX(G, facts, mf, drop.intercept)
  G$n <- n
  G$y <- gf_response(gp, formula, mf)
  G$w <- if (is.null(mf$"(weights)")) rep(1, n) else mf$"(weights)"
  G$offset <- gf_offsets(G$offset, pterms, mf, is.list(formula))
  G$var.summary <- var.summary
  G$family <- family
  G$terms <- terms
  G$mf <- mf
  G$cl <- match.call(mgcv::gam, gcall)
  G$am <- family$family[1L] == "gaussian" && family$link == "identity"
  if (is.null(G$offset)) G$offset <- rep(0, n)
  G$min.edf <- G$nsdf
  if (G$m) for (i in 1:G$m) G$min.edf <- G$min.edf + G$smooth[[i]]$null.space.dim
  G$formula <- formula
  G$pred.formula <- gp$pred.formula
  environment(G$formula) <- environment(formula)
  # (X: its columns, names and lpi, no rows)
  X0 <- G$X[0L, , drop = FALSE]
  attr(X0, "lpi") <- lpi
  G$X <- X0

  ## the family's preinitialize(), the model frame in its order of the rows
  G <- gf_preinitialize(G)
  if (!length(G)) return(G)
  order <- attr(G, "gf_order")
  attr(G, "gf_order") <- NULL
  mf_x <- if (is.null(order)) mf else mf[order, , drop = FALSE]
  X <- gf_model_matrix_plan(G, mf_x, drop.intercept, threads, device_of(plan))
  if (inherits(X, "gg_no_recipe"))
    return(gf_no_recipe(attr(X, "reason")))
  list(G = G, X = X, source = "recipe", reason = NULL, mf_x = mf_x, drop = drop.intercept,
       threads = threads)
}

# The family's preinitialize() as estimate.gam() runs it (cox.ph() sorts
# the rows by time).  G$X with no rows (the recipe route): the family is
# given X as one column of row numbers, and the order it leaves them in is
# G's attribute "gf_order" (NULL where unchanged); a preinitialize() that
# does anything else with X: gf_no_recipe().
gf_preinitialize <- function(G) {
  G$family <- mgcv::fix.family.link(G$family)
  if (is.null(G$family$preinitialize)) return(G)
  recipe <- nrow(G$X) == 0L && G$n > 0L
  X0 <- G$X
  if (recipe) G$X <- matrix(as.double(seq_len(G$n)), G$n, 1L)
  pre <- G$family$preinitialize(G)
  for (nm in names(pre)) G[[nm]] <- pre[[nm]]
  if (!recipe) return(G)
  Xo <- G$X
  G$X <- X0
  if (!is.matrix(Xo) || !identical(dim(Xo), c(as.integer(G$n), 1L)))
    return(gf_no_recipe(sprintf(paste("gam()'s own setup built X on every row (%s()'s",
                                      "preinitialize() changes X)"), G$family$family[1L])))
  order <- as.integer(Xo[, 1L])
  if (!identical(sort(order), seq_len(G$n)))
    return(gf_no_recipe(sprintf(paste("gam()'s own setup built X on every row (%s()'s",
                                      "preinitialize() changes X)"), G$family$family[1L])))
  if (!identical(order, seq_len(G$n))) attr(G, "gf_order") <- order
  G
}

# The response on every row, as gam.setup() and gam.setup.list() take it
# (a later formula's response a further column: mvn()).
gf_response <- function(gp, formula, mf) {
  if (!is.list(formula)) return(mf[[gp$response]])
  y <- mf[[gp$response]]
  for (i in seq_along(formula)[-1L])
    if (!is.null(gp[[i]]$response)) y <- cbind(y, mf[[gp[[i]]$response]])
  y
}

# The offsets on every row, in the shape of G$offset from the mini frame:
# one formula, model.offset() (NULL where none); a list of formulas, each
# formula's offset term (gam.setup()'s list.call), the list built as
# gam.setup.list() builds it (a NULL at the end leaves it shorter).
gf_offsets <- function(mini, pterms, mf, list_call) {
  if (!list_call) {
    off <- stats::model.offset(mf)
    return(if (is.null(off)) NULL else as.numeric(off))
  }
  one <- function(pt) {
    offi <- attr(pt, "offset")
    if (is.null(offi)) return(NULL)
    as.numeric(mf[[names(attr(pt, "dataClasses"))[offi]]])
  }
  out <- list(one(pterms[[1L]]))
  for (i in seq_along(pterms)[-1L]) out[[i]] <- one(pterms[[i]])
  if (length(out) != length(mini) || !identical(vapply(out, is.null, NA), vapply(mini, is.null, NA)))
    gamgpu_abort("gamgpu_internal_error", "the offsets on every row are not the mini frame's",
                 call = NULL)
  out
}

# gam.setup()'s column means of X over every row (cmX), linear predictor
# by linear predictor: the parametric columns' from model.matrix() of its
# terms on every row (the intercept dropped where the family drops it),
# the smooths' from their facts (lean_facts_cmX()).
gf_facts_cmX <- function(G, facts, mf, drop.intercept) {
  cm <- G$cmX
  K <- length(G$nsdf)
  pterms <- if (K == 1L && !is.list(G$pterms)) list(G$pterms) else G$pterms
  start <- if (K == 1L) 1L else attr(G$nsdf, "pstart")
  stop_at <- c(start[-1L] - 1L, ncol(G$X))
  for (i in seq_len(K)) {
    cols <- start[i]:stop_at[i]
    if (G$nsdf[i] > 0L) {
      pt <- stats::delete.response(pterms[[i]])
      if (drop.intercept[i]) attr(pt, "intercept") <- 1L
      Xp <- stats::model.matrix(pt, mf)
      if (drop.intercept[i]) Xp <- Xp[, attr(Xp, "assign") > 0, drop = FALSE]
      if (ncol(Xp) != G$nsdf[i])
        gamgpu_abort("gamgpu_internal_error", "the parametric columns on every row are not the set-up's",
                     call = NULL)
      cm[start[i] - 1L + seq_len(G$nsdf[i])] <- colMeans(Xp)
    }
    if (is.null(facts[[i]])) next
    sm <- Filter(function(s) s$first.para >= start[i] && s$last.para <= stop_at[i], G$smooth)
    sm <- lapply(sm, function(s) {
      s$first.para <- s$first.para - start[i] + 1L
      s$last.para <- s$last.para - start[i] + 1L
      s
    })
    Gi <- list(cmX = cm[cols], nsdf = 0L, smooth = sm)
    cm[cols] <- lean_facts_cmX(Gi, facts[[i]], mf)
  }
  cm
}

# X's recipe (model_matrix_plan()) for a general family's set-up G on the
# rows of mf: each linear predictor's parametric columns at its columns
# (gf_parametric_blocks()), the smooths at theirs; or a gg_no_recipe.
gf_model_matrix_plan <- function(G, mf, drop.intercept, threads, dev = NULL) {
  K <- length(G$nsdf)
  pterms <- if (K == 1L && !is.list(G$pterms)) list(G$pterms) else G$pterms
  start <- if (K == 1L) 1L else attr(G$nsdf, "pstart")
  blocks <- list()
  for (i in seq_len(K)) {
    b <- gf_parametric_blocks(pterms[[i]], G$nsdf[i], drop.intercept[i], mf, start[i])
    if (inherits(b, "gg_no_recipe")) return(b)
    blocks <- c(blocks, b)
  }
  model_matrix_plan(list(X = G$X, P = G$P, smooth = G$smooth, nsdf = sum(G$nsdf)), mf,
                    threads = threads, dev = dev, parametric = blocks)
}

# One linear predictor's parametric columns (terms pterms, nsdf of them,
# its first column col0 of X) as recipe blocks (parametric_blocks()), the
# intercept made and dropped where the family drops it, as gam.setup()
# drops it.
gf_parametric_blocks <- function(pterms, nsdf, drop_intercept, mf, col0) {
  if (drop_intercept) attr(pterms, "intercept") <- 1L
  k <- nsdf + drop_intercept
  if (k == 0L) return(list())
  b <- parametric_blocks(list(nsdf = k, pterms = pterms, contrasts = NULL), mf)
  if (inherits(b, "gg_no_recipe")) return(b)
  if (drop_intercept) {
    # (the intercept is column 1: a block of ones alone, or a dense block's
    # first column)
    out <- list()
    for (x in b) {
      if (x$col0 == 1L) {
        if (x$kind == 5L && x$ncol == 1L) next
        if (x$kind != 0L)
          return(no_recipe("the parametric columns' first is not the intercept"))
        if (x$ncol == 1L) next
        x$D <- x$D[, -1L, drop = FALSE]
        x$ncol <- x$ncol - 1L
        x$col0 <- 2L
      }
      x$col0 <- x$col0 - 1L
      out[[length(out) + 1L]] <- x
    }
    b <- out
  }
  lapply(b, function(x) { x$col0 <- as.integer(x$col0 + col0 - 1L); x })
}

# Rows `rows` of X (in the set-up's order of the rows: cox.ph()'s sorted)
# for set-up S (gf_setup()): the matrix's rows, or built on the host from
# the recipe on those rows of the model frame; "lpi" kept.
gf_x_rows <- function(S, rows) {
  lpi <- attr(S$G$X, "lpi")
  if (is.matrix(S$X)) {
    X <- S$X[rows, , drop = FALSE]
  } else {
    plan <- gf_model_matrix_plan(S$G, S$mf_x[rows, , drop = FALSE], S$drop, S$threads)
    if (inherits(plan, "gg_no_recipe"))
      gamgpu_abort("gamgpu_internal_error",
                   paste("X's recipe on a subsample of the rows failed:", attr(plan, "reason")),
                   call = NULL)
    X <- .Call(gg_xplan_build_r, plan)
  }
  attr(X, "lpi") <- lpi
  X
}
