# A t2() tensor product (mgcv's smooth.construct.t2.smooth.spec()) set up
# from facts of every row, for gam()'s bases on a few rows
# (R/basis_facts.R).  Beyond its margins' knots (cr_facts(), ps_facts()),
# all n rows enter a t2() object in three places: each margin's
# reparameterisation P (nat.param(type = 3), which takes the margin's
# basis on every row through its X'X, its column sums and n alone), the
# constraints (the product's column sums: the prediction constraint all
# of them, the fit constraint the penalty's null space's), and the
# penalties' scaling (norm(X, "I"), the row that attains it added to the
# mini frame as for any smooth).  Each is computed here on every row --
# X'X as the column means of the margin's row tensor product with itself,
# reduced on the device for a GPU fit -- and mgcv's constructor runs on
# stand-in rows for the rest, which reads no row.

# The facts of t2 spec s of one-variable cr and ps margins: list(sm, rms,
# t2, n): sm is mgcv's object with every row's knots and reparameterisation
# (its X is not used); NULL where the route does not apply.
t2_facts <- function(s, mf, knots, threads = 1L, dev = NULL) {
  n <- nrow(mf)
  kn <- list()
  cols <- list()
  P <- vector("list", length(s$margin))
  for (j in seq_along(s$margin)) {
    v <- s$margin[[j]]$term
    f <- margin_facts(s$margin[[j]], mf, knots, threads)
    if (is.null(f) || length(f$sm$S) != 1L) return(NULL)
    if (!is.null(f$knots)) kn[[v]] <- f$knots
    cols[[v]] <- f$rows
    g <- margin_gram(f$sm, mf, n, threads, dev)
    if (is.null(g)) return(NULL)
    P[[j]] <- nat_param_gram(g$XtX, g$colsum, n, f$sm$S[[1L]], f$sm$rank)
  }
  sm <- construct_on_stand_ins(s, cols, kn)
  if (is.null(sm) || !inherits(sm, "t2.smooth") || length(sm$P) != length(P)) return(NULL)
  for (j in seq_along(P))
    if (!identical(dim(sm$P[[j]]), dim(P[[j]]))) return(NULL)
  sm$P <- P
  list(sm = sm, rms = FALSE, t2 = TRUE, n = n)
}

# X'X and the column sums of margin m's raw basis over the n rows of mf:
# the column means of its row tensor product with itself and of itself,
# from their recipes (on the device for a GPU fit, where only the means
# come back).  NULL where the margin has no recipe.
margin_gram <- function(m, mf, n, threads, dev = NULL) {
  codes <- new.env(parent = emptyenv())
  codes$tp1_table <- FALSE
  r <- margin_recipe(m, mf, threads, codes)
  if (inherits(r, "gg_no_recipe")) return(NULL)
  if (is.null(r$drop)) r$drop <- 0L
  k <- recipe_columns(r)
  if (is.null(dev)) dev <- c(0L, 0L)
  means <- function(margins) {
    b <- list(kind = 4L, k = as.integer(k^length(margins)), margins = margins, drop = 0L,
              shift = NULL, Z = NULL, col0 = 1L, ncol = as.integer(k^length(margins)))
    plan <- list(n = n, p = b$k, threads = as.integer(threads),
                 tensor_cores = tensor_cores_option(), blocks = list(b))
    .Call(gg_xplan_stats_device_r, plan, FALSE, dev[1L], dev[2L])$mean
  }
  XtX <- matrix(means(list(r, r)), k, k) * n
  list(XtX = (XtX + t(XtX)) / 2, colsum = means(list(r)) * n)
}

# mgcv's nat.param(X, S, rank, type = 3, unit.fnorm = TRUE)$P, from X's
# X'X (XtX), column sums and rows n: where nat.param() reads X, it reads
# only these -- the columns' squared norms (colSums((X V)^2) = diag(V' X'X
# V)), the centred null space's cross products (Xn'Xn - Xn'1 1'Xn / n) and
# the blocks' mean squares.  Its steps, in its order.
nat_param_gram <- function(XtX, colsum, n, S, rank = NULL) {
  er <- eigen(S, symmetric = TRUE)
  k <- ncol(S)
  if (is.null(rank) || rank < 1 || rank > k) rank <- sum(er$values > max(er$values) * .Machine$double.eps^.8)
  null.exists <- rank < k
  E <- rep(1, k)
  E[1:rank] <- sqrt(er$values[1:rank])
  col.norm <- diag(crossprod(er$vectors, XtX %*% er$vectors)) / E^2
  av.norm <- mean(col.norm[1:rank])
  if (null.exists) for (i in (rank + 1):k) E[i] <- sqrt(col.norm[i] / av.norm)
  P <- t(t(er$vectors) / E)
  gram <- function(P) crossprod(P, XtX %*% P)          # (X P)'(X P)
  if (null.exists && rank < k - 1) {
    ind <- (rank + 1):k
    rind <- k:(rank + 1)
    sn <- drop(crossprod(P[, ind, drop = FALSE], colsum))
    um <- eigen(gram(P[, ind, drop = FALSE]) - tcrossprod(sn) / n, symmetric = TRUE)
    P[, rind] <- P[, ind, drop = FALSE] %*% um$vectors
  }
  # (unit.fnorm: mean(X[, ind]^2) is the trace of the block's X'X over its
  # n x length(ind) entries; nat.param() scales X's columns, and P's rows
  # by the same factors: Px is the map of X's columns)
  Px <- P
  blocks <- list(1:rank)
  if (null.exists) blocks[[2L]] <- (rank + 1):k
  for (ind in blocks) {
    scale <- 1 / sqrt(sum(diag(gram(Px[, ind, drop = FALSE]))) / (n * length(ind)))
    Px[, ind] <- Px[, ind] * scale
    P[ind, ] <- P[ind, ] * scale
  }
  P
}

# smoothCon()'s constraints of a t2() object whose X is on a few rows,
# from its raw columns' means over every row (colmean): the prediction
# constraint Cp their sums; the fit constraint C, where it is a row, their
# sums on the penalty's null space (its last columns), as the constructor
# makes them (a set-to-zero C, one column's index, reads no row).
t2_constraints <- function(sm, colmean, n) {
  if (is.matrix(sm$C) && nrow(sm$C) == 0L) return(sm)
  k <- ncol(sm$X)
  nup <- k - sm$null.space.dim
  if (is.matrix(sm$C)) sm$C <- matrix(c(rep(0, nup), colmean[(nup + 1):k] * n), 1L, k)
  if (!is.null(sm$Cp)) sm$Cp <- matrix(colmean * n, 1L, k)
  sm
}
