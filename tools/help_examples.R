# tools/help_examples.R -- mgcv's own help-page examples with every gam()
# and bam() call also made by gam_gpu() on the same arguments (the sweep of
# issues 14 and 35): each example runs in a fresh R process where gam() and
# bam() are wrappers that make mgcv's own fit, then the same call with
# gam_gpu(..., device = "off") (gam()'s default method, "GCV.Cp", named
# where the call has none; bam(discrete = TRUE) compared with mgcv's exact
# bam(discrete = FALSE), which is what gam_gpu fits), compare the two and
# return mgcv's fit, so that the example goes on as written.  Not a test.
#
#   Rscript tools/help_examples.R [out.csv]
#
# Outcomes per call: "agree" (fitted values within 1e-6 of their range,
# the range floored at 1e-8 of the response's),
# "better" (further apart, with a criterion strictly lower than mgcv's --
# both report the same score, REML, ML, GCV or UBRE, minimised), "differ"
# (neither), "setup" (fit = FALSE: not compared), "mgcv_error" (mgcv's own
# call failed: not counted), or the class of gam_gpu's error ("gamgpu_..."
# for a classed one).  Prints the table of outcomes, the errors by message
# and the calls that differ; writes one row per call to out.csv when given.
# Environment: GAMGPU_EXAMPLES_TIMEOUT seconds per help page (default 300),
# GAMGPU_EXAMPLES_PAGES a regular expression of the pages to run.
args <- commandArgs(trailingOnly = TRUE)
out_csv <- if (length(args)) args[1] else ""
limit <- as.numeric(Sys.getenv("GAMGPU_EXAMPLES_TIMEOUT", "300"))
pages <- Sys.getenv("GAMGPU_EXAMPLES_PAGES", "")
db <- tools::Rd_db("mgcv")
if (nzchar(pages)) db <- db[grepl(pages, names(db))]
wrapper <- c(
  "suppressMessages({library(mgcv); library(gamgpu)})",
  ".gg_log <- commandArgs(TRUE)[1]",
  ".gg_shadow <- function(mc, env, fitter) {",
  "  mc[[1L]] <- call('::', as.name('mgcv'), as.name(fitter))",
  "  # (a call that draws its data, gam(y ~ x, data = data.frame(y = rnorm(n))),",
  "  # draws the same data for gam_gpu: the RNG is set back before each)",
  "  seed0 <- get0('.Random.seed', envir = globalenv())",
  "  reseed <- function(s) if (!is.null(s)) assign('.Random.seed', s, envir = globalenv())",
  "  m <- eval(mc, env)                      # mgcv's own (its error is the example's)",
  "  seed1 <- get0('.Random.seed', envir = globalenv())",
  "  on.exit(reseed(seed1))",
  "  gcall <- mc",
  "  gcall[[1L]] <- quote(gamgpu::gam_gpu)",
  "  gcall$device <- 'off'",
  "  if (fitter == 'gam' && is.null(gcall$method)) gcall$method <- 'GCV.Cp'",
  "  ref <- m",
  "  if (fitter == 'bam' && isTRUE(eval(mc$discrete, env))) {",
  "    rc <- mc; rc$discrete <- FALSE; rc$nthreads <- NULL",
  "    reseed(seed0)",
  "    ref <- tryCatch(eval(rc, env), error = function(e) m)",
  "  }",
  "  reseed(seed0)",
  "  t <- system.time(r <- tryCatch(suppressMessages(eval(gcall, env)), error = function(e) e))[['elapsed']]",
  "  what <- 'fit'; fd <- NA; cg <- NA; cm <- NA; msg <- ''",
  "  if (inherits(r, 'error')) {",
  "    what <- class(r)[1]; msg <- gsub('[\r\n,]', ' ', conditionMessage(r))",
  "  } else if (isFALSE(eval(mc$fit, env))) {",
  "    what <- 'setup'",
  "  } else {",
  "    fm <- as.numeric(ref$fitted.values); fg <- as.numeric(r$fitted.values)",
  "    # (the range floored at 1e-8 of the response's: a fit shrunk to a",
  "    # constant has fitted values whose range is rounding, 1e-12 of y's)",
  "    yr <- suppressWarnings(diff(range(as.numeric(ref$y), finite = TRUE)))",
  "    rg <- max(diff(range(fm)), if (is.finite(yr)) 1e-8 * yr else 0)",
  "    if (!is.finite(rg) || rg == 0) rg <- max(abs(fm), 1)",
  "    fd <- if (length(fm) == length(fg)) max(abs(fm - fg)) / rg else Inf",
  "    cg <- as.numeric(r$gcv.ubre)[1]; cm <- as.numeric(ref$gcv.ubre)[1]",
  "    what <- if (is.finite(fd) && fd <= 1e-6) 'agree' else",
  "      if (isTRUE(cg < cm - 1e-9 * max(1, abs(cm)))) 'better' else 'differ'",
  "  }",
  "  cat(sprintf('%s,%s,%.2f,%.3g,%.12g,%.12g,%s\n', fitter, what, t, fd, cg, cm, substr(msg, 1, 160)),",
  "      file = .gg_log, append = TRUE)",
  "  m",
  "}",
  "gam <- function(...) .gg_shadow(match.call(mgcv::gam), parent.frame(), 'gam')",
  "bam <- function(...) .gg_shadow(match.call(mgcv::bam), parent.frame(), 'bam')")
