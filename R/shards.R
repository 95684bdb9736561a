# Data that never sits in one session: gam_gpu(data = gamgpu_shards(...),
# cluster = cl).  Each node of the cluster loads its own shard (files it
# reads, or a function of its index), keeps it, and the leader sees only
# what the set-up needs:
#   1. load (gg_shard_load on every node): the shard read, the model's
#      variables kept, subset and NA rows dropped there; back come the
#      rows' count and each variable's summary (range and the rows where it
#      is reached, factor levels with their counts and a row of each);
#   2. the set-up sample: every row when there are at most chunk.size of
#      them (the fit is then the one-process fit's), else mini.mf()'s
#      recipe over the shards -- chunk.size rows drawn over the nodes in
#      proportion to their rows, the rows where each numeric variable has
#      its minimum and maximum and a row of each factor level in front --
#      fetched from the nodes (gg_shard_rows); factor levels the union over
#      the shards in node order (character columns: sorted), as rbind()
#      would make them; mgcv's set-up runs on it (var.summary's minima,
#      medians -- shard_median() -- maxima and modal levels then from every
#      row);
#   3. open (gg_shard_open): each node builds its model frame, response,
#      weights and offset from its shard as the leader's set-up built them
#      from the sample, checks them (the leader combines the checks, so the
#      errors are one-process gam_gpu()'s) and opens its model session
#      (R/cluster.R's gg_node_open: X from the recipe on its device);
#   4. the fit as for in-memory data, but no n-vector ever travels: the
#      leader's session has no rows (src/r/session_r.c), the deviance, null
#      deviance and aic are sums from the nodes (family_stats.h's passes,
#      src/engine/fit_rows.c), r.sq's sums too (gg_shard_rsq); the fitted
#      object's n-vectors are the set-up sample's rows (shard_finish()).

.node_shards <- new.env(parent = emptyenv())

#' Data that the nodes of a cluster load themselves
#'
#' For \code{gam_gpu(..., data = gamgpu_shards(...), cluster = cl)}: each
#' node of the cluster reads its own rows, keeps them for the whole fit,
#' and never sends them anywhere; the leader (this session) holds only a
#' sample of rows for mgcv's set-up, and p-sized results per iteration.
#' For data larger than one machine's memory, or data that already lives
#' in files on the nodes.
#'
#' With \code{x} a character vector of files (paths as the nodes see
#' them), the files are split into contiguous groups, one group per node
#' (with fewer files than nodes, some nodes hold none); each node reads
#' its files with \code{reader} and binds them by rows.  With \code{x} a
#' function, node \code{i} (of the cluster's \code{k}) calls \code{x(i)}
#' for its data frame.  The concatenation in node order is the data the
#' fit is of.  Variables named in the formula, \code{weights}, \code{offset}
#' and \code{subset} must be columns of every shard (expressions of them
#' are evaluated there).
#'
#' @param x a character vector of files, or a function of the node's
#'   index returning that node's data frame.  The function travels to the
#'   nodes with its environment: make it one that holds only what it needs
#'   (a function defined at top level, or in a small \code{local()}).
#' @param reader a function reading one file into a data frame
#'   (\code{readRDS}, \code{utils::read.csv}, \code{data.table::fread},
#'   ...), run on the nodes; unused when \code{x} is a function.
#' @return an object of class \code{"gamgpu_shards"}.
#' @seealso \code{\link{gam_gpu}} (section "Several processes, GPUs or
#'   hosts") for what the fitted object holds.
#' @examples
#' \dontrun{
#' cl <- parallel::makePSOCKcluster(2)
#' files <- c("/data/part1.rds", "/data/part2.rds")
#' fit <- gam_gpu(y ~ s(x0) + s(x1), data = gamgpu_shards(files), cluster = cl)
#' # or a function of the node's index
#' fit <- gam_gpu(y ~ s(x0) + s(x1), cluster = cl,
#'                data = gamgpu_shards(function(i) readRDS(sprintf("/data/part%d.rds", i))))
#' parallel::stopCluster(cl)
#' }
#' @export
gamgpu_shards <- function(x, reader = readRDS) {
  if (is.character(x)) {
    if (!length(x) || anyNA(x) || any(!nzchar(x)))
      gamgpu_abort("gamgpu_bad_input", "gamgpu_shards(): the files must be non-empty paths",
                   call = NULL)
    if (!is.function(reader))
      gamgpu_abort("gamgpu_bad_input", "gamgpu_shards(): 'reader' must be a function",
                   call = NULL)
    return(structure(list(files = x, reader = reader, fun = NULL), class = "gamgpu_shards"))
  }
  if (is.function(x))
    return(structure(list(files = NULL, reader = NULL, fun = x), class = "gamgpu_shards"))
  gamgpu_abort("gamgpu_bad_input",
               "gamgpu_shards(): 'x' must be a character vector of files or a function of the node's index",
               call = NULL)
}

#' @export
print.gamgpu_shards <- function(x, ...) {
  if (!is.null(x$files))
    cat(sprintf("<gamgpu_shards: %d file%s, read on the nodes>\n", length(x$files),
                if (length(x$files) == 1L) "" else "s"))
  else cat("<gamgpu_shards: node i's data frame from a function of i>\n")
  invisible(x)
}

