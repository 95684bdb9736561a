/* efam_cens.h -- mgcv's censored families cnorm(), clog() and cpois() for
 * efam_math.h (see there for the contract), in mgcv's own expressions.
 *
 * Their response is two columns, cbind(y, yat) (the family's initialize
 * makes yat attr(y, "censor")); each row is one of mgcv's four cases:
 *   yat == y                  uncensored, y observed;
 *   yat finite, != y          interval censored, in [min(y, yat), max(y, yat)];
 *   yat == -Inf               left censored, at most y;
 *   yat == Inf                right censored, at least y.
 * The row functions take yat beside y (the other families ignore it).
 *
 * Parameters: cnorm(), clog(): nth = 1, par->th[0] = log sigma; cpois():
 * nth = 0.  par->aux[0] = min(y > 0) over the rows (0 or 1) for a link
 * other than the identity, -Inf for the identity: the families'
 * initialize's mustart pmax(y, min(y > 0)), or y.  No scale. */
#ifndef GAMGPU_EFAM_CENS_H
#define GAMGPU_EFAM_CENS_H

#define GG_FM_CENS_NONE 0
#define GG_FM_CENS_INTERVAL 1
#define GG_FM_CENS_LEFT 2
#define GG_FM_CENS_RIGHT 3
#define GG_FM_CENS_OTHER 4   /* none of mgcv's index sets: derivatives 0 */

GG_FM int gg_fm_cens_case(double y, double yat)
{
    if (yat == y) return GG_FM_CENS_NONE;
    if (yat == -GG_FM_INF) return GG_FM_CENS_LEFT;
    if (yat == GG_FM_INF) return GG_FM_CENS_RIGHT;
    if (GG_FM_ISFINITE(yat * y)) return GG_FM_CENS_INTERVAL;
    return GG_FM_CENS_OTHER;
}

/* R's pnorm(x, log.p = TRUE) */
GG_FM double gg_fm_pnorm_log(double x)
{
    if (x > 0) return log1p(-0.5 * erfc(x / GG_FM_SQRT2));
    if (x > -30) return log(0.5 * erfc(-x / GG_FM_SQRT2));
    /* Mills' ratio's series: pnorm(x) = dnorm(x) / -x (1 - 1/x^2 + 3/x^4 ...) */
    const double r = 1 / (x * x);
    const double s = 1 - r * (1 - 3 * r * (1 - 5 * r * (1 - 7 * r * (1 - 9 * r))));
    return -0.5 * x * x - log(-x) - 0.5 * log(2 * GG_FM_PI) + log(s);
}

/* mgcv's dpnorm(x0, x1): pnorm(x1) - pnorm(x0) without cancellation */
GG_FM double gg_fm_dpnorm(double x0, double x1)
{
    if (x1 > 0 && x0 > 0) {
        const double d = x0;
        x0 = -x1;
        x1 = -d;
    }
    if (fabs(x1 - x0) < 1.490116119384765625e-8 * gg_fm_dnorm((x1 + x0) / 2))
        return gg_fm_dnorm((x1 + x0) / 2) * (x1 - x0);
    return gg_fm_pnorm(x1) - gg_fm_pnorm(x0);
}

/* clog()'s log1pexp(x), log(1 + e^x), as mgcv computes it (whose first
 * case covers x <= 37, later cases overwriting all but 33.3 < x <= 37) */
GG_FM double gg_fm_clog_log1pexp(double x)
{
    if (x > 37) return x;
    if (x > 33.3) return exp(x);
    if (x > 18) return x + exp(-x);
    if (x > -37) return log1p(exp(x));
    return exp(x);
}

/* clog()'s log1mexp(a), log(1 - e^-a); 0 for a <= 0 */
GG_FM double gg_fm_clog_log1mexp(double a)
{
    if (a > 0.6931471805599453094) return log1p(-exp(-a));
    if (a > 0) return log(-expm1(-a));
    return 0;
}

/* log P(a, x) and log Q(a, x), the regularized incomplete gamma function
 * and its complement: the series for x < a + 1, else the continued
 * fraction (modified Lentz) */
