# The extended families' rows of gam()'s REML and ML in C (inst/include/
# efam_outer.h; src/engine/outer_rows.c on the CPU, inst/kernels/outer.cu on the
# device): nb()'s, tw()'s, betar()'s and scat()'s Dd and dDeta() against mgcv's, and the
# criterion, its gradient and Hessian from them against the same from
# mgcv's dDeta() in R (R/outer_efam.R's efam_rows_r()).
#
# Measured (CPU, this file's cases): dDeta() to 1.1e-13 relative (tw's
# level-2 terms; nb's are mgcv's to the bit), betar()'s to 2.8e-14 of each
# vector's largest element and 1.2e-11 of an element (its digamma,
# trigamma and psigamma(, 2), psigamma(, 3) agree with R's to 1.3e-15, but
# dDeta()'s sums cancel to far below their terms); the criterion to 5.8e-16
# relative, its gradient, Hessian, beta and d beta to 4.2e-13 of their
# largest element (the inner iteration's stopping point moves with the
# rounding).

ef_rows_data <- function(n = 500, seed = 3) {
  set.seed(seed)
  d <- data.frame(x0 = runif(n), x1 = runif(n), off = log(runif(n, 1, 3)),
                  wt = runif(n, 0.5, 2))
  f <- sin(2 * pi * d$x0) + 0.6 * cos(4 * d$x1)
  d$ynb <- stats::rnbinom(n, mu = exp(0.5 + f + d$off), size = 3)
  d$ytw <- mgcv::rTweedie(exp(0.8 + f), p = 1.5, phi = 0.9)
  d$ypos <- exp(1 + f)      # (a mean far from 0 for the identity and sqrt links)
  d$ybe <- stats::plogis(f - 0.5 + stats::rnorm(n) * 0.6)
  d$ysc <- pmax(exp(1 + f) + stats::rt(n, df = 5) * 0.3, 0.05)   # (log, inverse links)
  d$yzp <- stats::rpois(n, exp(0.8 + f)) * stats::rbinom(n, 1, 0.7)
  # (ordered categories 1..6 and 1..8 from a latent f + logistic noise)
  lat <- 2 * f + stats::rlogis(n)
  d$yo6 <- findInterval(lat, c(-2, -0.8, 0, 0.8, 2)) + 1
  d$yo8 <- findInterval(lat, c(-3, -2, -1, -0.3, 0.3, 1, 2)) + 1
  d
}

ef_rows_cases <- function() {
  cs <- list()
  for (l in c("log", "identity", "sqrt")) {
    cs[[length(cs) + 1]] <- list(fam = do.call(mgcv::nb, list(theta = 2.5, link = l)), name = "negbin")
    cs[[length(cs) + 1]] <- list(fam = do.call(mgcv::tw, list(theta = 1.4, link = l)), name = "tw")
  }
  for (l in c("logit", "probit", "cloglog", "cauchit"))
    cs[[length(cs) + 1]] <- list(fam = do.call(mgcv::betar, list(theta = 2, link = l)), name = "betar")
  for (l in c("identity", "log", "inverse"))
    cs[[length(cs) + 1]] <- list(fam = do.call(mgcv::scat, list(theta = c(-4, -1.2), link = l)),
                                 name = "scat")
  for (th in list(c(-0.5, 0.3), c(1.2, -2)))
    cs[[length(cs) + 1]] <- list(fam = mgcv::ziP(theta = th), name = "ziP")
  # (ocat(R): R - 2 = 1 to 4 thetas, the most the rows in C take)
  # (ocat()'s theta: R - 2 log increments of the cut points past the first, -1)
  for (R in 3:6) for (th in list(seq(-0.4, 0.5, length.out = R - 2), rep(c(0.7, -1), 2)[1:(R - 2)])) {
    fam <- mgcv::ocat(R = R)
    fam$putTheta(th)
    cs[[length(cs) + 1]] <- list(fam = fam, name = "ocat")
  }
  cs
}

# the response and a mean on the family's scale for ef_rows_cases()' family
ef_rows_yu <- function(cs, d) {
  R <- if (cs$name == "ocat") length(cs$fam$getTheta()) + 2
  y <- switch(cs$name, negbin = d$ynb, tw = d$ytw, betar = d$ybe, scat = d$ysc, ziP = d$yzp,
              ocat = pmin(d$yo6, R))
  mu <- switch(cs$name, betar = stats::plogis(qlogis(d$ybe) + 0.3),
               ziP = 0.8 + sin(2 * pi * d$x0),
               ocat = 2 * sin(2 * pi * d$x0) + 0.3 * d$x1, d$ypos)
  list(y = y, mu = mu)
}

