/* setup_r.c -- R glue of the setup's passes over every row (setup_stats.c):
 * the variable summary's min, median and max of a numeric column
 * (lean_variable_summary() in R/setup.R) and gam_gpu()'s checks of the
 * response and weights, and rep(v, n) for the n-row vectors it makes; and
 * of order_stats.c's steps of that median over a cluster's shards and
 * shard_sums.c's sums over a shard's rows. */
#include <R.h>
#include <Rinternals.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "errors_r.h"
#include "sexp_r.h"
#include "setup_r.h"
#include "order_stats.h"
#include "shard_sums.h"
#include "setup_stats.h"
#include "sorted_unique.h"
#include "threads.h"

/* The threads a pass may use; also the budget's limit (threads.h) while
 * it runs. */
static int threads_arg(SEXP nthreads)
{
    return gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
}

/* var(x) of a double vector of at least 2 finite values, over threads
 * (gg_column_variance: R's to rounding). */
SEXP gg_variance_r(SEXP x, SEXP nthreads)
{
    if (!Rf_isReal(x) || XLENGTH(x) < 2)
        gg_abort("gamgpu_bad_input", "x must be a double vector of 2 or more values");
    const int nt = threads_arg(nthreads), prev = gg_threads_set_limit(nt);
    const double v = gg_column_variance(REAL(x), (size_t) XLENGTH(x), nt);
    gg_threads_set_limit(prev);
    return Rf_ScalarReal(v);
}

/* rep(value, n) as a double vector, filled over nthreads threads. */
SEXP gg_fill_r(SEXP n_, SEXP value, SEXP nthreads)
{
    const double n = gg_as_real(n_, "n", 0, (double) R_XLEN_T_MAX, "gamgpu_bad_input");
    const double v = gg_as_real(value, "value", -DBL_MAX, DBL_MAX, "gamgpu_bad_input");
    if (n != floor(n)) gg_abort("gamgpu_bad_input", "n must be a whole number");
    const int nt = threads_arg(nthreads);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    const int prev = gg_threads_set_limit(nt);
    gg_fill(REAL(out), (size_t) n, v, nt);
    gg_threads_set_limit(prev);
    UNPROTECT(1);
    return out;
}

/* c(count of non-missing values, min, median, max); NA for the last three
 * when there is no such value. */
SEXP gg_column_summary_r(SEXP x, SEXP nthreads)
{
    if (!Rf_isReal(x)) gg_abort("gamgpu_bad_input", "x must be a double vector");
    size_t m = 0;
    double lo = NA_REAL, med = NA_REAL, hi = NA_REAL;
    const int nt = threads_arg(nthreads), prev = gg_threads_set_limit(nt);
    const int rc = gg_column_summary(REAL(x), (size_t) XLENGTH(x), nt, &m, &lo, &med, &hi);
    gg_threads_set_limit(prev);
    if (rc != 0)
        gg_abort("gamgpu_host_oom", "no memory for the column summary");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 4));
    REAL(out)[0] = (double) m;
    REAL(out)[1] = m ? lo : NA_REAL;
    REAL(out)[2] = m ? med : NA_REAL;
    REAL(out)[3] = m ? hi : NA_REAL;
    UNPROTECT(1);
    return out;
}

/* c(count of missing values, which.min, which.max): 1-based indices, NA
 * when every value is missing; with count_only TRUE the count alone (the
 * indices NA). */
SEXP gg_column_extremes_r(SEXP x, SEXP count_only, SEXP nthreads)
{
    if (!Rf_isReal(x)) gg_abort("gamgpu_bad_input", "x must be a double vector");
    const size_t n = (size_t) XLENGTH(x);
    size_t na = 0, lo = n, hi = n;
    const int count = Rf_asLogical(count_only) == TRUE;
    const int nt = threads_arg(nthreads), prev = gg_threads_set_limit(nt);
    const int rc = count ? gg_count_nan(REAL(x), n, nt, &na)
                         : gg_column_extremes(REAL(x), n, nt, &na, &lo, &hi);
    gg_threads_set_limit(prev);
    if (rc != 0) gg_abort("gamgpu_host_oom", "no memory for the column extremes");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 3));
    REAL(out)[0] = (double) na;
    REAL(out)[1] = lo < n ? (double) lo + 1 : NA_REAL;
    REAL(out)[2] = hi < n ? (double) hi + 1 : NA_REAL;
    UNPROTECT(1);
    return out;
}

