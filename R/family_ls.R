# The log saturated likelihood, family$ls(), as the outer iterations call
# it: at every new scale (Gamma's ML and REML) or theta (nb()'s), an O(n)
# pass of special functions -- lgamma(), digamma(), trigamma(), dbinom() --
# over rows whose arguments mostly repeat: the counts of nb() and poisson,
# the 0/1 of binomial, Gamma's weights.  At 10^6 rows nb()'s took 5.4 of a
# fit's 8 s on the GPU machine.  Here each row term is computed once per
# distinct argument, then summed over the rows in C as R's sum() sums them
# (sum_spread()): the same numbers, bit for bit, without mgcv's
# n-vectors.  Built once per fit for its rows (saturated_ls()); before use the compressed function is checked
# against the family's own ls() on a sample of the rows, identical(), so
# that an mgcv whose ls() differs keeps its own.  Any other family, or rows
# whose arguments seldom repeat: the family's ls() itself.  nb()'s aic
# after the fit likewise (aic_nb()).

# family$ls for the rows y, w (and binomial trials n): function(scale) for
# the exponential families (gam.fit3's ls(y, w, n, scale)), function(theta,
# scale) for an extended family (gam.fit4's ls(y, w, theta, scale)).
saturated_ls <- function(fam, y, w, n = NULL) {
  own <- mgcv_visible(fam$ls)
  efam <- inherits(fam, "extended.family")
  plain <- if (efam) function(th, phi) own(y, w, th, phi) else function(phi) own(y, w, n, phi)
  make <- ls_by_distinct(fam)
  if (is.null(make)) return(plain)
  fast <- make(y, w, n)
  if (is.null(fast) || !ls_checks(make, own, efam, y, w, n)) return(plain)
  fast
}

# The compressed ls() maker of a family (function(y, w, n) giving the
# function of scale or theta, NULL where the rows do not repeat enough), or
# NULL for a family without one.
ls_by_distinct <- function(fam) {
  name <- fam$family[1L]
  if (inherits(fam, "extended.family"))
    return(if (identical(name, "negative binomial")) ls_nb)
  switch(name, Gamma = ls_gamma, binomial = ls_binomial, poisson = ls_poisson, NULL)
}

# Whether the compressed ls() of `make` equals the family's own on a sample
# of the rows (the first and every so often, zero weights included), at a
# scale and theta of no special value.
ls_checks <- function(make, own, efam, y, w, n) {
  i <- unique(c(seq_len(min(64L, length(y))), round(seq(1, length(y), length.out = 64L))))
  f <- make(y[i], w[i], if (!is.null(n)) n[i], min_repeat = 0)
  v <- if (efam) {
    a <- f(0.7, 1.3)
    identical(a, own(y[i], w[i], 0.7, 1.3)[names(a)])
  } else identical(f(1.3), own(y[i], w[i], n[i], 1.3))
  isTRUE(v)
}

# The distinct values of key (numbers) and each row's index among them, or
# NULL where fewer than min_repeat rows share each value on average.
distinct_keys <- function(key, min_repeat) {
  u <- unique(key)
  if (length(u) * min_repeat > length(key)) return(NULL)
  list(u = u, i = match(key, u))
}

# Gamma: fix.family.ls()'s terms are functions of scale / w, the rows of
# positive weight.
ls_gamma <- function(y, w, n, min_repeat = 4) {
  pos <- w > 0
  y <- y[pos]
  w <- w[pos]
  d <- distinct_keys(w, min_repeat)
  if (is.null(d)) return(NULL)
  ly <- log(y)
  w2 <- w^2
  function(scale) {
    res <- rep(0, 3)
    s <- scale / d$u
    res[1] <- sum_spread(-lgamma(1 / s) - log(s) / s - 1 / s, d$i, ly, "-")
    res[2] <- sum_spread((digamma(1 / s) + log(s)) / (s * s), d$i, w, "/")
    res[3] <- sum_spread((-trigamma(1 / s) / (s) + (1 - 2 * log(s) - 2 * digamma(1 / s))) / (s^3),
                         d$i, w2, "/")
    res
  }
}

# binomial: -binomial()$aic(y, n, y, w, 0) / 2, whose row terms are
# functions of (y, trials, weight).
ls_binomial <- function(y, w, n, min_repeat = 4) {
  m <- if (any(n > 1)) n else w
  key <- triple_key(y, m, w)
  d <- if (!is.null(key)) distinct_keys(key, min_repeat)
  if (is.null(d)) return(NULL)
  # (the rows where each distinct triple first occurs, in unique()'s order)
  j <- !duplicated(d$i)
  yu <- y[j]
  mu <- m[j]
  wu <- w[j]
  term <- ifelse(mu > 0, (wu / mu), 0) * stats::dbinom(round(mu * yu), round(mu), yu, log = TRUE)
  v <- c(-(-2 * sum_spread(term, d$i, NULL, "none")) / 2, 0, 0)
  function(scale) v
}