test_that("the extended families' dDeta() in C is mgcv's, for their links, levels 0, 1 and 2", {
  d <- ef_rows_data()
  for (cs in ef_rows_cases()) {
    fam <- mgcv:::fix.family.link(cs$fam)
    yu <- ef_rows_yu(cs, d)
    y <- yu$y
    mu <- yu$mu
    ef <- list(theta = fam$getTheta(),
               aux = switch(cs$name, tw = c(1.01, 1.99), betar = 1e-10, scat = 3,
                            ziP = c(0, 0), numeric(0)))
    for (deriv in 0:2) {
      r <- mgcv:::dDeta(y, mu, d$wt, fam$getTheta(), fam, deriv)
      g <- .Call(gamgpu:::gg_efam_deta_r, cs$name, fam$link, mu, as.double(y), d$wt, ef, deriv)
      nm <- c("Deta", "Deta2", "EDeta2", if (deriv > 0L) c("Dth", "Detath", "Deta3", "Deta2th"),
              if (deriv > 1L) c("Deta4", "Dth2", "Detath2", "Deta2th2", "Deta3th"))
      for (k in nm) {
        label <- paste(cs$name, fam$link, deriv, k)
        rk <- as.matrix(r[[k]])     # (a family with one theta has vectors)
        expect_identical(dim(g[[k]]), dim(rk), label = label)
        err <- abs(g[[k]] - rk) / pmax(abs(rk), 1e-10 * max(abs(rk)))
        expect_lt(max(err), if (cs$name == "betar") 1e-10 else 1e-12, label = label)
        expect_lt(max(abs(g[[k]] - rk)) / max(abs(rk)), 1e-13, label = label)
      }
    }
  }
  expect_error(.Call(gamgpu:::gg_efam_deta_r, "binomial", "logit", d$ypos, d$ynb + 0, d$wt,
                     list(theta = 0), 0L), class = "gamgpu_bad_family")
  expect_error(.Call(gamgpu:::gg_efam_deta_r, "ziP", "log", d$ypos, d$ynb + 0, d$wt,
                     list(theta = c(0, 0), aux = c(0, 0)), 0L), class = "gamgpu_bad_link")
  # (ocat()'s rows in C take at most four thetas: R <= 6)
  expect_error(.Call(gamgpu:::gg_efam_deta_r, "ocat", "identity", d$ypos, pmin(d$yo8, 7), d$wt,
                     list(theta = rep(0, 5)), 0L), class = "gamgpu_bad_family")
  # (a family's count of theta values is its own)
  expect_error(.Call(gamgpu:::gg_efam_deta_r, "scat", "identity", d$ypos, d$ynb + 0, d$wt,
                     list(theta = 0, aux = 3), 0L), class = "gamgpu_bad_family")
  expect_error(.Call(gamgpu:::gg_efam_deta_r, "negbin", "log", d$ypos, d$ynb + 0, d$wt,
                     list(theta = c(0, 1)), 0L), class = "gamgpu_bad_family")
})

# The outer problem of a formula, its rows in C (rows = "auto") or in R
# ("R"), in a session on the CPU (mode 0) or the device (2); the scale the
# family's (tw()'s estimated, its log a parameter)
ef_problem <- function(formula, family, data, rows, mode = 0L, scale = 0) {
  G <- mgcv::gam(formula, family = family, data = data, fit = FALSE, method = "REML")
  gamgpu:::efam_outer_problem(G, test_session(G$X, G$y, G$w, G$offset, mode), G$y, G$w,
                              G$offset, family, G$S, "REML", 1, scale, rows = rows, own = TRUE)
}

ef_score <- function(P, lsp, th) {
  gamgpu:::efam_outer_score(P, lsp, if (P$lphi) log(0.9), NULL, list(maxit = 200L),
                            th = th)
}

expect_scores_match <- function(a, b, tol, label) {
  expect_true(a$pirls_converged && b$pirls_converged, label = label)
  expect_lt(abs(a$score - b$score) / abs(b$score), 1e-13, label = paste(label, "score"))
  for (k in c("grad", "hess", "beta", "db"))
    expect_lt(max(abs(a[[k]] - b[[k]])) / max(abs(b[[k]])), tol, label = paste(label, k))
}

