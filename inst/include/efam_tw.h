/* efam_tw.h -- mgcv's tw() (Tweedie, power p and scale estimated) for
 * efam_math.h (see there for the contract).
 *
 * tw()'s working parameter is theta = par->th[0], with
 *     p = (a + b exp(th)) / (1 + exp(th))  in (a, b),
 * in mgcv's two expressions (exp(-th) for th > 0, exp(th) otherwise, so
 * that neither overflows); a = par->aux[0], b = par->aux[1] (tw()'s
 * defaults 1.01, 1.99; ls() needs 1 < a < b < 2), log scale =
 * par->log_scale.  Here live
 *   - p and its theta derivatives (gg_fm_tw_p, gg_fm_tw_dpth);
 *   - dev.resids and Dd (level 0's Dmu, EDmu2; level 2's Dth, Dth2) in
 *     mgcv's expressions;
 *   - the Tweedie log density with its first and second derivatives with
 *     respect to rho = log(scale) and theta (gg_fm_tw_ld: the columns 1-6
 *     of mgcv::ldTweedie(y, mu, rho = , theta = , a = , b = )), its
 *     infinite series (gg_fm_tw_series) summed here from the mathematics
 *     (Dunn & Smyth 2005, Statistics and Computing 15:267-280), not from
 *     mgcv's code, and more accurately (see there);
 *   - the three functions of the contract.
 * Every loop is bounded (the series by GG_FM_TW_MAXTERMS, the others by
 * small constants) and nothing allocates or recurses, so the same code runs
 * in a GPU thread. */
#ifndef GAMGPU_EFAM_TW_H
#define GAMGPU_EFAM_TW_H

/* The series goes each way from its largest term until a term is below
 * GG_FM_TW_TOL times the largest (and the terms are falling), at most
 * GG_FM_TW_MAXTERMS terms each way.  It needs about 18 sd terms, sd =
 * sqrt(J (p - 1)), J = y^(2-p) / (scale (2 - p)) (see gg_fm_tw_series):
 * at most ~600 for scale >= 0.1, 1 < p < 2 and y <= 1e3; the cap stops
 * only the series of a density that is nearly a spike (J (p - 1) > ~1e8,
 * e.g. scale (2 - p) < 1e-8 at y ~ 1), whose results are then NaN. */
#define GG_FM_TW_TOL 1e-18
#define GG_FM_TW_MAXTERMS 100000

/* p at theta, as tw()'s getTheta(TRUE), Dd, dev.resids and ldTweedie. */
GG_FM double gg_fm_tw_p(double th, double a, double b)
{
    if (th > 0) {
        const double e = exp(-th);
        return (b + a * e) / (1 + e);
    }
    const double e = exp(th);
    return (b * e + a) / (e + 1);
}

/* dp/dtheta and d2p/dtheta2 as ldTweedie writes them (Dd writes its
 * second derivative with exp(-2 th), which is the same to rounding). */
GG_FM void gg_fm_tw_dpth(double th, double a, double b, double *d1, double *d2)
{
    const double e = th > 0 ? exp(-th) : exp(th);
    const double e1 = e + 1;
    *d1 = e * (b - a) / (e1 * e1);
    *d2 = th > 0 ? ((a - b) * e + (b - a) * e * e) / (e1 * e1 * e1)
                 : ((a - b) * e * e + (b - a) * e) / (e1 * e1 * e1);
}

/* tw()$dev.resids(y, mu, wt, theta) at power p:
 * 2 wt (y (y1^(1-p) - mu^(1-p)) / (1-p) - (y^(2-p) - mu^(2-p)) / (2-p)),
 * y1 = y + (y == 0), as pmax(., 0) clamps it (NaN stays NaN); R's x^y as
 * gg_fm_rpow, so that the rows equal mgcv's to rounding. */