# poisson: sum(dpois(y, y, log = TRUE) * w), row terms functions of y.
ls_poisson <- function(y, w, n, min_repeat = 4) {
  d <- distinct_keys(y, min_repeat)
  if (is.null(d)) return(NULL)
  res <- rep(0, 3)
  res[1] <- sum_spread(stats::dpois(d$u, d$u, log = TRUE), d$i, w, "*")
  function(scale) res
}

# nb(): the row terms are functions of y given theta.
ls_nb <- function(y, w, n, min_repeat = 4) {
  d <- distinct_keys(y, min_repeat)
  if (is.null(d)) return(NULL)
  yu <- d$u
  ylogy <- yu
  ind <- yu > 0
  ylogy[ind] <- yu[ind] * log(yu[ind])
  lg1 <- lgamma(yu + 1)
  i <- d$i
  # (mgcv's LSTH1, the rows' terms of lsth1, is not returned: the outer
  # iteration takes lsth1 and lsth2 alone)
  function(theta, scale) {
    Theta <- exp(theta)
    term <- (yu + Theta) * log(yu + Theta) - ylogy + lg1 - Theta * log(Theta) +
      lgamma(Theta) - lgamma(Theta + yu)
    ls <- -sum_spread(term, i, w, "*")
    yth <- yu + Theta
    lyth <- log(yth)
    psi0.yth <- digamma(yth)
    psi0.th <- digamma(Theta)
    term <- Theta * (lyth - psi0.yth + psi0.th - theta)
    lsth <- sum_spread(-term, i, w, "*")
    psi1.yth <- trigamma(yth)
    psi1.th <- trigamma(Theta)
    term <- Theta * (lyth - Theta * psi1.yth - psi0.yth + Theta / yth + Theta * psi1.th +
                       psi0.th - theta - 1)
    lsth2 <- -sum_spread(term, i, w, "*")
    list(ls = ls, lsth1 = lsth, lsth2 = lsth2)
  }
}

# nb()'s aic, family$aic(y, mu, theta, wt, dev), with its lgamma()s of the
# counts once per distinct count (at 10^6 rows mgcv's took 1.4 s on the
# 2-core machine): the same operations on the same numbers in R's order,
# so mgcv's value to the bit; NULL where the counts seldom repeat.
aic_nb <- function(y, mu, theta, wt, min_repeat = 4) {
  d <- distinct_keys(y, min_repeat)
  if (is.null(d)) return(NULL)
  Theta <- exp(theta)
  term <- (y + Theta) * log(mu + Theta) - y * log(mu) + lgamma(d$u + 1)[d$i] -
    Theta * log(Theta) + lgamma(Theta) - lgamma(Theta + d$u)[d$i]
  2 * sum(term * wt)
}

# An extended family's aic at the fit's mu: nb()'s by aic_nb() where it
# equals the family's own on a sample of the rows (identical(): an mgcv
# whose aic differs keeps its own), else family$aic(y, mu, theta, wt, dev).
efam_aic <- function(family, name, y, mu, wt, dev) {
  theta <- family$getTheta()
  own <- mgcv_visible(family$aic)
  if (identical(name, "negbin")) {
    i <- unique(c(seq_len(min(64L, length(y))), round(seq(1, length(y), length.out = 64L))))
    if (identical(aic_nb(y[i], mu[i], theta, wt[i], min_repeat = 0), own(y[i], mu[i], theta, wt[i], dev))) {
      a <- aic_nb(y, mu, theta, wt)
      if (!is.null(a)) return(a)
    }
  }
  own(y, mu, theta, wt, dev)
}

# sum(t[i] op v) as R computes it, to the bit, without its n-vectors (C).
sum_spread <- function(t, i, v, op = c("*", "-", "/", "none")) {
  op <- match(match.arg(op), c("*", "-", "/", "none")) - 1L
  .Call(gg_sum_spread_r, as.double(t), i, if (op < 3L) as.double(v), op)
}

# One number per distinct (a, b, c) triple of doubles, equal where the
# triples are (each value's index among its distinct values, combined),
# or NULL where the combination would not be exact in a double.  Columns
# of one value (binomial's trials and weights, mostly) play no part: where
# one column alone varies, it is the key (unique() finds the same groups
# in the same order).
triple_key <- function(a, b, c) {
  v <- list(a, b, c)
  v <- v[!vapply(v, function(x) isTRUE(all(x == x[1L])), NA)]
  if (length(v) == 0L) return(rep(0, length(a)))
  if (length(v) == 1L) return(v[[1L]])
  k <- lapply(v, function(x) match(x, unique(x)))
  m <- vapply(k, max, 0) + 1
  if (prod(m) > 2^52) return(NULL)
  key <- as.double(k[[1L]])
  for (j in seq_along(k)[-1L]) key <- key * m[j] + k[[j]]
  key
}
