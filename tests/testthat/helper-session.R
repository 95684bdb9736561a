# A model session (R/session.R) on the CPU (mode 0) or the device (2), for
# tests that build GCV or outer problems, or call the session's entry
# points, by hand.  The problems close it with own = TRUE; $ptr is the
# session itself.
test_session <- function(X, y, w, offset = NULL, mode = 0L, nthreads = 1L)
  gamgpu:::model_session(X, y, w, offset, list(mode = mode, ordinal = 0L),
                         list(nthreads = nthreads))
