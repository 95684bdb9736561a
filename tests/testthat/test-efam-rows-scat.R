# mgcv's scat() row by row (inst/include/efam_scat.h through
# gg_efam_rows_r) against the family object's own dev.resids(), Dd(), ls()
# and initialize, and bgam.fit's w and z (mgcv:::dDeta), for every link
# scat() allows, theta = (log(nu - min.df), log sig) over a grid, prior
# weights != 1, and min.df other than 3.
#
# Tolerances, two-sided: |C - R| <= tol * scale, where scale is
# max(|C|, |R|) (plain relative error) for quantities mgcv computes without
# cancellation (mu, dev.resids, Dmu, EDmu2, Dth[, 2], LSTH1[, 2], w), and
# for those whose expressions subtract terms of similar size (Dth[, 1]:
# log(a) - (nu + 1) (a - 1) / (nu a), cancelling by a factor of nu; Dth2;
# ls; LSTH1[, 1] and lsth2[1, 1]: differences of digamma and trigamma at
# (nu + 1) / 2 and nu / 2) the sum of the terms' magnitudes.  The two sides
# evaluate the same expressions in the same order: measured on x86-64
# (gcc, glibc), the rows' dev.resids, Dmu, EDmu2, Dth and Dth2 (exp, log,
# log1p only) equal mgcv's bit for bit, w to 3e-16 (mu.eta's rounding);
# ls, LSTH1[, 1] and lsth2 (lgamma, digamma, trigamma: glibc and
# family_math.h against R's nmath) to 6e-16 of the terms' scale.  The tests
# ask 1e-14 throughout (column sums: 1e-14 of the summed scales), room for
# other compilers and math libraries.

scat_rel <- function(a, b, scale = pmax(abs(a), abs(b))) {
  e <- abs(a - b) / scale
  e[a == b] <- 0
  max(e)
}

scat_rows <- function(fam, n = 40, seed = 1) {
  set.seed(seed)
  fam <- mgcv::fix.family.link(fam)
  th <- fam$getTheta()
  mu <- if (fam$link == "identity") stats::runif(n, -3, 5) else stats::runif(n, 0.2, 5)
  eta <- fam$linkfun(mu)
  mu <- fam$linkinv(eta)
  y <- mu + exp(th[2]) * stats::rt(n, fam$getTheta(TRUE)[1])
  y[1:2] <- c(0, mu[2])
  list(fam = fam, eta = eta, mu = mu, y = y, wt = stats::runif(n, 0.2, 3))
}

scat_par <- function(fam) {
  list(theta = fam$getTheta(), aux = get(".min.df", environment(fam$getTheta)),
       log_scale = 0, scale_est = 0L)
}

scat_call <- function(d, deriv = 2L, wt = d$wt) {
  .Call(gamgpu:::gg_efam_rows_r, "scat", d$fam$link, d$eta, d$y, wt, scat_par(d$fam), deriv)
}

