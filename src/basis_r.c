/* basis_r.c -- R glue of the C basis evaluators (basis_cr.c), called from
 * R/model_matrix.R for the smooths they cover. */
#include <R.h>
#include <Rinternals.h>

#include "basis_cr.h"
#include "basis_r.h"
#include "errors_r.h"

/* x: covariate; xk: knots; F: k x k; drop: 1-based column or 0; shift:
 * doubles or NULL; Z: m x kc matrix or NULL; by: doubles or NULL. */
SEXP gg_cr_basis_r(SEXP x, SEXP xk, SEXP F, SEXP drop, SEXP shift, SEXP Z, SEXP by)
{
    if (!Rf_isReal(x) || !Rf_isReal(xk) || !Rf_isReal(F))
        gg_abort("gamgpu_bad_input", "cr basis: x, knots and F must be doubles");
    const int k = (int) XLENGTH(xk);
    const size_t n = (size_t) XLENGTH(x);
    const int d = Rf_asInteger(drop) - 1;
    if (k < 3 || XLENGTH(F) != (R_xlen_t) k * k || d >= k)
        gg_abort("gamgpu_bad_input", "cr basis: inconsistent knots and F");
    const int m = d >= 0 ? k - 1 : k;
    if (d >= 0 && (!Rf_isReal(shift) || XLENGTH(shift) != m))
        gg_abort("gamgpu_bad_input", "cr basis: the sweep shift must have k - 1 values");
    int kc = m;
    if (Z != R_NilValue) {
        if (!Rf_isReal(Z) || !Rf_isMatrix(Z) || Rf_nrows(Z) != m)
            gg_abort("gamgpu_bad_input", "cr basis: Z must be a double matrix with a row per column");
        kc = Rf_ncols(Z);
    }
    if (by != R_NilValue && (!Rf_isReal(by) || (size_t) XLENGTH(by) != n))
        gg_abort("gamgpu_bad_input", "cr basis: by must be doubles, one per value of x");
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int) n, kc));
    double *work = (double *) R_alloc(2 * (size_t) k, sizeof(double));
    gg_cr_basis(REAL(x), n, REAL(xk), k, REAL(F), d, d >= 0 ? REAL(shift) : NULL,
                Z == R_NilValue ? NULL : REAL(Z), kc, by == R_NilValue ? NULL : REAL(by),
                REAL(out), n, work);
    UNPROTECT(1);
    return out;
}
