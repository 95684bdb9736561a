/* outer_math.h -- the per-row mathematics of gam()'s outer smoothing
 * parameter iteration (mgcv's gam.fit3): the link's derivatives up to the
 * fourth and the variance function's up to the third (mgcv's
 * fix.family.link and fix.family.var), Newton's working weights and their
 * first two derivatives in eta, the deviance's and the Pearson statistic's
 * derivatives.  Written once for the host (src/engine/outer_rows.c) and, as
 * family_math.h, in a form NVRTC compiles too.  The expressions follow
 * mgcv's R code term by term (R/outer.R kept them there before), so the
 * host's values equal R's to rounding. */
#ifndef GAMGPU_OUTER_MATH_H
#define GAMGPU_OUTER_MATH_H

#include "family_math.h"

/* mgcv's probit derivatives divide by pmax(dnorm(eta), double.eps) */
GG_FM double gg_fm_probit_den(double eta)
{
    const double d = gg_fm_dnorm(eta);
    return d > GG_FM_EPS ? d : GG_FM_EPS;
}

/* mgcv's pmax(1 - mu b, double.eps) of the "logb" link's derivatives */
GG_FM double gg_fm_logb_mub(gg_fm_link l, double mu)
{
    const double m = 1.0 - mu * l.power;
    return m > GG_FM_EPS ? m : GG_FM_EPS;
}

/* exp(-|eta|), as mgcv's "lb" link's derivatives write it */
GG_FM double gg_fm_lb_e(double eta) { return exp(-eta * (eta > 0 ? 1.0 : eta < 0 ? -1.0 : 0.0)); }

/* shash()'s "logeb" link's em / (em - b), em = exp(mu), of its derivatives */
GG_FM double gg_fm_logeb_fr(gg_fm_link l, double mu)
{
    const double em = exp(mu);
    return em / (em - l.power);
}

/* d^2 eta / d mu^2 */
GG_FM double gg_fm_d2link(gg_fm_link l, double mu)
{
    switch (l.code) {
    case GG_FM_IDENTITY: return 0.0;
    case GG_FM_LOG: return -1.0 / (mu * mu);
    case GG_FM_INVERSE: return 2.0 / (mu * mu * mu);
    case GG_FM_LOGIT: return 1.0 / ((1.0 - mu) * (1.0 - mu)) - 1.0 / (mu * mu);
    case GG_FM_PROBIT: {
        const double eta = gg_fm_qnorm(mu), d = gg_fm_probit_den(eta);
        return eta / (d * d);
    }
    case GG_FM_CLOGLOG: {
        const double l1m = log1p(-mu);
        return -1.0 / ((1.0 - mu) * (1.0 - mu) * l1m) * (1.0 + 1.0 / l1m);
    }
    case GG_FM_CAUCHIT: {
        const double eta = gg_fm_qcauchy(mu);
        return 2.0 * GG_FM_PI * GG_FM_PI * eta * (1.0 + eta * eta);
    }
    case GG_FM_SQRT: return -0.25 * pow(mu, -1.5);
    case GG_FM_INVSQUARE: return 6.0 * pow(mu, -4.0);
    case GG_FM_POWER: {
        const double la = l.power;
        return la * (la - 1.0) * pow(mu, la - 2.0);
    }
    case GG_FM_LOGB: {
        const double mub = gg_fm_logb_mub(l, mu), a = mub * mu;
        return (2.0 * mub - 1.0) / (a * a);
    }
    case GG_FM_LB: {
        const double eta = gg_fm_linkfun(l, mu), e = gg_fm_lb_e(eta);
        return eta > 0 ? -(e * e + e) : -(1.0 + e) / (e * e);
    }
    case GG_FM_XI: {
        const double p = (mu + 1.0) / 1.5;
        return (1.0 / gg_fm_rpow(1.0 - p, 2.0) - 1.0 / gg_fm_rpow(p, 2.0)) / gg_fm_rpow(1.5, 2.0);
    }
    case GG_FM_LOGEB: {
        const double fr = gg_fm_logeb_fr(l, mu);
        return fr * (1.0 - fr);
    }
    }
    return GG_FM_NAN;
}

