/* basis_math.h -- the per-row arithmetic of mgcv's "cr" and "tp" bases,
 * written once and compiled twice: as C in the package (src/basis/basis_cr.c,
 * src/basis/basis_tprs.c, the host evaluators that are bit-identical to mgcv's
 * PredictMat) and as CUDA C by NVRTC (basis.cu, which builds the model
 * matrix on the device).  With --fmad=false the device rounds every
 * operation as the host does, so the two agree bit for bit wherever the
 * math library does (sqrt always; log, for even-dimensional thin plate
 * splines, to an ulp).
 *
 * Nothing here allocates or loops over rows: callers own both. */
#ifndef GAMGPU_BASIS_MATH_H
#define GAMGPU_BASIS_MATH_H

#ifndef GG_XMAX_ORD
#define GG_XMAX_ORD 12
#endif

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

/* ---- cc: cyclic cubic regression spline --------------------------------
 * mgcv's Predict.matrix.cyclic.smooth: k + 1 knots xk (the first and last
 * the same point of the cycle), BD k x k (column-major).  x outside the
 * knots is first wrapped onto them (mgcv's cwrap, with R's %% -- in long
 * double on the host, as R; double on the device).  The row is
 *   BD[l,] a^3 / (6h) + BD[r,] b^3 / (6h) - BD[l,] h a/6 - BD[r,] h b/6 + e_l a/h + e_r b/h
 * with l the knot interval, r = l + 1 (0 past the last), a = xk[l+1] - x,
 * b = x - xk[l], summed in that order as R does. */
#ifdef __CUDACC_RTC__
GG_BM double gg_bm_rmod(double x1, double x2)
{
    const double q = x1 / x2;
    const double tmp = x1 - floor(q) * x2;
    return tmp - floor(tmp / x2) * x2;
}
#else
GG_BM double gg_bm_rmod(double x1, double x2)       /* R's myfmod() */
{
    if (fabs(x2) > 1 / 2.220446049250313e-16 && fabs(x1) <= fabs(x2))
        return fabs(x1) == fabs(x2) ? 0 : ((x1 < 0 && x2 > 0) || (x2 < 0 && x1 > 0)) ? x1 + x2 : x1;
    const double q = x1 / x2;
    const long double tmp = (long double) x1 - floor(q) * (long double) x2;
    return (double) (tmp - floorl(tmp / x2) * x2);
}
#endif

GG_BM double gg_bm_cwrap(double x0, double x1, double x)
{
    const double h = x1 - x0;
    if (x > x1)
        return x0 + gg_bm_rmod(x - x1, h);
    if (x < x0)
        return x1 - gg_bm_rmod(x0 - x, h);
    return x;
}

/* The cc basis at x (k + 1 knots xk, the last the first's period end):
 * x wrapped onto the period, its interval's left and right knot columns l
 * and r (r = 0 past the last knot) and the terms of mgcv's row,
 *     row[c] = BD[l, c] a^3 / h6 + BD[r, c] b^3 / h6 - BD[l, c] s3
 *              - BD[r, c] s4 (+ s5 when c == l, + s6 when c == r). */
typedef struct gg_bm_cc_pos {
    int    l, r;
    double a3, b3, h6, s3, s4, s5, s6;
} gg_bm_cc_pos;

GG_BM gg_bm_cc_pos gg_bm_cc_locate(double x, const double *xk, int k)
{
    gg_bm_cc_pos p;
    const int n = k + 1;
    x = gg_bm_cwrap(xk[0], xk[n - 1], x);
    int ir = n - 1;                       /* the first knot from 1 on with x <= it */
    for (int i = n - 1; i >= 1; i--)
        if (x <= xk[i])
            ir = i;
    p.l = ir - 1;
    p.r = ir == n - 1 ? 0 : ir;
    const double h = xk[ir] - xk[p.l], a = xk[p.l + 1] - x, b = x - xk[p.l];
    p.a3 = pow(a, 3.0);
    p.b3 = pow(b, 3.0);
    p.h6 = 6 * h;
    p.s3 = h * a / 6;
    p.s4 = h * b / 6;
    p.s5 = a / h;
    p.s6 = b / h;
    return p;
}

/* Row of the cc basis into row[0 .. k-1]. */
GG_BM void gg_bm_cc_row(double x, const double *xk, int k, const double *BD, double *row)
{
    const gg_bm_cc_pos p = gg_bm_cc_locate(x, xk, k);
    for (int c = 0; c < k; c++) {
        const double bl = BD[p.l + (long long) k * c], br = BD[p.r + (long long) k * c];
        /* R's BD[l,] * a^3 / (6h): the product first, then the division */
        double v = bl * p.a3 / p.h6 + br * p.b3 / p.h6 - bl * p.s3 - br * p.s4;
        v += c == p.l ? p.s5 : 0.0;
        v += c == p.r ? p.s6 : 0.0;
        row[c] = v;
    }
}

