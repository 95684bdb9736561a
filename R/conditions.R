# Classed conditions.  Every error gamgpu raises, from R or from C (through
# errors_r.c), inherits from "gamgpu_error" and carries a specific class such
# as "gamgpu_device_unavailable", so callers can catch exactly what they mean:
#   tryCatch(fit, gamgpu_device_unavailable = function(e) ...)

gamgpu_condition <- function(message, class, type = c("error", "warning"),
                             call = NULL, ...) {
  type <- match.arg(type)
  structure(
    class = unique(c(class, paste0("gamgpu_", type), type, "condition")),
    list(message = message, call = call, ...)
  )
}

# Raise a classed error; `call` defaults to the caller of the function that
# called gamgpu_abort(), which is the user-facing function in practice.
gamgpu_abort <- function(class, message, call = sys.call(-1), ...) {
  stop(gamgpu_condition(message, class, "error", call = call, ...))
}

gamgpu_warn <- function(class, message, call = sys.call(-1), ...) {
  warning(gamgpu_condition(message, class, "warning", call = call, ...))
}

# Whether condition e is a device's failure (the classes src/util/status.c's
# gg_device_failure() recognises).
device_error <- function(e)
  any(startsWith(class(e), "gamgpu_device_")) ||
    inherits(e, c("gamgpu_kernel_compile", "gamgpu_nvrtc_unavailable"))

# Signal a classed message (class, "gamgpu_message", "message", "condition").
gamgpu_inform <- function(class, message) {
  base::message(structure(class = c(class, "gamgpu_message", "message", "condition"),
                          list(message = paste0(message, "\n"), call = NULL)))
}
