# gg_setup() (R/setup.R): the same setup object as bam(..., fit = FALSE),
# component by component, on the lean path (a chunk.size well below n, so
# that the bases come from mini.mf()'s subsample); the same RNG state after;
# bam() itself where the lean path does not apply; identical gam_gpu() fits.

lean_mgcv <- gamgpu:::lean_setup_status()$ok

setup_data <- function(n = 30000, seed = 11) {
  set.seed(seed)
  dat <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  dat$fac <- factor(sample(letters[1:4], n, TRUE))
  dat$rare <- factor(ifelse(seq_len(n) %in% c(17, 29000, 29001), "r",
                            sample(c("p", "q"), n, TRUE)))
  dat$w <- runif(n, 0.5, 2)
  dat$off <- rnorm(n, 0, 0.1)
  dat$xi <- sample(0:50, n, TRUE)                  # an integer covariate
  dat$z0 <- ifelse(runif(n) < 0.6, 0, rnorm(n))    # median 0
  dat$z0[dat$z0 == 0 & runif(n) < 0.5] <- -0
  dat$yb <- rbinom(n, 1, 0.4)
  dat$succ <- rbinom(n, 5, 0.3)
  dat$fail <- 5 - dat$succ
  dat$yp <- rpois(n, exp(dat$f / 8))
  dat$ch <- sample(c("u", "v", "w"), n, TRUE)      # a character variable
  dat$lg <- runif(n) < 0.3                         # a logical one
  dat
}
dat <- setup_data()

# The call gam_gpu() hands to gg_setup() (see gam_gpu()).
setup_call <- function(formula, family = gaussian(), chunk.size = 2000L, ...) {
  as.call(c(list(quote(mgcv::bam), formula = formula), list(...),
            list(family = family, method = "fREML", fit = FALSE,
                 chunk.size = as.integer(chunk.size))))
}

quietly <- function(expr) withCallingHandlers(expr, warning = function(w) {
  if (grepl("chunk.size", conditionMessage(w), fixed = TRUE)) invokeRestart("muffleWarning")
})

# The lean setup equals bam(fit = FALSE) in every component, leaves the RNG
# as bam() does, and gg_setup() returns it.
expect_lean_identical <- function(mc, env = parent.frame()) {
  set.seed(99)
  Gb <- quietly(eval(mc, env))
  rb <- .Random.seed
  set.seed(99)
  expect_true(gamgpu:::lean_setup_ok(mc, env))
  Gl <- quietly(gamgpu:::lean_setup(mc, env))
  expect_identical(.Random.seed, rb)
  expect_false(is.null(Gl))
  expect_identical(names(Gl), names(Gb))
  for (nm in names(Gb)) expect_identical(Gl[[nm]], Gb[[nm]], label = paste0("G$", nm))
  # the components the fit reads, by name, so that a failure says which
  for (nm in c("smooth", "X", "S", "off", "L", "lsp0", "sp", "term.names", "mf", "y",
               "w", "offset", "var.summary", "xlevels", "contrasts", "pterms", "nsdf",
               "cmX", "na.action", "assign", "terms", "formula", "pred.formula", "min.edf"))
    expect_identical(Gl[[nm]], Gb[[nm]], label = paste0("G$", nm))
  expect_identical(attr(Gl$mf, "na.action"), attr(Gb$mf, "na.action"))
  expect_identical(Gl, Gb)
  set.seed(99)
  expect_identical(quietly(gamgpu:::gg_setup(mc, env)), Gb)
  invisible(Gl)
}

test_that("cr and tp smooths: the lean setup is bam(fit = FALSE)'s", {
  skip_if_not(lean_mgcv)
  G <- expect_lean_identical(setup_call(y ~ s(x0) + s(x1, bs = "cr") + s(x2) + s(x3, bs = "cr"),
                                        data = quote(dat)))
  expect_lt(nrow(G$X), nrow(G$mf))                 # the subsample path ran
  expect_lean_identical(setup_call(y ~ s(x0, bs = "cr", k = 6) + s(x1), data = quote(dat),
                                   knots = quote(list(x0 = seq(0, 1, length.out = 6))),
                                   select = TRUE, gamma = 1.4))
})

