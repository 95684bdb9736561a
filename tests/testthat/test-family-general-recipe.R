# The native general-family route's set-up from the rows' facts
# (R/general_setup.R): gam()'s bases from facts of every row, gam.setup()
# / gam.setup.list() on a mini frame, X built from its recipe by the model
# session -- reached on the CPU with options(gamgpu.basis_facts = TRUE) and
# more rows than gf_setup_min_rows (10000).  Against gam(fit = FALSE)'s
# set-up field by field, and the fits against the native route on
# gam()'s own set-up (X the matrix) and against mgcv::gam().
# Measured (CPU session, mgcv 1.8-41, n = 12000): set-up fields equal to
# gam()'s to 1e-13 (all.equal's mean relative difference; cmX, S and the
# smooths from the facts), X within 7e-14 of its largest entry; fits
# against the matrix set-up's: gaulss() (offset, factor by, parametric
# factor; epsilon 1e-9) 5.5e-10 of each linear predictor's range, log sp
# 6e-11, EDFs 6e-11; gevlss() (3 predictors) 1.7e-13, sp 1.4e-10;
# cox.ph() (ties, factor by, parametric factor) 1.3e-14, sp 1.1e-10, and
# against gam() 1.8e-14, sp 1.5e-9, REML 2e-16 relative.

skip_if(utils::packageVersion("mgcv") >= "1.9-0",
        "the native general-family route is not yet matched to mgcv 1.9's gam()")

local_recipe_route <- function(facts = TRUE, env = parent.frame()) {
  old <- options(gamgpu.general_route = "native", gamgpu.basis_facts = facts)
  do.call(on.exit, list(substitute(options(old)), add = TRUE), envir = env)
}

recipe_data <- function(n, seed = 7) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n),
                  fac = factor(sample(c("a", "b", "c"), n, TRUE)))
  f <- sin(2 * pi * d$x0) / 2 + d$x1 + (d$fac == "b") / 3
  d$off <- d$x1 / 3
  # (the scale varies with x2, and with x1 at one level of fac)
  d$y <- f + rnorm(n) * exp(d$x2 - 1 + (d$fac == "b") * sin(2 * pi * d$x1) / 2)
  d$yv <- f + exp(d$x2 - 1) * ((-log(runif(n)))^(-0.1) - 1) / 0.1
  # (survival times with ties, 80% events)
  d$t <- round(rexp(n, exp(f)) * 50) / 50 + 0.01
  d$ev <- as.numeric(runif(n) < 0.8)
  d
}

# gam()'s call as gam_gpu() writes it for the native route (gamgpu's thin
# plate construction in the formula), and its set-up both ways
recipe_setups <- function(formula, family, data, weights = NULL, facts = TRUE) {
  gcall <- bquote(mgcv::gam(formula = .(gamgpu:::gg_tp_formula(formula)), family = .(family),
                            data = data, method = "REML", control = mgcv::gam.control()))
  if (!is.null(weights)) gcall$weights <- as.name(weights)
  local_recipe_route(facts)
  env <- environment()
  S <- gamgpu:::gf_setup(gcall, env, list(mode = 0L, ordinal = 0L), 2L)
  gcall$fit <- FALSE
  Gm <- gamgpu:::gf_preinitialize(eval(gcall, env))
  list(S = S, Gm = Gm)
}

# every field of the recipe's set-up G equal to gam()'s (X apart), X's
# recipe gam()'s X, and rows of it (gf_x_rows()) gam()'s rows
expect_setup_as_gam <- function(s) {
  S <- s$S
  G <- S$G
  Gm <- s$Gm
  expect_identical(S$source, "recipe")
  expect_null(S$reason)
  expect_setequal(names(G), names(Gm))
  for (nm in setdiff(names(Gm), "X"))
    expect_true(isTRUE(all.equal(G[[nm]], Gm[[nm]], tolerance = 1e-10)), label = nm)
  expect_identical(dim(G$X), c(0L, ncol(Gm$X)))
  expect_identical(attr(G$X, "lpi"), attr(Gm$X, "lpi"))
  X <- .Call(gamgpu:::gg_xplan_build_r, S$X)
  expect_identical(dim(X), dim(Gm$X))
  expect_lt(max(abs(X - Gm$X)), 1e-11 * max(abs(Gm$X)))
  rows <- c(1L, 17L, nrow(X) %/% 2L, nrow(X))
  Xr <- gamgpu:::gf_x_rows(S, rows)
  expect_identical(attr(Xr, "lpi"), attr(Gm$X, "lpi"))
  expect_lt(max(abs(Xr - Gm$X[rows, , drop = FALSE])), 1e-11 * max(abs(Gm$X)))
}

