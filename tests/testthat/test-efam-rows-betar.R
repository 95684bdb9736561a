# mgcv's betar() row by row (inst/include/efam_betar.h through
# gg_efam_rows_r) against the family object's own dev.resids(), Dd(), ls()
# and initialize, and bgam.fit's w and z (mgcv:::dDeta), for every link
# betar() allows, theta = log phi from -2 to 7 and prior weights != 1.
#
# Tolerances, two-sided: |C - R| <= tol * scale, where scale is
# max(|C|, |R|) (plain relative error) for quantities mgcv computes without
# cancellation (mu, EDmu2, w, mustart), and for those whose expressions sum
# large terms to a small result (dev.resids: lgamma(phi) against
# lgamma(mu phi) + lgamma(phi - mu phi); Dmu, Dth, Dth2: digamma/trigamma
# differences of size log phi whose sum is O(1 / phi)) the sum of the
# terms' magnitudes.  The two sides evaluate the same expressions in the
# same order; they differ only by the last bits of lgamma (glibc's vs R's
# lgammafn) and digamma/trigamma (family_math.h's series vs R's Amos
# dpsifn), which the cancellation then magnifies: plain relative errors
# reach a few 1e-12 at log phi = 4 and 5e-9 at log phi = 7, on rows where
# Dth or Dth2 is near zero.  Measured against the terms' scale: below 3e-15
# for every quantity here; the tests ask 1e-14 (mu, EDmu2, w, mustart: 1e-14 plain
# relative; column sums of the theta derivatives: 1e-14 of the summed
# scales).

betar_rel <- function(a, b, scale = pmax(abs(a), abs(b))) {
  e <- abs(a - b) / scale
  e[a == b] <- 0
  max(e)
}

# n rows of beta data at log phi th with link lk, y clamped by the family's
# preinitialize (as bgam.fit does before the fit) and a few y at 0 and 1
betar_rows <- function(lk, th, n = 60, seed = 1) {
  set.seed(seed)
  fam <- mgcv::fix.family.link(do.call(mgcv::betar, list(theta = -exp(th), link = lk)))
  mu <- stats::runif(n, 0.02, 0.98)
  eta <- fam$linkfun(mu)
  mu <- fam$linkinv(eta)
  y <- stats::rbeta(n, mu * exp(th), (1 - mu) * exp(th))
  y[1:3] <- c(0, 1, 1 - 1e-15)
  y <- fam$preinitialize(y, fam)$y
  wt <- stats::runif(n, 0.2, 3)
  list(fam = fam, eta = eta, mu = mu, y = y, wt = wt)
}

betar_par <- function(fam) {
  list(theta = fam$getTheta(), aux = get(".betarEps", environment(fam$dev.resids)),
       log_scale = 0, scale_est = 0L)
}

betar_call <- function(d, deriv = 2L, wt = d$wt) {
  .Call(gamgpu:::gg_efam_rows_r, "betar", d$fam$link, d$eta, d$y, wt, betar_par(d$fam),
        deriv)
}

test_that("betar() rows: dev.resids, Dd, dDeta's w and z, mustart as mgcv's", {
  for (lk in c("logit", "probit", "cloglog", "cauchit")) for (th in c(-2, 0, 1.5, 4, 7)) {
    d <- betar_rows(lk, th)
    fam <- d$fam; y <- d$y; mu <- d$mu; wt <- d$wt
    expect_lt(abs(fam$getTheta() - th), 1e-15)
    th <- fam$getTheta()
    r <- betar_call(d)
    lab <- sprintf("betar(link = %s), log phi = %g", lk, th)
    phi <- exp(th)
    muth <- mu * phi; onemuth <- (1 - mu) * phi
    lyy <- log(y) - log1p(-y)
    dd <- fam$Dd(y, mu, th, wt, level = 2)
    # the magnitude of the terms each expression sums
    sc_dev <- 2 * wt * (abs(lgamma(phi)) + abs(lgamma(muth)) + abs(lgamma(phi - muth)) +
                          abs(muth * lyy) + abs(phi * log1p(-y)) + abs(log(y)) + abs(log1p(-y)))
    sc_dmu <- 2 * wt * phi * (abs(digamma(muth)) + abs(digamma(onemuth)) + abs(lyy))
    sc_dth <- 2 * wt * phi * (abs(mu * lyy) + abs(log1p(-y)) + abs(mu * digamma(muth)) +
                                abs((1 - mu) * digamma(onemuth)) + abs(digamma(phi)))
    sc_dth2 <- sc_dth + 2 * wt * phi^2 * (mu^2 * trigamma(muth) +
                                            (1 - mu)^2 * trigamma(onemuth) + trigamma(phi))
    expect_lte(betar_rel(r$mu, mu), 1e-14, label = lab)
    expect_lte(betar_rel(r$dev, fam$dev.resids(y, mu, wt, th), sc_dev), 1e-14, label = lab)
    expect_lte(betar_rel(r$Dmu, dd$Dmu, sc_dmu), 1e-14, label = lab)
    expect_lte(betar_rel(r$EDmu2, dd$EDmu2), 1e-14, label = lab)
    expect_identical(r$mustart, y, label = lab)
    # bgam.fit: w = EDeta2 / 2, z = eta - Deta.EDeta2
    de <- mgcv:::dDeta(y, mu, wt, th, fam, 0)
    ig1 <- fam$mu.eta(fam$linkfun(mu))
    expect_lte(betar_rel(r$w, de$EDeta2 / 2), 1e-14, label = lab)
    expect_lte(betar_rel(r$z, d$eta - de$Deta.EDeta2, abs(d$eta) + sc_dmu / (dd$EDmu2 * ig1)),
               1e-14, label = lab)
    # per-row sums: dev, ls (0), Dth, Dth2, lsth1 (0), lsth2 (0)
    s <- r$sums
    expect_identical(dim(s), c(length(y), 6L))
    expect_lte(betar_rel(s[, 1], r$dev), 0, label = lab)
    expect_lte(betar_rel(s[, 3], dd$Dth, sc_dth), 1e-14, label = lab)
    expect_lte(betar_rel(s[, 4], dd$Dth2, sc_dth2), 1e-14, label = lab)
    ls <- fam$ls(y, wt, th, 1)
    expect_identical(colSums(s[, c(2, 5, 6)]), c(ls$ls, ls$lsth1, ls$lsth2), label = lab)
    expect_identical(unname(colSums(s[, c(2, 5, 6)])), c(0, 0, 0), label = lab)
    expect_lte(abs(sum(s[, 3]) - sum(dd$Dth)) / sum(sc_dth), 1e-14, label = lab)
    expect_lte(abs(sum(s[, 4]) - sum(dd$Dth2)) / sum(sc_dth2), 1e-14, label = lab)
  }
})

