/* family_math.h -- the per-row mathematics of families and links, written
 * once and compiled twice: as C in the package (src/family/family.c
 * includes it) and as CUDA C by NVRTC (the row kernels include it).  One definition
 * means the CPU oracle and the device compute the same expressions in the
 * same order; with --fmad=false the two agree to rounding of the math
 * library (exp, log, erfc differ by an ulp or two at most).
 *
 * The constants and clamps reproduce R's own family objects (stats'
 * family.R and family.c) so mu, dmu/deta, variance and deviance agree with
 * glm()/mgcv.  Family and link codes are those of src/family/family.h; a link
 * is passed as gg_fm_link, its code with R's power(lambda)'s lambda.  th is
 * the family's parameter where it has one (negbin: theta, the size of the
 * negative binomial, variance mu + mu^2 / theta; Tweedie: the power p,
 * variance mu^p); the others ignore it. */
#ifndef GAMGPU_FAMILY_MATH_H
#define GAMGPU_FAMILY_MATH_H

#ifdef __CUDACC_RTC__
#define GG_FM static __device__ __forceinline__
#define GG_FM_INF (__longlong_as_double(0x7ff0000000000000LL))
#define GG_FM_NAN (__longlong_as_double(0x7ff8000000000000LL))
#define GG_FM_ISFINITE(x) isfinite(x)
#define GG_FM_LGAMMA(x) lgamma(x)
#else
#include <math.h>
#define GG_FM static inline
#define GG_FM_INF INFINITY
#define GG_FM_NAN NAN
#define GG_FM_ISFINITE(x) isfinite(x)
/* lgamma() writes the global signgam: a data race between the host's row
 * threads (helgrind found it).  lgamma_r() is the same function, its sign
 * kept in a local: the same values. */
static inline double gg_fm_lgamma_host(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}
#define GG_FM_LGAMMA(x) gg_fm_lgamma_host(x)
#endif

/* family codes (src/family/family.h: gg_family_id) */
#define GG_FM_GAUSSIAN      1
#define GG_FM_BINOMIAL      2
#define GG_FM_POISSON       3
#define GG_FM_GAMMA         4
#define GG_FM_INVGAUSS      5
#define GG_FM_QUASIBINOMIAL 6
#define GG_FM_QUASIPOISSON  7
#define GG_FM_NEGBIN        8   /* mgcv's negbin(theta): theta known */
#define GG_FM_TWEEDIE       9   /* mgcv's Tweedie(p): th = p, 1 < p <= 2 */
/* link codes (src/family/family.h: gg_link_id) */
#define GG_FM_IDENTITY  1
#define GG_FM_LOG       2
#define GG_FM_INVERSE   3
#define GG_FM_LOGIT     4
#define GG_FM_PROBIT    5
#define GG_FM_CLOGLOG   6
#define GG_FM_CAUCHIT   7
#define GG_FM_SQRT      8
#define GG_FM_INVSQUARE 9
#define GG_FM_POWER     10  /* R's power(lambda): mu^lambda, lambda > 0, != 1 */
#define GG_FM_LOGB      11  /* mgcv's "logb" of gaulss()'s scale: log(1/mu - b), b in
                             * power; the location-scale rows' alone (ls_math.h) */
#define GG_FM_LB        12  /* mgcv's lower-bounded "log" of gumbls()/gammals()'s scale:
                             * mu = b + log(1 + exp(eta)), b in power; likewise */
#define GG_FM_XI        13  /* gevlss()'s shape: xi = 1.5 plogis(eta) - 1 (R's logit
                             * link's bounds); likewise */
#define GG_FM_LOGEB     14  /* shash()'s "logeb" of its log scale tau: tau = log(exp(eta)
                             * + b), b in power; likewise */
#define GG_FM_LOG_EPS   (-36.04365338911715)  /* log(DBL_EPSILON) */

/* A link: its code and, for GG_FM_POWER, lambda (0 for the others). */
typedef struct gg_fm_link { int code; double power; } gg_fm_link;

