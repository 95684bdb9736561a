# method = "GCV.Cp" for additive models (R/gcv.R): gam()'s GCV score when
# the scale is unknown and its UBRE (Mallows' Cp) when known, minimised by
# gam()'s own optimizer, mgcv's magic(), on the problem reduced to p rows
# from one Gram product, against mgcv::gam(method = "GCV.Cp") itself.
# Measured against gam() over this file's gamSim cases: the same magic()
# iterations (one fewer with prior weights), linear predictors to 4e-7 of
# their range (2e-13 without weights or select), scores to 1.5e-12
# relative, EDF to 1.4e-5, scale to 4e-8, log smoothing parameters to 8e-5
# where the score is not flat.

gcv_data <- function(n = 3000) {
  set.seed(2)
  d <- mgcv::gamSim(1, n = n, dist = "normal", scale = 2, verbose = FALSE)
  d$w <- runif(n, 0.5, 2)
  d$off <- runif(n) / 5
  d
}

expect_gcv_agrees <- function(g, b, label, sp_tol = 1e-3) {
  expect_true(isTRUE(g$converged), label = label)
  # gam()'s optimizer, and its record: magic() for GCV and UBRE
  expect_identical(g$optimizer, b$optimizer, label = label)
  if (identical(b$optimizer, "magic")) {
    expect_null(g$outer.info, label = label)
    expect_identical(names(g$mgcv.conv), names(b$mgcv.conv), label = label)
  } else {
    expect_identical(g$outer.info$conv, "full convergence", label = label)
  }
  expect_identical(g$method, b$method, label = label)
  # no smoothing-parameter-corrected covariance, as gam()'s
  for (nm in c("Vc", "V.sp", "edf2"))
    expect_identical(is.null(g[[nm]]), is.null(b[[nm]]), label = paste(label, nm))
  expect_identical(names(g$gcv.ubre), "GCV.Cp", label = label)
  expect_identical(g$scale.estimated, b$scale.estimated, label = label)
  expect_identical(g$device$gcv_gram, "cpu", label = label)
  r <- diff(range(b$linear.predictors))
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, 1e-6, label = label)
  # the same optimizer on the same score: its optimum to rounding -- or, on
  # a flat score where magic() stops at another point of the plateau, a
  # score lower than gam()'s (measured: down to -1.0e-10 relative, with
  # gamgpu's own Gram kernel)
  rel <- (g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]])
  expect_lt(rel, 1e-10, label = label)
  expect_gt(rel, -1e-9, label = label)
  expect_lt(abs(sum(g$edf) - sum(b$edf)), 1e-4, label = label)
  expect_equal(g$sig2, b$sig2, tolerance = 1e-7, label = label)
  # where the score is not flat (a smoothing parameter driven to its null
  # space by neither fit; magic()'s steps of 2 in log sp on a plateau can
  # take one of them past e^-8 or e^8): log sp agree
  ok <- abs(log(b$sp)) < 8 & abs(log(g$sp)) < 8
  if (any(ok)) expect_lt(max(abs(log(g$sp[ok]) - log(b$sp[ok]))), sp_tol, label = label)
  nd <- b$model[seq_len(min(200, nrow(b$model))), , drop = FALSE]
  pg <- predict(g, nd, se.fit = TRUE, device = "off")
  pb <- predict(b, nd, se.fit = TRUE)
  expect_lt(max(abs(pg$se.fit / pb$se.fit - 1)), 1e-4, label = label)
}

test_that("GCV.Cp matches gam() for gaussian models: weights, offset, gamma, te, id, sp, select", {
  d <- gcv_data()
  cases <- list(
    basic = list(f = y ~ s(x0) + s(x1) + s(x2, bs = "cr") + s(x3)),
    weights = list(f = y ~ s(x0) + s(x1) + s(x2), extra = list(weights = quote(w))),
    offset = list(f = y ~ s(x0) + s(x1) + offset(off)),
    gamma = list(f = y ~ s(x0) + s(x1) + s(x2), extra = list(gamma = 1.4)),
    te = list(f = y ~ te(x0, x1) + s(x2)),
    id = list(f = y ~ s(x0, id = 1) + s(x1, id = 1) + s(x2)),
    sp = list(f = y ~ s(x0) + s(x1) + s(x2), extra = list(sp = c(-1, 3, -1))),
    select = list(f = y ~ s(x0) + s(x1) + s(x2) + s(x3), extra = list(select = TRUE)))
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    args <- c(list(cs$f, data = quote(d), method = "GCV.Cp"), cs$extra)
    b <- do.call(mgcv::gam, args)
    g <- do.call(gam_gpu, c(args, list(device = "off")))
    expect_gcv_agrees(g, b, nm, sp_tol = if (is.null(cs$sp_tol)) 1e-3 else cs$sp_tol)
  }
})

