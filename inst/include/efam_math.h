/* efam_math.h -- mgcv's extended families (?family.mgcv) row by row,
 * written once and compiled twice (the CPU backend and NVRTC's row
 * kernels), as family_math.h is for the exponential families.
 *
 * An extended family is fitted as bgam.fit fits it: its penalized IRLS
 * rows come from the derivatives of the deviance with respect to mu
 * (family$Dd), and its parameters theta are estimated between iterations
 * by estimate.theta() from sums over the rows of the deviance, the
 * saturated log likelihood (family$ls) and their theta derivatives.  Per
 * family (efam_<family>.h) three functions:
 *
 *   gg_fm_<f>_dd0(y, mu, wt, par, &Dmu, &EDmu2)  -> dev.resids(y, mu, wt, theta)
 *       Dd(level = 0)'s Dmu and EDmu2, the prior weight wt where mgcv's
 *       include it (scat's EDmu2 and ziP's deviance leave it out, as mgcv's);
 *   gg_fm_<f>_theta_row(y, mu, wt, par, deriv, s)
 *       adds the row's part of the sums below (deriv -1: the deviance only;
 *       0: and ls; 1: and the first derivatives; 2: and the second);
 *   gg_fm_<f>_mustart(y, wt, par)                 -> family$initialize's mustart.
 * gfam() (efam_gfam.h) takes its rows' member index in yat and each row
 * its member's link: gg_fm_ef_link() gives the link a row is fitted with.
 *
 * The sums, for nth = par->nth theta values (mgcv's getTheta(), the
 * working parameters) and ns = nth + par->scale_est (tw(): log scale as
 * one more parameter), at the offsets GG_FM_EF_* of efam_par.h:
 *   [DEV]         sum dev.resids
 *   [LS]          ls(y, w, theta, scale)$ls (a sum over rows)
 *   [DTH + i]     sum Dd(level 2)$Dth[, i]
 *   [DTH2(nth)+k] sum Dd(level 2)$Dth2[, k], mgcv's packing (i <= j, row by row)
 *   [LSTH1(nth)+i]  ls$lsth1[i], i < ns
 *   [LSTH2(nth,ns)+k] ls$lsth2[i, j], i <= j packed as Dth2
 * Codes are family_math.h's GG_FM_* family codes and efam_par.h's; nb()
 * is family_math.h's negbin with par->th[0] = log theta (efam_nb.h).  The
 * censored families (efam_cens.h) take the row's second response column
 * yat too: the dispatchers below pass it (y where there is none). */
#ifndef GAMGPU_EFAM_MATH_H
#define GAMGPU_EFAM_MATH_H

#include "family_math.h"

#include "efam_par.h"

#include "efam_nb.h"
#include "efam_tw.h"
#include "efam_betar.h"
#include "efam_scat.h"
#include "efam_zip.h"
#include "efam_ocat.h"
#include "efam_cens.h"
#include "dens_math.h"
#include "efam_gfam.h"

GG_FM int gg_fm_is_efam(int f)
{
    return f == GG_FM_TW || f == GG_FM_BETAR || f == GG_FM_SCAT || f == GG_FM_ZIP ||
           f == GG_FM_OCAT || GG_FM_EF_CENSORED(f) || f == GG_FM_GFAM;
}

/* the link of a row: the family's, or gfam()'s member's */
GG_FM gg_fm_link gg_fm_ef_link(int f, gg_fm_link l, double yat, const gg_fm_efpar *par)
{
    return f == GG_FM_GFAM ? gg_fm_gfam_link(par, yat, l) : l;
}

GG_FM double gg_fm_ef_dd0(int f, double y, double yat, double mu, double wt,
                          const gg_fm_efpar *par, double *Dmu, double *EDmu2)
{
    if (GG_FM_EF_CENSORED(f)) return gg_fm_cens_dd0(f, y, yat, mu, wt, par, Dmu, EDmu2);
    if (f == GG_FM_GFAM) return gg_fm_gfam_dd0(y, yat, mu, wt, par, Dmu, EDmu2);
    switch (f) {
    case GG_FM_NEGBIN: return gg_fm_nb_dd0(y, mu, wt, par, Dmu, EDmu2);
    case GG_FM_TW: return gg_fm_tw_dd0(y, mu, wt, par, Dmu, EDmu2);
    case GG_FM_BETAR: return gg_fm_betar_dd0(y, mu, wt, par, Dmu, EDmu2);
    case GG_FM_SCAT: return gg_fm_scat_dd0(y, mu, wt, par, Dmu, EDmu2);
    case GG_FM_ZIP: return gg_fm_zip_dd0(y, mu, wt, par, Dmu, EDmu2);
    case GG_FM_OCAT: return gg_fm_ocat_dd0(y, mu, wt, par, Dmu, EDmu2);
    }
    *Dmu = *EDmu2 = GG_FM_NAN;
    return GG_FM_NAN;
}

