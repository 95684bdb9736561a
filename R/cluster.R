# gam_gpu(cluster = cl): the rows spread over the nodes of an R parallel
# cluster (PSOCK, FORK, or any snow-style cluster parallel's functions
# take), each node's shard resident in its own model session for the
# whole fit -- X built there from the recipe, on the node's GPU when it has
# one, else by its CPU -- and the leader's engine run against them.
#
# The leader's session has a cluster backend (src/r/cluster_r.c): the
# engine's backend operations are dispatch(ops) here -- those without a
# result wait for the next that has one -- which runs them on every node
# (gg_node_ops(), src/r/node_r.c) with one parallel::clusterCall() and
# combines the last one's results: sums over the shards
# (in node order, so a fit is the same every time) for the deviance, X'WX,
# X'Wz and an extended family's theta sums; the shards' vectors in order
# for the n-vectors the fit gathers at its end (eta, mu, the working
# weights and response, the leverages).  Per iteration only p-sized
# numbers cross the network.  The leader runs the set-up (on bam()'s
# subsample of rows, as the lean set-up does) and the p x p REML work.
# gam()'s outer iteration (R/outer.R) calls the model session's operations
# by name (session_entry()): on a cluster each runs on every node's session
# (gg_node_session_op()) and outer_combine() sums the results, or joins
# the rows' vectors in node order.
#
# A node's error, a lost node (its connection closed) or an interrupt on
# the leader ends the fit with a classed error (gamgpu_cluster_node_error,
# gamgpu_cluster_node_lost, gamgpu_interrupted); the nodes that live close
# their sessions (their device memory freed) -- but for an interrupt while
# the nodes were answering, which leaves answers unread on the
# connections: the cluster is then asked nothing more and the error says
# to stop it (parallel::stopCluster() ends the nodes and their sessions).

# ---- on the nodes ---------------------------------------------------------

# The model sessions this process holds for leaders' fits, by key.
.node_sessions <- new.env(parent = emptyenv())

#' A cluster node's shard of a fit
#'
#' Run on a node by the leader (gam_gpu(cluster =)): the shard's model
#' matrix recipe from the leader's set-up, and its model session.  Not
#' for direct use.
#' @param key the fit's key.
#' @param G the leader's set-up without its rows (smooths, parametric terms).
#' @param mf,y,w,offset the shard's model frame rows, response, prior
#'   weights (`NULL`: every one 1) and offset (`NULL`: none).
#' @param device the leader's device policy ("auto", "off", "required").
#' @param control `gam_gpu_control()`'s settings.
#' @param unit_weights every prior weight is 1.
#' @param lean_rows the node's device keeps the least row state
#'   (`model_session()`; a shards node, whose leverages are the leader's).
#' @return list(rows, device, fallback, model_matrix, model_matrix_reason,
#'   weights_vector (whether the node keeps its prior weights as an
#'   n-vector), pid).
#' @keywords internal
#' @export
gg_node_open <- function(key, G, mf, y, w, offset, device, control, unit_weights,
                         lean_rows = FALSE) {
  gg_node_close(key)
  # (no Nagle delay on the replies: src/r/node_r.c)
  .Call(gg_tcp_nodelay_r)
  plan <- device_plan(device, "cluster node")
  # (a node's device failure mid-fit cannot be replayed on its CPU: where
  # the node has a usable device it is required for the whole fit)
  if (plan$mode == 1L) plan$mode <- if (isTRUE(.Call(gg_gpu_probe_r)$usable)) 2L else 0L
  # (unit prior weights stay NULL on a lean node whose device is required;
  # the CPU backend reads an n-vector of them)
  if (is.null(w) && !(plan$mode == 2L && lean_rows && unit_weights)) w <- rep(1, nrow(mf))
  threads <- min(setup_threads(nrow(mf)), control$nthreads)
  X <- model_matrix_plan(G, mf, threads = threads)
  reason <- NULL
  if (inherits(X, "gg_no_recipe")) {
    reason <- attr(X, "reason")
    X <- full_model_matrix(G, mf, cores = 1L)
    dimnames(X) <- NULL
    attr(X, "model.offset") <- NULL
    storage.mode(X) <- "double"
  }
  ses <- model_session(X, y, w, offset, plan, control, unit_weights = unit_weights,
                       lean_rows = lean_rows)
  .node_sessions[[key]] <- list(ses = ses, X = X, y = y, w = w, offset = offset,
                                threads = control$nthreads)
  info <- ses$info()
  list(rows = nrow(mf), device = info$device, fallback = info$fallback,
       model_matrix = if (is.null(reason)) "recipe" else "matrix",
       model_matrix_reason = if (is.null(reason)) "" else reason,
       weights_vector = !is.null(w), pid = Sys.getpid())
}

