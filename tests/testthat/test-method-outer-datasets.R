# gam()'s methods on real data sets R ships (datasets): every method of
# R/outer.R against mgcv::gam() on the same formula, at gam()'s tight
# control.  These data put smoothing parameters on flat ends of the
# criterion (log sp 12 to 24, where only the score is compared) and have
# small scales (trees: GCV scores of 3e-4), which decide where an
# optimizer stops along a flat end: gam_gpu follows newton()'s convergence
# scale, |score| + the fit's scale for GCV, GACV and UBRE.

tight_mgcv <- function() mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9))
# gam_gpu's: newton()'s test at the same conv.tol, but GCV.Cp of an additive
# model by magic() as gam()'s (newton.tol would give it a Newton iteration)
tight_ctl <- function(method, family) {
  if (method == "GCV.Cp" && family$family == "gaussian" && family$link == "identity")
    tight_gg() else tight_gam_gg()
}

# Measured over this file's cases: scores within 1.5e-8 relative of
# gam()'s (never better by more than rounding), fitted values 8e-7 of their
# range, log smoothing parameters off a flat end 5e-6 (1.7e-4 for
# ChickWeight's REML, in a direction where the score moves by 5e-13), EDFs
# 5e-5.  The issue's bounds are 1e-6, 1e-5, 1e-3 and 0.01.
expect_gam_method <- function(g, b, label, sp_tol = 1e-4) {
  expect_true(isTRUE(g$converged), label = label)
  # gam()'s optimizer and its record: magic() for GCV.Cp of an additive
  # model (mgcv.conv), an outer Newton iteration otherwise (outer.info)
  expect_identical(g$optimizer, b$optimizer, label = label)
  expect_identical(is.null(g$outer.info), is.null(b$outer.info), label = label)
  if (!is.null(b$outer.info))
    expect_identical(g$outer.info$conv, "full convergence", label = label)
  if (!is.null(b$mgcv.conv) && is.null(b$outer.info))
    expect_identical(names(g$mgcv.conv), names(b$mgcv.conv), label = label)
  expect_identical(names(g$gcv.ubre), names(b$gcv.ubre), label = label)
  rel <- (g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]])
  expect_lt(rel, 1e-8, label = paste(label, "score no worse"))
  expect_gt(rel, -1e-8, label = paste(label, "score no better than rounding"))
  r <- diff(range(b$fitted.values))
  expect_lt(max(abs(g$fitted.values - b$fitted.values)) / r, 1e-6, label = paste(label, "fit"))
  flat <- abs(log(b$sp)) >= 8
  if (any(!flat))
    expect_lt(max(abs(log(g$sp[!flat]) - log(b$sp[!flat]))), sp_tol, label = paste(label, "sp"))
  expect_lt(max(abs(g$edf - b$edf)), 1e-4, label = paste(label, "edf"))
}

