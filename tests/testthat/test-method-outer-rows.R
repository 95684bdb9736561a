# The outer iteration's rows in C (src/engine/outer_rows.c,
# inst/include/outer_math.h)
# against gam.fit3's formulas written in R with mgcv's own derivatives of
# link and variance (fix.family.link, fix.family.var), for every family and
# link the outer methods take; and the derivative products against the
# same products formed in R.

# gam.fit3's Newton (or Fisher) weights and their derivatives in eta at mu,
# with mgcv's functions, term by term as gam.fit3 writes them
ref_rows <- function(fam, y, pw, mu, fisher) {
  g1 <- 1 / fam$mu.eta(fam$linkfun(mu))
  V <- fam$variance(mu)
  a <- fam$dvar(mu) / V
  b <- fam$d2link(mu) / g1
  a1 <- fam$d2var(mu) / V - a^2
  b1 <- fam$d3link(mu) / g1 - b^2
  q <- 1 / (V * g1^2)
  q1 <- -q * (a + 2 * b)
  q2 <- q * ((a + 2 * b)^2 - (a1 + 2 * b1))
  if (fisher) {
    al <- 1
    al1 <- al2 <- 0
  } else {
    a2 <- fam$d3var(mu) / V - 3 * a * fam$d2var(mu) / V + 2 * a^3
    b2 <- fam$d4link(mu) / g1 - 3 * b * fam$d3link(mu) / g1 + 2 * b^3
    cc <- y - mu
    al <- 1 + cc * (a + b)
    al[al == 0] <- .Machine$double.eps
    al1 <- -(a + b) + cc * (a1 + b1)
    al2 <- -2 * (a1 + b1) + cc * (a2 + b2)
  }
  wm <- pw * (al1 * q + al * q1)
  wmm <- pw * (al2 * q + 2 * al1 * q1 + al * q2)
  res <- y - mu
  a1v <- fam$dvar(mu)
  pm <- pw * (-2 * res / V - res^2 * a1v / V^2)
  pmm <- pw * (2 / V + 4 * res * a1v / V^2 - res^2 * fam$d2var(mu) / V^2 +
                 2 * res^2 * a1v^2 / V^3)
  list(w = pw * al * q, w1 = wm / g1, w2 = (wmm - wm * b) / g1^2,
       dev1 = -2 * pw * (y - mu) / (V * g1), pe1 = pm / g1,
       pe2 = pmm / g1^2 - pm * fam$d2link(mu) / g1^3,
       pearson = sum(pw * res^2 / V))
}

rows_cases <- function() {
  list(
    list(gaussian(), "gaussian"), list(gaussian(link = "log"), "gaussian"),
    list(gaussian(link = "inverse"), "gaussian"),
    list(binomial(), "binomial"), list(binomial(link = "probit"), "binomial"),
    list(binomial(link = "cloglog"), "binomial"), list(binomial(link = "cauchit"), "binomial"),
    list(quasibinomial(), "binomial"),
    list(poisson(), "count"), list(poisson(link = "identity"), "count"),
    list(poisson(link = "sqrt"), "count"), list(quasipoisson(), "count"),
    list(Gamma(), "positive"), list(Gamma(link = "log"), "positive"),
    list(Gamma(link = "identity"), "positive"),
    list(inverse.gaussian(), "positive"), list(inverse.gaussian(link = "log"), "positive"),
    list(inverse.gaussian(link = "inverse"), "positive"))
}

rows_data <- function(kind, n) {
  set.seed(7)
  x <- runif(n)
  y <- switch(kind,
              gaussian = 2 + sin(3 * x) + rnorm(n, sd = 0.3),
              binomial = rbinom(n, 1, 0.2 + 0.6 * x),
              count = rpois(n, 1 + 3 * x),
              positive = rgamma(n, shape = 3, rate = 3 / (1 + x)))
  list(X = cbind(1, x, x^2), y = as.double(y), w = runif(n, 0.5, 2))
}

# (relative to the reference's scale: a weight's derivatives can cancel
# to rounding, Fisher's for Gamma's log link are 0 in exact arithmetic, and
# are measured against the weights themselves then)
rel_err <- function(a, b, scale = max(abs(b))) max(abs(a - b)) / max(scale, 1e-300)

