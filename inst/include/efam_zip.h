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

/* mgcv's lde(eta, deriv): l[0..3], the first four derivatives of l1ee at
 * eta (l[2] where deriv > 1, l[3] where deriv > 2; the others untouched) */
GG_FM void gg_fm_zip_lde(double eta, int deriv, double *l)
{
    const double et = exp(eta);
    const int ind = eta < GG_FM_ZIP_LEPS3;
    const double b = -et * (1 + et / 6) / 2;       /* (used where ind) */
    double l1, l2;
    if (ind) {
        l1 = 1 + b;
        l2 = -b * (1 + et + b) - et;
    } else if (eta > GG_FM_ZIP_LXMAX) {
        l1 = l2 = 0;
    } else {
        l1 = et / (exp(et) - 1);
        l2 = l1 * ((1 - et) - l1);
    }
    l[0] = l1;
    l[1] = l2;
    if (deriv > 1) {
        const double e1 = 1 - et;
        if (ind)
            l[2] = l1 * (-3 * et + et * et - 3 * (-et + b - et * b) + 2 * b * (2 + b));
        else if (eta > GG_FM_ZIP_LXMAX / 2)
            l[2] = 0;
        else
            l[2] = l1 * ((e1 * e1) - et - 3 * e1 * l1 + 2 * (l1 * l1));
    }
    if (deriv > 2) {
        const double e1 = 1 - et;
        if (ind)
            l[3] = l1 * (4 * l1 * et - pow(et, 3) - b - 7 * b * (et * et) - et * et - 5 * et -
                         10 * b * et - 12 * et * (b * b) - 6 * (b * b) - 6 * pow(b, 3));
        else if (eta > GG_FM_ZIP_LXMAX / 3)
            l[3] = 0;
        else
            l[3] = l1 * ((3 * et - 4) * et + 4 * et * l1 + pow(e1, 3) - 7 * (e1 * e1) * l1 +
                         12 * e1 * (l1 * l1) - 6 * pow(l1, 3));
    }
}

/* mgcv's ldg(g, deriv): l[0..3], the first four derivatives of -lee1 at g
 * (l[2] where deriv > 1, l[3] where deriv > 2) */
