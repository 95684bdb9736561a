# mgcv's ziP() row by row (inst/include/efam_zip.h through gg_efam_rows_r)
# against the family object's own functions: dev.resids, Dd(level = 2)'s
# Dmu, EDmu2, Dth and Dth2, ls (identically 0 for ziP), initialize's
# mustart, and bgam.fit's working weights and data from mgcv:::dDeta()
# (w = EDeta2 / 2, z = eta - Deta.EDeta2).  Linear predictors -8..6 (and a
# few beyond, into the other branches of mgcv's ldg()/lde()), rows with
# y = 0 and y > 0, prior weights != 1, theta fixed at several values, b = 0
# and b > 0.
#
# Tolerance: 1e-12, two-sided relative per element (|a - b| <= tol *
# max(|a|, |b|), equal non-finite values accepted).  The header evaluates
# mgcv's own expressions in mgcv's order, so the derivatives are measured
# equal bit for bit; the deviance differs by <= 8e-16 relative, from C's
# lgamma(y + 1) against R's own lgammafn.

expect_rel <- function(a, b, tol = 1e-12) expect_true(efam_rel_ok(a, b, tol))

zip_data <- function(seed = 1) {
  set.seed(seed)
  g <- c(seq(-8, 6, length.out = 29), -15, -12.5, 7, 8)
  n <- length(g)
  list(eta = c(g, g),
       y = c(rep(0, n), rpois(n, pmin(exp(g), 300)) + 1),
       wt = runif(2 * n, 0.2, 3))
}

zip_rows <- function(fam, d, deriv = 2, weighted_dev = 0) {
  .Call(gamgpu:::gg_efam_rows_r, "ziP", "identity", d$eta, d$y, d$wt,
        list(theta = fam$getTheta(), aux = c(get(".b", environment(fam$Dd)), weighted_dev),
             log_scale = 0, scale_est = 0L), deriv)
}

expect_zip_rows <- function(fam, d) {
  th <- fam$getTheta()
  r <- zip_rows(fam, d)
  D <- fam$Dd(d$y, d$eta, th, d$wt, level = 2)
  dev <- fam$dev.resids(d$y, d$eta, d$wt, th)
  expect_identical(r$mu, d$eta)
  expect_rel(r$dev, dev)
  expect_rel(r$Dmu, D$Dmu)
  expect_rel(r$EDmu2, D$EDmu2)
  expect_rel(r$mustart, efam_mustart(fam, d$y))
  dd <- mgcv:::dDeta(d$y, d$eta, d$wt, th, fam, 0)
  w <- dd$EDeta2 / 2
  z <- d$eta - dd$Deta.EDeta2
  good <- is.finite(w) & is.finite(z)
  expect_rel(r$w[good], w[good])
  expect_rel(r$z[good], z[good])
  expect_true(all(r$w[!good] == 0 & r$z[!good] == 0))
  # the sums, row by row: dev, ls, Dth[2], Dth2[3], lsth1[2], lsth2[3]
  s <- r$sums
  expect_identical(ncol(s), 12L)
  expect_rel(s[, 1], dev)
  expect_rel(s[, 3:4], D$Dth)
  expect_rel(s[, 5:7], D$Dth2)
  ls <- fam$ls(d$y, d$wt, th, 1)
  expect_identical(sum(s[, 2]), ls$ls)
  expect_identical(colSums(s[, 8:9]), ls$lsth1)
  expect_identical(colSums(s[, 10:12]), ls$lsth2[upper.tri(ls$lsth2, diag = TRUE)])
  invisible(r)
}

test_that("ziP() rows equal the family's Dd, dev.resids, ls and initialize", {
  d <- zip_data()
  for (th in list(c(0, 0), c(-1, 0.5), c(2, -1.5), c(0.3, 1.2), c(-3, -2.5))) {
    fam <- mgcv::ziP(theta = th)
    expect_equal(fam$n.theta, 0)
    r <- expect_zip_rows(fam, d)
    # the rows fitted here are all finite
    expect_true(all(is.finite(r$dev) & is.finite(r$Dmu) & is.finite(r$EDmu2)))
    expect_true(all(is.finite(r$sums)))
  }
  # ziP() with theta estimated: the same rows at its starting theta
  fam <- mgcv::ziP()
  expect_equal(fam$n.theta, 2)
  fam$putTheta(c(0.7, -0.4))
  expect_zip_rows(fam, d)
})

test_that("ziP(b = ) with b > 0, and b < 0 clamped to 0 by the family", {
  d <- zip_data(seed = 2)
  for (b in c(0.5, 1.5, 4)) {
    fam <- mgcv::ziP(theta = c(0.5, -0.3), b = b)
    expect_identical(get(".b", environment(fam$Dd)), b)
    expect_zip_rows(fam, d)
  }
  fam <- mgcv::ziP(theta = c(0.5, -0.3), b = -2)
  expect_identical(get(".b", environment(fam$Dd)), 0)
  expect_zip_rows(fam, d)
})

test_that("ziP(): deriv levels fill their own sums only; aux[2] weights the deviance", {
  d <- zip_data(seed = 3)
  fam <- mgcv::ziP(theta = c(-0.5, 0.4), b = 1)
  full <- zip_rows(fam, d, 2)$sums
  for (deriv in -1:1) {
    s <- zip_rows(fam, d, deriv)$sums
    keep <- c(1, if (deriv >= 0) 2, if (deriv >= 1) c(3:4, 8:9))
    expect_identical(s[, keep], full[, keep])
    expect_true(all(s[, -keep] == 0))
  }
  # mgcv's ziP()$dev.resids ignores the prior weights (its Dd does not):
  # aux[2] != 0 asks for wt * dev.resids instead; the rest is unchanged
  r0 <- zip_rows(fam, d)
  r1 <- zip_rows(fam, d, weighted_dev = 1)
  expect_rel(r1$dev, d$wt * fam$dev.resids(d$y, d$eta, d$wt))
  expect_rel(r1$sums[, 1], d$wt * fam$dev.resids(d$y, d$eta, d$wt))
  expect_identical(r1[c("Dmu", "EDmu2", "mustart", "w", "z")],
                   r0[c("Dmu", "EDmu2", "mustart", "w", "z")])
  expect_identical(r1$sums[, -1], r0$sums[, -1])
})

test_that("ziP's saturated likelihood and null-deviance sums in C are mgcv's", {
  set.seed(4)
  n <- 3000
  y <- as.numeric(rpois(n, 4) * (runif(n) < 0.6))
  w <- runif(n) + 0.5
  for (th in list(c(-0.4, 0.3), c(1, -1), c(-3, 1.2))) {
    fam <- mgcv::ziP(theta = th)
    ef <- list(theta = fam$getTheta(), aux = c(0, 0), log_scale = 0, scale_est = 0L)
    a <- fam$saturated.ll(y, fam, w)
    b <- .Call(gamgpu:::gg_zip_saturated_r, y, w, ef, 2L)
    expect_lt(max(abs(a - b) / pmax(abs(a), 1)), 1e-13)
    expect_identical(b[y == 0], rep(0, sum(y == 0)))
    for (g in c(0.2, 1.3, 3)) {
      r <- sum(fam$dev.resids(y, rep(g, n), w))
      expect_lt(abs(sum(.Call(gamgpu:::gg_efam_dev_resids_r, "ziP", y, rep(g, n), w, ef, 2L)) /
                      r - 1), 1e-14)
    }
  }
})