test_that("the rows are gam.fit3's: Newton's and Fisher's weights, their derivatives, the Pearson terms", {
  for (cs in rows_cases()) {
    fam <- cs[[1]]
    d <- rows_data(cs[[2]], 300)
    P <- gamgpu:::outer_problem(list(S = list(), off = integer(0), rank = integer(0), H = NULL),
                                test_session(d$X, d$y, d$w), d$y, d$w, NULL, fam, list(),
                                "REML", 1, -1, own = TRUE)
    label <- paste(fam$family, fam$link)
    e <- P$eval(NULL)
    # a Fisher step from the start: rows away from the family's start values
    b <- solve(e$XtWX, e$XtWz)
    P$eval(b, gram = FALSE)
    r <- P$rows(pearson = TRUE, vectors = TRUE)
    # (the vectors asked for by name: those alone, the same numbers)
    r2 <- P$rows(pearson = TRUE, vectors = c("eta", "w"))
    P$close()
    expect_identical(r2$eta, r$eta)
    expect_identical(r2$w, r$w)
    expect_true(all(vapply(r2[c("mu", "w1", "w2", "wF1", "wF2", "dev1", "pe1", "pe2")],
                           is.null, NA)), label = label)
    ff <- gamgpu:::outer_family(fam)
    newton <- ref_rows(ff, d$y, d$w, r$mu, ff$fisher)
    fisher <- ref_rows(ff, d$y, d$w, r$mu, TRUE)
    expect_lt(rel_err(r$eta, drop(d$X %*% b)), 1e-13, label = label)
    ws <- max(abs(newton$w))
    for (nm in c("w", "w1", "w2"))
      expect_lt(rel_err(r[[nm]], newton[[nm]], max(abs(newton[[nm]]), ws)), 1e-11,
                label = paste(label, nm))
    for (nm in c("dev1", "pe1", "pe2"))
      expect_lt(rel_err(r[[nm]], newton[[nm]]), 1e-11, label = paste(label, nm))
    expect_lt(rel_err(r$wF1, fisher$w1, max(abs(fisher$w1), ws)), 1e-11,
              label = paste(label, "wF1"))
    expect_lt(rel_err(r$wF2, fisher$w2, max(abs(fisher$w2), ws)), 1e-11,
              label = paste(label, "wF2"))
    expect_lt(abs(r$pearson - newton$pearson) / newton$pearson, 1e-13, label = label)
    expect_equal(ff$fisher, identical(r$w1, r$wF1), label = label)
  }
})

