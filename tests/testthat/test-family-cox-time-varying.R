# Cox models with time-varying covariates, mgcv's ?cox.pht recipe (Whitehead
# 1980): survival::pbcseq's repeated measurements made into one row per
# subject at risk at each event time (tdpois(), ?cox.pht's code), then
# fitted as the equivalent Poisson model with an intercept per event time,
# and as a conditional logistic model (cox.ph() stratified by event time).
# The first 60 subjects: 1606 rows, 42 event times.  Measured (mgcv
# 1.8-41, CPU): Poisson 5e-14 of the range, sp 9e-9; conditional logistic
# 5e-16, sp 9e-12.

pht_app <- function(x, t, to) {
  y <- if (sum(!is.na(x)) < 1) rep(NA, length(to)) else
    stats::approx(t, x, to, method = "constant", rule = 2)$y
  if (is.factor(x)) factor(levels(x)[y], levels = levels(x)) else y
}

# ?cox.pht's tdpois()
pht_tdpois <- function(dat, event = "z", et = "futime", t = "day", status = "status1",
                       id = "id") {
  te <- sort(unique(dat[[et]][dat[[status]] == 1]))
  sid <- unique(dat[[id]])
  dat[[event]] <- 0
  start <- 1
  dap <- dat[rep(seq_along(sid), length(te)), ]
  for (i in seq_along(sid)) {
    di <- dat[dat[[id]] == sid[i], ]
    tr <- te[te <= di[[et]][1]]
    um <- data.frame(lapply(X = di, FUN = pht_app, t = di[[t]], to = tr))
    if (um[[et]][1] == max(tr) && um[[status]][1] == 1) um[[event]][nrow(um)] <- 1
    um[[et]] <- tr
    dap[start:(start - 1 + nrow(um)), ] <- um
    start <- start + nrow(um)
  }
  dap[1:(start - 1), ]
}

pht_data <- function() {
  d <- survival::pbcseq
  d <- d[d$id <= 60, ]
  d$status1 <- as.numeric(d$status == 2)
  pb <- pht_tdpois(d)
  pb$tf <- factor(pb$futime)
  pb$dumt <- rep(1, nrow(pb))
  pb
}

expect_pht_fit <- function(g, b, tol) {
  expect_s3_class(g, "gam_gpu")
  lb <- b$linear.predictors
  expect_lt(max(abs(g$linear.predictors - lb)) / diff(range(lb)), tol)
  expect_lt(max(abs(log(g$sp / b$sp))), 1e-6)
  expect_lt(max(abs(g$edf - b$edf)), 1e-6)
  expect_equal(as.numeric(g$gcv.ubre), as.numeric(b$gcv.ubre), tolerance = 1e-9)
}

test_that("?cox.pht's Poisson form: gam_gpu() fits it as gam() does", {
  skip_if_not_installed("survival")
  pb <- pht_data()
  f <- z ~ tf - 1 + sex + trt + s(sqrt(protime), k = 5) + s(bili, k = 5) + s(albumin, k = 5)
  b <- mgcv::gam(f, family = poisson, data = pb, method = "REML")
  g <- gam_gpu(f, family = poisson, data = pb, method = "REML", device = "off")
  expect_true(g$converged)
  expect_pht_fit(g, b, 1e-9)
  # (the cumulative hazard by subject, ?cox.pht's martingale residuals)
  expect_equal(tapply(fitted(g), pb$id, sum), tapply(fitted(b), pb$id, sum), tolerance = 1e-8)
})

test_that("?cox.pht's conditional logistic form: cox.ph() stratified by event time", {
  skip_if_not_installed("survival")
  pb <- pht_data()
  f <- cbind(dumt, tf) ~ sex + trt + s(sqrt(protime), k = 5) + s(bili, k = 5) +
    s(albumin, k = 5)
  b <- mgcv::gam(f, family = mgcv::cox.ph, data = pb, weights = z)
  g <- gam_gpu(f, family = mgcv::cox.ph, data = pb, weights = z, method = "REML",
               device = "off")
  expect_identical(g$outer.info$conv, "full convergence")
  expect_pht_fit(g, b, 1e-9)
  expect_equal(g$family$data$h, b$family$data$h, tolerance = 1e-9)
  nd <- pb[1:5, ]
  expect_equal(predict(g, nd), predict(b, nd), tolerance = 1e-9)
})
