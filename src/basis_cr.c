/* basis_cr.c -- the cubic regression spline basis of mgcv's "cr" and "cs"
 * smooths, one row at a time, in pure C.
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
 * at 10^6+ rows.  The same arithmetic is the reference for a device kernel. */
#include "basis.h"

/* Raw basis row (k values) for one x. */
static void cr_row(double xi, const double *xk, int k, const double *F, double *row)
{
    const double kmin = xk[0], kmax = xk[k - 1];
    if (xi < kmin) {
        const double h = xk[1] - kmin, d = xi - kmin;
        const double cm = -d * h / 3, cp = -d * h / 6;
        for (int c = 0; c < k; c++)
            row[c] = cm * F[c] + cp * F[k + c];
        row[0] += 1 - d / h;
        row[1] += d / h;
        return;
    }
    if (xi > kmax) {
        const int j = k - 1;
        const double h = kmax - xk[j - 1], d = xi - kmax;
        const double cm = d * h / 6, cp = d * h / 3;
        for (int c = 0; c < k; c++)
            row[c] = cm * F[(size_t) (j - 1) * k + c] + cp * F[(size_t) j * k + c];
        row[k - 2] += -d / h;
        row[k - 1] += 1 + d / h;
        return;
    }
    /* bisection: xk[j] <= xi <= xk[j+1] */
    int j = 0, hi = k - 1;
    while (hi - j > 1) {
        const int mid = (hi + j) >> 1;
        if (xi > xk[mid])
            j = mid;
        else
            hi = mid;
    }
    const double xj = xk[j], xj1 = xk[j + 1], h = xj1 - xj;
    double am = xj1 - xi, ap = xi - xj;
    const double cm = (am * (am * am / h - h)) / 6, cp = (ap * (ap * ap / h - h)) / 6;
    am /= h;
    ap /= h;
    const double *Fj = F + (size_t) j * k, *Fj1 = F + (size_t) (j + 1) * k;
    for (int c = 0; c < k; c++)
        row[c] = cm * Fj[c] + cp * Fj1[c];
    row[j] += am;
    row[j + 1] += ap;
}

void gg_cr_basis(const double *x, size_t n, const double *xk, const double *F,
                 const gg_basis_map *map, double *out, size_t ldo, double *work)
{
    double *raw = work, *mid = work + map->k;
    for (size_t i = 0; i < n; i++) {
        cr_row(x[i], xk, map->k, F, raw);
        gg_basis_map_row(map, raw, i, out, ldo, mid);
    }
}