/* y a double vector; w NULL (every prior weight 1) or one as long */
static void check_y_w(SEXP y, SEXP w)
{
    if (!Rf_isReal(y) || (w != R_NilValue && (!Rf_isReal(w) || XLENGTH(y) != XLENGTH(w))))
        gg_abort("gamgpu_bad_input", "y and w must be double vectors of one length (w NULL: all 1)");
}

static const double *w_or_null(SEXP w) { return w == R_NilValue ? NULL : REAL(w); }

/* c(w_bad, w_positive, w_not_one, y_bad, o_nonzero, o_bad, y_min, y_max), named: the
 * flags as 0/1 (see gg_row_checks), the range of the finite responses (NA
 * when none).  offset is NULL or a double vector as long as y. */
SEXP gg_check_rows_r(SEXP y, SEXP w, SEXP offset, SEXP nthreads)
{
    check_y_w(y, w);
    if (offset != R_NilValue && (!Rf_isReal(offset) || XLENGTH(offset) != XLENGTH(y)))
        gg_abort("gamgpu_bad_input", "the offset must be NULL or a double vector as long as y");
    gg_row_checks r;
    const int nt = threads_arg(nthreads), prev = gg_threads_set_limit(nt);
    const int rc = gg_check_rows(REAL(y), w_or_null(w), offset == R_NilValue ? NULL : REAL(offset),
                                 (size_t) XLENGTH(y), nt, &r);
    gg_threads_set_limit(prev);
    if (rc != 0)
        gg_abort("gamgpu_host_oom", "no memory for the checks of the response");
    const char *names[] = {"w_bad", "w_positive", "w_not_one", "y_bad", "o_nonzero", "o_bad",
                           "y_min", "y_max"};
    const double v[] = {r.w_bad, r.w_positive, r.w_not_one, r.y_bad, r.o_nonzero, r.o_bad,
                        ISNAN(r.y_min) ? NA_REAL : r.y_min,
                        ISNAN(r.y_max) ? NA_REAL : r.y_max};
    return gg_named_doubles(8, names, v);
}

/* list(scale, mean, rowmax, imax) of gg_basis_stats() for X (n x k double
 * matrix); imax 1-based. */
SEXP gg_basis_stats_r(SEXP X, SEXP rms_scale, SEXP nthreads)
{
    if (!Rf_isMatrix(X) || TYPEOF(X) != REALSXP)
        gg_abort("gamgpu_bad_input", "X must be a double matrix");
    const size_t n = (size_t) Rf_nrows(X);
    const int k = Rf_ncols(X);
    if (n < 1 || k < 1) gg_abort("gamgpu_bad_input", "X must have rows and columns");
    const int nt = threads_arg(nthreads), prev = gg_threads_set_limit(nt);
    SEXP scale = PROTECT(Rf_allocVector(REALSXP, k));
    SEXP mean = PROTECT(Rf_allocVector(REALSXP, k));
    double rowmax;
    size_t imax;
    const int rc = gg_basis_stats(REAL(X), n, k, Rf_asLogical(rms_scale) == TRUE,
                                  REAL(scale), REAL(mean), &rowmax, &imax);
    gg_threads_set_limit(prev);
    if (rc != 0) gg_abort("gamgpu_host_oom", "no memory for the basis statistics");
    UNPROTECT(2);
    return gg_basis_stats_list(scale, mean, rowmax, imax);
}