# ---- on the nodes -------------------------------------------------------

#' Load a cluster node's shard of a fit's data
#'
#' Run on a node by the leader (gam_gpu(data = gamgpu_shards(), cluster
#' =)).  Not for direct use.
#' @param key the fit's key.
#' @param s list(files, reader, fun, index, vars, model_vars, subset,
#'   na_fail): what to read, the variables kept, those whose missing
#'   values drop a row, the subset expression (or NULL), whether a missing
#'   value is an error (na.fail).
#' @return list(rows, na_rows, cols): the rows kept, the rows dropped for
#'   missing values, each variable's summary.
#' @keywords internal
#' @export
gg_shard_load <- function(key, s) {
  gg_shard_drop(key)
  d <- if (!is.null(s$fun)) s$fun(s$index) else if (length(s$files))
    do.call(rbind, lapply(s$files, s$reader)) else NULL
  if (is.null(d)) d <- data.frame()
  if (!is.data.frame(d)) d <- as.data.frame(d)
  if (nrow(d) > 0L || length(d)) {
    miss <- setdiff(s$vars, names(d))
    if (length(miss))
      stop(sprintf("this node's shard lacks variable%s %s", if (length(miss) > 1) "s" else "",
                   paste(miss, collapse = ", ")), call. = FALSE)
    d <- d[s$vars]
  }
  if (!is.null(s$subset) && nrow(d)) {
    keep <- eval(s$subset, d, globalenv())
    if (!is.logical(keep)) keep <- seq_len(nrow(d)) %in% keep
    d <- d[keep & !is.na(keep), , drop = FALSE]
  }
  na_rows <- 0
  if (nrow(d)) {
    cc <- stats::complete.cases(d[s$model_vars])
    na_rows <- sum(!cc)
    if (na_rows > 0 && isTRUE(s$na_fail)) stop("missing values in object", call. = FALSE)
    if (na_rows > 0) d <- d[cc, , drop = FALSE]
  }
  rownames(d) <- NULL
  .node_shards[[key]] <- d
  list(rows = nrow(d), na_rows = na_rows, cols = lapply(d, shard_column_summary))
}

# A shard's column: its type, range and the (first) rows reaching it, or
# its levels with their counts and first rows.
shard_column_summary <- function(x) {
  first_rows <- function(f) {
    i <- match(levels(f), f)
    list(levels = levels(f), counts = tabulate(f, nlevels(f)), rows = i)
  }
  if (is.factor(x)) return(c(list(type = "factor"), first_rows(x)))
  if (is.character(x)) {
    f <- factor(x)
    return(c(list(type = "character"), first_rows(f)))
  }
  if (is.double(x) && is.null(dim(x)) && length(x)) {
    # (the extremes and their first rows in one pass in C, where no value
    # is missing: which.min() and which.max() are those first rows)
    e <- .Call(gg_column_extremes_r, x, FALSE, 1L)
    if (e[[1L]] == 0) {
      at <- function(i) if (i <= .Machine$integer.max) as.integer(i) else i
      return(list(type = "numeric", min = x[[e[[2L]]]], max = x[[e[[3L]]]], imin = at(e[[2L]]),
                  imax = at(e[[3L]]), matrix = FALSE))
    }
  }
  if (is.numeric(x) && length(x)) {
    lo <- min(x)
    hi <- max(x)
    hit <- function(v) if (is.matrix(x)) which(rowSums(x == v) > 0)[1L] else which(x == v)[1L]
    return(list(type = "numeric", min = lo, max = hi, imin = hit(lo), imax = hit(hi),
                matrix = is.matrix(x)))
  }
  list(type = if (is.numeric(x)) "numeric" else class(x)[1L])
}

#' Rows of a cluster node's loaded shard
#'
#' @param key the fit's key.
#' @param rows the rows (NULL: every row).
#' @return the shard's data frame at those rows.
#' @keywords internal
#' @export
gg_shard_rows <- function(key, rows) {
  d <- shard_data(key)
  if (is.null(rows)) d else d[rows, , drop = FALSE]
}

gg_shard_load_args <- function(a) gg_shard_load(a$key, a)
gg_shard_rows_args <- function(a) gg_shard_rows(a[[1L]], a[[2L]])

# A step of the selection of every row's median over the shards
# (shard_median()) on this node's loaded column v: "draw", up to arg of
# its values strictly between lo and hi, drawn at random, with their
# count; "count", for each pivot in arg the count of values below it and
# at most it; "fetch", every value strictly between lo and hi: one pass in
# C each (src/setup/order_stats.c).
gg_shard_select <- function(a) {
  x <- shard_data(a$key)[[a$v]]
  if (!is.double(x)) x <- as.double(x)
  n <- length(x)
  switch(a$what,
         draw = {
           if (a$lo == -Inf && a$hi == Inf) {
             list(inside = n, sample = x[sample.int(n, min(n, a$arg))])
           } else {
             xi <- .Call(gg_values_between_r, x, a$lo, a$hi)
             m <- length(xi)
             list(inside = m, sample = if (m > a$arg) xi[sample.int(m, a$arg)] else xi)
           }
         },
         count = .Call(gg_count_pivots_r, x, as.double(a$arg)),
         fetch = .Call(gg_values_between_r, x, a$lo, a$hi))
}