GG_FM void gg_fm_lgammainc(double a, double x, double *lp, double *lq)
{
    if (!(x > 0)) {
        *lp = -GG_FM_INF;
        *lq = 0;
        return;
    }
    const double pre = a * log(x) - x - GG_FM_LGAMMA(a);
    if (x < a + 1) {
        double term = 1 / a, sum = term;
        for (int n = 1; n < 200000; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * 1e-17) break;
        }
        *lp = pre + log(sum);
        *lq = *lp > -0.6931471805599453094 ? log(-expm1(*lp)) : log1p(-exp(*lp));
        return;
    }
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 200000; i++) {
        const double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        const double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16) break;
    }
    *lq = pre + log(h);
    *lp = *lq > -0.6931471805599453094 ? log(-expm1(*lq)) : log1p(-exp(*lq));
}

/* R's ppois(q, lambda, lower.tail, log.p = TRUE) */
GG_FM double gg_fm_ppois_log(double q, double lambda, int lower)
{
    const double k = floor(q + 1e-7);
    if (k < 0) return lower ? -GG_FM_INF : 0;
    if (lambda == 0) return lower ? 0 : -GG_FM_INF;
    double lp, lq;
    gg_fm_lgammainc(k + 1, lambda, &lp, &lq);
    return lower ? lq : lp;
}

GG_FM double gg_fm_ppois(double q, double lambda) { return exp(gg_fm_ppois_log(q, lambda, 1)); }

/* ---- cnorm() ---------------------------------------------------------- */

/* dnorm1 * v1 - dnorm0 * v0, as cnorm()'s Dd writes its censored rows,
 * each term only where its bound is (the upper bound, 1, unless right
 * censored; the lower, 0, unless left censored) */
GG_FM double gg_fm_cn_diff(int has1, double dn1, double v1, int has0, double dn0, double v0)
{
    return (has1 ? dn1 * v1 : 0) - (has0 ? dn0 * v0 : 0);
}

/* cnorm()$Dd(y, mu, theta, wt, level) for one row, theta = par->th[0] =
 * log sigma: its four cases (the two one-sided ones are its interval
 * expressions with the missing bound's terms left out, as mgcv writes
 * them) */