#' Backend operations on a cluster node's shard
#'
#' @param key the fit's key.
#' @param ops a list of operations, each list(op, arg, fam) as
#'   src/r/node_r.c takes them (the family as raw bytes), run in order.
#' @return the last operation's result on the shard.
#' @keywords internal
#' @export
gg_node_ops <- function(key, ops) {
  s <- node_session(key)
  out <- NULL
  for (o in ops) {
    node_fault(o$op)
    out <- if (identical(o$op, "none")) NULL else .Call(gg_node_op_r, s$ses$ptr, o$op, o$arg, o$fam)
  }
  out
}

# Tests: option gamgpu.node_fault = list(op =, action = "error", "exit" or
# "interrupt") makes this node fail at that operation, die, or send the
# leader (pid) an interrupt and answer a second later.
node_fault <- function(op) {
  fault <- getOption("gamgpu.node_fault")
  if (!is.list(fault) || !identical(fault$op, op)) return(invisible())
  if (identical(fault$action, "exit")) quit(save = "no", status = 1L, runLast = FALSE)
  if (identical(fault$action, "interrupt")) {
    options(gamgpu.node_fault = NULL)
    tools::pskill(fault$pid, tools::SIGINT)
    Sys.sleep(1)
  } else {
    gamgpu_abort("gamgpu_cluster_node_error", paste("injected fault at", op), call = NULL)
  }
}

#' Close a cluster node's shard of a fit
#'
#' @param key the fit's key.
#' @return TRUE, invisibly.
#' @keywords internal
#' @export
gg_node_close <- function(key) {
  s <- .node_sessions[[key]]
  if (!is.null(s)) {
    s$ses$close()
    rm(list = key, envir = .node_sessions)
  }
  invisible(TRUE)
}

# (What the leader sends the nodes are functions of this namespace, which
# serialize as a reference to it: a closure made in the leader's frames
# would carry those frames -- the shards' data -- to every node at every
# call.)
gg_node_open_args <- function(a) do.call(gg_node_open, a)

# This node's session of the fit `key` (gg_node_open()'s record: the
# session, X, the rows' y, w and offset, the threads), or a classed error.
node_session <- function(key) {
  s <- .node_sessions[[key]]
  if (is.null(s))
    gamgpu_abort("gamgpu_cluster_node_error",
                 "this node holds no shard of that fit (restarted, or closed)", call = NULL)
  s
}
gg_shard_open_args <- function(a) gg_shard_open(a$key, a$spec)

# Where this node's session computed the outer iteration's rows ("cpu",
# "cuda:0").
gg_node_rows_at <- function(key) .Call(gg_session_info_r, node_session(key)$ses$ptr)$rows

# One of the model session's operations of gam()'s outer iteration
# (session_entry()) on this node's session: args its arguments after the
# session, with this shard's rows of the row-sized ones.
gg_node_session_op <- function(args, key, name) {
  s <- node_session(key)
  node_fault(name)
  args <- lapply(args, function(a) if (inherits(a, "gamgpu_constant_rows"))
    rep(a$value, a$rows) else a)
  do.call(session_call, c(list(name, s$ses$ptr), args))
}

# This node's host name and physical cores.
gg_node_host <- function() list(host = Sys.info()[["nodename"]], cores = physical_cores())

# ---- on the leader --------------------------------------------------------

# The cluster argument checked: a cluster of R's parallel package, fit by
# a route whose row-wise work runs on the nodes: the engine's backend
# operations, or gam()'s outer iteration's session operations.
check_cluster <- function(cl, f) {
  if (!inherits(cl, "cluster") || !length(cl))
    gamgpu_abort("gamgpu_bad_input",
                 "'cluster' must be a cluster of R's parallel package (parallel::makeCluster())",
                 call = NULL)
  why <- if (!(f$route$name %in% c("fREML", "gcv", "outer", "efam_outer")))
    sprintf("method = \"%s\" is not fitted on a cluster: use method = \"fREML\"", f$method)
  else if (!is.null(f$ar)) "AR1 residuals (rho) are not fitted on a cluster"
  else if (!is.null(attr(f$y, "censor"))) "a censored response is not fitted on a cluster"
  if (!is.null(why))
    gamgpu_abort("gamgpu_unsupported_argument", paste0("cluster: ", why), call = NULL,
                 arguments = "cluster")
  invisible(cl)
}

