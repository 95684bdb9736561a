# Load and unload hooks.  The runtime handle is an external pointer whose
# finalizer (registered with onexit = TRUE) frees every device resource, so
# device memory is returned when the package unloads and when R exits.  The
# finalizer is an R closure that calls into C only while the DLL is loaded
# (see gg_runtime_attach in src/r/device_r.c for why).

.gamgpu_state <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  kernels <- system.file("kernels", package = pkgname, lib.loc = libname)
  include <- system.file("include", package = pkgname, lib.loc = libname)
  runtime <- .Call(gg_runtime_attach, kernels, include)
  reg.finalizer(runtime, runtime_finalizer, onexit = TRUE)
  .gamgpu_state$runtime <- runtime
  .gamgpu_state$dll_loaded <- TRUE
  invisible()
}

runtime_finalizer <- function(runtime) {
  if (isTRUE(.gamgpu_state$dll_loaded))
    .Call(gg_runtime_detach, runtime)
  invisible()
}

.onUnload <- function(libpath) {
  if (!is.null(.gamgpu_state$runtime))
    .Call(gg_runtime_detach, .gamgpu_state$runtime)
  .gamgpu_state$runtime <- NULL
  .gamgpu_state$dll_loaded <- FALSE
  library.dynam.unload("gamgpu", libpath)
}