shard_data <- function(key) {
  d <- .node_shards[[key]]
  if (is.null(d))
    gamgpu_abort("gamgpu_cluster_node_error",
                 "this node holds no loaded shard of that fit (restarted, or closed)", call = NULL)
  d
}

#' Open a cluster node's model session on its loaded shard
#'
#' The shard's model frame (factor levels the leader's), response, prior
#' weights and offset as the leader's set-up made them, checked; then its
#' model session (gg_node_open()).  The loaded data frame is let go.
#' @param key the fit's key.
#' @param s list(G, formula, weights, offset, levels, family, device,
#'   control, lean_rows).
#' @return gg_node_open()'s list, with chk (the rows' checks), sums
#'   (rows, sum(y), sum((y - mean)^2), sum(w y), sum(w), the rows of
#'   nonzero weight) and unit_weights.
#' @keywords internal
#' @export
gg_shard_open <- function(key, s) {
  d <- shard_data(key)
  for (v in names(s$levels)) d[[v]] <- factor(as.character(d[[v]]), levels = s$levels[[v]])
  formula <- s$formula
  environment(formula) <- globalenv()
  mc <- as.call(c(list(quote(stats::model.frame), formula = formula, data = quote(d)),
                  if (!is.null(s$weights)) list(weights = s$weights),
                  if (!is.null(s$offset)) list(offset = s$offset),
                  list(na.action = stats::na.pass, drop.unused.levels = FALSE)))
  mf <- eval(mc)
  rm(d)
  gg_shard_drop(key)
  # (the response column itself: model.response() would name it by the
  # rows, and as.double() of that copies it -- 16 bytes a row at a node's
  # peak; no prior weights, a unit w is NULL until a session needs ones)
  y <- mf[[1L]]
  if (inherits(y, "AsIs")) y <- unclass(y)
  w <- stats::model.weights(mf)
  if (is.null(w) && is.matrix(y)) w <- rep(1, nrow(mf))
  r <- response_rows(y, if (is.null(w)) NULL else as.numeric(w), s$family)
  rm(y)
  offset <- stats::model.offset(mf)
  offset <- if (is.null(offset)) NULL else as.numeric(offset)
  chk <- .Call(gg_check_rows_r, r$y, r$w, offset, s$control$nthreads)
  if (chk[["o_nonzero"]] == 0) offset <- NULL
  y <- r$y
  # (rows, sum(y), sum((y - mean(y))^2), sum(w y), sum(w), sum(w != 0) as
  # R makes them, in C: no n-vector for them)
  sums <- .Call(gg_response_sums_r, y, r$w)
  unit <- chk[["w_not_one"]] == 0
  bad <- chk[["w_bad"]] != 0 || chk[["y_bad"]] != 0 ||
    (chk[["o_nonzero"]] != 0 && chk[["o_bad"]] != 0)
  info <- if (bad) list() else
    gg_node_open(key, s$G, mf, y, r$w, offset, s$device, s$control, unit,
                 lean_rows = isTRUE(s$lean_rows))
  c(info, list(chk = chk, sums = sums, unit_weights = unit))
}

# A node's prior weights as an n-vector (a lean node keeps unit ones as
# NULL: made here for the R summaries that read them)
node_weights <- function(s) if (is.null(s$w)) rep(1, length(s$y)) else s$w

#' Sums over a cluster node's rows for r.sq
#'
#' @param key the fit's key.
#' @param mean_y the weighted mean of y over every row.
#' @return c(rows, sum(v1), sum(v1^2), sum(v2), sum(v2^2)) with v1 =
#'   sqrt(w) (y - mu), v2 = sqrt(w) (y - mean_y).
#' @keywords internal
#' @export
gg_shard_rsq <- function(key, mean_y) {
  s <- node_session(key)
  mu <- .Call(gg_node_op_r, s$ses$ptr, "fetch", "mu", NULL)
  .Call(gg_rsq_sums_r, s$y, mu, s$w, mean_y)
}

#' A family's aic summed over a cluster node's rows
#'
#' For the families whose aic is a sum over rows (negbin(theta),
#' Tweedie(p)), family$aic(y, 1, mu, w, dev) on the node's rows.
#' @param key the fit's key.
#' @param family the fit's family.
#' @param dev the deviance family$aic takes.
#' @return the node's share of the aic.
#' @keywords internal
#' @export
gg_shard_aic <- function(key, family, dev) {
  s <- node_session(key)
  mu <- .Call(gg_node_op_r, s$ses$ptr, "fetch", "mu", NULL)
  family$aic(s$y, 1, mu, node_weights(s), dev)
}

#' Let go of a cluster node's loaded shard
#'
#' @param key the fit's key.
#' @return TRUE, invisibly.
#' @keywords internal
#' @export
gg_shard_drop <- function(key) {
  if (exists(key, envir = .node_shards, inherits = FALSE)) rm(list = key, envir = .node_shards)
  invisible(TRUE)
}