test_that("the criterion from the rows in C equals the one from mgcv's dDeta() in R", {
  d <- ef_rows_data()
  for (cs in list(list(ynb ~ s(x0) + s(x1) + offset(off), mgcv::nb(), c(-1, 0.5)),
                  list(ynb ~ s(x0) + s(x1), mgcv::nb(link = "sqrt"), c(0, 1)),
                  list(ytw ~ s(x0) + s(x1), mgcv::tw(), c(-2, -0.5)),
                  list(ypos ~ s(x0), mgcv::tw(link = "identity"), 1),
                  list(ybe ~ s(x0) + s(x1), mgcv::betar(), c(-1, 0)),
                  list(ybe ~ s(x0), mgcv::betar(link = "probit"), 0.5),
                  list(ynb ~ s(x0), mgcv::nb(theta = 3), 0),
                  list(ysc ~ s(x0) + s(x1), mgcv::scat(), c(-1, 0.5)),
                  list(ysc ~ s(x0), mgcv::scat(link = "log"), 0),
                  list(ysc ~ s(x0), mgcv::scat(link = "inverse"), 1),
                  list(ysc ~ s(x0), mgcv::scat(theta = c(6, 0.4)), -0.5),
                  list(yzp ~ s(x0) + s(x1), mgcv::ziP(), c(0, 1)),
                  list(yo6 ~ s(x0), mgcv::ocat(R = 6), 0),
                  list(pmin(yo6, 3) ~ s(x0) + s(x1), mgcv::ocat(R = 3), c(-0.5, 0.5)))) {
    label <- paste(cs[[2]]$family, cs[[2]]$link)
    Pc <- ef_problem(cs[[1]], cs[[2]], d, "auto")
    Pr <- ef_problem(cs[[1]], cs[[2]], d, "R")
    th <- if (Pc$nth > 0) Pc$theta() + 0.1 else numeric(0)
    a <- ef_score(Pc, cs[[3]], th)
    b <- ef_score(Pr, cs[[3]], th)
    Pc$close()
    Pr$close()
    expect_identical(Pc$env$rows, "cpu", label = label)
    expect_match(Pr$env$rows, "^R \\(mgcv's dDeta\\(\\)", label = label)
    expect_identical(length(a$grad), Pc$nth + length(cs[[3]]) + Pc$lphi, label = label)
    expect_scores_match(a, b, 1e-11, label)
  }
})

test_that("gam_gpu() takes the extended families' rows in C and says where they are not", {
  d <- ef_rows_data(n = 400)
  ctl <- gam_gpu_control(epsilon = 1e-10, newton.tol = 1e-9)
  g <- gam_gpu(ynb ~ s(x0) + s(x1), family = mgcv::nb(), data = d, method = "REML",
               device = "off", control = ctl)
  expect_identical(g$device$outer_rows, "cpu")
  b <- gam_gpu(ybe ~ s(x0), family = mgcv::betar(), data = d, method = "REML",
               device = "off", control = ctl)
  expect_identical(b$device$outer_rows, "cpu")
  sc <- gam_gpu(ysc ~ s(x0), family = mgcv::scat(), data = d, method = "REML",
                device = "off", control = ctl)
  expect_identical(sc$device$outer_rows, "cpu")
  d$yzp <- stats::rpois(nrow(d), exp(1 + sin(2 * pi * d$x0))) * stats::rbinom(nrow(d), 1, 0.7)
  zp <- gam_gpu(yzp ~ s(x0), family = mgcv::ziP(), data = d, method = "REML",
                device = "off", control = ctl)
  expect_identical(zp$device$outer_rows, "cpu")
  oc <- gam_gpu(yo6 ~ s(x0), family = mgcv::ocat(R = 6), data = d, method = "REML",
                device = "off", control = ctl)
  expect_identical(oc$device$outer_rows, "cpu")
  # (more than four cut points to estimate: mgcv's dDeta() in R, said so)
  o8 <- gam_gpu(yo8 ~ s(x0), family = mgcv::ocat(R = 8), data = d, method = "REML",
                device = "off", control = ctl)
  expect_match(o8$device$outer_rows, "^R \\(mgcv's dDeta\\(\\): .* 6 cut points to estimate")
})