GG_FM double gg_fm_tw_dev(double y, double mu, double wt, double p)
{
    const double y1 = y + (y == 0);
    const double th = p == 1 ? log(y1 / mu)
                             : (gg_fm_rpow(y1, 1 - p) - gg_fm_rpow(mu, 1 - p)) / (1 - p);
    const double ka = p == 2 ? log(y1 / mu)
                             : (gg_fm_rpow(y, 2 - p) - gg_fm_rpow(mu, 2 - p)) / (2 - p);
    const double d = 2 * (y * th - ka) * wt;
    return d < 0 ? 0.0 : d;
}

/* Stirling's series: lgamma(x) = (x - 1/2) log x - x + log(2 pi) / 2 + corr(x),
 * corr(x) = sum_k B_2k / (2k (2k - 1) x^(2k-1)), to x^-13: error below
 * 3e-17 for x >= 10 (the first term left out). */
GG_FM double gg_fm_tw_stirling_corr(double x)
{
    const double ix = 1 / x, f = ix * ix;
    return (1.0 / 12 + f * (-1.0 / 360 + f * (1.0 / 1260 + f * (-1.0 / 1680 + f * (1.0 / 1188 +
            f * (-691.0 / 360360 + f * (1.0 / 156))))))) * ix;
}

/* log x - digamma(x) and (want1) trigamma(x), x > 0: for x < 10 shifted
 * by the recurrences to x + n >= 10, then the asymptotic series (A&S
 * 6.3.18, 6.4.12); log x - digamma(x) as such, so that log x and
 * digamma's log x do not cancel. */
GG_FM void gg_fm_tw_psis(double x, int want1, double *lmpsi, double *psi1)
{
    double s0 = 0, s1 = 0, z = x;
    while (z < 10) {                   /* at most 10 steps */
        const double t = 1 / z;
        s0 += t;
        s1 += t * t;
        z += 1;
    }
    const double iz = 1 / z, f = iz * iz;
    double r = 0.5 * iz + f * (1.0 / 12 + f * (-1.0 / 120 + f * (1.0 / 252 + f * (-1.0 / 240 +
               f * (1.0 / 132 + f * (-691.0 / 32760 + f * (1.0 / 12)))))));
    if (z != x) r += s0 - log1p((z - x) / x);
    *lmpsi = r;
    if (want1)
        *psi1 = s1 + (1.0 + f * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 +
                f * (5.0 / 66 + f * (-691.0 / 2730 + f * (7.0 / 6)))))))) * iz + 0.5 * f;
}

/* x log(x / X) - (x - X) >= 0 for x, X > 0, given d = x - X: near x = X
 * from log(x / X) = 2 atanh(v), v = d / (x + X), as
 *   d v + 2 x v^3 (1/3 + v^2/5 + v^4/7 + ...)
 * (terms of one sign: relative accuracy, where the direct form keeps only
 * that of d); for |v| < 0.1 the terms to v^16 leave < 1e-17 relative. */
GG_FM double gg_fm_tw_xlogx(double x, double X, double d)
{
    const double v = d / (x + X);
    if (!(fabs(v) < 0.1)) return x * log1p(d / X) - d;
    const double w = v * v;
    const double s = 1.0 / 3 + w * (1.0 / 5 + w * (1.0 / 7 + w * (1.0 / 9 + w * (1.0 / 11 +
                     w * (1.0 / 13 + w * (1.0 / 15 + w * (1.0 / 17)))))));
    return d * v + 2 * x * v * w * s;
}

/* q(x, X) = x log X - lgamma(x) - X, given d = x - X (exactly as the
 * caller knows it) and log X: the log of a Poisson-like kernel, near 0
 * around its maximum x ~ X however large x is.  For x >= 10 by Stirling,
 *   q = -(x log(x / X) - d) + log(x) / 2 - log(2 pi) / 2 - corr(x),
 * whose parts are O(d^2 / X) rather than O(x log x); else directly. */
GG_FM double gg_fm_tw_q(double x, double X, double d, double logX)
{
    if (x < 10) return x * logX - GG_FM_LGAMMA(x) - X;
    return -gg_fm_tw_xlogx(x, X, d) + 0.5 * log(x) - 0.918938533204672741780329736406 -
           gg_fm_tw_stirling_corr(x);
}

