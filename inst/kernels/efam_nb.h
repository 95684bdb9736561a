/* efam_nb.h -- mgcv's nb() in efam_math.h's terms: par->th[0] = log theta.
 * Its sums are family_math.h's gg_fm_nb_theta_row (one theta, scale 1). */
#ifndef GAMGPU_EFAM_NB_H
#define GAMGPU_EFAM_NB_H

GG_FM double gg_fm_nb_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                          double *Dmu, double *EDmu2)
{
    const double th = exp(par->th[0]), yth = y + th, muth = mu + th;
    *Dmu = 2 * wt * (yth / muth - y / mu);    /* nb()$Dd, level 0 */
    *EDmu2 = 2 * wt * (1 / mu - 1 / muth);
    return 2 * wt * (y * log((y > 1 ? y : 1.0) / mu) - (y + th) * log((y + th) / (mu + th)));
}

GG_FM void gg_fm_nb_ef_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                                 int deriv, double *s)
{
    double t[GG_FM_NB_NSUM] = {0, 0, 0, 0, 0, 0};
    gg_fm_nb_theta_row(y, mu, wt, par->th[0], deriv < 0 ? 0 : deriv, t);
    s[GG_FM_EF_DEV] += t[0];
    if (deriv < 0) return;
    s[GG_FM_EF_LS] += t[1];
    if (deriv > 0) {
        s[GG_FM_EF_DTH] += t[2];
        s[GG_FM_EF_LSTH1(1)] += t[4];
    }
    if (deriv > 1) {
        s[GG_FM_EF_DTH2(1)] += t[3];
        s[GG_FM_EF_LSTH2(1, 1)] += t[5];
    }
}

#endif
