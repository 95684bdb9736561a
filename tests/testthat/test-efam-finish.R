# What gam_gpu() computes in C after an extended family's fit, where mgcv
# does it in R (R/families.R efam_finish): the deviance rows that
# find.null.dev() sums, against each family's own dev.resids().

test_that("the deviance rows in C are the families' dev.resids()", {
  set.seed(8)
  n <- 3000
  mu <- exp(rnorm(n, 1, 0.5))
  w <- runif(n) + 0.5
  cases <- list(
    list("negbin", mgcv::nb(theta = 3), rnbinom(n, 3, mu = mu), mu, numeric(0)),
    list("tw", mgcv::tw(theta = 1.4), mgcv::rTweedie(mu, 1.4, 1.1), mu, c(1.01, 1.99)),
    list("scat", mgcv::scat(theta = c(5, 0.8)), log(mu) + 0.8 * rt(n, 5), log(mu), 3),
    list("ocat", mgcv::ocat(theta = c(1, 1.5)), as.numeric(sample(1:4, n, TRUE)),
         rnorm(n, 0.5), numeric(0)))
  for (cs in cases) {
    fam <- cs[[2]]
    y <- as.numeric(cs[[3]])
    ef <- list(theta = as.numeric(fam$getTheta()), aux = cs[[5]], log_scale = 0,
               scale_est = 0L)
    got <- .Call(gamgpu:::gg_efam_dev_resids_r, cs[[1]], y, cs[[4]], w, ef, 2L)
    ref <- as.vector(fam$dev.resids(y, cs[[4]], w))   # ocat attaches a "sign"
    expect_lt(max(abs(got - ref) / pmax(abs(ref), 1)), 1e-13, label = cs[[1]])
    # a single weight is recycled, as R recycles it
    expect_equal(.Call(gamgpu:::gg_efam_dev_resids_r, cs[[1]], y, cs[[4]], 1, ef, 1L),
                 as.vector(fam$dev.resids(y, cs[[4]], 1)), tolerance = 1e-13)
    # their sum at one mu for every row (find.null.dev()'s search), the
    # same for any thread count
    m1 <- stats::median(cs[[4]])
    ref <- sum(fam$dev.resids(y, rep(m1, n), w))
    s1 <- .Call(gamgpu:::gg_efam_dev_sum_r, cs[[1]], y, m1, w, ef, 1L)
    expect_lt(abs(s1 - ref) / abs(ref), 1e-13, label = paste(cs[[1]], "sum"))
    expect_identical(.Call(gamgpu:::gg_efam_dev_sum_r, cs[[1]], y, m1, w, ef, 3L), s1)
    expect_equal(.Call(gamgpu:::gg_efam_dev_sum_r, cs[[1]], y, cs[[4]], w, ef, 2L),
                 sum(got), tolerance = 1e-14)
  }
  expect_error(.Call(gamgpu:::gg_efam_dev_sum_r, "negbin", 1:3 + 0, c(1, 2), 1, list(theta = 1,
                     aux = numeric(0), log_scale = 0, scale_est = 0L), 1L),
               class = "gamgpu_bad_input")
})
