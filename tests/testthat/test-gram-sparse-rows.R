# The CPU engine's model matrix as sparse rows times a fixed map, X = S M
# (src/cpu/xsparse.c, options(gamgpu.cpu_x); blocks that are not local as their
# stored columns, one-variable thin plate bases made per row from their
# piecewise polynomials): every product the backend takes
# (X'WX, X'Wz, z'Wz, X beta, leverages, X B, X' U) against the same
# products of the dense X the recipe builds, for every local term; fits
# through it against the dense route's and bam()'s.
# Measured (x86-64, gcc 12 -O2, reference BLAS): the products <= 4e-15
# relative to the dense ones; asked 1e-13.

local_forms <- list(
  cr      = y ~ s(x, bs = "cr") + s(z, bs = "cr", k = 7),
  factors = y ~ f + g + s(x, bs = "cr") + w,
  cc      = y ~ s(z, bs = "cc") + s(x, bs = "cr"),
  ps_bs   = y ~ s(x, bs = "ps") + s(z, bs = "bs"),
  re      = y ~ s(x, bs = "cr") + s(f, bs = "re"),
  re_num  = y ~ s(f, bs = "re") + s(f, w, bs = "re") + s(z, bs = "cr"),
  re_2fac = y ~ s(f, g, bs = "re") + s(x, bs = "cr"),
  te      = y ~ te(x, z, k = c(6, 5)) + s(x, bs = "cr"),
  ti      = y ~ s(x, bs = "cr") + s(z, bs = "cr") + ti(x, z, bs = "cr"),
  te3     = y ~ te(x, z, w, k = c(4, 4, 3)),
  by_cc   = y ~ f + s(z, by = f, bs = "cc"),
  by_ord  = y ~ o + s(x, by = o, bs = "cr") + s(x, bs = "cr"),
  by_num  = y ~ s(x, by = w, bs = "ps") + s(z, bs = "ps", m = c(3, 1)),
  fs_cr   = y ~ s(x, f, bs = "fs", xt = "cr", k = 6),
  t2      = y ~ t2(x, z, bs = "cr") + f,
  cp      = y ~ s(x, bs = "cp", k = 12) + s(z, bs = "cp", m = c(3, 1), k = 9),
  te_cp   = y ~ te(x, z, bs = c("cp", "cr"), k = c(6, 5), np = FALSE),
  # blocks that are not local beside local ones: thin plate bases in one
  # variable made per row (with by-variables, shrinkage, m = 3: degree 5),
  # the others' columns stored
  tp_cr   = y ~ s(x) + s(z, bs = "cr") + f,
  tp1     = y ~ s(x) + s(z, k = 7, bs = "ts", m = 3) + w,
  tp_by   = y ~ s(x, by = w) + s(z, by = g, k = 6) + g,
  dense   = y ~ s(x, bs = "cr") + x:z + s(z, w, k = 12),
  te_tp   = y ~ te(x, z, bs = c("tp", "cr"), k = c(5, 5)) + s(w, bs = "cr", by = g)
)

