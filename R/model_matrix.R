# The model matrix on every row.  bam()'s setup builds its bases from a
# subsample, so G$X may hold only those rows; the fit needs X for all rows.
# This computes what predict.gam(type = "lpmatrix") would -- the parametric
# columns by model.matrix(), each smooth's columns by mgcv::PredictMat(), or
# by a C evaluator for the bases that have one (cr, cs) -- into one
# preallocated matrix, without predict.gam's per-block model frames, and
# over row blocks in forked workers where the platform forks and R-level
# basis code remains (option gamgpu.setup_cores; the workers run R only,
# never CUDA).  Here: a smooth's columns, by its recipe (checked against
# mgcv's on a sample of rows) or PredictMat(); the whole model's recipe and
# the forked build: R/model_matrix_plan.R.

model_matrix_block <- function(G, mf, threads = setup_threads(nrow(mf))) {
  X <- matrix(0, nrow(mf), ncol(G$X))
  if (G$nsdf > 0)
    X[, seq_len(G$nsdf)] <- stats::model.matrix(stats::delete.response(G$pterms), mf,
                                                contrasts.arg = G$contrasts)
  for (s in G$smooth)
    X[, s$first.para:s$last.para] <- smooth_matrix(s, mf, threads)
  X
}

# One smooth's columns: C for the bases that have an evaluator (cr, cs, tp,
# ts), mgcv::PredictMat for everything else.
smooth_matrix <- function(s, mf, threads = setup_threads(nrow(mf))) {
  Xs <- recipe_matrix(s, mf, threads)
  if (is.null(Xs)) mgcv::PredictMat(s, mf) else Xs
}

# One smooth's columns through the engine's host build of its recipe
# (src/basis/xplan.c), gam.side deletions applied after.
recipe_matrix <- function(s, mf, threads = setup_threads(nrow(mf))) {
  r <- checked_recipe(s, mf, threads)
  if (inherits(r, "gg_no_recipe")) return(NULL)
  r$col0 <- 1L
  r$ncol <- recipe_columns(r)
  drop_deleted(s, .Call(gg_xplan_build_r, list(n = nrow(mf), p = r$ncol,
                                                threads = as.integer(threads),
                                                blocks = list(r))))
}

# smooth_recipe() checked against mgcv on a sample of the rows: the
# recipe's columns built in C on up to 256 rows spread over the data (fewer,
# down to 64, where each row sums many terms: mgcv's thin plate rows on
# 2000 knots cost as much as 2000 cr rows; recipe_check_rows()) must
# equal PredictMat's there (to 1e-11 of their size), or the smooth goes
# the R route with the difference as its reason -- so that a smooth whose
# mgcv object holds something the recipe does not know about can never
# give a silently different model matrix.  (recipe: smooth_recipe, or a
# stand-in for tests; reference(sub): the columns mgcv's fit takes on the
# rows of sub, where they are not PredictMat's -- gam()'s fit of a t2().)
checked_recipe <- function(s, mf, threads = 1L, codes = new.env(parent = emptyenv()),
                           recipe = smooth_recipe, reference = NULL) {
  r <- recipe(s, mf, threads, codes)
  if (inherits(r, "gg_no_recipe")) return(r)
  n <- nrow(mf)
  rows <- unique(round(seq(1, n, length.out = min(n, recipe_check_rows(s)))))
  sub <- mf[rows, , drop = FALSE]
  # (the sample's recipe takes r's thin plate polynomials, not its own:
  # they depend on the smooth alone, and are what the check must see)
  sub_codes <- new.env(parent = emptyenv())
  sub_codes$tp1_table <- FALSE
  rs <- recipe(s, sub, 1L, sub_codes)
  if (inherits(rs, "gg_no_recipe")) return(rs)
  rs <- share_tp1_tables(rs, r)
  rs$col0 <- 1L
  rs$ncol <- recipe_columns(rs)
  Xc <- drop_deleted(s, .Call(gg_xplan_build_r, list(n = length(rows), p = rs$ncol,
                                                     threads = 1L, blocks = list(rs))))
  Xm <- if (is.null(reference)) mgcv::PredictMat(s, sub) else reference(sub)
  scale <- max(1, abs(Xm))
  # rounding allowed: none under the reference BLAS (the same sums in the
  # same order); under an optimized BLAS PredictMat's products sum in
  # another order -- a QR constraint to 4e-13 of the scale, a thin-plate
  # row's nXu + M terms (up to ~2000) to 1.5e-11 (k = 75, OpenBLAS 0.3.21).
  # A recipe that is wrong is off by far more (a knot moved by 1e-3: 1e-4).
  tol <- max(1e-11, 1e-13 * summed_terms(s))
  if (!identical(dim(Xc), dim(Xm)) || !all(abs(Xc - Xm) <= tol * scale))
    return(no_recipe(s$label, ": its C basis differs from mgcv's ",
                     if (is.null(reference)) "PredictMat" else "fit columns", " (",
                     if (identical(dim(Xc), dim(Xm))) format(max(abs(Xc - Xm)) / scale, digits = 2)
                     else "columns", ")"))
  r
}

