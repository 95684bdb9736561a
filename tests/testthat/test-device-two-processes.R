# Two R processes fitting on one GPU at the same time: each has its own
# context, arena and modules; both fits finish on the device and equal the
# fit one process makes alone.

test_that("two R processes fit on one GPU at once, both correctly", {
  skip_if_no_device()
  skip_on_os("windows")
  out <- tempfile(fileext = ".rds")
  script <- tempfile(fileext = ".R")
  body <- c(
    "suppressMessages(library(gamgpu))",
    "set.seed(4); n <- 400000",
    "d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n))",
    "d$y <- sin(6 * d$x0) + d$x1^2 + rnorm(n) / 3",
    "f <- y ~ s(x0, k = 20) + s(x1, bs = 'cr') + te(x1, x2, k = c(5, 5))",
    "fits <- lapply(1:3, function(i) gam_gpu(f, data = d, device = 'required'))")
  # written aside, then renamed: the file appears whole
  writeLines(c(body, sprintf(paste(
    "saveRDS(lapply(fits, function(g) list(coef = coef(g), backend = g$device$backend)), '%s.part')",
    "file.rename('%s.part', '%s')", sep = "; "), out, out, out)), script)
  rscript <- file.path(R.home("bin"), "Rscript")
  system2(rscript, script, wait = FALSE, stdout = FALSE, stderr = FALSE,
          env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  # the same fits here, meanwhile
  eval(parse(text = body))
  mine <- fits
  for (i in 1:600) {            # up to 2 minutes for the other process
    if (file.exists(out)) break
    Sys.sleep(0.2)
  }
  expect_true(file.exists(out))
  theirs <- readRDS(out)
  for (i in seq_along(mine)) {
    expect_identical(mine[[i]]$device$backend, "cuda")
    expect_identical(theirs[[i]]$backend, "cuda")
    expect_identical(theirs[[i]]$coef, coef(mine[[i]]))
  }
  expect_device_arena_empty()
})
