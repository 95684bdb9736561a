# The extended and general families gamgpu does not fit are refused by
# name, before any work, with a classed error that says what to use
# instead: never a silent fit of something else.  (Every one of mgcv's own
# is fitted now; a family written by a user, with an ll() of its own, is
# not.)

test_that("the families gamgpu lacks are refused by name", {
  set.seed(1)
  d <- data.frame(x0 = runif(50), y = rpois(50, 3) + 0.5)
  own_general <- structure(list(family = "my own general", nlp = 1,
                                ll = function(y, X, coef, wt, family, offset = NULL,
                                              deriv = 0, ...) list(l = 0)),
                           class = c("general.family", "extended.family", "family"))
  fams <- list(own_general)
  for (fam in fams) {
    e <- expect_error(gam_gpu(y ~ s(x0), family = fam, data = d, device = "off"),
                      class = "gamgpu_bad_family")
    expect_match(conditionMessage(e), fam$family, fixed = TRUE)
    expect_match(conditionMessage(e), "mgcv::gam()", fixed = TRUE)
  }
})

test_that("ocat() with more categories than the engine carries is refused", {
  set.seed(1)
  d <- data.frame(x0 = runif(200))
  d$y <- sample(1:13, 200, replace = TRUE)
  e <- expect_error(gam_gpu(y ~ s(x0), family = mgcv::ocat(R = 13), data = d, device = "off"),
                    class = "gamgpu_bad_family")
  expect_match(conditionMessage(e), "R = 13", fixed = TRUE)
})