#' An extended family's summaries over a cluster node's rows
#'
#' For nb() on shards (shard_efam_finish()): "mum", c(sum(mu w), sum(w))
#' with mu the fit's mean without the offset; "null", sum(dev.resids(y,
#' linkinv(arg + offset), w)) (find.null.dev()'s objective at arg on the
#' link scale); "dev", the sum of the deviance contributions at the fit's
#' mu (their positive part, as the residuals square them); "aic", the
#' family's aic of the node's rows at deviance arg.
#' @param key the fit's key.
#' @param family the fit's family (its final theta set).
#' @param what "mum", "null", "dev" or "aic".
#' @param arg see what.
#' @param ef the family's parameters for the C rows (efam_spec()$ef).
#' @return a number, or two for "mum".
#' @keywords internal
#' @export
gg_shard_efam <- function(key, family, what, arg, ef) {
  s <- node_session(key)
  s$w <- node_weights(s)
  name <- efam_name(family)
  off <- if (is.null(s$offset)) 0 else s$offset
  threads <- as.integer(s$threads)
  switch(what,
         mum = {
           eta <- .Call(gg_node_op_r, s$ses$ptr, "fetch", "eta", NULL)
           mu <- family$linkinv(eta - off)
           c(sum(mu * s$w), sum(s$w))
         },
         null = {
           mu <- family$linkinv(arg + off)
           if (length(mu) == 1L)
             .Call(gg_efam_dev_sum_r, name, y_double(s$y), as.double(mu), as.double(s$w), ef,
                   threads)
           else sum(.Call(gg_efam_dev_resids_r, name, y_double(s$y), as.double(mu),
                          as.double(s$w), ef, threads))
         },
         dev = {
           mu <- .Call(gg_node_op_r, s$ses$ptr, "fetch", "mu", NULL)
           sum(pmax(.Call(gg_efam_dev_resids_r, name, y_double(s$y), mu, as.double(s$w), ef,
                          threads), 0))
         },
         aic = {
           mu <- .Call(gg_node_op_r, s$ses$ptr, "fetch", "mu", NULL)
           efam_aic(family, name, s$y, mu, s$w, arg)
         },
         gamgpu_abort("gamgpu_bad_input", "gg_shard_efam: unknown summary", call = NULL))
}

# ---- on the leader ------------------------------------------------------

# The families whose fit on shards is exact here: R's exponential families
# (the C summaries), negbin(theta), Tweedie(p) (aic summed over rows) and
# nb() (shard_efam_finish()).
shard_family_ok <- function(family)
  if (inherits(family, "extended.family")) identical(efam_name(family), "negbin") else
    family$family %in% c("gaussian", "binomial", "poisson", "Gamma", "inverse.gaussian",
                         "quasibinomial", "quasipoisson", "quasi") ||
      is_negbin(family) || grepl("^Tweedie", family$family)

# efam_finish() for nb() over shards left on the nodes: the final theta
# into the family, the sample rows' residuals, and every row's deviance,
# null deviance (the family's postproc, whose find.null.dev() search sums
# dev.resids over the nodes at each step: it is given the mean of every
# row's mu, one row of weight 1 and no offset, its objective the nodes'
# sums at the offsets they hold) and aic.
shard_efam_finish <- function(object, f, theta, theta_failed) {
  family <- f$family
  if (theta_failed)
    gamgpu_warn("gamgpu_theta_step_failed", "step failure in theta estimation", call = NULL)
  if (isTRUE(family$n.theta > 0)) family$putTheta(theta)
  object$family <- family
  name <- efam_name(family)
  ef <- efam_spec(family, 1, object$y)$ef
  over <- function(what, arg = NULL)
    Reduce(`+`, f$ses$over_nodes(gg_shard_efam, family, what, arg, ef))
  d <- .Call(gg_efam_dev_resids_r, name, y_double(object$y), as.double(object$fitted.values),
             as.double(object$prior.weights), ef, 1L)
  object$residuals <- sqrt(pmax(d, 0)) * sign(object$y - object$fitted.values)
  object$deviance <- over("dev")
  mum <- over("mum")
  fam_post <- family
  fam_post$dev.resids <- function(y, mu, wt, theta = NULL) over("null", family$linkfun(mu))
  posr <- family$postproc(family = fam_post, y = 0, prior.weights = 1,
                          fitted = mum[1] / mum[2],
                          linear.predictors = family$linkfun(mum[1] / mum[2]),
                          offset = 0, intercept = f$G$intercept)
  if (!is.null(posr$family)) object$family$family <- posr$family
  object$null.deviance <- posr$null.deviance
  object$aic <- over("aic", object$sig2 * f$shards$sw) + 2 * sum(object$edf)
  object$scale.estimated <- TRUE
  object
}

