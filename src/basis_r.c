/* basis_r.c -- R glue of the C basis evaluators (basis_cr.c,
 * basis_tprs.c), called from R/model_matrix.R for the smooths they cover. */
#include <R.h>
#include <Rinternals.h>

#include "basis.h"
#include "basis_r.h"
#include "errors_r.h"

/* The constraint/by map from R's description: drop (1-based column or 0),
 * shift (doubles or NULL), Z (matrix or NULL), by (doubles or NULL). */
static gg_basis_map map_from_r(int k, size_t n, SEXP drop, SEXP shift, SEXP Z, SEXP by)
{
    gg_basis_map map;
    map.k = k;
    map.drop = Rf_asInteger(drop) - 1;
    if (map.drop >= k)
        gg_abort("gamgpu_bad_input", "basis: the constraint drops a column that is not there");
    const int m = map.drop >= 0 ? k - 1 : k;
    map.shift = NULL;
    if (map.drop >= 0) {
        if (!Rf_isReal(shift) || XLENGTH(shift) != m)
            gg_abort("gamgpu_bad_input", "basis: the sweep shift must have k - 1 values");
        map.shift = REAL(shift);
    }
    map.Z = NULL;
    map.kc = m;
    if (Z != R_NilValue) {
        if (!Rf_isReal(Z) || !Rf_isMatrix(Z) || Rf_nrows(Z) != m)
            gg_abort("gamgpu_bad_input", "basis: Z must be a double matrix with a row per column");
        map.Z = REAL(Z);
        map.kc = Rf_ncols(Z);
    }
    map.by = NULL;
    if (by != R_NilValue) {
        if (!Rf_isReal(by) || (size_t) XLENGTH(by) != n)
            gg_abort("gamgpu_bad_input", "basis: by must be doubles, one per row");
        map.by = REAL(by);
    }
    return map;
}

SEXP gg_cr_basis_r(SEXP x, SEXP xk, SEXP F, SEXP drop, SEXP shift, SEXP Z, SEXP by)
{
    if (!Rf_isReal(x) || !Rf_isReal(xk) || !Rf_isReal(F))
        gg_abort("gamgpu_bad_input", "cr basis: x, knots and F must be doubles");
    const int k = (int) XLENGTH(xk);
    const size_t n = (size_t) XLENGTH(x);
    if (k < 3 || XLENGTH(F) != (R_xlen_t) k * k)
        gg_abort("gamgpu_bad_input", "cr basis: inconsistent knots and F");
    gg_basis_map map = map_from_r(k, n, drop, shift, Z, by);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int) n, map.kc));
    double *work = (double *) R_alloc(2 * (size_t) k, sizeof(double));
    gg_cr_basis(REAL(x), n, REAL(xk), REAL(F), &map, REAL(out), n, work);
    UNPROTECT(1);
    return out;
}

/* x: n x d matrix; shift: d; m: penalty order; M: null space dimension;
 * Xu: nXu x d; UZ: (nXu + M) x k; threads: how many. */
SEXP gg_tprs_basis_r(SEXP x, SEXP shift, SEXP m, SEXP M, SEXP Xu, SEXP UZ, SEXP drop,
                     SEXP sweep, SEXP Z, SEXP by, SEXP threads)
{
    if (!Rf_isReal(x) || !Rf_isMatrix(x) || !Rf_isReal(Xu) || !Rf_isMatrix(Xu) ||
        !Rf_isReal(UZ) || !Rf_isMatrix(UZ) || !Rf_isReal(shift))
        gg_abort("gamgpu_bad_input", "tprs basis: x, Xu, UZ must be double matrices");
    const size_t n = (size_t) Rf_nrows(x);
    const int d = Rf_ncols(x), nXu = Rf_nrows(Xu), nM = Rf_asInteger(M), k = Rf_ncols(UZ);
    if (Rf_ncols(Xu) != d || XLENGTH(shift) != d || nM < 1 || Rf_nrows(UZ) != nXu + nM)
        gg_abort("gamgpu_bad_input", "tprs basis: inconsistent dimensions");
    gg_basis_map map = map_from_r(k, n, drop, sweep, Z, by);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int) n, map.kc));
    if (gg_tprs_basis(REAL(x), n, d, REAL(shift), Rf_asInteger(m), nM, REAL(Xu), nXu,
                      REAL(UZ), &map, REAL(out), n, Rf_asInteger(threads)) != 0)
        gg_abort("gamgpu_host_oom", "tprs basis: out of memory");
    UNPROTECT(1);
    return out;
}
