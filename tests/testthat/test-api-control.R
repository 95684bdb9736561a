# Control settings are validated however they are passed (R/control.R):
# gam_gpu_control(), a plain list, a gam_gpu_control object edited by hand,
# mgcv's gam.control(); block.rows is the CPU backend's row block.

suppressMessages(library(mgcv))
set.seed(31)
cd <- gamSim(1, n = 300, dist = "normal", scale = 2, verbose = FALSE)
cd$yb <- rbinom(300, 1, binomial()$linkinv((cd$f - 8) / 4))

whole_settings <- c("maxit", "newton.maxit", "chunk.size", "block.rows", "nthreads")

test_that("whole-number settings are whole numbers from 1 to .Machine$integer.max", {
  bad <- list(0, 0.5, 1.5, -3, NA, NaN, Inf, .Machine$integer.max + 1, 1e10, "2", c(2, 3),
              TRUE, NULL, integer(0))
  for (nm in whole_settings) {
    for (v in bad) {
      expect_error(do.call(gam_gpu_control, setNames(list(v), nm)),
                   class = "gamgpu_bad_control", label = paste(nm, deparse(v), collapse = ""))
      # the same checks on a plain list and on an edited control object
      if (!is.null(v)) {
        expect_error(gam_gpu(y ~ s(x0), data = cd, device = "off",
                             control = setNames(list(v), nm)),
                     class = "gamgpu_bad_control")
        ctl <- gam_gpu_control()
        ctl[[nm]] <- v
        expect_error(gam_gpu(y ~ s(x0), data = cd, device = "off", control = ctl),
                     class = "gamgpu_bad_control")
      }
    }
    ok <- do.call(gam_gpu_control, setNames(list(7), nm))
    expect_identical(ok[[nm]], 7L)
    expect_identical(do.call(gam_gpu_control, setNames(list(.Machine$integer.max), nm))[[nm]],
                     .Machine$integer.max)
  }
  e <- expect_error(gam_gpu_control(maxit = 0.5), class = "gamgpu_bad_control")
  expect_s3_class(e, "gamgpu_error")
  expect_match(conditionMessage(e), "'maxit'", fixed = TRUE)
})

test_that("maxit = 0.5 in a list is an error, not a fit with 0 iterations", {
  e <- expect_error(gam_gpu(yb ~ s(x0), family = binomial, data = cd, device = "off",
                            control = list(maxit = 0.5)),
                    class = "gamgpu_bad_control")
  expect_match(conditionMessage(e), "maxit", fixed = TRUE)
  expect_error(gam_gpu(yb ~ s(x0), family = binomial, data = cd, device = "off",
                       control = list(maxit = 3e9)),
               class = "gamgpu_bad_control")
})

test_that("other settings: numbers > 0, TRUE or FALSE", {
  for (nm in c("epsilon", "newton.tol"))
    for (v in list(0, -1, NA, Inf, "1e-7", c(1e-7, 1e-8)))
      expect_error(do.call(gam_gpu_control, setNames(list(v), nm)), class = "gamgpu_bad_control")
  for (nm in c("trace", "hat"))
    for (v in list(NA, "yes", 1, c(TRUE, FALSE)))
      expect_error(do.call(gam_gpu_control, setNames(list(v), nm)), class = "gamgpu_bad_control")
  expect_false(gam_gpu_control(hat = FALSE)$hat)
})

test_that("a plain list is validated and used like gam_gpu_control()", {
  g1 <- gam_gpu(yb ~ s(x0), family = binomial, data = cd, device = "off",
                control = list(epsilon = 1e-9, maxit = 50))
  g2 <- gam_gpu(yb ~ s(x0), family = binomial, data = cd, device = "off",
                control = gam_gpu_control(epsilon = 1e-9, maxit = 50))
  expect_identical(g1$linear.predictors, g2$linear.predictors)
  expect_identical(g1$control$maxit, 50L)
  expect_identical(g1$control$epsilon, 1e-9)
  # the limit is read: 2 iterations stop short, with the classed warning
  expect_warning(g <- gam_gpu(yb ~ s(x0), family = binomial, data = cd, device = "off",
                              control = list(maxit = 2)),
                 class = "gamgpu_not_converged")
  expect_false(g$converged)
  expect_error(gam_gpu(y ~ s(x0), data = cd, control = "fast"), class = "gamgpu_bad_control")
  expect_error(gam_gpu(y ~ s(x0), data = cd, control = list(1)), class = "gamgpu_bad_control")
  expect_error(gam_gpu(y ~ s(x0), data = cd, control = list(maxit = 5, maxit = 6)),
               class = "gamgpu_bad_control")
  expect_s3_class(gam_gpu(y ~ s(x0), data = cd, device = "off", control = list()), "gam_gpu")
})

test_that("unknown control names are errors naming them", {
  e <- expect_error(gam_gpu(y ~ s(x0), data = cd, device = "off",
                            control = list(maxiter = 10, blocksize = 3)),
                    class = "gamgpu_bad_control")
  expect_match(conditionMessage(e), "'maxiter'", fixed = TRUE)
  expect_match(conditionMessage(e), "'blocksize'", fixed = TRUE)
  expect_error(gam_gpu_control(foo = 1))          # not an argument of gam_gpu_control()
})

