# gam()'s thin plate bases built from their knots, evaluated on every row
# by the engine (R/tprs_setup.R): the smooth objects are mgcv's to
# rounding, the cases the shortcut does not reproduce go to mgcv's own
# constructor, and a gam()-method fit on them is gam()'s.

tprs_data <- function(n = 5000, seed = 4) {
  set.seed(seed)
  d <- data.frame(x = runif(n), z = runif(n), w = rnorm(n) * 50 + 7,
                  f = factor(sample(c("a", "b"), n, TRUE)))
  d$y <- sin(6 * d$x) + d$z^2 + rnorm(n) / 2
  d$yb <- rbinom(n, 1, plogis(sin(6 * d$x) + d$z - 0.5))
  d$xr <- round(d$x, 2)                          # 101 distinct values
  d$tied <- round(d$w, 1)                        # ties, and more than 2000 values
  d
}

# (the construction on 2 threads: mgcv's to 1e-13 under the reference
# BLAS, to rounding carried through its Lanczos iteration under another,
# test-basis-tprs-construct.R)
tprs_tol <- function(tight) if (reference_blas()) tight else 1e-10

fast_con <- function(spec, d, knots = NULL) {
  sp <- gamgpu:::fast_tprs_specs(list(spec), 2L)[[1]]
  mgcv::smoothCon(sp, d, knots = knots, absorb.cons = TRUE, sparse.cons = 0)
}

test_that("a thin plate basis from its knots is mgcv's to rounding", {
  d <- tprs_data()
  rel <- function(a, b) max(abs(a - b)) / max(abs(b))
  for (spec in list(mgcv::s(x), mgcv::s(x, z), mgcv::s(x, by = z, k = 12), mgcv::s(x, by = f), mgcv::s(w, x, z, k = 35),
                    mgcv::s(x, m = 3), mgcv::s(x, z, m = 3, k = 25), mgcv::s(w), mgcv::s(tied))) {
    a <- mgcv::smoothCon(spec, d, absorb.cons = TRUE, sparse.cons = 0)
    b <- fast_con(spec, d)
    expect_identical(length(a), length(b))
    for (j in seq_along(a)) {
      label <- paste(spec$label, j)
      expect_lt(rel(b[[j]]$X, a[[j]]$X), tprs_tol(1e-11), label = paste(label, "X"))
      expect_lt(rel(b[[j]]$UZ, a[[j]]$UZ), tprs_tol(1e-13), label = paste(label, "UZ"))
      expect_lt(rel(b[[j]]$S[[1]], a[[j]]$S[[1]]), tprs_tol(1e-12), label = paste(label, "S"))
      expect_identical(b[[j]]$Xu, a[[j]]$Xu, label = label)
      expect_identical(b[[j]]$shift, a[[j]]$shift, label = label)
      expect_identical(class(b[[j]]), class(a[[j]]), label = label)
      if (is.list(attr(a[[j]], "qrc")))
        expect_lt(rel(attr(b[[j]], "qrc")$qr, attr(a[[j]], "qrc")$qr), tprs_tol(1e-12),
                  label = label)
      nm <- setdiff(names(a[[j]]), c("X", "UZ", "S", "S.scale"))
      expect_identical(b[[j]][nm], a[[j]][nm], label = label)
      expect_null(attr(b[[j]], "gg_threads"))
      expect_null(attr(b[[j]], "gg_device"))
    }
  }
})

test_that("what the shortcut would not reproduce is built by mgcv itself", {
  d <- tprs_data(n = 2600)
  spec <- mgcv::s(x)
  dl <- list(x = d$x)
  # user knots, few distinct values, a dropped null space, few rows
  expect_null(gamgpu:::tprs_knot_data(spec, dl, list(x = seq(0, 1, length.out = 30))))
  expect_null(gamgpu:::tprs_knot_data(spec, list(x = d$xr), NULL))
  expect_null(gamgpu:::tprs_knot_data(mgcv::s(x, m = c(2, 0)), dl, NULL))
  expect_null(gamgpu:::tprs_knot_data(spec, list(x = d$x[1:1500]), NULL))
  expect_false(is.null(gamgpu:::tprs_knot_data(spec, dl, NULL)))
  # shrinkage smooths are not marked
  sp <- gamgpu:::fast_tprs_specs(list(mgcv::s(x, bs = "ts"), mgcv::s(x, bs = "cr"), mgcv::s(x)), 1L)
  expect_identical(vapply(sp, function(s) class(s)[1L], ""),
                   c("ts.smooth.spec", "cr.smooth.spec", "gg_tprs.smooth.spec"))
  # and the objects built through them are mgcv's exactly
  for (spec in list(mgcv::s(xr), mgcv::s(x, m = c(2, 0)))) {
    a <- mgcv::smoothCon(spec, d, absorb.cons = TRUE, sparse.cons = 0)[[1]]
    b <- fast_con(spec, d)[[1]]
    expect_identical(b$X, a$X)
    expect_identical(b$UZ, a$UZ)
  }
  k <- list(x = seq(0, 1, length.out = 30))
  expect_identical(fast_con(spec, d, knots = k)[[1]]$X,
                   mgcv::smoothCon(spec, d, knots = k, absorb.cons = TRUE, sparse.cons = 0)[[1]]$X)
})

test_that("a REML fit on bases built this way is gam()'s", {
  d <- tprs_data(n = 4000)
  f <- yb ~ s(x) + s(z) + s(w)
  b <- mgcv::gam(f, family = binomial(), data = d, method = "REML",
                 control = mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9)))
  g <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off",
               control = tight_gam_gg())
  expect_true(g$converged)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), 1e-9)
  expect_lt(max(abs(g$fitted.values - b$fitted.values)), 1e-6)
  expect_lt(max(abs(g$edf - b$edf)), 1e-4)
  expect_lt(max(abs(g$smooth[[1]]$UZ - b$smooth[[1]]$UZ)) / max(abs(b$smooth[[1]]$UZ)),
            tprs_tol(1e-13))
})

test_that("on the GPU the basis is evaluated on the device, as on the host", {
  skip_if_no_device()
  d <- tprs_data(n = 30000)
  spec <- mgcv::s(x, z, k = 40)
  host <- fast_con(spec, d)[[1]]
  gpu_telemetry(reset = TRUE)
  sp <- gamgpu:::fast_tprs_specs(list(spec), 2L, list(mode = 2L, ordinal = 0L))[[1]]
  dev <- mgcv::smoothCon(sp, d, absorb.cons = TRUE, sparse.cons = 0)[[1]]
  t <- gpu_telemetry()
  expect_gt(sum(t$launches[t$backend == "engine"]), 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_device_arena_empty()
  expect_lt(max(abs(dev$X - host$X)) / max(abs(host$X)), 1e-12)
  expect_lt(max(abs(dev$UZ - host$UZ)) / max(abs(host$UZ)), 1e-13)
})
