/* family.c -- families and links of R's stats package, one row at a time.
 *
 * Pure C (no R headers): the constants and clamps below reproduce R's own
 * family objects (src/library/stats/R/family.R and family.c) so that
 * mu, dmu/deta, variance and deviance agree with glm()/mgcv to rounding. */
#include "family.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define GG_EPS DBL_EPSILON
#define THRESH 30.0
#define MTHRESH -30.0
#define INVEPS (1.0 / DBL_EPSILON)
#define GG_PI 3.141592653589793238462643383280
#define GG_1_SQRT_2PI 0.398942280401432677939946059934

static const struct { const char *name; gg_family_id id; } fam_names[] = {
    {"gaussian", GG_FAM_GAUSSIAN},       {"binomial", GG_FAM_BINOMIAL},
    {"poisson", GG_FAM_POISSON},         {"Gamma", GG_FAM_GAMMA},
    {"inverse.gaussian", GG_FAM_INVGAUSS},
    {"quasibinomial", GG_FAM_QUASIBINOMIAL},
    {"quasipoisson", GG_FAM_QUASIPOISSON}};

static const struct { const char *name; gg_link_id id; } link_names[] = {
    {"identity", GG_LINK_IDENTITY}, {"log", GG_LINK_LOG},
    {"inverse", GG_LINK_INVERSE},   {"logit", GG_LINK_LOGIT},
    {"probit", GG_LINK_PROBIT},     {"cloglog", GG_LINK_CLOGLOG},
    {"cauchit", GG_LINK_CAUCHIT},   {"sqrt", GG_LINK_SQRT},
    {"1/mu^2", GG_LINK_INVSQUARE}};

#define NELEM(a) ((int) (sizeof(a) / sizeof((a)[0])))

/* Links R allows for each family (as in stats::binomial() etc.). */
static int link_allowed(gg_family_id f, gg_link_id l)
{
    switch (f) {
    case GG_FAM_GAUSSIAN:
        return l == GG_LINK_IDENTITY || l == GG_LINK_LOG || l == GG_LINK_INVERSE;
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL:
        return l == GG_LINK_LOGIT || l == GG_LINK_PROBIT || l == GG_LINK_CLOGLOG ||
               l == GG_LINK_CAUCHIT || l == GG_LINK_LOG;
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON:
        return l == GG_LINK_LOG || l == GG_LINK_IDENTITY || l == GG_LINK_SQRT;
    case GG_FAM_GAMMA:
        return l == GG_LINK_INVERSE || l == GG_LINK_LOG || l == GG_LINK_IDENTITY;
    case GG_FAM_INVGAUSS:
        return l == GG_LINK_INVSQUARE || l == GG_LINK_INVERSE || l == GG_LINK_LOG ||
               l == GG_LINK_IDENTITY;
    }
    return 0;
}

int gg_family_lookup(const char *family, const char *link, gg_family *out,
                     gg_status *st)
{
    int fi = -1, li = -1;
    for (int i = 0; i < NELEM(fam_names); i++)
        if (strcmp(family, fam_names[i].name) == 0) fi = i;
    if (fi < 0)
        return gg_fail(st, "gamgpu_bad_family",
                       "family '%s' is not supported (supported: gaussian, "
                       "binomial, quasibinomial, poisson, quasipoisson, Gamma, "
                       "inverse.gaussian)", family);
    for (int i = 0; i < NELEM(link_names); i++)
        if (strcmp(link, link_names[i].name) == 0) li = i;
    if (li < 0 || !link_allowed(fam_names[fi].id, link_names[li].id))
        return gg_fail(st, "gamgpu_bad_link",
                       "link '%s' is not supported for family '%s'", link, family);
    out->fam = fam_names[fi].id;
    out->link = link_names[li].id;
    return 0;
}

const char *gg_family_name(gg_family_id f)
{
    for (int i = 0; i < NELEM(fam_names); i++)
        if (fam_names[i].id == f) return fam_names[i].name;
    return "?";
}

const char *gg_link_name(gg_link_id l)
{
    for (int i = 0; i < NELEM(link_names); i++)
        if (link_names[i].id == l) return link_names[i].name;
    return "?";
}

