# Every common term on the recipe route (src/basis/xplan.h's margins blocks):
# cyclic, P- and B-splines, cyclic P-splines, Gaussian processes, random
# effects, factor smooths fs and sz,
# te()/ti()/t2() of any supported margins, by-factors as codes.  Their host build must equal
# mgcv's PredictMat (bit for bit, or to rounding where mgcv applies a QR
# constraint by Householder reflections and we by its explicit Z), fits
# through the recipe must match bam() to 1e-9 of the linear predictor's
# range, and the device build must give the CPU's fit.

# name = formula; terms_qr: mgcv applies a ti() margin's QR constraint by
# Householder reflections, we by its explicit Z: X agrees to rounding
terms_forms <- list(
  fs      = y ~ s(x, f, bs = "fs", k = 5) + s(z, bs = "cr"),
  fs_cr   = y ~ s(x, f, bs = "fs", xt = "cr", k = 6),
  cc      = y ~ s(z, bs = "cc") + s(x, bs = "cr"),
  ps_bs   = y ~ s(x, bs = "ps") + s(z, bs = "bs"),
  re      = y ~ s(x, bs = "cr") + s(f, bs = "re"),
  re_num  = y ~ s(f, bs = "re") + s(f, w, bs = "re") + s(z),
  re_2fac = y ~ s(f, g, bs = "re") + s(x, bs = "cr"),
  ti      = y ~ s(x) + s(z) + ti(x, z),
  te_tpcc = y ~ te(x, z, bs = c("tp", "cc"), k = c(5, 5)),
  te3     = y ~ te(x, z, w, k = c(4, 4, 3)),
  by_cc   = y ~ f + s(z, by = f, bs = "cc"),
  by_ord  = y ~ o + s(x, by = o, bs = "cr") + s(x, bs = "cr"),
  by_ps   = y ~ s(x, by = w, bs = "ps") + s(z, bs = "ps", m = c(3, 1)),
  sz      = y ~ s(x) + s(x, g, bs = "sz", k = 5),
  sz_2d   = y ~ s(x, z, g, bs = "sz", k = 12),
  t2      = y ~ t2(x, z) + f,
  t2_full = y ~ t2(x, z, k = c(6, 5), full = TRUE) + w,
  t2_3    = y ~ t2(x, z, w, k = c(4, 4, 3), full = TRUE),
  t2_by   = y ~ f + t2(x, z, by = f, bs = c("tp", "cr"), k = c(5, 5)),
  cp      = y ~ s(x, bs = "cp", k = 12) + s(z, bs = "cp", m = c(3, 1), k = 9),
  gp      = y ~ s(x, bs = "gp", k = 15) + s(z, w, bs = "gp", k = 20, m = c(-2, 1.5, 1.3)),
  gp_type = y ~ s(x, bs = "gp", m = c(1, 0.4), k = 10) + s(z, bs = "gp", m = c(4, 0.3), k = 10) +
    s(w, bs = "gp", m = c(-5, 2), k = 10),
  gp_3d   = y ~ s(x, z, w, bs = "gp", k = 30, m = c(2, 1, 2)),
  te_cp   = y ~ te(x, z, bs = c("cp", "cr"), k = c(6, 5), np = FALSE),
  fs_cp   = y ~ s(x, f, bs = "fs", xt = "cp", k = 6) + s(z, by = w, bs = "gp", k = 8),
  fs_gp   = y ~ s(x, z, g, bs = "fs", xt = list(bs = "gp"), k = 10),
  tp_m0   = y ~ s(x, m = c(2, 0), k = 10) + s(z, w, m = c(2, 0), k = 15) + s(z, by = x, m = c(3, 0))
)
# t2: its columns (a reordering of the margins' row tensor product) and its
# QR constraint go in as one explicit map; three margins also multiply in
# another order than mgcv's t2.model.matrix
terms_qr <- c("ti", "t2", "t2_full", "t2_3", "t2_by")

