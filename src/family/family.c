/* family.c -- families and links of R's stats package, one row at a time.
 *
 * Pure C (no R headers).  Names, link validity and the lookup live here;
 * the per-row mathematics (constants and clamps reproducing R's own family
 * objects) is inst/include/family_math.h, compiled here and by NVRTC into
 * the device kernels, so both sides evaluate the same expressions. */
#include "family.h"
#include "efam_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static const struct { const char *name; gg_family_id id; } fam_names[] = {
    {"gaussian", GG_FAM_GAUSSIAN},       {"binomial", GG_FAM_BINOMIAL},
    {"poisson", GG_FAM_POISSON},         {"Gamma", GG_FAM_GAMMA},
    {"inverse.gaussian", GG_FAM_INVGAUSS},
    {"quasibinomial", GG_FAM_QUASIBINOMIAL},
    {"quasipoisson", GG_FAM_QUASIPOISSON},
    {"negbin", GG_FAM_NEGBIN},           /* mgcv's negbin(theta), theta known */
    {"tweedie", GG_FAM_TWEEDIE},         /* mgcv's Tweedie(p), p known */
    {"tw", GG_FAM_TW},                   /* mgcv's extended families */
    {"betar", GG_FAM_BETAR},
    {"scat", GG_FAM_SCAT},
    {"ziP", GG_FAM_ZIP},
    {"ocat", GG_FAM_OCAT},
    {"cnorm", GG_FAM_CNORM},             /* the censored ones (efam_cens.h) */
    {"clog", GG_FAM_CLOG},
    {"cpois", GG_FAM_CPOIS},
    {"gfam", GG_FAM_GFAM}};               /* gfam(): each row its member's link */

static const struct { const char *name; gg_link_id id; } link_names[] = {
    {"identity", GG_LINK_IDENTITY}, {"log", GG_LINK_LOG},
    {"inverse", GG_LINK_INVERSE},   {"logit", GG_LINK_LOGIT},
    {"probit", GG_LINK_PROBIT},     {"cloglog", GG_LINK_CLOGLOG},
    {"cauchit", GG_LINK_CAUCHIT},   {"sqrt", GG_LINK_SQRT},
    {"1/mu^2", GG_LINK_INVSQUARE}};

#define NELEM(a) ((int) (sizeof(a) / sizeof((a)[0])))

/* Links R allows for each family (as in stats::binomial() etc.); R's
 * power(lambda) links (which its families take as "link-glm" objects, and
 * mgcv's Tweedie() by name) for the families of a positive mean. */