int gg_family_scale_estimated(gg_family_id f)
{
    return !(f == GG_FAM_BINOMIAL || f == GG_FAM_POISSON);
}

/* ---- normal and Cauchy helpers ----------------------------------------- */

double gg_pnorm(double x) { return 0.5 * erfc(-x / 1.41421356237309504880); }

static double dnorm0(double x) { return GG_1_SQRT_2PI * exp(-0.5 * x * x); }

/* Quantile by Abramowitz-Stegun 26.2.23 refined with Newton steps on
 * erfc (relative accuracy in both tails), to full double precision. */
double gg_qnorm(double p)
{
    if (!(p > 0.0)) return p == 0.0 ? -INFINITY : NAN;
    if (!(p < 1.0)) return p == 1.0 ? INFINITY : NAN;
    double q = p < 0.5 ? p : 1.0 - p;
    double t = sqrt(-2.0 * log(q));
    double x = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                       (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
    x = -x;                               /* quantile of q (lower tail) */
    for (int it = 0; it < 8; it++) {
        double f = 0.5 * erfc(-x / 1.41421356237309504880) - q;
        double d = dnorm0(x);
        if (d <= 0) break;
        double step = f / d;
        /* Halley correction */
        step = step / (1.0 + 0.5 * x * step);
        x -= step;
        if (fabs(step) <= 1e-16 * (1.0 + fabs(x))) break;
    }
    return p < 0.5 ? x : -x;
}

static double pcauchy0(double x)
{
    if (fabs(x) > 1) {
        double y = atan(1 / x) / GG_PI;
        return (x > 0) ? (0.5 - y + 0.5) : -y;
    }
    return 0.5 + atan(x) / GG_PI;
}

static double qcauchy0(double p)
{
    if (p == 0.5) return 0.0;
    if (p < 0.5) return -1.0 / tan(GG_PI * p);
    return 1.0 / tan(GG_PI * (1.0 - p));
}

/* ---- links --------------------------------------------------------------- */

double gg_linkfun(gg_link_id l, double mu)
{
    switch (l) {
    case GG_LINK_IDENTITY: return mu;
    case GG_LINK_LOG: return log(mu);
    case GG_LINK_INVERSE: return 1.0 / mu;
    case GG_LINK_LOGIT: return log(mu / (1.0 - mu));
    case GG_LINK_PROBIT: return gg_qnorm(mu);
    case GG_LINK_CLOGLOG: return log(-log(1.0 - mu));
    case GG_LINK_CAUCHIT: return qcauchy0(mu);
    case GG_LINK_SQRT: return sqrt(mu);
    case GG_LINK_INVSQUARE: return 1.0 / (mu * mu);
    }
    return NAN;
}

double gg_linkinv(gg_link_id l, double eta)
{
    switch (l) {
    case GG_LINK_IDENTITY: return eta;
    case GG_LINK_LOG: { double e = exp(eta); return e > GG_EPS ? e : GG_EPS; }
    case GG_LINK_INVERSE: return 1.0 / eta;
    case GG_LINK_LOGIT: {
        double tmp = (eta < MTHRESH) ? GG_EPS : ((eta > THRESH) ? INVEPS : exp(eta));
        return tmp / (1.0 + tmp);
    }
    case GG_LINK_PROBIT: {
        const double thresh = 8.125890664701906;   /* -qnorm(DBL_EPSILON) */
        double e = eta < -thresh ? -thresh : (eta > thresh ? thresh : eta);
        return gg_pnorm(e);
    }
    case GG_LINK_CLOGLOG: {
        double m = -expm1(-exp(eta));
        if (m > 1.0 - GG_EPS) m = 1.0 - GG_EPS;
        if (m < GG_EPS) m = GG_EPS;
        return m;
    }
    case GG_LINK_CAUCHIT: {
        double thresh = -qcauchy0(GG_EPS);
        double e = eta < -thresh ? -thresh : (eta > thresh ? thresh : eta);
        return pcauchy0(e);
    }
    case GG_LINK_SQRT: return eta * eta;
    case GG_LINK_INVSQUARE: return 1.0 / sqrt(eta);
    }
    return NAN;
}

double gg_mu_eta(gg_link_id l, double eta)
{
    switch (l) {
    case GG_LINK_IDENTITY: return 1.0;
    case GG_LINK_LOG: { double e = exp(eta); return e > GG_EPS ? e : GG_EPS; }
    case GG_LINK_INVERSE: return -1.0 / (eta * eta);
    case GG_LINK_LOGIT: {
        double opexp = 1.0 + exp(eta);
        return (eta > THRESH || eta < MTHRESH) ? GG_EPS : exp(eta) / (opexp * opexp);
    }
    case GG_LINK_PROBIT: { double d = dnorm0(eta); return d > GG_EPS ? d : GG_EPS; }
    case GG_LINK_CLOGLOG: {
        double e = eta > 700.0 ? 700.0 : eta;
        double d = exp(e) * exp(-exp(e));
        return d > GG_EPS ? d : GG_EPS;
    }
    case GG_LINK_CAUCHIT: {
        double d = 1.0 / (GG_PI * (1.0 + eta * eta));
        return d > GG_EPS ? d : GG_EPS;
    }
    case GG_LINK_SQRT: return 2.0 * eta;
    case GG_LINK_INVSQUARE: return -1.0 / (2.0 * pow(eta, 1.5));
    }
    return NAN;
}

double gg_variance(gg_family_id f, double mu)
{
    switch (f) {
    case GG_FAM_GAUSSIAN: return 1.0;
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL: return mu * (1.0 - mu);
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON: return mu;
    case GG_FAM_GAMMA: return mu * mu;
    case GG_FAM_INVGAUSS: return mu * mu * mu;
    }
    return NAN;
}

static double y_log_y(double y, double mu) { return (y != 0.) ? (y * log(y / mu)) : 0; }

double gg_dev_resid(gg_family_id f, double y, double mu, double wt)
{
    switch (f) {
    case GG_FAM_GAUSSIAN: return wt * (y - mu) * (y - mu);
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL:
        return 2 * wt * (y_log_y(y, mu) + y_log_y(1 - y, 1 - mu));
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON:
        if (y > 0) return 2 * (wt * (y * log(y / mu) - (y - mu)));
        return 2 * mu * wt;
    case GG_FAM_GAMMA:
        return -2 * wt * (log(y == 0 ? 1 : y / mu) - (y - mu) / mu);
    case GG_FAM_INVGAUSS:
        return wt * ((y - mu) * (y - mu)) / (y * mu * mu);
    }
    return NAN;
}

double gg_mustart(gg_family_id f, double y, double wt)
{
    switch (f) {
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL:
        if (wt == 0) y = 0;
        return (wt * y + 0.5) / (wt + 1);
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON:
        return y + 0.1;
    default:
        return y;
    }
}

int gg_y_valid(gg_family_id f, double y)
{
    if (!isfinite(y)) return 0;
    switch (f) {
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL: return y >= 0 && y <= 1;
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON: return y >= 0;
    case GG_FAM_GAMMA:
    case GG_FAM_INVGAUSS: return y > 0;
    default: return 1;
    }
}

int gg_mu_valid(gg_family_id f, double mu)
{
    if (!isfinite(mu)) return 0;
    switch (f) {
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL: return mu > 0 && mu < 1;
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON:
    case GG_FAM_GAMMA: return mu > 0;
    default: return 1;
    }
}

int gg_eta_valid(gg_link_id l, double eta)
{
    switch (l) {
    case GG_LINK_INVERSE: return isfinite(eta) && eta != 0;
    case GG_LINK_INVSQUARE: return eta > 0;
    case GG_LINK_SQRT: return isfinite(eta) && eta > 0;
    default: return 1;
    }
}

double gg_irls_row(const gg_family *fam, double y, double pw, double off,
                   double eta, double *mu, double *w, double *z)
{
    double m = gg_linkinv(fam->link, eta);
    double me = gg_mu_eta(fam->link, eta);
    *mu = m;
    if (pw > 0 && me != 0) {
        *z = (eta - off) + (y - m) / me;
        *w = pw * me * me / gg_variance(fam->fam, m);
        if (!isfinite(*z) || !isfinite(*w)) { *z = 0; *w = 0; }
    } else {
        *z = 0;
        *w = 0;
    }
    return gg_dev_resid(fam->fam, y, m, pw);
}