# The shards loaded on the cluster's nodes and the set-up's sample of rows
# (steps 1 and 2 above).  mc: gam_gpu()'s call; env its frame's parent.
# Returns list(key, nodes (the cluster's nodes holding rows), rows (per
# node), n, data (the sample, a data frame), levels, cols, na_rows, drop
# (lets the nodes' loaded shards go, unless opened or the cluster is
# broken), state (opened, broken)).
shards_load <- function(shards, cl, mc, env, formula, chunk.size) {
  if (!inherits(cl, "cluster") || !length(cl))
    gamgpu_abort("gamgpu_bad_input",
                 paste("data = gamgpu_shards(...) is loaded by the nodes of a cluster: pass",
                       "cluster = (a cluster of R's parallel package)"), call = NULL)
  gp <- mgcv::interpret.gam(formula)
  expr_vars <- function(nm) if (is.null(mc[[nm]])) character(0) else all.vars(mc[[nm]])
  model_vars <- unique(c(all.vars(gp$fake.formula), expr_vars("weights"), expr_vars("offset")))
  vars <- unique(c(model_vars, expr_vars("subset")))
  na_action <- mc$na.action
  na_fail <- FALSE
  if (!is.null(na_action)) {
    na_fun <- eval(na_action, env)
    na_fail <- identical(na_fun, stats::na.fail)
    if (!na_fail && !identical(na_fun, stats::na.omit) && !identical(na_fun, stats::na.exclude))
      gamgpu_abort("gamgpu_unsupported_argument",
                   paste("na.action: shards loaded by the nodes take na.omit, na.exclude (both",
                         "drop the rows there) or na.fail"), call = NULL, arguments = "na.action")
  }
  k <- length(cl)
  parts <- if (!is.null(shards$files)) {
    nf <- length(shards$files)
    used <- min(k, nf)
    edge <- floor(seq(0, nf, length.out = used + 1L))
    lapply(seq_len(used), function(i)
      list(files = shards$files[(edge[i] + 1L):edge[i + 1L]], reader = shards$reader))
  } else lapply(seq_len(k), function(i) list(fun = shards$fun, index = i))
  key <- sprintf("gamgpu-%d-%s", Sys.getpid(), paste(sample(c(letters, 0:9), 12, TRUE),
                                                    collapse = ""))
  nodes <- cl[seq_along(parts)]
  args <- lapply(parts, function(p)
    c(p, list(key = key, vars = vars, model_vars = model_vars, subset = mc$subset,
              na_fail = na_fail)))
  .Call(gg_tcp_nodelay_r)
  # (whether the nodes' loaded shards have been let go -- gg_shard_open()
  # lets them go -- or the cluster can no longer be asked: an interrupt
  # left answers unread on its connections)
  state <- new.env(parent = emptyenv())
  state$opened <- state$broken <- FALSE
  drop_all <- function() {
    if (state$opened || state$broken) return(invisible())
    for (i in seq_along(nodes))
      tryCatch(parallel::clusterCall(nodes[i], gg_shard_drop, key), error = function(e) NULL,
               interrupt = function(e) NULL)
  }
  # (namespace functions only: a closure made here would carry this frame,
  # and the caller's with it, to the nodes)
  loaded <- tryCatch(parallel::clusterApply(nodes, args, gg_shard_load_args),
                     error = function(e) e, interrupt = function(e) e)
  if (inherits(loaded, "condition")) {
    state$broken <- inherits(loaded, "interrupt")
    drop_all()
    fl <- cluster_condition(loaded, "loading of the shards")
    gamgpu_abort(fl$class, fl$message, call = NULL)
  }
  # (from here on an error lets the loaded shards go; gam_gpu() lets them
  # go after a later error, while their sessions are not open)
  done <- FALSE
  on.exit(if (!done) drop_all(), add = TRUE)
  rows <- vapply(loaded, function(o) as.numeric(o$rows), 0)
  n <- sum(rows)
  if (n < 1)
    gamgpu_abort("gamgpu_no_data", "no rows left in the shards after NA handling and subsetting",
                 call = NULL)
  # (a node left without rows takes no further part: its empty shard goes now)
  if (any(rows == 0)) {
    for (i in which(rows == 0))
      tryCatch(parallel::clusterCall(nodes[i], gg_shard_drop, key), error = function(e) NULL)
    nodes <- nodes[rows > 0]
    loaded <- loaded[rows > 0]
    rows <- rows[rows > 0]
  }
  cols <- shard_columns(loaded, vars)
  levels <- lapply(cols[vapply(cols, function(c) c$type %in% c("factor", "character"), NA)],
                   `[[`, "levels")
  # (var.summary's medians over every row, where the set-up's sample is
  # not every row)
  # (its variables: the fake formula's right-hand side's, as mgcv's)
  if (n > chunk.size)
    for (v in intersect(names(cols), all.vars(gp$fake.formula[-2])))
      if (identical(cols[[v]]$type, "numeric") && !isTRUE(cols[[v]]$matrix) &&
          !is.null(cols[[v]]$min))
        cols[[v]]$median <- shard_median(nodes, key, v, rows, state)
  sel <- shard_sample(rows, cols, chunk.size)
  got <- tryCatch(parallel::clusterApply(nodes, lapply(sel$rows, function(r) list(key, r)),
                                         gg_shard_rows_args),
                  error = function(e) e, interrupt = function(e) e)
  if (inherits(got, "condition")) {
    state$broken <- inherits(got, "interrupt")
    fl <- cluster_condition(got, "sampling of the shards")
    gamgpu_abort(fl$class, fl$message, call = NULL)
  }
  data <- shard_sample_frame(got, sel, levels)
  done <- TRUE
  list(key = key, nodes = nodes, rows = rows, n = n, data = data, levels = levels,
       cols = cols, na_rows = sum(vapply(loaded, `[[`, 0, "na_rows")), drop = drop_all,
       state = state)
}

