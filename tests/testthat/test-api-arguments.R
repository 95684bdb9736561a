# Every argument that reaches gam_gpu() is honoured with bam()'s meaning or
# refused with a classed error (R/arguments.R).  Honoured ones: the fit on
# the CPU equals mgcv::bam(method = "fREML") on the same call (linear
# predictors within 1e-9 of their range, REML score within 1e-9 relative),
# and the argument changes the fit, so that ignoring it would fail.

suppressMessages(library(mgcv))

arg_data <- function(n = 400, seed = 21) {
  set.seed(seed)
  d <- gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$fac <- factor(sample(c("a", "b", "c"), n, TRUE), levels = c("a", "b", "c", "unused"))
  d$re <- factor(sample(1:8, n, TRUE), levels = 1:9)
  d$expo <- runif(n, 0.5, 2)
  d$off <- rnorm(n, 0, 0.3)
  d$w <- runif(n, 0.5, 2)
  d$yp <- rpois(n, exp(d$f / 8 + log(d$expo)))
  d$yb <- rbinom(n, 1, binomial()$linkinv((d$f - 8) / 4))
  d
}
d <- arg_data()

# Both fits converged and agree: linear predictors within tol of their
# range, REML scores within tol relative.
expect_bam_parity <- function(g, b, tol = 1e-9) {
  expect_s3_class(g, "gam_gpu")
  expect_true(g$converged)
  expect_identical(g$mgcv.conv$message, "full convergence")
  expect_lt(b$iter, 200)
  expect_identical(names(g$coefficients), names(b$coefficients))
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)), tol * r)
  expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]), tol * abs(b$gcv.ubre[[1]]))
  invisible(TRUE)
}

# The argument mattered: the fit differs from the one without it.
expect_changes <- function(g, g0) {
  expect_true(length(g$coefficients) != length(g0$coefficients) ||
                max(abs(g$linear.predictors - g0$linear.predictors)) >
                1e-6 * diff(range(g0$linear.predictors)))
}

tight_b <- function() gam.control(epsilon = 1e-14)
tight_g <- function() gam_gpu_control(epsilon = 1e-14)

# gam_gpu(..., device = "off"), called from the caller's frame: like bam(),
# gam_gpu() evaluates weights, subset and offset in the data and the
# formula's environment, where a wrapper's `...` is not visible
fit_g <- function(...) {
  cl <- match.call()
  cl[[1L]] <- quote(gamgpu::gam_gpu)
  cl$device <- "off"
  eval(cl, parent.frame())
}

## ---- the table --------------------------------------------------------------

test_that("every formal of mgcv's bam() and gam() is in the table, honoured or refused", {
  tab <- gamgpu:::.gg_arguments
  expect_false(anyDuplicated(tab$argument) > 0)
  expect_true(all(tab$status %in% c("honoured", "refused")))
  expect_true(all(nzchar(tab$note)))
  for (nm in union(names(formals(mgcv::bam)), names(formals(mgcv::gam)))) {
    i <- match(nm, tab$argument)
    expect_false(is.na(i), label = sprintf("mgcv formal '%s' is in the table", nm))
    if (!is.na(i)) expect_true(tab$status[i] %in% c("honoured", "refused"))
  }
  # honoured arguments are gam_gpu()'s formals or accepted in `...`;
  # refused ones are not formals; gam_gpu()'s formals are mgcv's or device
  ours <- setdiff(names(formals(gam_gpu)), "...")
  honoured <- tab$argument[tab$status == "honoured"]
  expect_setequal(honoured, union(intersect(ours, tab$argument), gamgpu:::dots_arguments()))
  expect_length(intersect(tab$argument[tab$status == "refused"], ours), 0)
  expect_identical(setdiff(ours, tab$argument), "device")
})