test_that("betar() sums stop at the requested derivative level", {
  d <- betar_rows("logit", 1.2, n = 20)
  full <- betar_call(d, 2L)$sums
  for (deriv in -1:2) {
    s <- betar_call(d, deriv)$sums
    keep <- switch(as.character(deriv), "-1" = 1, "0" = 1:2, "1" = c(1:3, 5), "2" = 1:6)
    expect_identical(s[, keep], full[, keep], label = paste("deriv", deriv))
    expect_true(all(s[, -keep] == 0), label = paste("deriv", deriv))
  }
})

test_that("betar() with eps and theta fixed: betar(theta = , eps = )", {
  fam <- mgcv::fix.family.link(mgcv::betar(theta = 12, link = "logit", eps = 1e-6))
  expect_identical(fam$n.theta, 0)
  expect_equal(fam$getTheta(TRUE), 12)
  eps <- get(".betarEps", environment(fam$dev.resids))
  expect_identical(eps, 1e-6)
  set.seed(3)
  y0 <- c(0, 1e-7, 1, 1 - 1e-7, stats::rbeta(16, 3, 4))
  y <- fam$preinitialize(y0, fam)$y
  eta <- stats::rnorm(20)
  wt <- stats::runif(20, 0.5, 2)
  d <- list(fam = fam, eta = eta, y = y, mu = fam$linkinv(eta), wt = wt)
  r <- betar_call(d)
  expect_identical(r$mustart, y)
  # mustart repeats preinitialize's clamp: raw y give the clamped y
  r0 <- .Call(gamgpu:::gg_efam_rows_r, "betar", "logit", eta, y0, wt, betar_par(fam), 2L)
  expect_identical(r0$mustart, y)
  th <- fam$getTheta()
  dd <- fam$Dd(y, d$mu, th, wt, level = 2)
  # plain relative error (log phi = 2.5: little cancellation)
  expect_lte(betar_rel(r$dev, fam$dev.resids(y, d$mu, wt)), 1e-12)
  expect_lte(betar_rel(r$Dmu, dd$Dmu), 1e-12)
  expect_lte(betar_rel(r$EDmu2, dd$EDmu2), 1e-14)
  expect_lte(betar_rel(r$sums[, 3], dd$Dth), 1e-12)
  expect_lte(betar_rel(r$sums[, 4], dd$Dth2), 1e-12)
})

test_that("betar() rows with zero prior weight are dropped from the PIRLS, as bgam.fit", {
  d <- betar_rows("probit", 0.5, n = 10)
  wt <- d$wt
  wt[c(2, 7)] <- 0
  r <- betar_call(d, 2L, wt)
  de <- mgcv:::dDeta(d$y, d$mu, wt, d$fam$getTheta(), d$fam, 0)
  z <- d$eta - de$Deta.EDeta2
  good <- is.finite(z) & is.finite(de$EDeta2)
  expect_identical(which(!good), c(2L, 7L))
  expect_identical(r$w[!good], c(0, 0))
  expect_identical(r$z[!good], c(0, 0))
  expect_identical(r$dev[!good], c(0, 0))
  expect_identical(unname(r$sums[!good, ]), matrix(0, 2, 6))
  expect_equal(r$w[good], de$EDeta2[good] / 2, tolerance = 1e-14)
})