/* The Tweedie log density at mu = y > 0 by its series (Dunn & Smyth 2005),
 * with its derivatives in rho = log(phi) and p.  With nu = (2 - p) / (p - 1)
 * and J = y^(2-p) / (phi (2 - p)) (the Poisson mean at mu = y; 1 + nu =
 * 1 / (p - 1)), the density is a compound Poisson-gamma:
 *   log f(y; mu = y) = -log y + log sum_{j >= 1} exp(h_j),
 *   h_j = [j log J - lgamma(j + 1) - J] + [j nu log(J nu) - lgamma(j nu) - J nu]
 *       = q(j, J) - log j + q(j nu, J nu)
 * (Dunn & Smyth's W_j times the exponential-family factor
 * exp(-J (1 + nu)) at mu = y, which is mgcv's l.base).  Written so, the
 * large parts of log W_j and of l.base cancel inside q() rather than
 * after the sum, which keeps ~14 digits where mgcv's split loses up to
 * 6 (p near 1, small phi).  h_j is concave in j with its maximum near J
 * (Stirling) and falls off like a normal log density with sd = sqrt(J (p -
 * 1)): the sum starts at j0 = max(1, round(J)), goes up and then down
 * until a term falls below GG_FM_TW_TOL of the largest (~9 sd each way),
 * and sums c_j = exp(h_j - h_j0).
 *
 * The derivatives of h_j (u = 1/(2-p) - log y = dlog J/dp, pm1 = p - 1,
 * B_j = log(J nu) - digamma(j nu), psi1 = trigamma):
 *   hr_j  = dh_j/drho      = (J - j) / pm1,       dh_j/drho2 = -J / pm1,
 *   hp_j  = dh_j/dp        = N_j / pm1^2,  N_j = (j - J)(u pm1 - 1) - j B_j,
 *   hpp_j = d2h_j/dp2      = N'_j / pm1^2 - 2 hp_j / pm1,
 *           N'_j = -J u (u pm1 - 1) + (j - J)(pm1 / (2-p)^2 + u)
 *                  - j (u - 1 / (pm1 (2-p)) + j psi1(j nu) / pm1^2),
 *   hrp_j = d2h_j/drho dp  = (J u pm1 - (J - j)) / pm1^2,
 * with B_j = -log1p((j - J) / J) + (log(j nu) - digamma(j nu)), free of
 * cancellation.  With weights w_j = exp(h_j) / sum exp(h), L = log sum
 * exp(h_j) has L_x = E[h_x] and L_xy = E[h_xy] + Cov(h_x, h_y); the
 * covariances come from sums of c_j (h_x,j - h_x,j0)(h_y,j - h_y,j0) so
 * that they do not cancel in E[h_x h_y] - E[h_x] E[h_y].  (Where J is
 * large the density is nearly normal and its second derivatives are small
 * differences of E and Cov terms of size ~J / pm1^k: they are accurate to
 * ~1e-15 of that size rather than of their own, as from any series.)
 *
 * out[0..5]: L, L_rho, L_rho2, L_p, L_p2, L_rho_p; nd (0, 1, 2) the
 * derivatives wanted (the others are left 0).  Returns 0, or 1 (out NaN)
 * when the series did not converge within GG_FM_TW_MAXTERMS terms. */