test_that("refused arguments are classed errors that say what to do", {
  tab <- gamgpu:::.gg_arguments
  refused <- setdiff(tab$argument[tab$status == "refused"], "...")
  expect_true(all(c("samfrac", "coef", "nei") %in% refused))
  for (nm in refused) {
    args <- list(y ~ s(x0), data = quote(d), device = "off")
    args[[nm]] <- 1
    e <- expect_error(do.call(gam_gpu, args), class = "gamgpu_unsupported_argument")
    expect_s3_class(e, "gamgpu_error")
    expect_match(conditionMessage(e), sprintf("'%s' is not supported", nm), fixed = TRUE)
    expect_identical(e$arguments, nm)
  }
  e <- expect_error(fit_g(y ~ s(x0), data = d, samfrac = 0.1),
                    class = "gamgpu_unsupported_argument")
  expect_match(conditionMessage(e), "drop samfrac", fixed = TRUE)
  # (min.sp and H are gam()'s: with bam()'s fREML, refused with what to do)
  for (a in list(list(min.sp = 0.1), list(H = diag(10)))) {
    e <- expect_error(do.call(fit_g, c(list(y ~ s(x0), data = d), a)),
                      class = "gamgpu_unsupported_argument")
    expect_match(conditionMessage(e), "method = \"REML\"", fixed = TRUE)
    expect_identical(e$arguments, names(a))
  }
})

test_that("optimizer: gam()'s default with gam()'s methods, the fit unchanged; anything else refused", {
  b <- fit_g(y ~ s(x0) + s(x1), data = d, method = "REML")
  for (opt in list("outer", c("outer", "newton"))) {
    g <- fit_g(y ~ s(x0) + s(x1), data = d, method = "REML", optimizer = opt)
    expect_identical(coef(g), coef(b))
    expect_identical(g$optimizer, c("outer", "newton"))
  }
  # beyond the additive model too (gam()'s outer Newton)
  b1 <- fit_g(yb ~ s(x0), data = d, family = binomial(), method = "ML")
  g1 <- fit_g(yb ~ s(x0), data = d, family = binomial(), method = "ML",
              optimizer = c("outer", "newton"))
  expect_identical(coef(g1), coef(b1))
  for (opt in list(c("outer", "bfgs"), "efs", "perf", c("outer", "optim"), c("outer", "nlm"))) {
    e <- expect_error(fit_g(y ~ s(x0), data = d, method = "REML", optimizer = opt),
                      class = "gamgpu_unsupported_argument")
    expect_identical(e$arguments, "optimizer")
    expect_match(conditionMessage(e), "c(\"outer\", \"newton\")", fixed = TRUE)
  }
  e <- expect_error(fit_g(y ~ s(x0), data = d, optimizer = c("outer", "newton")),
                    class = "gamgpu_unsupported_argument")
  expect_match(conditionMessage(e), "fREML", fixed = TRUE)
  for (bad in list(1, NA_character_, c("outer", "newton", "x")))
    expect_error(fit_g(y ~ s(x0), data = d, method = "REML", optimizer = bad),
                 class = "gamgpu_bad_input")
})

test_that("unknown and unnamed arguments are classed errors", {
  e <- expect_error(fit_g(y ~ s(x0), data = d, foo = 1), class = "gamgpu_unsupported_argument")
  expect_s3_class(e, "gamgpu_error")
  expect_match(conditionMessage(e), "'foo'", fixed = TRUE)
  expect_identical(e$arguments, "foo")
  # a prefix that bam() would have matched: named, with the full name
  e <- expect_error(fit_g(y ~ s(x0), data = d, drop.unused = FALSE),
                    class = "gamgpu_unsupported_argument")
  expect_match(conditionMessage(e), "did you mean 'drop.unused.levels'", fixed = TRUE)
  # a value beyond gam_gpu()'s formals, by position
  e <- expect_error(gam_gpu(y ~ s(x0), gaussian(), d, NULL, NULL, na.omit, NULL, "fREML",
                            NULL, NULL, 1, FALSE, "off", gam_gpu_control(), 99),
                    class = "gamgpu_unsupported_argument")
  expect_match(conditionMessage(e), "1 unnamed argument", fixed = TRUE)
  expect_error(fit_g(y ~ s(x0), data = d, scale = 1, scale = 2),
               class = "gamgpu_unsupported_argument")
  # several at once: all named in one error
  e <- expect_error(fit_g(y ~ s(x0), data = d, foo = 1, coef = 2),
                    class = "gamgpu_unsupported_argument")
  expect_setequal(e$arguments, c("foo", "coef"))
})

