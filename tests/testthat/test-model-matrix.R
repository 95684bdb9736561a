# The full model matrix built after bam()'s subsample setup must be exactly
# what predict.gam(type = "lpmatrix") gives, serially and in forked blocks.

test_that("the model matrix equals predict.gam's lpmatrix, in one block or several", {
  set.seed(4)
  n <- 12000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n),
                  fac = factor(sample(letters[1:3], n, TRUE)), off = runif(n))
  d$y <- sin(6 * d$x0) + d$x1 + rnorm(n) / 3
  forms <- list(y ~ s(x0, bs = "cr") + s(x1) + fac + x2 + offset(off),
                y ~ te(x0, x1, k = c(4, 5)) + s(x2, by = fac) + fac,
                y ~ s(x2, bs = "cc") + ti(x0, x1, k = c(4, 4)) + s(fac, bs = "re"))
  for (f in forms) {
    G <- mgcv::bam(f, data = d, fit = FALSE, chunk.size = 5000)
    expect_lt(nrow(G$X), n)                    # bam's subsample setup
    Gp <- G
    class(Gp) <- "gam"
    Gp$coefficients <- rep(0, ncol(G$X))
    Gp$model <- G$mf
    ref <- unname(mgcv::predict.gam(Gp, newdata = G$mf, type = "lpmatrix",
                                    newdata.guaranteed = TRUE))
    attr(ref, "model.offset") <- NULL
    expect_identical(gamgpu:::full_model_matrix(G, G$mf, cores = 1L), ref[, ])
    skip_on_os("windows")
    expect_identical(gamgpu:::full_model_matrix(G, G$mf, cores = 2L), ref[, ])
  }
})
