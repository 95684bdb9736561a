# gam()'s bases set up on a few rows, with what they take of every row
# computed on every row.  gam() (gam.setup(), smoothCon()) builds each
# smooth on all n rows, and all n rows then enter its object in three
# places only: the knots (a thin plate basis's drawn from the distinct
# values, construct_tprs's scaling of the columns to unit root mean
# square; a cr basis's quantiles of the distinct values), the centring
# constraint (the basis's column means), and the penalty's scaling (the
# largest absolute row sum of the basis, norm(X, "I")).  Here each of them
# is computed on all rows -- the basis evaluated by the C evaluators, on the
# device for a GPU fit and reduced there (only the statistics come back),
# on the CPU reduced in C (gg_basis_stats) -- and mgcv's
# gam.setup() then runs on bam()'s mini model frame with the row that
# attains norm(X, "I") added for each smooth, its smooths built by
# smooth.construct.gg_facts.smooth.spec() with the full data's knots,
# scaling and constraint.  The smooth objects, penalties and constraints
# are gam()'s to rounding; X itself is never formed in R: the fit builds it
# from its recipe (model_matrix_plan()) where it computes.  For a fit on
# the device (use_basis_facts()): on the CPU the basis would be evaluated
# twice.
#
# Taken for thin plate ("tp", and "ts") smooths of up to 4 variables with more
# distinct values than max.knots, cubic regression splines ("cr"), cyclic
# ("cc"), shrinkage ("cs"), P-splines ("ps", and "cp", "bs") of one
# variable, Gaussian process smooths
# ("gp") of up to 4 variables with more rows than max.knots, factor
# smooths ("fs") with a cubic regression spline base, sum-to-zero factor
# smooths ("sz") with a cr base or a tp base of up to 4 variables, and tensor
# products te()
# and ti() of one-variable cr, ps and tp margins (their knots, and te()'s
# reparameterisation, from every row's distinct values and range; a thin
# plate margin's shift and scales, and a ti() margin's constraint and
# scaling, from every row); with or without a by
# variable (a factor: every level's smooth has the basis's constraint over
# every row, as smoothCon() makes it before the by variable; numbers: the
# constraint dropped where the variable is not constant); without an id;
# where gam.side() deletes no column of a smooth nested in another (which
# columns it deletes depends on the rows: lean_setup() then sets the bases
# up on every row).
# A random effect of one factor is mgcv's own on the mini frame, which
# holds every level.  Any other smooth, or few rows, and gam()'s own
# set-up runs on every row (R/setup.R).

# Whether gam()'s bases take this route: where the fit runs on a device,
# which evaluates a basis on every row in milliseconds (the facts' pass
# and X's build from its recipe); on the CPU, whose evaluation of a thin
# plate basis on every row is most of the set-up, gam()'s set-up on every
# row evaluates it once instead of twice.  Option gamgpu.basis_facts:
# TRUE always, FALSE never, NA (the default) where a device is usable and
# the policy is not "off".
use_basis_facts <- function(plan) {
  o <- basis_facts_option()
  if (!is.na(o)) return(o)
  plan$mode == 2L || (plan$mode == 1L && isTRUE(.Call(gg_gpu_probe_r)$usable))
}

# The option, checked (by gam_gpu() before its set-up, whose errors in the
# lean path hand over to mgcv's).
basis_facts_option <- function() {
  o <- getOption("gamgpu.basis_facts", NA)
  if (!is.logical(o) || length(o) != 1L)
    gamgpu_abort("gamgpu_bad_input", "option gamgpu.basis_facts must be TRUE, FALSE or NA",
                 call = NULL)
  o
}