test_that("method: fREML, REML, ML, P-REML, P-ML, GCV.Cp and GACV.Cp only, anything else a classed error", {
  for (m in list("QNCV", "UBRE", "fre", "p-reml", 1, c("fREML", "REML"), NA_character_))
    expect_error(fit_g(y ~ s(x0), data = d, method = m), class = "gamgpu_bad_method")
  # mgcv 1.9's NCV, and its nei: refused by name, never another method
  expect_error(fit_g(y ~ s(x0), data = d, method = "NCV"), "NCV",
               class = "gamgpu_unsupported_method")
  expect_error(fit_g(y ~ s(x0), data = d, method = "NCV", nei = list(a = 1:10)),
               class = "gamgpu_unsupported_argument")
})

## ---- honoured, against bam() ----------------------------------------------

test_that("weights, subset and gamma as bam()", {
  f <- y ~ s(x0) + s(x1) + fac
  g0 <- fit_g(f, data = d)
  g <- fit_g(f, data = d, weights = w)
  expect_bam_parity(g, bam(f, data = d, weights = w))
  expect_changes(g, g0)
  g <- fit_g(f, data = d, subset = x2 > 0.3)
  expect_bam_parity(g, bam(f, data = d, subset = x2 > 0.3))
  expect_lt(length(g$y), nrow(d))
  g <- fit_g(f, data = d, gamma = 1.8)
  expect_bam_parity(g, bam(f, data = d, gamma = 1.8))
  expect_changes(g, g0)
  expect_identical(g$gamma, 1.8)
})

test_that("select and sp as bam()", {
  f <- y ~ s(x0) + s(x1) + s(x3)
  g0 <- fit_g(f, data = d)
  g <- fit_g(f, data = d, select = TRUE)
  expect_bam_parity(g, bam(f, data = d, select = TRUE))
  expect_changes(g, g0)
  g <- fit_g(f, data = d, sp = c(2, -1, 0.5))
  b <- bam(f, data = d, sp = c(2, -1, 0.5))
  expect_bam_parity(g, b)
  expect_changes(g, g0)
  expect_equal(g$sp, b$sp, tolerance = 1e-8)
  expect_equal(g$full.sp[c(1, 3)], c(2, 0.5), tolerance = 1e-12, ignore_attr = TRUE)
})

test_that("knots as bam()", {
  f <- y ~ s(x0, bs = "cr", k = 6) + s(x1)
  kn <- list(x0 = c(0, 0.1, 0.2, 0.3, 0.6, 1))
  g <- fit_g(f, data = d, knots = kn)
  expect_bam_parity(g, bam(f, data = d, knots = kn))
  expect_equal(g$smooth[[1]]$xp, kn$x0, ignore_attr = TRUE)
  expect_changes(g, fit_g(f, data = d))
})

# bam() 1.8-41's linear predictors and fitted values come from
# predict.bam() on the model frame, which ignores an offset given by the
# offset argument (and with offset() in the formula too, mixes them up); its
# fit, coefficients and b$offset use them.  gamgpu's linear predictors are
# X beta + the whole offset, as gam()'s: compare with bam's computed so.
with_offset <- function(b) {
  b$linear.predictors <- drop(predict(b, type = "lpmatrix") %*% coef(b)) + b$offset
  b
}

test_that("offset: the argument, offset() in the formula, and both", {
  f <- yp ~ s(x0) + s(x2)
  g0 <- fit_g(f, family = poisson, data = d, control = tight_g())
  g <- fit_g(f, family = poisson, data = d, offset = log(expo), control = tight_g())
  b <- bam(f, family = poisson, data = d, offset = log(expo), control = tight_b())
  expect_bam_parity(g, with_offset(b))
  expect_equal(g$linear.predictors, b$linear.predictors + log(d$expo), tolerance = 1e-9)
  expect_equal(g$fitted.values, exp(g$linear.predictors), tolerance = 1e-14)
  gg <- fit_g(y ~ s(x0), data = d, offset = off)
  expect_bam_parity(gg, with_offset(bam(y ~ s(x0), data = d, offset = off)))
  expect_changes(g, g0)
  fo <- yp ~ s(x0) + s(x2) + offset(log(expo))
  gf <- fit_g(fo, family = poisson, data = d, control = tight_g())
  expect_bam_parity(gf, bam(fo, family = poisson, data = d, control = tight_b()))
  expect_equal(gf$linear.predictors, g$linear.predictors, tolerance = 1e-9)
  gb <- fit_g(fo, family = poisson, data = d, offset = off, control = tight_g())
  bb <- bam(fo, family = poisson, data = d, offset = off, control = tight_b())
  expect_bam_parity(gb, with_offset(bb))
  expect_equal(gb$offset, log(d$expo) + d$off, tolerance = 1e-14)
  expect_changes(gb, gf)
})