#define GG_FM_EPS     2.220446049250313080847e-16   /* DBL_EPSILON */
#define GG_FM_THRESH  30.0
#define GG_FM_MTHRESH -30.0
#define GG_FM_PI      3.141592653589793238462643383280
#define GG_FM_1_SQRT_2PI 0.398942280401432677939946059934
#define GG_FM_SQRT2   1.41421356237309504880

GG_FM double gg_fm_pnorm(double x) { return 0.5 * erfc(-x / GG_FM_SQRT2); }

GG_FM double gg_fm_dnorm(double x) { return GG_FM_1_SQRT_2PI * exp(-0.5 * x * x); }

/* Quantile: Abramowitz-Stegun 26.2.23, refined by Halley steps on erfc
 * (relative accuracy in both tails), to full double precision. */
GG_FM double gg_fm_qnorm(double p)
{
    if (!(p > 0.0)) return p == 0.0 ? -GG_FM_INF : GG_FM_NAN;
    if (!(p < 1.0)) return p == 1.0 ? GG_FM_INF : GG_FM_NAN;
    double q = p < 0.5 ? p : 1.0 - p;
    double t = sqrt(-2.0 * log(q));
    double x = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                       (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
    x = -x;
    for (int it = 0; it < 8; it++) {
        double f = 0.5 * erfc(-x / GG_FM_SQRT2) - q;
        double d = gg_fm_dnorm(x);
        if (d <= 0) break;
        double step = f / d;
        step = step / (1.0 + 0.5 * x * step);
        x -= step;
        if (fabs(step) <= 1e-16 * (1.0 + fabs(x))) break;
    }
    return p < 0.5 ? x : -x;
}

GG_FM double gg_fm_pcauchy(double x)
{
    if (fabs(x) > 1) {
        double y = atan(1 / x) / GG_FM_PI;
        return (x > 0) ? (0.5 - y + 0.5) : -y;
    }
    return 0.5 + atan(x) / GG_FM_PI;
}

GG_FM double gg_fm_qcauchy(double p)
{
    if (p == 0.5) return 0.0;
    if (p < 0.5) return -1.0 / tan(GG_FM_PI * p);
    return 1.0 / tan(GG_FM_PI * (1.0 - p));
}

GG_FM double gg_fm_linkfun(gg_fm_link l, double mu)
{
    switch (l.code) {
    case GG_FM_IDENTITY: return mu;
    case GG_FM_LOG: return log(mu);
    case GG_FM_INVERSE: return 1.0 / mu;
    case GG_FM_LOGIT: return log(mu / (1.0 - mu));
    case GG_FM_PROBIT: return gg_fm_qnorm(mu);
    case GG_FM_CLOGLOG: return log(-log(1.0 - mu));
    case GG_FM_CAUCHIT: return gg_fm_qcauchy(mu);
    case GG_FM_SQRT: return sqrt(mu);
    case GG_FM_INVSQUARE: return 1.0 / (mu * mu);
    case GG_FM_POWER: return pow(mu, l.power);
    case GG_FM_LOGB: return log(1.0 / mu - l.power);
    case GG_FM_LB: {
        const double mub = mu - l.power;
        if (mub < GG_FM_EPS) return GG_FM_LOG_EPS;
        if (mub > -GG_FM_LOG_EPS) return mub;
        return log(exp(mub) - 1.0);
    }
    case GG_FM_XI: {
        const double p = (mu + 1.0) / 1.5;
        return log(p / (1.0 - p));
    }
    case GG_FM_LOGEB: return log(exp(mu) - l.power);
    }
    return GG_FM_NAN;
}

GG_FM double gg_fm_linkinv(gg_fm_link l, double eta)
{
    switch (l.code) {
    case GG_FM_IDENTITY: return eta;
    case GG_FM_LOG: { double e = exp(eta); return e > GG_FM_EPS ? e : GG_FM_EPS; }
    case GG_FM_INVERSE: return 1.0 / eta;
    case GG_FM_LOGIT: {
        double tmp = (eta < GG_FM_MTHRESH) ? GG_FM_EPS
                   : ((eta > GG_FM_THRESH) ? 1.0 / GG_FM_EPS : exp(eta));
        return tmp / (1.0 + tmp);
    }
    case GG_FM_PROBIT: {
        const double thresh = 8.125890664701906;   /* -qnorm(DBL_EPSILON) */
        double e = eta < -thresh ? -thresh : (eta > thresh ? thresh : eta);
        return gg_fm_pnorm(e);
    }
    case GG_FM_CLOGLOG: {
        double m = -expm1(-exp(eta));
        if (m > 1.0 - GG_FM_EPS) m = 1.0 - GG_FM_EPS;
        if (m < GG_FM_EPS) m = GG_FM_EPS;
        return m;
    }
    case GG_FM_CAUCHIT: {
        double thresh = -gg_fm_qcauchy(GG_FM_EPS);
        double e = eta < -thresh ? -thresh : (eta > thresh ? thresh : eta);
        return gg_fm_pcauchy(e);
    }
    case GG_FM_SQRT: return eta * eta;
    case GG_FM_INVSQUARE: return 1.0 / sqrt(eta);
    case GG_FM_POWER: {
        const double m = pow(eta, 1.0 / l.power);
        return m > GG_FM_EPS ? m : GG_FM_EPS;
    }
    case GG_FM_LOGB: return 1.0 / (exp(eta) + l.power);
    case GG_FM_LB: return eta > -GG_FM_LOG_EPS ? l.power + eta : l.power + log(1.0 + exp(eta));
    case GG_FM_XI: {
        double tmp = (eta < GG_FM_MTHRESH) ? GG_FM_EPS
                   : ((eta > GG_FM_THRESH) ? 1.0 / GG_FM_EPS : exp(eta));
        return 1.5 * (tmp / (1.0 + tmp)) - 1.0;
    }
    case GG_FM_LOGEB: return log(exp(eta) + l.power);
    }
    return GG_FM_NAN;
}

GG_FM double gg_fm_mu_eta(gg_fm_link l, double eta)
{
    switch (l.code) {
    case GG_FM_IDENTITY: return 1.0;
    case GG_FM_LOG: { double e = exp(eta); return e > GG_FM_EPS ? e : GG_FM_EPS; }
    case GG_FM_INVERSE: return -1.0 / (eta * eta);
    case GG_FM_LOGIT: {
        double opexp = 1.0 + exp(eta);
        return (eta > GG_FM_THRESH || eta < GG_FM_MTHRESH) ? GG_FM_EPS
                                                          : exp(eta) / (opexp * opexp);
    }
    case GG_FM_PROBIT: { double d = gg_fm_dnorm(eta); return d > GG_FM_EPS ? d : GG_FM_EPS; }
    case GG_FM_CLOGLOG: {
        double e = eta > 700.0 ? 700.0 : eta;
        double d = exp(e) * exp(-exp(e));
        return d > GG_FM_EPS ? d : GG_FM_EPS;
    }
    case GG_FM_CAUCHIT: {
        double d = 1.0 / (GG_FM_PI * (1.0 + eta * eta));
        return d > GG_FM_EPS ? d : GG_FM_EPS;
    }
    case GG_FM_SQRT: return 2.0 * eta;
    case GG_FM_INVSQUARE: return -1.0 / (2.0 * pow(eta, 1.5));
    case GG_FM_POWER: {
        const double d = (1.0 / l.power) * pow(eta, 1.0 / l.power - 1.0);
        return d > GG_FM_EPS ? d : GG_FM_EPS;
    }
    case GG_FM_LOGB: {
        const double ee = exp(eta), a = ee + l.power;
        return -ee / (a * a);
    }
    case GG_FM_LB: {
        const double e = exp(eta < 0 ? eta : -eta);
        return eta < 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
    }
    case GG_FM_XI: {
        double opexp = 1.0 + exp(eta);
        return ((eta > GG_FM_THRESH || eta < GG_FM_MTHRESH) ? GG_FM_EPS
                                                           : exp(eta) / (opexp * opexp)) * 1.5;
    }
    case GG_FM_LOGEB: {
        const double ee = exp(eta);
        return ee / (ee + l.power);
    }
    }
    return GG_FM_NAN;
}

/* R's x^y (R_pow): 1 for y == 0 or x == 1, x * x for y == 2, else pow. */
GG_FM double gg_fm_rpow(double x, double y)
{
    if (x == 1.0 || y == 0.0) return 1.0;
    if (y == 2.0) return x * x;
    if (y == 1.0) return x;
    return pow(x, y);
}

GG_FM double gg_fm_variance(int f, double mu, double th)
{
    switch (f) {
    case GG_FM_NEGBIN: return mu + mu * mu / th;
    case GG_FM_TWEEDIE: return gg_fm_rpow(mu, th);
    case GG_FM_GAUSSIAN: return 1.0;
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL: return mu * (1.0 - mu);
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON: return mu;
    case GG_FM_GAMMA: return mu * mu;
    case GG_FM_INVGAUSS: return mu * mu * mu;
    }
    return GG_FM_NAN;
}

GG_FM double gg_fm_y_log_y(double y, double mu) { return (y != 0.) ? (y * log(y / mu)) : 0; }

/* Unit deviance times the prior weight (R's dev.resids). */
GG_FM double gg_fm_dev_resid(int f, double y, double mu, double wt, double th)
{
    switch (f) {
    case GG_FM_NEGBIN:     /* 2 wt (y log(pmax(1, y)/mu) - (y + th) log((y + th)/(mu + th))) */
        return 2 * wt * (y * log((y > 1 ? y : 1.0) / mu) - (y + th) * log((y + th) / (mu + th)));
    case GG_FM_TWEEDIE: {  /* mgcv's Tweedie(p)$dev.resids, 1 < p <= 2 */
        const double y1 = y + (y == 0);
        const double theta = (gg_fm_rpow(y1, 1 - th) - gg_fm_rpow(mu, 1 - th)) / (1 - th);
        const double kappa = th == 2.0 ? log(y1 / mu)
                             : (gg_fm_rpow(y, 2 - th) - gg_fm_rpow(mu, 2 - th)) / (2 - th);
        const double d = 2 * wt * (y * theta - kappa);
        /* pmax(d, 0) as R's: NaN (mu < 0) stays NaN */
        return d > 0 || d != d ? d : 0.0;
    }
    case GG_FM_GAUSSIAN: return wt * (y - mu) * (y - mu);
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL:
        return 2 * wt * (gg_fm_y_log_y(y, mu) + gg_fm_y_log_y(1 - y, 1 - mu));
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON:
        if (y > 0) return 2 * (wt * (y * log(y / mu) - (y - mu)));
        return 2 * mu * wt;
    case GG_FM_GAMMA:
        return -2 * wt * (log(y == 0 ? 1 : y / mu) - (y - mu) / mu);
    case GG_FM_INVGAUSS:
        return wt * ((y - mu) * (y - mu)) / (y * mu * mu);
    }
    return GG_FM_NAN;
}

/* R's family$initialize mustart for one row (binomial: weights = trials). */
GG_FM double gg_fm_mustart(int f, double y, double wt)
{
    switch (f) {
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL:
        if (wt == 0) y = 0;
        return (wt * y + 0.5) / (wt + 1);
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON:
        return y + 0.1;
    case GG_FM_NEGBIN:
        return y + (y == 0) / 6.0;
    case GG_FM_TWEEDIE:
        return y + 0.1 * (y == 0);
    default:
        return y;
    }
}

/* family$validmu and the link's valideta, as R's. */
GG_FM int gg_fm_mu_valid(int f, double mu)
{
    if (!GG_FM_ISFINITE(mu)) return 0;
    switch (f) {
    case GG_FM_BINOMIAL:
    case GG_FM_QUASIBINOMIAL: return mu > 0 && mu < 1;
    case GG_FM_POISSON:
    case GG_FM_QUASIPOISSON:
    case GG_FM_GAMMA:
    case GG_FM_NEGBIN: return mu > 0;
    case GG_FM_TWEEDIE: return mu >= 0;
    default: return 1;
    }
}

GG_FM int gg_fm_eta_valid(gg_fm_link l, double eta)
{
    switch (l.code) {
    case GG_FM_INVERSE: return GG_FM_ISFINITE(eta) && eta != 0;
    case GG_FM_INVSQUARE: return eta > 0;
    case GG_FM_SQRT:
    case GG_FM_POWER: return GG_FM_ISFINITE(eta) && eta > 0;
    default: return 1;
    }
}

/* A starting value the IRLS can use: finite, valid for the link, and its
 * mean valid for the family. */
GG_FM int gg_fm_start_valid(int f, gg_fm_link l, double eta)
{
    return GG_FM_ISFINITE(eta) && gg_fm_eta_valid(l, eta) &&
           gg_fm_mu_valid(f, gg_fm_linkinv(l, eta));
}

/* One IRLS row: from eta (offset included) to mu, working weight w and
 * working response z = (eta - offset) + (y - mu)/mu_eta, as mgcv's
 * bgam.fit.  Rows with zero prior weight or mu_eta == 0 get w = z = 0.
 * Returns the row's deviance contribution. */
GG_FM double gg_fm_irls_row(int f, gg_fm_link l, double y, double pw, double off, double eta,
                            double th, double *mu, double *w, double *z)
{
    double m = gg_fm_linkinv(l, eta);
    double me = gg_fm_mu_eta(l, eta);
    *mu = m;
    if (pw > 0 && me != 0) {
        *z = (eta - off) + (y - m) / me;
        *w = pw * me * me / gg_fm_variance(f, m, th);
        if (!GG_FM_ISFINITE(*z) || !GG_FM_ISFINITE(*w)) { *z = 0; *w = 0; }
    } else {
        *z = 0;
        *w = 0;
    }
    return gg_fm_dev_resid(f, y, m, pw, th);
}

/* ---- digamma and trigamma (nb()'s theta sums, efam_nb.h; betar) ---------
 * digamma and trigamma by recurrence up to x >= 10 and their asymptotic
 * series (Abramowitz & Stegun 6.3.18, 6.4.12): relative error below 1e-15
 * for x > 0, R's digamma()/trigamma() to rounding. */
GG_FM double gg_fm_digamma(double x)
{
    double r = 0.0;
    while (x < 10.0) {
        r -= 1.0 / x;
        x += 1.0;
    }
    const double f = 1.0 / (x * x);
    const double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 +
                     f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
    return r + log(x) - 0.5 / x + t;
}

GG_FM double gg_fm_trigamma(double x)
{
    double r = 0.0;
    while (x < 10.0) {
        r += 1.0 / (x * x);
        x += 1.0;
    }
    const double f = 1.0 / (x * x);
    const double t = (1.0 + f * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 +
                      f * (5.0 / 66 + f * (-691.0 / 2730 + f * (7.0 / 6)))))))) / x;
    return r + t + 0.5 * f;
}

