# mgcv's tw() row by row (inst/include/efam_tw.h through gg_efam_rows_r):
# dev.resids, Dd's Dmu, EDmu2, Dth and Dth2, the PIRLS row, mustart, and the
# sums of ls() with ldTweedie's series, against tw()'s own functions and
# mgcv::ldTweedie, for the links log, identity, sqrt and inverse, p near
# a, 1.5 and near b, tw(a = 1.1, b = 1.8), scales 0.3, 1, 5, y == 0 rows
# and prior weights.
#
# Tolerances (two-sided, measured on these data in brackets):
# - closed forms (dev.resids, Dmu, EDmu2, mustart, w, z, Dth, Dth2), per
#   row relative 1e-13 [0 for all but w 3e-16 and Dth2 6e-15, whose last
#   term is written Dth2 = ... + 2 wt core dpth2 instead of Dth dpth2 / dpth1];
# - ldTweedie's log density and its derivatives: the series (Dunn & Smyth)
#   is summed here in a form that keeps ~15 digits, while ldTweedie
#   returns the small difference of its closed part l.base - log y (and
#   derivatives) and the series's log, both of size ~ J / (p - 1), J =
#   y^(2-p) / (scale (2 - p)), up to 1e5 here: near p = a and for small
#   scales mgcv's values lose up to 6 digits of their own (at p = 1.011,
#   scale 0.1, y = 1000 its d/drho is off by 1.2e-6 relative, its second
#   derivatives by more than 100%; see the quad-precision values below).
#   Against mgcv each column is therefore compared relative to |ldTweedie|
#   + |its closed part| + 1: l 1e-13 [1.4e-15], d/drho and d/dtheta 1e-12
#   [4.8e-14], second derivatives 1e-9 [1.2e-10]; the sums of ls() alike
#   [1.1e-10]; against the quad-precision reference, plain relative 1e-12
#   [6.3e-13] for l and the first derivatives, and 1e-13 [1.9e-15] of the
#   same scale for the second.

tw_par <- function(fam, scale) {
  e <- environment(fam$Dd)
  list(theta = fam$getTheta(), aux = c(e$.a, e$.b), log_scale = log(scale), scale_est = 1L)
}

tw_rows <- function(fam, eta, y, wt, scale = 1, deriv = 2L)
  .Call(gamgpu:::gg_efam_rows_r, "tw", fam$link, as.double(eta), as.double(y),
        as.double(wt), tw_par(fam, scale), as.integer(deriv))

# sums columns (efam_math.h, nth = 1, ns = 2): dev, ls, Dth, Dth2,
# lsth1 (theta, log scale), lsth2 [1,1], [1,2], [2,2]; as ldTweedie's
# columns l, rho, rho.2, th, th.2, th.rho
ld_cols <- function(S) S[, c(2, 6, 9, 5, 7, 8), drop = FALSE]

expect_rel <- function(got, ref, tol) {
  expect_true(all(is.finite(got)))
  err <- ifelse(got == ref, 0, abs(got - ref) / abs(ref))
  expect_lte(max(err), tol)
}

# |got - ref| <= tol (|ref| + |scl| + 1), columnwise tolerances
expect_scaled <- function(got, ref, scl, tol) {
  expect_true(all(is.finite(got)))
  err <- abs(got - ref) / (abs(ref) + abs(scl) + 1)
  expect_true(all(sweep(err, 2, tol, "<=")),
              info = paste("max errors", paste(signif(apply(err, 2, max), 2), collapse = " ")))
}

# ldTweedie's closed part for y > 0 at mu = y, in (rho, theta): the terms it
# adds to the series's (mgcv's expressions)
tw_closed <- function(y, rho, fam) {
  e <- environment(fam$Dd)
  a <- e$.a
  b <- e$.b
  th <- fam$getTheta()
  p <- fam$getTheta(TRUE)
  d1 <- if (th > 0) exp(-th) * (b - a) / (1 + exp(-th))^2 else exp(th) * (b - a) / (exp(th) + 1)^2
  d2 <- if (th > 0) ((a - b) * exp(-th) + (b - a) * exp(-th)^2) / (exp(-th) + 1)^3 else
    ((a - b) * exp(th)^2 + (b - a) * exp(th)) / (exp(th) + 1)^3
  phi <- exp(rho)
  lmu <- log(y)
  onep <- 1 - p
  twop <- 2 - p
  mu1p <- y^onep
  kth <- y * mu1p / twop
  tht <- mu1p / onep
  lb <- mu1p * (y / onep - y / twop) / phi
  x <- tht * y * (1 / onep - lmu) / phi + kth * (lmu - 1 / twop) / phi
  x5 <- tht * y * (lmu^2 - 2 * lmu / onep + 2 / onep^2) / phi -
    kth * (lmu^2 - 2 * lmu / twop + 2 / twop^2) / phi
  out <- matrix(0, length(y), 6)
  i <- y > 0
  out[i, ] <- cbind(lb - log(y), -lb, lb, x * d1, x5 * d1^2 + x * d2, -x * d1)[i, ]
  out
}