# How many rows checked_recipe() compares for smooth s: 256, or as many as
# hold 2^17 of its rows' summed terms, at least 64.
recipe_check_rows <- function(s) as.integer(min(256, max(64, 2^17 %/% summed_terms(s))))

# Recipe `to` (of the same smooth as `from`, on other rows) with from's
# one-variable thin plate polynomials, in the block and in its margins.
share_tp1_tables <- function(to, from) {
  for (nm in c("pp_knots", "pp_coef", "pp_deg"))
    if (!is.null(from[[nm]])) to[[nm]] <- from[[nm]]
  for (i in seq_along(to[["margins"]]))
    to$margins[[i]] <- share_tp1_tables(to$margins[[i]], from$margins[[i]])
  to
}

# The longest sum one entry of smooth s's basis takes: a thin-plate
# basis's nXu + M terms (rows of UZ), for itself or its margins or base;
# 1 for the rest.
summed_terms <- function(s) {
  parts <- c(list(s), s[["margin"]], if (is.list(s[["base"]])) list(s[["base"]]))
  max(1, vapply(parts, function(m) if (is.matrix(m[["UZ"]])) nrow(m[["UZ"]]) else 1, 0))
}

# Why a model (or one smooth) has no recipe, in words naming the term:
# what model_matrix_plan(), smooth_recipe() and constraint_map() return
# instead of one, and gam_gpu() reports as fit$device$model_matrix_reason.
no_recipe <- function(...) structure(list(), class = "gg_no_recipe", reason = paste0(...))

# Whether smooth s has C evaluators for every part of its basis (judged
# from its class alone: smooth_recipe() still checks its data and details).
has_c_evaluator <- function(s) {
  if (inherits(s, c("tensor.smooth", "t2.smooth")))
    return(length(s$margin) <= 4L && all(vapply(s$margin, margin_supported, NA)))
  if (inherits(s, c("fs.interaction", "sz.interaction")))
    return(s$base$bs %in% c_bases)
  inherits(s, "random.effect") || margin_supported(s)
}

# The bases (smooth classes) a margin, an ordinary smooth or a factor
# smooth's base can be evaluated with in C.
c_bases <- c("cr.smooth", "cs.smooth", "cyclic.smooth", "pspline.smooth", "Bspline.smooth",
             "cpspline.smooth", "tprs.smooth", "ts.smooth", "gp.smooth")
margin_supported <- function(m) inherits(m, c_bases)

# What PredictMat does after the raw basis, as data for the C evaluators:
# mgcv's sweep-and-drop constraint (drop, shift), the by-variable (by, or
# for a factor its codes by_code and the smooth's level by_level) and the
# QR constraint as an explicit map (Z).  A gg_no_recipe (why) when the
# smooth is outside what that covers (derivatives, matrix arguments, other
# constraint forms, missing values), so that PredictMat is used instead.
# codes: factor_codes()'s cache, so that the smooths of one by-factor share
# one vector of codes (one buffer on the device).
constraint_map <- function(s, mf, threads = 1L, codes = new.env(parent = emptyenv())) {
  if (!is.null(s$deriv) && s$deriv != 0)
    return(no_recipe(s$label, ": a derivative smooth"))
  if (!is.null(attr(s, "indi")))
    return(no_recipe(s$label, ": an indexed smooth"))
  map <- margin_constraint(s)
  if (inherits(map, "gg_no_recipe")) return(map)
  if (s$by != "NA") {
    b <- mf[[s$by]]
    if (is.null(b) || !is.null(dim(b)) || var_missing(s$by, b, codes, threads))
      return(no_recipe(s$label, ": its by variable is not a vector without missing values"))
    if (is.factor(b)) {
      map$by_level <- match(s$by.level, levels(b))
      if (is.na(map$by_level))
        return(no_recipe(s$label, ": its by level is not a level of ", s$by))
      map$by_code <- factor_codes(s$by, b, codes)
    } else if (is.numeric(b)) {
      map$by <- row_double(s$by, b, codes)
    } else {
      return(no_recipe(s$label, ": its by variable is neither numeric nor a factor"))
    }
  }
  map
}

# mgcv's identifiability constraint of s (attribute qrc) as drop/shift or Z:
# the step after the raw basis in PredictMat, for a smooth or a ti() margin.
margin_constraint <- function(s) {
  qrc <- attr(s, "qrc")
  n_cons <- attr(s, "nCons")
  map <- list(drop = 0L, shift = NULL, Z = NULL)
  if (inherits(qrc, "sweepDrop")) {
    map$drop <- as.integer(qrc[1L])
    map$shift <- as.double(qrc[-1L])
  } else if (!is.null(attr(s, "fit_Z"))) {
    map$Z <- attr(s, "fit_Z")                 # (t2_fit_constraint())
  } else if (inherits(qrc, "qr")) {
    if (is.null(n_cons) || n_cons <= 0L)
      return(no_recipe(s$label, ": a QR constraint without constraints"))
    k <- nrow(qrc$qr)
    map$Z <- qr.Q(qrc, complete = TRUE)[, (n_cons + 1L):k, drop = FALSE]
  } else if (!is.null(qrc) && !(is.character(qrc) && identical(as.integer(n_cons), 0L))) {
    # a character qrc with nCons 0 means "no constraint"
    return(no_recipe(s$label, ": a constraint form the C evaluators do not take"))
  }
  map
}

