# Internal hooks used by the tests.
#
# A host-memory arena: the device arena's bookkeeping (buckets, hits,
# misses, budget, trim-and-retry on out-of-memory) running over malloc, so
# it is tested on machines without a GPU.  Internal; used by the tests.

arena_host <- function(device_bytes = 0, budget_bytes = 0)
  .Call(gg_host_arena_new, as.double(device_bytes), as.double(budget_bytes))

arena_host_budget <- function(arena, budget_bytes)
  invisible(.Call(gg_host_arena_budget, arena, as.double(budget_bytes)))

arena_host_alloc <- function(arena, n, label = "test")
  .Call(gg_host_arena_alloc, arena, as.double(n), as.character(label))

arena_host_release <- function(arena, id)
  invisible(.Call(gg_host_arena_release, arena, as.integer(id)))

arena_host_trim <- function(arena) .Call(gg_host_arena_trim, arena)

arena_host_stats <- function(arena) arena_totals(.Call(gg_host_arena_stats, arena))

arena_host_free <- function(arena) invisible(.Call(gg_host_arena_free, arena))

# The arena's size class of n doubles (bucket) and what its buffers hold
# (elements); NA where n has no class.
arena_size_class <- function(n) .Call(gg_arena_size_class_r, as.double(n))
arena_bucket_of <- function(n) arena_size_class(n)$bucket

# Take n doubles from a device arena and give them back (error paths).
arena_device_try <- function(n, label = "test", ordinal = 0L)
  .Call(gg_arena_try_alloc_r, as.integer(ordinal), as.double(n), as.character(label))

nvrtc_arch <- function(major, minor)
  .Call(gg_nvrtc_arch_r, as.integer(major), as.integer(minor))

nvrtc_arch_listed <- function(arch, archs)
  .Call(gg_nvrtc_arch_listed_r, as.character(arch), as.integer(archs))

record_fallback <- function(backend, reason)
  invisible(.Call(gg_record_fallback_r, as.character(backend), as.character(reason)))

set_kernel_dir <- function(dir) .Call(gg_set_kernel_dir_r, as.character(dir))

module_request <- function(module, fn, ordinal = 0L)
  .Call(gg_module_request_r, as.integer(ordinal), as.character(module), as.character(fn))

# The prediction rows on a bare lp matrix: list(fit = X beta, se.fit =
# sqrt(x_i' V x_i), backend, fallback), through the device policy.
predict_rows_c <- function(X, beta, V, device = "off", chunk_rows = 0, threads = 1L) {
  plan <- device_plan(device, "predict")
  .Call(gg_predict_r, X, as.double(beta), V, plan$mode, plan$ordinal, as.double(chunk_rows),
        as.integer(threads))
}