# tw()$ls calls ldTweedie() from an environment whose parent is the global
# one; give it mgcv's namespace behind instead (mgcv need not be attached)
tw_ls <- function(fam, ...) {
  f <- fam$ls
  env <- new.env(parent = asNamespace("mgcv"))
  for (v in c(".a", ".b", ".Theta")) assign(v, get(v, environment(f)), envir = env)
  environment(f) <- env
  f(...)
}

tw_cases <- function() {
  out <- list()
  for (link in c("log", "identity", "sqrt", "inverse")) {
    out <- c(out, list(do.call(mgcv::tw, list(theta = 1.011, link = link)), do.call(mgcv::tw, list(theta = 1.5, link = link)),
                       do.call(mgcv::tw, list(theta = 1.989, link = link)),
                       do.call(mgcv::tw, list(link = link, a = 1.1, b = 1.8)),
                       do.call(mgcv::tw, list(theta = 1.101, link = link, a = 1.1, b = 1.8))))
  }
  out
}

tw_data <- function(n = 30) {
  y <- c(0, 0, 0, 1e-3, 1, 1e3, stats::rgamma(n - 6, shape = 1.5, scale = 2))
  mu <- y * exp(stats::rnorm(n, 0, 0.4)) + (y == 0) * stats::runif(n, 0.1, 2)
  list(y = y, mu = mu, wt = stats::runif(n, 0.2, 3))
}

test_that("tw() rows: dev.resids, Dd, mustart and the PIRLS row are mgcv's", {
  set.seed(11)
  for (fam in tw_cases()) for (scale in c(0.3, 5)) {
    d <- tw_data()
    r <- tw_rows(fam, fam$linkfun(d$mu), d$y, d$wt, scale)
    mu <- r$mu                  # the harness's linkinv(eta): mgcv at the same mu
    th <- fam$getTheta()
    dd <- fam$Dd(d$y, mu, th, d$wt, level = 2)
    expect_rel(r$dev, fam$dev.resids(d$y, mu, d$wt, th), 1e-13)
    expect_rel(r$Dmu, dd$Dmu, 1e-13)
    expect_rel(r$EDmu2, dd$EDmu2, 1e-13)
    expect_identical(r$mustart, d$y + 0.1 * (d$y == 0))
    # bgam.fit's row: w = EDmu2 mu.eta^2 / 2, z = eta - Dmu / (EDmu2 mu.eta)
    eta <- fam$linkfun(mu)
    ig1 <- fam$mu.eta(eta)
    expect_rel(r$w, dd$EDmu2 * ig1^2 / 2, 1e-13)
    expect_rel(r$z, eta - dd$Dmu / (dd$EDmu2 * ig1), 1e-13)
    expect_rel(r$sums[, 1], r$dev, 0)
    expect_rel(r$sums[, 3], dd$Dth, 1e-13)
    expect_rel(r$sums[, 4], dd$Dth2, 1e-13)
  }
  # theta far out on either side (p within 1e-11 of a or b): mgcv's two
  # expressions for p, dp/dtheta and d2p/dtheta2
  for (th in c(-25, 25)) {
    fam <- mgcv::tw()
    fam$putTheta(th)
    d <- tw_data(10)
    r <- tw_rows(fam, log(d$mu), d$y, d$wt)
    dd <- fam$Dd(d$y, r$mu, th, d$wt, level = 2)
    expect_rel(r$dev, fam$dev.resids(d$y, r$mu, d$wt, th), 1e-13)
    expect_rel(r$sums[, 3], dd$Dth, 1e-13)
    expect_rel(r$sums[, 4], dd$Dth2, 1e-13)
  }
})

test_that("tw() log density and its rho, theta derivatives are ldTweedie's; ls() sums", {
  set.seed(12)
  tol <- c(1e-13, 1e-12, 1e-9, 1e-12, 1e-9, 1e-9)
  for (fam in tw_cases()[1:5]) for (scale in c(0.3, 1, 5)) {
    d <- tw_data()
    e <- environment(fam$Dd)
    th <- fam$getTheta()
    r <- tw_rows(fam, fam$linkfun(d$mu), d$y, d$wt, scale)
    ld <- mgcv::ldTweedie(d$y, d$y, rho = log(scale), theta = th, a = e$.a, b = e$.b)[, 1:6]
    cl <- tw_closed(d$y, log(scale), fam)
    # per row (wt = 1 gives ldTweedie's rows themselves)
    r1 <- tw_rows(fam, fam$linkfun(d$mu), d$y, rep(1, length(d$y)), scale)
    expect_scaled(ld_cols(r1$sums), ld, cl, tol)
    expect_true(all(ld_cols(r1$sums)[d$y == 0, ] == 0))   # as ldTweedie's: mu = y = 0
    expect_true(all(ld[d$y == 0, ] == 0))
    expect_identical(ld_cols(r$sums), ld_cols(r1$sums) * d$wt)
    # ls(y, w, theta, scale): the column sums
    ls <- tw_ls(fam, d$y, d$wt, th, scale)
    S <- colSums(r$sums)
    got <- rbind(c(S[2], S[5], S[6], S[7], S[8], S[9]))
    ref <- rbind(c(ls$ls, ls$lsth1, ls$lsth2[1, 1], ls$lsth2[1, 2], ls$lsth2[2, 2]))
    scl <- colSums(d$wt * (abs(ld) + abs(cl)))[c(1, 4, 2, 5, 6, 3)] + sum(d$wt)
    expect_scaled(got, ref, rbind(scl), tol[c(1, 4, 2, 5, 6, 3)])
  }
})

