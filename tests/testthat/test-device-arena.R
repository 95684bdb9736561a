# The arena's bookkeeping, run over host memory: no device needed.

test_that("size classes: the next power of two up to 2^20, then eighths of an octave", {
  sc <- gamgpu:::arena_size_class(c(0, 1, 2, 3, 4, 5, 1000, 1024, 1025, 2^20))
  expect_identical(sc$bucket, c(0L, 0L, 1L, 2L, 2L, 3L, 10L, 10L, 11L, 20L))
  expect_identical(sc$elements, 2^c(0, 0, 1, 2, 2, 3, 10, 10, 11, 20))
  # beyond 2^20 doubles a buffer is at most an eighth larger than asked,
  # exact at the steps, and the classes follow one another
  n <- c(2^20 + 1, 9 * 2^17, 9 * 2^17 + 1, 2^21, 2.5e8, 1e9, 1e9 / 3, 2^40, 2^40 + 1)
  e <- gamgpu:::arena_size_class(n)$elements
  expect_true(all(e >= n & e <= n * 9 / 8))
  expect_identical(e[c(2, 4, 8)], n[c(2, 4, 8)])
  expect_identical(e[[1]], 9 * 2^17)
  expect_identical(e[[3]], 10 * 2^17)
  m <- 2^20 + 2^(17:37)
  expect_true(all(diff(gamgpu:::arena_bucket_of(sort(c(m, m + 1)))) >= 0))
  steps <- gamgpu:::arena_size_class(2^20 + (1:8) * 2^17)   # the first octave's eight steps
  expect_identical(steps$bucket, 21:28)
  expect_identical(steps$elements, 2^20 + (1:8) * 2^17)
  big <- gamgpu:::arena_size_class(c(2^60, 2^61, -1, NA))
  expect_identical(is.na(big$bucket), c(FALSE, TRUE, TRUE, TRUE))
  expect_identical(is.na(big$elements), c(FALSE, TRUE, TRUE, TRUE))
})

test_that("released buffers are reused: hits, misses and bytes add up", {
  a <- gamgpu:::arena_host()
  defer(gamgpu:::arena_host_free(a))
  id1 <- gamgpu:::arena_host_alloc(a, 1000)     # bucket 10: miss
  id2 <- gamgpu:::arena_host_alloc(a, 600)      # bucket 10: miss (1 in use)
  s <- gamgpu:::arena_host_stats(a)
  expect_identical(s$bucket, 10L)
  expect_equal(s$misses, 2)
  expect_equal(s$hits, 0)
  expect_equal(s$in_use, 2)
  expect_equal(attr(s, "bytes_in_use"), 2 * 1024 * 8)
  expect_equal(attr(s, "bytes_cached"), 0)

  gamgpu:::arena_host_release(a, id1)
  gamgpu:::arena_host_release(a, id2)
  s <- gamgpu:::arena_host_stats(a)
  expect_equal(attr(s, "bytes_in_use"), 0)
  expect_equal(attr(s, "bytes_cached"), 2 * 1024 * 8)
  expect_equal(s$cached, 2)

  id3 <- gamgpu:::arena_host_alloc(a, 1024)     # served from the cache
  id4 <- gamgpu:::arena_host_alloc(a, 3)        # bucket 2: a new bucket
  s <- gamgpu:::arena_host_stats(a)
  expect_equal(s$hits[s$bucket == 10L], 1)
  expect_equal(s$misses[s$bucket == 2L], 1)
  expect_equal(s$elements[s$bucket == 2L], 4)
  gamgpu:::arena_host_release(a, id3)
  gamgpu:::arena_host_release(a, id4)

  freed <- gamgpu:::arena_host_trim(a)
  expect_equal(freed, 2 * 1024 * 8 + 4 * 8)
  s <- gamgpu:::arena_host_stats(a)
  expect_equal(attr(s, "bytes_cached"), 0)
  expect_equal(attr(s, "bytes_in_use"), 0)
})

test_that("out of memory: cached buffers are freed and the allocation retried once", {
  # A simulated device of 64 KiB: a cached 32 KiB buffer blocks a 48 KiB one
  # (bucket 64 KiB) until the arena trims its cache.
  a <- gamgpu:::arena_host(device_bytes = 64 * 1024)
  defer(gamgpu:::arena_host_free(a))
  gamgpu:::arena_host_release(a, gamgpu:::arena_host_alloc(a, 4096))   # 32 KiB cached
  id <- gamgpu:::arena_host_alloc(a, 6000)                            # needs 64 KiB
  s <- gamgpu:::arena_host_stats(a)
  expect_equal(attr(s, "oom_retries"), 1)
  expect_equal(attr(s, "bytes_cached"), 0)
  expect_equal(attr(s, "bytes_in_use"), 64 * 1024)
  gamgpu:::arena_host_release(a, id)
})