test_that("GCV.Cp with a known scale is UBRE, as gam()'s", {
  d <- gcv_data()
  f <- y ~ s(x0) + s(x1) + s(x2)
  b <- mgcv::gam(f, data = d, method = "GCV.Cp", scale = 4)
  g <- gam_gpu(f, data = d, method = "GCV.Cp", scale = 4, device = "off")
  expect_identical(g$method, "UBRE")
  expect_false(g$scale.estimated)
  expect_gcv_agrees(g, b, "UBRE")
  expect_identical(g$sig2, 4)
})

test_that("GCV.Cp on data R ships, and for a model without smooths", {
  aq <- airquality
  f <- Ozone ~ s(Temp) + s(Wind, bs = "cr") + s(Solar.R)
  b <- mgcv::gam(f, data = aq, method = "GCV.Cp")
  g <- gam_gpu(f, data = aq, method = "GCV.Cp", device = "off")
  expect_equal(nrow(g$model), 111L)
  expect_gcv_agrees(g, b, "airquality")
  b <- mgcv::gam(mpg ~ wt + hp, data = mtcars, method = "GCV.Cp")
  g <- gam_gpu(mpg ~ wt + hp, data = mtcars, method = "GCV.Cp", device = "off")
  expect_equal(g$gcv.ubre[[1]], b$gcv.ubre[[1]], tolerance = 1e-12)
  expect_equal(unname(coef(g)), unname(coef(b)), tolerance = 1e-10)
  expect_identical(g$method, "GCV")
})

test_that("GCV.Cp at n > chunk.size sets up gam()'s bases on every row: the fit is gam()'s", {
  # (bam()'s setup would place its bases on a chunk.size subsample and
  # absorb constraints by sweep and drop; gam()'s answer needs gam()'s)
  d <- gcv_data(6000)
  f <- y ~ s(x0) + s(x1, bs = "cr") + te(x2, x3, k = c(4, 4))
  g <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off",
               control = gam_gpu_control(chunk.size = 2000))
  b <- mgcv::gam(f, data = d, method = "GCV.Cp")
  expect_identical(g$device$model_matrix, "matrix")
  expect_match(g$device$model_matrix_reason, "every row")
  expect_gcv_agrees(g, b, "n > chunk.size")
  expect_equal(g$smooth[[1]]$xp, b$smooth[[1]]$xp)
})

test_that("mgcv's methods take a GCV.Cp fit", {
  d <- gcv_data(1500)
  g <- gam_gpu(y ~ s(x0) + s(x1), data = d, method = "GCV.Cp", device = "off")
  b <- mgcv::gam(y ~ s(x0) + s(x1), data = d, method = "GCV.Cp")
  expect_output(print(g), "GCV score")
  sg <- summary(g)
  expect_equal(sg$s.table[, "edf"], summary(b)$s.table[, "edf"], tolerance = 1e-4)
  expect_equal(sg$s.table[, "F"], summary(b)$s.table[, "F"], tolerance = 1e-4)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  # gam()'s record of magic(), as gam.check() prints it for b
  expect_output(mgcv::gam.check(g), "Optimizer: magic\nSmoothing parameter selection converged")
  expect_equal(AIC(g), AIC(b), tolerance = 1e-6)
})

test_that("GCV.Cp with in.out or rho is refused by name", {
  # (beyond the additive model GCV.Cp is gam.fit3's: test-method-outer.R; for
  # negbin(theta) UBRE, test-method-outer-theta-families.R)
  d <- gcv_data(500)
  d$yp <- rpois(nrow(d), 2)
  expect_error(gam_gpu(yp ~ s(x0), family = poisson, data = d, method = "GCV.Cp", rho = 0.3),
               class = "gamgpu_unsupported_method")
  expect_error(gam_gpu(y ~ s(x0), data = d, method = "GCV.Cp",
                       in.out = list(sp = 1, scale = 1)),
               class = "gamgpu_unsupported_argument")
  expect_error(gam_gpu(y ~ s(x0), data = d, method = "GCV.Cp", rho = 0.3),
               class = "gamgpu_unsupported_method")
  # gam() has no method "UBRE" either: GCV.Cp with a known scale is UBRE
  expect_error(gam_gpu(y ~ s(x0), data = d, method = "UBRE"), class = "gamgpu_bad_method")
})