/* list(scale, mean, rowmax, imax) of gg_basis_stats()'s results, imax made
 * 1-based (also basis_r.c's device statistics). */
SEXP gg_basis_stats_list(SEXP scale, SEXP mean, double rowmax, size_t imax)
{
    PROTECT(scale);
    PROTECT(mean);
    const char *names[] = {"scale", "mean", "rowmax", "imax"};
    SEXP out = PROTECT(gg_named_list(4, names));
    SET_VECTOR_ELT(out, 0, scale);
    SET_VECTOR_ELT(out, 1, mean);
    SET_VECTOR_ELT(out, 2, Rf_ScalarReal(rowmax));
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal((double) imax + 1));
    UNPROTECT(3);
    return out;
}

/* match(v, x) for distinct values v without NA or NaN (doubles, or ints
 * for an integer x): the first row of x holding each value, 1-based, as
 * doubles (rows beyond INT_MAX), NA where none. */
SEXP gg_first_rows_r(SEXP x, SEXP v, SEXP nthreads)
{
    if (!(Rf_isReal(x) || (TYPEOF(x) == INTSXP && !Rf_isFactor(x))) ||
        !(Rf_isReal(v) || TYPEOF(v) == INTSXP))
        gg_abort("gamgpu_bad_input", "x and v must be double or integer vectors");
    const size_t n = (size_t) XLENGTH(x), m = (size_t) XLENGTH(v);
    double *vs = (double *) R_alloc(m ? m : 1, sizeof(double));
    int *ord = (int *) R_alloc(m ? m : 1, sizeof(int));
    for (size_t c = 0; c < m; c++) {
        vs[c] = Rf_isReal(v) ? REAL(v)[c]
                : (INTEGER(v)[c] == NA_INTEGER ? NA_REAL : (double) INTEGER(v)[c]);
        if (ISNAN(vs[c])) gg_abort("gamgpu_bad_input", "v must not have NA or NaN values");
        ord[c] = (int) c;
    }
    rsort_with_index(vs, ord, (int) m);
    for (size_t c = 1; c < m; c++)
        if (vs[c] == vs[c - 1]) gg_abort("gamgpu_bad_input", "v must have distinct values");
    size_t *first = (size_t *) R_alloc(m ? m : 1, sizeof(size_t));
    const int nt = threads_arg(nthreads), prev = gg_threads_set_limit(nt);
    const int rc = gg_first_rows(Rf_isReal(x) ? REAL(x) : NULL,
                                 Rf_isReal(x) ? NULL : INTEGER(x), n, vs, m, nt, first);
    gg_threads_set_limit(prev);
    if (rc != 0) gg_abort("gamgpu_host_oom", "no memory for the rows' search");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) m));
    for (size_t c = 0; c < m; c++)
        REAL(out)[ord[c]] = first[c] < n ? (double) first[c] + 1 : NA_REAL;
    UNPROTECT(1);
    return out;
}

/* sort(unique(x)) of each double vector x of list xs (no NA or NaN), side
 * by side over up to nthreads threads (one job per vector; one vector has
 * them all): a list of the results. */
