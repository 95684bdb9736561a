/* efam_ocat.h -- mgcv's ocat(R) (ordered categorical, latent logistic,
 * link identity) for efam_math.h (see there for the contract).  mu is the
 * linear predictor; y the category 1..R (a double holding an integer).
 *
 *   par->th[0..nth-1] = ocat's getTheta(), nth = R - 2: the logs of the
 *                       cut point increments (R = par->nth + 2);
 *   par->aux[]        = unused.
 *
 * The cut points are alpha_1 = -1, alpha_m = -1 + sum_{i < m} exp(th_i)
 * (m = 2..R-1), with alpha_0 = -Inf and alpha_R = Inf; category y has
 * probability f = F(alpha_y - mu) - F(alpha_{y-1} - mu), F logistic.  The
 * expressions are ocat()'s own: Fdiff() for f, abcd() for the derivatives
 * of F at the two cut points, Dd's clamp f >= .Machine$double.xmin for the
 * derivatives but not for dev.resids.  The theta sums take Dd(level = 2)'s
 * Dth and Dth2 only; gg_fm_ocat_dd (for efam_outer.h) is all of Dd.
 * ocat's ls() is identically zero: its sums get 0.  A y that is not an
 * integer in 1..R gives NaN. */
#ifndef GAMGPU_EFAM_OCAT_H
#define GAMGPU_EFAM_OCAT_H

#define GG_FM_OCAT_XMIN 2.2250738585072014e-308   /* .Machine$double.xmin */

/* ocat's Fdiff(a, b) = F(b) - F(a), a < b */
GG_FM double gg_fm_ocat_fdiff(double a, double b)
{
    const double eb = exp(b > 0 ? -b : b), ea = exp(a > 0 ? -a : a);
    if (a > 0) return (ea - eb) / ((ea + 1) * (eb + 1));
    if (b < 0) return eb / (1 + eb) - ea / (1 + ea);
    return (1 - ea * eb) / ((eb + 1) * (ea + 1));
}

/* ocat's abcd(x, level = 0): aj = -F'(x), bj = F''(x) */
GG_FM void gg_fm_ocat_ab(double x, double *aj, double *bj)
{
    const double h = x > 0 ? -1.0 : 1.0, ex = exp(x * h), ex1 = ex + 1;
    double ex1k = ex1 * ex1;
    *aj = -ex / ex1k;
    ex1k = ex1k * ex1;
    *bj = h * (ex - ex * ex) / ex1k;
}

/* Category y's cut points al0 < al1 from theta (-Inf / Inf at the ends),
 * as ocat builds alpha: -1 + cumsum(exp(theta)).  R's cumsum accumulates
 * in long double and rounds each partial sum once; a compensated sum
 * (TwoSum, exact in IEEE double on both compilers) rounds the same way
 * save in near ties, where a plain double sum is off by an ulp or so.
 * Returns 0 if y is not an integer in 1..R. */
GG_FM int gg_fm_ocat_cuts(double y, const gg_fm_efpar *par, double *al0, double *al1)
{
    const int R = par->nth + 2;
    if (!(y >= 1 && y <= R && y == floor(y))) return 0;
    const int k = (int) y;
    double cs = 0, cc = 0, lo = -GG_FM_INF, hi = -1.0;
    for (int i = 0; i < k - 1; i++) {
        lo = hi;
        if (i < R - 2) {
            const double x = exp(par->th[i]), t = cs + x, bp = t - cs;
            cc += (cs - (t - bp)) + (x - bp);
            cs = t;
            hi = -1.0 + (cs + cc);
        } else {
            hi = GG_FM_INF;
        }
    }
    *al0 = lo;
    *al1 = hi;
    return 1;
}