test_that("on the GPU, GCV.Cp's Gram product runs on the device and gives the CPU's fit", {
  skip_if_no_device()
  # (the CPU's fit set up as the device's is: gam()'s bases from facts of
  # every row, which a CPU fit takes only when asked for)
  op <- options(gamgpu.basis_facts = TRUE)
  on.exit(options(op), add = TRUE)
  d <- gcv_data(20000)
  f <- y ~ s(x0) + s(x1) + s(x2, bs = "cr")
  gpu_telemetry(reset = TRUE)
  g <- gam_gpu(f, data = d, method = "GCV.Cp", device = "required",
               control = gam_gpu_control(chunk.size = 5000))
  t <- gpu_telemetry()
  expect_identical(g$device$backend, "cuda")
  expect_identical(g$device$gcv_gram, "cuda:0")     # the criterion's Gram, not only the fit
  # (gam()'s bases from facts of every row, X built from its recipe on the
  # device: R/basis_facts.R)
  expect_identical(g$device$model_matrix, "recipe")
  expect_gt(sum(t$launches[t$backend == "engine"]), 0)
  expect_equal(sum(t$fallbacks), 0)
  c <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off",
               control = gam_gpu_control(chunk.size = 5000))
  # the device's Gram sums in another order: magic() takes the same steps
  # to rounding, and stops after as many
  expect_identical(g$mgcv.conv$iter, c$mgcv.conv$iter)
  expect_lt(rel_err(fitted(g), fitted(c)), 1e-9)
  expect_lt(abs(g$gcv.ubre[[1]] / c$gcv.ubre[[1]] - 1), 1e-12)
  expect_device_arena_empty()
})

test_that("GCV.Cp's Newton takes gam_gpu_control()'s newton.maxit and newton.tol", {
  # (given either, GCV.Cp takes gamgpu's Newton iteration instead of magic())
  d <- gcv_data(1500)
  f <- y ~ s(x0) + s(x1) + s(x2)
  expect_warning(g1 <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off",
                               control = gam_gpu_control(newton.maxit = 1)),
                 "GCV Newton iteration reached its limit of 1", class = "gamgpu_not_converged")
  expect_identical(g1$outer.info$iter, 1L)
  expect_identical(g1$outer.info$conv, "iteration limit reached")
  loose <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off",
                   control = gam_gpu_control(newton.tol = 1e-2))
  tight <- gam_gpu(f, data = d, method = "GCV.Cp", device = "off",
                   control = gam_gpu_control(newton.tol = sqrt(.Machine$double.eps)))
  expect_identical(tight$optimizer, c("outer", "newton"))
  expect_lt(loose$outer.info$iter, tight$outer.info$iter)
  expect_gte(loose$gcv.ubre[[1]], tight$gcv.ubre[[1]])
})

test_that("a lower GCV minimum than magic()'s is said so in the fit", {
  # (?choose.k: residuals of a fit with too low a k, refitted with "cs"
  # shrinkage; magic() stops at GCV 4.4947, a flat end holds 4.4484)
  set.seed(1)
  dat <- mgcv::gamSim(1, n = 400, scale = 2, verbose = FALSE)
  b0 <- mgcv::gam(y ~ s(x0, k = 6) + s(x1, k = 6) + s(x2, k = 6) + s(x3, k = 6), data = dat)
  dat$rsd <- residuals(b0)
  b <- mgcv::gam(rsd ~ s(x2, k = 40, bs = "cs"), gamma = 1.4, data = dat)
  g <- gam_gpu(rsd ~ s(x2, k = 40, bs = "cs"), gamma = 1.4, data = dat, method = "GCV.Cp",
               device = "off")
  expect_lt(g$gcv.ubre[[1]], b$gcv.ubre[[1]] - 0.04)
  expect_match(g$device$optimum, "magic\\(\\) stopped at GCV 4.49")
  # where magic()'s is the minimum, nothing to say
  b <- mgcv::gam(rsd ~ s(x0, k = 40, bs = "cs"), gamma = 1.4, data = dat)
  g <- gam_gpu(rsd ~ s(x0, k = 40, bs = "cs"), gamma = 1.4, data = dat, method = "GCV.Cp",
               device = "off")
  expect_null(g$device$optimum)
  expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-12)
})