# The facts for every smooth spec, or where the route does not apply NULL
# or an empty list whose attr "why" says why (fit$device$
# model_matrix_reason): list(specs = the
# specs marked for smooth.construct.gg_facts.smooth.spec(), rows = the rows
# (of mf) to add to the mini frame).
gam_basis_facts <- function(specs, mf, knots, threads, plan) {
  none <- function(why) structure(list(), why = why)
  if (!length(specs)) return(NULL)
  n <- nrow(mf)
  # (smooths may share covariates -- s(x0) + ti(x0, x1) -- where gam.side()
  # then deletes nothing, lean_setup()'s check; not all of them)
  terms <- vapply(specs, function(s) paste(sort(s$term), collapse = ","), "")
  if (anyDuplicated(terms))
    return(none("gam()'s bases of smooths of the same covariates are set up in R"))
  # (every spec one facts_kind() takes, before any work on the rows)
  kind <- vapply(specs, facts_kind, "", mf = mf)
  if (any(kind == ""))
    return(none(sprintf(paste("gam()'s bases are set up in R for every row where a term is not",
                              "a tp, ts, cr, cs, cc, ps, cp, bs, gp, fs (cr base), sz (cr, tp base), te or ti (cr, ps, tp margins), t2 (cr, ps margins) smooth of numeric",
                              "covariates (by a factor or numbers) or a random effect of one",
                              "factor: %s"),
                        specs[[which(kind == "")[1L]]]$label)))
  dev <- device_of(plan)
  # (the covariates' distinct values, sorted side by side: R/sorted_distinct.R)
  mf <- sorted_distinct_prefetch(specs, kind, mf, knots, threads)
  rows <- integer(0)
  out <- vector("list", length(specs))
  # (a shrinkage thin plate, "ts", is set up as a "tp" and its penalty
  # shrunk after the scaling of every row, as mgcv shrinks it after its
  # own: tprs_shrunk())
  tp_spec <- function(s) {
    if (identical(class(s), "ts.smooth.spec")) class(s) <- "tp.smooth.spec"
    s
  }
  # (the thin plate smooths' constructions from their knots side by side)
  tp <- which(kind %in% c("tp", "ts") & lengths(lapply(specs, `[[`, "term")) <= 4L)
  stand_ins <- vector("list", length(specs))
  if (length(tp) > 1L)
    stand_ins[tp] <- tprs_stand_ins(lapply(specs[tp], tp_spec), mf, knots, threads)
  tp_facts <- function(i, shrink = NULL) {
    s <- tp_spec(specs[[i]])
    if (length(tp) > 1L && i %in% tp)
      tprs_facts(s, mf, knots, threads, shrink, stand_in = stand_ins[[i]])
    else tprs_facts(s, mf, knots, threads, shrink)
  }
  for (i in seq_along(specs)) {
    s <- specs[[i]]
    # (a random effect of one factor is gam()'s on the mini frame, which
    # holds every level: its basis is the level's indicator, whose row sums
    # are 1 on every row, and it has no constraint)
    if (kind[i] == "re") {
      out[i] <- list(s)
      next
    }
    f <- switch(kind[i], tp = tp_facts(i), ts = tp_facts(i, shrink = 0.1),
                cr = cr_facts(s, mf, knots, threads), cc = cc_facts(s, mf, knots, threads),
                ps = ps_facts(s, mf, knots, threads), gp = gp_facts(s, mf, knots, threads),
                fs = fs_facts(s, mf, knots, threads, dev),
                sz = sz_facts(s, mf, knots, threads),
                te = te_facts(s, mf, knots, threads, dev),
                t2 = t2_facts(s, mf, knots, threads, dev))
    if (is.null(f)) return(none(sprintf("gam()'s basis of %s is set up in R", s$label)))
    # (a factor smooth brings its statistics, fs_facts(); the others' come
    # from their basis on every row, the device's for a GPU fit, reduced in C)
    st <- if (is.null(f$stats)) basis_stats(s, f, mf, n, threads, dev) else f$stats
    if (is.character(st))
      return(none(sprintf("gam()'s basis of %s is set up in R%s", s$label, st)))
    f$stats <- NULL
    f$scale <- st$scale
    f$mean <- st$mean
    if (!is.null(st$by)) f <- c(f, st$by)
    f$threads <- threads
    f$dev <- dev
    rows <- c(rows, as.integer(st$imax))
    class(s) <- c("gg_facts.smooth.spec", class(s))
    attr(s, "gg_facts") <- f
    out[[i]] <- s
  }
  list(specs = out, rows = unique(rows))
}

# What gam_basis_facts() takes of the basis of spec s (facts f) on every
# row: list(scale, mean, imax, by = by_facts()), or why not (a string).
basis_stats <- function(s, f, mf, n, threads, dev) {
  # (the basis itself is wanted for a by variable's facts, an sz smooth's
  # level means and a P-spline's columns; else only its statistics, on the
  # device for a GPU fit)
  by <- !identical(s$by, "NA")
  sz <- !is.null(f[["sz"]])
  ps <- inherits(f$sm, range_bases) ||
    (inherits(f$sm, c("tensor.smooth", "t2.smooth")) &&
       any(vapply(f$sm$margin, inherits, NA, "pspline.smooth")))
  if (!by && !ps && !sz) {
    st <- raw_basis_stats(f$sm, mf, n, threads, dev, f$rms)
    if (is.null(st)) return("")
  } else {
    X <- raw_basis_matrix(f$sm, mf, n, threads, dev)
    if (is.null(X)) return("")
    # (a B-spline column no row reaches: gam()'s own set-up warns of it)
    if (!ps_columns_reached(f$sm, X, mf, n, threads, dev)) return(": a column no row reaches")
    st <- .Call(gg_basis_stats_r, X, f$rms, threads)
  }
  if (!all(is.finite(st$scale) & st$scale > 0) || !all(is.finite(st$mean)) ||
      !is.finite(st$rowmax))
    return("")
  list(scale = st$scale, mean = st$mean, imax = st$imax,
       by = if (by) by_facts(s$by, mf[[s$by]], X, st$scale) else
         if (sz) list(sz_means = by_facts(f$fterm, mf[[f$fterm]], X, st$scale)$by_means))
}