test_that("by-factor smooths, te(), parametric factors and integer covariates", {
  skip_if_not(lean_mgcv)
  expect_lean_identical(setup_call(y ~ fac + s(x0, by = fac) + te(x1, x2) + s(xi, k = 5) + rare,
                                   data = quote(dat)))
  expect_lean_identical(setup_call(y ~ s(x0) + ti(x1) + ti(x2) + ti(x1, x2) + z0 +
                                     s(x3, bs = "cs"), data = quote(dat)))
  expect_lean_identical(setup_call(y ~ ch + lg + s(x0, bs = "cr") + s(x1),
                                   data = quote(dat)))
})

test_that("weights, offset = and offset() in the formula", {
  skip_if_not(lean_mgcv)
  expect_lean_identical(setup_call(y ~ s(x0) + s(x1, bs = "cr") + offset(off), data = quote(dat),
                                   weights = quote(w), offset = quote(0.5 * x3)))
  expect_lean_identical(setup_call(y ~ s(x0) + offset(log(w)), data = quote(dat)))
})

test_that("AR1 residuals: AR.start is a column of the frame, rho does not reach the setup", {
  skip_if_not(lean_mgcv)
  G <- expect_lean_identical(setup_call(y ~ s(x0) + s(x1, bs = "cr"), data = quote(dat),
                                        rho = 0.5, AR.start = quote(lg)))
  expect_identical(G$mf[["(AR.start)"]], dat$lg)
  d2 <- dat
  d2$lg[c(5, 900)] <- NA
  expect_lean_identical(setup_call(y ~ s(x0) + fac, data = quote(d2), rho = 0.3,
                                   AR.start = quote(lg), weights = quote(w)))
})

test_that("missing values with na.omit and na.exclude, and subset =", {
  skip_if_not(lean_mgcv)
  d2 <- dat
  d2$x1[c(3, 500, 20000)] <- NA
  d2$fac[c(7, 8)] <- NA
  d2$y[9] <- NA
  expect_lean_identical(setup_call(y ~ fac + s(x0) + s(x1, bs = "cr"), data = quote(d2)))
  expect_lean_identical(setup_call(y ~ fac + s(x0) + s(x1), data = quote(d2),
                                   na.action = quote(na.exclude)))
  expect_lean_identical(setup_call(y ~ fac + s(x0) + s(x2), data = quote(d2),
                                   subset = quote(x3 > 0.2)))
  expect_lean_identical(setup_call(y ~ s(x0) + s(x2, by = fac), data = quote(dat),
                                   subset = quote(1:12000), weights = quote(w)))
})

test_that("row names, and transformed variables in the parametric part", {
  skip_if_not(lean_mgcv)
  d3 <- dat[sample(nrow(dat)), ]                   # non-sequential integer row names
  expect_lean_identical(setup_call(y ~ s(x0) + s(x1, by = fac), data = quote(d3)))
  rownames(d3) <- paste0("r", seq_len(nrow(d3)))   # character row names
  expect_lean_identical(setup_call(y ~ s(x0) + fac, data = quote(d3), subset = quote(x2 > 0.5)))
  expect_lean_identical(setup_call(y ~ s(x0) + poly(x1, 2) + I(x2^2) + log(x3 + 1),
                                   data = quote(dat)))
})

test_that("binomial counts, poisson, and variables from the formula's environment", {
  skip_if_not(lean_mgcv)
  expect_lean_identical(setup_call(cbind(succ, fail) ~ s(x0) + s(x1, bs = "cr") + fac,
                                   family = binomial(), data = quote(dat)))
  expect_lean_identical(setup_call(yp ~ s(x0) + s(x2), family = poisson(), data = quote(dat)))
  local({
    yy <- dat$y; u <- dat$x0; v <- dat$x2
    expect_lean_identical(setup_call(yy ~ s(u) + s(v, bs = "cr")))
  })
})

test_that("n <= chunk.size, and a chunk.size below the number of coefficients", {
  skip_if_not(lean_mgcv)
  small <- dat[1:1500, ]
  G <- expect_lean_identical(setup_call(y ~ s(x0) + s(x1) + fac, data = quote(small)))
  expect_identical(nrow(G$X), 1500L)
  expect_lean_identical(setup_call(y ~ s(x0) + s(x1) + s(x2), data = quote(dat),
                                   chunk.size = 20L))
  expect_lean_identical(setup_call(y ~ s(x0) + s(x1) + s(x2), data = quote(small),
                                   chunk.size = 20L))
})