# every row quantity and column sum against mgcv's, for the family's theta
expect_scat_rows <- function(d, lab) {
  fam <- d$fam; y <- d$y; mu <- d$mu; wt <- d$wt
  th <- fam$getTheta()
  min.df <- get(".min.df", environment(fam$getTheta))
  r <- scat_call(d)
  dd <- fam$Dd(y, mu, th, wt, level = 2)
  ls <- fam$ls(y, wt, th, 1)
  # the terms of mgcv's expressions, for their scale
  nu <- exp(th[1]) + min.df; sig <- exp(th[2])
  nu1 <- nu + 1; nu2 <- nu - min.df; nu2nu <- nu2 / nu; nu12 <- nu1 / 2
  ym <- y - mu; a <- 1 + (ym / sig)^2 / nu
  nusig2a <- nu * sig^2 * a
  fym <- nu1 * ym^2 / nusig2a; f1ym <- ym^2 / nusig2a
  sc_dth1 <- wt * nu2 * (abs(log(a)) + fym / nu)
  sc_dth2 <- cbind(
    wt * (nu2 * log(a) + nu2nu * ym^2 * (2 * nu2 + nu1 + 2 * nu1 * nu2nu + nu1 * nu2nu * f1ym) /
            nusig2a),
    2 * wt * (fym + ym^2 / (sig^2 * a) + fym * f1ym) * nu2nu,
    4 * wt * fym * (1 + f1ym))
  sc_ls <- wt * (abs(lgamma(nu12)) + abs(lgamma(nu / 2)) + abs(log(sig * sqrt(pi * nu))))
  sc_lsth1 <- wt * (abs(nu2 * digamma(nu12)) / 2 + abs(nu2 * digamma(nu / 2)) / 2 + 0.5 * nu2nu)
  sc_lsth2 <- wt * (nu2^2 * trigamma(nu12) / 4 + abs(nu2 * digamma(nu12)) / 2 +
                      nu2^2 * trigamma(nu / 2) / 4 + abs(nu2 * digamma(nu / 2)) / 2 +
                      0.5 * nu2nu^2 + 0.5 * nu2nu)
  expect_lte(scat_rel(r$mu, mu), 1e-14, label = lab)
  expect_lte(scat_rel(r$dev, fam$dev.resids(y, mu, wt, th)), 1e-14, label = lab)
  expect_lte(scat_rel(r$Dmu, dd$Dmu), 1e-14, label = lab)
  expect_lte(scat_rel(r$EDmu2, dd$EDmu2), 1e-14, label = lab)
  expect_identical(r$mustart, y + (y == 0) * 0.1, label = lab)
  # bgam.fit: w = EDeta2 / 2, z = eta - Deta.EDeta2
  de <- mgcv:::dDeta(y, mu, wt, th, fam, 0)
  ig1 <- fam$mu.eta(fam$linkfun(mu))
  expect_lte(scat_rel(r$w, de$EDeta2 / 2), 1e-14, label = lab)
  expect_lte(scat_rel(r$z, d$eta - de$Deta.EDeta2, abs(d$eta) + abs(dd$Dmu / (dd$EDmu2 * ig1))),
             1e-14, label = lab)
  # per-row sums: dev, ls, Dth (2), Dth2 (3), lsth1 (2), lsth2 (3)
  s <- r$sums
  expect_identical(dim(s), c(length(y), 12L))
  expect_identical(s[, 1], r$dev, label = lab)
  expect_lte(scat_rel(s[, 3], dd$Dth[, 1], sc_dth1), 1e-14, label = lab)
  expect_lte(scat_rel(s[, 4], dd$Dth[, 2]), 1e-14, label = lab)
  for (k in 1:3)
    expect_lte(scat_rel(s[, 4 + k], dd$Dth2[, k], sc_dth2[, k]), 1e-14, label = lab)
  expect_lte(scat_rel(s[, 8], ls$LSTH1[, 1], sc_lsth1), 1e-14, label = lab)
  expect_identical(s[, 9], ls$LSTH1[, 2], label = lab)
  # the column sums against ls(y, w, theta, scale)
  expect_lte(abs(sum(s[, 2]) - ls$ls) / sum(sc_ls), 1e-14, label = lab)
  expect_lte(abs(sum(s[, 8]) - ls$lsth1[1]) / sum(sc_lsth1), 1e-14, label = lab)
  expect_lte(abs(sum(s[, 9]) - ls$lsth1[2]) / sum(wt), 1e-14, label = lab)
  expect_lte(abs(sum(s[, 10]) - ls$lsth2[1, 1]) / sum(sc_lsth2), 1e-14, label = lab)
  expect_identical(colSums(s[, 11:12]), c(ls$lsth2[1, 2], ls$lsth2[2, 2]), label = lab)
  expect_lte(abs(sum(s[, 3]) - sum(dd$Dth[, 1])) / sum(sc_dth1), 1e-14, label = lab)
  expect_lte(abs(sum(s[, 4]) - sum(dd$Dth[, 2])) / sum(abs(dd$Dth[, 2])), 1e-14, label = lab)
  for (k in 1:3)
    expect_lte(abs(sum(s[, 4 + k]) - sum(dd$Dth2[, k])) / sum(sc_dth2[, k]), 1e-14, label = lab)
  invisible(r)
}