test_that("tw()'s series against quad-precision values", {
  # ldTweedie(y, y, rho = log(scale), theta, a, b)[, 1:6] at these rows,
  # with p as tw() computes it from theta, summed over all terms in
  # 113-bit floating point (__float128) from Dunn & Smyth's series in
  # ldTweedie's split; mgcv's own values are off by (relative) up to
  # 3e-11, 1.2e-6, 63, 1.1e-6, 2.8e-3, 660 in the first row.
  cases <- data.frame(a = c(1.01, 1.01, 1.01, 1.01, 1.01, 1.1),
                      b = c(1.99, 1.99, 1.99, 1.99, 1.99, 1.8),
                      p = c(1.011, 1.011, 1.5, 1.989, 1.989, 1.3),
                      scale = c(0.1, 0.3, 0.1, 0.1, 10, 1),
                      y = c(1000, 100, 1000, 1e-3, 5, 0.01))
  ref <- rbind(
    c(-3.259525320368863, -0.50000904014104197, -9.0401516326807512e-06,
      -0.0034504200506134432, -0.0034433788591892206, -6.6776613161301876e-08),
    c(-2.6451300855175215, -0.50026442982711239, -0.00026443839273418895,
      -0.0023015808992790923, -0.0022968903187758918, -1.3458325421863856e-06),
    c(-4.9487590267435406, -0.50029669814916367, -0.00029693301154023587,
      -0.84670215363581847, -0.00083460019557757476, -0.00050252944160292636),
    c(7.0930746229069701, -0.50904048358816822, -0.0090306167728613097,
      0.0035176161969590895, -0.003510932137298113, 6.7684070665294875e-05),
    c(-4.1886055382715472, -0.81814466777892814, -0.10551667261634658,
      -0.0003460226750851104, 0.00034542506233652072, 0.00055229624290928489),
    c(-3.3383266959590698, -3.143827395822218, -0.18934516090510725,
      5.3996288874810299, -3.1003049104792444, 1.6599125767164378))
  for (i in seq_len(nrow(cases))) {
    cs <- cases[i, ]
    fam <- mgcv::tw(theta = cs$p, a = cs$a, b = cs$b)
    got <- ld_cols(tw_rows(fam, log(cs$y), cs$y, 1, cs$scale)$sums)
    expect_rel(got[, c(1, 2, 4)], ref[i, c(1, 2, 4)], 1e-12)
    cl <- tw_closed(cs$y, log(cs$scale), fam)
    expect_lte(max(abs(got[, c(3, 5, 6)] - ref[i, c(3, 5, 6)]) /
                     (abs(ref[i, c(3, 5, 6)]) + abs(cl[, c(3, 5, 6)]))), 1e-13)
  }
})

test_that("tw() theta sums by deriv level: -1 the deviance, 0 and ls, 1 and the first derivatives", {
  set.seed(13)
  fam <- mgcv::tw(theta = 1.4)
  d <- tw_data(12)
  full <- tw_rows(fam, log(d$mu), d$y, d$wt, 2)$sums
  cols <- list(`-1` = 1, `0` = 1:2, `1` = c(1:3, 5:6), `2` = 1:9)
  for (k in names(cols)) {
    S <- tw_rows(fam, log(d$mu), d$y, d$wt, 2, as.integer(k))$sums
    expect_identical(ncol(S), 9L)
    expect_identical(S[, cols[[k]]], full[, cols[[k]]])
    expect_true(all(S[, -cols[[k]]] == 0))
  }
})

test_that("tw()'s aic in C is mgcv's (ldTweedie's density over all rows)", {
  set.seed(6)
  n <- 2000
  mu <- exp(rnorm(n, 1, 0.5))
  y <- mgcv::rTweedie(mu, 1.5, 1.2)
  w <- runif(n) + 0.5
  for (ab in list(c(1.01, 1.99), c(1.1, 1.8)))
    for (th in c(-2, 0, 0.7, 3)) {
      fam <- mgcv::tw(a = ab[1], b = ab[2])
      fam$putTheta(th)
      dev <- sum(fam$dev.resids(y, mu, w))
      ref <- -2 * sum(mgcv::ldTweedie(y, mu, p = fam$getTheta(TRUE), phi = dev / sum(w))[, 1] *
                        w) + 2
      ef <- list(theta = th, aux = ab, log_scale = 0, scale_est = 1L)
      expect_lt(abs(.Call(gamgpu:::gg_tw_aic_r, y, mu, w, ef, dev, 2L) / ref - 1), 1e-13)
    }
})
