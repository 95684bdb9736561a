# tools/ls_rows_from_r.R -- the C of a location-scale family's rows from
# mgcv's R (inst/include/ls_math.h's gg_ls_gevlss_row() was made so): the
# statements of the family's ll() body from its parameters' values to its
# fourth derivatives, one R vector expression per row's scalar, x^y as
# R's (gg_fm_rpow), `if (deriv > k)` as the rows' order, l1[, j] <- e as
# l1[j - 1] = e.  Prints the C (declarations, then statements), whose long
# lines the maintainer wraps; a statement it does not know stops it.
#
#   Rscript tools/ls_rows_from_r.R gevlss 9 27
suppressMessages(library(mgcv))
args <- commandArgs(trailingOnly = TRUE)
fam <- get(args[1], asNamespace("mgcv"))()
b <- body(fam$ll)
from <- as.integer(args[2])
to <- as.integer(args[3])

num <- function(x) {
  s <- as.character(x)
  if (as.numeric(s) != x) s <- trimws(formatC(x, digits = 17, format = "g"))
  if (!grepl("[.eE]", s)) s <- paste0(s, ".0")
  s
}
cname <- function(s) gsub(".", "_", s, fixed = TRUE)
ex <- function(e) {
  if (is.numeric(e)) return(num(e))
  if (is.symbol(e)) return(cname(as.character(e)))
  f <- as.character(e[[1]])
  a <- as.list(e)[-1]
  switch(f,
    "(" = paste0("(", ex(a[[1]]), ")"),
    "+" = if (length(a) == 1) paste0("+", ex(a[[1]])) else paste(ex(a[[1]]), "+", ex(a[[2]])),
    "-" = if (length(a) == 1) paste0("-", ex(a[[1]])) else paste(ex(a[[1]]), "-", ex(a[[2]])),
    "*" = paste(ex(a[[1]]), "*", ex(a[[2]])),
    "/" = paste(ex(a[[1]]), "/", ex(a[[2]])),
    "^" = paste0("gg_fm_rpow(", ex(a[[1]]), ", ", ex(a[[2]]), ")"),
    "log" = , "log1p" = , "exp" = paste0(f, "(", ex(a[[1]]), ")"),
    stop("no C for a call of ", f))
}
vars <- character()
out <- character()
emit <- function(s, ind) out <<- c(out, paste0(strrep("    ", ind), s))
skip <- c("n", "l1", "l2", "l3", "l4", "ind", "l", "ig1", "g2", "g3", "g4")
stmt <- function(s, ind) {
  if (is.call(s) && identical(s[[1]], as.name("{"))) {
    for (x in as.list(s)[-1]) stmt(x, ind)
    return(invisible())
  }
  if (is.call(s) && identical(s[[1]], as.name("if"))) {
    cond <- deparse(s[[2]])
    if (grepl("^FALSE", cond)) return(invisible())          # (dead branches)
    lev <- c("deriv > 0" = "order >= 1", "deriv > 1" = "order >= 2",
             "deriv > 3" = "order >= 4")[cond]
    if (is.na(lev)) stop("no C for if (", cond, ")")
    emit(paste0("if (", lev, ") {"), ind)
    stmt(s[[3]], ind + 1)
    emit("}", ind)
    return(invisible())
  }
  if (!(is.call(s) && as.character(s[[1]]) %in% c("<-", "="))) stop("no C for ", deparse(s)[1])
  lhs <- s[[2]]
  rhs <- s[[3]]
  if (is.call(lhs) && identical(lhs[[1]], as.name("["))) {
    tgt <- as.character(lhs[[2]])
    if (length(lhs) == 3) {                                  # (a clamp: v[cond] <- value)
      emit(sprintf("if (%s) %s = %s;", gsub("&", "&&", deparse(lhs[[3]])), tgt, ex(rhs)), ind)
    } else {
      emit(sprintf("%s[%d] = %s;", tgt, as.integer(lhs[[4]]) - 1L, ex(rhs)), ind)
    }
    return(invisible())
  }
  nm <- as.character(lhs)
  if (nm %in% skip || (is.call(rhs) && as.character(rhs[[1]]) %in% c("matrix", "<-")))
    return(invisible())
  if (nm == "exp1") rhs <- quote(exp(1))
  vars <<- union(vars, cname(nm))
  emit(sprintf("%s = %s;", cname(nm), if (nm == "exp1") "exp(1.0)" else ex(rhs)), ind)
}
for (i in from:to) stmt(b[[i]], 1)
cat("    double ", paste(vars, collapse = ", "), ";\n", sep = "")
cat(out, sep = "\n")