# A factor's integer codes and a covariate as doubles, made once per
# variable (cache: an environment), so that the smooths that share a
# variable share one vector (one buffer on the device).
factor_codes <- function(name, f, cache) {
  key <- paste0("f:", name)
  if (is.null(cache[[key]])) cache[[key]] <- as.integer(f)
  cache[[key]]
}

# Whether variable `name` (x) has a missing value, looked at once per
# variable: the smooths of a by-factor all ask about the same two vectors.
var_missing <- function(name, x, cache, threads = 1L) {
  key <- paste0("na:", name)
  if (is.null(cache[[key]]))
    cache[[key]] <- any_missing(if (is.factor(x)) unclass(x) else x, threads)
  cache[[key]]
}

row_double <- function(name, x, cache) {
  key <- paste0("x:", name)
  if (is.null(cache[[key]])) cache[[key]] <- as.double(x)
  cache[[key]]
}

# The "cr"/"cs" basis of smooth s on the rows of mf (src/basis/basis_cr.c).
cr_matrix <- function(s, mf) {
  if (!inherits(s, c("cr.smooth", "cs.smooth"))) return(NULL)
  recipe_matrix(s, mf, 1L)
}

# What the C evaluators need to build smooth s on the rows of mf: its
# covariates, knots and constraint map -- the "recipe" block the engine
# builds X from (src/basis/xplan.h), on the host or on the device.  kind 1 is
# cr/cs, 2 is tp/ts, 4 any other smooth as a row tensor product of
# margins (margins_recipe()); a gg_no_recipe
# saying why when s has no C evaluator or its data do not suit one.
smooth_recipe <- function(s, mf, threads = 1L, codes = new.env(parent = emptyenv())) {
  if (!has_c_evaluator(s))
    return(no_recipe(s$label, ": its basis (", class(s)[1L], ") has no C evaluator"))
  if (!inherits(s, c("cr.smooth", "cs.smooth", "tprs.smooth", "ts.smooth")))
    return(margins_recipe(s, mf, threads, codes))
  if (isTRUE(s$drop.null > 0))
    return(tprs_drop_null_recipe(s, mf, threads, codes))
  # a cr or tp smooth is its one margin's basis (margin_recipe()) as a
  # block of its own kind: 1 cr/cs, 2 tp/ts (any number of variables here;
  # model_matrix_plan() keeps those of more than 4 off the device)
  r <- margin_recipe(s, mf, threads, codes, max_tp_d = Inf)
  if (inherits(r, "gg_no_recipe")) return(r)
  map <- constraint_map(s, mf, threads, codes)
  if (inherits(map, "gg_no_recipe")) return(map)
  r <- margin_block(r)
  c(r[setdiff(names(r), names(map))], map)
}

# A thin plate smooth with its null space dropped (tp with m = c(m, 0)):
# PredictMat evaluates the basis with the M null-space columns, keeps the
# first bs.dim and subtracts their means cmX.  Here that is one tp margin
# whose own map Z keeps them and takes cmX off through the constant column
# (the first null-space function, 1 on every row: UZ's column is a unit
# vector), then the smooth's constraint: raw_j - cmX_j, R's sum.
tprs_drop_null_recipe <- function(s, mf, threads, codes) {
  M <- as.integer(s$drop.null)
  k <- as.integer(s$bs.dim)
  one <- k + 1L                               # the constant null-space column
  # (UZ's column for it the unit vector of the first null-space row)
  const_column <- function(UZ) {
    unit <- numeric(nrow(UZ))
    unit[nrow(s$Xu) + 1L] <- 1
    identical(as.double(UZ[, one]), unit)
  }
  if (!inherits(s, "tprs.smooth") || inherits(s, "ts.smooth") || is.null(s$UZ) ||
      is.null(s$Xu) || ncol(s$UZ) != k + M || length(s$cmX) != k || !const_column(s$UZ))
    return(no_recipe(s$label, ": a thin plate basis with its null space dropped"))
  s0 <- s
  s0$drop.null <- 0
  r <- margin_recipe(s0, mf, threads, codes)
  if (inherits(r, "gg_no_recipe")) return(r)
  Z <- matrix(0, k + M, k)
  Z[cbind(seq_len(k), seq_len(k))] <- 1
  Z[one, ] <- -as.double(s$cmX)
  r$Z <- Z
  map <- constraint_map(s, mf, threads, codes)
  if (inherits(map, "gg_no_recipe")) return(map)
  c(list(kind = 4L, k = k, margins = list(r)), map)
}

# A cr or tp margin's recipe (margin_recipe()) as a block of its own kind
# (1 cr/cs, 2 tp/ts), its raw basis unconstrained.
margin_block <- function(r) {
  r$kind <- r$type
  r$type <- NULL
  r[["d"]] <- as.integer(if (is.null(r[["d"]])) 1L else r[["d"]])   # [[: r$d would match drop
  r
}

