/* efam_zip.h -- mgcv's ziP() (zero-inflated Poisson, link identity) for
 * efam_math.h (see there for the contract).  mu is the linear predictor
 * gamma of the Poisson mean exp(gamma); the probability that y is not a
 * structural zero is 1 - exp(-exp(eta)), eta = th[0] + (b + exp(th[1])) mu.
 *
 *   par->th[0..1] = ziP's getTheta() (nth = 2, the working parameters);
 *   par->aux[0]   = b, the family's .b (ziP(b = ) clamped at >= 0);
 *   par->aux[1]   = 0: the deviance ignores the prior weights, as mgcv's
 *                   ziP()$dev.resids does (Dd's derivatives include them);
 *                   nonzero: the deviance is wt * dev.resids.
 *
 * Row by row, mgcv's zipll() (log likelihood and derivatives in gamma and
 * eta) with its careful helpers l1ee, lee1, lde and ldg, and lind() (the
 * map from gamma and theta to eta).  The branch thresholds are mgcv's,
 * from .Machine (log(eps) / 3, log(xmax), log(log(xmax)), ...).  ziP's
 * ls() is identically zero (no saturated likelihood): its sums get 0. */
#ifndef GAMGPU_EFAM_ZIP_H
#define GAMGPU_EFAM_ZIP_H

#define GG_FM_ZIP_LEPS3  -12.014551129705717    /* log(.Machine$double.eps) / 3 */
#define GG_FM_ZIP_LXMAX  709.78271289338397     /* log(.Machine$double.xmax) */
#define GG_FM_ZIP_LLXMAX 6.5649588850177887     /* log(log(.Machine$double.xmax)) */
#define GG_FM_ZIP_LXMAX5 141.95654257867679     /* log(.Machine$double.xmax) / 5 */

/* mgcv's l1ee(x) = log(1 - exp(-exp(x))) */
GG_FM double gg_fm_zip_l1ee(double x)
{
    if (x < -GG_FM_ZIP_LXMAX) return x;
    const double ex = exp(x);
    if (x < GG_FM_ZIP_LEPS3) return log(ex - ex * ex / 2 + pow(ex, 3.0) / 6);
    return log(1 - exp(-ex));
}

/* mgcv's lee1(x) = log(exp(exp(x)) - 1) */
GG_FM double gg_fm_zip_lee1(double x)
{
    const double ex = exp(x);
    if (x > GG_FM_ZIP_LLXMAX) return ex;
    if (x < -GG_FM_ZIP_LXMAX) return x;
    if (x < GG_FM_ZIP_LEPS3) return log(ex + ex * ex / 2 + pow(ex, 3.0) / 6);
    return log(exp(ex) - 1);
}

/* mgcv's lde(eta): first and second derivatives of l1ee at eta */
GG_FM void gg_fm_zip_lde(double eta, double *l1, double *l2)
{
    const double et = exp(eta);
    if (eta > GG_FM_ZIP_LXMAX) {
        *l1 = *l2 = 0;
    } else if (eta < GG_FM_ZIP_LEPS3) {
        const double b = -et * (1 + et / 6) / 2;
        *l1 = 1 + b;
        *l2 = -b * (1 + et + b) - et;
    } else {
        const double d1 = et / (exp(et) - 1);
        *l1 = d1;
        *l2 = d1 * ((1 - et) - d1);
    }
}

/* mgcv's ldg(g): first and second derivatives of -lee1 at g */
GG_FM void gg_fm_zip_ldg(double g, double *l1, double *l2)
{
    if (g > GG_FM_ZIP_LXMAX5) {
        *l1 = *l2 = -exp(GG_FM_ZIP_LXMAX5);
        return;
    }
    const double eg = exp(g);
    const double a = g > GG_FM_ZIP_LEPS3 ? eg / (1 - exp(-eg)) : 1 + eg / 2 + eg * eg / 12;
    *l1 = -a;
    if (g > GG_FM_ZIP_LLXMAX + 1)
        *l2 = -exp(g);
    else if (g < GG_FM_ZIP_LEPS3)
        *l2 = a * (eg * (1 + eg / 6) / 2 - eg);
    else
        *l2 = a * (a - eg - 1);
}

/* zipll(y, mu, eta)'s log likelihood */
GG_FM double gg_fm_zip_ll(double y, double g, double eta)
{
    if (y == 0) return -exp(eta);
    return gg_fm_zip_l1ee(eta) + y * g - gg_fm_zip_lee1(g) - GG_FM_LGAMMA(y + 1);
}

GG_FM double gg_fm_zip_dev(double y, double mu, double wt, const gg_fm_efpar *par)
{
    const double p = par->th[0] + (par->aux[0] + exp(par->th[1])) * mu;
    const double d = -2 * gg_fm_zip_ll(y, mu, p);
    return par->aux[1] != 0 ? wt * d : d;
}

