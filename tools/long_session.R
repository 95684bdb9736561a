# tools/long_session.R -- many fits in one R process (issue 15's long
# session): mixed sizes, families and bases, on the device when one is
# usable and on the CPU, with injected interrupts and bad inputs mixed in.
# Every 10 fits it records the host's resident memory, the device arena's
# bytes in use, the process's threads and open file descriptors, and the
# NVRTC compiles so far; it prints the curve's start and end and writes it
# as CSV.  Not a test.
#
#   Rscript tools/long_session.R [fits] [csv]          (500, long_session.csv)
suppressMessages({library(gamgpu); library(mgcv)})
args <- commandArgs(trailingOnly = TRUE)
nfits <- if (length(args) >= 1) as.integer(args[[1]]) else 500L
csv <- if (length(args) >= 2) args[[2]] else "long_session.csv"
gpu <- isTRUE(gpu_info()$usable)

proc_status <- function(field) {
  l <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(strsplit(trimws(sub(paste0(field, ":"), "", l)), "\\s+")[[1]][1])
}
snapshot <- function(i) {
  a <- if (gpu) gpu_arena() else NULL
  mods <- gpu_modules()
  data.frame(fit = i, rss_mb = proc_status("VmRSS") / 1024,
             threads = proc_status("Threads"),
             fds = length(list.files("/proc/self/fd")),
             arena_in_use = if (is.null(a)) 0 else sum(a$bytes_in_use),
             compiles = if (nrow(mods) == 0) 0 else sum(mods$compiles))
}

set.seed(11)
forms <- list(y ~ s(x0) + s(x1, bs = "cr"),
              y ~ s(x0, bs = "cr") + te(x1, x2, k = c(4, 4)) + f,
              y ~ s(x0, f, bs = "fs", k = 5) + s(x2, bs = "cc"))
fams <- list(gaussian(), binomial(), poisson(), Gamma(link = "log"))
make_data <- function(n) {
  d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n),
                  f = factor(sample(letters[1:4], n, TRUE)))
  eta <- sin(4 * d$x0) + d$x1 - 0.5
  d$y_gaussian <- eta + rnorm(n) / 3
  d$y_binomial <- rbinom(n, 1, plogis(eta))
  d$y_poisson <- rpois(n, exp(eta))
  d$y_Gamma <- rgamma(n, 3, 3 / exp(eta))
  d
}
rows <- list(snapshot(0))
outcomes <- c(ok = 0, interrupted = 0, error = 0)
unexpected <- list()          # errors of fits that were not given bad data
for (i in seq_len(nfits)) {
  n <- sample(c(500, 2000, 10000, 50000), 1, prob = c(0.4, 0.3, 0.2, 0.1))
  d <- make_data(n)
  fam <- fams[[sample(length(fams), 1)]]
  f <- forms[[sample(length(forms), 1)]]
  f[[2]] <- as.name(paste0("y_", fam$family))
  device <- if (gpu && runif(1) < 0.6) "required" else "off"
  what <- sample(c("fit", "interrupt", "bad"), 1, prob = c(0.8, 0.1, 0.1))
  res <- tryCatch({
    if (what == "interrupt") options(gamgpu.inject_interrupt = sample(1:200, 1))
    if (what == "bad") d[[as.character(f[[2]])]][1] <- NA_real_ + if (runif(1) < 0.5) 0 else Inf
    g <- gam_gpu(f, family = fam, data = d, device = device,
                 na.action = if (what == "bad") na.fail else na.omit)
    "ok"
  }, gamgpu_interrupted = function(e) "interrupted",
     error = function(e) {
       if (what != "bad") unexpected[[length(unexpected) + 1]] <<- conditionMessage(e)
       "error"
     },
     finally = options(gamgpu.inject_interrupt = NULL))
  outcomes[[res]] <- outcomes[[res]] + 1
  if (i %% 10 == 0) {
    invisible(gc())
    rows[[length(rows) + 1]] <- snapshot(i)
    write.csv(do.call(rbind, rows), csv, row.names = FALSE)   # so far, if stopped
  }
}
curve <- do.call(rbind, rows)
cat(sprintf("%d fits (%s), device %s\n", nfits,
            paste(names(outcomes), outcomes, sep = " ", collapse = ", "),
            if (gpu) "and CPU" else "none: CPU only"))
if (length(unexpected)) {
  cat("errors of fits with good data:\n")
  print(table(unlist(unexpected)))
}
print(head(curve, 3), row.names = FALSE)
print(tail(curve, 3), row.names = FALSE)
later <- curve[curve$fit >= nfits / 5, ]
fit_lm <- stats::lm(rss_mb ~ fit, data = later)
cat(sprintf("after the first fifth: RSS %.1f .. %.1f MB (slope %.3f MB per 100 fits), threads %d .. %d, fds %d .. %d, arena in use max %g bytes\n",
            min(later$rss_mb), max(later$rss_mb), 100 * coef(fit_lm)[[2]],
            min(later$threads), max(later$threads), min(later$fds), max(later$fds),
            max(curve$arena_in_use)))
