# bench/scaling_plot.R -- fit time against n on log-log axes, drawn with
# base R graphics from the CSV that bench/gpu_engine.R writes
# (GAMGPU_BENCH_OUT), one or several files (runs at different n, or with
# different peers: a peer left out of a run, or stopped, is NA there).
#
#   Rscript bench/scaling_plot.R out.png run1.csv [run2.csv ...]
#
# Environment: GAMGPU_PLOT_MODEL ("cr"), GAMGPU_PLOT_FAMILY ("gaussian"):
# which model of the CSV to draw.  One line per fitter: gam_gpu on the GPU
# ("device"), gam_gpu on the CPU ("cpu"), bam fREML, bam discrete; where a
# run has the same n twice, the later file wins.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2L) stop("usage: Rscript bench/scaling_plot.R out.png run.csv [...]")
png_file <- args[[1L]]
runs <- lapply(args[-1L], utils::read.csv, stringsAsFactors = FALSE)
model <- Sys.getenv("GAMGPU_PLOT_MODEL", "cr")
family <- Sys.getenv("GAMGPU_PLOT_FAMILY", "gaussian")

cols <- c(device = "gam_gpu, GPU", cpu = "gam_gpu, CPU",
          bam_fREML = "bam fREML", bam_discrete = "bam discrete")
tab <- do.call(rbind, lapply(runs, function(r) {
  r <- r[r$model == model & r$family == family, , drop = FALSE]
  for (k in names(cols)) if (is.null(r[[k]])) r[[k]] <- NA_real_
  r[, c("n", names(cols)), drop = FALSE]
}))
if (is.null(tab) || !nrow(tab)) stop("no rows for model ", model, ", family ", family)
tab <- tab[!duplicated(tab$n, fromLast = TRUE), , drop = FALSE]
tab <- tab[order(tab$n), , drop = FALSE]

grDevices::png(png_file, width = 900, height = 650, res = 110)
t_all <- unlist(tab[names(cols)])
t_all <- t_all[is.finite(t_all) & t_all > 0]
graphics::plot(range(tab$n), range(t_all), type = "n", log = "xy", xaxt = "n", yaxt = "n",
               xlab = "rows (n)", ylab = "fit time (seconds)",
               main = sprintf("%s %s, four smooths: fit time against n", model, family))
decades <- 10^seq(floor(log10(min(tab$n))), ceiling(log10(max(tab$n))))
graphics::axis(1, at = decades, labels = parse(text = paste0("10^", log10(decades))))
yt <- 10^seq(floor(log10(min(t_all))), ceiling(log10(max(t_all))))
graphics::axis(2, at = yt, labels = format(yt, scientific = FALSE, drop0trailing = TRUE), las = 1)
graphics::abline(h = yt, v = decades, col = "grey90")
pal <- c(device = "#D55E00", cpu = "#0072B2", bam_fREML = "#009E73", bam_discrete = "#CC79A7")
for (k in names(cols)) {
  ok <- is.finite(tab[[k]])
  if (any(ok))
    graphics::lines(tab$n[ok], tab[[k]][ok], type = "b", pch = 19, lwd = 2, col = pal[[k]])
}
graphics::legend("topleft", legend = cols, col = pal, lwd = 2, pch = 19, bty = "n")
invisible(grDevices::dev.off())
print(tab, digits = 3, row.names = FALSE)
