/* setup_stats.h -- the passes over every row that the model setup needs
 * before a fit (R/setup.R, R/gam_gpu.R), in pure C over threads: a numeric
 * column's minimum, median and maximum as mgcv's variable summary takes
 * them, the first extremes that mgcv's mini.mf() looks for, and the
 * checks of the response, weights and offset in one pass.  Each
 * result is the same for any thread count. */
#ifndef GAMGPU_SETUP_STATS_H
#define GAMGPU_SETUP_STATS_H

#include <stddef.h>

/* Of x[0 .. n-1] without its NaNs (R's NA and NaN), the count of values
 * (*nvalid), the first minimum and maximum as R's min() and max() find
 * them, and the k-th smallest value for the k that quantile(type = 3,
 * probs = 0.5) takes: the median of mgcv's variable.summary().  The order
 * statistic is exact: from 2^20 rows, selected among the values that a
 * bracket drawn on an evenly spaced sample of 65536 rows gathers in one
 * pass (which also takes the count, min and max); with fewer rows, or
 * where the sample misleads, by radix selection on the values'
 * order-preserving bit keys (passes of 16 bits).  The sign of a zero
 * median is not R's for certain (-0 and +0 compare equal, or -0 sorts
 * first): a caller who needs it must redo it.
 * With no valid value, *nvalid = 0 and nothing else is set.  Returns 0, or
 * -1 when there was no memory (nothing set). */
int gg_column_summary(const double *x, size_t n, int nthreads, size_t *nvalid,
                      double *min, double *median, double *max);

/* Of x[0 .. n-1]: the count of NaNs (R's NA and NaN), and the 0-based
 * index of the first minimum and of the first maximum among the other
 * values, as which.min() and which.max() give them (n when there is no
 * such value).  Returns 0, or -1 when there was no memory (nothing set). */
int gg_column_extremes(const double *x, size_t n, int nthreads, size_t *nnan,
                       size_t *imin, size_t *imax);
/* The count of NaNs alone (anyNA() over threads). */
int gg_count_nan(const double *x, size_t n, int nthreads, size_t *nnan);

/* For each of m distinct values (v, ascending, no NaN) the first row i
 * (0-based) with x[i] == v[j] -- R's match(v, x) -- into first[j], n (no
 * such row) where none; x as doubles (xd) or ints (xi, the other NULL;
 * INT_MIN, R's NA_integer_, matches nothing),
 * over nthreads threads, each row one probe of a hash table of the values.
 * Returns 0, or -1 when out of memory (nothing written). */
int gg_first_rows(const double *xd, const int *xi, size_t n, const double *v, size_t m,
                  int nthreads, size_t *first);

/* var(x) for n >= 2 finite values as R's cov.c takes it -- the mean in
 * long double with its correction pass, then the squared deviations in
 * long double, over n - 1 -- in blocks of rows over nthreads threads, the
 * blocks' sums added in row order (so the result does not depend on the
 * thread count; it is R's to rounding, the sums' order being another). */
double gg_column_variance(const double *x, size_t n, int nthreads);

/* x[0 .. n-1] = v over nthreads threads (rep(v, n) for n-row vectors made
 * in the setup, the prior weights and the offset: the first touch of a
 * fresh allocation's pages, spread over threads). */
void gg_fill(double *x, size_t n, double v, int nthreads);

/* What gam_gpu() checks of a response y, prior weights w and an offset
 * (n each; offset may be NULL, w NULL when every weight is 1), in one pass: flags as below, and the range
 * of y over its finite values (NaN when there is none).  Returns 0, or -1
 * when there was no memory (nothing set). */
typedef struct gg_row_checks {
    int w_bad;       /* some weight is not finite, or is negative */
    int w_positive;  /* some weight is > 0 */
    int w_not_one;   /* some weight is not 1 (all ones: a backend need not copy them) */
    int y_bad;       /* some response value is not finite */
    int o_nonzero;   /* some offset is not 0 (NaN included) */
    int o_bad;       /* some offset is not finite */
    double y_min, y_max;
} gg_row_checks;
int gg_check_rows(const double *y, const double *w, const double *offset, size_t n,
                  int nthreads, gg_row_checks *out);

/* What mgcv's smoothCon() takes of a smooth's raw basis X (n x k,
 * column-major) on every row, with X's columns first divided by scale[j]:
 * with rms_scale, scale[j] = sqrt(sum_i X_ij^2 / n) (construct_tprs's
 * last step for a thin plate basis; written to scale), else 1; mean[j] =
 * colMeans of the scaled X (the centring constraint), *rowmax = the
 * largest sum_j |X_ij / scale_j| over rows (norm(X, "I"), summed over j in
 * LAPACK's order) and *imax its first row (0-based).  Sums in long double
 * in fixed blocks of rows over the thread budget (gg_threads_set_limit):
 * the same for any thread count.  Returns 0, or
 * -1 when there was no memory. */
int gg_basis_stats(const double *X, size_t n, int k, int rms_scale,
                   double *scale, double *mean, double *rowmax, size_t *imax);

#endif
