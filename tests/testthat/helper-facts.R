# Shared by the tests of gam()'s bases set up from facts of every row
# (R/basis_facts.R): test-basis-facts.R, test-basis-facts-kin.R.

facts_data <- function(n = 2400) {
  set.seed(11)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$yb <- rbinom(n, 1, plogis((d$f - mean(d$f)) / 3))
  d$fac <- factor(sample(letters[1:3], n, replace = TRUE))
  d$x1b <- runif(n)
  d
}

# (on the CPU the route is taken only when asked for, by option
# gamgpu.basis_facts = TRUE; a device fit takes it by default)

# every field and attribute of two lists of smooths, to `tol` relative
# (a te() margin's X, its basis on the rows it was built on -- every row for
# gam(), stand-ins for the facts -- by its columns: nothing after the set-up
# reads its rows)
expect_same_smooths <- function(a, b, tol, label) {
  expect_equal(length(a), length(b), label = label)
  margins_X <- function(s) {
    if (!is.null(s$margin))
      s$margin <- lapply(s$margin, function(m) { m$X <- ncol(m$X); m })
    s
  }
  a <- lapply(a, margins_X)
  b <- lapply(b, margins_X)
  # (an sz smooth's Xb, the base's basis on every row for gamm(), is not
  # kept by the facts' route)
  for (i in seq_along(a)) if (inherits(a[[i]], "sz.interaction")) {
    expect_null(a[[i]]$Xb, label = label)
    b[[i]]["Xb"] <- list(NULL)
  }
  for (i in seq_along(b)) {
    for (k in union(names(a[[i]]), names(b[[i]])))
      expect_true(isTRUE(all.equal(a[[i]][[k]], b[[i]][[k]], tolerance = tol)),
                  label = paste(label, "smooth", i, k))
    expect_true(isTRUE(all.equal(attributes(a[[i]]), attributes(b[[i]]), tolerance = tol)),
                label = paste(label, "smooth", i, "attributes"))
  }
}

# Each case (formula, family, method) fitted by gam() and by gam_gpu()
# with more rows than chunk.size: X from its recipe, the smooths, cmX, the
# fit and its predictions gam()'s.
expect_facts_parity <- function(cases, d, ctl) {
  for (cs in cases) {
    label <- paste(deparse(cs[[1]]), cs[[3]])
    dd <- d
    if (cs[[2]]$link == "log") dd$y <- dd$y + 10
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = dd, method = cs[[3]])
    # (the facts' stand-in rows give no warning of their own)
    expect_no_warning(g <- gam_gpu(cs[[1]], family = cs[[2]], data = dd, method = cs[[3]],
                                   device = "off", control = ctl))
    expect_identical(g$device$model_matrix, "recipe", label = label)
    expect_same_smooths(g$smooth, b$smooth, 1e-10, label)
    expect_lt(max(abs(g$cmX - b$cmX)), 1e-12, label = label)
    # the fit is gam()'s
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)),
              1e-5, label = label)
    expect_lt((g$gcv.ubre - b$gcv.ubre) / abs(b$gcv.ubre), 1e-6, label = label)
    expect_lt(max(abs(g$edf - b$edf)), 0.01, label = label)
    nd <- dd[1:40, ]
    expect_lt(max(abs(predict(g, nd) - predict(b, nd))), 1e-4 * diff(range(predict(b, nd))),
              label = label)
  }
}

# A binomial REML fit of f on d on the device (gam()'s bases from facts of
# every row, X from its recipe, built there; kernels launched, no
# fallback, the arena empty after) against the CPU's fit set up as the
# device's is: the same smooths, coefficients and fitted values.
expect_device_facts_fit <- function(f, d) {
  gpu_telemetry(reset = TRUE)
  g <- expect_device_fit(gam_gpu(f, family = binomial(), data = d, method = "REML",
                                 device = "required"))
  t <- gpu_telemetry()
  expect_identical(g$device$model_matrix, "recipe")
  expect_gt(sum(t$launches[t$backend == "engine"]), 0)
  expect_equal(sum(t$fallbacks), 0)
  expect_device_arena_empty()
  c <- gam_gpu(f, family = binomial(), data = d, method = "REML", device = "off")
  expect_identical(c$device$model_matrix, "recipe")
  expect_same_smooths(g$smooth, c$smooth, 1e-11, "device")
  rel <- function(a, b) max(abs(a - b)) / max(abs(b))
  expect_lt(rel(coef(g), coef(c)), 1e-9)
  expect_lt(rel(fitted(g), fitted(c)), 1e-9)
  invisible(g)
}