# The order statistic that quantile(x, 0.5, type = 3) -- variable.summary()'s
# median, mgcv's var.summary -- takes of N values.
median_rank <- function(N) {
  j <- floor(N / 2 - 0.5)
  if (N / 2 - 0.5 == j && j %% 2 == 0) max(j, 1) else j + 1
}

# Every row's median of numeric variable v (variable.summary()'s) over the
# nodes' loaded shards (rows: theirs), exact: a selection that keeps an
# open interval (lo, hi) holding it, with each node's count of values at
# most lo and below hi.  Each round draws about `draw` values from the
# interval over the nodes (in proportion to theirs), takes two pivots
# that bracket the median's rank among them with a margin of five
# standard deviations, and counts the values below and at most each
# pivot on every node: the median is a pivot, or the interval shrinks to
# the pivots' gap that holds it (at 1e9 rows, about 1 percent of the
# rows after the first round).  Once at most `fetch` values are left between
# lo and hi, they come to the leader and are sorted.
shard_median <- function(nodes, key, v, rows, state, draw = 1e5, fetch = 2e5) {
  ask <- function(args) {
    res <- tryCatch(parallel::clusterApply(nodes, args, gg_shard_select),
                    error = function(e) e, interrupt = function(e) e)
    if (inherits(res, "condition")) {
      state$broken <- inherits(res, "interrupt")
      fl <- cluster_condition(res, "median of the shards")
      gamgpu_abort(fl$class, fl$message, call = NULL)
    }
    res
  }
  each <- function(what, arg, lo, hi)
    lapply(seq_along(nodes), function(i)
      list(key = key, v = v, lo = lo, hi = hi, what = what,
           arg = if (is.list(arg)) arg[[i]] else arg))
  k <- median_rank(sum(rows))
  lo <- -Inf
  hi <- Inf
  le_lo <- numeric(length(rows))      # each node's values <= lo
  lt_hi <- as.numeric(rows)           # and < hi
  for (round in 1:40) {
    below <- sum(le_lo)
    inside <- sum(lt_hi - le_lo)
    if (inside <= fetch) {
      vals <- sort(unlist(ask(each("fetch", NULL, lo, hi)), use.names = FALSE))
      return(vals[k - below])
    }
    want <- as.list(ceiling(draw * (lt_hi - le_lo) / inside))
    s <- sort(unlist(lapply(ask(each("draw", want, lo, hi)), `[[`, "sample"), use.names = FALSE))
    m <- length(s)
    q <- (k - below) / inside
    sd <- sqrt(m * q * (1 - q))
    at <- c(floor(m * q - 5 * sd - 1), ceiling(m * q + 5 * sd + 1))
    piv <- unique(s[at[at >= 1 & at <= m]])
    if (!length(piv)) piv <- s[max(1, min(m, round(m * q)))]
    cnt <- lapply(ask(each("count", piv, lo, hi)), matrix, nrow = 2L)
    lt <- do.call(rbind, lapply(cnt, function(x) x[1L, ]))     # nodes x pivots
    le <- do.call(rbind, lapply(cnt, function(x) x[2L, ]))
    tlt <- colSums(lt)
    tle <- colSums(le)
    hit <- which(tlt < k & k <= tle)
    if (length(hit)) return(piv[hit[1L]])
    # the gap between the pivots (and lo, hi) that holds it
    j <- sum(tle < k)                  # pivots wholly below it
    if (j > 0L) {
      lo <- piv[j]
      le_lo <- le[, j]
    }
    if (j < length(piv)) {
      hi <- piv[j + 1L]
      lt_hi <- lt[, j + 1L]
    }
  }
  gamgpu_abort("gamgpu_internal_error", sprintf("the median of %s over the shards did not settle", v),
               call = NULL)
}

# The shards' column summaries combined: numeric range with the node and
# row reaching it; levels (factors: the union in node order; characters:
# sorted) with counts over every row and a (node, row) for each.
shard_columns <- function(loaded, vars) {
  out <- list()
  for (v in vars) {
    parts <- lapply(seq_along(loaded), function(i) c(loaded[[i]]$cols[[v]], node = i))
    types <- unique(vapply(parts, `[[`, "", "type"))
    if (length(types) > 1L && all(types %in% c("factor", "character"))) types <- "factor"
    if (length(types) != 1L)
      gamgpu_abort("gamgpu_bad_input",
                   sprintf("variable '%s' has different types in different shards (%s)", v,
                           paste(types, collapse = ", ")), call = NULL)
    if (types == "numeric") {
      lo <- vapply(parts, `[[`, 0, "min")
      hi <- vapply(parts, `[[`, 0, "max")
      a <- which.min(lo)
      b <- which.max(hi)
      out[[v]] <- list(type = "numeric", min = lo[a], max = hi[b],
                       matrix = any(vapply(parts, function(p) isTRUE(p$matrix), NA)),
                       at_min = c(parts[[a]]$node, parts[[a]]$imin),
                       at_max = c(parts[[b]]$node, parts[[b]]$imax))
    } else if (types %in% c("factor", "character")) {
      lev <- unique(unlist(lapply(parts, `[[`, "levels")))
      if (types == "character") lev <- sort(lev)
      counts <- stats::setNames(numeric(length(lev)), lev)
      at <- matrix(NA_real_, length(lev), 2L)
      for (p in parts) {
        counts[p$levels] <- counts[p$levels] + p$counts
        j <- match(p$levels, lev)
        new <- is.na(at[j, 1L]) & p$counts > 0
        at[j[new], ] <- cbind(p$node, p$rows[new])
      }
      out[[v]] <- list(type = types, levels = lev, counts = counts, at = at)
    } else out[[v]] <- list(type = types)
  }
  out
}

