# tools/interrupt_latency.R -- how long gam_gpu() takes to stop after
# Ctrl-C (SIGINT), at points across a fit: the issue's model (tp k = 30
# smooths and a te(), 4e5 rows by default) is fitted once to time its
# stages, then again with a SIGINT sent at fractions of that time by a
# forked child; each interrupted fit must end in an interrupt condition (R's
# own or gamgpu_interrupted), and the next fit must work.  Not a test.
#
#   Rscript tools/interrupt_latency.R [n] [device] [fractions]
#
# device "off" by default; fractions of the uninterrupted fit's time at
# which to send the signal, comma-separated (default 0.05,0.2,...,0.95).
suppressMessages(library(gamgpu))
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[[1]]) else 4e5
device <- if (length(args) >= 2) args[[2]] else "off"
set.seed(1)
d <- data.frame(x0 = runif(n), x1 = runif(n), x2 = runif(n), x3 = runif(n))
d$y <- sin(6 * d$x0) + d$x1^2 + d$x2 * d$x3 + rnorm(n) / 3
f <- y ~ s(x0, k = 30) + s(x1, k = 30) + s(x2, k = 30) + te(x2, x3)

# a first fit compiles and loads the device's kernels: not part of the timing
invisible(gam_gpu(f, data = d[seq_len(min(n, 20000)), ], device = device))
t_fit <- system.time(g <- gam_gpu(f, data = d, device = device))[["elapsed"]]
tm <- g$device$timings
cat(sprintf("uninterrupted fit: %.2f s (setup %.2f, iterations %.2f, postproc %.2f; X %s)\n",
            t_fit, tm[["setup"]], tm[["iterations"]], tm[["postproc"]],
            g$device$model_matrix))

interrupt_at <- function(delay) {
  parent <- Sys.getpid()
  child <- parallel::mcparallel({
    Sys.sleep(delay)
    tools::pskill(parent, tools::SIGINT)
    Sys.time()
  })
  t0 <- Sys.time()
  finished <- FALSE
  # a fit that ends before the signal waits for it here, not outside
  how <- tryCatch({
    gam_gpu(f, data = d, device = device)
    finished <- TRUE
    Sys.sleep(delay + 30)
    "no signal"
  }, interrupt = function(e) "R interrupt",
     gamgpu_interrupted = function(e) "gamgpu_interrupted")
  t1 <- Sys.time()
  if (finished) how <- "fit ended first"
  sent <- parallel::mccollect(child)[[1]]
  data.frame(delay = delay, how = how,
             latency = as.numeric(difftime(t1, sent, units = "secs")),
             elapsed = as.numeric(difftime(t1, t0, units = "secs")))
}
fractions <- if (length(args) >= 3) as.numeric(strsplit(args[[3]], ",")[[1]]) else
  c(0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95)
res <- do.call(rbind, lapply(fractions * t_fit, interrupt_at))
res$stage <- cut(res$delay, c(0, tm[["setup"]], tm[["setup"]] + tm[["iterations"]], Inf),
                 labels = c("setup", "iterations", "postproc"))
print(res, digits = 3, row.names = FALSE)
t_after <- system.time(g2 <- gam_gpu(f, data = d, device = device))[["elapsed"]]
cut_in <- res$how != "fit ended first"
cat(sprintf("next fit: %.2f s, same fit: %s; worst latency %.3f s (R's setup), %.3f s (gamgpu's C)\n",
            t_after, identical(coef(g), coef(g2)),
            max(c(0, res$latency[cut_in & res$how == "R interrupt"])),
            max(c(0, res$latency[cut_in & res$how == "gamgpu_interrupted"]))))