# Each node's threads: the fit's nthreads, or its host's physical cores
# shared out among the cluster's nodes on that host, whichever is fewer
# (k nodes on one host, each with every core, would oversubscribe it k
# times).
node_threads <- function(hosts, nthreads) {
  h <- vapply(hosts, `[[`, "", "host")
  cores <- vapply(hosts, function(x) as.numeric(x$cores), 0)
  share <- pmax(1, floor(cores / as.numeric(table(h)[h])))
  share[is.na(share)] <- nthreads
  as.integer(pmin(nthreads, share))
}

# The leader's set-up without its rows: what a node's recipe takes.  (The
# terms' environment -- the caller's frame, with whatever it holds -- is
# not sent: the nodes evaluate the parametric terms' functions in their
# global environment.)
node_setup <- function(G)
  without_frames(list(smooth = G$smooth, nsdf = G$nsdf, pterms = G$pterms,
                      contrasts = G$contrasts, P = G$P, X = G$X[0L, , drop = FALSE]))

# x with every formula's and terms' environment (attribute .Environment)
# the global one, through lists and attributes.
without_frames <- function(x) {
  if (!is.null(attr(x, ".Environment"))) attr(x, ".Environment") <- globalenv()
  if (is.list(x) && !is.data.frame(x))
    for (i in seq_along(x)) if (!is.null(x[[i]])) x[[i]] <- without_frames(x[[i]])
  a <- attributes(x)
  for (nm in setdiff(names(a), c("names", "dim", "dimnames", "class", ".Environment")))
    if (is.list(a[[nm]]) || !is.null(attr(a[[nm]], ".Environment")))
      attr(x, nm) <- without_frames(a[[nm]])
  x
}

# A shard's rows of the model frame, without its terms (and their
# environment).
shard_frame <- function(mf, r) {
  x <- mf[r, , drop = FALSE]
  attr(x, "terms") <- NULL
  x
}

# A failure the cluster backend turns into its status (cluster_r.c).
cluster_failure <- function(class, message)
  structure(list(class = class, message = message), class = "gamgpu_cluster_failure")

broken_message <- paste(
  "interrupted while the cluster's nodes were answering: their answers are unread on",
  "its connections, so the cluster cannot be used again -- stop it",
  "(parallel::stopCluster(), which also frees the nodes' sessions) and make a new one")

# What a clusterCall()'s condition means: a node's own error, a lost
# node, or an interrupt (after which the cluster cannot be used).
cluster_condition <- function(e, op) {
  if (inherits(e, "interrupt"))
    return(cluster_failure("gamgpu_interrupted",
                           sprintf("during the cluster's %s, %s", op, broken_message)))
  msg <- conditionMessage(e)
  lost <- grepl("connection|reading from|writing to|closed", msg, ignore.case = TRUE) &&
    !grepl("node produced an error", msg, fixed = TRUE)
  cluster_failure(if (lost) "gamgpu_cluster_node_lost" else "gamgpu_cluster_node_error",
                  sprintf("cluster %s: %s", op,
                          if (lost) paste("a node was lost:", msg) else msg))
}