# Which rows of each node form the set-up's sample: every row when there
# are at most chunk.size (mini.mf() then takes the frame itself); else
# chunk.size rows drawn over the nodes in proportion to their rows (under
# mini.mf()'s seed, the caller's random numbers left as they were), with
# the rows reaching each numeric variable's extremes and a row of each
# factor level put first, as mini.mf() does.  Returns list(rows (per node:
# NULL for all, else indices), order (the sample's (node, row) pairs in
# their order), all).
shard_sample <- function(rows, cols, chunk.size) {
  n <- sum(rows)
  mn <- sum(vapply(cols, function(c) if (c$type %in% c("factor", "character"))
    length(c$levels) else 2, 0))
  if (chunk.size < mn) chunk.size <- mn
  if (n <= chunk.size) return(list(rows = rep(list(NULL), length(rows)), all = TRUE))
  seed <- if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
    get(".Random.seed", envir = globalenv())
  on.exit(if (is.null(seed)) rm(".Random.seed", envir = globalenv()) else
    assign(".Random.seed", seed, envir = globalenv()))
  set.seed(66)
  pick <- sort(sample.int(n, chunk.size))
  node_of <- findInterval(pick - 1, c(0, cumsum(rows)), left.open = FALSE)
  within <- pick - c(0, cumsum(rows))[node_of]
  ord <- cbind(node_of, within)
  front <- NULL
  for (c in cols) {
    if (c$type == "numeric") front <- rbind(front, c$at_min, c$at_max)
    else if (c$type %in% c("factor", "character")) front <- rbind(front, c$at[!is.na(c$at[, 1L]), , drop = FALSE])
  }
  if (!is.null(front)) ord[seq_len(nrow(front)), ] <- front
  per_node <- lapply(seq_along(rows), function(i) unique(ord[ord[, 1L] == i, 2L]))
  list(rows = per_node, order = ord, all = FALSE)
}

# The sample's data frame from the nodes' rows, in the sample's order,
# factor levels the agreed ones.
shard_sample_frame <- function(got, sel, levels) {
  if (isTRUE(sel$all)) {
    d <- do.call(rbind, got)
  } else {
    idx <- lapply(seq_along(got), function(i) match(sel$order[sel$order[, 1L] == i, 2L],
                                                    sel$rows[[i]]))
    pos <- unlist(lapply(seq_along(got), function(i) which(sel$order[, 1L] == i)))
    d <- do.call(rbind, lapply(seq_along(got), function(i) got[[i]][idx[[i]], , drop = FALSE]))
    d <- d[order(pos), , drop = FALSE]
  }
  for (v in names(levels)) d[[v]] <- factor(as.character(d[[v]]), levels = levels[[v]])
  rownames(d) <- NULL
  d
}

# What each node's gg_shard_open() takes: the leader's set-up without its
# rows, the model frame's formula and its weights and offset expressions,
# the agreed factor levels, the family, the device policy and settings.
shard_open_spec <- function(f, policy) {
  G <- f$G
  # (fREML's nodes keep the least row state on a device: gam()'s methods'
  # outer rows read every row's mu)
  list(G = node_setup(G), formula = without_frames(G$gp$fake.formula),
       weights = f$shards$weights, offset = f$shards$offset, levels = f$shards$levels,
       family = f$family, device = policy, control = unclass(f$control),
       lean_rows = identical(f$method, "fREML"))
}

# The nodes' checks of their rows combined and checked as fit_rows()
# checks one process's (the same errors); the fit's rows, prior weights'
# unit flag, var(y) and the weighted mean of y from the nodes' sums.
shard_rows_checked <- function(f, opened) {
  chk <- lapply(opened, `[[`, "chk")
  flag <- function(nm) sum(vapply(chk, `[[`, 0, nm))
  all <- c(w_bad = flag("w_bad"), w_positive = flag("w_positive"), y_bad = flag("y_bad"),
           y_min = min(vapply(chk, `[[`, 0, "y_min")), y_max = max(vapply(chk, `[[`, 0, "y_max")),
           o_nonzero = flag("o_nonzero"), o_bad = flag("o_bad"), w_not_one = flag("w_not_one"))
  check_rows(all)
  check_support(f$family, f$eng_fam, all)
  s <- do.call(rbind, lapply(opened, `[[`, "sums"))
  n <- sum(s[, "rows"])
  mean_y <- sum(s[, "sy"]) / n
  m_k <- ifelse(s[, "rows"] > 0, s[, "sy"] / s[, "rows"], 0)
  f$n <- n
  f$yvar <- if (n > 1) (sum(s[, "syy"]) + sum(s[, "rows"] * (m_k - mean_y)^2)) / (n - 1) else NA
  f$shards$mean_y <- sum(s[, "swy"]) / sum(s[, "sw"])
  f$shards$mean_rows_y <- mean_y
  f$shards$sw <- sum(s[, "sw"])
  f$unit_weights <- all[["w_not_one"]] == 0
  f$n_nonzero <- sum(s[, "nonzero"])
  invisible(f)
}

