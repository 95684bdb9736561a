/* efam_outer.h -- the rows of gam()'s REML and ML for an extended family
 * (nb(), tw(), betar(), scat(), ziP(), ocat(): R/outer_efam.R), row by row:
 * mgcv's family$Dd (efam_nb.h, efam_tw.h, efam_betar.h, efam_scat.h,
 * efam_zip.h, efam_ocat.h) taken through the link as its dDeta()
 * takes it, and from those the vectors gam.fit4's Newton iteration and
 * its derivatives weight their products with.  Written once for the host
 * (src/engine/outer_rows.c) and NVRTC (inst/kernels/outer.cu), as
 * outer_math.h is for the exponential families. */
#ifndef GAMGPU_EFAM_OUTER_H
#define GAMGPU_EFAM_OUTER_H

#include "efam_math.h"

/* 1 for a family, link and count of theta values whose rows are here:
 * nb() (negbin with efam set), tw(), betar(), cnorm(), clog() (one theta),
 * scat() and ziP() (two), ocat(R) (R - 2, at most GG_FM_EFO_MAXTH), cpois()
 * (none), with mgcv's links for them; gfam() of up to GG_FM_EFO_MAXTH
 * theta values whose members' links are gg_fm_ef_deta()'s */
GG_FM int gg_fm_ef_outer_ok(int f, gg_fm_link l, const gg_fm_efpar *par)
{
    const int nth = par->nth;
    if (f == GG_FM_GFAM) {
        /* gfam(): every member's link one that gg_fm_ef_deta() has */
        if (nth > GG_FM_EFO_MAXTH || par->ngm < 1) return 0;
        for (int k = 0; k < par->ngm; k++) {
            const int c = par->gm[k].link;
            if (!(c == GG_FM_IDENTITY || c == GG_FM_LOG || c == GG_FM_SQRT || c == GG_FM_INVERSE ||
                  c == GG_FM_LOGIT || c == GG_FM_PROBIT || c == GG_FM_CLOGLOG || c == GG_FM_CAUCHIT))
                return 0;
        }
        return 1;
    }
    if (f == GG_FM_NEGBIN || f == GG_FM_TW)
        return nth == 1 && (l.code == GG_FM_LOG || l.code == GG_FM_IDENTITY || l.code == GG_FM_SQRT);
    if (f == GG_FM_BETAR)
        return nth == 1 && (l.code == GG_FM_LOGIT || l.code == GG_FM_PROBIT || l.code == GG_FM_CLOGLOG ||
                            l.code == GG_FM_CAUCHIT);
    if (f == GG_FM_SCAT)
        return nth == 2 && (l.code == GG_FM_IDENTITY || l.code == GG_FM_LOG || l.code == GG_FM_INVERSE);
    if (f == GG_FM_ZIP)
        return nth == 2 && l.code == GG_FM_IDENTITY;
    if (f == GG_FM_OCAT)
        return nth >= 1 && nth <= GG_FM_EFO_MAXTH && l.code == GG_FM_IDENTITY;
    if (GG_FM_EF_CENSORED(f))
        return nth == (f == GG_FM_CPOIS ? 0 : 1) &&
               (l.code == GG_FM_IDENTITY || l.code == GG_FM_LOG || l.code == GG_FM_SQRT);
    return 0;
}

/* mgcv's dDeta(y, mu, wt, theta, fam, level): Dd's derivatives in mu
 * taken to eta's, with fix.family.link's g2g, g3g, g4g (d^k eta / d mu^k
 * over (d eta / d mu)^k) in its expressions for the links above; theta's
 * nth (par->nth) and their pairs packed as gg_fm_efdd's */
typedef struct gg_fm_efdeta {
    double Deta, Deta2, EDeta2, Deta3, Deta4;
    double Dth[GG_FM_EFO_MAXTH], Detath[GG_FM_EFO_MAXTH], Deta2th[GG_FM_EFO_MAXTH],
           Deta3th[GG_FM_EFO_MAXTH];
    double Dth2[GG_FM_EFO_MAXPK], Detath2[GG_FM_EFO_MAXPK], Deta2th2[GG_FM_EFO_MAXPK];
} gg_fm_efdeta;

