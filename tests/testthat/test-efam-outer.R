# gam()'s REML and ML for mgcv's extended families (R/outer_efam.R:
# gam.fit4's criterion, Newton on theta, the log smoothing parameters and
# tw()'s log scale) against mgcv::gam() on the same call.  Both at a tight
# inner tolerance and newton()'s conv.tol of 1e-9 (gam_gpu: newton.tol),
# so that both optimizers stop at the optimum, not at where their rules
# let them; a case at gam()'s own defaults checks that gam_gpu stops where
# gam() does.
#
# Measured over this file's 34 comparisons (CPU, reference BLAS): without a
# smoothing parameter on a flat end of the criterion (29), scores within
# 5e-15 relative of gam()'s, fitted values 1e-7 of their range, log
# smoothing parameters 4e-6, theta 1e-8, EDFs 1.6e-6, Vp and Vc 1e-7
# relative, scale 2.4e-9 and aic 3.5e-10 relative; with one (5: log sp
# beyond 8, where both optimizers stop by newton()'s rule at points of
# their own), scores up to 4.2e-9 relative above gam()'s, fitted values
# 1.4e-6, the other log smoothing parameters 5e-5, EDFs 7e-5, Vc 1.4e-5.
# The issue's bounds are 1e-6, 1e-5, 1e-3 and 0.01 (expect_efam_outer(),
# helper-efam.R).

efam_outer_data <- function(n = 600, seed = 11) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n),
                  off = log(runif(n, 1, 3)), wt = runif(n, 0.5, 2))
  f <- sin(2 * pi * d$x0) + 0.6 * cos(4 * d$x1) + 0.8 * d$x2^2
  d$ynb <- stats::rnbinom(n, mu = exp(0.5 + f + d$off), size = 3)
  d$ytw <- mgcv::rTweedie(exp(0.8 + f), p = 1.5, phi = 0.9)
  d$ybe <- stats::plogis(f - 0.5 + stats::rnorm(n) * 0.6)
  d$ysc <- f + stats::rt(n, df = 4) * 0.4
  d$yzp <- ifelse(stats::runif(n) < 0.3, 0, stats::rpois(n, exp(0.3 + f)))
  d$yoc <- as.numeric(cut(2 * f + stats::rlogis(n), c(-Inf, 0, 1.2, 2.4, Inf)))
  d
}

test_that("REML for every extended family equals gam()'s", {
  d <- efam_outer_data()
  cases <- list(list("ynb", mgcv::nb), list("ytw", mgcv::tw), list("ybe", mgcv::betar),
                list("ysc", mgcv::scat), list("yzp", mgcv::ziP),
                list("yoc", function() mgcv::ocat(R = 4)))
  for (cs in cases) {
    fo <- stats::as.formula(paste(cs[[1]], "~ s(x0) + s(x1) + s(x2)"))
    r <- efam_pair(fo, cs[[2]], d, method = "REML")
    expect_efam_outer(r$g, r$b, r$theta_b, paste(cs[[1]], "REML"))
    # the outer iteration's products ran in the model session, on the CPU
    expect_identical(r$g$device$outer_gram, "cpu")
    expect_gt(r$g$device$outer_grams, 10L)
  }
})

test_that("ML, and the methods gam() turns into REML for an extended family", {
  d <- efam_outer_data()
  fo <- ynb ~ s(x0) + s(x1) + s(x2)
  r <- efam_pair(fo, mgcv::nb, d, method = "ML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb ML")
  r <- efam_pair(ytw ~ s(x0) + s(x1) + s(x2), mgcv::tw, d, method = "ML")
  expect_efam_outer(r$g, r$b, r$theta_b, "tw ML")
  # estimate.gam(): GCV.Cp (gam()'s default), GACV.Cp, P-REML and P-ML are
  # REML for an extended family
  reml <- gam_gpu(fo, family = mgcv::nb(), data = d, device = "off",
                  control = efam_tight_gg(), method = "REML")
  for (m in c("GCV.Cp", "GACV.Cp", "P-REML", "P-ML")) {
    r <- efam_pair(fo, mgcv::nb, d, method = m)
    expect_identical(r$b$method, "REML")
    expect_efam_outer(r$g, r$b, r$theta_b, paste("nb", m))
    expect_identical(coef(r$g), coef(reml))
  }
  # fREML stays bam()'s
  f <- gam_gpu(fo, family = mgcv::nb(), data = d, device = "off")
  expect_identical(f$method, "fREML")
})