GG_FM void gg_fm_cnorm_dd(double y, double yat, double mu, double wt, const gg_fm_efpar *par,
                          int level, gg_fm_efdd *r)
{
    const double th = par->th[0] - log(wt) / 2;
    const double eth = exp(-th), e2th = eth * eth, e3th = e2th * eth;
    const int cs = gg_fm_cens_case(y, yat);
    r->Dmu = r->Dmu2 = r->EDmu2 = 0;
    r->Dth[0] = r->Dmuth[0] = r->Dmu3 = r->Dmu2th[0] = 0;
    r->Dmu4 = r->Dth2[0] = r->Dmuth2[0] = r->Dmu2th2[0] = r->Dmu3th[0] = 0;
    if (cs == GG_FM_CENS_OTHER) return;
    if (cs == GG_FM_CENS_NONE) {
        const double ymeth = (y - mu) * eth;
        const double Dmu = -2 * ymeth * eth;
        r->Dmu = Dmu;
        r->Dmu2 = r->EDmu2 = 2 * e2th;
        if (level < 1) return;
        r->Dth[0] = -2 * (ymeth * ymeth);
        r->Dmuth[0] = -2 * Dmu;
        r->Dmu2th[0] = -4 * e2th;
        if (level < 2) return;
        r->Dth2[0] = -2 * r->Dth[0];
        r->Dmuth2[0] = 4 * Dmu;
        r->Dmu2th2[0] = 8 * e2th;
        return;
    }
    const int h1 = cs != GG_FM_CENS_RIGHT, h0 = cs != GG_FM_CENS_LEFT;
    double m1 = 0, m0 = 0, d1 = 0, d0 = 0, D0;
    if (cs == GG_FM_CENS_INTERVAL) {
        const double y0 = y < yat ? y : yat, y1 = y < yat ? yat : y;
        m0 = (y0 - mu) * eth;
        m1 = (y1 - mu) * eth;
        D0 = gg_fm_dpnorm(m0, m1);
    } else if (cs == GG_FM_CENS_LEFT) {
        m1 = (y - mu) * eth;
        D0 = gg_fm_pnorm(m1);
    } else {
        m0 = (y - mu) * eth;
        D0 = gg_fm_pnorm(-m0);
    }
    if (h1) d1 = gg_fm_dnorm(m1);
    if (h0) d0 = gg_fm_dnorm(m0);
    const double Dmu = 2 * eth * gg_fm_cn_diff(h1, d1, 1, h0, d0, 1) / D0;
    const double Dmu2 = (Dmu * Dmu) / 2 + 2 * e2th * gg_fm_cn_diff(h1, d1, m1, h0, d0, m0) / D0;
    r->Dmu = Dmu;
    r->Dmu2 = r->EDmu2 = Dmu2;
    if (level < 1) return;
    const double m12 = m1 * m1, m13 = m12 * m1, m02 = m0 * m0, m03 = m02 * m0;
    const double Dth = 2 * gg_fm_cn_diff(h1, d1, m1, h0, d0, m0) / D0;
    const double Dmuth = Dmu * Dth / 2 + 2 * eth * gg_fm_cn_diff(h1, d1, m12 - 1, h0, d0, m02 - 1) / D0;
    const double Dmu3 = Dmu * (3 * Dmu2 / 2 - (Dmu * Dmu) / 4 - e2th) +
                        2 * e3th * gg_fm_cn_diff(h1, d1, m12, h0, d0, m02) / D0;
    const double Dmu2th =
        (Dmu2 * Dth + Dmu * Dmuth) / 2 +
        eth * gg_fm_cn_diff(h1, d1, 2 * m13 * eth + Dmu * m12 - 6 * m1 * eth - Dmu,
                            h0, d0, 2 * m03 * eth + Dmu * m02 - 6 * m0 * eth - Dmu) / D0;
    r->Dth[0] = Dth;
    r->Dmuth[0] = Dmuth;
    r->Dmu3 = Dmu3;
    r->Dmu2th[0] = Dmu2th;
    /* the interval's saturated likelihood's part of Dth and Dth2 */
    double y10 = 0, Dls = 1;
    if (cs == GG_FM_CENS_INTERVAL) {
        const double y0 = y < yat ? y : yat, y1 = y < yat ? yat : y;
        y10 = (y1 - y0) * eth / 2;
        Dls = gg_fm_dpnorm(-y10, y10);
        r->Dth[0] = Dth - 4 * gg_fm_dnorm(y10) * y10 / Dls;
    }
    if (level < 2) return;
    const double m14 = m13 * m1, m15 = m12 * m13, m04 = m03 * m0, m05 = m02 * m03;
    r->Dmu4 = Dmu2 * (3 * Dmu2 / 2 - (Dmu * Dmu) / 4 - e2th) + Dmu * (3 * Dmu3 / 2 - Dmu * Dmu2 / 2) +
              e3th * gg_fm_cn_diff(h1, d1, 2 * m13 * eth + Dmu * m12 - 4 * m1 * eth,
                                   h0, d0, 2 * m03 * eth + Dmu * m02 - 4 * m0 * eth) / D0;
    const double Dth2 = (Dth * Dth) / 2 + 2 * gg_fm_cn_diff(h1, d1, m13 - m1, h0, d0, m03 - m0) / D0;
    const double Dmuth2 =
        (Dmuth * Dth + Dmu * Dth2) / 2 +
        eth * gg_fm_cn_diff(h1, d1, 2 * m14 + (Dth - 8) * m12 + 2 - Dth,
                            h0, d0, 2 * m04 + (Dth - 8) * m02 + 2 - Dth) / D0;
    r->Dmuth2[0] = Dmuth2;
    r->Dmu2th2[0] =
        (Dmu2th * Dth + (Dmuth * Dmuth) + Dmu2 * Dth2 + Dmu * Dmuth2) / 2 +
        0.5 * eth *
            gg_fm_cn_diff(h1, d1,
                          4 * m15 * eth + 2 * Dmu * m14 + 2 * (Dth - 16) * m13 * eth +
                              2 * (18 - 3 * Dth) * m1 * eth + (2 * Dmuth + (Dth - 8) * Dmu) * m12 +
                              (2 - Dth) * Dmu - 2 * Dmuth,
                          h0, d0,
                          4 * m05 * eth + 2 * Dmu * m04 + 2 * (Dth - 16) * m03 * eth +
                              2 * (18 - 3 * Dth) * m0 * eth + (2 * Dmuth + (Dth - 8) * Dmu) * m02 +
                              (2 - Dth) * Dmu - 2 * Dmuth) / D0;
    const double DD = Dmu * Dmu + 2 * Dmu2;
    r->Dmu3th[0] = Dmu3 * Dth / 2 + Dmu2 * Dmuth + Dmu * Dmu2th / 2 +
                   0.5 * eth *
                       gg_fm_cn_diff(h1, d1,
                                     4 * m14 * e2th + 4 * Dmu * m13 * eth - 12 * Dmu * m1 * eth +
                                         (DD - 24 * e2th) * m12 + 12 * e2th - DD,
                                     h0, d0,
                                     4 * m04 * e2th + 4 * Dmu * m03 * eth - 12 * Dmu * m0 * eth +
                                         (DD - 24 * e2th) * m02 + 12 * e2th - DD) / D0;
    r->Dth2[0] = Dth2;
    if (cs == GG_FM_CENS_INTERVAL) {
        const double q = gg_fm_dnorm(y10) * y10 / Dls;
        r->Dth2[0] = Dth2 - 8 * (q * q) - 4 * gg_fm_dnorm(y10) * (y10 * y10 * y10 - y10) / Dls;
    }
}