# A margin's raw basis (cr, tp, cc, ps, ...), or a tensor product's
# (unconstrained, no by variable), on the n rows of data: the host's build of its recipe (src/basis/xplan.c), or with dev
# = c(mode, ordinal) the device's (a device failure under "auto" counted,
# the host building it then).  NULL where the margin has no recipe.
# A one-variable thin plate basis is built from tp1_table()'s polynomials
# where that pays (tp1_table = NA: tp1_table_pays()), else by its direct
# sums (b' UZ); the two agree to rounding.
raw_basis_matrix <- function(m, data, n, threads, dev = NULL, tp1_table = NA) {
  plan <- raw_basis_plan(m, data, n, threads, dev, tp1_table)
  if (is.null(plan)) return(NULL)
  if (is.null(dev)) return(.Call(gg_xplan_build_r, plan))
  X <- .Call(gg_xplan_build_device_r, plan, dev[1L], dev[2L])
  attr(X, "device") <- attr(X, "fallback") <- NULL
  X
}

# gg_basis_stats() of that raw basis on every row (list(scale, mean, rowmax,
# imax), R/basis_facts.R): for a GPU fit (dev's mode) X is built and
# reduced on the device and only the statistics come back; else built and
# reduced in C on the host.  NULL where the basis has no recipe.
raw_basis_stats <- function(m, data, n, threads, dev, rms) {
  plan <- raw_basis_plan(m, data, n, threads, dev)
  if (is.null(plan)) return(NULL)
  if (is.null(dev)) dev <- c(0L, 0L)
  st <- .Call(gg_xplan_stats_device_r, plan, rms, dev[1L], dev[2L])
  attr(st, "device") <- attr(st, "fallback") <- NULL
  st
}

# The one-block plan (xplan) of raw_basis_matrix(), or NULL.
raw_basis_plan <- function(m, data, n, threads, dev = NULL, tp1_table = NA) {
  codes <- new.env(parent = emptyenv())
  # (a tensor product before its constraint: its margins' row products,
  # te()'s reparameterisation included; a factor smooth: its factor's
  # indicators times its reparameterised base)
  tensor <- inherits(m, c("tensor.smooth", "t2.smooth", "fs.interaction"))
  if (tensor) m$by <- "NA"            # (the raw basis: its by variable is applied later)
  codes$tp1_table <- if (tensor) FALSE else if (is.na(tp1_table)) tp1_table_pays(m, n, dev) else
    tp1_table
  r <- if (tensor) margins_recipe(m, data, threads, codes) else
    margin_recipe(m, data, threads, codes, max_tp_d = Inf)
  if (inherits(r, "gg_no_recipe")) return(NULL)
  # (cr and tp bases are blocks of their own kind; the others one margin
  # of a kind 4 block)
  if (!tensor) r <- if (r$type %in% 1:2) margin_block(r) else
    list(kind = 4L, k = r$k, margins = list(r), drop = 0L, shift = NULL, Z = NULL)
  r$col0 <- 1L
  r$ncol <- recipe_columns(r)
  list(n = n, p = r$k, threads = as.integer(threads), tensor_cores = tensor_cores_option(),
       blocks = list(r))
}

# A device plan (policy.R: device_plan()) as the c(mode, ordinal) the .Calls take.
device_of <- function(plan)
  as.integer(c(plan$mode, if (is.null(plan$ordinal)) 0L else plan$ordinal))

