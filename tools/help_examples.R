# tools/help_examples.R -- mgcv's own help-page examples with every gam()
# call also made by gam_gpu() on the same arguments (issue 14's sweep):
# each example runs in a fresh R process where gam() is a wrapper that
# records what gam_gpu(..., device = "off") did with the call (a fit, or
# the class of its error) and then returns mgcv's own gam() fit, so that
# the example goes on as written.  Not a test.
#
#   Rscript tools/help_examples.R [out.csv]
#
# Prints a table of outcomes (fit, or the error class) over all calls, and
# per help page; writes one row per call to out.csv when given.
# Environment: GAMGPU_EXAMPLES_TIMEOUT seconds per help page (default 300).
args <- commandArgs(trailingOnly = TRUE)
out_csv <- if (length(args)) args[1] else ""
limit <- as.numeric(Sys.getenv("GAMGPU_EXAMPLES_TIMEOUT", "300"))
db <- tools::Rd_db("mgcv")
wrapper <- c(
  "suppressMessages({library(mgcv); library(gamgpu)})",
  ".gg_log <- commandArgs(TRUE)[1]",
  "gam <- function(...) {",
  "  t <- system.time(r <- tryCatch(gamgpu::gam_gpu(..., device = 'off'),",
  "                                  error = function(e) e))[['elapsed']]",
  "  what <- if (inherits(r, 'gam_gpu')) 'fit' else class(r)[1]",
  "  msg <- if (inherits(r, 'error')) gsub('[\\r\\n,]', ' ', conditionMessage(r)) else ''",
  "  cat(sprintf('%s,%.2f,%s\\n', what, t, substr(msg, 1, 160)), file = .gg_log, append = TRUE)",
  "  mgcv::gam(...)",
  "}")
rows <- list()
for (nm in names(db)) {
  ex <- tempfile(fileext = ".R")
  tools::Rd2ex(db[[nm]], ex, commentDontrun = TRUE, commentDonttest = TRUE)
  if (!file.exists(ex)) next
  code <- readLines(ex, warn = FALSE)
  if (!any(grepl("\\bgam\\(", code))) next
  script <- tempfile(fileext = ".R")
  log <- tempfile(fileext = ".log")
  writeLines(c(wrapper, code), script)
  system2("timeout", c(limit, file.path(R.home("bin"), "Rscript"), script, log),
          stdout = FALSE, stderr = FALSE)
  if (file.exists(log)) {
    l <- utils::read.csv(log, header = FALSE, col.names = c("outcome", "seconds", "message"),
                         colClasses = "character")
    l$page <- sub("\\.Rd$", "", nm)
    rows[[length(rows) + 1]] <- l
  }
  unlink(c(ex, script, log))
}
all <- do.call(rbind, rows)
cat(sprintf("%d gam() calls on %d help pages\n\n", nrow(all), length(unique(all$page))))
print(sort(table(all$outcome), decreasing = TRUE))
cat("\nerrors by message:\n")
err <- all[all$outcome != "fit", ]
if (nrow(err)) print(utils::head(sort(table(substr(err$message, 1, 100)), decreasing = TRUE), 30))
if (nzchar(out_csv)) utils::write.csv(all, out_csv, row.names = FALSE)