/* cnorm()$dev.resids for one row */
GG_FM double gg_fm_cnorm_dev(double y, double yat, double mu, double wt, const gg_fm_efpar *par)
{
    const double th = par->th[0] - log(wt) / 2, eth = exp(-th);
    switch (gg_fm_cens_case(y, yat)) {
    case GG_FM_CENS_NONE: {
        const double r = y - mu;
        return (r * r) * exp(-2 * th);
    }
    case GG_FM_CENS_INTERVAL: {
        const double y0 = y < yat ? y : yat, y1 = y < yat ? yat : y;
        const double y10 = (y1 - y0) * eth / 2;
        return 2 * log(gg_fm_dpnorm(-y10, y10)) -
               2 * log(gg_fm_dpnorm((y0 - mu) * eth, (y1 - mu) * eth));
    }
    case GG_FM_CENS_LEFT: return -2 * gg_fm_pnorm_log((y - mu) * eth);
    case GG_FM_CENS_RIGHT: return -2 * gg_fm_pnorm_log(-(y - mu) * eth);
    }
    return 0;
}

/* cnorm()$ls's row terms: the saturated log likelihood and its first and
 * second derivatives in theta */
GG_FM void gg_fm_cnorm_ls(double y, double yat, double w, const gg_fm_efpar *par, double *l,
                          double *l1, double *l2)
{
    const double th = par->th[0] - log(w) / 2;
    *l = *l1 = *l2 = 0;
    const int cs = gg_fm_cens_case(y, yat);
    if (cs == GG_FM_CENS_NONE) {
        *l = log(2 * GG_FM_PI) / 2 - th;
        *l1 = -1;
    } else if (cs == GG_FM_CENS_INTERVAL) {
        const double y0 = y < yat ? y : yat, y1 = y < yat ? yat : y;
        const double y10 = (y1 - y0) * exp(-th) / 2, d0 = gg_fm_dpnorm(-y10, y10);
        *l = log(d0);
        *l1 = -2 * gg_fm_dnorm(y10) * y10 / d0;
        *l2 = -(*l1 * *l1) - 2 * gg_fm_dnorm(y10) * (y10 * y10) * (y1 - y0) / 2;
    }
}

/* ---- clog() ----------------------------------------------------------- */

/* clog()$Dd(y, mu, theta, wt, level) for one row, theta = par->th[0] =
 * log sigma */