/* ---- B-splines ----------------------------------------------------------
 * The ord non-zero B-splines at x (R's set_cursor and basis_funcs) into
 * b[0 .. ord-1]: they are columns curs - ord .. curs - 1 of the basis on
 * the nk knots.  Returns curs, or -1 where splineDesign gives NaN (x outside
 * the knots' inner range). */
GG_BM int gg_bm_bspl_vals(double x, const double *knots, int nk, int ord, double *b)
{
    int curs = -1;
    for (int i = 0; i < nk; i++) {        /* set_cursor */
        if (knots[i] >= x) curs = i;
        if (knots[i] > x) break;
    }
    if (curs > nk - ord && x == knots[nk - ord])
        curs = nk - ord;
    if (curs < ord || curs > nk - ord)    /* splineDesign's NaN */
        return -1;
    double rdel[GG_XMAX_ORD], ldel[GG_XMAX_ORD];
    const int ordm1 = ord - 1;
    for (int i = 0; i < ordm1; i++) {     /* diff_table */
        rdel[i] = knots[curs + i] - x;
        ldel[i] = x - knots[curs - (i + 1)];
    }
    b[0] = 1.0;                           /* basis_funcs */
    for (int j = 1; j <= ordm1; j++) {
        double saved = 0.0;
        for (int r = 0; r < j; r++) {
            const double den = rdel[r] + ldel[j - 1 - r];
            if (den != 0) {
                const double term = b[r] / den;
                b[r] = saved + rdel[r] * term;
                saved = ldel[j - 1 - r] * term;
            } else {
                if (r != 0 || rdel[r] != 0.)
                    b[r] = saved;
                saved = 0.0;
            }
        }
        b[j] = saved;
    }
    return curs;
}

/* ---- ps/bs: B-splines ---------------------------------------------------
 * R's splines::splineDesign (its C: set_cursor, basis_funcs) for x in
 * [lo, hi], and mgcv's linear continuation outside: D (4 x k) holds the
 * basis and its slope at lo (rows 0, 1) and at hi (rows 2, 3), as
 * Predict.matrix.pspline.smooth.  nk knots, order ord, k = nk - ord. */
GG_BM void gg_bm_bspl_row(double x, const double *knots, int nk, int ord, double lo,
                          double hi, const double *D, double *row)
{
    const int k = nk - ord;
    if (x < lo || x > hi) {
        const int r0 = x < lo ? 0 : 2;
        const double dx = x - (x < lo ? lo : hi);
        for (int c = 0; c < k; c++)
            row[c] = D[r0 + 4LL * c] + dx * D[r0 + 1 + 4LL * c];
        return;
    }
    double b[GG_XMAX_ORD];
    const int curs = gg_bm_bspl_vals(x, knots, nk, ord, b);
    for (int c = 0; c < k; c++)
        row[c] = curs < 0 ? 0.0 / 0.0 : 0.0;
    if (curs < 0)
        return;
    for (int j = 0; j < ord; j++)
        row[curs - ord + j] = b[j];
}

/* ---- cp: cyclic P-spline -------------------------------------------------
 * mgcv's Predict.matrix.cpspline.smooth: x wrapped onto [lo, hi] (the
 * first and last of the k + 1 knots, cwrap), then cSplineDes: the
 * B-splines of order ord on its knots extended below lo, plus, for x above
 * xc (the knot ord - 1 intervals before hi), those at x - hi + lo.  Both
 * calls run splineDesign with outer.ok = TRUE, which repeats the end knots
 * ord - 1 more times and drops as many columns at each end: knots here is
 * that vector (nk = k + 3 ord - 2 knots), so column c of the row is column
 * c + ord - 1 of its basis.  The sum is R's X1 + X2. */
GG_BM void gg_bm_cp_row(double x, const double *knots, int nk, int ord, double lo, double hi,
                        double *row)
{
    const int k = nk - 3 * ord + 2, skip = ord - 1;
    const double xc = knots[skip + k];
    double b[GG_XMAX_ORD];
    x = gg_bm_cwrap(lo, hi, x);
    for (int c = 0; c < k; c++)
        row[c] = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        const double xp = pass == 0 ? x : x - hi + lo;
        const int curs = gg_bm_bspl_vals(xp, knots, nk, ord, b);
        if (curs < 0) {
            for (int c = 0; c < k; c++)
                row[c] = 0.0 / 0.0;
            return;
        }
        for (int j = 0; j < ord; j++) {
            const int c = curs - ord + j - skip;
            if (c >= 0 && c < k)
                row[c] += b[j];
        }
        if (!(x > xc))
            break;
    }
}

