# gfam()'s rows in C (inst/include/efam_gfam.h) against the family's own R:
# its Dd() at levels 0-2 (through mgcv's dDeta(), with each row's member
# link), dev.resids(), ls() and its theta derivatives, the starting mu of
# its initialize, and the IRLS rows' mu -- per row, to 1e-12 relative.

gfam_rows_case <- function(fl, kinds, theta, n = 240, seed = 11) {
  d <- gfam_sim(kinds, n = n, seed = seed)
  fam <- mgcv::gfam(fl)
  pre <- fam$preinitialize(cbind(d$y, d$fi), fam)     # (sets the index in fam)
  fam$putTheta(theta)
  y <- d$y
  attr(y, "censor") <- as.double(d$fi)
  set.seed(seed + 1)
  w <- sample(1:3, n, replace = TRUE)
  w[c(5, 17)] <- 0
  eta <- fam$linkfun(gamgpu:::efam_mustart(fam, d$y, w)) + rnorm(n) * 0.2
  list(fam = fam, y = y, w = w, eta = eta, mu = fam$linkinv(eta), theta = theta,
       ef = gamgpu:::efam_spec(fam, 1, y)$ef)
}

expect_gfam_rows <- function(cs) {
  fam <- cs$fam
  th <- cs$theta
  N <- length(th)
  npk <- N * (N + 1) / 2
  yv <- as.numeric(cs$y)
  r <- .Call(gamgpu:::gg_efam_rows_r, "gfam", "identity", cs$eta, cs$y, cs$w, cs$ef, 2L)
  expect_true(efam_rel_ok(r$mu, cs$mu))
  mu <- cs$mu
  expect_true(efam_rel_ok(r$dev, fam$dev.resids(yv, mu, cs$w, th)))
  D0 <- fam$Dd(yv, mu, th, cs$w, level = 0)
  expect_true(efam_rel_ok(r$Dmu, D0$Dmu))
  expect_true(efam_rel_ok(r$EDmu2, D0$EDmu2))
  expect_true(efam_rel_ok(r$mustart, gamgpu:::efam_mustart(fam, yv, cs$w)))
  # the sums' columns: dev, ls, Dth, Dth2 (packed), lsth1, lsth2 (packed)
  D2 <- fam$Dd(yv, mu, th, cs$w, level = 2)
  ls <- fam$ls(yv, cs$w, th, 1)
  s <- r$sums
  pk <- function(m) t(m)[lower.tri(m, diag = TRUE)]
  expect_true(efam_rel_ok(sum(s[, 1]), sum(fam$dev.resids(yv, mu, cs$w, th))))
  expect_true(efam_rel_ok(sum(s[, 2]), ls$ls))
  expect_true(efam_rel_ok(colSums(s[, 2 + seq_len(N), drop = FALSE]), colSums(D2$Dth)))
  expect_true(efam_rel_ok(colSums(s[, 2 + N + seq_len(npk), drop = FALSE]), colSums(D2$Dth2)))
  expect_true(efam_rel_ok(colSums(s[, 2 + N + npk + seq_len(N), drop = FALSE]), ls$lsth1))
  l2 <- colSums(s[, 2 + 2 * N + npk + seq_len(npk), drop = FALSE])
  # (gaussian's lsth2, nobs / 2 - nobs / 2, is 0 in R and rounding in sums)
  expect_true(all(abs(l2 - pk(ls$lsth2)) <= 1e-12 * pmax(abs(pk(ls$lsth2)), 1)))
  # the row's part per row: Dth, Dth2 for every row
  expect_true(efam_rel_ok(s[, 2 + seq_len(N)], D2$Dth))
  expect_true(efam_rel_ok(s[, 2 + N + seq_len(npk)], D2$Dth2))
  # Dd at levels 0-2 through dDeta(), each row with its member's link
  dDeta <- getFromNamespace("dDeta", "mgcv")
  for (lev in 0:2) {
    a <- .Call(gamgpu:::gg_efam_deta_r, "gfam", "identity", mu, cs$y, cs$w, cs$ef, lev)
    b <- dDeta(yv, mu, cs$w, th, fam, lev)
    parts <- c("Deta", "Deta2", "EDeta2", if (lev > 0) c("Dth", "Detath", "Deta3", "Deta2th"),
               if (lev > 1) c("Deta4", "Dth2", "Detath2", "Deta2th2", "Deta3th"))
    for (p in parts)
      expect_true(efam_rel_ok(a[[p]], b[[p]]), label = sprintf("level %d %s", lev, p))
  }
}

test_that("gfam(gaussian, poisson, binomial)'s rows are its Dd, ls and dev.resids", {
  skip_if_no_gfam()
  expect_gfam_rows(gfam_rows_case(list(gaussian, poisson, binomial),
                                  c("gaussian", "poisson", "binomial"), theta = -0.7))
})

test_that("gfam() with Gamma, nb() and a probit binomial: rows and theta slots", {
  skip_if_no_gfam()
  fl <- list(Gamma(link = "log"), binomial(link = "probit"), mgcv::nb(), gaussian)
  expect_gfam_rows(gfam_rows_case(fl, c("Gamma", "binomial", "nb", "gaussian"),
                                  theta = c(-0.4, 0.8, 0.3), n = 400))
})

test_that("gfam()'s rows with an unknown member index are NaN, not another member's", {
  skip_if_no_gfam()
  cs <- gfam_rows_case(list(gaussian, poisson), c("gaussian", "poisson"), theta = 0.2, n = 20)
  attr(cs$y, "censor")[3] <- 3
  r <- .Call(gamgpu:::gg_efam_rows_r, "gfam", "identity", cs$eta, cs$y, cs$w, cs$ef, 2L)
  expect_true(is.nan(r$dev[3]))
  expect_true(all(is.finite(r$dev[-3])))
})