GG_FM double gg_fm_ocat_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                            double *Dmu, double *EDmu2)
{
    double al0, al1;
    if (!gg_fm_ocat_cuts(y, par, &al0, &al1)) {
        *Dmu = *EDmu2 = GG_FM_NAN;
        return GG_FM_NAN;
    }
    const double al1mu = al1 - mu, al0mu = al0 - mu, f0 = gg_fm_ocat_fdiff(al0mu, al1mu);
    const double f = f0 < GG_FM_OCAT_XMIN ? GG_FM_OCAT_XMIN : f0;   /* pmax, NaN kept */
    double a0, b0, a1, b1;
    gg_fm_ocat_ab(al1mu, &a1, &b1);
    gg_fm_ocat_ab(al0mu, &a0, &b0);
    const double a = a1 - a0, b = b1 - b0;
    *Dmu = -2 * wt * a / f;                           /* ocat()$Dd, level 0 */
    *EDmu2 = 2 * wt * (a * a / f - b) / f;
    return -2 * wt * log(f0);                         /* dev.resids: no clamp */
}

/* ocat's abcd(x, level): o[0..3] = aj, bj, cj (level > 0), dj (level > 1),
 * the derivatives of F at x, signed as Dd takes them */
GG_FM void gg_fm_ocat_abcd(double x, int level, double *o)
{
    const double h = x > 0 ? -1.0 : 1.0, ex = exp(x * h), ex1 = ex + 1;
    double ex1k = ex1 * ex1;
    o[0] = -ex / ex1k;
    ex1k = ex1k * ex1;
    const double ex2 = ex * ex;
    o[1] = h * (ex - ex * ex) / ex1k;
    if (level > 0) {
        ex1k = ex1k * ex1;
        const double ex3 = ex2 * ex;
        o[2] = (-ex3 + 4 * ex2 - ex) / ex1k;
        if (level > 1) {
            ex1k = ex1k * ex1;
            const double ex4 = ex3 * ex;
            o[3] = h * (-ex4 + 11 * ex3 - 11 * ex2 + ex) / ex1k;
        }
    }
}

/* ocat()$Dd(y, mu, theta, wt, level) in mgcv's expressions, for
 * efam_outer.h: theta's R - 2 columns and their pairs (mgcv's packing),
 * the derivatives in each cut point taken to theta through which cut
 * points of category y it moves (ar.k, ar1.k, ar.kj, ar1.kj there) */