test_that("every product through sparse rows equals the dense X's", {
  d <- terms_data(3000)
  # extrapolation: rows outside the knots of the cr, cc, B-spline bases
  d$x[1:20] <- seq(-0.3, 1.3, length.out = 20)
  n <- nrow(d)
  for (nm in names(local_forms)) {
    G <- bam_setup(local_forms[[nm]], data = d[-(1:20), ], chunk.size = 2000)
    plan <- gamgpu:::model_matrix_plan(G, G$mf, threads = 2L)
    expect_false(inherits(plan, "gg_no_recipe"), label = nm)
    if (inherits(plan, "gg_no_recipe")) next
    # the same bases evaluated on every row, the 20 outside the knots too
    mf <- d[, intersect(names(d), all.vars(local_forms[[nm]])), drop = FALSE]
    plan <- gamgpu:::model_matrix_plan(G, mf, threads = 2L)
    X <- .Call(gamgpu:::gg_xplan_build_r, plan)
    p <- ncol(X)
    set.seed(3)
    w <- runif(n, -0.5, 2)
    z <- rnorm(n)
    beta <- rnorm(p)
    V <- crossprod(matrix(rnorm(p * p), p)) / p
    B <- matrix(rnorm(p * 3), p)
    U <- matrix(rnorm(n * 3), n)
    r <- .Call(gamgpu:::gg_xsparse_check_r, plan, w, z, beta, V, B, U)
    expect_identical(r$pd > 0L, nm %in% c("dense", "te_tp"), label = nm)
    expect_identical(r$ngen > 0L, nm %in% c("tp_cr", "tp1", "tp_by"), label = nm)
    expect_lt(rel_err(r$A, crossprod(X, w * X)), 1e-13, label = nm)
    expect_true(isSymmetric(r$A), label = nm)
    expect_lt(rel_err(r$b, drop(crossprod(X, w * z))), 1e-13, label = nm)
    expect_lt(abs(r$zwz - sum(w * z^2)) / abs(sum(w * z^2)), 1e-13, label = nm)
    expect_lt(rel_err(r$eta, drop(X %*% beta)), 1e-13, label = nm)
    expect_lt(rel_err(r$h, w * rowSums((X %*% V) * X)), 1e-13, label = nm)
    expect_lt(rel_err(r$XB, X %*% B), 1e-13, label = nm)
    expect_lt(rel_err(r$XtU, crossprod(X, U)), 1e-13, label = nm)
    # the same numbers whatever the threads
    plan$threads <- 1L
    expect_identical(.Call(gamgpu:::gg_xsparse_check_r, plan, w, z, beta, V, B, U), r,
                     label = nm)
  }
})

test_that("a plan without a local basis is refused, classed", {
  d <- terms_data(2000)
  for (f in list(y ~ s(x, z), y ~ x:z + s(x, w),
                 y ~ te(x, z, bs = c("tp", "tp"), k = c(5, 5)))) {
    G <- bam_setup(f, data = d)
    plan <- gamgpu:::model_matrix_plan(G, G$mf, threads = 1L)
    p <- plan$p
    expect_error(.Call(gamgpu:::gg_xsparse_check_r, plan, runif(2000), rnorm(2000),
                       rnorm(p), diag(p), matrix(0, p, 1), matrix(0, 2000, 1)),
                 class = "gamgpu_unsupported_term")
  }
})

test_that("fits through sparse rows agree with the dense route's and bam()'s", {
  d <- terms_data(20000)
  d$yp <- rpois(nrow(d), exp(d$y / 3))
  cases <- list(
    list(y ~ f + s(x, bs = "cr", k = 12) + te(z, w, k = c(5, 5)), gaussian()),
    list(yp ~ g + s(f, bs = "re") + s(x, by = g, bs = "cr") + s(z, bs = "ps"), poisson()),
    list(yb ~ s(x, bs = "cc") + s(z, bs = "bs") + w, binomial()),
    list(yb ~ s(x) + te(z, w, k = c(5, 5)) + s(f, bs = "re"), binomial()),
    list(y ~ s(x, k = 15) + s(z, by = w) + g, gaussian()))
  for (cs in cases) {
    lab <- paste(cs[[2]]$family, deparse(cs[[1]]))
    fit <- function(mode) {
      local_gg_options(gamgpu.cpu_x = mode)
      gam_gpu(cs[[1]], family = cs[[2]], data = d, device = "off", control = tight_gg())
    }
    sp <- fit("sparse")
    de <- fit("dense")
    expect_match(sp$device$placement, "^host \\(sparse rows: [0-9]+ entries of [0-9]+",
                 label = lab)
    expect_identical(de$device$placement, "host", label = lab)
    expect_match(sp$device$cpu_gram, "sparse rows", label = lab)
    expect_true(sp$converged && de$converged, label = lab)
    # each fit stops inside the same stopping rules at a point its roundings
    # pick (helper-compare.R's cross-arithmetic bounds): measured 1e-14
    # (poisson) to 8e-12 (gaussian) of the range against the dense route
    # under R's reference BLAS, 2.6e-9 (gaussian, EDF 8.7e-7) under
    # OpenBLAS on the GPU machine
    r <- diff(range(de$linear.predictors))
    expect_lt(max(abs(sp$linear.predictors - de$linear.predictors)) / r, 1e-7, label = lab)
    expect_lt(abs(sum(sp$edf) - sum(de$edf)), 1e-5, label = lab)
    b <- mgcv::bam(cs[[1]], family = cs[[2]], data = d, control = tight())
    expect_agrees_with_mgcv(sp, b)
  }
})