test_that("na.action: na.omit, na.exclude, na.fail", {
  dn <- d
  dn$x1[c(3, 50, 77)] <- NA
  f <- y ~ s(x0) + s(x1)
  g <- fit_g(f, data = dn)
  expect_bam_parity(g, bam(f, data = dn))
  expect_length(g$y, nrow(d) - 3)
  g <- fit_g(f, data = dn, na.action = na.exclude)
  b <- bam(f, data = dn, na.action = na.exclude)
  expect_bam_parity(g, b)
  expect_s3_class(g$na.action, "exclude")
  expect_length(residuals(g), nrow(d))
  expect_equal(residuals(g), residuals(b), tolerance = 1e-9)
  expect_true(all(is.na(fitted(g)[c(3, 50, 77)])))
  e <- expect_error(fit_g(f, data = dn, na.action = na.fail), class = "gamgpu_missing_values")
  expect_s3_class(e, "gamgpu_error")
  expect_match(conditionMessage(e), "missing values", fixed = TRUE)
  expect_s3_class(fit_g(f, data = d, na.action = na.fail), "gam_gpu")
})

test_that("scale as bam(): known, the family's default, estimated", {
  f <- yp ~ s(x0) + s(x1)
  for (sc in c(0, 2, -1)) {
    g <- fit_g(f, family = poisson, data = d, scale = sc, control = tight_g())
    b <- bam(f, family = poisson, data = d, scale = sc, control = tight_b())
    expect_bam_parity(g, b)
    expect_identical(g$scale.estimated, b$scale.estimated)
    # bam() 1.8-41 sets $scale to TRUE when it estimates a scale (its
    # object$scale.est partially matches scale.estimated); sig2 is the scale
    expect_equal(g$scale, if (b$scale.estimated) b$sig2 else b$scale, tolerance = 1e-9)
    expect_equal(g$sig2, b$sig2, tolerance = 1e-9)
    expect_equal(sqrt(diag(g$Vp)), sqrt(diag(b$Vp)), tolerance = 1e-7)
  }
  expect_identical(fit_g(f, family = poisson, data = d, scale = -1)$scale.estimated, TRUE)
  expect_identical(fit_g(f, family = poisson, data = d)$scale, 1)
  fg <- y ~ s(x0) + s(x1)
  for (sc in c(0, 3, -1)) {
    g <- fit_g(fg, data = d, scale = sc)
    b <- bam(fg, data = d, scale = sc)
    expect_bam_parity(g, b)
    expect_identical(g$scale.estimated, sc <= 0)
    expect_equal(g$scale, if (b$scale.estimated) b$sig2 else b$scale, tolerance = 1e-9)
  }
  expect_identical(fit_g(fg, data = d, scale = 3)$scale, 3)
  expect_error(fit_g(fg, data = d, scale = NA), class = "gamgpu_bad_input")
  expect_error(fit_g(fg, data = d, scale = c(1, 2)), class = "gamgpu_bad_input")
})

test_that("paraPen as bam()", {
  f <- y ~ s(x0) + x1 + x2
  pp <- list(x1 = list(diag(1)), x2 = list(diag(1)))
  g <- fit_g(f, data = d, paraPen = pp)
  b <- bam(f, data = d, paraPen = pp)
  expect_bam_parity(g, b)
  expect_length(g$sp, 3)
  expect_equal(g$sp, b$sp, tolerance = 1e-6)
  expect_changes(g, fit_g(f, data = d))
})

test_that("drop.intercept as bam()", {
  f <- y ~ s(x0) + fac
  g <- fit_g(f, data = d, drop.intercept = TRUE)
  b <- bam(f, data = d, drop.intercept = TRUE)
  expect_bam_parity(g, b)
  expect_false("(Intercept)" %in% names(g$coefficients))
  expect_true("(Intercept)" %in% names(fit_g(f, data = d)$coefficients))
})

