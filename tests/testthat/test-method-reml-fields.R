# gam()'s fields of a "REML" or "ML" fit of an additive model (R/outer.R:
# the outer iteration on the problem reduced to p rows, and
# gam.fit3.post.proc()): Vc, V.sp and edf2 with the log
# scale among the parameters (as gam.fit3.post.proc() has them; bam()'s
# profile it out: Vc 14% apart on airquality), db.drho for every
# smoothing parameter, and the aic of a known scale (gam.fit3's dev1 =
# scale * sum(w); the deviance's in bam()).  Measured against gam() at a
# tight control over these cases: Vc to 2.8e-7 of its largest entry,
# edf2 1.6e-6, V.sp 7e-6, db.drho 7.1e-7, AIC 1.1e-5.

test_that("Vc, V.sp, edf2, db.drho and AIC of REML and ML are gam()'s", {
  set.seed(1)
  d <- mgcv::gamSim(1, n = 600, verbose = FALSE)
  d$w <- runif(600)
  aq <- stats::na.omit(datasets::airquality)
  cases <- list(
    airquality = list(f = Ozone ~ s(Solar.R) + s(Wind) + s(Temp), data = aq),
    id = list(f = y ~ s(x0, id = 1) + s(x1, id = 1) + s(x2), data = d),
    sp = list(f = y ~ s(x0) + s(x1) + s(x2), data = d, sp = c(-1, 2, -1)),
    scale = list(f = y ~ s(x0) + s(x1) + s(x2), data = d, scale = 4),
    weights = list(f = y ~ s(x0) + s(x1) + s(x2), data = d, weights = quote(w)),
    gamma = list(f = y ~ s(x0) + te(x1, x2), data = d, gamma = 1.5))
  rel <- function(a, b) max(abs(a - b)) / max(abs(b))
  for (nm in names(cases)) for (m in c("REML", "ML")) {
    cs <- cases[[nm]]
    args <- c(list(cs$f, method = m), cs[setdiff(names(cs), "f")])
    b <- do.call(mgcv::gam, c(args, list(control = mgcv::gam.control(
      epsilon = 1e-10, newton = list(conv.tol = 1e-9)))))
    g <- do.call(gam_gpu, c(args, list(device = "off", control = tight_gam_gg())))
    label <- paste(nm, m)
    expect_identical(dim(g$Vc), dim(b$Vc), label = label)
    expect_lt(rel(g$Vc, b$Vc), 1e-6, label = paste(label, "Vc"))
    expect_lt(rel(g$edf2, b$edf2), 1e-5, label = paste(label, "edf2"))
    expect_identical(dim(g$V.sp), dim(b$V.sp), label = label)
    expect_lt(rel(g$V.sp, b$V.sp), 1e-4, label = paste(label, "V.sp"))
    expect_identical(dim(g$db.drho), dim(b$db.drho), label = label)
    expect_lt(rel(g$db.drho, b$db.drho), 1e-5, label = paste(label, "db.drho"))
    expect_lt(abs(AIC(g) - AIC(b)), 1e-4, label = paste(label, "AIC"))
  }
})