# The model session over the cluster's nodes for fit state f (device
# policy `policy`, which each node applies to its own devices): the rows
# split in contiguous shards, one per node, opened there; the leader's
# session (the same interface as model_session()'s) whose backend runs
# every operation on them.
cluster_session <- function(f, cl, policy, shards = NULL) {
  Gn <- node_setup(f$G)
  if (is.null(shards)) {
    k <- length(cl)
    n <- f$n
    k <- min(k, n)
    edge <- floor(seq(0, n, length.out = k + 1L))
    shard <- lapply(seq_len(k), function(i) (edge[i] + 1):edge[i + 1L])
    key <- sprintf("gamgpu-%d-%s", Sys.getpid(), paste(sample(c(letters, 0:9), 12, TRUE),
                                                      collapse = ""))
    rows_of <- function(v, r) if (is.null(v)) NULL else v[r]
    args <- lapply(shard, function(r)
      list(key = key, G = Gn, mf = shard_frame(f$G$mf, r), y = as.double(f$y[r]),
           w = as.double(f$w[r]), offset = rows_of(f$offset, r), device = policy,
           control = unclass(f$control), unit_weights = f$unit_weights))
    used <- cl[seq_along(shard)]
  } else {
    # (the rows the nodes loaded themselves: R/shards.R)
    key <- shards$key
    used <- shards$nodes
    n <- shards$n
  }
  .Call(gg_tcp_nodelay_r)
  close_nodes <- function() {
    if (broken) return(invisible())
    # (node by node: a lost node does not keep the others from closing)
    for (i in seq_along(used))
      tryCatch(parallel::clusterCall(used[i], gg_node_close, key),
               error = function(e) NULL, interrupt = function(e) NULL)
  }
  # (an interrupt while the nodes answer leaves answers unread on their
  # connections, which every later call would read as its own: the
  # cluster is then not asked anything more, and the error says to stop it)
  broken <- FALSE
  # (each node's threads: the nodes on one host share its cores)
  hosts <- tryCatch(parallel::clusterCall(used, gg_node_host), error = function(e) e,
                    interrupt = function(e) e)
  opened <- if (inherits(hosts, "condition")) hosts else {
    threads <- node_threads(hosts, f$control$nthreads)
    if (is.null(shards)) {
      for (i in seq_along(args)) args[[i]]$control$nthreads <- threads[i]
    } else {
      spec <- shard_open_spec(f, policy)
      args <- lapply(threads, function(t) {
        spec$control$nthreads <- t
        list(key = key, spec = spec)
      })
    }
    tryCatch(parallel::clusterApply(used, args, if (is.null(shards)) gg_node_open_args
                                                else gg_shard_open_args),
             error = function(e) e, interrupt = function(e) e)
  }
  if (inherits(opened, "condition")) {
    broken <- inherits(opened, "interrupt")
    if (broken && !is.null(shards)) shards$state$broken <- TRUE
    if (!broken) close_nodes()
    fl <- cluster_condition(opened, "set-up on the nodes")
    gamgpu_abort(fl$class, fl$message, call = NULL)
  }
  if (!is.null(shards)) {
    shards$state$opened <- TRUE           # (gg_shard_open() let the loaded shards go)
    tryCatch(shard_rows_checked(f, opened), error = function(e) {
      close_nodes()
      stop(e)
    })
  }
  nodes <- data.frame(node = seq_along(opened),
                      host = vapply(hosts, `[[`, "", "host"), threads = threads,
                      rows = vapply(opened, function(o) as.numeric(o$rows), 0),
                      device = vapply(opened, function(o) o$device, ""),
                      model_matrix = vapply(opened, function(o) o$model_matrix, ""),
                      model_matrix_reason = vapply(opened, function(o) o$model_matrix_reason, ""),
                      weights_vector = vapply(opened, function(o) isTRUE(o$weights_vector), NA),
                      pid = vapply(opened, function(o) as.integer(o$pid), 0L),
                      stringsAsFactors = FALSE)
  calls <- 0
  bytes <- 0
  dispatch <- function(ops) {
    calls <<- calls + 1
    op <- ops[[length(ops)]]$op
    if (broken) return(cluster_failure("gamgpu_cluster_broken", broken_message))
    res <- tryCatch(parallel::clusterCall(used, gg_node_ops, key, ops),
                    error = function(e) e, interrupt = function(e) e)
    if (inherits(res, "condition")) {
      broken <<- inherits(res, "interrupt")
      if (broken && !is.null(shards)) shards$state$broken <- TRUE
      return(cluster_condition(res, op))
    }
    sent <- sum(vapply(ops, function(o) length(o$arg) * 8 + length(o$fam), 0))
    bytes <<- bytes + length(used) * sent + wire_bytes(res)
    switch(op,
           row_state = , ef_sums = Reduce(`+`, res),
           gram = lapply(1:3, function(j) Reduce(`+`, lapply(res, `[[`, j))),
           leverage = , fetch = unlist(res, use.names = FALSE),
           row_sums = {
             m <- matrix(unlist(res, use.names = FALSE), 3L)
             x <- m[3L, !is.na(m[3L, ])]
             c(sum(m[1L, ]), sum(m[2L, ]), if (length(x)) x[1L] else NaN)
           },
           NULL)
  }
  # gam()'s outer iteration's session operations (R/outer.R: outer_session())
  # on every node's session, combined as outer_combine() says; an argument
  # with a value per row goes to each node as its shard's rows
  # (each node's rows as first and last; never n indices: with shards the
  # leader holds no n-vector)
  last <- cumsum(as.numeric(nodes$rows))
  first <- last - nodes$rows + 1
  outer_used <- FALSE
  op <- function(name, ...) {
    a <- list(...)
    per_row <- switch(name, gram = 1:2, leverage = 1L, mul = if (isTRUE(a[[2L]])) 1L,
                      integer())
    for (j in per_row) {
      if (is_constant(a[[j]])) a[[j]] <- constant_rows(a[[j]][[1L]])
      # (shards: the leader holds no row's data to send)
      if (!is.null(shards) && !inherits(a[[j]], "gamgpu_constant_rows"))
        gamgpu_abort("gamgpu_internal_error", sprintf("%s: a row vector on shards' leader", name),
                     call = NULL)
    }
    args <- lapply(seq_along(used), function(i) {
      for (j in per_row) a[j] <- list(node_rows(a[[j]], first[i], last[i]))
      a
    })
    calls <<- calls + 1
    outer_used <<- TRUE
    if (broken) gamgpu_abort("gamgpu_cluster_broken", broken_message, call = NULL)
    res <- tryCatch(parallel::clusterApply(used, args, gg_node_session_op, key, name),
                    error = function(e) e, interrupt = function(e) e)
    if (inherits(res, "condition")) {
      broken <<- inherits(res, "interrupt")
      if (broken && !is.null(shards)) shards$state$broken <- TRUE
      fl <- cluster_condition(res, name)
      gamgpu_abort(fl$class, fl$message, call = NULL)
    }
    bytes <<- bytes + wire_bytes(args) + wire_bytes(res)
    outer_combine(res, rows = name == "leverage" || (name == "mul" && !isTRUE(a[[2L]])))
  }
  load <- list(cluster = dispatch, p = f$p, unit_weights = as.integer(f$unit_weights))
  ptr <- tryCatch(if (is.null(shards))
                    .Call(gg_session_open_r, NULL, y_double(f$y), as.double(f$w),
                          if (is.null(f$offset)) NULL else as.double(f$offset), load,
                          unclass(f$control))
                  else .Call(gg_session_open_r, NULL, NULL, NULL, NULL, c(load, rows = n),
                             unclass(f$control)),
                  error = function(e) { close_nodes(); stop(e) })
  closed <- FALSE
  # (rows left on the nodes: r.sq's and an aic's sums over them)
  over_nodes <- function(fun, ...) {
    res <- tryCatch(parallel::clusterCall(used, fun, key, ...), error = function(e) e,
                    interrupt = function(e) e)
    if (inherits(res, "condition")) {
      broken <<- inherits(res, "interrupt")
      if (broken && !is.null(shards)) shards$state$broken <- TRUE
      fl <- cluster_condition(res, "summaries")
      gamgpu_abort(fl$class, fl$message, call = NULL)
    }
    res
  }
  list(ptr = ptr, n = n, p = f$p, nodes = nodes, over_nodes = over_nodes,
       op = op, rows_on_nodes = TRUE,
       # (the leader's session's, with where the nodes computed the outer
       # iteration's rows: "cluster: cpu", "cluster: cuda:0", ...)
       info = function() {
         i <- .Call(gg_session_info_r, ptr)
         if (outer_used && !broken) {
           r <- tryCatch(unlist(parallel::clusterCall(used, gg_node_rows_at, key)),
                         error = function(e) NULL)
           if (length(r)) i$rows <- paste0("cluster: ", paste(unique(r), collapse = ", "))
         }
         i
       },
       traffic = function() c(calls = calls, bytes = bytes),
       close = function() {
         if (closed) return(invisible())
         closed <<- TRUE
         .Call(gg_session_close_r, ptr)
         close_nodes()
         invisible()
       })
}