# Any other smooth as kind 4: margins evaluated in C (margin_recipe()),
# their row tensor product, then the smooth's constraint and by-variable.
# te()/ti() take their margins (with a ti() margin's own constraint and
# te()'s reparameterization XP); re takes a factor's codes or a numeric
# variable per variable of its formula (the last varying fastest, as
# model.matrix); fs takes its factor's codes and its base smooth times P;
# sz its factors' codes and its base, then sum-to-zero contrasts as a Z.
margins_recipe <- function(s, mf, threads = 1L, codes = new.env(parent = emptyenv())) {
  if (inherits(s, "tensor.smooth")) {
    if (!is.null(s$udrop))
      return(no_recipe(s$label, ": a tensor product with dropped columns (udrop)"))
    margins <- vector("list", length(s$margin))
    for (i in seq_along(s$margin)) {
      m <- margin_recipe(s$margin[[i]], mf, threads, codes)
      if (inherits(m, "gg_no_recipe")) return(m)
      if (isTRUE(s$mc[i])) {
        con <- margin_constraint(s$margin[[i]])
        if (inherits(con, "gg_no_recipe")) return(con)
        m[names(con)] <- con
      }
      if (length(s$XP) >= i && !is.null(s$XP[[i]])) {
        XP <- double_matrix(s$XP[[i]])
        m$Z <- if (is.null(m$Z)) XP else m$Z %*% XP
      }
      margins[[i]] <- m
    }
  } else if (inherits(s, "t2.smooth")) {
    # each margin's basis times its reparameterisation P; then t2's
    # columns, which are the row tensor product's columns reordered (and,
    # with ord, a subset): the selection goes in front of the constraint
    if (length(s$margin) > 4L)
      return(no_recipe(s$label, ": a t2 smooth of more than 4 margins"))
    margins <- vector("list", length(s$margin))
    for (i in seq_along(s$margin)) {
      m <- margin_recipe(s$margin[[i]], mf, threads, codes)
      if (inherits(m, "gg_no_recipe")) return(m)
      m$Z <- double_matrix(s$P[[i]])
      margins[[i]] <- m
    }
    t2_sel <- t2_selection(s)
    if (inherits(t2_sel, "gg_no_recipe")) return(t2_sel)
  } else if (inherits(s, "random.effect")) {
    vars <- all.vars(s$form)
    if (!setequal(vars, s$term) || length(vars) > 4L)
      return(no_recipe(s$label, ": a random effect whose formula is not its variables' interaction"))
    margins <- list()
    for (v in rev(vars)) {
      x <- mf[[v]]
      if (is.null(x) || !is.null(dim(x)) || var_missing(v, x, codes, threads))
        return(no_recipe(s$label, ": variable ", v, " is not a vector without missing values"))
      margins[[length(margins) + 1L]] <- if (is.factor(x))
        list(type = 5L, k = nlevels(x), code = factor_codes(v, x, codes))
      else if (is.numeric(x))
        list(type = 6L, k = 1L, x = row_double(v, x, codes))
      else
        return(no_recipe(s$label, ": variable ", v, " is neither numeric nor a factor"))
    }
  } else if (inherits(s, "fs.interaction")) {
    if (!is.null(s$margin.only))
      return(no_recipe(s$label, ": a factor smooth used as a margin"))
    f <- mf[[s$fterm]]
    if (!is.factor(f) || var_missing(s$fterm, f, codes, threads))
      return(no_recipe(s$label, ": its factor ", s$fterm, " is not a factor without missing values"))
    b <- base_recipe(s, mf, threads, codes)
    if (inherits(b, "gg_no_recipe")) return(b)
    b$Z <- double_matrix(s$P)
    code <- level_codes(s$fterm, f, s$flev, codes)
    margins <- list(list(type = 5L, k = length(s$flev), code = code), b)
  } else if (inherits(s, "sz.interaction")) {
    if (!is.null(s$margin.only))
      return(no_recipe(s$label, ": a factor smooth used as a margin"))
    if (length(s$fterm) > 3L)
      return(no_recipe(s$label, ": a sz smooth of more than 3 factors"))
    margins <- list()
    for (j in seq_along(s$fterm)) {
      f <- mf[[s$fterm[j]]]
      if (!is.factor(f) || var_missing(s$fterm[j], f, codes, threads))
        return(no_recipe(s$label, ": its factor ", s$fterm[j],
                         " is not a factor without missing values"))
      margins[[j]] <- list(type = 5L, k = length(s$flev[[j]]),
                           code = level_codes(s$fterm[j], f, s$flev[[j]], codes))
    }
    b <- base_recipe(s, mf, threads, codes)
    if (inherits(b, "gg_no_recipe")) return(b)
    margins[[length(margins) + 1L]] <- b
  } else {
    m <- margin_recipe(s, mf, threads, codes)
    if (inherits(m, "gg_no_recipe")) return(m)
    margins <- list(m)
  }
  qrc <- attr(s, "qrc")
  if (is.numeric(qrc) && !inherits(qrc, "sweepDrop") && length(qrc) > 1L &&
      isTRUE(attr(s, "nCons") > 0)) {
    # sz's sum-to-zero contrasts over its factors (mgcv's XZKr), linear in
    # each row: as the explicit map Z they make of the identity
    kraw <- prod(vapply(margins, recipe_columns, 1L))
    Z <- t(mgcv_fun("XZKr")(diag(kraw), qrc[-c(1L, length(qrc))]))
    attr(s, "qrc") <- NULL
    attr(s, "nCons") <- 0
    map <- constraint_map(s, mf, threads, codes)
    if (!inherits(map, "gg_no_recipe")) map$Z <- Z
  } else {
    map <- constraint_map(s, mf, threads, codes)
  }
  if (inherits(map, "gg_no_recipe")) return(map)
  if (inherits(s, "t2.smooth")) {
    if (!identical(as.integer(map$drop), 0L))
      return(no_recipe(s$label, ": a t2 smooth with a sweep-and-drop constraint"))
    map$Z <- if (is.null(map$Z)) t2_sel else t2_sel %*% map$Z
  }
  margins <- lapply(margins, function(m) { if (is.null(m$drop)) m$drop <- 0L; m })
  kc <- vapply(margins, recipe_columns, 1L)
  c(list(kind = 4L, k = as.integer(prod(kc)), margins = margins), map)
}

# The base smooth of a factor smooth (fs, sz) as a margin (margin_recipe()).
base_recipe <- function(s, mf, threads, codes) {
  base <- s
  class(base) <- c(s$base$bs, "mgcv.smooth")
  base$term <- s$base$term
  base$dim <- length(base$term)
  margin_recipe(base, mf, threads, codes)
}

# Factor f's codes against the levels lev a smooth was set up with: the
# shared codes vector when they are f's own levels, else matched.
level_codes <- function(name, f, lev, codes) {
  lev <- as.character(lev)
  if (identical(levels(f), lev)) factor_codes(name, f, codes) else match(as.character(f), lev)
}