test_that("scat() rows: dev.resids, Dd, ls, dDeta's w and z, mustart as mgcv's", {
  for (lk in c("identity", "log", "inverse"))
    for (th1 in c(-2, 0, 1.5, 4)) for (th2 in c(-1, 0.5, 2)) {
      fam <- do.call(mgcv::scat, list(link = lk))
      fam$putTheta(c(th1, th2))
      expect_identical(fam$getTheta(), c(th1, th2))
      expect_scat_rows(scat_rows(fam), sprintf("scat(link = %s), theta = (%g, %g)", lk, th1, th2))
    }
})

test_that("scat() with min.df other than 3, and theta fixed by scat(theta = )", {
  fam <- mgcv::scat(link = "log", min.df = 1.5)
  fam$putTheta(c(0.3, -0.4))
  expect_identical(get(".min.df", environment(fam$getTheta)), 1.5)
  expect_scat_rows(scat_rows(fam, seed = 2), "min.df = 1.5")
  fam <- mgcv::scat(theta = -c(30, 0.2), min.df = 10)   # estimated, starting there
  expect_identical(fam$n.theta, 2)
  expect_scat_rows(scat_rows(fam, seed = 3), "min.df = 10")
  fam <- mgcv::scat(theta = c(6, 1.5), link = "identity")
  expect_identical(fam$n.theta, 0)
  expect_equal(fam$getTheta(TRUE), c(6, 1.5))
  expect_scat_rows(scat_rows(fam, seed = 4), "scat(theta = c(6, 1.5))")
  # a df at or below min.df lowers min.df to 0.9 df
  expect_warning(fam <- mgcv::scat(theta = c(2.5, 1.2), link = "inverse"), "min.df reset")
  expect_equal(get(".min.df", environment(fam$getTheta)), 2.25)
  expect_scat_rows(scat_rows(fam, seed = 5), "scat(theta = c(2.5, 1.2))")
})

test_that("scat() sums stop at the requested derivative level", {
  fam <- mgcv::scat(link = "identity")
  fam$putTheta(c(1, 0.2))
  d <- scat_rows(fam, n = 15)
  full <- scat_call(d, 2L)$sums
  for (deriv in -1:2) {
    s <- scat_call(d, deriv)$sums
    keep <- switch(as.character(deriv), "-1" = 1, "0" = 1:2, "1" = c(1:4, 8:9), "2" = 1:12)
    expect_identical(s[, keep], full[, keep], label = paste("deriv", deriv))
    expect_true(all(s[, -keep] == 0), label = paste("deriv", deriv))
  }
})

test_that("scat() rows with zero prior weight keep mgcv's unweighted EDmu2", {
  # mgcv's scat()$Dd: Dmu carries the prior weight, EDmu2 does not, so a
  # zero-weight row has w = EDeta2 / 2 > 0 and z = eta in bgam.fit
  fam <- mgcv::scat(link = "log")
  fam$putTheta(c(0.5, -0.5))
  d <- scat_rows(fam, n = 10)
  wt <- d$wt
  wt[c(3, 8)] <- 0
  r <- scat_call(d, 2L, wt)
  de <- mgcv:::dDeta(d$y, d$mu, wt, fam$getTheta(), d$fam, 0)
  expect_identical(r$z[c(3, 8)], d$eta[c(3, 8)])
  expect_true(all(r$w[c(3, 8)] > 0))
  expect_lte(scat_rel(r$w, de$EDeta2 / 2), 1e-14)
  expect_lte(scat_rel(r$EDmu2, rep(r$EDmu2[1], 10)), 0)
  expect_true(all(r$sums[c(3, 8), ] == 0))
})