GG_FM void gg_fm_clog_dd(double y, double yat, double mu, double wt, const gg_fm_efpar *par,
                         int level, gg_fm_efdd *r)
{
    const double si = exp(par->th[0]) / sqrt(wt);
    const int cs = gg_fm_cens_case(y, yat);
    double Dmu = 0, Dmu2 = 0, Dth = 0, Dmuth = 0, Dmu3 = 0, Dmu2th = 0;
    double Dmu4 = 0, Dth2 = 0, Dmuth2 = 0, Dmu2th2 = 0, Dmu3th = 0;
    if (cs == GG_FM_CENS_NONE) {
        const double ym = y - mu, al = 1 / (2 + expm1(ym / si));
        Dmu = (2 / si) * (2 * al - 1);
        Dmu2 = (4 / (si * si)) * al * (1 - al);
        if (level > 0) {
            Dmuth = -Dmu + ym * Dmu2;
            Dth = ym * Dmu;
            Dmu3 = (-1.0 / 2) * Dmu * Dmu2;
            Dmu2th = -2 * Dmu2 + (1.0 / 2) * (mu - y) * Dmu * Dmu2;
        }
        if (level > 1) {
            Dth2 = ym * Dmuth;
            Dmuth2 = -Dmuth + ym * Dmu2th;
            Dmu4 = (-1.0 / 2) * ((Dmu2 * Dmu2) + Dmu * Dmu3);
            Dmu3th = (-1.0 / 2) * (Dmu2 * Dmuth + Dmu * Dmu2th);
            Dmu2th2 = -2 * Dmu2th + (1.0 / 2) * (mu - y) * (Dmu * Dmu2th + Dmu2 * Dmuth);
        }
    } else if (cs == GG_FM_CENS_INTERVAL) {
        const double yl = y < yat ? y : yat, yr = y < yat ? yat : y;
        const double si2 = si * si, si3 = pow(si, 3);
        const double rm = yr - mu, lm = yl - mu, d = yr - yl;
        const double al = 1 / (2 + expm1(-rm / si)), be = 1 / (2 + expm1(-lm / si));
        const double al2 = al * al, be2 = be * be, al3 = pow(al, 3), be3 = pow(be, 3);
        Dmu = (2 / si) * (1 - al - be);
        Dmu2 = (2 / si2) * (al - al2 + be - be2);
        if (level > 0) {
            Dmuth = -Dmu + (2 / si2) * (rm * (al - al2) + lm * (be - be2));
            const double lmth = d * (1 / si) * (1 / (expm1(-d / (2 * si)) - expm1(d / (2 * si))));
            const double lth = (1 / si) * (-d * (1 / (expm1(d / si))) +
                                           lm * (1 / (expm1((mu - yl) / si) + 2)) -
                                           rm * (1 / (expm1(rm / si) + 2)));
            Dth = 2 * (lmth - lth);
            Dmu3 = (4 / si2) * (al2 - al3 + be2 - be3) - Dmu2;
            Dmu2th = -2 * Dmu2 + (-1 / si) * (Dmuth + Dmu) +
                     (4 / si3) * (rm * (al2 - al3) + lm * (be2 - be3));
            if (level > 1) {
                const double q = 1 / (expm1(-d / (2 * si)) + -expm1(d / (2 * si)));
                const double lmth2 = -lmth - (1.0 / 2) * (d * d) * (1 / si2) * (q * q) *
                                                 (2 + expm1(-d / (2 * si)) + expm1(d / (2 * si)));
                const double lth2 =
                    -lth - (1 / si2) * ((d * d) * (1 / (expm1(d / si))) * (1 / (-expm1(-d / si))) +
                                        (lm * lm) * (1 / (expm1((mu - yl) / si) + 2)) *
                                            (1 / (expm1(lm / si) + 2)) +
                                        (rm * rm) * (1 / (expm1(rm / si) + 2)) *
                                            (1 / (expm1((mu - yr) / si) + 2)));
                Dth2 = 2 * (lmth2 - lth2);
                Dmuth2 = -3 * Dmuth - 2 * Dmu +
                         (-2 / si3) * ((rm * rm) * (1 - 2 * al) * (al - al2) +
                                       (lm * lm) * (1 - 2 * be) * (be - be2));
                Dmu4 = (-4 / si3) * ((2 * al - 3 * al2) * (al - al2) + (2 * be - 3 * be2) * (be - be2)) -
                       Dmu3;
                Dmu3th = -2 * Dmu3 + 2 * (1 / si3) *
                                         (rm * (al - al2) * (1 - 6 * al + 6 * al2) +
                                          lm * (be - be2) * (1 - 6 * be + 6 * be2));
                Dmu2th2 = -2 * Dmu2th + (1 / si) * (Dmu - Dmuth2) +
                          (-12 / si3) * (rm * (al2 - al3) + lm * (be2 - be3)) +
                          (-4 / pow(si, 4)) * ((rm * rm) * (2 * al - 3 * al2) * (al - al2) +
                                               (lm * lm) * (2 * be - 3 * be2) * (be - be2));
            }
        }
    } else if (cs == GG_FM_CENS_LEFT) {
        const double rm = y - mu, al = 1 / (2 + expm1(-rm / si));
        Dmu = (2 / si) * (1 - al);
        Dmu2 = (2 / (si * si)) * (al - al * al);
        if (level > 0) {
            Dmuth = -Dmu + rm * Dmu2;
            Dth = rm * Dmu;
            Dmu3 = (1 / si) * (2 * al - 1) * Dmu2;
            Dmu2th = -2 * Dmu2 + (1 / si) * rm * (2 * al - 1) * Dmu2;
        }
        if (level > 1) {
            Dth2 = rm * Dmuth;
            Dmuth2 = -Dmuth + rm * Dmu2th;
            Dmu4 = -(Dmu2 * Dmu2) + (1 / si) * (2 * al - 1) * Dmu3;
            Dmu3th = -rm * (Dmu2 * Dmu2) + (1 / si) * (2 * al - 1) * (Dmu2th - Dmu2);
            Dmu2th2 = -2 * Dmu2th - (rm * rm) * (Dmu2 * Dmu2) +
                      (1 / si) * rm * (2 * al - 1) * (Dmu2th - Dmu2);
        }
    } else if (cs == GG_FM_CENS_RIGHT) {
        const double lm = y - mu, be = 1 / (2 + expm1(-lm / si));
        Dmu = -(2 / si) * be;
        Dmu2 = (2 / (si * si)) * (be - be * be);
        if (level > 0) {
            Dmuth = -Dmu + lm * Dmu2;
            Dth = lm * Dmu;
            Dmu3 = (-1 / si) * (1 - 2 * be) * Dmu2;
            Dmu2th = -(2 + (1 / si) * lm * (1 - 2 * be)) * Dmu2;
        }
        if (level > 1) {
            Dth2 = lm * Dmuth;
            Dmuth2 = -Dmuth + lm * Dmu2th;
            Dmu4 = -(Dmu2 * Dmu2) + (-1 / si) * (1 - 2 * be) * Dmu3;
            Dmu3th = (1 / si) * (1 - 2 * be) * (Dmu2 - Dmu2th) - lm * (Dmu2 * Dmu2);
            Dmu2th2 = (1 / si) * lm * (1 - 2 * be) * (Dmu2 - Dmu2th) + -(lm * lm) * (Dmu2 * Dmu2) -
                      2 * Dmu2th;
        }
    }
    r->Dmu = Dmu;
    r->Dmu2 = Dmu2;
    r->EDmu2 = Dmu2 < 0 ? 0 : Dmu2;
    r->Dth[0] = Dth;
    r->Dmuth[0] = Dmuth;
    r->Dmu3 = Dmu3;
    r->Dmu2th[0] = Dmu2th;
    r->Dmu4 = Dmu4;
    r->Dth2[0] = Dth2;
    r->Dmuth2[0] = Dmuth2;
    r->Dmu2th2[0] = Dmu2th2;
    r->Dmu3th[0] = Dmu3th;
}