test_that("every common term has a recipe, and its host build is mgcv's model matrix", {
  d <- terms_data(6000)
  for (nm in names(terms_forms)) {
    G <- bam_setup(terms_forms[[nm]], data = d, chunk.size = 2000)
    plan <- gamgpu:::model_matrix_plan(G, G$mf, threads = 2L)
    expect_false(inherits(plan, "gg_no_recipe"), label = nm)
    if (inherits(plan, "gg_no_recipe")) next
    # a margins block, or a by-factor as codes
    expect_true(any(vapply(plan$blocks, function(b) b$kind == 4L || !is.null(b$by_code), NA)),
                label = nm)
    ref <- matrix(0, nrow(d), ncol(G$X))
    if (G$nsdf > 0)
      ref[, seq_len(G$nsdf)] <- stats::model.matrix(stats::delete.response(G$pterms), G$mf)
    for (s in G$smooth)
      ref[, s$first.para:s$last.para] <- mgcv::PredictMat(s, G$mf)
    X <- .Call(gamgpu:::gg_xplan_build_r, plan)
    # mgcv multiplies by P, XP and UZ through BLAS: bit for bit under the
    # reference BLAS (helper-compare.R), to rounding under OpenBLAS
    expect_same_basis(X, ref, exact = !(nm %in% terms_qr), terms = tp1_terms(G$smooth))
    plan$threads <- 1L
    expect_identical(.Call(gamgpu:::gg_xplan_build_r, plan), X, label = nm)
  }
})

test_that("x outside a cyclic or P-spline basis's knots is wrapped or continued as mgcv does", {
  d <- terms_data(3000)
  G <- bam_setup(y ~ s(z, bs = "cc", k = 8) + s(x, bs = "ps", k = 8) + s(w, bs = "bs", k = 7),
                 data = d,
                 knots = list(z = c(0.2, 0.8), x = seq(-0.6, 1.6, length.out = 12)))
  # cyclic P-splines wrap (their knots as mgcv places them, and given),
  # Gaussian processes extrapolate
  G2 <- mgcv::bam(y ~ s(z, bs = "cp", k = 8) + s(x, bs = "cp", k = 7, m = c(1, 1)) +
                    s(w, bs = "gp", k = 9, m = c(3, 2)),
                  data = d, fit = FALSE, knots = list(x = c(-0.1, 1.1)))
  nd <- data.frame(z = seq(-1.3, 2.2, length.out = 500), x = seq(-0.9, 1.9, length.out = 500),
                   w = seq(-6, 6, length.out = 500))
  for (s in c(G$smooth, G2$smooth)) {
    r <- gamgpu:::smooth_recipe(s, nd)
    expect_false(inherits(r, "gg_no_recipe"))
    r$col0 <- 1L
    r$ncol <- gamgpu:::recipe_columns(r)
    X <- .Call(gamgpu:::gg_xplan_build_r, list(n = nrow(nd), p = r$ncol, threads = 1L,
                                               blocks = list(r)))
    ref <- mgcv::PredictMat(s, nd)
    # R's %% for the wrap runs in long double, as ours on the host: equal to
    # the bit but for an ulp of the wrapped x
    expect_lt(max(abs(X - ref)), 1e-13 * max(abs(ref)), label = s$label)
  }
})

test_that("fits through the recipe match bam() for every term", {
  d <- terms_data(4000)
  for (nm in names(terms_forms)) {
    f <- terms_forms[[nm]]
    b <- mgcv::bam(f, data = d, chunk.size = 1000, control = mgcv::gam.control(epsilon = 1e-10))
    g <- gam_gpu(f, data = d, device = "off",
                 control = gam_gpu_control(epsilon = 1e-10, chunk.size = 1000))
    expect_identical(g$device$model_matrix, "recipe", label = nm)
    expect_true(g$converged, label = nm)
    r <- diff(range(b$linear.predictors))
    expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) / r, 1e-9, label = nm)
    expect_lt(abs(sum(g$edf) - sum(b$edf)), 1e-7, label = nm)
    expect_lt(abs(g$gcv.ubre[[1]] - b$gcv.ubre[[1]]) / abs(b$gcv.ubre[[1]]), 1e-10, label = nm)
    # smoothing parameters where the REML surface is not flat (a very large
    # sp is a smooth at its null space, where REML barely changes with sp):
    # measured up to 6e-5 in log sp for te3's and by_ord's large ones; t2_3
    # has 19 smoothing parameters, one at log sp 7.87 where REML is flat
    # enough to leave 1.3e-6 between the two (its fit agrees to 1e-11)
    ok <- log(b$sp) < 8
    expect_lt(max(abs(log(g$sp[ok]) - log(b$sp[ok]))), if (nm == "t2_3") 1e-5 else 1e-6,
              label = nm)
  }
  # a binomial fit with a random effect and a factor smooth, through the recipe
  f <- yb ~ s(f, bs = "re") + s(x, g, bs = "fs", k = 5) + s(z, bs = "cc")
  b <- mgcv::bam(f, data = d, family = binomial(), chunk.size = 1000,
                 control = mgcv::gam.control(epsilon = 1e-10))
  g <- gam_gpu(f, data = d, family = binomial(), device = "off",
               control = gam_gpu_control(epsilon = 1e-10, chunk.size = 1000))
  expect_identical(g$device$model_matrix, "recipe")
  # (bam()'s own QR under an optimized BLAS: 4.5e-9 measured with OpenBLAS)
  expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) /
              diff(range(b$linear.predictors)), if (reference_blas()) 1e-9 else 1e-8)
})

