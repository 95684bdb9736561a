# mgcv's ocat(R) row by row (inst/include/efam_ocat.h through
# gg_efam_rows_r) against the family object's own functions: dev.resids,
# Dd(level = 2)'s Dmu, EDmu2, Dth and Dth2, ls (identically 0 for ocat),
# initialize's mustart, and bgam.fit's working weights and data from
# mgcv:::dDeta() (w = EDeta2 / 2, z = eta - Deta.EDeta2).  R = 3, 4, 7 (and
# 2, no theta), several theta, every category at linear predictors on, far
# below and far above the cut points (to +-800, where f underflows), prior
# weights != 1.
#
# Tolerance: 1e-12, two-sided relative per element (|a - b| <= tol *
# max(|a|, |b|), equal non-finite values accepted).  Measured: equal bit for
# bit.  The header evaluates ocat's own expressions in its order; the cut
# points, -1 + cumsum(exp(theta)), which R accumulates in long double, come
# from a compensated double sum, which rounds as R does (a plain double sum
# is an ulp off at times, and Dth2 then differs by up to ~5e-13 relative).

expect_rel <- function(a, b, tol = 1e-12) expect_true(efam_rel_ok(a, b, tol))

# every category at each linear predictor
ocat_data <- function(fam, seed = 1) {
  set.seed(seed)
  th <- fam$getTheta()
  R <- length(th) + 2
  cuts <- -1 + c(0, cumsum(exp(th)))
  eta <- c(cuts[1] - c(800, 40, 20, 5), seq(cuts[1] - 2, cuts[R - 1] + 2, length.out = 7),
           cuts, cuts[R - 1] + c(5, 20, 40, 800))
  d <- expand.grid(eta = eta, y = seq_len(R))
  list(eta = d$eta, y = as.numeric(d$y), wt = runif(nrow(d), 0.2, 3), R = R)
}

ocat_rows <- function(fam, d, deriv = 2) {
  .Call(gamgpu:::gg_efam_rows_r, "ocat", "identity", d$eta, d$y, d$wt,
        list(theta = fam$getTheta(), aux = numeric(0), log_scale = 0, scale_est = 0L), deriv)
}

expect_ocat_rows <- function(fam, d) {
  th <- fam$getTheta()
  nth <- length(th)
  r <- ocat_rows(fam, d)
  D <- fam$Dd(d$y, d$eta, th, d$wt, level = 2)
  dev <- as.numeric(fam$dev.resids(d$y, d$eta, d$wt, th))
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
  # the sums, row by row: dev, ls, Dth[nth], Dth2[nth (nth + 1) / 2], lsth1, lsth2
  s <- r$sums
  n2 <- nth * (nth + 1) / 2
  expect_identical(ncol(s), as.integer(2 + 2 * (nth + n2)))
  expect_rel(s[, 1], dev)
  ls <- fam$ls(d$y, d$wt, th, 1)
  expect_identical(sum(s[, 2]), ls$ls)
  if (nth > 0) {
    expect_rel(s[, 2 + seq_len(nth)], D$Dth)
    expect_rel(s[, 2 + nth + seq_len(n2)], D$Dth2)
    l1 <- 2 + nth + n2 + seq_len(nth)
    expect_identical(colSums(s[, l1, drop = FALSE]), ls$lsth1)
    expect_identical(colSums(s[, max(l1) + seq_len(n2), drop = FALSE]),
                     ls$lsth2[upper.tri(ls$lsth2, diag = TRUE)])
  }
  invisible(r)
}

test_that("ocat(R) rows equal the family's Dd, dev.resids, ls and initialize", {
  ths <- list(`3` = list(-1, 0.3, -4, 2),
              `4` = list(c(-1, -1), c(-1, 0.5), c(1.5, -3)),
              `7` = list(rep(-1, 5), c(-2, 0.5, 1, -0.3, 0.1), c(-5, 0.5, 1, -4, 0.1)))
  for (R in c(3, 4, 7)) {
    for (th in ths[[as.character(R)]]) {
      fam <- mgcv::ocat(R = R)          # theta estimated: rows at a put theta
      expect_equal(fam$n.theta, R - 2)
      fam$putTheta(th)
      d <- ocat_data(fam, seed = R)
      r <- expect_ocat_rows(fam, d)
      # all finite within 40 of the cut points; where f underflows (800
      # away) the deviance is Inf and Dth2 NaN (0 / 0), as the family's
      mid <- abs(d$eta) < 100
      expect_true(all(is.finite(r$Dmu[mid]) & is.finite(r$EDmu2[mid]) & is.finite(r$dev[mid])))
      expect_true(all(is.finite(r$sums[mid, ])))
      expect_true(any(r$dev[!mid] == Inf))
    }
  }
  # theta fixed: ocat(theta = ) takes the cut point increments themselves
  fam <- mgcv::ocat(theta = c(0.5, 2, 1))
  expect_equal(fam$n.theta, 0)
  expect_equal(fam$getTheta(), log(c(0.5, 2, 1)))
  expect_ocat_rows(fam, ocat_data(fam))
})

test_that("ocat(R = 2): no theta, dev/Dmu/EDmu2/mustart only", {
  fam <- mgcv::ocat(R = 2)
  expect_length(fam$getTheta(), 0)
  d <- ocat_data(fam)
  r <- expect_ocat_rows(fam, d)
  expect_identical(ncol(r$sums), 2L)
})

test_that("ocat(): deriv levels fill their own sums only; bad categories give NaN", {
  fam <- mgcv::ocat(R = 5)
  fam$putTheta(c(-0.5, 0.2, -1))
  d <- ocat_data(fam, seed = 9)
  full <- ocat_rows(fam, d, 2)$sums
  for (deriv in -1:1) {
    s <- ocat_rows(fam, d, deriv)$sums
    keep <- c(1, if (deriv >= 0) 2, if (deriv >= 1) c(3:5, 12:14))
    expect_identical(s[, keep], full[, keep])
    expect_true(all(s[, -keep] == 0))
  }
  bad <- list(eta = rep(0.3, 5), y = c(0, 6, 2.5, -1, NaN), wt = rep(1, 5))
  r <- ocat_rows(fam, bad)
  for (k in c("dev", "Dmu", "EDmu2", "mustart")) expect_true(all(is.nan(r[[k]])))
  expect_true(all(r$w == 0 & r$z == 0))
  expect_true(all(is.nan(r$sums[, c(1, 3:11)])))   # dev, Dth, Dth2
  expect_true(all(r$sums[, c(2, 12:20)] == 0))      # ls, lsth1, lsth2: 0 whatever y
})