test_that("the RNG state after the setup is bam()'s, whatever the RNG kinds", {
  skip_if_not(lean_mgcv)
  old <- RNGkind()
  on.exit(suppressWarnings(RNGkind(old[1], old[2], old[3])), add = TRUE)
  for (kinds in list(c("Mersenne-Twister", "Inversion", "Rejection"),
                     c("L'Ecuyer-CMRG", "Box-Muller", "Rounding"),
                     c("Wichmann-Hill", "Inversion", "Rounding"))) {
    suppressWarnings(RNGkind(kinds[1], kinds[2], kinds[3]))
    for (f in list(y ~ s(x0) + s(x1), y ~ s(x0, by = fac) + rare)) {
      mc <- setup_call(f, data = quote(dat))
      set.seed(5)
      rnorm(1)                                     # a Box-Muller value in hand
      Gb <- eval(mc)
      after_b <- list(.Random.seed, RNGkind(), runif(3), rnorm(3))
      set.seed(5)
      rnorm(1)
      Gl <- gamgpu:::lean_setup(mc, environment())
      after_l <- list(.Random.seed, RNGkind(), runif(3), rnorm(3))
      expect_identical(after_l, after_b)
      expect_identical(Gl, Gb)
    }
  }
})

test_that("the median and mini.mf() pieces equal mgcv's", {
  skip_if_not(lean_mgcv)
  set.seed(3)
  for (n in c(1:7, 10, 11, 1000, 1001)) for (x in list(runif(n), round(rnorm(n)),
                                                      c(NA, runif(n)), sample(c(0, -0, 1), n, TRUE)))
    expect_identical(gamgpu:::lean_median(x),
                     as.numeric(quantile(x, probs = 0.5, type = 3, na.rm = TRUE)))
  expect_identical(gamgpu:::lean_median(c(NA_real_, NA_real_)),
                   as.numeric(quantile(c(NA_real_, NA_real_), 0.5, type = 3, na.rm = TRUE)))
  n <- 20000
  mf <- data.frame(a = runif(n), b = sample(1:9, n, TRUE), f = factor(sample(letters, n, TRUE)),
                   g = factor(ifelse(seq_len(n) == n, "last", "x")), l = runif(n) > 0.5,
                   ch = sample(c("u", "v"), n, TRUE), stringsAsFactors = FALSE)
  mf$m <- cbind(runif(n), runif(n))
  mf$a[10] <- NA
  for (cs in c(100, 5000, 30000)) {
    set.seed(8)
    a <- suppressWarnings(mgcv:::mini.mf(mf, cs))   # min() of the column with NA
    ra <- .Random.seed
    set.seed(8)
    b <- suppressWarnings(gamgpu:::lean_mini_mf(mf, cs))
    expect_identical(b, a)
    expect_identical(.Random.seed, ra)
  }
})

test_that("the C min, median and max of a column are R's, for any thread count", {
  r_route <- function(x) c(min(x, na.rm = TRUE),
                           as.numeric(quantile(x, probs = 0.5, type = 3, na.rm = TRUE)),
                           max(x, na.rm = TRUE))
  set.seed(5)
  n <- 200001                                        # four ranges of rows at 3+ threads
  cols <- list(runif(n), rnorm(n) * 1e300, round(rnorm(n, 3)), -rexp(n),
               c(rnorm(n - 4), Inf, -Inf, NA, NaN),
               c(.Machine$double.xmin * runif(n - 1) / 1e6, 1),  # subnormals
               sample(c(-2, 5, 7), n, TRUE), rep(pi, n),
               c(runif(n), NA)[-1], c(1, 2))
  for (x in cols) for (th in c(1L, 3L, 16L)) {
    expect_identical(gamgpu:::lean_range_median(x, th), r_route(x))
    s <- .Call(gamgpu:::gg_column_summary_r, x, th)
    expect_identical(s[[1L]], as.numeric(sum(!is.na(x))))
  }
  # from 2^20 rows the median is selected among the values a sample's
  # bracket gathers in one pass; a sample that misleads (every 32nd row
  # small, the strided sample sees only them) falls back to the radix
  # selection: both exact
  n <- 2^21 + 3
  stride_trap <- 1e6 + seq_len(2^21)                 # the sample's rows are 32 apart
  stride_trap[(0:65535) * 32 + 1] <- -1
  big <- list(runif(n), round(rnorm(n) * 3), as.numeric(seq_len(n)), rev(rnorm(n)),
              stride_trap, c(rep(NA, 3 * n %/% 5), rnorm(n - 3 * n %/% 5)),
              rep(2.5, n), sample(c(1, 2), n, TRUE), c(rnorm(n - 1), Inf))
  for (x in big) {
    ref <- r_route(x)
    for (th in c(1L, 3L, 16L))
      expect_identical(gamgpu:::lean_range_median(x, th), ref)
  }
  # a zero median and a column of NAs take R's route, with R's result
  z <- sample(c(0, -0, 1, -1), 1001, TRUE, prob = c(0.4, 0.4, 0.1, 0.1))
  expect_identical(gamgpu:::lean_range_median(z, 2L), r_route(z))
  expect_identical(suppressWarnings(gamgpu:::lean_range_median(c(NA_real_, NaN), 2L)),
                   suppressWarnings(r_route(c(NA_real_, NaN))))
  expect_error(.Call(gamgpu:::gg_column_summary_r, 1:3, 1L), class = "gamgpu_bad_input")
})