/* psigamma(x, 2) and psigamma(x, 3) (betar()'s Dd at levels 1 and 2, the
 * outer iteration's: efam_outer.h) the same way, by recurrence up to x >=
 * 15 and the asymptotic series (A&S 6.4.11 with the Bernoulli numbers to
 * B_14): relative error below 1e-15 for x > 0. */
GG_FM double gg_fm_tetragamma(double x)
{
    double r = 0.0;
    while (x < 15.0) {
        r -= 2.0 / (x * x * x);
        x += 1.0;
    }
    const double f = 1.0 / (x * x);
    const double t = 0.5 + f * (-1.0 / 6 + f * (1.0 / 6 + f * (-3.0 / 10 + f * (5.0 / 6 +
                     f * (-691.0 / 210 + f * (35.0 / 2))))));
    return r - (f + f / x + f * f * t);
}

GG_FM double gg_fm_pentagamma(double x)
{
    double r = 0.0;
    while (x < 15.0) {
        const double x2 = x * x;
        r += 6.0 / (x2 * x2);
        x += 1.0;
    }
    const double f = 1.0 / (x * x), i3 = f / x;
    const double t = 2.0 + f * (-1.0 + f * (4.0 / 3 + f * (-3.0 + f * (10.0 +
                     f * (-691.0 / 15 + f * 280.0)))));
    return r + 2.0 * i3 + 3.0 * f * f + i3 * f * t;
}

#endif
