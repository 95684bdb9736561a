# The general families' row passes under a chosen product route
# (options(gamgpu.cpu_gram): "gamgpu" or "blas") and thread count, as a
# fit sets them (R/general_family.R), restored when the calling test ends.
local_general_rows <- function(route = "gamgpu", env = parent.frame()) {
  state <- gamgpu:::.gamgpu_state
  old <- options(gamgpu.cpu_gram = route)
  gamgpu:::cpu_gram_option()
  restore <- function() {
    state$general_threads <- NULL
    options(old)
    gamgpu:::cpu_gram_option()
  }
  do.call(on.exit, list(substitute(restore()), add = TRUE), envir = env)
  invisible(state)
}