test_that("Newton's step and the derivative products are the products formed in R", {
  for (cs in rows_cases()[c(2, 5, 9, 14)]) {
    fam <- cs[[1]]
    d <- rows_data(cs[[2]], 250)
    X <- d$X
    P <- gamgpu:::outer_problem(list(S = list(), off = integer(0), rank = integer(0), H = NULL),
                                test_session(X, d$y, d$w), d$y, d$w, NULL, fam, list(),
                                "REML", 1, -1, own = TRUE)
    on.exit(P$close())
    label <- paste(fam$family, fam$link)
    e <- P$eval(NULL)
    b <- solve(e$XtWX, e$XtWz)
    P$eval(b, gram = FALSE)
    ff <- gamgpu:::outer_family(fam)
    # Newton's step: gam.fit3's weights with alpha, its working response
    eta <- drop(X %*% b)
    mu <- ff$linkinv(eta)
    me <- ff$mu.eta(eta)
    al <- 1 + (d$y - mu) * (ff$dvar(mu) / ff$variance(mu) + ff$d2link(mu) * me)
    g <- P$newton_gram()
    if (all(al > 0)) {
      wn <- d$w * al * me^2 / ff$variance(mu)
      z <- eta + (d$y - mu) / (me * al)
      expect_lt(rel_err(g$XtWX, crossprod(X, wn * X)), 1e-12, label = label)
      expect_lt(rel_err(g$XtWz, drop(crossprod(X, wn * z))), 1e-12, label = label)
    } else expect_null(g, label = label)
    # the products, both leverage weightings, with and without the
    # prediction-error and Pearson terms
    P$eval(b, gram = FALSE)
    r <- P$rows(pearson = TRUE, gram = TRUE, vectors = TRUE)
    expect_lt(rel_err(r$XtWX, crossprod(X, r$w * X)), 1e-12, label = label)
    set.seed(3)
    db <- matrix(rnorm(3 * 2), 3, 2)
    Ml <- crossprod(matrix(rnorm(9), 3))
    deta <- X %*% db
    h <- rowSums((X %*% Ml) * X)
    for (fisher in c(FALSE, TRUE)) {
      o <- P$derivs(db, Ml, fisher = fisher, pe = TRUE, pearson = TRUE)
      w1 <- if (fisher) r$wF1 else r$w1
      w2 <- if (fisher) r$wF2 else r$w2
      for (k in 1:2)
        expect_lt(rel_err(o$dH[, , k], crossprod(X, (w1 * deta[, k]) * X)), 1e-12,
                  label = paste(label, "dH", k))
      E <- cbind(r$w1 * deta[, 1]^2, r$w1 * deta[, 1] * deta[, 2], r$w1 * deta[, 2]^2)
      expect_lt(rel_err(o$RHS, crossprod(X, E)), 1e-12, label = paste(label, "RHS"))
      expect_lt(rel_err(o$Xd, drop(crossprod(X, r$dev1))), 1e-12, label = label)
      expect_lt(rel_err(o$Xp, drop(crossprod(X, r$pe1))), 1e-12, label = label)
      expect_lt(rel_err(o$u, drop(crossprod(X, h * w1))), 1e-12, label = label)
      expect_lt(rel_err(o$hww, crossprod(deta, (h * w2) * deta)), 1e-12, label = label)
      expect_lt(rel_err(o$hd, colSums(h * w1 * deta)), 1e-12, label = label)
      expect_lt(rel_err(o$Dw, crossprod(deta, r$w * deta)), 1e-12, label = label)
      expect_lt(rel_err(o$Dp2, crossprod(deta, r$pe2 * deta)), 1e-12, label = label)
    }
    P$close()
  }
})

test_that("a session's rows need an eval, and its derivatives the rows", {
  d <- rows_data("binomial", 50)
  ses <- test_session(d$X, d$y, d$w)$ptr
  on.exit(.Call(gamgpu:::gg_session_close_r, ses))
  expect_error(.Call(gamgpu:::gg_session_rows_r, ses, "binomial", "logit", FALSE, FALSE, FALSE, NULL),
               class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_derivs_r, ses, diag(3), diag(3), rep(0L, 3)),
               class = "gamgpu_bad_input")
  .Call(gamgpu:::gg_session_eval_r, ses, NULL, "binomial", "logit", FALSE, NULL)
  .Call(gamgpu:::gg_session_rows_r, ses, "binomial", "logit", FALSE, FALSE, FALSE, NULL)
  expect_error(.Call(gamgpu:::gg_session_derivs_r, ses, diag(2), diag(3), rep(0L, 3)),
               class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_derivs_r, ses, diag(3), diag(3), 1:5),
               class = "gamgpu_bad_input")
})

# A problem's rows and products, on the CPU (mode 0) or the device (2):
# Newton's step from a Fisher step away from the start, the rows there with
# X'WX, and the derivative products with both leverage weightings; fault,
# when given, is injected just before the products (mode 1 then).
device_rows_run <- function(fam, d, mode, fault = NULL) {
  P <- gamgpu:::outer_problem(list(S = list(), off = integer(0), rank = integer(0), H = NULL),
                              test_session(d$X, d$y, d$w, mode = mode), d$y, d$w, NULL,
                              fam, list(), "REML", 1, -1, own = TRUE)
  on.exit(P$close())
  e <- P$eval(NULL)
  b <- solve(e$XtWX, e$XtWz)
  P$eval(b, gram = FALSE)
  g <- P$newton_gram()
  P$eval(b, gram = FALSE)
  r <- P$rows(pearson = TRUE, gram = TRUE, vectors = TRUE)
  set.seed(3)
  db <- matrix(rnorm(3 * 2), 3, 2)
  Ml <- crossprod(matrix(rnorm(9), 3))
  if (!is.null(fault)) gamgpu:::gpu_inject_fault("launch", fault)
  o <- lapply(c(FALSE, TRUE), function(f)
    P$derivs(db, Ml, fisher = f, pe = TRUE, pearson = TRUE))
  if (!is.null(fault)) gamgpu:::gpu_inject_fault("none")
  P$close()
  list(g = g, r = r, o = o, env = P$env)
}