/* d^3 eta / d mu^3 */
GG_FM double gg_fm_d3link(gg_fm_link l, double mu)
{
    switch (l.code) {
    case GG_FM_IDENTITY: return 0.0;
    case GG_FM_LOG: return 2.0 / (mu * mu * mu);
    case GG_FM_INVERSE: {
        const double m2 = mu * mu;
        return -6.0 / (m2 * m2);
    }
    case GG_FM_LOGIT: {
        const double a = 1.0 - mu;
        return 2.0 / (a * a * a) + 2.0 / (mu * mu * mu);
    }
    case GG_FM_PROBIT: {
        const double eta = gg_fm_qnorm(mu), d = gg_fm_probit_den(eta);
        return (1.0 + 2.0 * eta * eta) / (d * d * d);
    }
    case GG_FM_CLOGLOG: {
        const double l1m = log1p(-mu), a = 1.0 - mu;
        return (-2.0 - 3.0 * l1m - 2.0 * l1m * l1m) / (a * a * a) / (l1m * l1m * l1m);
    }
    case GG_FM_CAUCHIT: {
        const double eta = gg_fm_qcauchy(mu), e2 = eta * eta;
        return 2.0 * GG_FM_PI * GG_FM_PI * GG_FM_PI * (1.0 + 3.0 * e2) * (1.0 + e2);
    }
    case GG_FM_SQRT: return 0.375 * pow(mu, -2.5);
    case GG_FM_INVSQUARE: return -24.0 * pow(mu, -5.0);
    case GG_FM_POWER: {
        const double la = l.power;
        return (la - 2.0) * (la - 1.0) * la * pow(mu, la - 3.0);
    }
    case GG_FM_LOGB: {
        const double mub = gg_fm_logb_mub(l, mu);
        return ((1.0 - mub) * mub * 6.0 - 2.0) / pow(mub * mu, 3.0);
    }
    case GG_FM_LB: {
        const double eta = gg_fm_linkfun(l, mu), e = gg_fm_lb_e(eta);
        return eta > 0 ? (2.0 * (e * e) + e) * (e + 1.0) : (2.0 + e) * (1.0 + e) / pow(e, 3.0);
    }
    case GG_FM_XI: {
        const double p = (mu + 1.0) / 1.5;
        return (2.0 / gg_fm_rpow(1.0 - p, 3.0) + 2.0 / gg_fm_rpow(p, 3.0)) / gg_fm_rpow(1.5, 3.0);
    }
    case GG_FM_LOGEB: {
        const double fr = gg_fm_logeb_fr(l, mu), oo = fr * (1.0 - fr);
        return oo - 2.0 * oo * fr;
    }
    }
    return GG_FM_NAN;
}

/* d^4 eta / d mu^4 */
GG_FM double gg_fm_d4link(gg_fm_link l, double mu)
{
    switch (l.code) {
    case GG_FM_IDENTITY: return 0.0;
    case GG_FM_LOG: return -6.0 / (mu * mu * mu * mu);
    case GG_FM_INVERSE: {
        const double m2 = mu * mu;
        return 24.0 / (m2 * m2 * mu);
    }
    case GG_FM_LOGIT: {
        const double a = 1.0 - mu;
        return 6.0 / (a * a * a * a) - 6.0 / (mu * mu * mu * mu);
    }
    case GG_FM_PROBIT: {
        const double eta = gg_fm_qnorm(mu), d = gg_fm_probit_den(eta);
        return (7.0 * eta + 6.0 * eta * eta * eta) / (d * d * d * d);
    }
    case GG_FM_CLOGLOG: {
        const double l1m = log1p(-mu), a = 1.0 - mu;
        return (-12.0 - 11.0 * l1m - 6.0 * l1m * l1m - 6.0 / l1m) / (a * a * a * a) /
               (l1m * l1m * l1m);
    }
    case GG_FM_CAUCHIT: {
        const double eta = gg_fm_qcauchy(mu), e2 = eta * eta, pi2 = GG_FM_PI * GG_FM_PI;
        return 2.0 * pi2 * pi2 * (8.0 * eta + 12.0 * e2 * eta) * (1.0 + e2);
    }
    case GG_FM_SQRT: return -0.9375 * pow(mu, -3.5);
    case GG_FM_INVSQUARE: return 120.0 * pow(mu, -6.0);
    case GG_FM_POWER: {
        const double la = l.power;
        return (la - 3.0) * (la - 2.0) * (la - 1.0) * la * pow(mu, la - 4.0);
    }
    case GG_FM_LOGB: {
        const double mub = gg_fm_logb_mub(l, mu);
        return (((24.0 * mub - 36.0) * mub + 24.0) * mub - 6.0) / pow(mub * mu, 4.0);
    }
    case GG_FM_LB: {
        const double eta = gg_fm_linkfun(l, mu), e = gg_fm_lb_e(eta);
        return eta > 0 ? -(6.0 * pow(e, 3.0) + 6.0 * (e * e) + e) * (e + 1.0)
                       : -(6.0 + 6.0 * e + e * e) * (1.0 + e) / pow(e, 4.0);
    }
    case GG_FM_XI: {
        const double p = (mu + 1.0) / 1.5;
        return (6.0 / gg_fm_rpow(1.0 - p, 4.0) - 6.0 / gg_fm_rpow(p, 4.0)) / gg_fm_rpow(1.5, 4.0);
    }
    case GG_FM_LOGEB: {
        const double em = exp(mu), b = l.power;
        return -b * em * (gg_fm_rpow(b, 2.0) + 4.0 * b * em + gg_fm_rpow(em, 2.0)) /
               gg_fm_rpow(em - b, 4.0);
    }
    }
    return GG_FM_NAN;
}