GG_FM int gg_fm_tw_series(double y, double p, double rho, int nd, double *out)
{
    const double pm1 = p - 1, twop = 2 - p, nu = twop / pm1;
    const double logJ = twop * log(y) - rho - log(twop), J = exp(logJ);
    const double Jn = J * nu, logJn = logJ + log(nu);
    const double u = 1 / twop - log(y), upm1 = u * pm1 - 1;
    const double ipm2 = 1 / (pm1 * pm1);
    double j0 = floor(J + 0.5);
    if (j0 < 1) j0 = 1;
    /* y, p or rho not finite (J NaN), J == 0 (underflow), or j0 + 1 not exact */
    if (!(J > 0 && j0 < 4e15 && nu > 0 && GG_FM_ISFINITE(u))) {
        for (int k = 0; k < 6; k++) out[k] = GG_FM_NAN;
        return 1;
    }
    for (int k = 0; k < 6; k++) out[k] = 0;
    /* h_j = P_j + G_j: P_j = q(j, J) - log j (the Poisson part) by its
     * recurrence P_j = P_(j-1) - log(j / J), exact increments whose sum
     * stays accurate; log(j / J) = log1p((j - J) / J) is also B_j's;
     * G_j = q(j nu, J nu) directly. */
    const double l0 = log1p((j0 - J) / J);
    const double G0 = gg_fm_tw_q(j0 * nu, Jn, (j0 - J) * nu, logJn);
    const double h0 = gg_fm_tw_q(j0, J, j0 - J, logJ) - log(j0) + G0;
    double hp0 = 0;
    if (nd > 0) {
        double lmpsi, psi1;
        gg_fm_tw_psis(j0 * nu, 0, &lmpsi, &psi1);
        hp0 = ((j0 - J) * upm1 - j0 * (lmpsi - l0)) * ipm2;
    }
    /* S0 = sum c_j; Sr, Sp: sums of c_j (hr_j - hr_j0), c_j (hp_j - hp_j0);
     * Srr, Spp, Srp: of their squares and product; Epp, Erp: of c_j hpp_j,
     * c_j hrp_j. */
    double S0 = 0, Sr = 0, Sp = 0, Srr = 0, Spp = 0, Srp = 0, Epp = 0, Erp = 0;
    double cmax = 0;
    int ok = 1;
    for (int dir = 1; dir >= -1; dir -= 2) {
        double cprev = 0, dP = 0, lprev = l0;
        int done = 0;
        for (int k = (dir > 0 ? 0 : 1); k < GG_FM_TW_MAXTERMS; k++) {
            const double j = j0 + dir * k;
            if (j < 1) {
                done = 1;
                break;
            }
            const double jn = j * nu, dJ = j - J;
            const double lj = k == 0 ? l0 : log1p(dJ / J);    /* log(j / J) */
            if (k > 0) dP += dir > 0 ? -lj : lprev;            /* P_j - P_j0 */
            lprev = lj;
            const double c = exp(dP + (gg_fm_tw_q(jn, Jn, dJ * nu, logJn) - G0));
            if (!(c >= 0)) break;          /* NaN: not done, out NaN */
            S0 += c;
            if (nd > 0) {
                double lmpsi, psi1 = 0;
                gg_fm_tw_psis(jn, nd > 1, &lmpsi, &psi1);
                const double hp = (dJ * upm1 - j * (lmpsi - lj)) * ipm2;
                const double dr = -(j - j0) / pm1, dp = hp - hp0;
                Sr += c * dr;
                Sp += c * dp;
                if (nd > 1) {
                    const double Np = -J * u * upm1 + dJ * (pm1 / (twop * twop) + u) -
                                      j * (u - 1 / (pm1 * twop) + j * psi1 * ipm2);
                    Srr += c * dr * dr;
                    Spp += c * dp * dp;
                    Srp += c * dr * dp;
                    Epp += c * (Np * ipm2 - 2 * hp / pm1);
                    Erp += c * (J * u * pm1 + dJ) * ipm2;
                }
            }
            if (c > cmax) cmax = c;
            if (k > 0 && c < cprev && c < GG_FM_TW_TOL * cmax) {
                done = 1;
                break;
            }
            cprev = c;
        }
        if (!done) ok = 0;
    }
    if (!ok || !(S0 > 0) || !GG_FM_ISFINITE(S0)) {
        for (int k = 0; k < 6; k++) out[k] = GG_FM_NAN;
        return 1;
    }
    out[0] = h0 + log(S0);
    if (nd > 0) {
        const double mr = Sr / S0, mp = Sp / S0;
        out[1] = (J - j0) / pm1 + mr;
        out[3] = hp0 + mp;
        if (nd > 1) {
            out[2] = -J / pm1 + (Srr / S0 - mr * mr);
            out[4] = Epp / S0 + (Spp / S0 - mp * mp);
            out[5] = Erp / S0 + (Srp / S0 - mr * mp);
        }
    }
    return 0;
}

