/* gamlss_r.c -- R glue of the location-scale families' products
 * (family_gamlss.c), gamgpu's gamlss.gH() for a model matrix
 * (R/general_family.R). */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>

#include "errors_r.h"
#include "family_gamlss.h"
#include "gamlss_r.h"
#include "interrupt_r.h"
#include "sexp_r.h"
#include "threads.h"

static const double *dmat(SEXP x, R_xlen_t rows, R_xlen_t cols, const char *what)
{
    if (!Rf_isReal(x) || XLENGTH(x) < rows * cols || (rows > 0 && XLENGTH(x) % rows != 0)) {
        char msg[160];
        snprintf(msg, sizeof msg, "the location-scale products' %s must be a double matrix of %lld rows",
                 what, (long long) rows);
        gg_abort("gamgpu_bad_input", msg);
    }
    return REAL(x);
}

/* 0-based copies of a 1-based index array of `len` entries in [1, hi] */
static const int *index0(SEXP x, R_xlen_t len, R_xlen_t hi, const char *what)
{
    if (!Rf_isInteger(x) || XLENGTH(x) != len) {
        char msg[160];
        snprintf(msg, sizeof msg, "the location-scale products' %s must be an integer array of %lld",
                 what, (long long) len);
        gg_abort("gamgpu_bad_input", msg);
    }
    int *out = (int *) R_alloc((size_t) (len > 0 ? len : 1), sizeof(int));
    for (R_xlen_t i = 0; i < len; i++) {
        const int v = INTEGER(x)[i];
        if (v == NA_INTEGER || v < 1 || v > hi) {
            char msg[160];
            snprintf(msg, sizeof msg, "the location-scale products' %s has an entry outside 1..%lld",
                     what, (long long) hi);
            gg_abort("gamgpu_bad_input", msg);
        }
        out[i] = v - 1;
    }
    return out;
}

/* X (n x p), jj (list of K integer vectors: the predictors' columns),
 * l1, l2, l3, l4 (n-row matrices) with i2, i3, i4 (integer arrays K^2,
 * K^3, K^4), d1b (p x M), d2b (p x M (M + 1) / 2), Hm (p x p), deriv (0,
 * 2, 3), nthreads: list(lb, lbb, d1H, trHid2H). */
SEXP gg_ls_gh_r(SEXP X, SEXP jj, SEXP l1, SEXP l2, SEXP i2, SEXP l3, SEXP i3, SEXP l4,
                SEXP i4, SEXP d1b, SEXP d2b, SEXP Hm, SEXP deriv_, SEXP nthreads)
{
    if (!Rf_isReal(X) || !Rf_isMatrix(X))
        gg_abort("gamgpu_bad_input", "the location-scale products' X must be a double matrix");
    SEXP dim = Rf_getAttrib(X, R_DimSymbol);
    const R_xlen_t n = INTEGER(dim)[0];
    const int p = INTEGER(dim)[1];
    const int deriv = gg_as_int(deriv_, "deriv", 0, 3, "gamgpu_bad_input");
    if (deriv == 1) gg_abort("gamgpu_bad_input", "deriv 1 of the location-scale products is mgcv's");
    if (TYPEOF(jj) != VECSXP || XLENGTH(jj) < 1 || XLENGTH(jj) > 64)
        gg_abort("gamgpu_bad_input", "jj must be a list of 1 to 64 index vectors");
    const int K = (int) XLENGTH(jj);
    const int **cols = (const int **) R_alloc((size_t) K, sizeof(int *));
    int *ncol = (int *) R_alloc((size_t) K, sizeof(int));
    for (int k = 0; k < K; k++) {
        SEXP c = VECTOR_ELT(jj, k);
        ncol[k] = (int) XLENGTH(c);
        cols[k] = index0(c, ncol[k], p, "jj");
    }
    const R_xlen_t K2 = (R_xlen_t) K * K, K3 = K2 * K, K4 = K3 * K;
    gg_ls_rows r = {REAL(X), (size_t) n, p, K, cols, ncol, NULL, NULL, NULL, NULL, NULL, NULL,
                    NULL};
    r.l1 = dmat(l1, n, K, "l1");
    r.l2 = dmat(l2, n, 1, "l2");
    r.i2 = index0(i2, K2, XLENGTH(l2) / (n > 0 ? n : 1), "i2");
    int M = 0;
    if (deriv >= 2) {
        r.l3 = dmat(l3, n, 1, "l3");
        r.i3 = index0(i3, K3, XLENGTH(l3) / (n > 0 ? n : 1), "i3");
        if (!Rf_isMatrix(d1b)) gg_abort("gamgpu_bad_input", "d1b must be a matrix");
        M = INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[1];
        if (INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[0] != p || !Rf_isReal(d1b))
            gg_abort("gamgpu_bad_input", "d1b must be a double matrix of p rows");
    }
    const int nhh = M * (M + 1) / 2;
    if (deriv >= 3) {
        r.l4 = dmat(l4, n, 1, "l4");
        r.i4 = index0(i4, K4, XLENGTH(l4) / (n > 0 ? n : 1), "i4");
        if (!Rf_isReal(d2b) || XLENGTH(d2b) != (R_xlen_t) p * nhh)
            gg_abort("gamgpu_bad_input", "d2b must be a double matrix of p x M (M + 1) / 2");
        if (!Rf_isReal(Hm) || XLENGTH(Hm) != (R_xlen_t) p * p)
            gg_abort("gamgpu_bad_input", "Hm must be a double p x p matrix");
    }
    const char *names[] = {"lb", "lbb", "d1H", "trHid2H"};
    SEXP out = PROTECT(gg_named_list(4, names));
    SEXP lb = PROTECT(Rf_allocVector(REALSXP, p));
    SEXP lbb = PROTECT(Rf_allocMatrix(REALSXP, p, p));
    SEXP d1H = PROTECT(deriv >= 2 ? Rf_alloc3DArray(REALSXP, p, p, M) : R_NilValue);
    SEXP tr = PROTECT(deriv >= 3 ? Rf_allocVector(REALSXP, nhh) : R_NilValue);
    gg_status st;
    gg_status_clear(&st);
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    gg_r_interrupt_arm();
    const int prev = gg_threads_set_limit(nt);
    int rc = gg_ls_gh(&r, deriv, deriv >= 2 ? REAL(d1b) : NULL, M,
                      deriv >= 3 ? REAL(d2b) : NULL, deriv >= 3 ? REAL(Hm) : NULL, REAL(lb),
                      REAL(lbb), deriv >= 2 ? REAL(d1H) : NULL, deriv >= 3 ? REAL(tr) : NULL, &st);
    gg_threads_set_limit(prev);
    if (gg_r_interrupt_disarm(rc, &st, "the location-scale family's products") != 0) gg_raise(&st);
    SET_VECTOR_ELT(out, 0, lb);
    SET_VECTOR_ELT(out, 1, lbb);
    SET_VECTOR_ELT(out, 2, d1H);
    SET_VECTOR_ELT(out, 3, tr);
    UNPROTECT(5);
    return out;
}