test_that("options(gamgpu.cpu_x) chooses the rows, and is checked", {
  d <- terms_data(60000)
  f <- y ~ f + s(x, bs = "cr", k = 20) + te(z, w, k = c(6, 6))
  auto <- gam_gpu(f, data = d, device = "off")
  expect_match(auto$device$placement, "sparse rows")
  # thin plate bases in one variable made per row: taken up to a quarter
  # more arithmetic than dense rows (here 1.1)
  expect_match(gam_gpu(y ~ s(x) + s(z) + w, data = d, device = "off")$device$placement,
               "18 thin plate columns made per row")
  small <- gam_gpu(f, data = d[1:20000, ], device = "off")
  expect_identical(small$device$placement, "host")
  local_gg_options(gamgpu.cpu_x = "dense")
  expect_identical(gam_gpu(f, data = d, device = "off")$device$placement, "host")
  local_gg_options(gamgpu.cpu_x = "sparse")
  expect_match(gam_gpu(f, data = d[1:20000, ], device = "off")$device$placement,
               "sparse rows")
  # thin plate bases in one variable: made per row; in two, stored
  expect_match(gam_gpu(y ~ s(x) + s(z), data = d[1:20000, ],
                       device = "off")$device$placement,
               "^host \\(sparse rows: 19 entries of 19, .*; 18 thin plate columns made per row\\)$")
  expect_match(gam_gpu(y ~ s(x, z) + s(w, bs = "cr"), data = d[1:20000, ],
                       device = "off")$device$placement, "; 29 dense columns\\)$")
  local_gg_options(gamgpu.cpu_x = "fast")
  expect_error(gam_gpu(f, data = d[1:5000, ], device = "off"), class = "gamgpu_bad_input")
})

test_that("gam()'s methods on the CPU take sparse rows in place of mgcv's X", {
  d <- terms_data(20000)
  d$y <- exp(d$y / 4) * rgamma(nrow(d), 10, 10)
  local_gg_options(gamgpu.cpu_x = "sparse")
  for (cs in list(list(y ~ s(x, bs = "cr") + te(z, w, k = c(5, 5)) + f, Gamma(link = "log"),
                       "ML"),
                  list(yb ~ s(x) + s(z, bs = "cr") + s(f, bs = "re"), binomial(), "REML"))) {
    lab <- paste(cs[[2]]$family, cs[[3]])
    g <- gam_gpu(cs[[1]], family = cs[[2]], data = d, method = cs[[3]], device = "off",
                 control = tight_gam_gg())
    b <- mgcv::gam(cs[[1]], family = cs[[2]], data = d, method = cs[[3]],
                   control = mgcv::gam.control(epsilon = 1e-10, newton = list(conv.tol = 1e-9)))
    expect_match(g$device$placement, "sparse rows", label = lab)
    expect_identical(g$device$model_matrix, "recipe", label = lab)
    expect_true(isTRUE(g$converged), label = lab)
    # another arithmetic than gam()'s: the stopping rules' agreement
    # (measured 2e-9 of the range, scores 1e-13 relative)
    expect_lt(max(abs(g$linear.predictors - b$linear.predictors)) /
                diff(range(b$linear.predictors)), 1e-6, label = lab)
    expect_lt(abs(g$gcv.ubre[[1]] / b$gcv.ubre[[1]] - 1), 1e-9, label = lab)
    expect_lt(max(abs(g$edf - b$edf)), 1e-5, label = lab)
  }
})