GG_FM void gg_fm_ef_theta_row(int f, double y, double yat, double mu, double wt,
                              const gg_fm_efpar *par, int deriv, double *s)
{
    if (GG_FM_EF_CENSORED(f)) {
        gg_fm_cens_theta_row(f, y, yat, mu, wt, par, deriv, s);
        return;
    }
    if (f == GG_FM_GFAM) {
        gg_fm_gfam_theta_row(y, yat, mu, wt, par, deriv, s);
        return;
    }
    switch (f) {
    case GG_FM_NEGBIN: gg_fm_nb_ef_theta_row(y, mu, wt, par, deriv, s); return;
    case GG_FM_TW: gg_fm_tw_theta_row(y, mu, wt, par, deriv, s); return;
    case GG_FM_BETAR: gg_fm_betar_theta_row(y, mu, wt, par, deriv, s); return;
    case GG_FM_SCAT: gg_fm_scat_theta_row(y, mu, wt, par, deriv, s); return;
    case GG_FM_ZIP: gg_fm_zip_theta_row(y, mu, wt, par, deriv, s); return;
    case GG_FM_OCAT: gg_fm_ocat_theta_row(y, mu, wt, par, deriv, s); return;
    }
    s[GG_FM_EF_DEV] = GG_FM_NAN;
}

GG_FM double gg_fm_ef_mustart(int f, double y, double yat, double wt, const gg_fm_efpar *par)
{
    switch (f) {
    case GG_FM_GFAM: return gg_fm_gfam_mustart(y, yat, wt, par);
    case GG_FM_NEGBIN: return y + (y == 0) / 6.0;
    case GG_FM_TW: return gg_fm_tw_mustart(y, wt, par);
    case GG_FM_BETAR: return gg_fm_betar_mustart(y, wt, par);
    case GG_FM_SCAT: return gg_fm_scat_mustart(y, wt, par);
    case GG_FM_ZIP: return gg_fm_zip_mustart(y, wt, par);
    case GG_FM_OCAT: return gg_fm_ocat_mustart(y, wt, par);
    case GG_FM_CNORM:
    case GG_FM_CLOG:
    case GG_FM_CPOIS: return gg_fm_cens_mustart(y, par);
    }
    return GG_FM_NAN;
}

/* A usable start eta for an extended family's row (the censored families
 * start where their initialize puts them, family.c's gg_start_valid) */
GG_FM int gg_fm_ef_start_valid(int f, gg_fm_link l, double yat, double eta,
                               const gg_fm_efpar *par)
{
    if (GG_FM_EF_CENSORED(f)) return 1;
    if (f == GG_FM_GFAM) return gg_fm_gfam_start_valid(yat, eta, par);
    return gg_fm_start_valid(f, l, eta);
}

/* One penalized IRLS row of an extended family, as bgam.fit: with
 * ig1 = mu.eta(linkfun(mu)), w = EDeta2 / 2 = EDmu2 ig1^2 / 2 and
 * z = (eta - offset) - Deta.EDeta2 = (eta - offset) - Dmu / (EDmu2 ig1);
 * rows where either is not finite get w = z = 0.  Returns the row's
 * dev.resids. */
GG_FM double gg_fm_ef_row(int f, gg_fm_link l, double y, double yat, double pw, double off,
                          double eta, const gg_fm_efpar *par, double *mu, double *w, double *z)
{
    l = gg_fm_ef_link(f, l, yat, par);
    const double m = gg_fm_linkinv(l, eta);
    double Dmu, EDmu2;
    const double dev = gg_fm_ef_dd0(f, y, yat, m, pw, par, &Dmu, &EDmu2);
    double ww, zz;
    if (l.code == GG_FM_IDENTITY) {
        ww = EDmu2 * 0.5;
        zz = (eta - off) - Dmu / EDmu2;
    } else {
        const double ig1 = gg_fm_mu_eta(l, gg_fm_linkfun(l, m));
        ww = EDmu2 * ig1 * ig1 * 0.5;
        zz = (eta - off) - Dmu / (EDmu2 * ig1);
    }
    if (!GG_FM_ISFINITE(ww) || !GG_FM_ISFINITE(zz)) ww = zz = 0;
    *mu = m;
    *w = ww;
    *z = zz;
    return dev;
}

#endif