GG_FM void gg_fm_ocat_dd(double y, double mu, double wt, const gg_fm_efpar *par, int level,
                         gg_fm_efdd *r)
{
    const int R = par->nth + 2;
    double al0, al1;
    if (!gg_fm_ocat_cuts(y, par, &al0, &al1)) {
        r->Dmu = r->Dmu2 = r->EDmu2 = GG_FM_NAN;
        return;
    }
    const int yi = (int) y;
    const double al1mu = al1 - mu, al0mu = al0 - mu, f0 = gg_fm_ocat_fdiff(al0mu, al1mu);
    const double f = f0 < GG_FM_OCAT_XMIN ? GG_FM_OCAT_XMIN : f0;   /* pmax, NaN kept */
    double q1[4] = {0, 0, 0, 0}, q0[4] = {0, 0, 0, 0};
    gg_fm_ocat_abcd(al1mu, level, q1);
    gg_fm_ocat_abcd(al0mu, level, q0);
    const double a1 = q1[0], a0 = q0[0], a = a1 - a0;
    const double b1 = q1[1], b0 = q0[1], b = b1 - b0;
    r->Dmu = -2 * wt * a / f;
    const double a2 = a * a;
    r->Dmu2 = r->EDmu2 = 2 * wt * (a2 / f - b) / f;
    if (R < 3 || level < 1) return;
    const double c1 = q1[2], c0 = q0[2], c = c1 - c0;
    const double f2 = f * f, a3 = a2 * a;
    r->Dmu3 = 2 * wt * (-c - 2 * a3 / f2 + 3 * a * b / f) / f;
    const double Dmua0 = 2 * (a0 * a / f - b0) / f;
    const double Dmua1 = -2 * (a1 * a / f - b1) / f;
    const double Dmu2a0 = -2 * (c0 + (a0 * (2 * a2 / f - b) - 2 * b0 * a) / f) / f;
    const double Dmu2a1 = 2 * (c1 + (2 * (a1 * a2 / f - b1 * a) - a1 * b) / f) / f;
    const double Da0 = -2 * a0 / f, Da1 = 2 * a1 / f;
    for (int k = 1; k <= R - 2; k++) {
        const double etk = exp(par->th[k - 1]);
        double t = 0, mt = 0, m2t = 0;
        if (yi == k + 1) {
            t = wt * Da1 * etk;
            mt = wt * Dmua1 * etk;
            m2t = wt * Dmu2a1 * etk;
        } else if (yi > k + 1 && yi < R) {
            t = wt * (Da1 + Da0) * etk;
            mt = wt * (Dmua1 + Dmua0) * etk;
            m2t = wt * (Dmu2a1 + Dmu2a0) * etk;
        } else if (yi == R) {
            t = wt * Da0 * etk;
            mt = wt * Dmua0 * etk;
            m2t = wt * Dmu2a0 * etk;
        }
        r->Dth[k - 1] = t;
        r->Dmuth[k - 1] = mt;
        r->Dmu2th[k - 1] = m2t;
    }
    if (level < 2) return;
    const double d1 = q1[3], d0 = q0[3], d = d1 - d0;
    r->Dmu4 = 2 * wt * ((3 * (b * b) + 4 * a * c) / f + a2 * (6 * a2 / f - 12 * b) / f2 - d) / f;
    const double Dmu3a0 = 2 *
                          ((a0 * c + 3 * c0 * a + 3 * b0 * b) / f - d0 +
                           6 * a * (a0 * a2 / f - b0 * a - a0 * b) / f2) / f;
    const double Dmu3a1 = 2 *
                          (d1 - (a1 * c + 3 * (c1 * a + b1 * b)) / f +
                           6 * a * (b1 * a - a1 * a2 / f + a1 * b) / f2) / f;
    const double Dmua0a0 = 2 * (c0 + (2 * a0 * (b0 - a0 * a / f) - b0 * a) / f) / f;
    const double Dmua1a1 = 2 * ((b1 * a + 2 * a1 * (b1 - a1 * a / f)) / f - c1) / f;
    const double Dmua0a1 = 2 * (a0 * (2 * a1 * a / f - b1) - b0 * a1) / f2;
    const double Dmu2a0a0 = 2 *
                            (d0 + (b0 * (2 * b0 - b) + 2 * c0 * (a0 - a)) / f +
                             2 * (b0 * a2 + a0 * (3 * a0 * a2 / f - 4 * b0 * a - a0 * b)) / f2) /
                            f;
    const double Dmu2a1a1 = 2 *
                            ((2 * c1 * (a + a1) + b1 * (2 * b1 + b)) / f +
                             2 * (a1 * (3 * a1 * a2 / f - a1 * b) - b1 * a * (a + 4 * a1)) / f2 -
                             d1) / f;
    const double Dmu2a0a1 = 0;
    const double Da0a0 = 2 * (b0 + (a0 * a0) / f) / f;
    const double Da1a1 = -2 * (b1 - (a1 * a1) / f) / f;
    const double Da0a1 = -2 * a0 * a1 / f2;
    int i = 0;
    for (int j = 1; j <= R - 2; j++)
        for (int k = j; k <= R - 2; k++, i++) {
            const double etk = exp(par->th[k - 1]), etj = exp(par->th[j - 1]);
            const double ark = (yi == R || yi <= k) ? 0 : etk, ar1k = yi < k + 2 ? 0 : etk;
            const double arj = (yi == R || yi <= j) ? 0 : etj, ar1j = yi < j + 2 ? 0 : etj;
            double arkj = 0, ar1kj = 0;
            if (k == j) {
                arkj = (yi > k && yi < R) ? etk : 0;
                ar1kj = yi > k + 1 ? etk : 0;
                r->Dmu3th[k - 1] = yi >= j ? wt * (Dmu3a1 * ark + Dmu3a0 * ar1k) : 0;
            }
            r->Dth2[i] = wt * (Da1a1 * ark * arj + Da0a1 * ark * ar1j + Da1 * arkj +
                               Da0a0 * ar1k * ar1j + Da0a1 * ar1k * arj + Da0 * ar1kj);
            r->Dmuth2[i] = wt * (Dmua1a1 * ark * arj + Dmua0a1 * ark * ar1j + Dmua1 * arkj +
                                 Dmua0a0 * ar1k * ar1j + Dmua0a1 * ar1k * arj + Dmua0 * ar1kj);
            r->Dmu2th2[i] = wt * (Dmu2a1a1 * ark * arj + Dmu2a0a1 * ark * ar1j + Dmu2a1 * arkj +
                                  Dmu2a0a0 * ar1k * ar1j + Dmu2a0a1 * ar1k * arj +
                                  Dmu2a0 * ar1kj);
        }
}