# A thin plate spline's basis built from its knots alone
# (tprs_stand_in(), R/tprs_setup.R); its columns are then scaled by the
# rows' root mean squares (rms).
# (stand_in: tprs_stand_in()'s smooth, where tprs_stand_ins() made it
# beside the model's other thin plate smooths)
tprs_facts <- function(s, mf, knots, threads = 1L, shrink = NULL,
                       stand_in = tprs_stand_in(s, mf, knots, threads)) {
  # (X's build from its recipe on the device takes up to 4 variables)
  if (length(s$term) > 4L) return(NULL)
  sm <- stand_in
  if (is.null(sm)) return(NULL)
  list(sm = sm, rms = TRUE, shrink = shrink)
}

# What a by variable takes of every row: a factor's level means of the
# basis's columns (scaled as the smooth's, by its rows' count: the column
# means of each level's smooth), for cmX; numbers' mean of the columns
# times the variable (its smooth's column means), and whether the smooth
# keeps its centring constraint -- smoothCon() drops it where the variable
# is not constant over the rows, and so gam() over every row.
by_facts <- function(by, b, X, scale) {
  n <- nrow(X)
  if (is.factor(b)) {
    lv <- rowsum(X, as.integer(b), reorder = TRUE)
    m <- matrix(0, nlevels(b), ncol(X), dimnames = list(levels(b), NULL))
    m[as.integer(rownames(lv)), ] <- lv
    return(list(by_means = m / rep(scale, each = nrow(m)) / n))
  }
  list(by_mean = drop(crossprod(X, b)) / scale / n,
       by_varies = stats::sd(b) > mean(b) * .Machine$double.eps * 1000)
}

# Which of gam_basis_facts()' routes spec s takes: "tp", "cr", "te" (its
# facts), "re" (mgcv's own set-up on the mini frame), or "" (none: gam()'s
# set-up on every row).
facts_kind <- function(s, mf) {
  numeric_vars <- function(vars) all(vapply(vars, function(v) {
    x <- mf[[v]]
    is.double(x) && is.null(dim(x)) && is.null(attr(x, "matrix"))
  }, NA))
  cl <- class(s)
  if (!is.null(s$id) || isTRUE(s$fixed)) return("")
  # (a by variable: a factor, or numbers, without missing values)
  if (!identical(s$by, "NA")) {
    b <- mf[[s$by]]
    if (identical(cl, "re.smooth.spec") || is.null(b) || !is.null(dim(b)) ||
        !(is.factor(b) || is.double(b)) || anyNA(b))
      return("")
  }
  # (a shrinkage cr, "cs", is a cr basis whose penalty mgcv shrinks from the
  # knots alone; "cp" and "bs" are P-splines' kin: their knots from the
  # rows' range)
  one_var <- c(cr.smooth.spec = "cr", cs.smooth.spec = "cr", cc.smooth.spec = "cc",
               ps.smooth.spec = "ps", cp.smooth.spec = "ps", bs.smooth.spec = "ps")
  if (length(cl) == 1L && cl %in% c("tp.smooth.spec", "ts.smooth.spec"))
    return(if (numeric_vars(s$term)) sub(".smooth.spec", "", cl, fixed = TRUE) else "")
  if (length(cl) == 1L && cl %in% names(one_var) && length(s$term) == 1L && is.null(s$xt))
    return(if (numeric_vars(s$term)) one_var[[cl]] else "")
  # (t2(): one-variable cr and ps margins, no by variable)
  if (identical(cl, "t2.smooth.spec")) {
    ok <- identical(s$by, "NA") && all(vapply(s$margin, function(m)
      length(m$term) == 1L && class(m)[1L] %in% c("cr.smooth.spec", "ps.smooth.spec") &&
        identical(m$by, "NA") && (is.null(m$xt) || identical(m$xt, list())), NA))
    return(if (ok && numeric_vars(s$term)) "t2" else "")
  }
  if (identical(cl, "tensor.smooth.spec")) {
    ok <- all(vapply(s$margin, function(m)
      length(m$term) == 1L &&
        class(m)[1L] %in% c("cr.smooth.spec", "ps.smooth.spec", "tp.smooth.spec") &&
        identical(m$by, "NA") && (is.null(m$xt) || identical(m$xt, list())), NA))
    return(if (ok && numeric_vars(s$term)) "te" else "")
  }
  # (a factor smooth: one factor, and a cr base of one number.  Not a thin
  # plate base: nat.param()'s eigenvectors of its penalty are so close to
  # degenerate that a basis equal to gam()'s to 1e-13, not to the bit,
  # gives another fit -- gam()'s set-up on every row runs)
  if (identical(cl, "fs.smooth.spec") && identical(s$by, "NA")) {
    fac <- vapply(s$term, function(v) is.factor(mf[[v]]), NA)
    ok <- sum(fac) == 1L && length(s$term) == 2L && fs_base_bs(s) == "cr" &&
      numeric_vars(s$term[!fac]) && !anyNA(mf[[s$term[fac]]])
    return(if (ok) "fs" else "")
  }
  # (a sum-to-zero factor smooth, sz: one factor, and a cr base of one
  # number or a tp base of up to 4, xt saying the base alone)
  if (identical(cl, "sz.smooth.spec") && identical(s$by, "NA")) {
    fac <- vapply(s$term, function(v) is.factor(mf[[v]]), NA)
    xt_ok <- is.null(s$xt) || (is.character(s$xt) && length(s$xt) == 1L) ||
      (is.list(s$xt) && identical(names(s$xt), "bs"))
    base <- fs_base_bs(s)
    ok <- xt_ok && sum(fac) == 1L &&
      ((base == "cr" && length(s$term) == 2L) || (base == "tp" && length(s$term) <= 5L)) &&
      numeric_vars(s$term[!fac]) && !anyNA(mf[[s$term[fac]]])
    return(if (ok) "sz" else "")
  }
  # (a Gaussian process smooth: xt may say only max.knots and seed)
  if (identical(cl, "gp.smooth.spec") && length(s$term) <= 4L &&
      (is.null(s$xt) || (is.list(s$xt) && all(names(s$xt) %in% c("max.knots", "seed")))))
    return(if (numeric_vars(s$term)) "gp" else "")
  if (identical(cl, "re.smooth.spec") && length(s$term) == 1L && is.null(s$xt) &&
      is.factor(mf[[s$term]]))
    return("re")
  ""
}