test_that("gaulss(): the set-up from the facts is gam(fit = FALSE)'s, field by field", {
  d <- recipe_data(12000)
  expect_setup_as_gam(recipe_setups(
    list(y ~ s(x0, k = 6) + fac + offset(off), ~ s(x2, k = 5) + s(x1, by = fac, k = 5)),
    mgcv::gaulss(), d))
})

test_that("smooths in two linear predictors: one basis's facts, each its own label", {
  # (s(x0) and the thin plate s(x2) in both predictors: the second takes
  # the first's facts; the by-factor smooth differs by its k, so has its own)
  d <- recipe_data(12000)
  seen <- new.env()
  seen$n <- integer(0)
  suppressMessages(trace(gamgpu:::gam_basis_facts,
                         bquote(assign("n", c(.(seen)$n, length(specs)), envir = .(seen))),
                         print = FALSE,
                         where = asNamespace("gamgpu")))
  on.exit(suppressMessages(untrace(gamgpu:::gam_basis_facts, where = asNamespace("gamgpu"))))
  s <- recipe_setups(list(y ~ s(x0, k = 6) + s(x2, k = 5) + s(x1, by = fac, k = 4),
                          ~ s(x2, k = 5) + s(x0, k = 6) + s(x1, by = fac, k = 5)),
                     mgcv::gaulss(), d)
  expect_identical(seen$n, c(3L, 1L))
  expect_setup_as_gam(s)
  expect_identical(vapply(s$S$G$smooth, `[[`, "", "label"),
                   vapply(s$Gm$smooth, `[[`, "", "label"))
})

test_that("cox.ph(): the set-up from the facts is gam(fit = FALSE)'s, rows sorted by time", {
  d <- recipe_data(12000)
  s <- recipe_setups(t ~ s(x0, k = 6) + s(x1, by = fac, k = 5) + fac + offset(off),
                     mgcv::cox.ph(), d, weights = "ev")
  expect_setup_as_gam(s)
  # (the rows in the order of decreasing time, the frame kept in the data's)
  expect_identical(s$S$G$family$data$y.order, order(d$t, decreasing = TRUE))
  expect_identical(s$S$G$y, sort(d$t, decreasing = TRUE))
  expect_identical(s$S$mf_x$t, s$S$G$y)
  expect_identical(s$S$G$mf$t, d$t)
})

# the native route on the facts' set-up (X from its recipe) and on gam()'s
# own (X the matrix): linear predictors within tol of their range, the same
# smoothing parameters, REML score, EDFs; predict() and summary() alike
expect_recipe_fit <- function(formula, family, data, tol, weights = NULL, gam_too = FALSE,
                              epsilon = 1e-10) {
  fit <- function(facts) {
    local_recipe_route(facts)
    cl <- bquote(gam_gpu(.(formula), family = .(family), data = data, method = "REML",
                         device = "off", control = list(epsilon = .(epsilon), newton.tol = 1e-10)))
    if (!is.null(weights)) cl$weights <- as.name(weights)
    eval(cl)
  }
  g <- fit(TRUE)
  b <- fit(FALSE)
  expect_match(g$device$route, "native route")
  expect_identical(g$device$model_matrix, "recipe")
  expect_null(g$device$model_matrix_reason)
  expect_identical(b$device$model_matrix, "matrix")
  expect_match(b$device$model_matrix_reason, "gamgpu.basis_facts = TRUE")
  expect_identical(g$outer.info$conv, "full convergence")
  expect_true(all(c("model", "session", "start") %in% names(g$device$setup_split)))
  expect_equal(sum(g$device$setup_split), g$device$timings[["setup"]], tolerance = 1e-6)
  others <- list(b)
  if (gam_too) {
    cl <- bquote(mgcv::gam(.(formula), family = .(family), data = data, method = "REML",
                           control = mgcv::gam.control(epsilon = .(epsilon),
                                                       newton = list(conv.tol = 1e-10))))
    if (!is.null(weights)) cl$weights <- as.name(weights)
    others <- c(others, list(eval(cl)))
  }
  for (o in others) {
    lo <- as.matrix(o$linear.predictors)
    r <- apply(lo, 2, function(x) diff(range(x)))
    r <- ifelse(r > 0, r, pmax(apply(abs(lo), 2, max), 1))
    expect_lt(max(sweep(abs(as.matrix(g$linear.predictors) - lo), 2, r, "/")), tol)
    expect_lt(max(abs(log(g$sp / o$sp))), 1e-6)
    expect_equal(unname(g$gcv.ubre), unname(o$gcv.ubre), tolerance = 1e-9)
    expect_lt(max(abs(g$edf - o$edf)), 1e-6)
    expect_lt(max(abs(g$fitted.values - o$fitted.values)),
              1e-8 * max(1, abs(o$fitted.values)))
    nd <- data[c(3, 50, 900), ]
    pg <- predict(g, nd, type = "response", se.fit = TRUE)
    po <- predict(o, nd, type = "response", se.fit = TRUE)
    expect_lt(max(abs(pg$fit - po$fit)), 1e-8 * max(1, abs(po$fit)))
    expect_lt(max(abs(pg$se.fit - po$se.fit)), 1e-6 * max(1, abs(po$se.fit)))
    sg <- summary(g)
    so <- summary(o)
    expect_lt(max(abs(sg$s.table[, "edf"] - so$s.table[, "edf"])), 1e-6)
    expect_lt(max(abs(sg$p.coeff - so$p.coeff)), 1e-6 * max(1, abs(so$p.coeff)))
  }
  invisible(g)
}