/* The closed part of ldTweedie at y > 0 and mu in (phi, p), its
 * expressions: l.base - log y with l.base = (y mu^(1-p)/(1-p) -
 * mu^(2-p)/(2-p)) / phi, and derivatives in phi and p. */
GG_FM void gg_fm_tw_closed(double y, double mu, double phi, double p, double *ld)
{
    const double lmu = log(mu), onep = 1 - p, twop = 2 - p;
    const double mu1p = gg_fm_rpow(mu, onep);
    const double kth = mu * mu1p / twop, tht = mu1p / onep;
    const double a1 = y / onep - mu / twop;
    const double lbase = mu1p * a1 / phi;
    ld[0] = lbase - log(y);
    ld[1] = -lbase / phi;
    ld[2] = 2 * lbase / (phi * phi);
    const double x = tht * y * (1 / onep - lmu) / phi + kth * (lmu - 1 / twop) / phi;
    ld[3] = x;
    ld[4] = tht * y * (lmu * lmu - 2 * lmu / onep + 2 / (onep * onep)) / phi -
            kth * (lmu * lmu - 2 * lmu / twop + 2 / (twop * twop)) / phi;
    ld[5] = -x / phi;
}

/* The columns 1-6 of mgcv::ldTweedie(y, mu, rho = rho, theta = th, a = a,
 * b = b): the log density l and its derivatives with respect to rho =
 * log(phi) and theta: ld[0..5] = l, l_rho, l_rho2, l_th, l_th2, l_th_rho.
 * y == 0: l = -mu^(2-p) / (phi (2 - p)) (0 for mu == 0) and its
 * derivatives, ldTweedie's closed form.  y > 0: the series at mu = y
 * (gg_fm_tw_series) and, for mu != y, the difference of ldTweedie's
 * closed part at mu and at y.  Derivatives in p are taken to theta by
 * dp/dtheta, d2p/dtheta2.  nd as gg_fm_tw_series (derivatives beyond nd
 * are not computed: ignore them).  Returns the series's status (0 for
 * y == 0); y < 0 or NaN give NaN and 1. */
GG_FM int gg_fm_tw_ld(double y, double mu, double rho, double th, double a, double b, int nd,
                      double *ld)
{
    const double p = gg_fm_tw_p(th, a, b), phi = exp(rho);
    double d1, d2;
    gg_fm_tw_dpth(th, a, b, &d1, &d2);
    for (int k = 0; k < 6; k++) ld[k] = 0;
    int st = 0;
    if (y == 0) {
        if (!(mu > 0)) return 0;
        const double lmu = log(mu);
        ld[0] = -gg_fm_rpow(mu, 2 - p) / (phi * (2 - p));
        ld[1] = -ld[0] / phi;
        ld[2] = -2 * ld[1] / phi;
        ld[3] = -ld[0] * (lmu - 1 / (2 - p));
        ld[4] = 2 * ld[3] / (2 - p) + ld[0] * lmu * lmu;
        ld[5] = -ld[3] / phi;
    } else {
        st = gg_fm_tw_series(y, p, rho, nd, ld);
        ld[0] -= log(y);
        if (mu != y) {
            double cm[6], cy[6];
            gg_fm_tw_closed(y, mu, phi, p, cm);
            gg_fm_tw_closed(y, y, phi, p, cy);
            const double dl[6] = {cm[0] - cy[0], cm[1] - cy[1], cm[2] - cy[2],
                                  cm[3] - cy[3], cm[4] - cy[4], cm[5] - cy[5]};
            /* in (phi, p) -> (rho, p) */
            ld[0] += dl[0];
            ld[1] += dl[1] * phi;
            ld[2] += dl[2] * (phi * phi) + dl[1] * phi;
            ld[3] += dl[3];
            ld[4] += dl[4];
            ld[5] += dl[5] * phi;
        }
        /* the p derivatives to theta */
        ld[4] = ld[4] * (d1 * d1) + ld[3] * d2;
        ld[3] = ld[3] * d1;
        ld[5] = ld[5] * d1;
        return st;
    }
    /* y == 0: (phi, p) -> (rho, theta) */
    ld[2] = ld[2] * (phi * phi) + ld[1] * phi;
    ld[1] = ld[1] * phi;
    ld[4] = ld[4] * (d1 * d1) + ld[3] * d2;
    ld[3] = ld[3] * d1;
    ld[5] = ld[5] * d1 * phi;
    return st;
}