/* clog()$dev.resids for one row */
GG_FM double gg_fm_clog_dev(double y, double yat, double mu, double wt, const gg_fm_efpar *par)
{
    const double si = exp(par->th[0]) / sqrt(wt);
    switch (gg_fm_cens_case(y, yat)) {
    case GG_FM_CENS_NONE:
        return 2 * (-2 * 0.6931471805599453094 + ((y - mu) / si) +
                    2 * gg_fm_clog_log1pexp(-(y - mu) / si));
    case GG_FM_CENS_INTERVAL: {
        const double yl = y < yat ? y : yat, yr = y < yat ? yat : y;
        const double lm = ((yr - yl) / (2 * si)) + gg_fm_clog_log1mexp((yr - yl) / (2 * si)) -
                          gg_fm_clog_log1pexp((yr - yl) / (2 * si));
        const double l = gg_fm_clog_log1mexp((yr - yl) / si) - gg_fm_clog_log1pexp((yl - mu) / si) -
                         gg_fm_clog_log1pexp(-(yr - mu) / si);
        return 2 * (lm - l);
    }
    case GG_FM_CENS_LEFT: return 2 * (0 + gg_fm_clog_log1pexp(-(y - mu) / si));
    case GG_FM_CENS_RIGHT:
        return 2 * (0 - ((-(y - mu) / si) - gg_fm_clog_log1pexp(-(y - mu) / si)));
    }
    return 0;
}