test_that("the C first extremes are which.min()'s and which.max()'s, for any thread count", {
  set.seed(6)
  n <- 200001
  x <- round(runif(n) * 50)                         # ties at both ends, in every range
  xn <- x; xn[c(3, 150000)] <- c(NA, NaN)
  for (th in c(1L, 3L, 16L)) {
    expect_identical(.Call(gamgpu:::gg_column_extremes_r, x, FALSE, th),
                     c(0, which.min(x), which.max(x)))
    expect_identical(.Call(gamgpu:::gg_column_extremes_r, xn, FALSE, th),
                     c(2, which.min(xn), which.max(xn)))
    expect_identical(.Call(gamgpu:::gg_column_extremes_r, xn, TRUE, th), c(2, NA, NA))
  }
  expect_identical(.Call(gamgpu:::gg_column_extremes_r, c(NA_real_, NaN), FALSE, 2L), c(2, NA, NA))
  # mini.mf() on rows enough for several threads
  mf <- data.frame(a = x, b = runif(n), f = factor(sample(letters[1:5], n, TRUE)))
  set.seed(8)
  a <- mgcv:::mini.mf(mf, 5000)
  set.seed(8)
  expect_identical(gamgpu:::lean_mini_mf(mf, 5000, nthreads = 3L), a)
  expect_true(gamgpu:::lean_complete(mf, 3L))
  mf$b[n] <- NA
  expect_false(gamgpu:::lean_complete(mf, 3L))
  for (v in list(x, xn, matrix(xn, ncol = 3), c(1L, NA), 1:3, factor(c("a", NA)),
                 c("u", NA), c(Inf, -Inf), NaN, numeric(0)))
    for (th in c(1L, 3L)) expect_identical(gamgpu:::any_missing(v, th), anyNA(v))
})

test_that("the C match() of a few values in many rows and the C rep() are R's", {
  set.seed(11)
  n <- 300001
  x <- round(runif(n) * 5000) / 7 - 300         # repeated values, in every thread's rows
  x[c(1, 2, 150000, n)] <- c(-0, NaN, 1e300, -1e300)   # (NaN: a row no value matches)
  v <- unique(c(sample(unique(x), 500), 0, 1e300, -1e300, 0.5, 1e301))   # 0.5, 1e301 in no row
  xi <- sample(1:40000, n, TRUE)
  vi <- c(sample(unique(xi), 300), 40001L)
  for (th in c(1L, 3L, 16L)) {
    expect_identical(.Call(gamgpu:::gg_first_rows_r, x, v, th), as.double(match(v, x)))
    expect_identical(.Call(gamgpu:::gg_first_rows_r, xi, vi, th), as.double(match(vi, xi)))
    for (val in c(0, 1, -2.5))
      expect_identical(gamgpu:::lean_rep(val, n, th), rep(val, n))
  }
  # an integer NA in x matches no value, as in match() (INT_MIN is NA's bits)
  xna <- c(NA, 5L, -2147483647L, NA)
  vna <- c(-2147483648, 5, -2147483647)
  expect_identical(.Call(gamgpu:::gg_first_rows_r, xna, vna, 1L), as.double(match(vna, xna)))
  expect_identical(.Call(gamgpu:::gg_first_rows_r, x, numeric(0), 2L), numeric(0))
  expect_identical(gamgpu:::lean_rep(1, 0, 2L), numeric(0))
  expect_error(.Call(gamgpu:::gg_first_rows_r, x, c(1, 1), 2L), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_first_rows_r, x, c(1, NA), 2L), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_first_rows_r, "a", 1, 2L), class = "gamgpu_bad_input")
  expect_error(gamgpu:::lean_rep(1, -1, 2L), class = "gamgpu_bad_input")
  expect_error(gamgpu:::lean_rep(NA, 3, 2L), class = "gamgpu_bad_input")
})