test_that("mgcv's gam.control(): shared settings used, the others only at their default", {
  # a whole gam.control() object: its defaults ask for nothing
  g <- gam_gpu(y ~ s(x0), data = cd, device = "off", control = gam.control())
  expect_identical(g$control$nthreads, gam_gpu_control()$nthreads)
  # trace, maxit, epsilon, nthreads mean the same
  g <- gam_gpu(yb ~ s(x0), family = binomial, data = cd, device = "off",
               control = gam.control(epsilon = 1e-11, maxit = 77, nthreads = 2))
  expect_identical(g$control$epsilon, 1e-11)
  expect_identical(g$control$maxit, 77L)
  expect_identical(g$control$nthreads, 2L)
  b <- bam(yb ~ s(x0), family = binomial, data = cd, control = gam.control(epsilon = 1e-11))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)),
            1e-8 * diff(range(b$linear.predictors)))
  expect_output(gam_gpu(y ~ s(x0), data = cd, device = "off",
                        control = gam.control(trace = TRUE)), "iter")
  # settings gamgpu has no use for: refused unless at gam.control()'s default
  for (set in list(list(mgcv.tol = 1e-3), list(rank.tol = 1e-4), list(scalePenalty = FALSE),
                   list(newton = list(conv.tol = 1e-3)), list(idLinksBases = FALSE),
                   list(irls.reg = 1), list(efs.lspmax = 10))) {
    e <- expect_error(gam_gpu(y ~ s(x0), data = cd, device = "off",
                              control = do.call(gam.control, set)),
                      class = "gamgpu_bad_control")
    expect_match(conditionMessage(e), sprintf("'%s'", names(set)), fixed = TRUE)
    expect_error(gam_gpu(y ~ s(x0), data = cd, device = "off", control = set),
                 class = "gamgpu_bad_control")
  }
  e <- expect_error(gam_gpu(y ~ s(x0), data = cd, device = "off",
                            control = gam.control(newton = list(conv.tol = 1e-3))),
                    class = "gamgpu_bad_control")
  expect_match(conditionMessage(e), "newton.tol", fixed = TRUE)
  expect_s3_class(gam_gpu(y ~ s(x0), data = cd, device = "off",
                          control = list(mgcv.tol = 1e-7, trace = FALSE)), "gam_gpu")
  # the fit's control holds gam.control()'s names once, gamgpu's values
  g <- gam_gpu(y ~ s(x0), data = cd, device = "off", control = list(maxit = 33))
  expect_false(anyDuplicated(names(g$control)) > 0)
  expect_identical(g$control$maxit, 33L)
  expect_true(all(names(gam.control()) %in% names(g$control)))
})

test_that("gam_gpu_control() records the settings given", {
  expect_identical(attr(gam_gpu_control(), "given"), character(0))
  expect_setequal(attr(gam_gpu_control(nthreads = 2, trace = TRUE), "given"),
                  c("nthreads", "trace"))
  expect_identical(attr(gamgpu:::as_gam_gpu_control(list(maxit = 5)), "given"), "maxit")
  expect_identical(attr(gamgpu:::as_gam_gpu_control(gam_gpu_control(maxit = 5)), "given"),
                   "maxit")
})

test_that("block.rows is the CPU backend's row block: read, and the answer unchanged", {
  # (at the default epsilon every binomial fit stops at the same iteration;
  # at a tolerance near the rounding of the sums, one more iteration here or
  # there moves the answer by the convergence tolerance, not by block.rows)
  # (R's BLAS over the row blocks: the "auto" choice, timed once a session,
  # may be gamgpu's kernel, whose sums do not follow block.rows)
  local_gg_options(gamgpu.cpu_gram = "blas")
  for (f in list(y ~ s(x0) + s(x1) + s(x2, bs = "cr"), yb ~ s(x0) + s(x1) + s(x2, bs = "cr"))) {
    fam <- if (f[[2]] == "yb") binomial() else gaussian()
    fits <- lapply(c(1L, 7L, 64L, 4096L), function(br)
      gam_gpu(f, family = fam, data = cd, device = "off",
              control = gam_gpu_control(block.rows = br)))
    for (g in fits[-1]) {
      expect_true(g$converged)
      expect_identical(g$iter, fits[[1]]$iter)
      expect_lt(max(abs(g$linear.predictors - fits[[1]]$linear.predictors)),
                1e-12 * diff(range(fits[[1]]$linear.predictors)))
      expect_lt(abs(g$gcv.ubre - fits[[1]]$gcv.ubre), 1e-12 * abs(fits[[1]]$gcv.ubre))
    }
    # blocks of other sizes sum in another order: not all bit-identical
    expect_false(all(vapply(fits[-1], function(g)
      identical(g$linear.predictors, fits[[1]]$linear.predictors), NA)))
  }
  expect_error(gam_gpu(f, family = binomial, data = cd, device = "off",
                       control = list(block.rows = 0)), class = "gamgpu_bad_control")
})
