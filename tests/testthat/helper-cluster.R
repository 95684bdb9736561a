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