test_that("by-factor smooths share one vector of codes and one of the covariate", {
  d <- terms_data(3000)
  d$h <- factor(sample(sprintf("l%02d", 1:30), nrow(d), TRUE))
  G <- bam_setup(y ~ h + s(x, by = h, bs = "cr", k = 5), data = d,
                 chunk.size = 1000)
  plan <- gamgpu:::model_matrix_plan(G, G$mf)
  # 30 smooths: before codes, 60 n-row arrays went past the device's 40
  expect_false(inherits(plan, "gg_no_recipe"))
  sm <- Filter(function(b) !is.null(b$by_code), plan$blocks)
  expect_length(sm, 30L)
  # the parametric h goes as the same codes
  ph <- Filter(function(b) !is.null(b$margins) && b$margins[[1]]$type == 5L, plan$blocks)
  expect_length(ph, 1L)
  expect_identical(ph[[1]]$margins[[1]]$code, sm[[1]]$by_code)
  expect_true(all(vapply(sm, function(b) identical(b$by_code, sm[[1]]$by_code), NA)))
  expect_identical(vapply(sm, function(b) b$by_level, 1L), 1:30)
  expect_null(sm[[1]][["by"]])         # [[: $by would partially match by_code
})

test_that("parametric factors go as codes and contrasts, numerics as themselves", {
  d <- terms_data(5000)
  d$f[d$f == "e"] <- "d"                         # a level without rows
  d$b <- d$w > 0
  forms <- list(y ~ f + s(x),
                y ~ f + w + o + s(x),
                y ~ f * w + s(x),
                y ~ log(x + 1) + f + poly(w, 2) + b + s(z),
                y ~ f - 1 + s(x),
                y ~ f:w + s(x))
  # (5: the intercept alone, as a block of ones)
  kinds <- list(c(4L, 5L), c(4L, 4L, 4L, 5L), c(4L, 4L, 0L, 0L), NULL, 4L, 0L)
  for (i in seq_along(forms)) {
    G <- bam_setup(forms[[i]], data = d, chunk.size = 1000)
    pb <- gamgpu:::parametric_blocks(G, G$mf)
    X <- .Call(gamgpu:::gg_xplan_build_r, list(n = nrow(d), p = G$nsdf, threads = 2L,
                                               blocks = pb))
    M <- stats::model.matrix(stats::delete.response(G$pterms), G$mf,
                             contrasts.arg = G$contrasts)
    expect_identical(X, matrix(as.double(M), nrow(d)), label = deparse(forms[[i]]))
    if (!is.null(kinds[[i]]))
      expect_identical(vapply(pb, function(b) b$kind, 1L), kinds[[i]],
                       label = deparse(forms[[i]]))
  }
  # a factor's block carries codes, not n x levels numbers
  G <- bam_setup(forms[[1]], data = d, chunk.size = 1000)
  pb <- gamgpu:::parametric_blocks(G, G$mf)
  expect_type(pb[[1]]$margins[[1]]$code, "integer")
  expect_null(pb[[1]]$D)
  # and the fit through them is the fit through the dense matrix
  ctl <- gam_gpu_control(chunk.size = 1000)
  g1 <- gam_gpu(forms[[2]], data = d, device = "off", control = ctl)
  local({
    local_gg_options(gamgpu.x_recipe = FALSE)
    g0 <<- gam_gpu(forms[[2]], data = d, device = "off", control = ctl)
  })
  expect_identical(g1$device$model_matrix, "recipe")
  expect_identical(coef(g1), coef(g0))
})