/* clog()$ls's row terms */
GG_FM void gg_fm_clog_ls(double y, double yat, double w, const gg_fm_efpar *par, double *l,
                         double *l1, double *l2)
{
    const double si = exp(par->th[0]) / sqrt(w);
    *l = *l1 = *l2 = 0;
    const int cs = gg_fm_cens_case(y, yat);
    if (cs == GG_FM_CENS_NONE) {
        *l = -log1p(si - 1) - 2 * 0.6931471805599453094;
        *l1 = -1;
    } else if (cs == GG_FM_CENS_INTERVAL) {
        const double yl = y < yat ? y : yat, yr = y < yat ? yat : y, d = yr - yl;
        *l = (d / (2 * si)) + gg_fm_clog_log1mexp(d / (2 * si)) - gg_fm_clog_log1pexp(d / (2 * si));
        const double lmth = d * (1 / si) * (1 / (expm1(-d / (2 * si)) - expm1(d / (2 * si))));
        const double q = 1 / (expm1(-d / (2 * si)) + -expm1(d / (2 * si)));
        *l1 = lmth;
        *l2 = -lmth - (1.0 / 2) * (d * d) * (1 / (si * si)) * (q * q) *
                          (2 + expm1(-d / (2 * si)) + expm1(d / (2 * si)));
    }
}

/* ---- cpois() ---------------------------------------------------------- */

/* cpois()$Dd(y, mu, theta, wt, level) for one row (no theta; the prior
 * weights unused, as mgcv's).  An uncensored row's ratios
 * dpois(y - k, mu) / dpois(y, mu) are y (y - 1) ... (y - k + 1) / mu^k. */
GG_FM void gg_fm_cpois_dd(double y, double yat, double mu, double wt, const gg_fm_efpar *par,
                          int level, gg_fm_efdd *r)
{
    (void) wt;
    (void) par;
    double f1 = 0, f2 = 0, f3 = 0, f4 = 0;
    const int cs = gg_fm_cens_case(y, yat);
    if (cs == GG_FM_CENS_NONE) {
        f1 = y / mu;
        f2 = f1 * ((y - 1) / mu);
        f3 = f2 * ((y - 2) / mu);
        f4 = f3 * ((y - 3) / mu);
        if (y < 1) f1 = 0;
        if (y < 2) f2 = 0;
        if (y < 3) f3 = 0;
        if (y < 4) f4 = 0;
    } else if (cs == GG_FM_CENS_INTERVAL) {
        const double y0 = y < yat ? y : yat, y1 = y < yat ? yat : y;
        const double g = gg_fm_ppois(y1, mu) - gg_fm_ppois(y0, mu);
        f1 = (gg_fm_ppois(y1 - 1, mu) - gg_fm_ppois(y0 - 1, mu)) / g;
        f2 = (gg_fm_ppois(y1 - 2, mu) - gg_fm_ppois(y0 - 2, mu)) / g;
        if (level > 0) f3 = (gg_fm_ppois(y1 - 3, mu) - gg_fm_ppois(y0 - 3, mu)) / g;
        if (level > 1) f4 = (gg_fm_ppois(y1 - 4, mu) - gg_fm_ppois(y0 - 4, mu)) / g;
    } else if (cs == GG_FM_CENS_LEFT || cs == GG_FM_CENS_RIGHT) {
        const int lt = cs == GG_FM_CENS_LEFT;
        const double lf = gg_fm_ppois_log(y, mu, lt);
        f1 = exp(gg_fm_ppois_log(y - 1, mu, lt) - lf);
        f2 = exp(gg_fm_ppois_log(y - 2, mu, lt) - lf);
        if (level > 0) f3 = exp(gg_fm_ppois_log(y - 3, mu, lt) - lf);
        if (level > 1) f4 = exp(gg_fm_ppois_log(y - 4, mu, lt) - lf);
    }
    r->Dmu = -2 * (f1 - 1);
    r->Dmu2 = r->EDmu2 = -2 * (f2 - (f1 * f1));
    if (level > 0) r->Dmu3 = -2 * (f3 - 3 * f1 * f2 + 2 * pow(f1, 3));
    if (level > 1)
        r->Dmu4 = -2 * (f4 - 4 * f3 * f1 + 12 * (f1 * f1) * f2 - 3 * (f2 * f2) - 6 * pow(f1, 4));
}

/* cpois()'s saturated mean of an interval row, as its dev.resids and ls */
GG_FM double gg_fm_cpois_musat(double y0, double y1)
{
    const double a = floor(y1), b = floor(y0);
    return exp((GG_FM_LGAMMA(a + 1) - GG_FM_LGAMMA(b + 1)) / (a - b));
}

