# mgcv::uniquecombs(x, ordered = TRUE) for a numeric matrix of two or more
# columns, as gam()'s thin plate and Gaussian process set-ups call it on
# every row to find the distinct covariate points they draw knots from.
# uniquecombs() pastes each row's numbers into one string,
# paste0(x[, 1], "*", x[, 2], ...), keeps the first row of each string and
# sorts the strings in the C locale: 9 s at 10^6 rows of two columns, most
# of it turning 2 x 10^6 numbers into text in one thread.
#
# The same result from each column's distinct values alone: a number's
# text is as.character()'s, a function of the number, so two rows have the
# same string exactly when their columns' texts agree; and since "*" sorts
# below every character of a number's text (digits, ".", "-", "+", "e",
# "NaN", "Inf"), the pasted strings sort as the tuples of their columns'
# texts do, each text ranked by itself (a text that is a prefix of another
# sorts first either way).  So each column's distinct numbers (sorted in C)
# are turned into text -- by R itself, as uniquecombs() does, in forked
# workers where there are cores for them -- and ranked, and the rows are
# ordered by their columns' ranks (a stable radix order: each group's
# first row comes first).  The rows, their order and the index are
# uniquecombs()'s to the bit (tests/testthat/test-setup-distinct-rows.R).

# The distinct rows of numeric matrix x (d > 1 columns, no missing
# values) in uniquecombs(x, TRUE)'s order, with its attr "index" (each
# row's distinct row).
distinct_rows <- function(x, threads = 1L, cores = 1L) {
  n <- nrow(x)
  d <- ncol(x)
  ranks <- vector("list", d)
  for (j in seq_len(d)) {
    su <- .Call(gg_sorted_unique_list_r, list(x[, j]), as.integer(threads))[[1L]]
    txt <- number_text(su, cores)
    ut <- sort(unique(txt), method = "radix")
    # (a value's position among the sorted distinct values: findInterval()
    # finds the value itself, every value of the column being one of them)
    ranks[[j]] <- match(txt, ut)[findInterval(x[, j], su)]
  }
  o <- do.call(order, c(unname(ranks), list(method = "radix")))
  first <- rep(FALSE, n)
  if (n) first[1L] <- TRUE
  if (n > 1L) {
    for (j in seq_len(d)) {
      r <- ranks[[j]][o]
      first[-1L] <- first[-1L] | r[-1L] != r[-n]
    }
  }
  group <- cumsum(first)
  index <- integer(n)
  index[o] <- group
  xu <- x[o[first], , drop = FALSE]
  attr(xu, "index") <- index
  xu
}

# as.character() of numbers (what paste0() makes of them), in forked
# workers when cores > 1 (R's text, each worker's strings made in full).
number_text <- function(v, cores = 1L) {
  if (cores <= 1L || length(v) < 2e5 || .Platform$OS.type != "unix") return(paste0(v))
  parts <- split(seq_along(v), cut(seq_along(v), cores, labels = FALSE))
  txt <- parallel::mclapply(parts, function(ix) paste0(v[ix]), mc.cores = cores,
                            mc.preschedule = TRUE)
  if (!all(vapply(txt, is.character, NA))) return(paste0(v))
  unlist(txt, use.names = FALSE)
}
