# A PSOCK cluster of `nodes` processes on this machine with this
# session's library paths and gamgpu loaded (test-cluster-*.R).
node_cluster <- function(nodes = 2L) {
  cl <- parallel::makePSOCKcluster(nodes)
  parallel::clusterCall(cl, function(lib) {
    .libPaths(lib)
    suppressPackageStartupMessages(library(gamgpu))
    NULL
  }, .libPaths())
  cl
}

# What each node holds: its loaded shards (R/shards.R) and its sessions.
nodes_hold_nothing <- function(cl)
  parallel::clusterCall(cl, function() c(length(ls(gamgpu:::.node_shards)),
                                         length(ls(gamgpu:::.node_sessions))))

# Stops every node that still answers and closes the connection of any that
# does not (a killed node's socket would otherwise stay open until the
# garbage collector closes it with a warning).
stop_nodes <- function(cl) {
  for (i in seq_along(cl))
    if (inherits(try(parallel::stopCluster(cl[i]), silent = TRUE), "try-error"))
      try(close(cl[[i]]$con), silent = TRUE)
  invisible(NULL)
}
