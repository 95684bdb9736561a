# tools/suite_by_file.R -- the test suite one file at a time, each file's
# counts written as soon as it finishes (a CSV line: file, pass, fail, skip,
# error, seconds) and its failures to a log, so that a run stopped by a time
# limit still says what passed.  For the GPU machine, whose calls are
# limited to 10 minutes (the whole suite with GAMGPU_TEST_DEVICE=required
# took 508 s there on 35249de); run from the repository root after
# installing the package:
#
#   GAMGPU_TEST_DEVICE=required OUT=$OUT Rscript tools/suite_by_file.R [file ...]
#
# Files named first run first, then the rest (ONLY=1: the named ones alone;
# SKIP_FILES=a.R,b.R leaves some out; PART=k/N runs the k-th of N parts
# whose seconds in tests/timings.csv are about equal -- the whole suite on
# the GPU machine in N calls of its 10 minutes).  Writes $OUT/files.csv and
# $OUT/details.log, and prints the totals.
suppressMessages({
  library(testthat)
  library(gamgpu)
})
out <- Sys.getenv("OUT", ".")
dir.create(out, showWarnings = FALSE, recursive = TRUE)
args <- commandArgs(trailingOnly = TRUE)
files <- list.files("tests/testthat", "^test-.*\\.R$", full.names = TRUE)
first <- file.path("tests/testthat", args)
files <- if (nzchar(Sys.getenv("ONLY"))) first else c(first, setdiff(files, first))
skip <- Sys.getenv("SKIP_FILES")
if (nzchar(skip))
  files <- setdiff(files, file.path("tests/testthat", strsplit(skip, ",")[[1]]))
part <- Sys.getenv("PART")
if (nzchar(part)) {
  kn <- as.integer(strsplit(part, "/", fixed = TRUE)[[1]])
  if (length(kn) != 2L || anyNA(kn) || kn[1] < 1L || kn[1] > kn[2])
    stop("PART must be k/N with 1 <= k <= N")
  tm <- utils::read.csv("tests/timings.csv", stringsAsFactors = FALSE)
  secs <- tm$seconds_mgcv_1.8.41[match(basename(files), tm$file)]
  secs[is.na(secs)] <- stats::median(tm$seconds_mgcv_1.8.41)
  # greedy: the longest files first, each to the part with the least so far
  ord <- order(-secs)
  load <- numeric(kn[2])
  which_part <- integer(length(files))
  for (i in ord) {
    j <- which.min(load)
    which_part[i] <- j
    load[j] <- load[j] + secs[i]
  }
  files <- files[which_part == kn[1]]
}
csv <- file.path(out, "files.csv")
cat("file,pass,fail,skip,error,seconds\n", file = csv)
log <- file(file.path(out, "details.log"), "w")
for (f in files) {
  t0 <- proc.time()[["elapsed"]]
  r <- as.data.frame(test_file(f, reporter = SummaryReporter$new(file = log),
                               package = "gamgpu", load_package = "installed",
                               stop_on_failure = FALSE))
  cat(sprintf("%s,%d,%d,%d,%d,%.1f\n", basename(f), sum(r$nb) - sum(r$failed) - sum(r$skipped),
              sum(r$failed), sum(r$skipped), sum(r$error), proc.time()[["elapsed"]] - t0),
      file = csv, append = TRUE)
  flush(log)
}
close(log)
x <- utils::read.csv(csv)
cat(sprintf("[ FAIL %d | ERROR %d | SKIP %d | PASS %d ] %d files, %.0f s\n", sum(x$fail),
            sum(x$error), sum(x$skip), sum(x$pass), nrow(x), sum(x$seconds)))