GG_FM double gg_fm_tw_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                          double *Dmu, double *EDmu2)
{
    const double p = gg_fm_tw_p(par->th[0], par->aux[0], par->aux[1]);
    const double mu1p = gg_fm_rpow(mu, 1 - p), mup = gg_fm_rpow(mu, p);
    *Dmu = 2 * wt * (mu1p - y / mup);         /* tw()$Dd, level 0 */
    *EDmu2 = (2 * wt) / mup;
    return gg_fm_tw_dev(y, mu, wt, p);
}

/* Dd(level = 2)'s Dth and Dth2 in mgcv's expressions, except that Dth2's
 * last term Dth dpth2 / dpth1 is written without the division (the same
 * number, and finite where dpth1 underflows). */
GG_FM void gg_fm_tw_dth(double y, double mu, double wt, double th, double a, double b,
                        double *Dth, double *Dth2)
{
    const double p = gg_fm_tw_p(th, a, b);
    const double dpth1 = th > 0 ? exp(-th) * (b - a) / ((1 + exp(-th)) * (1 + exp(-th)))
                                : exp(th) * (b - a) / ((exp(th) + 1) * (exp(th) + 1));
    const double dpth2 = th > 0 ? ((a - b) * exp(-th) + (b - a) * exp(-2 * th)) /
                                      gg_fm_rpow(exp(-th) + 1, 3)
                                : ((a - b) * exp(2 * th) + (b - a) * exp(th)) /
                                      gg_fm_rpow(exp(th) + 1, 3);
    const double onep = 1 - p, twop = 2 - p, i1p = 1 / onep;
    const double y1 = y + (y == 0), ly1 = log(y1), logmu = log(mu);
    const double mu1p = gg_fm_rpow(mu, onep), mu2p = mu * mu1p, y2p = gg_fm_rpow(y, twop);
    const double core = (y2p * ly1 - mu2p * logmu) / twop + (y * mu1p * logmu - y2p * ly1) / onep -
                        (y2p - mu2p) / (twop * twop) + (y2p - y * mu1p) * (i1p * i1p);
    *Dth = 2 * wt * core * dpth1;
    const double y2plogy = y2p * ly1, y2plog2y = y2plogy * ly1, lm2 = logmu * logmu;
    const double c2 = (mu2p * lm2 - y2plog2y) / twop + (y2plog2y - y * mu1p * lm2) / onep +
                      2 * (y2plogy - mu2p * logmu) / (twop * twop) +
                      2 * (y * mu1p * logmu - y2plogy) / (onep * onep) +
                      2 * (mu2p - y2p) / gg_fm_rpow(twop, 3) +
                      2 * (y2p - y * mu1p) / gg_fm_rpow(onep, 3);
    *Dth2 = 2 * wt * (c2 * (dpth1 * dpth1)) + 2 * wt * core * dpth2;
}

/* tw()$Dd(y, mu, theta, wt, level) in mgcv's expressions, theta =
 * par->th[0]; the terms r$X dpth2 / dpth1 of its level 2 written, as in
 * gg_fm_tw_dth(), without the division. */
