/* efam_nb.h -- mgcv's nb() in efam_math.h's terms: par->th[0] = log theta
 * (one theta, scale 1); its deviance is family_math.h's negbin one. */
#ifndef GAMGPU_EFAM_NB_H
#define GAMGPU_EFAM_NB_H

GG_FM double gg_fm_nb_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                          double *Dmu, double *EDmu2)
{
    const double th = exp(par->th[0]), yth = y + th, muth = mu + th;
    *Dmu = 2 * wt * (yth / muth - y / mu);    /* nb()$Dd, level 0 */
    *EDmu2 = 2 * wt * (1 / mu - 1 / muth);
    return gg_fm_dev_resid(GG_FM_NEGBIN, y, mu, wt, th);
}

/* The row's part of estimate.theta()'s sums at log theta th, in mgcv's
 * expressions (nb()'s dev.resids, ls and Dd(level = 2)'s Dth, Dth2). */
GG_FM void gg_fm_nb_ef_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                                 int deriv, double *s)
{
    const double th = par->th[0], Th = exp(th), yth = y + Th, muth = mu + Th;
    s[GG_FM_EF_DEV] += gg_fm_dev_resid(GG_FM_NEGBIN, y, mu, wt, Th);
    if (deriv < 0) return;
    const double ylogy = y > 0 ? y * log(y) : y;
    s[GG_FM_EF_LS] -= wt * ((y + Th) * log(y + Th) - ylogy + GG_FM_LGAMMA(y + 1) - Th * log(Th) +
                            GG_FM_LGAMMA(Th) - GG_FM_LGAMMA(Th + y));
    if (deriv < 1) return;
    const double lyth = log(yth), psi0_yth = gg_fm_digamma(yth), psi0_th = gg_fm_digamma(Th);
    s[GG_FM_EF_DTH] += -2 * wt * Th * (log(yth / muth) + (1 - yth / muth));
    s[GG_FM_EF_LSTH1(1)] += -(Th * (lyth - psi0_yth + psi0_th - th)) * wt;
    if (deriv < 2) return;
    s[GG_FM_EF_DTH2(1)] += -2 * wt * Th * (log(yth / muth) + Th * yth / (muth * muth) -
                                           yth / muth - 2 * Th / muth + 1 + Th / yth);
    s[GG_FM_EF_LSTH2(1, 1)] -= Th * (lyth - Th * gg_fm_trigamma(yth) - psi0_yth + Th / yth +
                                     Th * gg_fm_trigamma(Th) + psi0_th - th - 1) * wt;
}

/* nb()$Dd(y, mu, theta, wt, level) in mgcv's expressions (R's x^2 as
 * x * x, its other powers pow), theta = par->th[0] its log. */
GG_FM void gg_fm_nb_dd(double y, double mu, double wt, const gg_fm_efpar *par, int level,
                       gg_fm_efdd *r)
{
    const double th = exp(par->th[0]), yth = y + th, muth = mu + th;
    const double muth2 = muth * muth;
    r->Dmu = 2 * wt * (yth / muth - y / mu);
    r->Dmu2 = -2 * wt * (yth / muth2 - y / (mu * mu));
    r->EDmu2 = 2 * wt * (1 / mu - 1 / muth);
    if (level < 1) return;
    r->Dth[0] = -2 * wt * th * (log(yth / muth) + (1 - yth / muth));
    r->Dmuth[0] = 2 * wt * th * (1 - yth / muth) / muth;
    r->Dmu3 = 4 * wt * (yth / pow(muth, 3) - y / pow(mu, 3));
    r->Dmu2th[0] = 2 * wt * th * (2 * yth / muth - 1) / muth2;
    if (level < 2) return;
    r->Dmu4 = 2 * wt * (6 * y / pow(mu, 4) - 6 * yth / pow(muth, 4));
    r->Dth2[0] = -2 * wt * th * (log(yth / muth) + th * yth / muth2 - yth / muth - 2 * th / muth +
                              1 + th / yth);
    r->Dmuth2[0] = 2 * wt * th * (2 * th * yth / muth2 - yth / muth - 2 * th / muth + 1) / muth;
    r->Dmu2th2[0] = 2 * wt * th * (-6 * yth * th / muth2 + 2 * yth / muth + 4 * th / muth - 1) /
                 muth2;
    r->Dmu3th[0] = 4 * wt * th * (1 - 3 * yth / muth) / pow(muth, 3);
}

#endif