# A tensor product smooth, te(), of one-variable cr and ps margins, built by
# mgcv from every row's knots: a cr margin's from the distinct values (as
# cr_facts() places them), a ps margin's from the range, which te()'s
# reparameterisation also takes -- on stand-in rows that hold each
# variable's knots and extremes.  What is left of the rows is its centring
# constraint and penalty scaling (gam_basis_facts()).
te_facts <- function(s, mf, knots, threads = 1L, dev = NULL) {
  inter <- isTRUE(s$inter)
  kn <- list()
  cols <- list()
  for (j in seq_along(s$margin)) {
    m <- s$margin[[j]]
    v <- m$term
    tp <- inherits(m, "tp.smooth.spec")
    if (tp) {
      # (a thin plate margin is marked with its facts whatever the product:
      # its shift and its columns' scales are every row's; te()'s
      # reparameterisation takes the range)
      rg <- value_range(mf[[v]])
      if (!all(is.finite(rg)) || rg[1L] == rg[2L]) return(NULL)
      f <- tprs_facts(m, mf, knots, threads)
      if (is.null(f)) return(NULL)
      cols[[v]] <- rg
    } else {
      f <- margin_facts(m, mf, knots, threads)
      if (is.null(f)) return(NULL)
      if (!is.null(f$knots)) kn[[v]] <- f$knots
      cols[[v]] <- f$rows
    }
    # a ti() margin is constrained (smoothCon()) on every row: marked with
    # its own facts -- its basis's column means, and the row that attains
    # norm(X, "I") among the stand-ins for the penalty's scaling
    constrained <- inter && (is.null(s$mc) || isTRUE(as.logical(s$mc[j])))
    if (constrained || tp) {
      st <- raw_basis_stats(f$sm, mf, nrow(mf), threads, dev, f$rms)
      if (is.null(st)) return(NULL)
      if (!all(is.finite(st$scale) & st$scale > 0) || !all(is.finite(st$mean)) ||
          !is.finite(st$rowmax))
        return(NULL)
      if (constrained) cols[[v]] <- c(cols[[v]], mf[[v]][st$imax])
      # (margin: an unconstrained margin, which smooth.construct() builds
      # without a constraint)
      attr(m, "gg_facts") <- list(sm = f$sm, rms = f$rms, scale = st$scale, mean = st$mean,
                                  threads = threads, dev = dev, margin = !constrained)
      class(m) <- c("gg_facts.smooth.spec", class(m))
      s$margin[[j]] <- m
    }
  }
  sm <- construct_on_stand_ins(s, cols, kn)
  if (is.null(sm) || !is.null(sm$udrop) || (if (inter) !identical(dim(sm$C), c(0L, 0L))
                                            else !is.null(sm$C)))
    return(NULL)
  list(sm = sm, rms = FALSE)
}