GG_FM void gg_fm_ocat_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                                int deriv, double *s)
{
    const int nth = par->nth;
    double al0, al1;
    if (!gg_fm_ocat_cuts(y, par, &al0, &al1)) {
        s[GG_FM_EF_DEV] += GG_FM_NAN;
        if (deriv >= 1)
            for (int i = 0; i < nth; i++) s[GG_FM_EF_DTH + i] += GG_FM_NAN;
        if (deriv >= 2)
            for (int i = 0; i < nth * (nth + 1) / 2; i++) s[GG_FM_EF_DTH2(nth) + i] += GG_FM_NAN;
        return;
    }
    const double al1mu = al1 - mu, al0mu = al0 - mu, f0 = gg_fm_ocat_fdiff(al0mu, al1mu);
    s[GG_FM_EF_DEV] += -2 * wt * log(f0);
    if (deriv < 1 || nth < 1) return;   /* ls, lsth1, lsth2: identically 0 */
    const double f = f0 < GG_FM_OCAT_XMIN ? GG_FM_OCAT_XMIN : f0;
    double a0, b0, a1, b1;
    gg_fm_ocat_ab(al1mu, &a1, &b1);
    gg_fm_ocat_ab(al0mu, &a0, &b0);
    const double Da0 = -2 * a0 / f, Da1 = 2 * a1 / f;
    const int R = nth + 2, c = (int) y;
    /* dal1/dth_k = exp(th_k) for k < c < R (k 1-based), dal0/dth_k for c >= k + 2 */
    for (int k = 1; k <= nth; k++) {
        const double etk = exp(par->th[k - 1]);
        if (c == k + 1)
            s[GG_FM_EF_DTH + k - 1] += wt * Da1 * etk;
        else if (c > k + 1 && c < R)
            s[GG_FM_EF_DTH + k - 1] += wt * (Da1 + Da0) * etk;
        else if (c == R)
            s[GG_FM_EF_DTH + k - 1] += wt * Da0 * etk;
    }
    if (deriv < 2) return;
    const double f2 = f * f;
    const double Da0a0 = 2 * (b0 + a0 * a0 / f) / f, Da1a1 = -2 * (b1 - a1 * a1 / f) / f,
                 Da0a1 = -2 * a0 * a1 / f2;
    int i = 0;
    for (int j = 1; j <= nth; j++) {
        const double etj = exp(par->th[j - 1]);
        const double arj = (c == R || c <= j) ? 0.0 : etj, ar1j = c < j + 2 ? 0.0 : etj;
        for (int k = j; k <= nth; k++, i++) {
            const double etk = exp(par->th[k - 1]);
            const double ark = (c == R || c <= k) ? 0.0 : etk, ar1k = c < k + 2 ? 0.0 : etk;
            double arkj = 0, ar1kj = 0;
            if (k == j) {
                if (c > k && c < R) arkj = etk;
                if (c > k + 1) ar1kj = etk;
            }
            /* ocat()$Dd's Dth2 term by term (its zero terms too, so that a
             * non-finite one propagates as there) */
            s[GG_FM_EF_DTH2(nth) + i] += wt * (Da1a1 * ark * arj + Da0a1 * ark * ar1j +
                                               Da1 * arkj + Da0a0 * ar1k * ar1j +
                                               Da0a1 * ar1k * arj + Da0 * ar1kj);
        }
    }
}

GG_FM double gg_fm_ocat_mustart(double y, double wt, const gg_fm_efpar *par)
{
    (void) wt;
    double al0, al1;
    if (!gg_fm_ocat_cuts(y, par, &al0, &al1)) return GG_FM_NAN;
    /* initialize: alpha extended by -2 below the first cut, +1 above the last */
    if (y == 1) al0 = -2.0;
    if (y == par->nth + 2) al1 = al0 + 1;
    return (al1 + al0) / 2;
}

#endif
