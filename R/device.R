# The device runtime seen from R: what is usable and why not, device memory
# held by the arena, compiled kernels, telemetry and the compile check.

#' Is a GPU usable, and what is it?
#'
#' Probes the CUDA driver (loading `libcuda.so.1` and NVRTC at run time) and
#' reports whether a device is usable and, if not, exactly why: built
#' without CUDA, the driver library not loadable (with the loader's
#' message), `cuInit` failing, no device, NVRTC not loadable, or a device
#' whose architecture the NVRTC at hand no longer compiles for (NVRTC 13
#' dropped Volta's compute_70 and Pascal's compute_60). With policy
#' `"off"` nothing is probed.
#'
#' @param device The device policy, see [gpu_policy()].
#' @return A list of class `gamgpu_gpu_info`: `built_with_cuda`, `toolkit`
#'   and `toolkit_version` (what configure found), `probed` (whether this
#'   R process has probed the driver, by this call or an earlier one: a
#'   process that only ever used `"off"` reports `FALSE` and has not loaded
#'   `libcuda`), `usable`, `reason` and
#'   `reason_class` when not usable, `driver_version`, `nvrtc_version`,
#'   `nvrtc_library`, `nvrtc_archs` (the virtual architectures NVRTC
#'   compiles for, as 90 for compute_90; empty when not probed or NVRTC
#'   cannot list them), and `devices`, a data frame with one row per device
#'   (ordinal, name, compute capability, multiprocessors, total and free
#'   memory in bytes, the NVRTC architecture kernels are compiled for);
#'   `blas`, the BLAS library R uses (its path), and `cpu_gram`, which
#'   weighted Gram product the CPU engine takes by size class of the number
#'   of columns: under \code{options(gamgpu.cpu_gram = "auto")}, the
#'   default, whichever of R's BLAS and gamgpu's own blocked kernel (over
#'   the fit's threads) is faster here, timed once per size class on the
#'   first product of at least 16384 rows (smaller products take the
#'   BLAS), with what was timed so far; \code{"blas"} or \code{"gamgpu"}
#'   take one of them always.
#' @examples
#' gpu_info()
#' @export
gpu_info <- function(device = gpu_policy()) {
  policy <- check_policy(device)
  info <- .Call(gg_gpu_info_r, policy != "off")
  info$policy <- policy
  info$blas <- r_blas()
  info$cpu_gram <- cpu_gram_table()
  if (policy == "off") {
    info$reason <- "device policy is \"off\": the driver was not probed"
    info$reason_class <- "gamgpu_device_off"
  }
  structure(info, class = "gamgpu_gpu_info")
}

# The BLAS library R uses (its file), or "" where R does not say.
r_blas <- function() {
  b <- tryCatch(unname(extSoftVersion()["BLAS"]), error = function(e) NA_character_)
  if (is.na(b)) "" else b
}

# options(gamgpu.cpu_gram =): which weighted Gram product the CPU takes,
# "auto" (the default: gamgpu's kernel where it is faster than R's BLAS,
# timed here), "blas" (R's) or "gamgpu"; applied before a fit (a change
# forgets the timings).
cpu_gram_option <- function() {
  o <- mode_option("gamgpu.cpu_gram", c(auto = 0L, gamgpu = 1L, blas = 2L),
                   function(m) if (is.null(m)) .Call(gg_cpu_gram_mode_r, NULL, NULL)$mode
                               else .Call(gg_cpu_gram_mode_r, m, NULL))
  cpu_x_option()
  invisible(o)
}

# The value of option `name`, one of names(modes) (the first by default),
# checked and handed to the C side through mode(): mode(NULL) reads the
# current mode, mode(m) sets it.
mode_option <- function(name, modes, mode) {
  o <- getOption(name, names(modes)[1L])
  if (!is.character(o) || length(o) != 1L || !(o %in% names(modes))) {
    q <- paste0("\"", names(modes), "\"")
    gamgpu_abort("gamgpu_bad_input",
                 sprintf("option %s must be %s or %s", name,
                         paste(q[-length(q)], collapse = ", "), q[length(q)]),
                 call = NULL)
  }
  if (mode(NULL) != modes[[o]]) mode(modes[[o]])
  o
}