test_that("theta fixed, the scale given or estimated, offset, weights, gamma and sp as gam()", {
  d <- efam_outer_data()
  fo <- ynb ~ s(x0) + s(x1) + s(x2)
  r <- efam_pair(fo, function() mgcv::nb(theta = 3), d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb(theta = 3)")
  expect_length(r$g$outer.info$grad, 3L)            # no theta among the parameters
  r <- efam_pair(ytw ~ s(x0) + s(x1), function() mgcv::tw(theta = 1.3), d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "tw(theta = 1.3), scale estimated")
  expect_true(r$g$scale.estimated)
  expect_length(r$g$outer.info$grad, 3L)            # two smooths and the log scale
  r <- efam_pair(ytw ~ s(x0) + s(x1), mgcv::tw, d, method = "REML", scale = 1.1)
  expect_efam_outer(r$g, r$b, r$theta_b, "tw scale = 1.1")
  expect_false(r$g$scale.estimated)
  expect_identical(r$g$sig2, 1.1)
  r <- efam_pair(ynb ~ s(x0) + s(x1) + offset(off), mgcv::nb, d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb offset")
  b <- mgcv::gam(fo, family = mgcv::nb(), data = d, weights = wt, method = "REML",
                 control = efam_tight_mgcv())
  g <- gam_gpu(fo, family = mgcv::nb(), data = d, weights = wt, method = "REML",
               device = "off", control = efam_tight_gg())
  expect_efam_outer(g, b, b$family$getTheta(), "nb weights")
  r <- efam_pair(fo, mgcv::nb, d, method = "REML", gamma = 1.4)
  expect_efam_outer(r$g, r$b, r$theta_b, "nb gamma")
  r <- efam_pair(fo, mgcv::nb, d, method = "REML", sp = c(-1, 10, -1))
  expect_efam_outer(r$g, r$b, r$theta_b, "nb sp fixed")
  expect_identical(names(r$g$sp), c("s(x0)", "s(x2)"))   # the free ones, as gam()'s
  r <- efam_pair(fo, function() mgcv::nb(link = "sqrt"), d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb sqrt link")
  r <- efam_pair(ynb ~ x0 + x1, mgcv::nb, d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb parametric")
  r <- efam_pair(ytw ~ te(x0, x1, k = 4), mgcv::tw, d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "tw te")
})

test_that("random effects, by-factor smooths, select, identity links and zero weights as gam()", {
  d <- efam_outer_data()
  d$fac <- factor(rep(letters[1:4], length.out = nrow(d)))
  d$ynb <- d$ynb + c(0L, 2L, 0L, 1L)[d$fac]
  d$w0 <- rep(c(1, 0, 2, 1, 1), length.out = nrow(d))
  r <- efam_pair(ynb ~ s(x0) + s(fac, bs = "re"), mgcv::nb, d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb random effect")
  r <- efam_pair(ynb ~ fac + s(x0, by = fac), mgcv::nb, d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb by factor")
  r <- efam_pair(ynb ~ s(x0) + s(x1) + s(x2), mgcv::nb, d, method = "REML", select = TRUE)
  expect_efam_outer(r$g, r$b, r$theta_b, "nb select")
  # (an identity link: the engine's refit starts from the outer optimum,
  # where the family's starting values would leave the support)
  r <- efam_pair(ynb ~ s(x0) + s(x1), function() mgcv::nb(link = "identity"), d,
                 method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "nb identity link")
  r <- efam_pair(ybe ~ s(x0, bs = "cr") + s(x1, bs = "ps"), mgcv::betar, d, method = "REML")
  expect_efam_outer(r$g, r$b, r$theta_b, "betar cr, ps")
  b <- mgcv::gam(ynb ~ s(x0) + s(x1), family = mgcv::nb(), data = d, weights = w0,
                 method = "REML", control = efam_tight_mgcv())
  g <- gam_gpu(ynb ~ s(x0) + s(x1), family = mgcv::nb(), data = d, weights = w0,
               method = "REML", device = "off", control = efam_tight_gg())
  expect_efam_outer(g, b, b$family$getTheta(), "nb zero weights")
})

test_that("at gam()'s own defaults gam_gpu stops where gam() stops", {
  d <- efam_outer_data()
  r <- efam_pair(ynb ~ s(x0) + s(x1) + s(x2), mgcv::nb, d, method = "REML", tight = FALSE)
  expect_identical(r$g$outer.info$iter, r$b$outer.info$iter)
  expect_efam_outer(r$g, r$b, r$theta_b, "nb REML, gam()'s defaults")
})

test_that("extended families on data sets R ships equal gam()'s REML", {
  mt <- datasets::mtcars
  mt$g <- as.numeric(factor(mt$gear))
  aq <- stats::na.omit(datasets::airquality)
  cases <- list(
    list(stations ~ s(mag) + s(depth), mgcv::nb, datasets::quakes, "quakes nb"),
    list(Ozone ~ s(Temp) + s(Wind), mgcv::tw, aq, "airquality tw"),
    list(breaks ~ wool + s(as.numeric(tension), k = 3), mgcv::nb, datasets::warpbreaks,
         "warpbreaks nb"),
    list(g ~ s(mpg, k = 5), function() mgcv::ocat(R = 3), mt, "mtcars ocat"),
    list(count ~ spray, mgcv::nb, datasets::InsectSprays, "InsectSprays nb"))
  for (cs in cases) {
    r <- efam_pair(cs[[1]], cs[[2]], cs[[3]], method = "REML")
    expect_efam_outer(r$g, r$b, r$theta_b, cs[[4]])
  }
})

test_that("summary, predict and anova of an extended family's REML fit are gam()'s", {
  d <- efam_outer_data()
  r <- efam_pair(ytw ~ s(x0) + s(x1) + s(x2), mgcv::tw, d, method = "REML")
  sb <- summary(r$b)
  sg <- summary(r$g)
  expect_lt(max(abs(sg$s.table - sb$s.table) / pmax(abs(sb$s.table), 1e-300)), 1e-4)
  expect_lt(max(abs(sg$p.table - sb$p.table) / pmax(abs(sb$p.table), 1e-300)), 1e-4)
  expect_lt(abs(sg$r.sq - sb$r.sq), 1e-6)
  expect_lt(abs(sg$dev.expl - sb$dev.expl), 1e-6)
  nd <- d[1:50, ]
  pb <- predict(r$b, nd, se.fit = TRUE)
  pg <- predict(r$g, nd, se.fit = TRUE, device = "off")
  expect_lt(max(abs(pg$fit - pb$fit)), 1e-5 * diff(range(pb$fit)))
  expect_lt(max(abs(pg$se.fit / pb$se.fit - 1)), 1e-4)
  expect_lt(abs(stats::logLik(r$g) - stats::logLik(r$b)), 1e-5 * abs(stats::logLik(r$b)))
})

test_that("an extended family's REML fit on the device equals the CPU's, its products on the device", {
  skip_if_no_device()
  d <- efam_outer_data(n = 3000)
  for (cs in list(list(ynb ~ s(x0) + s(x1) + s(x2), mgcv::nb),
                  list(ytw ~ s(x0) + s(x1), mgcv::tw),
                  list(yoc ~ s(x0) + s(x1), function() mgcv::ocat(R = 4)))) {
    cpu <- gam_gpu(cs[[1]], family = cs[[2]](), data = d, method = "REML", device = "off",
                   control = efam_tight_gg())
    gpu <- expect_device_fit(gam_gpu(cs[[1]], family = cs[[2]](), data = d, method = "REML",
                                     device = "required", control = efam_tight_gg()))
    expect_identical(gpu$device$outer_gram, "cuda:0")     # (the session ran on the device)
    expect_gt(gpu$device$outer_grams, 10L)
    expect_lt(max(abs(coef(gpu) - coef(cpu)) / pmax(abs(coef(cpu)), 1e-3)), 1e-9)
    expect_lt(max(abs(fitted(gpu) - fitted(cpu)) / pmax(abs(fitted(cpu)), 1e-3)), 1e-9)
    expect_lt(max(abs(log(gpu$sp) - log(cpu$sp))), 1e-6)
  }
  expect_device_arena_empty()
})