test_that("the response's variance over threads is var()'s to rounding, for any thread count", {
  set.seed(12)
  n <- 2^21 + 17
  for (y in list(rnorm(n, 1e4), rbinom(n, 1, 0.3) + 0, rexp(n) * 1e-200, rep(2, n))) {
    v <- vapply(c(1L, 3L, 16L), function(th) gamgpu:::lean_var(y, th), 0)
    expect_identical(v[2:3], v[c(1, 1)])
    # (2e6 long double additions in another order: R's to ~1e-15 relative)
    expect_lte(abs(v[1] - var(y)), 1e-13 * var(y))
  }
  expect_identical(gamgpu:::lean_var(c(1, 2, 4), 2L), var(c(1, 2, 4)))
  expect_error(.Call(gamgpu:::gg_variance_r, 1, 2L), class = "gamgpu_bad_input")
})

test_that("the automatic row names are reset as the expanded 1:n would be", {
  for (n in c(1L, 2L, 3L, 50L)) for (rn in list(c(NA_integer_, -n), c(NA_integer_, n))) {
    a <- data.frame(v = seq_len(n))
    attr(a, "row.names") <- rn
    b <- a
    attr(b, "row.names") <- attr(b, "row.names")
    expect_identical(gamgpu:::lean_reset_row_names(a), b)
  }
  a <- data.frame(v = 1:4, row.names = c("p", "q", "r", "s"))
  expect_identical(gamgpu:::lean_reset_row_names(a), a)
})

test_that("the lean path is taken where its probe found bam()'s setup reproduced", {
  # (mgcv 1.8-41 and 1.9-3 both pass the probe: CI runs this file under each)
  st <- gamgpu:::lean_setup_status()
  expect_true(st$ok, label = st$why)
  mc <- setup_call(y ~ s(x0), data = quote(dat))
  expect_identical(gamgpu:::lean_setup_ok(mc, environment()), lean_mgcv)
  # a release whose bam() the probe does not match turns the lean path off,
  # the reason kept, and gg_setup() is bam(fit = FALSE) itself
  lean <- get(".gg_lean", envir = asNamespace("gamgpu"))
  old <- as.list(lean)
  restore <- function() { rm(list = ls(lean), envir = lean); list2env(old, lean) }
  lean$steps <- list(fix_family = !lean$steps$fix_family, call_names = lean$steps$call_names)
  G_other <- tryCatch(gamgpu:::lean_setup(mc, environment()), finally = restore())
  expect_false(identical(G_other, eval(mc)))
  probe_with <- function(fn) {
    f <- gamgpu:::lean_probe
    environment(f) <- list2env(list(lean_setup = fn), parent = asNamespace("gamgpu"))
    f()
  }
  st <- probe_with(function(mc, env) { G <- eval(mc, env); G$cmX <- G$cmX + 1; G })
  expect_false(st$ok)
  expect_match(st$why, "differs from the lean setup in cmX")
  lean$status <- st
  tryCatch({
    expect_false(gamgpu:::lean_setup_ok(mc, environment()))
    expect_identical(gamgpu:::gg_setup(mc, environment()), eval(mc))
  }, finally = restore())
  expect_true(gamgpu:::lean_setup_ok(mc, environment()))
})

