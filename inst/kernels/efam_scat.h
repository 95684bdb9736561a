/* efam_scat.h -- mgcv's scat() (scaled t) for efam_math.h (see there for
 * the contract), in mgcv 1.8-41's own expressions and order.
 *
 * Parameters: nth = 2, par->th[] = scat()$getTheta() = (log(nu - min.df),
 * log sig): y = mu + sig t_nu; par->aux[0] = min.df, the family's .min.df
 * (scat(min.df = ), default 3; scat(theta = ) may lower it); aux[1..3]
 * unused; scale_est = 0.
 *
 * As mgcv's Dd, EDmu2 = 2 (nu + 1) / (sig^2 (nu + 3)) does not carry the
 * prior weight (Dmu does), so bgam.fit's w ignores prior weights for
 * scat() while z = eta - Dmu / (EDmu2 mu.eta) scales with them.  ls is a
 * sum over rows of w times a per-row term (lgamma((nu + 1) / 2) -
 * lgamma(nu / 2) - log(sig sqrt(pi nu)), independent of y and mu); lsth1
 * = (sum w t1, -sum w), lsth2[1, 1] = sum w t2, lsth2[1, 2] = lsth2[2, 2]
 * = 0. */
#ifndef GAMGPU_EFAM_SCAT_H
#define GAMGPU_EFAM_SCAT_H

/* scat()$dev.resids(y, mu, wt, theta) */
GG_FM double gg_fm_scat_dev(double y, double mu, double wt, double nu, double sig)
{
    const double r = (y - mu) / sig;
    return wt * (nu + 1) * log1p((1 / nu) * (r * r));
}

GG_FM double gg_fm_scat_dd0(double y, double mu, double wt, const gg_fm_efpar *par,
                            double *Dmu, double *EDmu2)
{
    const double nu = exp(par->th[0]) + par->aux[0], sig = exp(par->th[1]);
    const double nu1 = nu + 1, ym = y - mu, r = ym / sig;
    const double a = 1 + (r * r) / nu;
    const double nusig2a = nu * ((sig * sig) * a);
    /* scat()$Dd, level 0 */
    *Dmu = -2 * wt * ((nu1 * ym) / nusig2a);
    *EDmu2 = 2 * nu1 / (sig * sig) / (nu + 3);
    return gg_fm_scat_dev(y, mu, wt, nu, sig);
}

GG_FM void gg_fm_scat_theta_row(double y, double mu, double wt, const gg_fm_efpar *par,
                                int deriv, double *s)
{
    const double min_df = par->aux[0];
    const double nu = exp(par->th[0]) + min_df, sig = exp(par->th[1]);
    s[GG_FM_EF_DEV] += gg_fm_scat_dev(y, mu, wt, nu, sig);
    if (deriv < 0) return;
    const double nu2 = nu - min_df, nu2nu = nu2 / nu, nu12 = (nu + 1) / 2;
    /* scat()$ls: the row's term times w */
    s[GG_FM_EF_LS] += (GG_FM_LGAMMA(nu12) - GG_FM_LGAMMA(nu / 2) - log(sig * pow(GG_FM_PI * nu, 0.5))) * wt;
    if (deriv < 1) return;
    const double nu1 = nu + 1, ym = y - mu, r = ym / sig;
    const double a = 1 + (r * r) / nu;
    const double sig2a = (sig * sig) * a, nusig2a = nu * sig2a;
    const double f = (nu1 * ym) / nusig2a, f1 = ym / nusig2a;
    const double fym = f * ym, f1ym = f1 * ym;
    const double psi0_nu12 = gg_fm_digamma(nu12), psi0_nu_2 = gg_fm_digamma(nu / 2);
    /* scat()$Dd, level 1: Dth */
    s[GG_FM_EF_DTH] += 1 * wt * nu2 * (log(a) - fym / nu);
    s[GG_FM_EF_DTH + 1] += -2 * wt * fym;
    /* ls's LSTH1 */
    s[GG_FM_EF_LSTH1(2)] += wt * (nu2 * psi0_nu12 / 2 - nu2 * psi0_nu_2 / 2 - 0.5 * nu2nu);
    s[GG_FM_EF_LSTH1(2) + 1] += -1 * wt;
    if (deriv < 2) return;
    const double ymsig2a = ym / sig2a, fymf1ym = fym * f1ym;
    /* scat()$Dd, level 2: Dth2 packed (1,1), (1,2), (2,2) */
    s[GG_FM_EF_DTH2(2)] += 1 * wt *
                           (nu2 * log(a) + nu2nu * (ym * ym) *
                                               (-2 * nu2 - nu1 + 2 * nu1 * nu2nu -
                                                nu1 * nu2nu * f1ym) / nusig2a);
    s[GG_FM_EF_DTH2(2) + 1] += 2 * wt * (fym - ym * ymsig2a - fymf1ym) * nu2nu;
    s[GG_FM_EF_DTH2(2) + 2] += 4 * wt * fym * (1 - f1ym);
    /* ls's lsth2[1, 1]; lsth2[1, 2] = lsth2[2, 2] = 0 */
    s[GG_FM_EF_LSTH2(2, 2)] += (nu2 * nu2 * gg_fm_trigamma(nu12) / 4 + nu2 * psi0_nu12 / 2 -
                                nu2 * nu2 * gg_fm_trigamma(nu / 2) / 4 - nu2 * psi0_nu_2 / 2 +
                                0.5 * (nu2nu * nu2nu) - 0.5 * nu2nu) * wt;
}

/* scat()$initialize: mustart <- y + (y == 0) * 0.1 */
GG_FM double gg_fm_scat_mustart(double y, double wt, const gg_fm_efpar *par)
{
    (void) wt;
    (void) par;
    return y + (y == 0) * 0.1;
}

#endif
