/* efam_gfam.h -- mgcv's gfam(fl) (mgcv >= 1.9) in efam_math.h's terms: row
 * i follows member fl[[yat_i]] (yat: the response's second column, the
 * member index) with that member's link.  theta is the members' thetas
 * concatenated, each member with an unknown scale adding its log scale
 * after its own (par->gm[k]: efam_par.h).  Each function is gfam's own R
 * (its Dd, dev.resids, ls) for the row's member, the member's derivatives
 * divided by its scale and written to the member's slots of the gfam's
 * theta; the members are family_math.h's exponential families and nb()
 * (efam_nb.h).  A row whose index names no member gives NaN. */
#ifndef GAMGPU_EFAM_GFAM_H
#define GAMGPU_EFAM_GFAM_H

/* the row's member, or 0 where yat names none */
GG_FM const gg_fm_gfmem *gg_fm_gfam_member(const gg_fm_efpar *par, double yat)
{
    if (!(yat >= 1 && yat <= par->ngm) || yat != (double) (int) yat) return 0;
    return &par->gm[(int) yat - 1];
}

GG_FM gg_fm_link gg_fm_gfam_link(const gg_fm_efpar *par, double yat, gg_fm_link l)
{
    const gg_fm_gfmem *m = gg_fm_gfam_member(par, yat);
    if (m) {
        l.code = m->link;
        l.power = m->lpow;
    } else {
        l.code = -1;      /* (no link: linkinv and the rest give NaN) */
    }
    return l;
}

/* a member's scale, exp(its log scale), or 1 */
GG_FM double gg_fm_gfam_scale(const gg_fm_efpar *par, const gg_fm_gfmem *m)
{
    return m->isc >= 0 ? exp(par->th[m->isc]) : 1.0;
}

/* nb()'s parameters: its one theta, the member's */
GG_FM void gg_fm_gfam_sub(const gg_fm_efpar *par, const gg_fm_gfmem *m, gg_fm_efpar *sub)
{
    sub->nth = m->nth;
    for (int j = 0; j < m->nth; j++) sub->th[j] = par->th[m->th0 + j];
    sub->log_scale = 0;
    sub->scale_est = 0;
    sub->ngm = 0;
}

/* the variance's derivatives (fix.family.var's dvar, d2var, d3var) */
GG_FM void gg_fm_gfam_dvar(int f, double mu, double *v, double *d1, double *d2, double *d3)
{
    *v = gg_fm_variance(f, mu, 0.0);
    switch (f) {
    case GG_FM_BINOMIAL: *d1 = 1 - 2 * mu; *d2 = -2; *d3 = 0; return;
    case GG_FM_POISSON: *d1 = 1; *d2 = 0; *d3 = 0; return;
    case GG_FM_GAMMA: *d1 = 2 * mu; *d2 = 2; *d3 = 0; return;
    case GG_FM_INVGAUSS: *d1 = 3 * (mu * mu); *d2 = 6 * mu; *d3 = 6; return;
    default: *d1 = *d2 = *d3 = 0; return;    /* gaussian */
    }
}

/* theta's pair (a, b), a <= b, in mgcv's packing for nth values */
GG_FM int gg_fm_gfam_pk(int a, int b, int nth)
{
    return a * nth - a * (a - 1) / 2 + (b - a);
}

GG_FM double gg_fm_gfam_dd0(double y, double yat, double mu, double wt, const gg_fm_efpar *par,
                            double *Dmu, double *EDmu2)
{
    const gg_fm_gfmem *m = gg_fm_gfam_member(par, yat);
    if (!m) {
        *Dmu = *EDmu2 = GG_FM_NAN;
        return GG_FM_NAN;
    }
    const double scale = gg_fm_gfam_scale(par, m);
    if (m->efam) {
        gg_fm_efpar sub;
        gg_fm_gfam_sub(par, m, &sub);
        const double d = gg_fm_nb_dd0(y, mu, wt, &sub, Dmu, EDmu2);
        *Dmu /= scale;
        *EDmu2 /= scale;
        return d / scale;
    }
    /* (gfam's Dd of an exponential member has no prior weight; its
     * dev.resids has) */
    const double vi = gg_fm_variance(m->fam, mu, 0.0);
    *Dmu = -2 * (y - mu) / (vi * scale);
    *EDmu2 = 2 / (vi * scale);
    return gg_fm_dev_resid(m->fam, y, mu, wt, 0.0) / scale;
}

