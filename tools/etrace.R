# tools/etrace.R -- where a fit's wall time goes, function by function:
# every closure of gamgpu's namespace (and the mgcv functions named) gets
# its elapsed seconds and calls counted, inclusive of what it calls.  Rprof
# samples CPU time, which misses the waits on the device and the worker
# threads' work; this clocks wall time.  Source it, then
#
#   etrace_install(c("gamgpu", "mgcv"), only = list(mgcv = c("gam.setup", "magic")))
#   etrace_reset(); fit <- gamgpu::gam_gpu(...); etrace_report(40)
#
# A function that calls on.exit() without add = TRUE loses its count;
# gam_gpu() itself is called through the package's exported copy (not
# counted).  For profiling sessions only: it rewrites the namespace.
etrace_acc <- new.env()
etrace_install <- function(pkgs = "gamgpu", only = list()) {
  for (pkg in pkgs) {
    ns <- asNamespace(pkg)
    for (nm in if (is.null(only[[pkg]])) ls(ns, all.names = TRUE) else only[[pkg]]) {
      f <- get(nm, envir = ns)
      if (!is.function(f) || is.primitive(f)) next
      key <- paste0(pkg, "::", nm)
      body(f) <- bquote({
        .et0 <- proc.time()[[3]]
        on.exit(local({
          a <- get("etrace_acc", envir = globalenv())
          v <- a[[.(key)]]
          if (is.null(v)) v <- c(0, 0)
          a[[.(key)]] <- v + c(proc.time()[[3]] - .et0, 1)
        }), add = TRUE)
        .(body(f))
      })
      unlockBinding(nm, ns)
      assign(nm, f, envir = ns)
      lockBinding(nm, ns)
    }
  }
}
etrace_reset <- function() rm(list = ls(etrace_acc), envir = etrace_acc)
etrace_report <- function(top = 60, per = 1) {
  k <- ls(etrace_acc)
  v <- do.call(rbind, lapply(k, function(x) etrace_acc[[x]]))
  d <- data.frame(fun = k, seconds = v[, 1] / per, calls = v[, 2] / per)
  d <- d[order(-d$seconds), ]
  print(utils::head(d, top), row.names = FALSE, digits = 3)
  invisible(d)
}
