/* basis_cr.c -- the cubic regression spline basis of mgcv's "cr" and "cs"
 * smooths, one row at a time, in pure C (a te() of cr margins is a margins
 * block of xplan.c).
 *
 * For x in the knot interval [x_j, x_j+1] of width h the basis row is the
 * natural cubic spline interpolating unit values at the knots:
 *     a- e_j + a+ e_j+1 + c- F[j, ] + c+ F[j+1, ]
 * with a- = (x_j+1 - x)/h, a+ = (x - x_j)/h, c- = ((x_j+1 - x)^3/h - h (x_j+1 - x))/6,
 * c+ likewise, and F mapping knot values to second derivatives.  Beyond the
 * end knots the spline continues linearly.  Then mgcv's identifiability
 * constraint and any by-variable are applied in PredictMat's order
 * (basis_map.c).
 *
 * Building the model matrix this way skips mgcv's n x k intermediate
 * matrices and R's per-block overhead: the setup step that dominates a fit
 * at 10^6+ rows.  The per-row arithmetic is inst/include/basis_math.h,
 * shared with the device kernel that builds X on the GPU (basis.cu). */
#include "basis.h"
#include "basis_math.h"

/* Raw basis row (k values) for one x: basis_math.h, shared with the
 * device kernel. */
static void cr_row(double xi, const double *xk, int k, const double *F, double *row)
{
    const gg_bm_cr_row r = gg_bm_cr_locate(xi, xk, k);
    for (int c = 0; c < k; c++)
        row[c] = gg_bm_cr_value(&r, F, k, c);
}

void gg_cr_basis(const double *x, size_t r0, size_t rows, const double *xk, const double *F,
                 const gg_basis_map *map, double *out, size_t ldo, double *work)
{
    double *raw = work, *mid = work + map->k;
    for (size_t r = 0; r < rows; r++) {
        cr_row(x[r0 + r], xk, map->k, F, raw);
        gg_basis_map_row(map, raw, r0 + r, out, ldo, r, mid);
    }
}