test_that("gaulss() (an offset, a factor by, a parametric factor): the matrix set-up's fit", {
  d <- recipe_data(12000)
  # (at epsilon 1e-10 the inner Newton iteration of one or the other stops
  # short of it by rounding, max |gradient| / |penalized ll| 1e-9)
  expect_recipe_fit(list(y ~ s(x0, k = 6) + fac + offset(off), ~ s(x2, k = 5) +
                           s(x1, by = fac, k = 5)), mgcv::gaulss(), d, 2e-9, epsilon = 1e-9)
})

test_that("gevlss() (three linear predictors): the matrix set-up's fit", {
  d <- recipe_data(12000)
  expect_recipe_fit(list(yv ~ s(x0, k = 6) + s(x1, k = 5), ~ s(x2, k = 5), ~ 1),
                    mgcv::gevlss(), d, 1e-9)
})

test_that("cox.ph() (ties, a factor by, a parametric factor): the matrix set-up's and gam()'s fits", {
  d <- recipe_data(12000)
  g <- expect_recipe_fit(t ~ s(x0, k = 6) + s(x1, by = fac, k = 5) + fac, mgcv::cox.ph(), d,
                         1e-9, weights = "ev", gam_too = TRUE)
  # (the rows back in the data's order: the fit's y is the data's times)
  expect_identical(as.numeric(g$y), d$t)
})

test_that("where the facts' route does not apply, X is gam()'s matrix and the reason is said", {
  local_recipe_route()
  d <- recipe_data(12000)
  fam <- mgcv::gaulss()
  small <- gam_gpu(list(y ~ s(x0, k = 5), ~ s(x2, k = 5)), family = fam, data = d[1:2000, ],
                   method = "REML", device = "off")
  expect_identical(small$device$model_matrix, "matrix")
  expect_match(small$device$model_matrix_reason, "n <= 10000")
  # (an adaptive smooth: no facts for its basis)
  ad <- recipe_setups(list(y ~ s(x0, k = 20, bs = "ad"), ~ s(x2, k = 5)), fam, d)
  expect_identical(ad$S$source, "matrix")
  expect_match(ad$S$reason, "s\\(x0\\)")
  # (a CPU fit without the option)
  cpu <- recipe_setups(list(y ~ s(x0, k = 5), ~ s(x2, k = 5)), fam, d, facts = FALSE)
  expect_identical(cpu$S$source, "matrix")
  expect_match(cpu$S$reason, "options\\(gamgpu.basis_facts = TRUE\\)")
  expect_identical(cpu$S$X, cpu$Gm$X)
})

test_that("on a GPU the facts' set-up is the default, X built on the device: the CPU's fit", {
  skip_if_no_device()
  d <- recipe_data(12000)
  fits <- list(
    list(formula = list(y ~ s(x0, k = 6) + fac + offset(off), ~ s(x2, k = 5) +
                          s(x1, by = fac, k = 5)), family = mgcv::gaulss(), weights = NULL),
    list(formula = t ~ s(x0, k = 6) + s(x1, by = fac, k = 5) + fac, family = mgcv::cox.ph(),
         weights = "ev"))
  for (f in fits) {
    fit <- function(device, facts) {
      local_recipe_route(facts)
      cl <- bquote(gam_gpu(.(f$formula), family = .(f$family), data = d, method = "REML",
                           device = .(device), control = list(epsilon = 1e-9, newton.tol = 1e-10)))
      if (!is.null(f$weights)) cl$weights <- as.name(f$weights)
      eval(cl)
    }
    g <- fit("required", NA)
    b <- fit("off", TRUE)
    label <- f$family$family
    expect_identical(g$device$backend, "cuda", label = label)
    expect_identical(g$device$model_matrix, "recipe", label = label)
    expect_match(g$device$placement, "device", label = label)
    lo <- as.matrix(b$linear.predictors)
    r <- apply(lo, 2, function(x) diff(range(x)))
    expect_lt(max(sweep(abs(as.matrix(g$linear.predictors) - lo), 2, r, "/")), 1e-8,
              label = label)
    expect_lt(max(abs(log(g$sp / b$sp))), 1e-6, label = label)
  }
})