# options(gamgpu.cpu_x =): how the CPU engine holds a model matrix given as
# a recipe (src/cpu/xsparse.h): "auto" (the default: as sparse rows times a
# fixed map where every basis is local -- cr, cc, ps/bs, cp, factors,
# linear terms and their tensor products -- the fit has at least 50000
# rows and the rows' entries are few against the columns; else built
# dense), "sparse" (wherever the bases are local) or "dense".
cpu_x_option <- function()
  invisible(mode_option("gamgpu.cpu_x", c(auto = 0L, sparse = 1L, dense = 2L),
                        function(m) .Call(gg_xsparse_mode_r, m)))

# The CPU engine's Gram products by size class of p (src/cpu/gram_cpu.c), the
# mode (options(gamgpu.cpu_gram)) as its attribute "mode".
cpu_gram_table <- function() {
  m <- .Call(gg_cpu_gram_mode_r, NULL, NULL)
  structure(data.frame(p = c("< 32", "< 128", "< 512", ">= 512"),
                       product = c("not timed yet", "gamgpu's", "BLAS")[
                         if (m$mode == 0L) m$choice + 1L else rep(m$mode + 1L, 4)],
                       own_seconds = m$own_seconds, blas_seconds = m$blas_seconds,
                       stringsAsFactors = FALSE),
            mode = c("auto", "gamgpu", "blas")[m$mode + 1L])
}

# fit$device$cpu_gram of a CPU fit with p columns: which product its Gram
# steps took, and R's BLAS.
cpu_gram_note <- function(p) {
  m <- .Call(gg_cpu_gram_mode_r, NULL, as.integer(p))
  cls <- m$class
  ch <- if (m$mode == 0L) m$choice[cls] else m$mode
  blas <- r_blas()
  blas <- if (nzchar(blas)) sprintf("R's BLAS (%s)", blas) else "R's BLAS"
  switch(ch + 1L,
         sprintf("%s: no product was large enough to time gamgpu's kernel against it", blas),
         sprintf("gamgpu's own kernel%s", if (m$mode == 0L)
           sprintf(", faster here than %s (%.3g s against %.3g s on 8192 rows)", blas,
                   m$own_seconds[cls], m$blas_seconds[cls]) else " (asked for)"),
         sprintf("%s%s", blas, if (m$mode == 0L)
           sprintf(", faster here than gamgpu's kernel (%.3g s against %.3g s on 8192 rows)",
                   m$blas_seconds[cls], m$own_seconds[cls]) else
             " (options(gamgpu.cpu_gram = \"gamgpu\") takes gamgpu's own kernel)"))
}

format_bytes <- function(x) {
  units <- c("B", "KiB", "MiB", "GiB", "TiB")
  vapply(x, function(b) {
    if (is.na(b)) return("NA")
    u <- 1L
    while (b >= 1024 && u < length(units)) { b <- b / 1024; u <- u + 1L }
    if (u == 1L) sprintf("%.0f %s", b, units[u]) else sprintf("%.1f %s", b, units[u])
  }, "")
}

#' @export
print.gamgpu_gpu_info <- function(x, ...) {
  cat("gamgpu device runtime\n")
  cat("  build:   ", if (x$built_with_cuda)
        sprintf("CUDA (toolkit %s, CUDA %s)", x$toolkit, x$toolkit_version)
      else "CPU only", "\n", sep = "")
  cat("  policy:  ", x$policy, "\n", sep = "")
  if (nzchar(x$blas)) cat("  BLAS:    ", x$blas, "\n", sep = "")
  cat("  CPU Gram products: ",
      switch(attr(x$cpu_gram, "mode"),
             auto = "\"auto\": gamgpu's kernel where faster than the BLAS",
             gamgpu = "gamgpu's kernel", blas = "R's BLAS"),
      " (options(gamgpu.cpu_gram))\n", sep = "")
  if (nzchar(x$driver_version))
    cat("  driver:  CUDA ", x$driver_version, "\n", sep = "")
  if (nzchar(x$nvrtc_version)) {
    cat("  NVRTC:   ", x$nvrtc_version, " (", x$nvrtc_library, ")\n", sep = "")
    if (length(x$nvrtc_archs))
      cat("           compiles for compute_", min(x$nvrtc_archs), " to compute_",
          max(x$nvrtc_archs), "\n", sep = "")
  } else if (nzchar(x$nvrtc_problem))
    cat("  NVRTC:   not loadable: ", x$nvrtc_problem, "\n", sep = "")
  if (x$usable) {
    cat("  usable:  yes\n")
    d <- x$devices
    for (i in seq_len(nrow(d)))
      cat(sprintf("  [%d] %s, compute %s (%s), %d SMs, %s total, %s free\n",
                  d$ordinal[i], d$name[i], d$compute_capability[i], d$nvrtc_arch[i],
                  d$multiprocessors[i], format_bytes(d$total_memory[i]),
                  format_bytes(d$free_memory[i])))
  } else {
    cat("  usable:  no\n")
    cat(strwrap(x$reason, indent = 4, exdent = 4, prefix = ""), sep = "\n")
  }
  invisible(x)
}