/* The row's zipll(deriv >= 1) quantities that Dd needs: l1 = (dl/dg,
 * dl/deta), l2e = d2l/deta2 (l2[, 3]; l2[, 2] is 0), and the expected
 * El2[, 1], El2[, 3]; lind()'s p.l = b + exp(th[1]) in *pl. */
GG_FM void gg_fm_zip_derivs(double y, double mu, const gg_fm_efpar *par, double *pl,
                            double *l1g, double *l1e, double *l2g, double *l2e,
                            double *El2g, double *El2e)
{
    *pl = par->aux[0] + exp(par->th[1]);
    const double eta = par->th[0] + *pl * mu, et = exp(eta), p = 1 - exp(-et);
    double le1, le2, lg1, lg2;
    gg_fm_zip_lde(eta, &le1, &le2);
    gg_fm_zip_ldg(mu, &lg1, &lg2);
    if (y == 0) {
        *l1g = 0;
        *l1e = -et;
        *l2g = 0;
        *l2e = -et;
    } else {
        *l1g = y + lg1;
        *l1e = le1;
        *l2g = lg2;
        *l2e = le2;
    }
    *El2g = p * lg2;
    *El2e = -(1 - p) * et + p * le2;
}

GG_FM double gg_fm_zip_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                           double *Dmu, double *EDmu2)
{
    double pl, l1g, l1e, l2g, l2e, El2g, El2e;
    gg_fm_zip_derivs(y, mu, par, &pl, &l1g, &l1e, &l2g, &l2e, &El2g, &El2e);
    *Dmu = -2 * wt * (l1g + l1e * pl);               /* ziP()$Dd, level 0 */
    *EDmu2 = -2 * wt * (El2g + El2e * (pl * pl));
    return gg_fm_zip_dev(y, mu, wt, par);
}

GG_FM void gg_fm_zip_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                               int deriv, double *s)
{
    s[GG_FM_EF_DEV] += gg_fm_zip_dev(y, mu, wt, par);
    if (deriv < 1) return;   /* ls, lsth1, lsth2: identically 0 */
    double pl, l1g, l1e, l2g, l2e, El2g, El2e;
    gg_fm_zip_derivs(y, mu, par, &pl, &l1g, &l1e, &l2g, &l2e, &El2g, &El2e);
    const double e1 = exp(par->th[1]), pth2 = e1 * mu, w2 = -2 * wt;
    /* lind(): p.th = (1, exp(th2) mu); p.th2 = (0, 0, mu exp(th2)) */
    s[GG_FM_EF_DTH] += w2 * l1e;
    s[GG_FM_EF_DTH + 1] += w2 * l1e * pth2;
    if (deriv < 2) return;
    s[GG_FM_EF_DTH2(2)] += w2 * l2e;
    s[GG_FM_EF_DTH2(2) + 1] += w2 * (l2e * pth2);
    s[GG_FM_EF_DTH2(2) + 2] += w2 * (l2e * (pth2 * pth2) + l1e * (mu * e1));
}

/* ziP()$saturated.ll for one row: 0 for y == 0, else the deviance at the
 * gamma that maximizes the row's likelihood, found as mgcv finds it:
 * Newton from gamma = log(y) with Dd's Dmu and Dmu2 (l2[, 2] and p.ll are
 * 0), each step halved up to 50 times while the deviance rises, until
 * |Dmu| <= 1e-7 lmax (lmax: the largest |deviance| at gamma = log(y) over
 * the rows with y > 0), at most 100 steps.  mgcv iterates all rows
 * together; each row's steps depend on that row and lmax only, so row by
 * row gives the same numbers. */
GG_FM double gg_fm_zip_saturated_row(double y, double wt, const gg_fm_efpar *par, double lmax)
{
    if (!(y > 0)) return 0;
    double mu = log(y), l = gg_fm_zip_dev(y, mu, wt, par);
    for (int k = 0; k < 100; k++) {
        double pl, l1g, l1e, l2g, l2e, El2g, El2e;
        gg_fm_zip_derivs(y, mu, par, &pl, &l1g, &l1e, &l2g, &l2e, &El2g, &El2e);
        const double Dmu = -2 * wt * (l1g + l1e * pl);
        if (!(fabs(Dmu) > lmax * 1e-7)) break;
        const double Dmu2 = -2 * wt * (l2g + l2e * (pl * pl));
        double step = -Dmu / Dmu2, mu1 = mu + step, l1 = gg_fm_zip_dev(y, mu1, wt, par);
        for (int kk = 0; l1 > l && kk < 50; kk++) {
            step /= 2;
            mu1 = mu + step;
            l1 = gg_fm_zip_dev(y, mu1, wt, par);
        }
        mu = mu1;
        l = l1;
    }
    return l;
}

GG_FM double gg_fm_zip_mustart(double y, double wt, const gg_fm_efpar *par)
{
    (void) wt;
    (void) par;
    return log(y + (y == 0) / 5.0);
}

#endif