test_that("drop.unused.levels as bam()", {
  f <- y ~ s(x0) + s(re, bs = "re")
  g <- fit_g(f, data = d, drop.unused.levels = FALSE)
  b <- bam(f, data = d, drop.unused.levels = FALSE)
  expect_bam_parity(g, b)
  g0 <- fit_g(f, data = d)
  expect_identical(length(g$coefficients), length(g0$coefficients) + 1L)
  expect_bam_parity(g0, bam(f, data = d, drop.unused.levels = TRUE))
})

test_that("nthreads and chunk.size set the control settings; a conflict is an error", {
  f <- y ~ s(x0) + s(x1)
  g <- fit_g(f, data = d, nthreads = 2)
  expect_bam_parity(g, bam(f, data = d, nthreads = 2))
  expect_identical(g$control$nthreads, 2L)
  expect_identical(fit_g(f, data = d, nthreads = 1)$control$nthreads, 1L)
  expect_identical(fit_g(f, data = d, nthreads = 3,
                         control = gam_gpu_control(nthreads = 3))$control$nthreads, 3L)
  expect_identical(fit_g(f, data = d, nthreads = 3,
                         control = gam_gpu_control(trace = FALSE))$control$nthreads, 3L)
  expect_error(fit_g(f, data = d, nthreads = 2, control = gam_gpu_control(nthreads = 3)),
               class = "gamgpu_bad_control")
  expect_error(fit_g(f, data = d, nthreads = 2, control = list(nthreads = 3)),
               class = "gamgpu_bad_control")
  for (bad in list(0, 0.5, c(2, 1), NA, "2", 2^31))
    expect_error(fit_g(f, data = d, nthreads = bad), class = "gamgpu_bad_control")
  # chunk.size: bam's subsample for the bases (150 of 400 rows)
  g <- fit_g(f, data = d, chunk.size = 150)
  expect_bam_parity(g, bam(f, data = d, chunk.size = 150))
  expect_identical(g$control$chunk.size, 150L)
  expect_changes(g, fit_g(f, data = d))
  expect_error(fit_g(f, data = d, chunk.size = 150, control = list(chunk.size = 300)),
               class = "gamgpu_bad_control")
  expect_error(fit_g(f, data = d, chunk.size = -1), class = "gamgpu_bad_control")
})

test_that("use.chol = TRUE is what gamgpu does; FALSE is refused", {
  f <- y ~ s(x0)
  g <- fit_g(f, data = d, use.chol = TRUE)
  expect_bam_parity(g, bam(f, data = d, use.chol = TRUE))
  e <- expect_error(fit_g(f, data = d, use.chol = FALSE), class = "gamgpu_unsupported_argument")
  expect_match(conditionMessage(e), "Cholesky", fixed = TRUE)
})

test_that("gc.level runs gc() and changes nothing else", {
  f <- y ~ s(x0) + s(x1)
  g0 <- fit_g(f, data = d)
  calls <- new.env()
  calls$gc <- 0
  count <- bquote(assign("gc", .(calls)$gc + 1, envir = .(calls)))
  suppressMessages(trace(base::gc, count, print = FALSE, where = baseenv()))
  on.exit(suppressMessages(untrace(base::gc, where = baseenv())))
  g <- fit_g(f, data = d, gc.level = 1)
  expect_gte(calls$gc, 2)
  calls$gc <- 0
  fit_g(f, data = d, gc.level = 0)
  expect_identical(calls$gc, 0)
  expect_identical(g$linear.predictors, g0$linear.predictors)
  expect_bam_parity(g, bam(f, data = d, gc.level = 1))
  expect_error(fit_g(f, data = d, gc.level = 3), class = "gamgpu_bad_input")
})

