# The weighted Gram product, the first kernel through the device path.

#' Weighted Gram product X'WX on the GPU or the CPU
#'
#' Computes `crossprod(X, w * X)` and, when `z` is given, `crossprod(X, w *
#' z)` and `sum(w * z^2)` -- the normal equations of weighted least squares
#' and the row-wise core of every penalized IRLS step. On the device the
#' product is tiled over rows and reduced in a fixed order (so repeated
#' calls give identical results); on the CPU it is R's BLAS over row chunks,
#' or gamgpu's own blocked kernel as `options(gamgpu.cpu_gram)` asks (see
#' [gpu_info()]).
#'
#' @param X A numeric matrix (n x p).
#' @param w Row weights (length n), or `NULL` for unit weights.
#' @param z A working response (length n), or `NULL`.
#' @param device The device policy, see [gpu_policy()].
#' @return A list: `XtWX` (p x p), `XtWz` (length p, or empty without `z`),
#'   `zWz`, `device` (`"cuda:0"` or `"cpu"`, the path that ran) and
#'   `fallback` (why the CPU ran when the device was wanted, else `""`).
#' @examples
#' X <- cbind(1, matrix(rnorm(2000), 1000))
#' w <- runif(1000)
#' g <- gpu_gram(X, w, z = rnorm(1000))
#' all.equal(g$XtWX, crossprod(X, w * X))
#' g$device
#' @export
gpu_gram <- function(X, w = NULL, z = NULL, device = gpu_policy()) {
  cpu_gram_option()
  if (!is.matrix(X) || !is.numeric(X))
    gamgpu_abort("gamgpu_bad_input", "X must be a numeric matrix", call = NULL)
  storage.mode(X) <- "double"
  n <- nrow(X)
  check_rows <- function(v, what) {
    if (is.null(v)) return(NULL)
    if (!is.numeric(v) || length(v) != n)
      gamgpu_abort("gamgpu_bad_input",
                   sprintf("%s must be numeric with one value per row of X (%d)", what, n),
                   call = NULL)
    as.double(v)
  }
  w <- check_rows(w, "w")
  z <- check_rows(z, "z")
  if (anyNA(X) || (!is.null(w) && anyNA(w)) || (!is.null(z) && anyNA(z)))
    gamgpu_abort("gamgpu_bad_input", "X, w and z must not contain NA", call = NULL)
  plan <- device_plan(device, "gram")
  .Call(gg_gram_r, X, w, z, plan$mode, plan$ordinal)
}
