/* basis_math.h -- the per-row arithmetic of mgcv's "cr" and "tp" bases,
 * written once and compiled twice: as C in the package (src/basis_cr.c,
 * src/basis_tprs.c, the host evaluators that are bit-identical to mgcv's
 * PredictMat) and as CUDA C by NVRTC (basis.cu, which builds the model
 * matrix on the device).  With --fmad=false the device rounds every
 * operation as the host does, so the two agree bit for bit wherever the
 * math library does (sqrt always; log, for even-dimensional thin plate
 * splines, to an ulp).
 *
 * Nothing here allocates or loops over rows: callers own both. */
#ifndef GAMGPU_BASIS_MATH_H
#define GAMGPU_BASIS_MATH_H

#ifdef __CUDACC_RTC__
#define GG_BM static __device__ __forceinline__
#else
#include <math.h>
#define GG_BM static inline
#endif

/* ---- cr: natural cubic regression spline -------------------------------
 * A raw basis row (k values) for one x is
 *     row[c] = cm F[j, c] + cp F[j+1, c]  (+ a0 when c == j, + a1 when c == j+1)
 * with F the smooth's k x k map from knot values to second derivatives (as
 * stored, row j at F + j k).  gg_bm_cr_locate() finds j and the four
 * coefficients, gg_bm_cr_value() gives column c.  Beyond the end knots the
 * spline continues linearly. */
typedef struct gg_bm_cr_row {
    int    j;
    double cm, cp, a0, a1;
} gg_bm_cr_row;

GG_BM gg_bm_cr_row gg_bm_cr_locate(double xi, const double *xk, int k)
{
    gg_bm_cr_row r;
    const double kmin = xk[0], kmax = xk[k - 1];
    if (xi < kmin) {
        const double h = xk[1] - kmin, d = xi - kmin;
        r.j = 0;
        r.cm = -d * h / 3;
        r.cp = -d * h / 6;
        r.a0 = 1 - d / h;
        r.a1 = d / h;
        return r;
    }
    if (xi > kmax) {
        const double h = kmax - xk[k - 2], d = xi - kmax;
        r.j = k - 2;
        r.cm = d * h / 6;
        r.cp = d * h / 3;
        r.a0 = -d / h;
        r.a1 = 1 + d / h;
        return r;
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
    const double am = xj1 - xi, ap = xi - xj;
    r.j = j;
    r.cm = (am * (am * am / h - h)) / 6;
    r.cp = (ap * (ap * ap / h - h)) / 6;
    r.a0 = am / h;
    r.a1 = ap / h;
    return r;
}

GG_BM double gg_bm_cr_value(const gg_bm_cr_row *r, const double *F, int k, int c)
{
    double v = r->cm * F[(long long) r->j * k + c] + r->cp * F[(long long) (r->j + 1) * k + c];
    if (c == r->j)
        v += r->a0;
    else if (c == r->j + 1)
        v += r->a1;
    return v;
}

/* ---- tp: thin plate regression spline ----------------------------------
 * eta(r) for penalty order m in d dimensions from the squared distance r2
 * and mgcv's constant f (gg_tprs_eta_constant() in basis_tprs.c): the same
 * sequence of operations as mgcv's C code, because the stored UZ was built
 * with it. */
GG_BM double gg_bm_tprs_eta(int m, int d, double r2, double f)
{
    if (r2 <= 0.0)
        return 0.0;
    if (d % 2 == 0) {
        f *= log(r2) * 0.5;
        for (int i = 0; i < m - d / 2; i++) f *= r2;
    } else {
        for (int i = 0; i < m - d / 2 - 1; i++) f *= r2;
        f *= sqrt(r2);
    }
    return f;
}

#endif