test_that("terms without a C evaluator stay in R and say which", {
  d <- terms_data(3000)
  d$u <- runif(nrow(d))
  d$v <- runif(nrow(d))
  forms <- list(y ~ s(x, bs = "cr") + s(x, z, bs = "ds"),
                y ~ s(x, bs = "cr") + s(x, z, w, u, v, bs = "gp", k = 30))
  why <- c("its basis (", "a Gaussian process margin of more than 4 variables")
  for (i in seq_along(forms)) {
    G <- bam_setup(forms[[i]], data = d, chunk.size = 1000)
    r <- gamgpu:::model_matrix_plan(G, G$mf)
    expect_s3_class(r, "gg_no_recipe")
    lab <- G$smooth[[length(G$smooth)]]$label
    expect_match(attr(r, "reason"), paste0(lab, ": ", why[i]), fixed = TRUE)
  }
})

test_that("a recipe that disagrees with PredictMat on the sampled rows is not used", {
  d <- terms_data(3000)
  G <- bam_setup(y ~ s(z, bs = "cc") + s(f, bs = "re"), data = d,
                 chunk.size = 1000)
  # the recipe as smooth_recipe() makes it, then one knot moved
  bent <- function(s, mf, threads, codes) {
    r <- gamgpu:::smooth_recipe(s, mf, threads, codes)
    if (!is.null(r$margins) && r$margins[[1]]$type == 3L)
      r$margins[[1]]$xk[2] <- r$margins[[1]]$xk[2] + 1e-3
    r
  }
  r <- gamgpu:::checked_recipe(G$smooth[[1]], G$mf, 1L, recipe = bent)
  expect_s3_class(r, "gg_no_recipe")
  expect_match(attr(r, "reason"), "s(z): its C basis differs from mgcv's PredictMat",
               fixed = TRUE)
  # the random effect, untouched, passes
  expect_false(inherits(gamgpu:::checked_recipe(G$smooth[[2]], G$mf, 1L, recipe = bent),
                        "gg_no_recipe"))
  # a thin plate basis on 2000 knots is compared on 65 rows (2^17 of its
  # rows' 2002 terms), a cc basis on 256; a covariate shifted shows on them
  G <- bam_setup(y ~ s(z, k = 12), data = terms_data(2500), chunk.size = 2400)
  expect_identical(nrow(G$smooth[[1]]$Xu), 2000L)
  expect_identical(gamgpu:::recipe_check_rows(G$smooth[[1]]), 65L)
  expect_identical(gamgpu:::recipe_check_rows(list(UZ = NULL)), 256L)
  bent_tp <- function(s, mf, threads, codes) {
    r <- gamgpu:::smooth_recipe(s, mf, threads, codes)
    r$tshift <- r$tshift + 1e-3
    r
  }
  expect_false(inherits(gamgpu:::checked_recipe(G$smooth[[1]], G$mf, 1L), "gg_no_recipe"))
  r <- gamgpu:::checked_recipe(G$smooth[[1]], G$mf, 1L, recipe = bent_tp)
  expect_s3_class(r, "gg_no_recipe")
  expect_match(attr(r, "reason"), "its C basis differs from mgcv's PredictMat", fixed = TRUE)
})

test_that("on the GPU, every term's X is built on the device and gives the CPU's fit", {
  skip_if_no_device()
  d <- terms_data(20000, seed = 3)
  ctl <- gam_gpu_control(chunk.size = 4000)
  for (nm in names(terms_forms)) {
    f <- terms_forms[[nm]]
    fr <- expect_device_fit(gam_gpu(f, data = d, device = "required", control = ctl))
    t <- gpu_telemetry()
    expect_identical(fr$device$model_matrix, "recipe", label = nm)
    expect_match(fr$device$placement, "built", label = nm)
    # covariates and codes crossed the bus, not X (and a one-variable thin
    # plate basis's polynomials, fixed in size: helper-compare.R)
    expect_lt(t$h2d_bytes[t$backend == "engine"],
              nrow(d) * length(coef(fr)) * 8 / 2 + tp1_bytes(fr$smooth), label = nm)
    fc <- gam_gpu(f, data = d, device = "off", control = ctl)
    expect_lt(rel_err(fitted(fr), fitted(fc)), 1e-9, label = nm)
    expect_lt(rel_err(coef(fr), coef(fc)), 1e-9, label = nm)
  }
})