/* gfam's Dd(level) of one row into the gfam's theta slots (r zeroed by
 * the caller, par->nth <= GG_FM_EFO_MAXTH) */
GG_FM void gg_fm_gfam_dd(double y, double yat, double mu, double wt, const gg_fm_efpar *par,
                         int level, gg_fm_efdd *r)
{
    const gg_fm_gfmem *m = gg_fm_gfam_member(par, yat);
    const int N = par->nth;
    if (!m) {
        r->Dmu = r->Dmu2 = r->EDmu2 = r->Dmu3 = r->Dmu4 = GG_FM_NAN;
        return;
    }
    const double scale = gg_fm_gfam_scale(par, m);
    const int isc = m->isc;
    double D = 0;
    if (m->efam) {
        gg_fm_efpar sub;
        gg_fm_gfam_sub(par, m, &sub);
        gg_fm_efdd ri = {0};
        gg_fm_nb_dd(y, mu, wt, &sub, level, &ri);
        r->Dmu = ri.Dmu / scale;
        r->Dmu2 = ri.Dmu2 / scale;
        r->EDmu2 = ri.EDmu2 / scale;
        if (level < 1) return;
        for (int j = 0; j < m->nth; j++) {
            r->Dth[m->th0 + j] = ri.Dth[j] / scale;
            r->Dmuth[m->th0 + j] = ri.Dmuth[j] / scale;
            r->Dmu2th[m->th0 + j] = ri.Dmu2th[j] / scale;
        }
        r->Dmu3 = ri.Dmu3 / scale;
        if (isc >= 0) {
            D = gg_fm_dev_resid(GG_FM_NEGBIN, y, mu, wt, exp(sub.th[0]));
            r->Dth[isc] = -D / scale;
            r->Dmuth[isc] = -ri.Dmu / scale;
            r->Dmu2th[isc] = -ri.Dmu2 / scale;
        }
        if (level < 2) return;
        r->Dmu4 = ri.Dmu4 / scale;
        for (int a = 0; a < m->nth; a++) {
            r->Dmu3th[m->th0 + a] = ri.Dmu3th[a] / scale;
            for (int b = a; b < m->nth; b++) {
                const int q = gg_fm_gfam_pk(m->th0 + a, m->th0 + b, N),
                          qm = gg_fm_gfam_pk(a, b, m->nth);
                r->Dth2[q] = ri.Dth2[qm] / scale;
                r->Dmuth2[q] = ri.Dmuth2[qm] / scale;
                r->Dmu2th2[q] = ri.Dmu2th2[qm] / scale;
            }
        }
        if (isc >= 0) {
            r->Dmu3th[isc] = -ri.Dmu3 / scale;
            for (int a = m->th0; a <= isc; a++) {
                const int q = gg_fm_gfam_pk(a, isc, N);
                r->Dth2[q] = -r->Dth[a];
                r->Dmuth2[q] = -r->Dmuth[a];
                r->Dmu2th2[q] = -r->Dmu2th[a];
            }
        }
        return;
    }
    double vi, dv, d2v, d3v;
    gg_fm_gfam_dvar(m->fam, mu, &vi, &dv, &d2v, &d3v);
    const double ri = y - mu;
    r->Dmu = -2 * ri / (vi * scale);
    r->Dmu2 = 2 * (1 + ri * dv / vi) / (vi * scale);
    r->EDmu2 = 2 / (vi * scale);
    if (level < 1) return;
    r->Dmu3 = -r->Dmu2 * dv / vi + 2 * (ri * (d2v / vi - (dv / vi) * (dv / vi)) - dv / vi) /
                                       (vi * scale);
    if (isc >= 0) {
        D = gg_fm_dev_resid(m->fam, y, mu, wt, 0.0);
        r->Dth[isc] = -D / scale;
        r->Dmuth[isc] = -r->Dmu;
        r->Dmu2th[isc] = -r->Dmu2;
    }
    if (level < 2) return;
    const double dvv = dv / vi;
    r->Dmu4 = -r->Dmu2 * d2v / vi - 2 * r->Dmu3 * dv / vi +
              2 * (2 * (dvv * dvv - d2v / vi) +
                   ri * (d3v / vi - 3 * dv * d2v / (vi * vi) + 2 * (dvv * dvv * dvv))) /
                  (vi * scale);
    if (isc >= 0) {
        const int q = gg_fm_gfam_pk(isc, isc, N);
        r->Dmu3th[isc] = -r->Dmu3;
        r->Dth2[q] = -r->Dth[isc];
        r->Dmuth2[q] = -r->Dmuth[isc];
        r->Dmu2th2[q] = -r->Dmu2th[isc];
    }
}

