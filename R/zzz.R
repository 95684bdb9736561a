# Load and unload hooks.  The runtime handle is an external pointer whose
# finalizer (registered with onexit = TRUE) frees every device resource, so
# device memory is returned when the package unloads and when R exits.

.gamgpu_state <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  kernels <- system.file("kernels", package = pkgname, lib.loc = libname)
  .gamgpu_state$runtime <- .Call(gg_runtime_attach, kernels)
  invisible()
}

.onUnload <- function(libpath) {
  if (!is.null(.gamgpu_state$runtime)) {
    .Call(gg_runtime_detach, .gamgpu_state$runtime)
    .gamgpu_state$runtime <- NULL
  }
  library.dynam.unload("gamgpu", libpath)
}
