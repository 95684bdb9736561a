/* efam_tw.h -- mgcv's tw() for efam_math.h (see there for the contract).
 * TODO: not yet written; every function returns NaN. */
#ifndef GAMGPU_EFAM_TW_H
#define GAMGPU_EFAM_TW_H

GG_FM double gg_fm_tw_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                          double *Dmu, double *EDmu2)
{
    *Dmu = *EDmu2 = GG_FM_NAN;
    return GG_FM_NAN;
}

GG_FM void gg_fm_tw_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                              int deriv, double *s)
{
    s[GG_FM_EF_DEV] = GG_FM_NAN;
}

GG_FM double gg_fm_tw_mustart(double y, double wt, const gg_fm_efpar *par)
{
    return GG_FM_NAN;
}

#endif
