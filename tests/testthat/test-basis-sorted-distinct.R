# The covariates' distinct values in order (R/sorted_distinct.R): sorted
# side by side in C for the facts' bases, the values and the fit those of
# one sort at a time.

test_that("gg_sorted_unique_list is sort(unique()) of each vector", {
  sul <- function(xs, threads = 2L) .Call(gamgpu:::gg_sorted_unique_list_r, xs, threads)
  set.seed(5)
  xs <- list(c(round(rnorm(3e4), 2), -0, 0, Inf, -Inf), runif(7),
             # (more rows than one segment of a single sort's own threads)
             c(round(rnorm(1.4e5) * 1e3, 1), runif(1e3)), numeric(0), c(2, 2, 2))
  want <- lapply(xs, function(x) sort(unique(x)))
  expect_identical(sul(xs, 1L), want)
  expect_identical(sul(xs, 2L), want)
  expect_identical(sul(list()), list())
  expect_error(sul(list(1, c(2, NA))), class = "gamgpu_bad_input")
  expect_error(sul(list(1, 1:3)), class = "gamgpu_bad_input")
  expect_error(sul(1:3), class = "gamgpu_bad_input")
})

test_that("the facts' covariates are sorted once, side by side, and the fit is unchanged", {
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  ns <- asNamespace("gamgpu")
  d <- facts_data(2200)            # (a thin plate basis takes facts above 2000 rows)
  f <- y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, bs = c("cr", "tp"), k = c(5, 5)) +
    s(x1b, bs = "ps")
  ctl <- gam_gpu_control(chunk.size = 600)
  # (each ask of sorted_distinct(): the variable, and whether it was sorted before)
  rec <- new.env()
  rec$asked <- character(0)
  trace("sorted_distinct", where = ns, print = FALSE,
        tracer = bquote(assign("asked", c(get("asked", envir = .(rec)), paste0(
          v, if (centred) " centred", if (is.null(attr(mf, "gg_sorted_distinct")[[
            if (centred) "centred" else "raw"]][[v]])) " sorted now")), envir = .(rec))))
  on.exit(untrace("sorted_distinct", where = ns), add = TRUE)
  g1 <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off", control = ctl)
  expect_setequal(rec$asked, c("x0 centred", "x1", "x2", "x3 centred", "x1b"))
  expect_identical(g1$device$model_matrix, "recipe")
  # without the prefetch: every covariate sorted when asked, the same fit
  rec$asked <- character(0)
  prefetch0 <- get("sorted_distinct_prefetch", ns)
  utils::assignInNamespace("sorted_distinct_prefetch", function(specs, kind, mf, ...) mf, ns)
  on.exit(utils::assignInNamespace("sorted_distinct_prefetch", prefetch0, ns), add = TRUE)
  g0 <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off", control = ctl)
  expect_setequal(rec$asked, c("x0 centred sorted now", "x1 sorted now", "x2 sorted now",
                               "x3 centred sorted now", "x1b sorted now"))
  expect_identical(g1$coefficients, g0$coefficients)
  expect_identical(g1$sp, g0$sp)
  expect_same_smooths(g1$smooth, g0$smooth, 0, "prefetch")
})