static int link_allowed(gg_family_id f, gg_link_id l)
{
    if (l == GG_LINK_POWER)
        return f == GG_FAM_POISSON || f == GG_FAM_QUASIPOISSON || f == GG_FAM_NEGBIN ||
               f == GG_FAM_GAMMA || f == GG_FAM_INVGAUSS || f == GG_FAM_TWEEDIE;
    switch (f) {
    case GG_FAM_GAUSSIAN:
        return l == GG_LINK_IDENTITY || l == GG_LINK_LOG || l == GG_LINK_INVERSE;
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL:
        return l == GG_LINK_LOGIT || l == GG_LINK_PROBIT || l == GG_LINK_CLOGLOG ||
               l == GG_LINK_CAUCHIT || l == GG_LINK_LOG;
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON:
    case GG_FAM_NEGBIN:
        return l == GG_LINK_LOG || l == GG_LINK_IDENTITY || l == GG_LINK_SQRT;
    case GG_FAM_GAMMA:
        return l == GG_LINK_INVERSE || l == GG_LINK_LOG || l == GG_LINK_IDENTITY;
    case GG_FAM_INVGAUSS:
        return l == GG_LINK_INVSQUARE || l == GG_LINK_INVERSE || l == GG_LINK_LOG ||
               l == GG_LINK_IDENTITY;
    case GG_FAM_TWEEDIE:
    case GG_FAM_TW:
        return l == GG_LINK_LOG || l == GG_LINK_IDENTITY || l == GG_LINK_SQRT ||
               l == GG_LINK_INVERSE;
    case GG_FAM_BETAR:
        return l == GG_LINK_LOGIT || l == GG_LINK_PROBIT || l == GG_LINK_CLOGLOG ||
               l == GG_LINK_CAUCHIT;
    case GG_FAM_SCAT:
        return l == GG_LINK_IDENTITY || l == GG_LINK_LOG || l == GG_LINK_INVERSE;
    case GG_FAM_ZIP:
    case GG_FAM_OCAT:
    case GG_FAM_GFAM:          /* (its rows' links are its members') */
        return l == GG_LINK_IDENTITY;
    case GG_FAM_CNORM:
    case GG_FAM_CLOG:
    case GG_FAM_CPOIS:
        return l == GG_LINK_IDENTITY || l == GG_LINK_LOG || l == GG_LINK_SQRT;
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
                       "inverse.gaussian, negbin, tweedie, tw, betar, scat, ziP, ocat, "
                       "cnorm, clog, cpois)", family);
    gg_link_id lid = 0;
    double power = 0;
    for (int i = 0; i < NELEM(link_names); i++)
        if (strcmp(link, link_names[i].name) == 0) li = i;
    if (li >= 0) {
        lid = link_names[li].id;
    } else if (strncmp(link, "mu^", 3) == 0) {
        /* R's power(lambda): lambda > 0 and != 1 (power() names the others
         * "log" and "identity") */
        char *end = NULL;
        power = strtod(link + 3, &end);
        if (end != link + 3 && *end == '\0' && isfinite(power) && power > 0 && power != 1)
            lid = GG_LINK_POWER;
    }
    if (lid == 0 || !link_allowed(fam_names[fi].id, lid))
        return gg_fail(st, "gamgpu_bad_link",
                       "link '%s' is not supported for family '%s'", link, family);
    out->fam = fam_names[fi].id;
    out->link = lid;
    out->link_power = power;
    out->theta = 0;
    out->efam = gg_family_is_efam(out->fam);
    memset(&out->ef, 0, sizeof out->ef);
    return 0;
}

int gg_family_is_efam(gg_family_id f) { return gg_fm_is_efam((int) f); }

const char *gg_family_name(gg_family_id f)
{
    for (int i = 0; i < NELEM(fam_names); i++)
        if (fam_names[i].id == f) return fam_names[i].name;
    return "?";
}

const char *gg_link_name(gg_link_id l)
{
    if (l == GG_LINK_POWER) return "mu^lambda";
    for (int i = 0; i < NELEM(link_names); i++)
        if (link_names[i].id == l) return link_names[i].name;
    return "?";
}

int gg_family_scale_estimated(gg_family_id f)
{
    return !(f == GG_FAM_BINOMIAL || f == GG_FAM_POISSON);
}

/* ---- the row mathematics: inst/include/family_math.h, shared with the
 * device kernels so the CPU oracle and the GPU compute the same thing ---- */

_Static_assert(GG_FAM_GAUSSIAN == GG_FM_GAUSSIAN && GG_FAM_BINOMIAL == GG_FM_BINOMIAL &&
               GG_FAM_POISSON == GG_FM_POISSON && GG_FAM_GAMMA == GG_FM_GAMMA &&
               GG_FAM_INVGAUSS == GG_FM_INVGAUSS &&
               GG_FAM_QUASIBINOMIAL == GG_FM_QUASIBINOMIAL &&
               GG_FAM_QUASIPOISSON == GG_FM_QUASIPOISSON && GG_FAM_NEGBIN == GG_FM_NEGBIN &&
               GG_FAM_TWEEDIE == GG_FM_TWEEDIE,
               "family codes must match family_math.h");
_Static_assert(GG_LINK_IDENTITY == GG_FM_IDENTITY && GG_LINK_LOG == GG_FM_LOG &&
               GG_LINK_INVERSE == GG_FM_INVERSE && GG_LINK_LOGIT == GG_FM_LOGIT &&
               GG_LINK_PROBIT == GG_FM_PROBIT && GG_LINK_CLOGLOG == GG_FM_CLOGLOG &&
               GG_LINK_CAUCHIT == GG_FM_CAUCHIT && GG_LINK_SQRT == GG_FM_SQRT &&
               GG_LINK_INVSQUARE == GG_FM_INVSQUARE && GG_LINK_POWER == GG_FM_POWER,
               "link codes must match family_math.h");