# A row-sized argument's rows first to last (a node's shard); a vector of
# one value travels as that value and the node's count of rows
# (gg_node_session_op() makes the vector).
node_rows <- function(x, first, last) {
  if (inherits(x, "gamgpu_constant_rows")) {
    x$rows <- last - first + 1
    x
  } else if (is.matrix(x)) x[first:last, , drop = FALSE] else x[first:last]
}
# (the first, second and last rows decide most vectors without a pass)
is_constant <- function(x)
  is.double(x) && !is.matrix(x) && length(x) > 1L && !is.na(x[[1L]]) &&
    isTRUE(x[[2L]] == x[[1L]]) && isTRUE(x[[length(x)]] == x[[1L]]) &&
    isTRUE(all(x == x[[1L]]))
constant_rows <- function(value) structure(list(value = value, rows = NA), class = "gamgpu_constant_rows")

# The bytes of the numbers in x (a result or the arguments), 8 a number.
wire_bytes <- function(x) if (is.list(x)) sum(vapply(x, wire_bytes, 0)) else 8 * length(x)

# The nodes' results of a session operation combined: NULL where a node's
# is NULL (Newton's step with a weight that is not positive); the shards'
# rows in node order for a result with a value per row (rows: leverages,
# X B; the rows' vectors by name), else the sum over the shards, in node
# order (a fit is the same every time).
outer_combine <- function(res, rows = FALSE) {
  if (any(vapply(res, is.null, NA))) return(NULL)
  join <- function(xs, by_row)
    if (!by_row) Reduce(`+`, xs)
    else if (is.matrix(xs[[1L]])) do.call(rbind, xs) else unlist(xs, use.names = FALSE)
  if (!is.list(res[[1L]])) return(join(res, rows))
  per_row <- attr(res[[1L]], "row_vectors")   # (src/r/session_r.c names them)
  out <- res[[1L]]
  for (nm in names(out))
    if (!is.null(out[[nm]])) out[nm] <- list(join(lapply(res, `[[`, nm), nm %in% per_row))
  out
}