/* a whole count (R's non-integer test, 1e-7 relative) */
GG_FM int gg_fm_gfam_whole(double x)
{
    const double ax = fabs(x);
    return !(fabs(x - nearbyint(x)) > 1e-7 * (ax > 1 ? ax : 1)) && x >= 0 && GG_FM_ISFINITE(x);
}

/* log dpois(y, y) */
GG_FM double gg_fm_gfam_ldpois_yy(double y)
{
    if (!gg_fm_gfam_whole(y)) return -GG_FM_INF;
    const double x = nearbyint(y);
    if (x == 0) return 0.0;
    return -0.5 * log(2 * GG_FM_PI * x) - gg_fm_stirlerr(x);
}

/* log dbinom(x, n, p) */
GG_FM double gg_fm_gfam_ldbinom(double x, double n, double p)
{
    if (p < 0 || p > 1 || n < 0 || !gg_fm_gfam_whole(n)) return GG_FM_NAN;
    if (!gg_fm_gfam_whole(x)) return -GG_FM_INF;
    x = nearbyint(x);
    n = nearbyint(n);
    const double q = 1 - p;
    if (p == 0) return x == 0 ? 0.0 : -GG_FM_INF;
    if (q == 0) return x == n ? 0.0 : -GG_FM_INF;
    if (x == 0) {
        if (n == 0) return 0.0;
        return p < 0.1 ? -gg_fm_bd0(n, n * q) - n * p : n * log(q);
    }
    if (x == n) return q < 0.1 ? -gg_fm_bd0(n, n * p) - n * q : n * log(p);
    if (x < 0 || x > n) return -GG_FM_INF;
    const double lc = gg_fm_stirlerr(n) - gg_fm_stirlerr(x) -
                      gg_fm_stirlerr(n - x) - gg_fm_bd0(x, n * p) -
                      gg_fm_bd0(n - x, n * q);
    const double lf = 1.837877066409345483560659472811 + log(x) + log1p(-x / n);
    return lc - 0.5 * lf;
}

/* The row's part of the sums (efam_math.h's layout, nth = ns = par->nth):
 * gfam's dev.resids, ls (its members' fix.family.ls() row by row, their
 * lsth1 and lsth2 in the log scale as gfam forms them) and Dd's Dth, Dth2. */