test_that("outside the lean path gg_setup() is bam()", {
  mc <- setup_call(y ~ s(x0) + x1, data = quote(dat), paraPen = quote(list(x1 = list(diag(1)))))
  expect_false(gamgpu:::lean_setup_ok(mc, environment()))
  expect_identical(gamgpu:::gg_setup(mc, environment()), eval(mc))
  mc <- setup_call(y ~ s(x0) + x1, data = quote(dat), drop.intercept = TRUE)
  expect_false(gamgpu:::lean_setup_ok(mc, environment()))
  expect_identical(gamgpu:::gg_setup(mc, environment()), eval(mc))
  mc <- setup_call(y ~ s(x0), data = quote(dat), na.action = quote(na.fail))
  expect_null(gamgpu:::lean_setup(mc, environment()))
  expect_identical(gamgpu:::gg_setup(mc, environment()), eval(mc))
  mc <- setup_call(y ~ s(x0), data = quote(dat))
  old <- options(gamgpu.lean_setup = FALSE)
  on.exit(options(old), add = TRUE)
  expect_identical(gamgpu:::gg_setup(mc, environment()), eval(mc))
  # errors are bam()'s own
  small <- dat[1:30, ]
  mc <- setup_call(y ~ s(x0, k = 50), data = quote(small))
  options(gamgpu.lean_setup = TRUE)
  eb <- tryCatch(eval(mc), error = conditionMessage)
  expect_identical(tryCatch(gamgpu:::gg_setup(mc, environment()), error = conditionMessage), eb)
})

test_that("gam_gpu() fits are identical with the lean setup and with bam()'s", {
  ctl <- gam_gpu_control(chunk.size = 2000L)
  d2 <- dat
  d2$x2[c(4, 40, 400)] <- NA
  fits <- function() list(
    gam_gpu(y ~ s(x0) + s(x1, bs = "cr") + s(x2) + s(x3, bs = "cr"), data = dat,
            control = ctl, device = "off"),
    gam_gpu(y ~ fac + s(x0, by = fac) + te(x1, x2) + offset(off), data = dat,
            weights = w, control = ctl, device = "off"),
    gam_gpu(yb ~ s(x0) + s(x2) + fac, family = binomial, data = d2, subset = x3 > 0.1,
            control = ctl, device = "off"),
    gam_gpu(yp ~ s(x0) + s(x1, bs = "cr"), family = poisson, data = dat, offset = log(w),
            control = ctl, device = "off"))
  old <- options(gamgpu.lean_setup = FALSE)
  on.exit(options(old), add = TRUE)
  set.seed(1)
  before <- fits()
  r_before <- .Random.seed
  options(gamgpu.lean_setup = TRUE)
  # count the fits whose setup came from the lean path (not bam() after it)
  took <- new.env()
  took$n <- 0L
  suppressMessages(trace("lean_setup", where = asNamespace("gamgpu"), print = FALSE,
                         exit = bquote(if (!is.null(returnValue()))
                           assign("n", .(took)$n + 1L, envir = .(took)))))
  on.exit(suppressMessages(untrace("lean_setup", where = asNamespace("gamgpu"))), add = TRUE)
  set.seed(1)
  after <- fits()
  expect_identical(.Random.seed, r_before)
  if (lean_mgcv) expect_identical(took$n, length(after))
  for (i in seq_along(before)) {
    expect_identical(after[[i]]$coefficients, before[[i]]$coefficients)
    expect_identical(after[[i]]$sp, before[[i]]$sp)
    expect_identical(after[[i]]$fitted.values, before[[i]]$fitted.values)
    a <- after[[i]]
    b <- before[[i]]
    a$device <- b$device <- NULL
    expect_identical(a, b)
  }
})

test_that("extended families: the lean setup is bam(fit = FALSE)'s", {
  # bam() gives an extended family fix.family.link()'s extra link functions:
  # new closures each time, so the family is compared without environments
  for (fam in list(mgcv::nb(), mgcv::tw(), mgcv::ocat(R = 3), mgcv::scat(link = "log"))) {
    mc <- setup_call(y ~ s(x0) + s(x1, bs = "cr"), family = fam, data = quote(dat))
    set.seed(99)
    Gb <- quietly(eval(mc))
    expect_true(gamgpu:::lean_setup_ok(mc, environment()))
    set.seed(99)
    Gl <- quietly(gamgpu:::lean_setup(mc, environment()))
    expect_identical(names(Gl), names(Gb))
    for (nm in setdiff(names(Gb), "family"))
      expect_identical(Gl[[nm]], Gb[[nm]], label = paste0("G$", nm))
    expect_true(Gl$efam)
    expect_true(identical(Gl$family, Gb$family, ignore.environment = TRUE))
    expect_true(is.function(Gl$family$g2g))
  }
})
