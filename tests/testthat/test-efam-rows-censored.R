# mgcv's censored families cnorm(), clog() and cpois() row by row
# (inst/include/efam_cens.h through gg_efam_deta_r and gg_efam_rows_r)
# against the family objects' own Dd() through mgcv's dDeta(), dev.resids()
# and ls(): every censoring case (uncensored, interval, left, right), every
# link mgcv allows them, prior weights != 1.  clog() and cpois() exist in
# mgcv >= 1.9-2 only.
#
# Tolerance, two-sided: each quantity's largest difference over the rows
# relative to its largest magnitude.  The C rows evaluate mgcv's
# expressions; pnorm, lgamma and ppois are C's (erfc, an incomplete gamma
# function) against R's nmath.  Measured on x86-64: <= 4e-14 of the
# column's scale for clog(); cnorm()'s third and fourth derivatives <= 3.3e-12
# (their terms cancel, and the one-sided cases' products associate
# differently), the rest <= 1e-13; cpois()'s fourth derivatives (differences
# of Poisson probabilities) <= 3e-12.  Asked: 1e-10 (1e-12 for clog()).
# (cnorm()'s dev.resids and aic find mgcv's dpnorm() only with mgcv
# attached: with_mgcv().)

cens_rows_data <- function(family, link, n = 48, seed = 1) {
  set.seed(seed)
  pos <- link != "identity" || family == "cpois"
  mu <- if (pos) stats::runif(n, 0.3, 5) else stats::runif(n, -2, 4)
  k <- seq_len(n) %% 4
  if (family == "cpois") {
    y <- as.numeric(stats::rpois(n, mu))
    yat <- y
    i3 <- which(k == 3)
    yat[i3] <- y[i3] + sample(1:3, length(i3), TRUE) + 0.5
    y[i3] <- y[i3] - 0.5
  } else {
    y <- mu + stats::rnorm(n)
    yat <- y
    i3 <- which(k == 3)
    yat[i3] <- y[i3] + ifelse(seq_along(i3) %% 2 == 0, 1, -1) * stats::runif(length(i3), 0.1, 2)
  }
  yat[k == 1] <- Inf
  yat[k == 2] <- -Inf
  attr(y, "censor") <- yat
  list(y = y, mu = mu, wt = if (family == "cpois") rep(1, n) else stats::runif(n, 0.3, 3))
}

col_err <- function(a, b) {
  a <- as.matrix(a)
  b <- as.matrix(b)
  if (!length(b)) return(0)
  max(abs(a - b)) / max(abs(b), .Machine$double.xmin)
}

expect_cens_rows <- function(family, link, theta, tol) {
  f <- mgcv::fix.family.link(do.call(utils::getFromNamespace(family, "mgcv"), list(link = link)))
  if (length(theta)) f$putTheta(theta)
  for (seed in 1:3) {
    d <- cens_rows_data(family, link, seed = seed)
    par <- list(theta = theta, aux = if (link == "identity") -Inf else as.numeric(min(d$y > 0)),
                log_scale = 0, scale_est = 0L)
    lab <- sprintf("%s(link = %s), seed %d", family, link, seed)
    r <- .Call(gamgpu:::gg_efam_deta_r, family, link, d$mu, d$y, d$wt, par, 2L)
    dd <- mgcv:::dDeta(d$y, d$mu, d$wt, theta, f, 2L)
    for (k in intersect(names(r), names(dd)))
      expect_lt(col_err(r[[k]], dd[[k]]), tol, label = paste(lab, k))
    rr <- .Call(gamgpu:::gg_efam_rows_r, family, link, f$linkfun(d$mu), d$y, d$wt, par, 2L)
    expect_lt(col_err(rr$dev, f$dev.resids(d$y, d$mu, d$wt, theta)), tol, label = paste(lab, "dev"))
    ls <- f$ls(d$y, d$wt, theta, 1)
    expect_lt(col_err(sum(rr$sums[, 2]), ls$ls), tol, label = paste(lab, "ls"))
    ini <- list2env(list(y = d$y, family = f, weights = d$wt, nobs = length(d$y)))
    eval(f$initialize, ini)
    expect_identical(rr$mustart, as.numeric(ini$mustart), label = paste(lab, "mustart"))
    if (length(theta)) {
      D2 <- f$Dd(d$y, d$mu, theta, d$wt, 2L)
      expect_lt(col_err(sum(rr$sums[, 3]), sum(D2$Dth)), tol, label = paste(lab, "sum Dth"))
      expect_lt(col_err(sum(rr$sums[, 4]), sum(D2$Dth2)), tol, label = paste(lab, "sum Dth2"))
      expect_lt(col_err(sum(rr$sums[, 5]), ls$lsth1), tol, label = paste(lab, "lsth1"))
      expect_lt(col_err(sum(rr$sums[, 6]), ls$lsth2), tol, label = paste(lab, "lsth2"))
    }
  }
}

test_that("cnorm()'s rows are mgcv's in every censoring case and link", {
  for (lk in c("identity", "log", "sqrt")) for (th in c(-0.7, 0.3))
    with_mgcv(expect_cens_rows("cnorm", lk, th, 1e-10))
})

test_that("clog()'s rows are mgcv's in every censoring case and link", {
  skip_if_not(exists("clog", envir = asNamespace("mgcv")), "clog() needs mgcv >= 1.9-2")
  for (lk in c("identity", "log", "sqrt")) for (th in c(-0.7, 0.3))
    expect_cens_rows("clog", lk, th, 1e-12)
})

test_that("cpois()'s rows are mgcv's in every censoring case and link", {
  skip_if_not(exists("cpois", envir = asNamespace("mgcv")), "cpois() needs mgcv >= 1.9-2")
  for (lk in c("log", "identity", "sqrt"))
    expect_cens_rows("cpois", lk, numeric(0), 1e-10)
})

test_that("a censored row's probabilities reach the tails as R's do", {
  # log pnorm beyond erfc's range (Mills' ratio) and ppois in both tails,
  # through cnorm()'s and cpois()'s deviance of one censored row
  f <- mgcv::cnorm()
  with_mgcv(for (z in c(-45, -31, -29, -5, 0, 3, 12)) {
    y <- z
    attr(y, "censor") <- -Inf                      # left censored at z, mu = 0
    d <- .Call(gamgpu:::gg_efam_rows_r, "cnorm", "identity", 0, y, 1,
               list(theta = 0, aux = -Inf, log_scale = 0, scale_est = 0L), -1L)$dev
    expect_lt(abs(d - f$dev.resids(y, 0, 1, 0)) / abs(f$dev.resids(y, 0, 1, 0)), 1e-13,
              label = sprintf("left censored at %g", z))
  })
  for (q in c(0, 3, 40, 400)) for (lambda in c(0.5, 30, 350)) for (lt in c(-Inf, Inf)) {
    y <- q
    attr(y, "censor") <- lt
    d <- .Call(gamgpu:::gg_efam_rows_r, "cpois", "log", log(lambda), y, 1,
               list(theta = numeric(0), aux = 0, log_scale = 0, scale_est = 0L), -1L)$dev
    want <- -2 * stats::ppois(q, lambda, lower.tail = lt < 0, log.p = TRUE)
    expect_lt(abs(d - want) / max(abs(want), 1e-300), 1e-12,
              label = sprintf("ppois(%g, %g, lower = %s)", q, lambda, lt < 0))
  }
})