# A tensor product's one-variable cr or ps margin m, from every row's
# knots: its facts (cr_facts(), ps_facts()) with the knots the product is
# to be given (cr: the ones placed; ps: the user's, if any -- its own come
# from the range) and the stand-in rows that hold them and the range.
# NULL where the route does not apply.
margin_facts <- function(m, mf, knots, threads = 1L) {
  v <- m$term
  rg <- value_range(mf[[v]])
  if (!all(is.finite(rg)) || rg[1L] == rg[2L]) return(NULL)
  cr <- inherits(m, "cr.smooth.spec")
  f <- if (cr) cr_facts(m, mf, knots, threads) else ps_facts(m, mf, knots, threads)
  if (is.null(f)) return(NULL)
  f$knots <- if (cr) f$sm$xp else knots[[v]]
  if (cr) f$rows <- c(f$sm$xp, rg)
  f
}

# mgcv's construction of tensor product spec s on stand-in rows (cols:
# each variable's values, padded to one length by their last) with knots
# kn; NULL where mgcv stops or warns.
construct_on_stand_ins <- function(s, cols, kn) {
  L <- max(lengths(cols))
  data <- lapply(cols, function(x) c(x, rep(x[length(x)], L - length(x))))
  tryCatch(mgcv::smooth.construct(s, data, kn), error = function(e) NULL,
           warning = function(w) NULL)
}

# stats::quantile(xu, probs) (type 7, names included) of sorted xu without
# quantile()'s partial sort of all of xu (0.3 s at 10^7 values): its
# arithmetic on the two order statistics beside each index (R's "be
# completely back-compatible" branch; test-basis-facts.R holds it to
# quantile() itself).
sorted_quantile <- function(xu, probs) {
  n <- length(xu)
  index <- 1 + max(n - 1, 0) * probs
  lo <- floor(index)
  hi <- ceiling(index)
  qs <- xu[lo]
  i <- which(index > lo & xu[hi] != qs)
  h <- (index - lo)[i]
  qs[i] <- (1 - h) * qs[i] + h * xu[hi[i]]
  names(qs) <- names(stats::quantile(0, probs))
  qs
}

# A cyclic cubic spline's basis from the knots mgcv places (place.knots()
# of the distinct values, or the user's), built on the knots as its rows.
cc_facts <- function(s, mf, knots, threads = 1L) {
  nk <- if (s$bs.dim < 0) 10 else s$bs.dim
  if (nk < 4) return(NULL)                # (mgcv warns and raises k: its own set-up)
  kn <- knots[[s$term]]
  if (length(kn) == 2L) return(NULL)      # (knots among the rows': mgcv's own set-up)
  if (is.null(kn)) {
    xu <- sorted_distinct(mf, s$term, threads)
    if (length(xu) < nk) return(NULL)
    kn <- mgcv_fun("place.knots")(xu, nk)
  }
  if (length(kn) != nk) return(NULL)
  sm <- tryCatch(mgcv::smooth.construct(s, stats::setNames(list(as.double(kn)), s$term),
                                        stats::setNames(list(kn), s$term)),
                 error = function(e) NULL)
  if (is.null(sm)) NULL else list(sm = sm, rms = FALSE)
}

# A P-spline's basis (or a cyclic P-spline's, a B-spline's) from the range
# of the rows (its knots' span), built on stand-in rows (returned as rows,
# for a te() margin's): the extremes and as many distinct values as it has
# columns (mgcv warns where the rows have fewer: its own set-up then).
ps_facts <- function(s, mf, knots, threads = 1L) {
  x <- mf[[s$term]]
  rg <- value_range(x)
  k <- max(s$bs.dim, 10L + sum(s$p.order, na.rm = TRUE))
  if (!all(is.finite(rg)) || rg[1L] == rg[2L] ||
      length(sorted_distinct(mf, s$term, threads, x)) < k) return(NULL)
  rows <- c(rg, seq(rg[1L], rg[2L], length.out = k))
  sm <- tryCatch(mgcv::smooth.construct(s, stats::setNames(list(rows), s$term), knots),
                 error = function(e) NULL, warning = function(w) NULL)
  if (is.null(sm)) NULL else list(sm = sm, rms = FALSE, rows = rows)
}

# The B-spline bases whose knots span the rows' range: P-splines, cyclic
# P-splines and B-splines.
range_bases <- c("pspline.smooth", "cpspline.smooth", "Bspline.smooth")

# Whether every column of a P-spline basis (or a cyclic P-spline's or a
# B-spline's) -- the smooth, or a te() margin -- is reached by some row (X:
# its raw basis on every row; a margin's is evaluated here): mgcv warns of
# a column no row reaches.
ps_columns_reached <- function(sm, X, mf, n, threads, dev) {
  if (inherits(sm, range_bases)) return(all(colSums(abs(X)) > 0))
  if (!inherits(sm, c("tensor.smooth", "t2.smooth"))) return(TRUE)
  for (m in sm$margin) if (inherits(m, "pspline.smooth")) {
    Xm <- raw_basis_matrix(m, mf, n, threads, dev)
    if (is.null(Xm) || !all(colSums(abs(Xm)) > 0)) return(FALSE)
  }
  TRUE
}