# A matrix of doubles without dimnames (a smooth's P, XP).
double_matrix <- function(x) {
  x <- unname(as.matrix(x))
  storage.mode(x) <- "double"
  x
}

# Which column of the row tensor product of t2 smooth s's margins (in
# gg_bm_tensor_row's order: the last margin's index fastest) is each of
# t2's columns: mgcv's own t2.model.matrix applied to indicator margins
# (one row per combination of margin columns) gives the 0/1 matrix that
# maps the one to the other.
t2_selection <- function(s) {
  k <- vapply(s$P, ncol, 1L)
  combo <- as.matrix(rev(expand.grid(lapply(rev(k), seq_len))))
  E <- lapply(seq_along(k), function(i) diag(k[i])[combo[, i], , drop = FALSE])
  rank <- vapply(s$margin, function(m) as.integer(m$rank), 1L)
  sel <- unname(mgcv_fun("t2.model.matrix")(E, rank, full = s$full, ord = s$ord)[, ])
  if (!all(sel %in% c(0, 1)) || any(colSums(sel) != 1) || any(rowSums(sel) > 1))
    return(no_recipe(s$label, ": its columns are not a selection of the margins' products"))
  sel
}

# The constraint map Z of gam()'s fit of t2 smooth s (smoothCon(), modCon
# 0), where its object keeps the prediction constraint, colSums(X) (attr
# qrc).  t2's constructor puts the penalised columns first and the null
# space's (k - sum(rank) of them) last; its fit constraint is colSums(X)
# on the null space's columns alone -- one column: that column dropped;
# more: absorbed into them by their own QR, the last dropped (smoothCon's
# "indi" route).  Q of a QR does not change with the constraint's scale,
# so qrc's first column stands for colSums(X).  model_matrix_plan()
# checks the result on sample rows against t2_fit_reference().
t2_fit_constraint <- function(s) {
  qrc <- attr(s, "qrc")
  if (!inherits(qrc, "qr") || !identical(as.integer(attr(s, "nCons")), 1L))
    return(no_recipe(s$label, ": gam()'s fit of a t2() smooth whose prediction constraint ",
                     "is not one sum-to-zero"))
  k <- nrow(qrc$qr)
  nsd <- k - sum(s$rank)
  if (nsd < 1L || nsd != s$null.space.dim + 1L)
    return(no_recipe(s$label, ": gam()'s fit of a t2() smooth whose null space is not its last ",
                     "columns"))
  if (nsd == 1L) return(diag(k)[, -k, drop = FALSE])
  cp <- qr.qy(qrc, c(1, numeric(k - 1L)))
  indi <- (k - nsd + 1L):k
  Q <- qr.Q(qr(matrix(cp[indi], ncol = 1L)), complete = TRUE)
  Z <- diag(k)
  Z[indi, indi[-nsd]] <- Q[, -1L]
  Z[, -indi[nsd], drop = FALSE]
}

# gam()'s fit columns of t2 smooth s on the rows of a frame, from mgcv's
# own: X = Xp P (gam.setup()), Xp the prediction parameterisation's model
# matrix, whose columns of s are PredictMat's.  P's columns for s mix only
# s's own and the intercept (the two constraints differ by a constant);
# any other P (no intercept to take the difference) has no recipe.
t2_fit_reference <- function(G, s) {
  cols <- s$first.para:s$last.para
  Pc <- G$P[, cols, drop = FALSE]
  if (!(G$nsdf > 0L && identical(colnames(G$X)[1L], "(Intercept)")))
    return(no_recipe(s$label, ": gam()'s fit of a t2() smooth in a model without an ",
                     "intercept (G$P maps its constraint to the prediction one by least squares)"))
  other <- setdiff(seq_len(nrow(Pc)), c(1L, cols))
  if (length(other) && max(abs(Pc[other, ])) > 1e-10 * max(abs(Pc)))
    return(no_recipe(s$label, ": gam()'s fit of a t2() smooth whose constraint mixes other ",
                     "terms' columns (G$P)"))
  function(sub) {
    X <- mgcv::PredictMat(s, sub) %*% Pc[cols, , drop = FALSE]
    X + matrix(Pc[1L, ], nrow(X), ncol(X), byrow = TRUE)
  }
}