GG_FM void gg_fm_ef_dd(int f, double y, double yat, double mu, double wt,
                       const gg_fm_efpar *par, int level, gg_fm_efdd *r)
{
    if (GG_FM_EF_CENSORED(f)) gg_fm_cens_dd(f, y, yat, mu, wt, par, level, r);
    else if (f == GG_FM_GFAM) gg_fm_gfam_dd(y, yat, mu, wt, par, level, r);
    else if (f == GG_FM_TW) gg_fm_tw_dd(y, mu, wt, par, level, r);
    else if (f == GG_FM_BETAR) gg_fm_betar_dd(y, mu, wt, par, level, r);
    else if (f == GG_FM_SCAT) gg_fm_scat_dd(y, mu, wt, par, level, r);
    else if (f == GG_FM_ZIP) gg_fm_zip_dd(y, mu, wt, par, level, r);
    else if (f == GG_FM_OCAT) gg_fm_ocat_dd(y, mu, wt, par, level, r);
    else gg_fm_nb_dd(y, mu, wt, par, level, r);
}

GG_FM void gg_fm_ef_deta(gg_fm_link l, double mu, int nth, int level, const gg_fm_efdd *r,
                         gg_fm_efdeta *d)
{
    const int npk = GG_FM_EFO_NPK(nth);
    if (l.code == GG_FM_IDENTITY) {
        d->Deta = r->Dmu;
        d->Deta2 = r->Dmu2;
        d->EDeta2 = r->EDmu2;
        if (level < 1) return;
        d->Deta3 = r->Dmu3;
        for (int j = 0; j < nth; j++) {
            d->Dth[j] = r->Dth[j];
            d->Detath[j] = r->Dmuth[j];
            d->Deta2th[j] = r->Dmu2th[j];
        }
        if (level < 2) return;
        d->Deta4 = r->Dmu4;
        for (int j = 0; j < nth; j++) d->Deta3th[j] = r->Dmu3th[j];
        for (int j = 0; j < npk; j++) {
            d->Dth2[j] = r->Dth2[j];
            d->Detath2[j] = r->Dmuth2[j];
            d->Deta2th2[j] = r->Dmu2th2[j];
        }
        return;
    }
    double g2g, g3g, g4g;
    if (l.code == GG_FM_LOG) {
        g2g = -1;
        g3g = 2;
        g4g = -6;
    } else if (l.code == GG_FM_SQRT) {
        g2g = -gg_fm_rpow(mu, -0.5);
        g3g = 3 * gg_fm_rpow(mu, -1);
        g4g = -15 * gg_fm_rpow(mu, -1.5);
    } else if (l.code == GG_FM_INVERSE) {
        g2g = 2 * mu;
        g3g = 6 * (mu * mu);
        g4g = 24 * pow(mu, 3);
    } else if (l.code == GG_FM_LOGIT) {
        const double a = 1 - mu;
        g2g = mu * mu - a * a;
        g3g = 2 * pow(mu, 3) + 2 * pow(a, 3);
        g4g = 6 * pow(mu, 4) - 6 * pow(a, 4);
    } else if (l.code == GG_FM_PROBIT) {
        const double eta = gg_fm_qnorm(mu);
        g2g = eta;
        g3g = 1 + 2 * (eta * eta);
        g4g = 7 * eta + 6 * pow(eta, 3);
    } else if (l.code == GG_FM_CLOGLOG) {
        const double l1m = log1p(-mu);
        g2g = -l1m - 1;
        g3g = l1m * (2 * l1m + 3) + 2;
        g4g = -l1m * (l1m * (6 * l1m + 11) + 12) - 6;
    } else if (l.code == GG_FM_CAUCHIT) {
        const double eta = gg_fm_qcauchy(mu), eta2 = eta * eta, e1 = 1 + eta2;
        g2g = eta / e1;
        g3g = (1 + 3 * eta2) / (e1 * e1);
        g4g = ((8 + 12 * eta2) / (e1 * e1)) * (eta / e1);
    } else {
        g2g = g3g = g4g = GG_FM_NAN;
    }
    const double ig1 = gg_fm_mu_eta(l, gg_fm_linkfun(l, mu)), ig12 = ig1 * ig1;
    d->Deta = r->Dmu * ig1;
    d->Deta2 = r->Dmu2 * ig12 - r->Dmu * g2g * ig1;
    d->EDeta2 = r->EDmu2 * ig12;
    if (level < 1) return;
    const double ig13 = ig12 * ig1, g2g2 = g2g * g2g;
    d->Deta3 = r->Dmu3 * ig13 - 3 * r->Dmu2 * g2g * ig12 + r->Dmu * (3 * g2g2 - g3g) * ig1;
    for (int j = 0; j < nth; j++) {
        d->Dth[j] = r->Dth[j];
        d->Detath[j] = r->Dmuth[j] * ig1;
        d->Deta2th[j] = r->Dmu2th[j] * ig12 - r->Dmuth[j] * g2g * ig1;
    }
    if (level < 2) return;
    d->Deta4 = (ig12 * ig12) * r->Dmu4 - 6 * r->Dmu3 * ig13 * g2g +
               r->Dmu2 * (15 * g2g2 - 4 * g3g) * ig12 -
               r->Dmu * (15 * pow(g2g, 3) - 10 * g2g * g3g + g4g) * ig1;
    for (int j = 0; j < nth; j++)
        d->Deta3th[j] = ig13 * r->Dmu3th[j] - 3 * r->Dmu2th[j] * g2g * ig12 +
                        r->Dmuth[j] * (3 * g2g2 - g3g) * ig1;
    for (int j = 0; j < npk; j++) {
        d->Dth2[j] = r->Dth2[j];
        d->Detath2[j] = r->Dmuth2[j] * ig1;
        d->Deta2th2[j] = ig12 * r->Dmu2th2[j] - r->Dmuth2[j] * g2g * ig1;
    }
}