#' Device memory held by the arena
#'
#' Each device has an arena of double-precision buffers in size classes (a
#' request for `n` doubles is served from a buffer of
#' `2^ceiling(log2(max(n, 1)))` doubles up to 2^20, beyond that of the next
#' eighth of an octave: a large buffer is at most an eighth larger than
#' asked). Released buffers stay cached for the next request of the same
#' class, so a repeated fit allocates no new memory.
#' `gpu_arena_release()` frees the cached buffers.
#'
#' @param ordinal The device.
#' @return `gpu_arena()`: a data frame with one row per size class ever used:
#'   `bucket` (the size class), `elements` (doubles per buffer), `cached`
#'   and `in_use` (buffers), `bytes_cached`, `bytes_in_use`, `hits`
#'   (requests served from the cache) and `misses` (fresh allocations); the
#'   totals are attributes `bytes_cached` and `bytes_in_use`, and attribute
#'   `device` names the device (`"cuda:0"`). Empty, with `device` `NA`,
#'   when no device is usable or the policy is `"off"`: its zero bytes then
#'   say nothing about a device.
#'   `gpu_arena_release()`: invisibly, the bytes freed.
#' @examples
#' gpu_arena()
#' gpu_arena_release()
#' @export
gpu_arena <- function(ordinal = 0L) {
  stats <- if (current_policy() != "off") .Call(gg_arena_stats_r, as.integer(ordinal))
  device <- if (is.null(stats)) NA_character_ else sprintf("cuda:%d", as.integer(ordinal))
  if (is.null(stats))
    stats <- data.frame(bucket = integer(), elements = double(), cached = double(),
                        in_use = double(), bytes_cached = double(),
                        bytes_in_use = double(), hits = double(), misses = double())
  stats <- arena_totals(stats)
  attr(stats, "device") <- device
  stats
}

arena_totals <- function(stats) {
  attr(stats, "bytes_cached") <- sum(stats$bytes_cached)
  attr(stats, "bytes_in_use") <- sum(stats$bytes_in_use)
  stats
}

#' @rdname gpu_arena
#' @export
gpu_arena_release <- function(ordinal = 0L) {
  freed <- if (current_policy() != "off") .Call(gg_arena_release_r, as.integer(ordinal)) else 0
  invisible(freed)
}

#' Kernels compiled in this session
#'
#' Each kernel source is compiled by NVRTC at most once per process per
#' device, on first use, with `--fmad=false` (device arithmetic rounds like
#' the CPU's) and the architecture pinned to the device.
#'
#' @return A data frame: `device`, `name`, `arch`, `ok` (FALSE when the
#'   compile or load failed; the failure is then a recorded CPU fallback),
#'   `compile_seconds`, `requests` and `compiles`.
#' @examples
#' gpu_modules()
#' @export
gpu_modules <- function() {
  .Call(gg_modules_r)
}

#' What ran on the device, and every fallback
#'
#' Counters per backend (for example `"gram"`): device dispatches, kernel
#' launches, bytes copied host-to-device and device-to-host, and CPU
#' fallbacks with their reasons. A fallback is never silent: whenever work
#' that policy `"auto"` wanted on the device ran on the CPU, it is counted
#' here with why.
#'
#' @param reset Clear the counters after reading them.
#' @return A data frame of class `gamgpu_telemetry` with columns `backend`,
#'   `dispatches`, `launches`, `h2d_bytes`, `d2h_bytes`, `fallbacks`, and
#'   attribute `fallback_reasons`, a data frame of `backend`, `reason`,
#'   `count`.
#' @examples
#' gpu_telemetry()
#' @export
gpu_telemetry <- function(reset = FALSE) {
  t <- .Call(gg_telemetry_r, isTRUE(reset))
  reasons <- t$reasons
  t$reasons <- NULL
  out <- as.data.frame(t, stringsAsFactors = FALSE)
  attr(out, "fallback_reasons") <- data.frame(
    backend = rep(out$backend, lengths(reasons)),
    reason = as.character(unlist(lapply(reasons, names))),
    count = as.numeric(unlist(reasons)),
    stringsAsFactors = FALSE
  )
  class(out) <- c("gamgpu_telemetry", "data.frame")
  out
}