# One margin (or an ordinary smooth's basis) as src/basis/xplan.h's gg_xmargin:
# its type, raw columns k, covariates and basis data.  No constraint (the
# caller adds the margin's own, where mgcv applies it).
margin_recipe <- function(m, mf, threads = 1L, codes = new.env(parent = emptyenv()),
                          max_tp_d = 4L) {
  if (!margin_supported(m))
    return(no_recipe(m$label, ": its basis (", class(m)[1L], ") has no C evaluator"))
  if (!is.null(m$deriv) && m$deriv != 0)
    return(no_recipe(m$label, ": a derivative smooth"))
  cols <- lapply(m$term, function(v) mf[[v]])
  if (!all(vapply(seq_along(cols), function(j) {
    v <- cols[[j]]
    is.numeric(v) && is.null(dim(v)) && !var_missing(m$term[j], v, codes, threads)
  }, NA)))
    return(no_recipe(m$label, ": a covariate is not a numeric vector without missing values"))
  x1 <- row_double(m$term[1L], cols[[1L]], codes)
  none <- list(drop = 0L, shift = NULL, Z = NULL)
  if (inherits(m, c("cr.smooth", "cs.smooth"))) {
    if (length(cols) != 1L || is.null(m$F))
      return(no_recipe(m$label, ": a cr basis without its one covariate's F matrix"))
    return(c(list(type = 1L, k = length(m$xp), x = x1, xk = as.double(m$xp),
                  F = as.double(m$F)), none))
  }
  if (inherits(m, "cyclic.smooth")) {
    BD <- m$BD
    if (length(cols) != 1L || is.null(BD) || length(m$xp) != ncol(BD) + 1L)
      return(no_recipe(m$label, ": a cc basis without its knots and BD matrix"))
    return(c(list(type = 3L, k = ncol(BD), x = x1, xk = as.double(m$xp),
                  F = as.double(BD)), none))
  }
  if (inherits(m, c("pspline.smooth", "Bspline.smooth"))) {
    if (length(cols) != 1L || (!is.null(m$mono) && m$mono != 0))
      return(no_recipe(m$label, ": a B-spline basis with a shape constraint"))
    mm <- (if (inherits(m, "Bspline.smooth")) m$m[1L] - 1L else m$m[1L]) + 1L
    knots <- as.double(m$knots)
    nk <- length(knots)
    ord <- mm + 1L
    if (ord > 12L || nk - ord < 1L)
      return(no_recipe(m$label, ": a B-spline basis of order above 12"))
    lo <- knots[mm + 1L]
    hi <- knots[nk - mm]
    D <- splines::spline.des(knots, c(lo, lo, hi, hi), ord, c(0, 1, 0, 1))$design
    return(c(list(type = 4L, k = as.integer(nk - ord), x = x1, xk = knots, F = as.double(D),
                  nk = nk, ord = as.integer(ord), lo = lo, hi = hi), none))
  }
  if (inherits(m, "cpspline.smooth"))
    return(cp_recipe(m, x1, none))
  d <- length(cols)
  x <- if (d == 1L) x1 else matrix(as.double(unlist(cols, use.names = FALSE)), ncol = d)
  if (inherits(m, "gp.smooth"))
    return(gp_recipe(m, x, d, none, max_tp_d))
  # tp/ts
  if (is.null(m$UZ) || is.null(m$Xu))
    return(no_recipe(m$label, ": a thin plate basis without its UZ and Xu"))
  if (!is.null(m$drop.null) && m$drop.null > 0)
    return(no_recipe(m$label, ": a thin plate basis with its null space dropped"))
  if (d > max_tp_d)
    return(no_recipe(m$label, ": a thin plate margin of more than ", max_tp_d, " variables"))
  ord <- tprs_order(m, d)
  Xu <- m$Xu
  storage.mode(Xu) <- "double"
  UZ <- m$UZ
  storage.mode(UZ) <- "double"
  M <- as.integer(choose(ord + d - 1, d))
  c(list(type = 2L, k = ncol(UZ), x = x, d = as.integer(d), tshift = as.double(m$shift),
         m = as.integer(m$p.order[1L]), M = M, Xu = Xu, UZ = UZ),
    if (d == 1L && ord <= 16 && tp1_table_taken(m, length(x1), codes))
      tp1_table(Xu, UZ, m$p.order[1L], M, threads),
    none)
}

# A thin plate basis in one variable is a polynomial of degree 2m - 1 on
# each interval between its sorted knots: their coefficients, computed
# once here (src/basis/basis_tprs.c: gg_tp1_table, over threads), let the host
# and the device build each row from one interval's polynomials -- k Horner
# sums of 2m terms instead of k sums over the nXu + M basis functions --
# and both from the same numbers, so that they agree bit for bit.
tp1_table <- function(Xu, UZ, m, M, threads = 1L)
  .Call(gg_tprs_pp_r, Xu, UZ, as.integer(m), as.integer(M), as.integer(threads))

# Whether thin plate margin m's basis on n rows is cheaper through its
# table than by its direct sums: the table takes (K + 1) K k (D + 1)
# multiply-adds on the host (K knots, degree D), the direct sums n (K + M) k
# -- on the host (dev NULL or mode 0) at the same rate, on the device
# (dev = c(mode, ordinal)) tp1_device_rate times faster.  Measured with
# bench/tp1_table_cost.R on the H200 (K = 2000, k = 10, the basis copied
# back): the table 0.008 s over 16 threads (0.096 s on one); on the device
# the direct sums 0.002 s at 1e5 rows and 0.061 s at 1e6, the table's rows
# (with the table) 0.010 and 0.063 s.  On the arithmetic alone the device
# is some 16 times the table's rate; 32 allows for the table route's own
# rows and copies, which put the measured change nearer 1e6 rows (the
# model puts it at 2.6e5; either way a few milliseconds).  A basis without
# a table (not one variable) answers FALSE.
tp1_table_pays <- function(m, n, dev = NULL) {
  if (!inherits(m, c("tprs.smooth", "ts.smooth")) || !is.matrix(m$Xu) || ncol(m$Xu) != 1L ||
      !is.matrix(m$UZ))
    return(FALSE)
  K <- nrow(m$Xu)
  ord <- tprs_order(m, 1L)
  rate <- if (is.null(dev) || dev[1L] == 0L) 1 else tp1_device_rate
  n * nrow(m$UZ) > rate * (K + 1) * K * (2 * ord)
}
tp1_device_rate <- 32