/* dV / d mu, d^2 V / d mu^2, d^3 V / d mu^3; th: negbin's theta,
 * Tweedie's p (mgcv's expressions) */
GG_FM double gg_fm_dvar(int f, double mu, double th)
{
    switch (f) {
    case GG_FM_NEGBIN: return 1.0 + 2.0 * mu / th;
    case GG_FM_TWEEDIE: return th * pow(mu, th - 1.0);
    case GG_FM_GAUSSIAN: return 0.0;
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON: return 1.0;
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL: return 1.0 - 2.0 * mu;
    case GG_FM_GAMMA: return 2.0 * mu;
    case GG_FM_INVGAUSS: return 3.0 * mu * mu;
    }
    return GG_FM_NAN;
}

GG_FM double gg_fm_d2var(int f, double mu, double th)
{
    switch (f) {
    case GG_FM_NEGBIN: return 2.0 / th;
    case GG_FM_TWEEDIE: return th * (th - 1.0) * pow(mu, th - 2.0);
    case GG_FM_GAUSSIAN:
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON: return 0.0;
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL: return -2.0;
    case GG_FM_GAMMA: return 2.0;
    case GG_FM_INVGAUSS: return 6.0 * mu;
    }
    return GG_FM_NAN;
}

GG_FM double gg_fm_d3var(int f, double mu, double th)
{
    switch (f) {
    case GG_FM_NEGBIN: return 0.0;
    case GG_FM_TWEEDIE: return th * (th - 1.0) * (th - 2.0) * pow(mu, th - 3.0);
    case GG_FM_GAUSSIAN:
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON:
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL:
    case GG_FM_GAMMA: return 0.0;
    case GG_FM_INVGAUSS: return 6.0;
    }
    return GG_FM_NAN;
}

/* 1 when the link is the family's canonical one (Newton's weights are
 * Fisher's) */
GG_FM int gg_fm_canonical(int f, gg_fm_link l)
{
    switch (f) {
    case GG_FM_GAUSSIAN: return l.code == GG_FM_IDENTITY;
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON: return l.code == GG_FM_LOG;
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL: return l.code == GG_FM_LOGIT;
    case GG_FM_GAMMA: return l.code == GG_FM_INVERSE;
    case GG_FM_INVGAUSS: return l.code == GG_FM_INVSQUARE;
    }
    return 0;
}

/* One row of gam.fit3's weights at mu: with fisher 0 Newton's (its alpha
 * in the weight), with fisher 1 Fisher's; th the family's theta (negbin's,
 * Tweedie's p; unused by the others).  g1 = d eta / d mu (as
 * 1 / mu.eta(linkfun(mu))); w the weight, w1 = dw / d eta, w2 = d^2 w /
 * d eta^2; dev1 = d deviance / d eta = -2 pw (y - mu) / (V g1). */
typedef struct gg_fm_orow { double g1, w, w1, w2, dev1; } gg_fm_orow;

