# Host -> device copies: large ones go through two pinned host buffers in
# turn (src/cuda_gram.c, gg_cuda_copy_htod); a copy is exact, so a fit
# whose data and X reached the device staged equals the one copied
# directly, bit for bit.  Tests make the staging threshold and chunk small
# so that every copy of a test-sized model is staged, in many chunks.

test_that("the staging sizes are checked", {
  expect_error(gamgpu:::upload_staging(-1, 4096), class = "gamgpu_bad_input")
  expect_error(gamgpu:::upload_staging(0, 4), class = "gamgpu_bad_input")
  expect_error(gamgpu:::upload_staging(NA, 4096), class = "gamgpu_bad_input")
  expect_type(gamgpu:::upload_staging(), "double")  # the defaults; copies staged so far
})

test_that("on the GPU, staged copies give the directly copied fit bit for bit", {
  skip_if_no_device()
  set.seed(5)
  n <- 30000
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))
  d$y <- rbinom(n, 1, binomial()$linkinv(sin(2 * pi * d$x0) + d$x1^2 - d$x2))
  form <- y ~ s(x0, bs = "cr") + s(x1, k = 12) + x2
  defer(gamgpu:::upload_staging())
  for (recipe in c(TRUE, FALSE)) {
    local_gg_options(gamgpu.x_recipe = recipe)
    direct <- expect_device_fit(gam_gpu(form, family = binomial(), data = d,
                                        device = "required"))
    # every copy staged, 5000 bytes (not a multiple of 8) at a time
    k0 <- gamgpu:::upload_staging(0, 5000)
    staged <- expect_device_fit(gam_gpu(form, family = binomial(), data = d,
                                        device = "required"))
    # the data (y, weights, covariates or X) and every p-vector went staged
    expect_gt(gamgpu:::upload_staging() - k0, if (recipe) 5 else 3)
    expect_identical(coef(staged), coef(direct))
    expect_identical(fitted(staged), fitted(direct))
    expect_identical(staged$sp, direct$sp)
    expect_device_arena_empty()
  }
})