/* ---- gp: Gaussian process smooth ------------------------------------------
 * mgcv's gpE() for one squared distance r2 between a row and a knot (the
 * sum over the covariates in order): E = sqrt(r2) / rho, then covariance
 * function `type` (1 spherical, 2 power exponential with power kp, 3..5
 * Matern with kappa 1.5, 2.5, 3.5), each written as R evaluates it. */
GG_BM double gg_bm_gp_cov(int type, double r2, double rho, double kp)
{
    const double E = sqrt(r2) / rho;
    switch (type) {
    case 1:
        return (1 - 1.5 * E + 0.5 * pow(E, 3.0)) * (E <= 1 ? 1.0 : 0.0);
    case 2:
        return exp(-(kp == 2.0 ? E * E : pow(E, kp)));
    default: {
        const double eE = exp(-E);
        if (type == 3)
            return (1 + E) * eE;
        if (type == 4)
            return eE + (E * eE) * (1 + E / 3);
        return eE + (E * eE) * (1 + 0.4 * E + E * E / 15);
    }
    }
}

/* A thin plate margin's eta (m > 0, eta0 its constant), or a Gaussian
 * process margin's covariance (m = -type, eta0 = rho, eta1 = its power):
 * the radial part of the tp kernels, which build both bases. */
GG_BM double gg_bm_radial(int m, int d, double r2, double eta0, double eta1)
{
    return m > 0 ? gg_bm_tprs_eta(m, d, r2, eta0) : gg_bm_gp_cov(-m, r2, eta0, eta1);
}


/* ---- tp in one variable: a piecewise polynomial -------------------------
 * In one variable the thin plate radial function eta0 |x - u|^D (D = 2m - 1,
 * odd) is a polynomial on either side of its knot u, so a 1-d tp basis
 * column is a polynomial of degree D on each interval between sorted
 * knots (basis_tprs.c's gg_tp1_table computes their coefficients once per
 * smooth).  A row is then a search for its interval and k Horner sums of
 * D + 1 terms, not k sums over nXu + M terms.  gg_bm_tp1_locate() gives j,
 * the number of knots <= x (0 .. K), whose interval's polynomials are in
 * powers of t = x - knots[j > 0 ? j - 1 : 0]; gg_bm_tp1_value() sums one of
 * them (coefficients c[0 .. D], lowest power first). */
GG_BM int gg_bm_tp1_locate(double x, const double *knots, int K)
{
    int lo = 0, hi = K;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (knots[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

GG_BM double gg_bm_tp1_value(double t, const double *c, int D)
{
    double v = c[D];
    for (int p = D - 1; p >= 0; p--)
        v = v * t + c[p];
    return v;
}

/* A raw row of k values for x (shifted), out[c * stride]: the interval's
 * polynomials of coef ((K + 1) x k x (D + 1), interval j's column c at
 * coef + (j k + c)(D + 1)). */
GG_BM void gg_bm_tp1_row(double x, const double *knots, int K, const double *coef, int k,
                         int D, double *out, long long stride)
{
    const int j = gg_bm_tp1_locate(x, knots, K);
    const double t = x - knots[j > 0 ? j - 1 : 0];
    const double *cj = coef + (long long) j * k * (D + 1);
    for (int c = 0; c < k; c++)
        out[c * stride] = gg_bm_tp1_value(t, cj + (long long) c * (D + 1), D);
}

/* ---- a factor's indicator columns --------------------------------------- */
GG_BM void gg_bm_code_row(int code, int k, double *row)
{
    for (int c = 0; c < k; c++)
        row[c] = c + 1 == code ? 1.0 : 0.0;
}

/* ---- the row tensor product of margins --------------------------------------
 * mgcv's tensor.prod.model.matrix (its C, mgcv_tensor_mm): the last margin's
 * index fastest, the product built from the last margin towards the first,
 * T = (u_last * u_last-1) * ... * u_0.  u[j] holds margin j's kp[j] values;
 * out gets the product of the kp. */
GG_BM void gg_bm_tensor_row(int nm, const double *const *u, const int *kp, double *out)
{
    int len = kp[nm - 1];
    for (int c = 0; c < len; c++)
        out[c] = u[nm - 1][c];
    for (int j = nm - 2; j >= 0; j--) {
        /* out holds len values; the new block is kp[j] copies, copy i times u[j][i],
         * written from the end so that the old values are read before overwritten */
        for (int i = kp[j] - 1; i >= 0; i--)
            for (int c = len - 1; c >= 0; c--)
                out[i * len + c] = out[c] * u[j][i];
        len *= kp[j];
    }
}

#endif