GG_FM void gg_fm_tw_dd(double y, double mu, double wt, const gg_fm_efpar *par, int level,
                       gg_fm_efdd *r)
{
    const double th = par->th[0], a = par->aux[0], b = par->aux[1];
    const double p = gg_fm_tw_p(th, a, b);
    const double mu1p = gg_fm_rpow(mu, 1 - p), mup = gg_fm_rpow(mu, p), ymupi = y / mup;
    r->Dmu = 2 * wt * (mu1p - ymupi);
    r->Dmu2 = 2 * wt * (gg_fm_rpow(mu, -1 - p) * p * y + (1 - p) / mup);
    r->EDmu2 = (2 * wt) / mup;
    if (level < 1) return;
    double dpth1, dpth2;
    gg_fm_tw_dpth(th, a, b, &dpth1, &dpth2);
    gg_fm_tw_dth(y, mu, wt, th, a, b, &r->Dth[0], &r->Dth2[0]);
    const double logmu = log(mu), mup1 = gg_fm_rpow(mu, -p - 1);
    const double muth0 = 2 * wt * logmu * (ymupi - mu1p);
    const double mu2th0 = 2 * wt * (mup1 * y * (1 - p * logmu) - (logmu * (1 - p) + 1) / mup);
    r->Dmuth[0] = muth0 * dpth1;
    r->Dmu3 = -2 * wt * mup1 * p * (y / mu * (p + 1) + 1 - p);
    r->Dmu2th[0] = mu2th0 * dpth1;
    if (level < 2) return;
    const double mup2 = mup1 / mu, lm2 = logmu * logmu, d12 = dpth1 * dpth1;
    r->Dmu4 = 2 * wt * mup2 * p * (p + 1) * (y * (p + 2) / mu + 1 - p);
    r->Dmuth2[0] = 2 * wt * ((mu1p * lm2 - lm2 * ymupi) * d12) + muth0 * dpth2;
    r->Dmu2th2[0] = 2 * wt * ((mup1 * logmu * y * (logmu * p - 2) +
                            logmu / mup * (logmu * (1 - p) + 2)) * d12) + mu2th0 * dpth2;
    r->Dmu3th[0] = 2 * wt * mup1 * (y / mu * (logmu * (1 + p) * p - p - p - 1) +
                                 logmu * (1 - p) * p + p - 1 + p) * dpth1;
}

GG_FM void gg_fm_tw_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                              int deriv, double *s)
{
    const double th = par->th[0], a = par->aux[0], b = par->aux[1];
    s[GG_FM_EF_DEV] += gg_fm_tw_dev(y, mu, wt, gg_fm_tw_p(th, a, b));
    if (deriv < 0) return;
    /* ls(y, w, theta, scale): w * ldTweedie(y, y, rho = log(scale), theta) */
    double ld[6];
    gg_fm_tw_ld(y, y, par->log_scale, th, a, b, deriv > 2 ? 2 : deriv, ld);
    s[GG_FM_EF_LS] += wt * ld[0];
    if (deriv < 1) return;
    double Dth, Dth2;
    gg_fm_tw_dth(y, mu, wt, th, a, b, &Dth, &Dth2);
    s[GG_FM_EF_DTH] += Dth;
    s[GG_FM_EF_LSTH1(1)] += wt * ld[3];       /* lsth1: theta, log scale */
    s[GG_FM_EF_LSTH1(1) + 1] += wt * ld[1];
    if (deriv < 2) return;
    s[GG_FM_EF_DTH2(1)] += Dth2;
    s[GG_FM_EF_LSTH2(1, 2)] += wt * ld[4];    /* lsth2[1,1], [1,2], [2,2] */
    s[GG_FM_EF_LSTH2(1, 2) + 1] += wt * ld[5];
    s[GG_FM_EF_LSTH2(1, 2) + 2] += wt * ld[2];
}

GG_FM double gg_fm_tw_mustart(double y, double wt, const gg_fm_efpar *par)
{
    (void) wt;
    (void) par;
    return y + (y == 0) * 0.1;
}

#endif
