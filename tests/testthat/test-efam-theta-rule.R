# Which release's estimate.theta() the engine follows (R/families.R:
# efam_theta_rule(), engine_pirls.c's two rules), found by behaviour: under
# the installed mgcv one rule gives bam()'s theta to rounding and the other
# does not (CI runs this under mgcv 1.8-41 and 1.9-3).

test_that("the probe finds the rule whose theta is bam()'s, the other one far from it", {
  st <- gamgpu:::efam_theta_rule_status()
  expect_true(st$rule %in% 0:1)
  # (4e-14 on the 2-core machine, 5.6e-9 under the GPU machine's BLAS; the
  # other rule 1.4e-5 away on both)
  expect_lt(st$distance[st$rule + 1L], 1e-8)
  expect_gt(st$distance[2L - st$rule], 1e-7)
})

test_that("scat()'s theta under the probe's rule is bam()'s; under the other it is not", {
  d <- efam_sim("scat", n = 1500, seed = 7)
  f <- y ~ s(x0) + s(x1)
  b <- mgcv::bam(f, family = mgcv::scat(), data = d)
  g <- gam_gpu(f, family = mgcv::scat(), data = d, device = "off")
  # (1e-12 apart on the 2-core machine, 3.2e-7 under the GPU machine's
  # arithmetic; the other rule 8e-6 from bam()'s on both)
  expect_lt(max(abs(g$family$getTheta() - b$family$getTheta())), 1e-6)
  th <- get(".gg_theta", envir = asNamespace("gamgpu"))
  th$probing <- 1L - gamgpu:::efam_theta_rule()
  other <- tryCatch(gam_gpu(f, family = mgcv::scat(), data = d, device = "off"),
                    finally = th$probing <- NULL)
  expect_gt(max(abs(other$family$getTheta() - b$family$getTheta())), 4e-6)
})