# (Fisher's weights' derivatives are measured on the scale of Newton's, and
# the products with them on the scale of the products with Newton's: for
# Gamma's log link Fisher's weight is the prior weight, its derivatives
# zero, and host and device leave different rounding residues of zero)
expect_rows_match <- function(a, b, label) {
  rel_to <- function(x, ref, floor) max(abs(x - ref)) / max(abs(ref), abs(floor))
  for (nm in c("eta", "mu", "w", "w1", "w2", "dev1", "pe1", "pe2"))
    expect_lt(rel_err(a$r[[nm]], b$r[[nm]]), 1e-12, label = paste(label, nm))
  expect_lt(rel_to(a$r$wF1, b$r$wF1, b$r$w1), 1e-12, label = paste(label, "wF1"))
  expect_lt(rel_to(a$r$wF2, b$r$wF2, b$r$w2), 1e-12, label = paste(label, "wF2"))
  expect_lt(abs(a$r$pearson / b$r$pearson - 1), 1e-12, label = label)
  expect_lt(rel_err(a$r$XtWX, b$r$XtWX), 1e-11, label = label)
  expect_identical(is.null(a$g), is.null(b$g), label = label)
  if (!is.null(b$g)) {
    expect_lt(rel_err(a$g$XtWX, b$g$XtWX), 1e-11, label = paste(label, "Newton"))
    expect_lt(rel_err(a$g$XtWz, b$g$XtWz), 1e-11, label = paste(label, "Newton"))
  }
  for (k in 1:2)
    for (nm in c("dH", "RHS", "Xd", "Xp", "u", "hww", "hd", "Dw", "Dp2"))
      expect_lt(rel_to(a$o[[k]][[nm]], b$o[[k]][[nm]], b$o[[1]][[nm]]), 1e-11,
                label = paste(label, nm, k))
}

test_that("on the GPU, the outer rows stay on the device and give the CPU's rows and products", {
  skip_if_no_device()
  for (cs in rows_cases()[c(2, 4, 5, 9, 14, 17)]) {
    fam <- cs[[1]]
    label <- paste(fam$family, fam$link)
    n <- 30000
    d <- rows_data(cs[[2]], n)
    cpu <- device_rows_run(fam, d, 0L)
    expect_identical(cpu$env$rows, "cpu", label = label)
    gpu_telemetry(reset = TRUE)
    dev <- device_rows_run(fam, d, 2L)
    t <- gpu_telemetry()
    expect_identical(dev$env$device, "cuda:0", label = label)
    expect_identical(dev$env$rows, "cuda:0", label = label)
    # the rows, Newton's rows and every product's weights: outer.cu's kernels
    expect_gt(sum(t$launches[t$backend == "outer"]), 10)
    # up the bus: X, y and the prior weights once (5 n doubles), then only
    # p-sized inputs (beta, d beta / d rho, the leverages' matrix); the
    # host's rows would send n-vectors for every product
    expect_lt(sum(t$h2d_bytes), 8 * (5 * n) + 1e5, label = label)
    expect_rows_match(dev, cpu, label)
    expect_device_arena_empty()
  }
})

test_that("a device fault in the outer products moves the session to the CPU, which makes the rows again", {
  skip_if_no_device()
  d <- rows_data("binomial", 20000)
  fam <- binomial(link = "probit")
  cpu <- device_rows_run(fam, d, 0L)
  on.exit(gamgpu:::gpu_inject_fault("none"), add = TRUE)
  for (at in c(1, 4)) {
    gpu_arena_release()
    moved <- device_rows_run(fam, d, 1L, fault = at)
    expect_identical(moved$env$device, "cpu", label = paste("launch", at))
    expect_match(moved$env$fallback, ".+")
    expect_rows_match(moved, cpu, paste("launch", at))
    expect_device_arena_empty()
  }
})