/* cpois()$dev.resids for one row */
GG_FM double gg_fm_cpois_dev(double y, double yat, double mu)
{
    switch (gg_fm_cens_case(y, yat)) {
    case GG_FM_CENS_NONE: return 2 * (gg_fm_y_log_y(y, mu) - (y - mu));
    case GG_FM_CENS_INTERVAL: {
        const double y0 = y < yat ? y : yat, y1 = y < yat ? yat : y;
        const double ms = gg_fm_cpois_musat(y0, y1);
        return 2 * (log(gg_fm_ppois(y1, ms) - gg_fm_ppois(y0, ms)) -
                    log(gg_fm_ppois(y1, mu) - gg_fm_ppois(y0, mu)));
    }
    case GG_FM_CENS_LEFT: return -2 * gg_fm_ppois_log(y, mu, 1);
    case GG_FM_CENS_RIGHT: return -2 * gg_fm_ppois_log(y, mu, 0);
    }
    return 0;
}

/* cpois()$ls's row term */
GG_FM double gg_fm_cpois_ls(double y, double yat)
{
    switch (gg_fm_cens_case(y, yat)) {
    case GG_FM_CENS_NONE: return (y > 0 ? y * log(y) : 0) - y - GG_FM_LGAMMA(y + 1);
    case GG_FM_CENS_INTERVAL: {
        const double y0 = y < yat ? y : yat, y1 = y < yat ? yat : y;
        const double ms = gg_fm_cpois_musat(y0, y1);
        return log(gg_fm_ppois(y1, ms) - gg_fm_ppois(y0, ms));
    }
    }
    return 0;
}

/* ---- the three as efam_math.h takes them ------------------------------ */

GG_FM void gg_fm_cens_dd(int f, double y, double yat, double mu, double wt,
                         const gg_fm_efpar *par, int level, gg_fm_efdd *r)
{
    if (f == GG_FM_CNORM) gg_fm_cnorm_dd(y, yat, mu, wt, par, level, r);
    else if (f == GG_FM_CLOG) gg_fm_clog_dd(y, yat, mu, wt, par, level, r);
    else gg_fm_cpois_dd(y, yat, mu, wt, par, level, r);
}

GG_FM double gg_fm_cens_dev(int f, double y, double yat, double mu, double wt,
                            const gg_fm_efpar *par)
{
    if (f == GG_FM_CNORM) return gg_fm_cnorm_dev(y, yat, mu, wt, par);
    if (f == GG_FM_CLOG) return gg_fm_clog_dev(y, yat, mu, wt, par);
    return gg_fm_cpois_dev(y, yat, mu);
}

GG_FM double gg_fm_cens_dd0(int f, double y, double yat, double mu, double wt,
                            const gg_fm_efpar *par, double *Dmu, double *EDmu2)
{
    gg_fm_efdd r;
    gg_fm_cens_dd(f, y, yat, mu, wt, par, 0, &r);
    *Dmu = r.Dmu;
    *EDmu2 = r.EDmu2;
    return gg_fm_cens_dev(f, y, yat, mu, wt, par);
}

GG_FM void gg_fm_cens_theta_row(int f, double y, double yat, double mu, double wt,
                                const gg_fm_efpar *par, int deriv, double *s)
{
    s[GG_FM_EF_DEV] += gg_fm_cens_dev(f, y, yat, mu, wt, par);
    if (deriv < 0) return;
    if (f == GG_FM_CPOIS) {
        s[GG_FM_EF_LS] += gg_fm_cpois_ls(y, yat);
        return;
    }
    double l, l1, l2;
    if (f == GG_FM_CNORM) gg_fm_cnorm_ls(y, yat, wt, par, &l, &l1, &l2);
    else gg_fm_clog_ls(y, yat, wt, par, &l, &l1, &l2);
    s[GG_FM_EF_LS] += l;
    if (deriv < 1) return;
    gg_fm_efdd r;
    gg_fm_cens_dd(f, y, yat, mu, wt, par, deriv >= 2 ? 2 : 1, &r);
    s[GG_FM_EF_DTH] += r.Dth[0];
    s[GG_FM_EF_LSTH1(1)] += l1;
    if (deriv < 2) return;
    s[GG_FM_EF_DTH2(1)] += r.Dth2[0];
    s[GG_FM_EF_LSTH2(1, 1)] += l2;
}

/* the families' initialize: pmax(y, min(y > 0)) for a link other than the
 * identity, y for the identity: par->aux[0] is min(y > 0), or -Inf */
GG_FM double gg_fm_cens_mustart(double y, const gg_fm_efpar *par)
{
    return y > par->aux[0] ? y : par->aux[0];
}

#endif
