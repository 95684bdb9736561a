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

/* scat()$Dd(y, mu, theta, wt, level) in mgcv's expressions (R's x^2 as
 * x * x, its other powers pow), for efam_outer.h: theta's two columns and
 * their three pairs (1,1), (1,2), (2,2) */
GG_FM void gg_fm_scat_dd(double y, double mu, double wt, const gg_fm_efpar *par, int level,
                         gg_fm_efdd *r)
{
    const double min_df = par->aux[0];
    const double nu = exp(par->th[0]) + min_df, sig = exp(par->th[1]);
    const double nu1 = nu + 1, ym = y - mu, nu2 = nu - min_df;
    const double ys = ym / sig, a = 1 + (ys * ys) / nu;
    const double nu1ym = nu1 * ym, sig2a = (sig * sig) * a, nusig2a = nu * sig2a;
    const double f = nu1ym / nusig2a, f1 = ym / nusig2a;
    r->Dmu = -2 * wt * f;
    r->Dmu2 = 2 * wt * nu1 * (1 / nusig2a - 2 * (f1 * f1));
    r->EDmu2 = 2 * nu1 / (sig * sig) / (nu + 3);
    if (level < 1) return;
    const double nu1nusig2a = nu1 / nusig2a, nu2nu = nu2 / nu, fym = f * ym, ff1 = f * f1;
    const double f1ym = f1 * ym, fymf1 = fym * f1, ymsig2a = ym / sig2a;
    r->Dth[0] = 1 * wt * nu2 * (log(a) - fym / nu);
    r->Dth[1] = -2 * wt * fym;
    r->Dmuth[0] = 2 * wt * (f - ymsig2a - fymf1) * nu2nu;
    r->Dmuth[1] = 4 * wt * f * (1 - f1ym);
    r->Dmu3 = 4 * wt * f * (3 / nusig2a - 4 * (f1 * f1));
    r->Dmu2th[0] = 2 * wt *
                   (-nu1nusig2a + 1 / sig2a + 5 * ff1 - 2 * f1ym / sig2a - 4 * fymf1 * f1) *
                   nu2nu;
    r->Dmu2th[1] = 4 * wt * (-nu1nusig2a + ff1 * 5 - 4 * ff1 * f1ym);
    if (level < 2) return;
    const double nu1nu = nu1 / nu, fymf1ym = fym * f1ym, f1ymf1 = f1ym * f1;
    r->Dmu4 = 12 * wt * (-nu1nusig2a / nusig2a + 8 * ff1 / nusig2a - 8 * ff1 * (f1 * f1));
    r->Dmu3th[0] = 4 * wt *
                   (-6 * f / nusig2a + 3 * f1 / sig2a + 18 * ff1 * f1 - 4 * f1ymf1 / sig2a -
                    12 * nu1ym * pow(f1, 4)) *
                   nu2nu;
    r->Dmu3th[1] = 48 * wt * f * (-1 / nusig2a + 3 * (f1 * f1) - 2 * f1ymf1 * f1);
    r->Dth2[0] = 1 * wt *
                 (nu2 * log(a) + nu2nu * (ym * ym) *
                                     (-2 * nu2 - nu1 + 2 * nu1 * nu2nu - nu1 * nu2nu * f1ym) /
                                     nusig2a);
    r->Dth2[1] = 2 * wt * (fym - ym * ymsig2a - fymf1ym) * nu2nu;
    r->Dth2[2] = 4 * wt * fym * (1 - f1ym);
    const double term = 2 * nu2nu - 2 * nu1nu * nu2nu - 1 + nu1nu;
    r->Dmuth2[0] = 2 * wt * f1 * nu2 *
                   (term - 2 * nu2nu * f1ym + 4 * fym * nu2nu / nu - fym / nu -
                    2 * fymf1ym * nu2nu / nu);
    r->Dmuth2[1] = 4 * wt *
                   (-f + ymsig2a + 3 * fymf1 - ymsig2a * f1ym - 2 * fymf1 * f1ym) * nu2nu;
    r->Dmuth2[2] = 8 * wt * f * (-1 + 3 * f1ym - 2 * (f1ym * f1ym));
    r->Dmu2th2[0] = 2 * wt * nu2 *
                    (-term + 10 * nu2nu * f1ym - 16 * fym * nu2nu / nu - 2 * f1ym +
                     5 * nu1nu * f1ym - 8 * nu2nu * (f1ym * f1ym) + 26 * fymf1ym * nu2nu / nu -
                     4 * nu1nu * (f1ym * f1ym) - 12 * nu1nu * nu2nu * pow(f1ym, 3)) /
                    nusig2a;
    r->Dmu2th2[1] = 4 * wt *
                    (nu1nusig2a - 1 / sig2a - 11 * nu1 * (f1 * f1) + 5 * f1ym / sig2a +
                     22 * nu1 * f1ymf1 * f1 - 4 * (f1ym * f1ym) / sig2a -
                     12 * nu1 * (f1ymf1 * f1ymf1)) *
                    nu2nu;
    r->Dmu2th2[2] = 8 * wt *
                    (nu1nusig2a - 11 * nu1 * (f1 * f1) + 22 * nu1 * f1ymf1 * f1 -
                     12 * nu1 * (f1ymf1 * f1ymf1));
}

/* scat()$initialize: mustart <- y + (y == 0) * 0.1 */
GG_FM double gg_fm_scat_mustart(double y, double wt, const gg_fm_efpar *par)
{
    (void) wt;
    (void) par;
    return y + (y == 0) * 0.1;
}

#endif