test_that("discrete = TRUE fits exactly, says so, and matches bam(discrete = FALSE)", {
  # mgcv's own example from ?missing.data: missing covariates replaced by
  # by-variables of ordered factors and random effects per missing value
  n <- 350
  set.seed(2)
  dat <- gamSim(1, n = n, scale = 3, verbose = FALSE)
  drop <- sample(1:n, 300)
  for (i in 2:5) dat[drop[1:75 + (i - 2) * 75], i] <- NA
  dname <- names(dat)[2:5]
  dat1 <- dat
  for (i in 1:4) {
    by.name <- paste("m", dname[i], sep = "")
    dat1[[by.name]] <- is.na(dat1[[dname[i]]])
    dat1[[dname[i]]][dat1[[by.name]]] <- mean(dat1[[dname[i]]], na.rm = TRUE)
    lev <- rep(1, n)
    lev[dat1[[by.name]]] <- 1:sum(dat1[[by.name]])
    id.name <- paste("id", dname[i], sep = "")
    dat1[[id.name]] <- factor(lev)
    dat1[[by.name]] <- as.numeric(dat1[[by.name]])
  }
  f <- y ~ s(x0, by = ordered(!mx0)) + s(x1, by = ordered(!mx1)) +
    s(x2, by = ordered(!mx2)) + s(x3, by = ordered(!mx3)) +
    s(idx0, bs = "re", by = mx0) + s(idx1, bs = "re", by = mx1) +
    s(idx2, bs = "re", by = mx2) + s(idx3, bs = "re", by = mx3)
  b <- bam(f, data = dat1)
  msgs <- list()
  g <- withCallingHandlers(fit_g(f, data = dat1, discrete = TRUE),
                           message = function(m) {
                             msgs[[length(msgs) + 1L]] <<- m
                             invokeRestart("muffleMessage")
                           })
  expect_length(msgs, 1)
  expect_s3_class(msgs[[1]], c("gamgpu_discrete_exact", "gamgpu_message", "message",
                               "condition"), exact = TRUE)
  expect_match(conditionMessage(msgs[[1]]), "exact fit", fixed = TRUE)
  expect_match(g$device$discrete, "^exact fit")
  expect_bam_parity(g, b)
  expect_null(fit_g(y ~ s(x0), data = dat1, discrete = FALSE)$device$discrete)
  expect_message(fit_g(y ~ s(x0), data = dat1, discrete = TRUE), class = "gamgpu_discrete_exact")
  expect_error(fit_g(f, data = dat1, discrete = NA), class = "gamgpu_bad_input")
})

test_that("fit = FALSE returns bam(fit = FALSE)'s setup object; G fits it", {
  f <- y ~ s(x0) + s(x1) + fac
  G <- fit_g(f, data = d, fit = FALSE)
  Gb <- bam(f, data = d, fit = FALSE)
  expect_s3_class(G, "bam.prefit")
  expect_setequal(names(G), names(Gb))
  for (nm in setdiff(names(Gb), "cl")) expect_identical(G[[nm]], Gb[[nm]], label = nm)
  # sp and scale reach the setup object as in bam()
  Gs <- fit_g(f, data = d, fit = FALSE, sp = c(2, -1), scale = 4)
  Gsb <- bam(f, data = d, fit = FALSE, sp = c(2, -1), scale = 4)
  for (nm in c("lsp0", "L", "sp", "scale")) expect_identical(Gs[[nm]], Gsb[[nm]], label = nm)
  # G: the fit without redoing the setup, as bam(G = G)
  g <- fit_g(G = G)
  expect_bam_parity(g, bam(G = Gb))
  expect_identical(g$linear.predictors, fit_g(f, data = d)$linear.predictors)
  g <- fit_g(G = G, sp = c(-1, 0.3), scale = 2)
  expect_bam_parity(g, bam(G = Gb, sp = c(-1, 0.3), scale = 2))
  expect_false(g$scale.estimated)
  gp <- fit_g(G = fit_g(yp ~ s(x0), family = poisson, data = d, fit = FALSE),
              control = tight_g())
  expect_identical(gp$family$family, "poisson")
  expect_bam_parity(gp, bam(G = bam(yp ~ s(x0), family = poisson, data = d, fit = FALSE),
                            control = tight_b()))
  # what G fixes cannot be given again; discretized setups are refused
  e <- expect_error(fit_g(G = G, data = d), class = "gamgpu_unsupported_argument")
  expect_match(conditionMessage(e), "'data'", fixed = TRUE)
  expect_error(fit_g(G = G, family = poisson), class = "gamgpu_unsupported_argument")
  expect_error(fit_g(G = G, fit = FALSE), class = "gamgpu_unsupported_argument")
  Gd <- bam(f, data = d, fit = FALSE, discrete = TRUE)
  expect_error(fit_g(G = Gd), class = "gamgpu_unsupported_argument")
  expect_error(fit_g(G = list(1)), class = "gamgpu_bad_input")
  expect_error(fit_g(f, data = d, fit = NA), class = "gamgpu_bad_input")
})