# The fitted object of a fit over shards left on the nodes: its n-vectors
# (y, prior and working weights, linear predictor, fitted values,
# residuals, leverages) are the set-up sample's rows, at the fit's
# coefficients; df.residual, deviance, null deviance and aic are every
# row's (src/engine/fit_rows.c's sums); r.sq's sums over every row are kept
# for summary().  Called before the coefficients go to the prediction
# parameterisation (the fit's X).
shard_finish <- function(fit, f, res) {
  G <- f$G
  X <- if (nrow(G$X) == nrow(G$mf)) G$X else full_model_matrix(G, G$mf, cores = 1L)
  family <- f$family
  beta <- res$coefficients
  off <- if (length(G$offset) == nrow(G$mf)) as.numeric(G$offset) else 0
  eta <- as.numeric(X %*% beta) + off
  mu <- family$linkinv(eta)
  y <- f$y
  pw <- f$w
  dmu <- family$mu.eta(eta)
  # (an extended family's working weights as bgam.fit's: EDeta2 / 2)
  efam <- inherits(family, "extended.family")
  w <- if (efam) 0.5 * family$Dd(y, mu, res$ef.theta, pw, 0)$EDmu2 * dmu^2 else
    ifelse(pw > 0, pw * dmu^2 / family$variance(mu), 0)
  d <- family$dev.resids(y, mu, pw)
  M <- res$Vp / res$scalars[["scale.vp"]]      # ((X'WX + S)^-1: Vp over its own scale)
  fit$linear.predictors <- eta
  fit$fitted.values <- mu
  fit$weights <- fit$wt <- w
  fit$residuals <- sign(y - mu) * sqrt(pmax(d, 0))
  fit$hat <- if (isTRUE(f$control$hat)) w * rowSums((X %*% M) * X)
  fit$y <- y
  fit$prior.weights <- pw
  # (the aic of families whose aic is a sum over rows: summed on the nodes)
  if (!efam && is.na(res$scalars[["aic"]]) &&
      (is_negbin(family) || grepl("^Tweedie", family$family))) {
    dev <- fit$sig2 * f$shards$sw
    fit$aic <- sum(unlist(f$ses$over_nodes(gg_shard_aic, family, dev))) + 2 * sum(fit$edf)
  }
  r <- do.call(rbind, f$ses$over_nodes(gg_shard_rsq, f$shards$mean_y))
  fit$shards <- list(rows = whole_count(f$n), sample_rows = nrow(G$mf), nodes = nrow(r),
                     rsq_sums = colSums(r), na_rows = f$shards$na_rows)
  class(fit) <- c("gam_gpu_shards", class(fit))
  fit
}

#' @export
summary.gam_gpu_shards <- function(object, ...) {
  # summary.gam() counts the rows as length(object$y) (residual.df, the
  # t and F tests) and computes r.sq from the rows it holds: here the
  # set-up sample's.  Its y is given every row's count for the call, and
  # r.sq and n are every row's (the nodes' sums).
  sh <- object$shards
  n <- sh$rows
  obj <- object
  class(obj) <- setdiff(class(obj), "gam_gpu_shards")
  obj$y <- structure(as.numeric(object$y), rows = n, class = "gamgpu_sample_rows")
  s <- mgcv::summary.gam(obj, ...)
  r <- sh$rsq_sums
  residual.df <- n - sum(object$edf)
  v <- function(s1, s2) (s2 - s1^2 / n) / (n - 1)
  if (!is.null(s$r.sq))
    s$r.sq <- 1 - v(r[2], r[3]) * (n - 1) / (v(r[4], r[5]) * residual.df)
  s$n <- whole_count(n)
  s
}

# A count of rows as R counts them: an integer where one holds it.
whole_count <- function(n) if (n <= .Machine$integer.max) as.integer(n) else n

#' @export
length.gamgpu_sample_rows <- function(x) attr(x, "rows")

#' @importFrom stats nobs
#' @export
nobs.gam_gpu_shards <- function(object, ...) object$shards$rows

# var.summary (plot.gam()'s and predict()'s defaults) with every row's
# minima, medians (shard_median()), maxima and modal levels in place of
# the set-up sample's (a matrix variable's column medians stay the
# sample's).
shard_var_summary <- function(vs, cols) {
  for (v in intersect(names(vs), names(cols))) {
    c <- cols[[v]]
    x <- vs[[v]]
    if (c$type == "numeric" && is.numeric(x) && length(x) == 3L) {
      x[1L] <- c$min
      if (!is.null(c$median)) x[2L] <- c$median
      x[3L] <- c$max
    } else if (is.factor(x) && c$type %in% c("factor", "character")) {
      x <- factor(names(c$counts)[which.max(c$counts)], levels = levels(x))
    }
    vs[[v]] <- x
  }
  vs
}