# A factor smooth's base class, as smooth.construct.fs.smooth.spec() reads
# it from xt ("tp" by default).
fs_base_bs <- function(s) {
  if (is.null(s$xt)) return("tp")
  if (is.list(s$xt)) return(if (is.null(s$xt$bs)) "tp" else as.character(s$xt$bs)[1L])
  as.character(s$xt)[1L]
}

# A sum-to-zero factor smooth, sz: its base (a cr or tp smooth of the
# numeric covariate) from facts of every row, as cr_facts() and
# tprs_facts() build them; the rest is mgcv's own construction
# (sz_from_facts()), which reads no row: the factor's levels and the
# base's basis on the rows it is set up on.  A row's absolute sum is its
# base row's (one level's block is non-zero), so the base's statistics
# give the penalty's scaling; the level means of the base's columns
# (basis_stats()) give gam()'s column means, cmX.
sz_facts <- function(s, mf, knots, threads = 1L) {
  fac_at <- vapply(s$term, function(v) is.factor(mf[[v]]), NA)
  base <- fs_base_bs(s)
  # (the base's spec as smooth.construct.sz.smooth.spec() hands it on)
  b <- s
  b$base.bs <- paste0(base, ".smooth.spec")
  if (is.character(b$xt)) b$xt <- NULL
  b$term <- s$term[!fac_at]
  b$dim <- length(b$term)
  class(b) <- b$base.bs
  f <- if (base == "cr") cr_facts(b, mf, knots, threads) else tprs_facts(b, mf, knots, threads)
  if (is.null(f)) return(NULL)
  f$sz <- base
  f$fterm <- s$term[fac_at]
  f
}

# mgcv's smooth.construct.sz.smooth.spec() on these rows with its base
# built from the facts: told that the base's class is gg_facts, it builds
# it by smooth.construct.gg_facts.smooth.spec() (the facts without "sz"),
# then takes its own steps; xt and base.bs are then put back as gam()'s.
sz_from_facts <- function(object, data, knots, f) {
  o <- object
  class(o) <- "sz.smooth.spec"
  o$xt <- list(bs = "gg_facts")
  attr(o, "gg_facts") <- f[setdiff(names(f), "sz")]
  # (mgcv registers no "sz" method: gam() finds it from within mgcv)
  sm <- mgcv_fun("smooth.construct.sz.smooth.spec")(o, data, knots)
  attr(sm, "gg_facts") <- NULL
  # (Xb, mgcv's copy of the base's basis on every row, which only gamm()'s
  # conversion to random effects reads, is not kept: these rows' would
  # mislead)
  sm["Xb"] <- list(NULL)
  # (a character xt mgcv drops; a list it keeps)
  if (is.character(object$xt)) sm$xt <- NULL else sm["xt"] <- list(object$xt)
  sm$base.bs <- paste0(f[["sz"]], ".smooth.spec")
  sm
}

