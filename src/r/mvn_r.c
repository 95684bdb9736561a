/* mvn_r.c -- R glue of mvn()'s log likelihood and its derivatives
 * (family_mvn.c), which gamgpu's mvn ll() calls with the sufficient
 * statistics it formed over the rows (R/family_mvn.R): the arguments
 * checked, the p x p and theta algebra in C, the results as R objects. */
#include <R.h>
#include <Rinternals.h>
#include <stdio.h>

#include "errors_r.h"
#include "family_mvn.h"
#include "mvn_r.h"
#include "sexp_r.h"

static const double *mvn_matrix(SEXP x, int rows, int cols, const char *what)
{
    if (!Rf_isReal(x) || XLENGTH(x) != (R_xlen_t) rows * cols) {
        char msg[160];
        snprintf(msg, sizeof msg, "mvn()'s %s must be a double matrix of %d x %d", what, rows,
                 cols);
        gg_abort("gamgpu_bad_input", msg);
    }
    return REAL(x);
}

/* XX (pm x pm), yX (m x pm), yty (m x m), n the rows, coef (np: the pm
 * mean coefficients then R's m (m + 1) / 2), lpi the m predictors'
 * columns (1-based, in 1..pm), d1b NULL or np x nsp: list(l, lb, lbb,
 * dH), dH np x np x nsp (NULL without d1b). */
SEXP gg_mvn_ll_r(SEXP XX, SEXP yX, SEXP yty, SEXP n, SEXP coef, SEXP lpi, SEXP d1b)
{
    if (TYPEOF(lpi) != VECSXP || XLENGTH(lpi) < 1 || XLENGTH(lpi) > 1000)
        gg_abort("gamgpu_bad_input", "mvn()'s lpi must be a list of 1 to 1000 index vectors");
    if (!Rf_isReal(XX) || !Rf_isMatrix(XX) || Rf_nrows(XX) != Rf_ncols(XX))
        gg_abort("gamgpu_bad_input", "mvn()'s XX must be a square double matrix");
    if (!Rf_isReal(coef) || XLENGTH(coef) > 100000)
        gg_abort("gamgpu_bad_input", "mvn()'s coefficients must be a double vector");
    const int m = (int) XLENGTH(lpi), pm = Rf_nrows(XX), np = (int) XLENGTH(coef);
    gg_mvn_in in;
    in.m = m;
    in.pm = pm;
    in.np = np;
    in.n = gg_as_real(n, "n", 0, R_PosInf, "gamgpu_bad_input");
    in.XX = REAL(XX);
    in.yX = mvn_matrix(yX, m, pm, "yX");
    in.yty = mvn_matrix(yty, m, m, "yty");
    R_xlen_t nc = 0;
    for (int l = 0; l < m; l++) {
        SEXP v = VECTOR_ELT(lpi, l);
        if (!Rf_isInteger(v))
            gg_abort("gamgpu_bad_input", "mvn()'s lpi must hold integer index vectors");
        nc += XLENGTH(v);
    }
    if (nc > 100000) gg_abort("gamgpu_bad_input", "mvn()'s lpi indexes too many columns");
    in.nc = (int) nc;
    int *pos = (int *) R_alloc((size_t) (nc > 0 ? nc : 1), sizeof(int));
    int *din = (int *) R_alloc((size_t) (nc > 0 ? nc : 1), sizeof(int));
    for (int l = 0, a = 0; l < m; l++) {
        SEXP v = VECTOR_ELT(lpi, l);
        for (R_xlen_t i = 0; i < XLENGTH(v); i++, a++) {
            const int c = INTEGER(v)[i];
            pos[a] = c == NA_INTEGER ? -1 : c - 1;
            din[a] = l;
        }
    }
    in.pos = pos;
    in.din = din;
    const int nt = m * (m + 1) / 2;
    if (np != pm + nt) {
        char msg[200];
        snprintf(msg, sizeof msg, "mvn dimension error: %d coefficients, %d mean ones and %d of R",
                 np, pm, nt);
        gg_abort("gamgpu_bad_input", msg);
    }
    in.theta = REAL(coef) + pm;
    int nsp = 0;
    const double *dbeta = NULL;
    if (d1b != R_NilValue) {
        if (!Rf_isReal(d1b) || !Rf_isMatrix(d1b) || Rf_nrows(d1b) != np)
            gg_abort("gamgpu_bad_input", "mvn()'s d1b must be a double matrix, a row per coefficient");
        nsp = Rf_ncols(d1b);
        dbeta = REAL(d1b);
    }
    const char *names[] = {"l", "lb", "lbb", "dH"};
    SEXP out = PROTECT(gg_named_list(4, names));
    SEXP lb = Rf_allocVector(REALSXP, np);
    SET_VECTOR_ELT(out, 1, lb);
    SEXP lbb = Rf_allocMatrix(REALSXP, np, np);
    SET_VECTOR_ELT(out, 2, lbb);
    double *dH = NULL;
    if (nsp > 0) {
        SEXP a = Rf_alloc3DArray(REALSXP, np, np, nsp);
        SET_VECTOR_ELT(out, 3, a);
        dH = REAL(a);
    }
    double ll = 0.0;
    gg_status st;
    gg_status_clear(&st);
    if (gg_mvn_ll(&in, nsp, dbeta, &ll, REAL(lb), REAL(lbb), dH, &st) != 0) gg_raise(&st);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(ll));
    UNPROTECT(1);
    return out;
}