GG_FM void gg_fm_gfam_theta_row(double y, double yat, double mu, double wt,
                                const gg_fm_efpar *par, int deriv, double *s)
{
    const gg_fm_gfmem *m = gg_fm_gfam_member(par, yat);
    const int N = par->nth;
    if (!m) {
        s[GG_FM_EF_DEV] = GG_FM_NAN;
        return;
    }
    const double sca = gg_fm_gfam_scale(par, m);
    const int isc = m->isc;
    if (m->efam) {
        /* nb(): its own sums, moved to the member's slots */
        gg_fm_efpar sub;
        gg_fm_gfam_sub(par, m, &sub);
        double t[GG_FM_EF_NSUM(1, 1)];
        const int nt = GG_FM_EF_NSUM(1, 1);
        for (int k = 0; k < nt; k++) t[k] = 0;
        gg_fm_nb_ef_theta_row(y, mu, wt, &sub, deriv, t);
        s[GG_FM_EF_DEV] += t[GG_FM_EF_DEV] / sca;
        if (deriv < 0) return;
        s[GG_FM_EF_LS] += t[GG_FM_EF_LS];
        if (deriv < 1) return;
        s[GG_FM_EF_DTH + m->th0] += t[GG_FM_EF_DTH] / sca;
        s[GG_FM_EF_LSTH1(N) + m->th0] += t[GG_FM_EF_LSTH1(1)];
        if (deriv < 2) return;
        const int q = gg_fm_gfam_pk(m->th0, m->th0, N);
        s[GG_FM_EF_DTH2(N) + q] += t[GG_FM_EF_DTH2(1)] / sca;
        s[GG_FM_EF_LSTH2(N, N) + q] += t[GG_FM_EF_LSTH2(1, 1)];
        return;
    }
    const double D = gg_fm_dev_resid(m->fam, y, mu, wt, 0.0);
    s[GG_FM_EF_DEV] += D / sca;
    if (deriv < 0) return;
    /* fix.family.ls()'s ls(y, w, n = 1, scale): the row's ls and its first
     * and second derivatives in the scale (l1, l2) */
    double ls = 0, l1 = 0, l2 = 0;
    const int pos = wt > 0;
    switch (m->fam) {
    case GG_FM_GAUSSIAN:
        if (pos) {
            ls = -log(2 * GG_FM_PI * sca) / 2 + log(wt) / 2;
            l1 = -1 / (2 * sca);
            l2 = 1 / (2 * sca * sca);
        }
        break;
    case GG_FM_INVGAUSS:
        if (pos) {
            ls = -log(2 * GG_FM_PI * sca * (y * y * y)) / 2 + log(wt) / 2;
            l1 = -1 / (2 * sca);
            l2 = 1 / (2 * sca * sca);
        }
        break;
    case GG_FM_GAMMA:
        if (pos) {
            const double sc = sca / wt, is = 1 / sc, lsc = log(sc), dg = gg_fm_digamma(is);
            ls = (-GG_FM_LGAMMA(is) - lsc / sc - 1 / sc) - log(y);
            l1 = ((dg + lsc) / (sc * sc)) / wt;
            l2 = ((-gg_fm_trigamma(is) / sc + (1 - 2 * lsc - 2 * dg)) / (sc * sc * sc)) /
                 (wt * wt);
        }
        break;
    case GG_FM_POISSON:
        ls = gg_fm_gfam_ldpois_yy(y) * wt;
        break;
    case GG_FM_BINOMIAL:
        /* (binomial()$aic with n = 1: m = wt) */
        ls = pos ? gg_fm_gfam_ldbinom(nearbyint(wt * y), nearbyint(wt), y) : 0.0;
        break;
    default:
        ls = GG_FM_NAN;
    }
    s[GG_FM_EF_LS] += ls;
    if (deriv < 1 || isc < 0) return;
    s[GG_FM_EF_DTH + isc] += -D / sca;
    s[GG_FM_EF_LSTH1(N) + isc] += l1 * sca;
    if (deriv < 2) return;
    const int q = gg_fm_gfam_pk(isc, isc, N);
    s[GG_FM_EF_DTH2(N) + q] += D / sca;
    s[GG_FM_EF_LSTH2(N, N) + q] += l2 * sca * sca + l1 * sca;
}

/* the member's initialize: family_math.h's mustart (binomial's with the
 * prior weight as its trials) or nb()'s */
GG_FM double gg_fm_gfam_mustart(double y, double yat, double wt, const gg_fm_efpar *par)
{
    const gg_fm_gfmem *m = gg_fm_gfam_member(par, yat);
    if (!m) return GG_FM_NAN;
    return m->efam ? y + (y == 0) / 6.0 : gg_fm_mustart(m->fam, y, wt);
}

/* a usable start for the row's member and link */
GG_FM int gg_fm_gfam_start_valid(double yat, double eta, const gg_fm_efpar *par)
{
    const gg_fm_gfmem *m = gg_fm_gfam_member(par, yat);
    if (!m) return 0;
    gg_fm_link l;
    l.code = m->link;
    l.power = m->lpow;
    return gg_fm_start_valid(m->efam ? GG_FM_NEGBIN : m->fam, l, eta);
}

#endif