double gg_pnorm(double x)                   { return gg_fm_pnorm(x); }
double gg_qnorm(double p)                   { return gg_fm_qnorm(p); }
double gg_linkfun(gg_fm_link l, double mu)  { return gg_fm_linkfun(l, mu); }
double gg_linkinv(gg_fm_link l, double eta) { return gg_fm_linkinv(l, eta); }
double gg_mu_eta(gg_fm_link l, double eta)  { return gg_fm_mu_eta(l, eta); }
double gg_variance(const gg_family *fam, double mu)
{
    return gg_fm_variance((int) fam->fam, mu, fam->theta);
}
int    gg_mu_valid(gg_family_id f, double mu) { return gg_fm_mu_valid((int) f, mu); }
int    gg_eta_valid(gg_fm_link l, double eta) { return gg_fm_eta_valid(l, eta); }

double gg_dev_resid(const gg_family *fam, double y, double mu, double wt)
{
    if (fam->efam) {
        /* (a censored family's rows as uncensored: its deviance, residuals
         * and null deviance are R/families.R's efam_finish()'s) */
        double Dmu, EDmu2;
        return gg_fm_ef_dd0((int) fam->fam, y, y, mu, wt, &fam->ef, &Dmu, &EDmu2);
    }
    return gg_fm_dev_resid((int) fam->fam, y, mu, wt, fam->theta);
}

double gg_family_mustart(const gg_family *fam, double y, double wt)
{
    return fam->efam ? gg_fm_ef_mustart((int) fam->fam, y, y, wt, &fam->ef)
                     : gg_fm_mustart((int) fam->fam, y, wt);
}

double gg_mustart(gg_family_id f, double y, double wt)
{
    return gg_fm_mustart((int) f, y, wt);
}

int gg_start_valid(const gg_family *fam, double eta)
{
    /* (the censored families start where their initialize puts them, a
     * count of 0 at log(0) too, as gam.fit4 and bgam.fit do: the rows
     * whose derivatives are not finite there sit out the first step) */
    if (fam->efam && GG_FM_EF_CENSORED((int) fam->fam)) return 1;
    return gg_fm_start_valid((int) fam->fam, gg_family_link(fam), eta);
}

int gg_family_init_row(const gg_family *fam, double y, double yat, double wt, double *eta)
{
    if (!fam->efam) {
        *eta = gg_linkfun(gg_family_link(fam), gg_fm_mustart((int) fam->fam, y, wt));
        return gg_start_valid(fam, *eta);
    }
    const int f = (int) fam->fam;
    const gg_fm_link l = gg_fm_ef_link(f, gg_family_link(fam), yat, &fam->ef);
    *eta = gg_fm_linkfun(l, gg_fm_ef_mustart(f, y, yat, wt, &fam->ef));
    return gg_fm_ef_start_valid(f, l, yat, *eta, &fam->ef);
}

int gg_y_valid(gg_family_id f, double y)
{
    if (!isfinite(y)) return 0;
    switch (f) {
    case GG_FAM_BINOMIAL:
    case GG_FAM_QUASIBINOMIAL: return y >= 0 && y <= 1;
    case GG_FAM_POISSON:
    case GG_FAM_QUASIPOISSON:
    case GG_FAM_NEGBIN:
    case GG_FAM_TWEEDIE: return y >= 0;
    case GG_FAM_GAMMA:
    case GG_FAM_INVGAUSS: return y > 0;
    default: return 1;
    }
}

double gg_irls_row(const gg_family *fam, double y, double pw, double off,
                   double eta, double *mu, double *w, double *z)
{
    return gg_fm_irls_row((int) fam->fam, gg_family_link(fam), y, pw, off, eta, fam->theta, mu, w,
                          z);
}