GG_FM gg_fm_orow gg_fm_outer_row(int f, gg_fm_link l, int fisher, double y, double pw, double mu,
                                 double th)
{
    gg_fm_orow r;
    const double g1 = 1.0 / gg_fm_mu_eta(l, gg_fm_linkfun(l, mu));
    const double V = gg_fm_variance(f, mu, th);
    const double d2l = gg_fm_d2link(l, mu), d3l = gg_fm_d3link(l, mu);
    const double d2v = gg_fm_d2var(f, mu, th);
    const double a = gg_fm_dvar(f, mu, th) / V;
    const double b = d2l / g1;
    const double a1 = d2v / V - a * a;
    const double b1 = d3l / g1 - b * b;
    const double q = 1.0 / (V * g1 * g1);
    const double q1 = -q * (a + 2.0 * b);
    const double q2 = q * ((a + 2.0 * b) * (a + 2.0 * b) - (a1 + 2.0 * b1));
    double al = 1.0, al1 = 0.0, al2 = 0.0;
    if (!fisher) {
        const double a2 = gg_fm_d3var(f, mu, th) / V - 3.0 * a * d2v / V + 2.0 * a * a * a;
        const double b2 = gg_fm_d4link(l, mu) / g1 - 3.0 * b * d3l / g1 + 2.0 * b * b * b;
        const double cc = y - mu;
        al = 1.0 + cc * (a + b);
        if (al == 0.0) al = GG_FM_EPS;
        al1 = -(a + b) + cc * (a1 + b1);
        al2 = -2.0 * (a1 + b1) + cc * (a2 + b2);
    }
    const double wm = pw * (al1 * q + al * q1);
    const double wmm = pw * (al2 * q + 2.0 * al1 * q1 + al * q2);
    r.g1 = g1;
    r.w = pw * al * q;
    r.w1 = wm / g1;
    r.w2 = (wmm - wm * b) / (g1 * g1);
    r.dev1 = -2.0 * pw * (y - mu) / (V * g1);
    return r;
}

/* The row's Pearson term p = pw (y - mu)^2 / V and its derivatives in eta
 * (pe1 = dp / d eta, pe2 = d^2 p / d eta^2), g1 = d eta / d mu. */
GG_FM double gg_fm_pearson_row(int f, gg_fm_link l, double y, double pw, double mu, double g1,
                               double th, double *pe1, double *pe2)
{
    const double res = y - mu, V = gg_fm_variance(f, mu, th);
    const double a1 = gg_fm_dvar(f, mu, th), V2 = V * V;
    const double pm = pw * (-2.0 * res / V - res * res * a1 / V2);
    const double pmm = pw * (2.0 / V + 4.0 * res * a1 / V2 - res * res * gg_fm_d2var(f, mu, th) / V2 +
                             2.0 * res * res * a1 * a1 / (V2 * V));
    *pe1 = pm / g1;
    *pe2 = pmm / (g1 * g1) - pm * gg_fm_d2link(l, mu) / (g1 * g1 * g1);
    return pw * res * res / V;
}

/* The row's term of Fletcher's s.bar (gam.fit3's scale estimate:
 * mean(dvar(mu) (y - mu) / V(mu)), over every row). */
GG_FM double gg_fm_sbar_row(int f, double y, double mu, double th)
{
    return gg_fm_dvar(f, mu, th) * (y - mu) / gg_fm_variance(f, mu, th);
}

/* Newton's penalized IRLS row at eta (offset off included) and mu: the
 * weight pw alpha mu.eta^2 / V and working response (eta - off) + (y - mu) /
 * (mu.eta alpha), both 0 where either is not usable.  Returns 0 when alpha
 * <= 0 on a row with positive prior weight (Newton's weights are not all
 * positive: Fisher's are used then), 1 otherwise. */
GG_FM int gg_fm_newton_row(int f, gg_fm_link l, double y, double pw, double off, double eta,
                           double mu, double th, double *w, double *z)
{
    const double me = gg_fm_mu_eta(l, eta), V = gg_fm_variance(f, mu, th);
    const double al = 1.0 + (y - mu) * (gg_fm_dvar(f, mu, th) / V + gg_fm_d2link(l, mu) * me);
    if (pw > 0 && !(al > 0)) return 0;
    double wf = pw * al * me * me / V;
    double zz = eta - off + (y - mu) / (me * al);
    if (!GG_FM_ISFINITE(zz) || !(wf != 0) || !GG_FM_ISFINITE(wf)) {
        wf = 0.0;
        zz = 0.0;
    }
    *w = wf;
    *z = zz;
    return 1;
}

#endif