rows <- list()
for (nm in names(db)) {
  ex <- tempfile(fileext = ".R")
  tools::Rd2ex(db[[nm]], ex, commentDontrun = TRUE, commentDonttest = TRUE)
  if (!file.exists(ex)) next
  code <- readLines(ex, warn = FALSE)
  if (!any(grepl("\\b[gb]am\\(", code))) next
  script <- tempfile(fileext = ".R")
  log <- tempfile(fileext = ".log")
  writeLines(c(wrapper, code), script)
  system2("timeout", c(limit, file.path(R.home("bin"), "Rscript"), script, log),
          stdout = FALSE, stderr = FALSE)
  if (file.exists(log)) {
    l <- utils::read.csv(log, header = FALSE,
                         col.names = c("fitter", "outcome", "seconds", "fit_diff", "score",
                                       "mgcv_score", "message"), colClasses = "character")
    l$page <- sub("\\.Rd$", "", nm)
    rows[[length(rows) + 1]] <- l
  }
  unlink(c(ex, script, log))
}
all <- do.call(rbind, rows)
cat(sprintf("mgcv %s: %d gam() and bam() calls on %d help pages\n\n",
            utils::packageVersion("mgcv"), nrow(all), length(unique(all$page))))
print(sort(table(all$outcome), decreasing = TRUE))
counted <- all[!(all$outcome %in% c("setup", "mgcv_error")), ]
cat(sprintf("\nagree or better: %d of %d (%.1f%%); unclassed errors: %d; differ: %d\n",
            sum(counted$outcome %in% c("agree", "better")), nrow(counted),
            100 * mean(counted$outcome %in% c("agree", "better")),
            sum(!(counted$outcome %in% c("agree", "better", "differ")) &
                  !grepl("^gamgpu_", counted$outcome)),
            sum(counted$outcome == "differ")))
cat("\nerrors by message:\n")
err <- all[!(all$outcome %in% c("agree", "better", "differ", "setup")), ]
if (nrow(err)) print(utils::head(sort(table(substr(err$message, 1, 100)), decreasing = TRUE), 30))
dif <- all[all$outcome %in% c("differ", "better"), c("page", "fitter", "outcome", "fit_diff", "score", "mgcv_score")]
if (nrow(dif)) { cat("\ncalls that differ from mgcv's fit:\n"); print(dif, row.names = FALSE) }
if (nzchar(out_csv)) utils::write.csv(all, out_csv, row.names = FALSE)