test_that("a session's extended-family rows need their eval, a family they have and level 0 or 2", {
  d <- ef_rows_data(n = 60)
  X <- cbind(1, d$x0)
  ses <- test_session(X, d$ynb + 0, d$wt)$ptr
  on.exit(.Call(gamgpu:::gg_session_close_r, ses))
  ef <- list(theta = log(2), aux = numeric(0))
  expect_error(.Call(gamgpu:::gg_session_ef_rows_r, ses, 0L, FALSE, FALSE, FALSE),
               class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_ef_newton_r, ses, FALSE), class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_ef_eval_r, ses, c(0, 0), "binomial", "logit", NULL, ef),
               class = "gamgpu_bad_family")
  expect_error(.Call(gamgpu:::gg_session_ef_eval_r, ses, c(0, 0), "negbin", "log", 2,
                     list(theta = c(1, 2))), class = "gamgpu_bad_family")
  expect_error(.Call(gamgpu:::gg_session_ef_eval_r, ses, 0, "negbin", "log", 2, ef),
               class = "gamgpu_bad_input")
  dev <- .Call(gamgpu:::gg_session_ef_eval_r, ses, c(0.5, 0.2), "negbin", "log", 2, ef)
  mu <- exp(0.5 + 0.2 * d$x0)
  expect_equal(dev, sum(mgcv::nb(theta = 2)$dev.resids(d$ynb, mu, d$wt, log(2))),
               tolerance = 1e-13)
  expect_error(.Call(gamgpu:::gg_session_ef_rows_r, ses, 1L, FALSE, FALSE, FALSE),
               class = "gamgpu_bad_input")
  expect_error(.Call(gamgpu:::gg_session_ef_rows_r, ses, 0L, FALSE, TRUE, FALSE),
               class = "gamgpu_bad_input")
  r <- .Call(gamgpu:::gg_session_ef_rows_r, ses, 2L, TRUE, TRUE, TRUE)
  fam <- mgcv:::fix.family.link(mgcv::nb(theta = 2))
  dd <- mgcv:::dDeta(d$ynb, mu, d$wt, log(2), fam, 2)
  expect_equal(r$w, dd$Deta2 / 2, tolerance = 1e-13)
  expect_equal(r$wf, pmax(0, dd$EDeta2 / 2), tolerance = 1e-13)
  expect_equal(r$Dth, sum(dd$Dth), tolerance = 1e-13)
  expect_equal(r$Dth2, sum(dd$Dth2), tolerance = 1e-13)
  expect_equal(r$XtWX, crossprod(X, X * dd$Deta2 / 2), tolerance = 1e-13)
  expect_equal(r$Xg, crossprod(X, dd$Detath / 2), tolerance = 1e-13)
  expect_identical(r$bad, 0)
  g <- .Call(gamgpu:::gg_session_ef_newton_r, ses, FALSE)
  eta <- log(mu)
  expect_equal(g$XtWz, drop(crossprod(X, dd$Deta2 / 2 * eta - dd$Deta / 2)), tolerance = 1e-12)
  # theta's products need an extended family's rows
  .Call(gamgpu:::gg_session_eval_r, ses, c(0.5, 0.2), "poisson", "log", FALSE, NULL)
  .Call(gamgpu:::gg_session_rows_r, ses, "poisson", "log", FALSE, FALSE, FALSE, NULL)
  expect_error(.Call(gamgpu:::gg_session_derivs_r, ses, diag(2), diag(2), c(0L, 0L, 0L, 1L)),
               class = "gamgpu_bad_input")
})

test_that("on the GPU, the extended families' rows stay on the device and give the CPU's criterion", {
  skip_if_no_device()
  d <- ef_rows_data(n = 30000)
  for (cs in list(list(ynb ~ s(x0) + s(x1) + offset(off), mgcv::nb(), c(-1, 0.5)),
                  list(ytw ~ s(x0) + s(x1), mgcv::tw(), c(-2, -0.5)),
                  list(ybe ~ s(x0) + s(x1), mgcv::betar(link = "cloglog"), c(-1, 0)),
                  list(ysc ~ s(x0) + s(x1), mgcv::scat(), c(-1, 0.5)),
                  list(ysc ~ s(x0), mgcv::scat(link = "log"), 0),
                  list(yzp ~ s(x0) + s(x1), mgcv::ziP(), c(0, 1)),
                  list(yo6 ~ s(x0) + s(x1), mgcv::ocat(R = 6), c(-0.5, 0.5)),
                  list(ynb ~ s(x0), mgcv::nb(link = "sqrt"), 0))) {
    label <- paste(cs[[2]]$family, cs[[2]]$link)
    Pc <- ef_problem(cs[[1]], cs[[2]], d, "auto", 0L)
    th <- Pc$theta() + 0.1
    cpu <- ef_score(Pc, cs[[3]], th)
    Pc$close()
    Pg <- ef_problem(cs[[1]], cs[[2]], d, "auto", 2L)
    gpu_telemetry(reset = TRUE)
    gpu <- ef_score(Pg, cs[[3]], th)
    t <- gpu_telemetry()
    Pg$close()
    expect_identical(Pg$env$device, "cuda:0", label = label)
    expect_identical(Pg$env$rows, "cuda:0", label = label)
    # the rows, the Newton rows and the products' weights: outer.cu's kernels
    expect_gt(sum(t$launches[t$backend == "outer"]), 10)
    # nothing n-sized up the bus: only p-sized inputs (beta, d beta, Pm)
    expect_lt(sum(t$h2d_bytes), 1e5, label = label)
    expect_scores_match(gpu, cpu, 1e-9, label)
  }
  expect_device_arena_empty()
})