# A factor smooth, fs (mgcv's smooth.construct.fs.smooth.spec() with its
# base, a cr smooth of the numeric covariate (facts_kind()), built from
# facts of every row): the base as cr_facts() builds it, its basis
# on every row (the device's for a GPU fit), and mgcv's nat.param() of that
# basis -- gam()'s own computation over every row, an n x k QR -- then
# the factor smooth's steps after its base's construction as
# smooth.construct.fs.smooth.spec() takes them (the same in mgcv 1.8-41
# and 1.9-3).  The statistics of the factor smooth's basis come from the
# reparameterised base (its level means, the row of largest absolute sum):
# its n x k nf basis is never formed.
fs_facts <- function(s, mf, knots, threads = 1L, dev = NULL) {
  fac_at <- vapply(s$term, function(v) is.factor(mf[[v]]), NA)
  fterm <- s$term[fac_at]
  base_bs <- fs_base_bs(s)
  b <- s
  b$base.bs <- paste0(base_bs, ".smooth.spec")
  if (!is.null(s$xt) && !is.list(s$xt)) b$xt <- NULL
  b$term <- s$term[!fac_at]
  b$dim <- length(b$term)
  class(b) <- b$base.bs
  f <- if (base_bs == "cr") cr_facts(b, mf, knots, threads)
  if (is.null(f)) return(NULL)
  n <- nrow(mf)
  X <- raw_basis_matrix(f$sm, mf, n, threads, dev)
  if (is.null(X)) return(NULL)
  sm <- f$sm
  sm$X <- X
  rm(X)
  null.d <- ncol(sm$X) - sm$rank
  if (length(sm$S) != 1L || null.d < 1L) return(NULL)
  rp <- mgcv_fun("nat.param")(sm$X, sm$S[[1L]], rank = sm$rank, type = 1)
  fac <- mf[[fterm]]
  # smooth.construct.fs.smooth.spec() from its base on (gamm = FALSE)
  object <- sm
  object$base <- list(bs = class(object), bs.dim = object$bs.dim, rank = object$rank,
                      null.space.dim = object$null.space.dim, term = object$term)
  object$term <- s$term
  object$S[[1L]] <- diag(c(rp$D, rep(0, null.d)))
  for (i in seq_len(null.d)) {
    object$S[[i + 1L]] <- object$S[[1L]] * 0
    object$S[[i + 1L]][object$rank + i, object$rank + i] <- 1
  }
  object$P <- rp$P
  object$fterm <- fterm
  object$flev <- levels(fac)
  object$fac <- fac
  nf <- length(object$flev)
  object$Xb <- rp$X
  object$base$S <- object$S
  object$X <- NULL                        # (on the rows it is set up on: construct())
  object$S[[1L]] <- diag(rep(c(rp$D, rep(0, null.d)), nf))
  for (i in seq_len(null.d)) {
    um <- rep(0, ncol(rp$X))
    um[object$rank + i] <- 1
    object$S[[i + 1L]] <- diag(rep(um, nf))
  }
  object$bs.dim <- ncol(rp$X) * nf
  object$te.ok <- 0
  object$rank <- c(object$rank * nf, rep(nf, null.d))
  object$side.constrain <- FALSE
  object$null.space.dim <- 0
  object$C <- matrix(0, 0, ncol(rp$X) * nf)
  object$plot.me <- TRUE
  class(object) <- "fs.interaction"
  # the level means of each column (levels in the order of flev), and the
  # row of largest absolute sum (one level's block is non-zero on a row)
  lv <- rowsum(rp$X, as.integer(fac), reorder = TRUE)
  m <- matrix(0, nf, ncol(rp$X))
  m[as.integer(rownames(lv)), ] <- lv
  list(sm = object, rms = FALSE,
       stats = list(scale = rep(1, ncol(rp$X) * nf), mean = as.vector(t(m)) / n,
                    imax = which.max(rowSums(abs(rp$X)))))
}

# A Gaussian process smooth's basis built by mgcv from the knots it would
# draw from every row (the distinct covariate rows, uniquecombs()' order,
# or max.knots of them drawn at its seed) and its shift (the covariates'
# means over every row), on stand-in rows that hold those means to the
# bit; the columns are not rescaled (rms = FALSE).  NULL where mgcv's own
# construction on every row is to run (few rows, the user's knots).
gp_facts <- function(s, mf, knots, threads = 1L) {
  xt <- if (is.list(s$xt)) s$xt else list()
  max.knots <- if (is.null(xt$max.knots)) 2000 else xt$max.knots
  seed <- if (is.null(xt$seed)) 1 else xt$seed
  d <- length(s$term)
  x <- matrix(unlist(lapply(s$term, function(v) mf[[v]]), use.names = FALSE), ncol = d)
  n <- nrow(x)
  if (n <= max.knots || !is.null(knots) &&
      any(vapply(s$term, function(v) !is.null(knots[[v]]), NA)))
    return(NULL)
  xu <- if (d == 1L) sorted_distinct_column(mf, s$term, threads, x[, 1L]) else
    distinct_rows(x, threads, min(setup_cores(n), threads))
  nu <- nrow(xu)
  kn <- if (nu > max.knots) {
    temp_seed <- mgcv_fun("temp.seed")
    rngs <- temp_seed(seed)
    ind <- sample(1:nu, max.knots, replace = FALSE)
    temp_seed(rngs)
    xu[ind, , drop = FALSE]
  } else xu
  nk <- nrow(kn)
  shift <- colMeans(x)
  # (as many stand-in rows as knots, at least the basis dimension, all
  # distinct: mgcv ignores knots beyond the rows and stops on fewer
  # distinct rows than the basis dimension)
  m <- max(nk, if (s$bs.dim > 0) s$bs.dim else 12L * d, 4L)
  rows <- lapply(seq_len(d), function(i) mean_keeping_values(x[, i], shift[i], m))
  if (any(vapply(rows, is.null, NA))) return(NULL)
  dat <- stats::setNames(rows, s$term)
  kl <- stats::setNames(lapply(seq_len(d), function(i) unname(kn[, i])), s$term)
  sm <- mgcv::smooth.construct(s, dat, kl)
  if (!identical(unname(as.vector(sm$shift)), unname(shift)) || nrow(sm$knt) != nk ||
      !all(is.finite(sm$UZ)))
    return(NULL)
  list(sm = sm, rms = FALSE)
}