#' A parallel cluster of one node per GPU
#'
#' Starts one PSOCK node (\code{parallel::makePSOCKcluster()}) on this host
#' for each GPU, each node seeing its own GPU alone (its
#' \code{CUDA_VISIBLE_DEVICES} set before gamgpu loads there), with this
#' session's library paths and gamgpu's namespace loaded: for
#' \code{gam_gpu(..., cluster = cl)} on a host with several GPUs.
#'
#' @param gpus the device ordinals to use (0-based, as \code{gpu_info()}
#'   lists them); \code{NULL} for every usable one.
#' @param ... passed to \code{parallel::makePSOCKcluster()}.
#' @return a cluster of \code{length(gpus)} nodes (stop it with
#'   \code{parallel::stopCluster()}), its attribute \code{"gpus"} the
#'   ordinals.
#' @examples
#' \dontrun{
#' cl <- gpu_cluster()
#' fit <- gam_gpu(y ~ s(x0) + s(x1), data = d, cluster = cl)
#' fit$device$cluster$nodes
#' parallel::stopCluster(cl)
#' }
#' @export
gpu_cluster <- function(gpus = NULL, ...) {
  info <- gpu_info("auto")
  if (!isTRUE(info$usable))
    gamgpu_abort("gamgpu_device_unavailable",
                 paste("gpu_cluster(): no GPU is usable here:", info$reason), call = NULL)
  have <- seq_len(NROW(info$devices)) - 1L
  if (is.null(gpus)) gpus <- have
  if (!is.numeric(gpus) || !length(gpus) || anyNA(gpus) || any(!gpus %in% have) ||
      anyDuplicated(gpus))
    gamgpu_abort("gamgpu_bad_input",
                 sprintf("gpus must be distinct device ordinals among %s",
                         paste(have, collapse = ", ")), call = NULL)
  cl <- parallel::makePSOCKcluster(length(gpus), ...)
  ok <- tryCatch({
    # (a function of the global environment: unserializing it on a node
    # loads nothing before the node's device is chosen)
    bind <- function(gpu, lib) {
      Sys.setenv(CUDA_VISIBLE_DEVICES = as.character(gpu))
      .libPaths(lib)
      isTRUE(gamgpu::gpu_info("auto")$usable)       # (loads gamgpu's namespace)
    }
    environment(bind) <- globalenv()
    unlist(parallel::clusterApply(cl, as.integer(gpus), bind, .libPaths()))
  }, error = function(e) { parallel::stopCluster(cl); stop(e) })
  if (!all(ok)) {
    parallel::stopCluster(cl)
    gamgpu_abort("gamgpu_device_unavailable",
                 sprintf("gpu_cluster(): GPU %s not usable on its node",
                         paste(gpus[!ok], collapse = ", ")), call = NULL)
  }
  attr(cl, "gpus") <- as.integer(gpus)
  cl
}