test_that("a failed allocation names the backend and size and leaves the arena usable", {
  a <- gamgpu:::arena_host(device_bytes = 64 * 1024)
  defer(gamgpu:::arena_host_free(a))
  err <- expect_error(gamgpu:::arena_host_alloc(a, 1e6, label = "pirls"),
                      class = "gamgpu_device_oom")
  expect_match(conditionMessage(err), "pirls")
  expect_match(conditionMessage(err), "7.6 MiB|8.0 MiB")
  expect_match(conditionMessage(err), "1000000 doubles")
  s <- gamgpu:::arena_host_stats(a)
  expect_equal(attr(s, "bytes_in_use"), 0)
  id <- gamgpu:::arena_host_alloc(a, 100)
  expect_equal(attr(gamgpu:::arena_host_stats(a), "bytes_in_use"), 128 * 8)
  gamgpu:::arena_host_release(a, id)
})

test_that("the budget caps what the arena holds", {
  a <- gamgpu:::arena_host(budget_bytes = 16 * 1024)
  defer(gamgpu:::arena_host_free(a))
  id <- gamgpu:::arena_host_alloc(a, 1024)               # 8 KiB
  err <- expect_error(gamgpu:::arena_host_alloc(a, 2048), # 16 KiB more: over
                      class = "gamgpu_device_oom")
  expect_match(conditionMessage(err), "budget")
  gamgpu:::arena_host_release(a, id)
  id <- gamgpu:::arena_host_alloc(a, 2048)  # the cached 8 KiB is trimmed to fit
  gamgpu:::arena_host_release(a, id)
  expect_equal(attr(gamgpu:::arena_host_stats(a), "bytes_cached"), 16 * 1024)
})

test_that("a budget set below what the arena holds frees its cached buffers", {
  a <- gamgpu:::arena_host()
  defer(gamgpu:::arena_host_free(a))
  ids <- c(gamgpu:::arena_host_alloc(a, 1024), gamgpu:::arena_host_alloc(a, 2048))
  gamgpu:::arena_host_release(a, ids[2])                # 16 KiB cached, 8 KiB in use
  gamgpu:::arena_host_budget(a, 32 * 1024)              # above what it holds: kept
  expect_equal(attr(gamgpu:::arena_host_stats(a), "bytes_cached"), 16 * 1024)
  gamgpu:::arena_host_budget(a, 16 * 1024)              # below: the cache goes
  s <- gamgpu:::arena_host_stats(a)
  expect_equal(attr(s, "bytes_cached"), 0)
  expect_equal(attr(s, "bytes_in_use"), 8 * 1024)
  # and the budget binds: a cached block could otherwise have been reused
  expect_error(gamgpu:::arena_host_alloc(a, 2048), class = "gamgpu_device_oom")
  gamgpu:::arena_host_budget(a, 0)
  gamgpu:::arena_host_release(a, gamgpu:::arena_host_alloc(a, 2048))
  gamgpu:::arena_host_release(a, ids[1])
  expect_equal(attr(gamgpu:::arena_host_stats(a), "bytes_in_use"), 0)
})

test_that("external pointers are checked: freed or reloaded handles error cleanly", {
  a <- gamgpu:::arena_host()
  gamgpu:::arena_host_free(a)
  expect_error(gamgpu:::arena_host_stats(a), class = "gamgpu_stale_pointer")
  f <- tempfile(fileext = ".rds")
  b <- gamgpu:::arena_host()
  saveRDS(b, f)
  gamgpu:::arena_host_free(b)
  expect_error(gamgpu:::arena_host_alloc(readRDS(f), 10), class = "gamgpu_stale_pointer")
  expect_error(gamgpu:::arena_host_stats(list()), class = "gamgpu_bad_input")
})

test_that("gpu_arena() reports nothing and releases nothing under policy 'off'", {
  local_gg_options(gamgpu.device = "off")
  s <- gpu_arena()
  expect_identical(nrow(s), 0L)
  expect_equal(attr(s, "bytes_in_use"), 0)
  # and says it is no device's arena, so that its zero proves nothing
  expect_identical(attr(s, "device"), NA_character_)
  expect_failure(expect_device_arena_empty(s))
  expect_equal(gpu_arena_release(), 0)
})