# m distinct values whose colMeans() is mu to the bit: pairs mu -/+ j delta
# (and mu itself where m is odd), delta a power of two near the spread of x
# over m, halved until the sum is exact.  NULL where none is found.
mean_keeping_values <- function(x, mu, m) {
  half <- m %/% 2L
  spread <- stats::sd(x[seq_len(min(length(x), 1e5))])
  if (!is.finite(spread) || spread <= 0) return(NULL)
  delta <- 2^round(log2(spread / half))
  for (halving in 0:40) {
    j <- seq_len(half) * delta
    v <- c(mu - j, mu + j, if (m %% 2L) mu)
    if (identical(colMeans(matrix(v)), mu) && !anyDuplicated(v)) return(v)
    delta <- delta / 2
  }
  NULL
}

# range(x) of a numeric vector, without range()'s copy of it.
value_range <- function(x) c(min(x), max(x))

# A cubic regression spline's basis from the knots mgcv places (the
# quantiles of the covariate's distinct values, or the user's), built on
# the knots as its rows.
cr_facts <- function(s, mf, knots, threads = 1L) {
  x <- mf[[s$term]]
  nk <- if (s$bs.dim < 0) 10 else s$bs.dim
  if (nk < 3) return(NULL)                # (mgcv warns and raises k: its own set-up)
  kn <- if (!is.null(knots)) knots[[s$term]]
  if (is.null(kn)) {
    # (quantile() of the distinct values: of them in order, sort(unique()))
    xu <- sorted_distinct(mf, s$term, threads, x)
    if (length(xu) < nk) return(NULL)     # (mgcv's error, from its own set-up)
    kn <- sorted_quantile(xu, seq(0, 1, length = nk))
  }
  if (length(kn) != nk || length(unique(kn)) < nk) return(NULL)
  sm <- mgcv::smooth.construct(s, stats::setNames(list(as.double(kn)), s$term),
                               stats::setNames(list(kn), s$term))
  list(sm = sm, rms = FALSE)
}

# At most this many rows, the facts' smooths are built on the host (a GPU
# fit's too): the mini frame's (R/setup.R: facts_mini_rows).
facts_host_rows <- 10000

#' A smooth as gam() builds it, from facts of every row computed beforehand
#'
#' The smooth.construct() method behind gam_gpu()'s set-up of gam()'s
#' bases (methods other than "fREML") on a few rows; see R/basis_facts.R.
#' Not for direct use.
#' @param object a "tp", "cr", te() or t2() smooth specification marked by gamgpu.
#' @param data,knots as for [mgcv::smooth.construct()].
#' @return mgcv's "tprs.smooth", "cr.smooth", "tensor.smooth" or "t2.smooth" object, its centring
#'   constraint (C) that of every row.
#' @keywords internal
#' @exportS3Method mgcv::smooth.construct
smooth.construct.gg_facts.smooth.spec <- function(object, data, knots) {
  f <- attr(object, "gg_facts")
  if (!is.null(f[["sz"]])) return(sz_from_facts(object, data, knots, f))
  sm <- f$sm
  # (facts another linear predictor's smooth shares: this one's label)
  sm$label <- object$label
  # the raw basis on these rows (by the C evaluators over threads; on the
  # device of a GPU fit where they are many -- a thin plate basis by its
  # direct sums there -- else the host's: the few rows of the mini frame
  # are built faster than a trip to the device), scaled as on every row
  rows <- length(data[[sm$term[1L]]])
  X <- raw_basis_matrix(sm, data, rows, f$threads, if (rows > facts_host_rows) f$dev)
  if (is.null(X)) X <- mgcv::Predict.matrix(sm, data)
  if (f$rms) sm <- tprs_scaled(sm, X, f$scale) else sm$X <- X
  if (!is.null(f$shrink)) sm <- tprs_shrunk(sm, f$shrink)
  # (a t2(): its two constraints, R/basis_facts_t2.R)
  if (isTRUE(f$t2)) return(t2_constraints(sm, f$mean, f$n))
  # (a ti() has no constraint of its own: its margins have theirs; a te()
  # margin none; a factor smooth none)
  if (!isTRUE(sm$inter) && !isTRUE(f$margin) && !inherits(sm, "fs.interaction"))
    sm$C <- matrix(f$mean, 1L)
  # (a numeric by variable: the constraint kept or dropped as over every
  # row, whatever these rows' spread says to smoothCon(); where they agree
  # that it varies, smoothCon() drops it itself, as in gam())
  if (!is.null(f$by_varies)) {
    b <- data[[object$by]]
    if (!f$by_varies) attr(sm$C, "always.apply") <- TRUE
    else if (stats::sd(b) > mean(b) * .Machine$double.eps * 1000) sm$C <- NULL
    else sm$C <- matrix(0, 0L, 1L)
  }
  sm
}
