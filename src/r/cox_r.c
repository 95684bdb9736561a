/* cox_r.c -- R glue of cox.ph()'s log partial likelihood (family_cox.c),
 * which the general-family route's ll() calls once per stratum
 * (R/general_family.R). */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>

#include "cox_r.h"
#include "errors_r.h"
#include "family_cox.h"
#include "interrupt_r.h"
#include "sexp_r.h"
#include "threads.h"

static const double *real_matrix(SEXP x, R_xlen_t rows, int cols, const char *what)
{
    if (!Rf_isReal(x) || XLENGTH(x) != rows * (R_xlen_t) cols) {
        char msg[160];
        snprintf(msg, sizeof msg, "cox.ph()'s %s must be a double matrix of %lld x %d",
                 what, (long long) rows, cols);
        gg_abort("gamgpu_bad_input", msg);
    }
    return REAL(x);
}

/* eta (n), X (n x p), grp and event (integer n), nt, level (-1, 0, 2, 3),
 * d1b (p x M), d2b (p x M (M + 1) / 2), W (p x p), nthreads: list(l, lb,
 * lbb, d1H, trHid2H): d1H at level 2, trHid2H at level 3, else NULL. */
SEXP gg_cox_ll_r(SEXP eta, SEXP X, SEXP grp, SEXP event, SEXP nt_, SEXP level_, SEXP d1b,
                 SEXP d2b, SEXP W, SEXP nthreads)
{
    if (!Rf_isReal(X) || !Rf_isMatrix(X))
        gg_abort("gamgpu_bad_input", "cox.ph()'s X must be a double matrix");
    SEXP dim = Rf_getAttrib(X, R_DimSymbol);
    const R_xlen_t n = INTEGER(dim)[0];
    const int p = INTEGER(dim)[1];
    real_matrix(eta, n, 1, "eta");
    if (!Rf_isInteger(grp) || XLENGTH(grp) != n || !Rf_isInteger(event) || XLENGTH(event) != n)
        gg_abort("gamgpu_bad_input", "cox.ph()'s time groups and events must be integer vectors, one per row");
    const int nt = gg_as_int(nt_, "the number of event times", 0, INT_MAX, "gamgpu_bad_input");
    const int level = gg_as_int(level_, "the derivative level", -1, 3, "gamgpu_bad_input");
    if (level == 1) gg_abort("gamgpu_bad_input", "cox.ph()'s level 1 is level 2's traces (R)");
    int M = 0;
    if (level >= 2) {
        if (!Rf_isMatrix(d1b)) gg_abort("gamgpu_bad_input", "cox.ph()'s d1b must be a matrix");
        M = INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[1];
        real_matrix(d1b, p, M, "d1b");
    }
    const int nhh = M * (M + 1) / 2;
    if (level >= 3) {
        real_matrix(d2b, p, nhh, "d2b");
        real_matrix(W, p, p, "W");
    }

    const char *names[] = {"l", "lb", "lbb", "d1H", "trHid2H"};
    SEXP out = PROTECT(gg_named_list(5, names));
    SEXP g = PROTECT(Rf_allocVector(REALSXP, p));
    SEXP H = PROTECT(Rf_allocMatrix(REALSXP, p, p));
    SEXP d1H = PROTECT(level == 2 ? Rf_alloc3DArray(REALSXP, p, p, M) : R_NilValue);
    SEXP tr = PROTECT(level >= 3 ? Rf_allocVector(REALSXP, nhh) : R_NilValue);
    gg_cox_rows rows = {REAL(eta), REAL(X), (size_t) n, p, INTEGER(grp), INTEGER(event), nt};
    gg_cox_out o = {0.0, REAL(g), REAL(H), level == 2 ? REAL(d1H) : NULL,
                    level >= 3 ? REAL(tr) : NULL};
    gg_status st;
    gg_status_clear(&st);
    const int nth = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    gg_r_interrupt_arm();
    const int prev = gg_threads_set_limit(nth);
    int rc = gg_cox_ll(&rows, level, level >= 2 ? REAL(d1b) : NULL, M,
                       level >= 3 ? REAL(d2b) : NULL, level >= 3 ? REAL(W) : NULL, &o, &st);
    gg_threads_set_limit(prev);
    if (gg_r_interrupt_disarm(rc, &st, "cox.ph()'s log likelihood") != 0) gg_raise(&st);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(o.lp));
    if (level >= 0) {
        SET_VECTOR_ELT(out, 1, g);
        SET_VECTOR_ELT(out, 2, H);
    }
    SET_VECTOR_ELT(out, 3, d1H);
    SET_VECTOR_ELT(out, 4, tr);
    UNPROTECT(5);
    return out;
}
