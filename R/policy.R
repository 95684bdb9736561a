# The device policy: which path a computation may take.
#   "auto"     the device when one is usable, else the CPU -- and the
#              fallback is counted in gpu_telemetry() with its reason;
#   "off"      the CPU, never touching the driver;
#   "required" the device, or an error of class gamgpu_device_unavailable.

.policies <- c("auto", "off", "required")

#' Get or set the device policy
#'
#' The policy decides where gamgpu's heavy work runs. It is looked up, in
#' order, from the `device` argument of a function, the option
#' `gamgpu.device` (which `gpu_policy(value)` sets), the environment
#' variable `GAMGPU_DEVICE`, and finally defaults to `"auto"`.
#'
#' * `"auto"`: use a GPU when one is usable; otherwise run on the CPU and
#'   record the fallback and its reason in [gpu_telemetry()].
#' * `"off"`: always the CPU; the CUDA driver is never loaded.
#' * `"required"`: always a GPU, or an error of class
#'   `gamgpu_device_unavailable` whose message says why none is usable.
#'
#' @param policy One of `"auto"`, `"off"`, `"required"`; `NULL` removes the
#'   option so the environment variable or the default applies again.
#'   Missing: report the current policy.
#' @return The current policy (a string) when `policy` is missing;
#'   otherwise, invisibly, the policy in force before the call.
#' @examples
#' gpu_policy()
#' old <- gpu_policy("off")
#' gpu_policy()
#' gpu_policy(old)
#' @export
gpu_policy <- function(policy) {
  if (missing(policy))
    return(current_policy())
  old <- current_policy()
  options(gamgpu.device = if (is.null(policy)) NULL else check_policy(policy, "policy"))
  invisible(old)
}

current_policy <- function() {
  opt <- getOption("gamgpu.device")
  if (!is.null(opt))
    return(check_policy(opt, "option gamgpu.device"))
  env <- Sys.getenv("GAMGPU_DEVICE", "")
  if (nzchar(env))
    return(check_policy(env, "environment variable GAMGPU_DEVICE"))
  "auto"
}

check_policy <- function(policy, what = "device") {
  if (!is.character(policy) || length(policy) != 1L || is.na(policy) ||
      !(tolower(policy) %in% .policies)) {
    shown <- if (is.character(policy) && length(policy) == 1L) dQuote(policy, FALSE)
             else paste0("a ", class(policy)[1L], " of length ", length(policy))
    gamgpu_abort("gamgpu_bad_policy",
                 sprintf("%s must be one of \"auto\", \"off\", \"required\", not %s",
                         what, shown), call = NULL)
  }
  tolower(policy)
}

# How a call should run, from its policy: list(mode, ordinal) where mode is
# 0 (CPU), 1 (device, recorded fallback to the CPU) or 2 (device or error).
# "required" is checked here so its error names the policy and the reason.
device_plan <- function(device, backend) {
  policy <- check_policy(device)
  ordinal <- 0L
  if (policy == "off")
    return(list(mode = 0L, ordinal = ordinal))
  sync_memory_budget()
  if (policy == "required") {
    probe <- .Call(gg_gpu_probe_r)
    if (!probe$usable)
      gamgpu_abort("gamgpu_device_unavailable",
                   sprintf("device = \"required\" but no GPU is usable for %s: %s",
                           backend, probe$reason), call = NULL)
    return(list(mode = 2L, ordinal = ordinal))
  }
  list(mode = 1L, ordinal = ordinal)
}

# Device-memory cap for the arenas, from option gamgpu.device_memory
# (bytes, or a string such as "2GB", "512MiB"); NULL or 0 = no cap.
parse_bytes <- function(x) {
  if (is.null(x)) return(0)
  if (is.numeric(x) && length(x) == 1L && !is.na(x) && x >= 0) return(as.double(x))
  m <- if (is.character(x) && length(x) == 1L)
    regmatches(toupper(x), regexec("^\\s*([0-9.]+)\\s*([KMGT]?I?B?)\\s*$", toupper(x)))[[1L]]
  if (length(m) != 3L || is.na(suppressWarnings(as.numeric(m[2L]))))
    gamgpu_abort("gamgpu_bad_input",
                 sprintf("option gamgpu.device_memory must be bytes or a size such as \"2GB\", not %s",
                         paste(format(x), collapse = " ")), call = NULL)
  unit <- substr(m[3L], 1L, 1L)
  scale <- c(K = 1024, M = 1024^2, G = 1024^3, T = 1024^4)[unit]
  if (is.na(scale)) scale <- 1
  as.numeric(m[2L]) * unname(scale)
}

sync_memory_budget <- function() {
  bytes <- parse_bytes(getOption("gamgpu.device_memory"))
  if (!identical(.gamgpu_state$budget, bytes)) {
    .Call(gg_set_memory_budget_r, bytes)
    .gamgpu_state$budget <- bytes
  }
  invisible(bytes)
}
