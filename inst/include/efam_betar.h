/* efam_betar.h -- mgcv's betar() (beta regression) for efam_math.h (see
 * there for the contract), in mgcv 1.8-41's own expressions and order.
 *
 * Parameters: nth = 1, par->th[0] = betar()$getTheta() = log phi (the
 * beta's precision: y ~ Beta(mu phi, (1 - mu) phi)); par->aux[0] = eps,
 * the family's .betarEps (betar(eps = ), default 100 * DBL_EPSILON), used
 * only by the mustart's clamp; aux[1..3] unused; scale_est = 0.
 *
 * y must lie in (0, 1): the R side applies betar()$preinitialize (y
 * clamped to [eps, 1 - eps]) before the fit, as bgam.fit does, so these
 * functions see clamped y.  betar()$dev.resids is -2 wt log dbeta(y) and
 * betar()$ls is identically 0 (ls, lsth1, lsth2 = 0): the ls sums get
 * nothing from these rows.  Only digamma and trigamma are needed (Dd's
 * psigamma(, 2) and (, 3) enter Dmu3, Dmu2th, ..., not dd0 or the theta
 * sums). */
#ifndef GAMGPU_EFAM_BETAR_H
#define GAMGPU_EFAM_BETAR_H

/* betar()$dev.resids(y, mu, wt, log phi) */
GG_FM double gg_fm_betar_dev(double y, double mu, double wt, double theta)
{
    const double muth = mu * theta;
    return 2 * wt * (-GG_FM_LGAMMA(theta) + GG_FM_LGAMMA(muth) + GG_FM_LGAMMA(theta - muth) -
                     muth * (log(y) - log1p(-y)) - theta * log1p(-y) + log(y) + log1p(-y));
}

GG_FM double gg_fm_betar_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                             double *Dmu, double *EDmu2)
{
    const double theta = exp(par->th[0]);
    const double onemu = 1 - mu, muth = mu * theta, onemuth = onemu * theta;
    const double log_yoney = log(y) - log1p(-y);
    /* betar()$Dd, level 0 (EDmu2 = Dmu2) */
    *Dmu = 2 * wt * theta * (gg_fm_digamma(muth) - gg_fm_digamma(onemuth) - log_yoney);
    *EDmu2 = 2 * wt * (theta * theta) * (gg_fm_trigamma(muth) + gg_fm_trigamma(onemuth));
    return gg_fm_betar_dev(y, mu, wt, theta);
}

GG_FM void gg_fm_betar_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                                 int deriv, double *s)
{
    const double theta = exp(par->th[0]);
    s[GG_FM_EF_DEV] += gg_fm_betar_dev(y, mu, wt, theta);
    if (deriv < 1) return; /* ls = 0 */
    const double onemu = 1 - mu, muth = mu * theta, onemuth = onemu * theta;
    const double log_yoney = log(y) - log1p(-y);
    /* betar()$Dd, level 2: Dth and Dth2 */
    const double Dth = 2 * wt * theta *
                       (-mu * log_yoney - log1p(-y) + mu * gg_fm_digamma(muth) +
                        onemu * gg_fm_digamma(onemuth) - gg_fm_digamma(theta));
    s[GG_FM_EF_DTH] += Dth;
    /* lsth1 = 0 */
    if (deriv < 2) return;
    s[GG_FM_EF_DTH2(1)] += Dth + 2 * wt * (theta * theta) *
                                     ((mu * mu) * gg_fm_trigamma(muth) +
                                      (onemu * onemu) * gg_fm_trigamma(onemuth) -
                                      gg_fm_trigamma(theta));
    /* lsth2 = 0 */
}

/* betar()$initialize: mustart <- y, y as preinitialize leaves it (the
 * clamp to [eps, 1 - eps] repeated here, a no-op on clamped y) */
GG_FM double gg_fm_betar_mustart(double y, double wt, const gg_fm_efpar *par)
{
    (void) wt;
    const double eps = par->aux[0];
    if (y >= 1 - eps) y = 1 - eps;
    if (y <= eps) y = eps;
    return y;
}

/* betar()$Dd(y, mu, theta, wt, level) in mgcv's expressions, theta =
 * par->th[0] = log phi (efam_outer.h) */
GG_FM void gg_fm_betar_dd(double y, double mu, double wt, const gg_fm_efpar *par, int level,
                          gg_fm_efdd *r)
{
    const double theta = exp(par->th[0]), th2 = theta * theta;
    const double onemu = 1 - mu, muth = mu * theta, onemuth = onemu * theta;
    const double psi0_muth = gg_fm_digamma(muth), psi0_onemuth = gg_fm_digamma(onemuth);
    const double psi1_muth = gg_fm_trigamma(muth), psi1_onemuth = gg_fm_trigamma(onemuth);
    const double log_yoney = log(y) - log1p(-y);
    r->Dmu = 2 * wt * theta * (psi0_muth - psi0_onemuth - log_yoney);
    r->Dmu2 = 2 * wt * th2 * (psi1_muth + psi1_onemuth);
    r->EDmu2 = r->Dmu2;
    if (level < 1) return;
    const double th3 = pow(theta, 3);
    const double psi2_muth = gg_fm_tetragamma(muth), psi2_onemuth = gg_fm_tetragamma(onemuth);
    r->Dth[0] = 2 * wt * theta * (-mu * log_yoney - log1p(-y) + mu * psi0_muth +
                               onemu * psi0_onemuth - gg_fm_digamma(theta));
    r->Dmuth[0] = r->Dmu + 2 * wt * th2 * (mu * psi1_muth - onemu * psi1_onemuth);
    r->Dmu3 = 2 * wt * th3 * (psi2_muth - psi2_onemuth);
    r->Dmu2th[0] = 2 * r->Dmu2 + 2 * wt * th3 * (mu * psi2_muth + onemu * psi2_onemuth);
    if (level < 2) return;
    const double th4 = pow(theta, 4), mu2 = mu * mu, onemu2 = onemu * onemu;
    const double psi3_muth = gg_fm_pentagamma(muth), psi3_onemuth = gg_fm_pentagamma(onemuth);
    r->Dmu4 = 2 * wt * th4 * (psi3_muth + psi3_onemuth);
    r->Dth2[0] = r->Dth[0] + 2 * wt * th2 * (mu2 * psi1_muth + onemu2 * psi1_onemuth -
                                       gg_fm_trigamma(theta));
    r->Dmuth2[0] = r->Dmuth[0] + 2 * wt * th2 * (mu2 * theta * psi2_muth + 2 * mu * psi1_muth -
                                           theta * onemu2 * psi2_onemuth -
                                           2 * onemu * psi1_onemuth);
    r->Dmu2th2[0] = 2 * r->Dmu2th[0] + 2 * wt * th3 * (mu2 * theta * psi3_muth + 3 * mu * psi2_muth +
                                                 onemu2 * theta * psi3_onemuth +
                                                 3 * onemu * psi2_onemuth);
    r->Dmu3th[0] = 3 * r->Dmu3 + 2 * wt * th4 * (mu * psi3_muth - onemu * psi3_onemuth);
}

#endif