SEXP gg_sorted_unique_list_r(SEXP xs, SEXP nthreads)
{
    if (!Rf_isNewList(xs)) gg_abort("gamgpu_bad_input", "xs must be a list of double vectors");
    const int nt = threads_arg(nthreads);
    const int m = (int) XLENGTH(xs);
    const double **x = (const double **) R_alloc((size_t) m + 1, sizeof *x);
    double **buf = (double **) R_alloc((size_t) m + 1, sizeof *buf);
    size_t *n = (size_t *) R_alloc((size_t) m + 1, sizeof *n);
    size_t *nu = (size_t *) R_alloc((size_t) m + 1, sizeof *nu);
    SEXP bufs = PROTECT(Rf_allocVector(VECSXP, m));
    for (int j = 0; j < m; j++) {
        SEXP v = VECTOR_ELT(xs, j);
        if (!Rf_isReal(v)) gg_abort("gamgpu_bad_input", "xs must be a list of double vectors");
        n[j] = (size_t) XLENGTH(v);
        x[j] = REAL(v);
        for (size_t i = 0; i < n[j]; i++)
            if (ISNAN(x[j][i]))
                gg_abort("gamgpu_bad_input", "x must not have NA or NaN values");
        SET_VECTOR_ELT(bufs, j, Rf_allocVector(REALSXP, (R_xlen_t) n[j]));
        buf[j] = REAL(VECTOR_ELT(bufs, j));
    }
    const int prev = gg_threads_set_limit(nt);
    const int rc = gg_sorted_unique_many(m, x, n, buf, nu);
    gg_threads_set_limit(prev);
    if (rc != 0)
        gg_abort("gamgpu_host_oom", "no memory for the distinct values");
    SEXP out = PROTECT(Rf_allocVector(VECSXP, m));
    for (int j = 0; j < m; j++) {
        SET_VECTOR_ELT(out, j, Rf_allocVector(REALSXP, (R_xlen_t) nu[j]));
        memcpy(REAL(VECTOR_ELT(out, j)), buf[j], nu[j] * sizeof(double));
    }
    UNPROTECT(2);
    return out;
}

/* For each pivot p[j] (doubles): c(#{x < p[j]}, #{x <= p[j]}), j in order,
 * x a double vector. */
SEXP gg_count_pivots_r(SEXP x, SEXP p)
{
    if (!Rf_isReal(x) || !Rf_isReal(p))
        gg_abort("gamgpu_bad_input", "x and the pivots must be double vectors");
    const int m = (int) XLENGTH(p);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 2 * (R_xlen_t) m));
    double *lt = (double *) R_alloc((size_t) m + 1, sizeof(double));
    double *le = (double *) R_alloc((size_t) m + 1, sizeof(double));
    gg_count_pivots(REAL(x), (size_t) XLENGTH(x), REAL(p), m, lt, le);
    for (int j = 0; j < m; j++) {
        REAL(out)[2 * j] = lt[j];
        REAL(out)[2 * j + 1] = le[j];
    }
    UNPROTECT(1);
    return out;
}

/* A shard's response sums (shard_sums.h): c(rows, sy, syy, swy, sw,
 * nonzero) for y and w, double vectors of one length (w NULL: all 1). */
SEXP gg_response_sums_r(SEXP y, SEXP w)
{
    check_y_w(y, w);
    const char *names[] = {"rows", "sy", "syy", "swy", "sw", "nonzero"};
    double v[6];
    gg_response_sums(REAL(y), w_or_null(w), (size_t) XLENGTH(y), v);
    return gg_named_doubles(6, names, v);
}

/* r.sq's sums over a shard (shard_sums.h): y, mu, w double vectors of
 * one length (w NULL: all 1), mean_y a number. */
SEXP gg_rsq_sums_r(SEXP y, SEXP mu, SEXP w, SEXP mean_y)
{
    check_y_w(y, w);
    if (!Rf_isReal(mu) || XLENGTH(mu) != XLENGTH(y))
        gg_abort("gamgpu_bad_input", "y, mu and w must be double vectors of one length");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 5));
    gg_rsq_sums(REAL(y), REAL(mu), w_or_null(w), Rf_asReal(mean_y), (size_t) XLENGTH(y), REAL(out));
    UNPROTECT(1);
    return out;
}

/* x's values strictly between lo and hi, in row order. */
SEXP gg_values_between_r(SEXP x, SEXP lo, SEXP hi)
{
    if (!Rf_isReal(x)) gg_abort("gamgpu_bad_input", "x must be a double vector");
    const double a = Rf_asReal(lo), b = Rf_asReal(hi);
    const size_t n = (size_t) XLENGTH(x);
    const size_t k = gg_values_between(REAL(x), n, a, b, NULL);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) k));
    gg_values_between(REAL(x), n, a, b, REAL(out));
    UNPROTECT(1);
    return out;
}