# Whether a recipe built with `codes` takes a one-variable thin plate
# margin's table: codes$tp1_table NULL or TRUE always (the host's and the
# device's X then agree bit for bit), FALSE never, NA where it pays on n
# rows on device codes$tp1_dev (model_matrix_plan() for a device fit that
# may sum to rounding: option gamgpu.tensor_cores).
tp1_table_taken <- function(m, n, codes) {
  o <- codes$tp1_table
  if (is.null(o)) TRUE else if (is.na(o)) tp1_table_pays(m, n, codes$tp1_dev) else o
}

# A thin plate basis's penalty order in d variables: its p.order, or where
# that is too low mgcv's default (src/basis/basis_tprs.c: gg_tprs_order()).
tprs_order <- function(m, d) {
  ord <- m$p.order[1L]
  if (2 * ord <= d) {
    ord <- 1
    while (2 * ord < d + 2) ord <- ord + 1
  }
  ord
}

# A cyclic P-spline (cp) margin: mgcv's cSplineDes knots (k + 1 knots,
# extended below the first by the last ord - 1 intervals), their ends
# repeated ord - 1 more times as splineDesign(outer.ok = TRUE) repeats
# them, so that the C evaluator (gg_bm_cp_row) takes one knot vector.
cp_recipe <- function(m, x1, none) {
  knots <- sort(as.double(m$knots))
  nk <- length(knots)
  ord <- as.integer(m$m[1L]) + 2L
  if (ord < 2L || ord > 12L || nk < ord + 1L)
    return(no_recipe(m$label, ": a cyclic P-spline basis of order above 12 or without its knots"))
  K <- c(knots[1L] - (knots[nk] - knots[(nk - ord + 1L):(nk - 1L)]), knots)
  if (!(K[length(K) - 1L] < K[length(K)]))
    return(no_recipe(m$label, ": a cyclic P-spline basis with repeated end knots"))
  K <- c(rep(K[1L], ord - 1L), K, rep(K[length(K)], ord - 1L))
  c(list(type = 7L, k = nk - 1L, x = x1, xk = K, nk = length(K), ord = ord), none)
}

# A Gaussian process (gp) margin: the thin plate kernels' form with its
# knots for Xu, its covariance function (gp.defn: type, range rho, power)
# for eta, and the null space gpT() appends ([1, x] or [1]) as identity rows
# of UZ: X = [B UZ, T] = [B, T] %*% blockdiag(UZ, I).
gp_recipe <- function(m, x, d, none, max_tp_d) {
  defn <- as.double(m$gp.defn)
  if (d > max_tp_d)
    return(no_recipe(m$label, ": a Gaussian process margin of more than ", max_tp_d, " variables"))
  if (is.null(m$UZ) || is.null(m$knt) || length(defn) != 3L || anyNA(defn) ||
      !(abs(round(defn[1L])) %in% 1:5) || !(defn[2L] > 0) || !(defn[3L] > 0 && defn[3L] <= 2))
    return(no_recipe(m$label, ": a Gaussian process basis without its knots, UZ and gp.defn"))
  M <- if (defn[1L] < 0) 1L else d + 1L
  UZ <- double_matrix(m$UZ)
  kk <- ncol(UZ)
  UZa <- matrix(0, nrow(UZ) + M, kk + M)
  UZa[seq_len(nrow(UZ)), seq_len(kk)] <- UZ
  UZa[nrow(UZ) + seq_len(M), kk + seq_len(M)] <- diag(M)
  c(list(type = 8L, k = kk + M, x = x, d = as.integer(d), tshift = as.double(m$shift),
         m = 0L, M = M, Xu = double_matrix(m$knt), UZ = UZa,
         gp_type = as.integer(abs(round(defn[1L]))), gp_rho = defn[2L], gp_kp = defn[3L]), none)
}

# Columns a recipe block maps its raw basis to, before gam.side's deletions
# (the constraint's Z, or the raw basis less the dropped column).
recipe_columns <- function(r)
  as.integer(if (is.null(r$Z)) r$k - isTRUE(r$drop > 0L) else ncol(r$Z))

# gam.side's deletions for nested smooths, last in PredictMat too.
drop_deleted <- function(s, X) {
  del <- attr(s, "del.index")
  if (is.null(del)) X else X[, -del, drop = FALSE]
}

# The "tp"/"ts" basis of smooth s on the rows of mf (src/basis/basis_tprs.c),
# over `threads` threads.
tprs_matrix <- function(s, mf, threads = setup_threads(nrow(mf))) {
  if (!inherits(s, c("tprs.smooth", "ts.smooth"))) return(NULL)
  recipe_matrix(s, mf, threads)
}