#' @export
print.gamgpu_telemetry <- function(x, ...) {
  if (nrow(x) == 0L) {
    cat("gamgpu telemetry: nothing recorded\n")
    return(invisible(x))
  }
  y <- x
  class(y) <- "data.frame"
  attr(y, "fallback_reasons") <- NULL
  y$h2d_bytes <- format_bytes(y$h2d_bytes)
  y$d2h_bytes <- format_bytes(y$d2h_bytes)
  cat("gamgpu telemetry\n")
  print(y, row.names = FALSE)
  r <- attr(x, "fallback_reasons")
  if (nrow(r) > 0L) {
    cat("CPU fallbacks:\n")
    for (i in seq_len(nrow(r)))
      cat(sprintf("  %s (x%d): %s\n", r$backend[i], as.integer(r$count[i]), r$reason[i]))
  }
  invisible(x)
}

#' Compile every kernel with NVRTC, without a GPU
#'
#' NVRTC runs on the CPU, so this checks that each kernel source shipped in
#' the package compiles for a given architecture on any machine with the
#' CUDA toolkit, GPU or not, using the same options as the module cache.
#'
#' @param arch NVRTC virtual architectures, e.g. `"compute_90"`.
#' @param kernels Kernel names (file names without `.cu`); default all.
#' @return A data frame of class `gamgpu_compile_check`: `kernel`, `arch`,
#'   `ok` and `log` (the compiler's log; its error text when not ok).
#'   An error of class `gamgpu_nvrtc_unavailable` when NVRTC cannot be
#'   loaded (or the package was built without CUDA).
#' @examples
#' if (gpu_info("off")$built_with_cuda) {
#'   # one kernel source (all of them take several seconds)
#'   try(gpu_compile_check("compute_90", kernels = "gram"))
#' }
#' @export
gpu_compile_check <- function(arch = "compute_90", kernels = NULL) {
  dir <- system.file("kernels", package = "gamgpu")
  files <- list.files(dir, pattern = "\\.cu$", full.names = TRUE)
  names <- sub("\\.cu$", "", basename(files))
  if (!is.null(kernels)) {
    unknown <- setdiff(kernels, names)
    if (length(unknown))
      gamgpu_abort("gamgpu_bad_input",
                   paste("no such kernel:", paste(unknown, collapse = ", ")), call = NULL)
    files <- files[names %in% kernels]
    names <- names[names %in% kernels]
  }
  if (!is.character(arch) || !length(arch) || anyNA(arch) ||
      !all(grepl("^compute_[0-9]+a?$", arch)))
    gamgpu_abort("gamgpu_bad_input",
                 "arch must be NVRTC architectures such as \"compute_90\"", call = NULL)
  sources <- vapply(files, function(f) paste(readLines(f, warn = FALSE), collapse = "\n"), "")
  out <- do.call(rbind, lapply(arch, function(a)
    .Call(gg_compile_check_r, names, unname(sources), a)))
  class(out) <- c("gamgpu_compile_check", "data.frame")
  out
}

#' @export
print.gamgpu_compile_check <- function(x, ...) {
  for (i in seq_len(nrow(x))) {
    cat(sprintf("%-12s %-12s %s\n", x$kernel[i], x$arch[i], if (x$ok[i]) "OK" else "FAILED"))
    if (!x$ok[i] || nzchar(trimws(x$log[i])))
      cat(strwrap(x$log[i], indent = 4, exdent = 4), sep = "\n")
  }
  invisible(x)
}

# Injected device faults, for the tests (src/cuda/cuda_fault.c): from now on the
# at-th device allocation, kernel launch, NVRTC compile or copy fails as
# the driver fails it, or every driver call from the at-th on finds no
# device; kind "none" disarms.  Returns the faults injected since the last
# call.  Allocations the arena serves from its cache reach no driver: call
# gpu_arena_release() first to count them all.
gpu_inject_fault <- function(kind = "none", at = 1) {
  .Call(gg_gpu_fault_r, kind, at)
}