aq <- stats::na.omit(datasets::airquality)
dataset_cases <- list(
  list(Ozone ~ s(Solar.R) + s(Wind) + s(Temp), gaussian(), aq, "airquality gaussian",
       c("REML", "ML", "GCV.Cp", "GACV.Cp")),
  list(Ozone ~ s(Solar.R) + s(Wind) + s(Temp), Gamma(link = "log"), aq, "airquality Gamma log",
       c("REML", "ML", "GCV.Cp", "GACV.Cp", "P-REML")),
  list(Volume ~ s(Girth, k = 5) + s(Height, k = 5), Gamma(link = "log"), datasets::trees,
       "trees Gamma log", c("REML", "GCV.Cp", "GACV.Cp")),
  list(Volume ~ s(Girth, k = 5) + s(Height, k = 5), inverse.gaussian(link = "log"),
       datasets::trees, "trees inverse.gaussian", c("REML", "ML", "GCV.Cp", "P-REML")),
  list(stations ~ s(mag) + s(depth), poisson(), datasets::quakes, "quakes poisson",
       c("REML", "ML", "GCV.Cp")),
  list(stations ~ s(mag) + s(depth), quasipoisson(), datasets::quakes, "quakes quasipoisson",
       c("GCV.Cp", "GACV.Cp")),
  list(case ~ s(age) + education + spontaneous + induced, binomial(), datasets::infert,
       "infert binomial", c("REML", "GCV.Cp")),
  list(mpg ~ s(hp, k = 5) + s(wt, k = 5), gaussian(link = "log"), datasets::mtcars,
       "mtcars gaussian log", c("REML", "ML", "GCV.Cp")),
  list(cbind(ncases, ncontrols) ~ agegp + s(as.numeric(tobgp), k = 4) +
         s(as.numeric(alcgp), k = 4), binomial(), datasets::esoph, "esoph binomial cbind",
       c("REML", "ML", "GCV.Cp")),
  list(cbind(ncases, ncontrols) ~ agegp + s(as.numeric(alcgp), k = 4), quasibinomial(),
       datasets::esoph, "esoph quasibinomial", c("GCV.Cp", "GACV.Cp")),
  list(DriversKilled ~ s(kms) + s(PetrolPrice) + law + offset(log(drivers)), poisson(),
       as.data.frame(datasets::Seatbelts), "Seatbelts poisson offset",
       c("REML", "ML", "GCV.Cp")))

test_that("gam()'s methods on R's data sets are gam()'s", {
  for (cs in dataset_cases) for (m in cs[[5]]) {
    label <- paste(cs[[4]], m)
    b <- suppressWarnings(mgcv::gam(cs[[1]], family = cs[[2]], data = cs[[3]], method = m,
                                    control = tight_mgcv()))
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = cs[[3]], method = m, device = "off",
                 control = tight_ctl(m, cs[[2]]))
    expect_gam_method(g, b, label)
  }
})

test_that("additive models with by-factors, random effects and te() on R's data are gam()'s", {
  cw <- datasets::ChickWeight
  cw$Chick <- factor(cw$Chick, ordered = FALSE)
  co2 <- as.data.frame(datasets::CO2)
  co2$Plant <- factor(co2$Plant, ordered = FALSE)
  orange <- as.data.frame(datasets::Orange)
  orange$Tree <- factor(orange$Tree, ordered = FALSE)
  cases <- list(
    list(weight ~ Diet + s(Time, by = Diet, k = 5) + s(Chick, bs = "re"), gaussian(), cw,
         "ChickWeight by + re"),
    list(weight ~ s(Time, k = 5) + s(Chick, bs = "re"), Gamma(link = "log"), cw,
         "ChickWeight Gamma re"),
    list(uptake ~ Type + Treatment + s(conc, k = 6, by = Type) + s(Plant, bs = "re"),
         gaussian(), co2, "CO2 by + re"),
    list(circumference ~ s(age, k = 6) + s(Tree, bs = "re"), gaussian(), orange, "Orange re"),
    list(eruptions ~ s(waiting), gaussian(), datasets::faithful, "faithful"),
    list(Ozone ~ te(Temp, Wind, k = c(4, 4)) + s(Solar.R), gaussian(), aq, "airquality te"),
    list(mag ~ s(lat, long, k = 30) + s(depth), gaussian(), datasets::quakes, "quakes 2-d tp"))
  for (cs in cases) for (m in c("REML", "ML", "GCV.Cp", "GACV.Cp")) {
    b <- suppressWarnings(mgcv::gam(cs[[1]], family = cs[[2]], data = cs[[3]], method = m,
                                    control = tight_mgcv()))
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = cs[[3]], method = m, device = "off",
                 control = tight_ctl(m, cs[[2]]))
    # (ChickWeight's REML: log sp 1.7e-4 apart where the score is 5e-13 apart)
    expect_gam_method(g, b, paste(cs[[4]], m), sp_tol = 1e-3)
  }
})