GG_FM void gg_fm_zip_ldg(double g, int deriv, double *l)
{
    if (g > GG_FM_ZIP_LXMAX5) {
        l[0] = l[1] = -exp(GG_FM_ZIP_LXMAX5);
        if (deriv > 1) l[2] = l[0];
        if (deriv > 2) l[3] = l[0];
        return;
    }
    const double eg = exp(g);
    const double a = g > GG_FM_ZIP_LEPS3 ? eg / (1 - exp(-eg)) : 1 + eg / 2 + eg * eg / 12;
    const int ind = g < GG_FM_ZIP_LEPS3, ii = g > GG_FM_ZIP_LLXMAX + 1;
    const double b = eg * (1 + eg / 6) / 2;         /* (used where ind) */
    l[0] = -a;
    if (ii)
        l[1] = -exp(g);
    else if (ind)
        l[1] = a * (b - eg);
    else
        l[1] = a * (a - eg - 1);
    if (deriv > 1) {
        if (ii)
            l[2] = -exp(g);
        else if (ind)
            l[2] = a * (-b - 2 * (b * b) + 3 * b * eg - eg * eg);
        else
            l[2] = a * (a * (-2 * a + 3 * (eg + 1)) - 3 * eg - eg * eg - 1);
    }
    if (deriv > 2) {
        const double e1 = eg + 1;
        if (ii)
            l[3] = -exp(g);
        else if (ind)
            l[3] = a * (6 * b * (3 + 3 * b + b * b) - 12 * eg * (1 + 2 * b + b * b) -
                        12 * b * (2 - b) + 4 * eg * (1 + b) +
                        7 * (eg * eg + 2 * eg + b * (eg * eg) + 2 * b * eg + b) -
                        (4 + 3 * eg) * eg - eg * (3 + 3 * eg + eg * eg));
        else
            l[3] = a * (6 * pow(a, 3) - 12 * e1 * (a * a) + 4 * eg * a + 7 * (e1 * e1) * a -
                        (4 + 3 * eg) * eg - pow(e1, 3));
    }
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
    double le[4], lg[4];
    gg_fm_zip_lde(eta, 1, le);
    gg_fm_zip_ldg(mu, 1, lg);
    const double le1 = le[0], le2 = le[1], lg1 = lg[0], lg2 = lg[1];
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

/* ziP()$Dd(y, mu, theta, wt, level) in mgcv's expressions, for
 * efam_outer.h: zipll()'s derivatives at deriv 1, 2 or 4 (level 0, 1, 2)
 * with its columns that are 0 written as 0, through lind()'s p.th = (1,
 * e mu), p.lth = (0, e), p.th2 = (0, 0, e mu), p.lth2 = (0, 0, e) (e =
 * exp(theta[2]); its p.ll, p.lll, p.llll, p.llth, p.lllth, p.llth2 are 0) */
GG_FM void gg_fm_zip_dd(double y, double mu, double wt, const gg_fm_efpar *par, int level,
                        gg_fm_efdd *r)
{
    const int deriv = level == 0 ? 1 : (level == 1 ? 2 : 4);
    const double e2 = exp(par->th[1]);
    const double pl = par->aux[0] + e2, pll = 0, plll = 0, pllll = 0;
    const double eta = par->th[0] + pl * mu, et = exp(eta), pr = 1 - exp(-et);
    double le[4] = {0, 0, 0, 0}, lg[4] = {0, 0, 0, 0};
    gg_fm_zip_lde(eta, deriv, le);
    gg_fm_zip_ldg(mu, deriv, lg);
    const int z = y == 0;
    /* zipll(): l1 (2 columns), l2 (3), l3 (4), l4 (5), El2 (3) */
    const double l1_1 = z ? 0 : y + lg[0], l1_2 = z ? -et : le[0];
    const double l2_1 = z ? 0 : lg[1], l2_2 = 0, l2_3 = z ? -et : le[1];
    const double El2_1 = pr * lg[1], El2_2 = 0, El2_3 = -(1 - pr) * et + pr * le[1];
    const double m2w = -2 * wt;
    r->Dmu = m2w * (l1_1 + l1_2 * pl);
    r->Dmu2 = m2w * (l2_1 + 2 * l2_2 * pl + l2_3 * (pl * pl) + l1_2 * pll);
    r->EDmu2 = m2w * (El2_1 + 2 * El2_2 * pl + El2_3 * (pl * pl));
    if (level < 1) return;
    const double l3_1 = z ? 0 : lg[2], l3_2 = 0, l3_3 = 0, l3_4 = z ? -et : le[2];
    const double pth[2] = {1, e2 * mu}, plth[2] = {0, e2}, pllth[2] = {0, 0};
    const double plllth[2] = {0, 0};
    for (int j = 0; j < 2; j++) {
        r->Dth[j] = m2w * l1_2 * pth[j];
        r->Dmuth[j] = m2w * (l2_2 * pth[j] + l2_3 * pl * pth[j] + l1_2 * plth[j]);
        r->Dmu2th[j] = m2w * (l3_2 * pth[j] + 2 * l3_3 * pl * pth[j] + 2 * l2_2 * plth[j] +
                              l3_4 * (pl * pl) * pth[j] +
                              l2_3 * (2 * pl * plth[j] + pth[j] * pll) + l1_2 * pllth[j]);
    }
    r->Dmu3 = m2w * (l3_1 + 3 * l3_2 * pl + 3 * l3_3 * (pl * pl) + 3 * l2_2 * pll +
                     l3_4 * pow(pl, 3) + 3 * l2_3 * pl * pll + l1_2 * plll);
    if (level < 2) return;
    const double l4_1 = z ? 0 : lg[3], l4_2 = 0, l4_3 = 0, l4_4 = 0, l4_5 = z ? -et : le[3];
    const double pth2[3] = {0, 0, mu * e2}, plth2[3] = {0, 0, e2}, pllth2[3] = {0, 0, 0};
    const double pthth[3] = {pth[0] * pth[0], pth[0] * pth[1], pth[1] * pth[1]};
    const double plthth[3] = {pth[0] * plth[0] * 2, pth[0] * plth[1] + pth[1] * plth[0],
                              pth[1] * plth[1] * 2};
    const double plthlth[3] = {plth[0] * plth[0] * 2, plth[0] * plth[1] + plth[1] * plth[0],
                               plth[1] * plth[1] * 2};
    const double pllthth[3] = {pth[0] * pllth[0] * 2, pth[0] * pllth[1] + pth[1] * pllth[0],
                               pth[1] * pllth[1] * 2};
    const double pl2 = pl * pl;
    for (int q = 0; q < 3; q++) {
        r->Dth2[q] = m2w * (l2_3 * pthth[q] + l1_2 * pth2[q]);
        r->Dmuth2[q] = m2w * (l3_3 * pthth[q] + l2_2 * pth2[q] + l3_4 * pl * pthth[q] +
                              l2_3 * (pth2[q] * pl + plthth[q]) + l1_2 * plth2[q]);
        r->Dmu2th2[q] = m2w * (l4_3 * pthth[q] + l3_2 * pth2[q] + 2 * l4_4 * pthth[q] * pl +
                               2 * l3_3 * (pth2[q] * pl + plthth[q]) + 2 * l2_2 * plth2[q] +
                               l4_5 * pthth[q] * pl2 +
                               l3_4 * (pth2[q] * pl2 + 2 * plthth[q] * pl + pthth[q] * pll) +
                               l2_3 * (plthlth[q] + 2 * pl * plth2[q] + pllthth[q] +
                                       pth2[q] * pll) +
                               l1_2 * pllth2[q]);
    }
    for (int j = 0; j < 2; j++)
        r->Dmu3th[j] = m2w * (l4_2 * pth[j] + 3 * l4_3 * pth[j] * pl + 3 * l3_2 * plth[j] +
                              2 * l4_4 * pth[j] * pl2 +
                              l3_3 * (6 * plth[j] * pl + 3 * pth[j] * pll) +
                              3 * l2_2 * pllth[j] + l4_4 * pth[j] * pl2 +
                              l4_5 * pth[j] * pow(pl, 3) +
                              3 * l3_4 * (pl2 * plth[j] + pth[j] * pl * pll) +
                              l2_3 * (3 * plth[j] * pll + 3 * pl * pllth[j] + pth[j] * plll) +
                              l1_2 * plllth[j]);
    r->Dmu4 = m2w * (l4_1 + 4 * l4_2 * pl + 6 * l4_3 * pl2 + 6 * l3_2 * pll +
                     4 * l4_4 * pow(pl, 3) + 12 * l3_3 * pl * pll + 4 * l2_2 * plll +
                     l4_5 * pow(pl, 4) + 6 * l3_4 * pl2 * pll +
                     l2_3 * (4 * pl * plll + 3 * (pll * pll)) + l1_2 * pllll);
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
