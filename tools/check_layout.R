# tools/check_layout.R -- the source tree's layout rules, checked:
#   * the graph of #include "..." among src/ (in folders, one a layer),
#     inst/include/ and inst/kernels/ has no cycle, a module being a .c
#     file with its .h (x.c including y.h and y.c including x.h is the
#     cycle x <-> y);
#   * no file there is longer than 900 lines.
#   * where src/ holds object files (after `R CMD INSTALL` of a source
#     directory), the graph of calls between files -- file a uses a symbol
#     that file b defines (nm) -- has no cycle either.
# Prints every cycle and every long file; exits with status 1 if any.
#
#   Rscript tools/check_layout.R [root]       (default: the current directory)
args <- commandArgs(trailingOnly = TRUE)
root <- if (length(args)) args[1L] else "."
dirs <- file.path(root, c("src", "inst/include", "inst/kernels"))
files <- unlist(lapply(dirs, list.files, pattern = "\\.(c|h|cu)$", full.names = TRUE,
                       recursive = TRUE))
key <- function(f) normalizePath(f, mustWork = FALSE)
nodes <- vapply(files, key, "")

# edges: file -> the files its #include "x" names, resolved as the
# compilers do for quotes: its own directory first, then the include path
# configure gives the C compiler (src/, each folder of src/, inst/include)
# and the module cache gives NVRTC (inst/include)
src_dirs <- list.dirs(file.path(root, "src"), recursive = FALSE)
search <- c(file.path(root, "src"), src_dirs, file.path(root, "inst", "include"))
edges <- lapply(files, function(f) {
  inc <- regmatches(readLines(f, warn = FALSE),
                    regexpr('^\\s*#\\s*include\\s*"[^"]+"', readLines(f, warn = FALSE)))
  inc <- sub('^\\s*#\\s*include\\s*"([^"]+)"', "\\1", inc)
  tgt <- vapply(inc, function(i) {
    cand <- key(file.path(c(dirname(f), search), i))
    hit <- cand[cand %in% nodes]
    if (length(hit)) hit[1L] else NA_character_
  }, "")
  unname(tgt[!is.na(tgt)])
})
# modules: x.c and x.h are one node
module <- function(p) sub("\\.(c|h|cu)$", "", p)
medges <- tapply(edges, module(nodes), function(l) unique(module(unlist(l))))
edges <- lapply(medges, function(t) t)
nodes <- names(edges)
for (m in nodes) edges[[m]] <- setdiff(edges[[m]], m)

# cycles by depth-first search (each reported once, from its smallest node)
cycles <- list()
visit <- function(start, node, path) {
  for (nx in edges[[node]]) {
    if (nx == start) {
      cyc <- c(path, start)
      if (start == min(path)) cycles[[length(cycles) + 1L]] <<- cyc
    } else if (!(nx %in% path) && nx > start) {
      visit(start, nx, c(path, nx))
    }
  }
}
for (s in nodes) visit(s, s, s)

rel <- function(p) sub(paste0("^", normalizePath(root), "/"), "", p)
status <- 0L
if (length(cycles)) {
  status <- 1L
  cat("include cycles (modules: a .c file with its .h):\n")
  for (cy in cycles) cat("  ", paste(rel(cy), collapse = " -> "), "\n")
} else cat("include cycles: none\n")

# calls between object files, where there are any
objs <- list.files(file.path(root, "src"), pattern = "\\.o$", full.names = TRUE,
                   recursive = TRUE)
if (length(objs)) {
  def <- lapply(objs, function(o) {
    out <- suppressWarnings(system2("nm", c("-g", "--defined-only", shQuote(o)), stdout = TRUE))
    sub("^\\S+\\s+\\S+\\s+", "", out)
  })
  und <- lapply(objs, function(o) {
    out <- suppressWarnings(system2("nm", c("-u", shQuote(o)), stdout = TRUE))
    sub("^\\s*U\\s+", "", out)
  })
  mod <- sub("\\.o$", "", basename(objs))
  owner <- setNames(rep(mod, lengths(def)), unlist(def))
  edges <- setNames(lapply(seq_along(objs), function(i) {
    t <- unique(owner[und[[i]][und[[i]] %in% names(owner)]])
    setdiff(t, mod[i])
  }), mod)
  nodes <- mod
  cycles <- list()
  for (s in nodes) visit(s, s, s)
  if (length(cycles)) {
    status <- 1L
    cat("call cycles between object files:\n")
    for (cy in cycles) cat("  ", paste(cy, collapse = " -> "), "\n")
  } else cat(sprintf("call cycles between object files: none (%d files)\n", length(objs)))
} else cat("call cycles between object files: not checked (no object files in src/)\n")

len <- vapply(files, function(f) length(readLines(f, warn = FALSE)), 0L)
long <- len[len > 900]
if (length(long)) {
  status <- 1L
  cat("files over 900 lines:\n")
  for (f in names(long)) cat(sprintf("  %s: %d\n", rel(key(f)), long[[f]]))
} else cat(sprintf("files over 900 lines: none (%d files)\n", length(files)))
cat(sprintf("largest file: %s (%d lines)\n", rel(key(names(which.max(len)))), max(len)))
quit(status = status)