/* One row of the outer iteration at mu (R/outer_efam.R's names): Newton's
 * weight w = Deta2 / 2 and its eta derivatives w1 = Deta3 / 2, w2 =
 * Deta4 / 2, dev1 = Deta, Fisher's weight wf = pmax(EDeta2 / 2, 0) and
 * (level 2) theta's columns th[] above and the row's Dth, Dth2 (level 0:
 * w, dev1, wf only, the rest 0).  good: the row's derivatives are finite,
 * as efam_pirls() (level 0) and efam_outer_score() (level 2) check them. */
typedef struct gg_fm_eforow {
    double w, w1, w2, dev1, wf;
    double th[GG_FM_EFO_NCOL(GG_FM_EFO_MAXTH)];
    double dth[GG_FM_EFO_MAXTH], dth2[GG_FM_EFO_MAXPK];
    int good;
} gg_fm_eforow;

GG_FM void gg_fm_ef_outer_row(int f, gg_fm_link l, double y, double yat, double pw, double mu,
                              const gg_fm_efpar *par, int level, gg_fm_eforow *o)
{
    const int nth = par->nth, npk = GG_FM_EFO_NPK(nth);
    gg_fm_efdd r = {0};
    gg_fm_efdeta e = {0};
    gg_fm_ef_dd(f, y, yat, mu, pw, par, level, &r);
    gg_fm_ef_deta(gg_fm_ef_link(f, l, yat, par), mu, nth, level, &r, &e);
    o->w = e.Deta2 / 2;
    o->dev1 = e.Deta;
    const double wf = e.EDeta2 / 2;
    o->wf = wf < 0 ? 0 : wf;           /* (pmax(0, NaN) is NaN) */
    o->w1 = e.Deta3 / 2;
    o->w2 = e.Deta4 / 2;
    int good = GG_FM_ISFINITE(e.Deta) && GG_FM_ISFINITE(e.Deta2);
    if (level >= 2) good = good && GG_FM_ISFINITE(e.Deta3) && GG_FM_ISFINITE(e.Deta4);
    for (int j = 0; j < nth; j++) {
        o->th[GG_FM_EFO_G(nth) + j] = e.Detath[j];
        o->th[GG_FM_EFO_A(nth) + j] = e.Deta2th[j] / 2;
        o->th[GG_FM_EFO_C(nth) + j] = e.Deta3th[j] / 2;
        o->dth[j] = e.Dth[j];
        if (level >= 2)
            good = good && GG_FM_ISFINITE(e.Dth[j]) && GG_FM_ISFINITE(e.Detath[j]) &&
                   GG_FM_ISFINITE(e.Deta2th[j]);
    }
    for (int j = 0; j < npk; j++) {
        o->th[GG_FM_EFO_B(nth) + j] = e.Detath2[j] / 2;
        o->th[GG_FM_EFO_D(nth) + j] = e.Deta2th2[j] / 2;
        o->dth2[j] = e.Dth2[j];
    }
    o->good = good;
}

#endif