test_that("an additive model's UBRE with two minima ends in the lower, gam()'s where gam() finds it", {
  # airquality, scale 400: UBRE has a minimum at log sp 0.83 for s(Solar.R)
  # (-47.660) and a lower one along its flat end (-47.799, gam()'s magic()
  # at log sp 26.6); Newton's method from initial.sp() stopped at the first
  b <- mgcv::gam(Ozone ~ s(Solar.R) + s(Wind) + s(Temp), data = aq, method = "GCV.Cp",
                 scale = 400)
  g <- gam_gpu(Ozone ~ s(Solar.R) + s(Wind) + s(Temp), data = aq, method = "GCV.Cp",
               scale = 400, device = "off")
  expect_identical(g$method, "UBRE")
  # where gam()'s magic() ends is the rounding of its R factor: at the
  # lower minimum under the reference BLAS, at the higher one under
  # OpenBLAS on one thread (measured on the H100 host); gam_gpu() follows
  # the flat end to the lower one whatever the BLAS: gam()'s answer where
  # gam() finds it, else a strictly lower score
  expect_true(log(g$sp[[1]]) > 20)
  if (log(b$sp[[1]]) > 20) {
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-10)
    expect_lt(max(abs(g$fitted.values - b$fitted.values)) / diff(range(b$fitted.values)), 1e-6)
  } else {
    expect_lt(g$gcv.ubre[[1]], b$gcv.ubre[[1]] - 1e-3 * abs(b$gcv.ubre[[1]]))
  }
})

test_that("from the higher of two UBRE minima, the flat ends lead to the lower one", {
  # (the same score: magic() can end at either minimum, by the rounding of
  # its R factor; gcv_flat_end_minimum() takes it on from there)
  G <- mgcv::gam(Ozone ~ s(Solar.R) + s(Wind) + s(Temp), data = aq, fit = FALSE)
  ms <- test_session(G$X, as.double(G$y), as.double(G$w))
  on.exit(ms$close(), add = TRUE)
  P <- gamgpu:::gcv_problem(ms, G$S, G$off, 1, 400)
  P$criterion <- "GCV"
  L <- diag(3)
  sp0 <- get("initial.sp", asNamespace("mgcv"))(P$XtWX, G$S, G$off, XX = TRUE)
  up <- gamgpu:::gcv_newton(P, L, numeric(3), log(sp0), maxit = 200L, conv.tol = 1e-7)
  expect_lt(abs(up$rho[1] - 0.83), 0.01)                  # the higher minimum
  nw <- gamgpu:::gcv_flat_end_minimum(P, L, numeric(3), up$rho, up$score)
  # the score there is gam()'s at those smoothing parameters
  b <- mgcv::gam(Ozone ~ s(Solar.R) + s(Wind) + s(Temp), data = aq, sp = exp(nw$rho),
                 scale = 400)
  expect_lt(abs(nw$score / b$gcv.ubre[[1]] - 1), 1e-9)
  expect_gt(nw$rho[1], 20)
  expect_lt(up$score - nw$score, 0.2)
  expect_gt(up$score - nw$score, 0.1)
  # at the lower minimum: nothing lower along any flat end
  expect_null(gamgpu:::gcv_flat_end_minimum(P, L, numeric(3), nw$rho, nw$score))
})

test_that("a GCV score with a small scale is followed along its flat end as gam() follows it", {
  # trees, s(Height) on a flat end: with a convergence scale of |score| + 1
  # the optimizer stopped at log sp 6.0 and 11.5 (against gam()'s 14.0 and
  # 17.5), its GCV score 2.7e-6 and 1.7e-7 relative above gam()'s
  for (fam in list(inverse.gaussian(link = "log"), Gamma(link = "log"))) {
    g <- gam_gpu(Volume ~ s(Girth, k = 5) + s(Height, k = 5), family = fam,
                 data = datasets::trees, method = "GCV.Cp", device = "off", control = tight_gam_gg())
    expect_gt(log(g$sp[[2]]), 12, label = fam$family)
  }
})
