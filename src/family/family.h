/* family.h -- exponential families and link functions, row by row, in pure C.
 *
 * Everything the penalized IRLS needs per observation: inverse link, dmu/deta,
 * variance, deviance residuals, the initial mean, and the working weight and
 * response built from them.  The formulas copy R's stats families (binomial()
 * etc., including their clamping constants) so a fit here matches glm()/mgcv
 * row for row.  Backends call these in their O(n) loops; a GPU backend uses
 * the same codes (gg_family_id, gg_link_id) to pick its device functions. */
#ifndef GAMGPU_FAMILY_H
#define GAMGPU_FAMILY_H

#include "status.h"
#include "efam_par.h"
#include "family_math.h"

typedef enum {
    GG_FAM_GAUSSIAN = 1,
    GG_FAM_BINOMIAL,
    GG_FAM_POISSON,
    GG_FAM_GAMMA,
    GG_FAM_INVGAUSS,
    GG_FAM_QUASIBINOMIAL,
    GG_FAM_QUASIPOISSON,
    GG_FAM_NEGBIN,             /* mgcv's negbin(theta), theta known */
    GG_FAM_TWEEDIE,            /* mgcv's Tweedie(p): theta holds p */
    /* mgcv's extended families (inst/include/efam_math.h), their theta in ef */
    GG_FAM_TW = GG_FM_TW,
    GG_FAM_BETAR = GG_FM_BETAR,
    GG_FAM_SCAT = GG_FM_SCAT,
    GG_FAM_ZIP = GG_FM_ZIP,
    GG_FAM_OCAT = GG_FM_OCAT,
    GG_FAM_CNORM = GG_FM_CNORM,  /* censored: a second response column */
    GG_FAM_CLOG = GG_FM_CLOG,
    GG_FAM_CPOIS = GG_FM_CPOIS,
    GG_FAM_GFAM = GG_FM_GFAM     /* gfam(): members and their links in ef */
} gg_family_id;

typedef enum {
    GG_LINK_IDENTITY = 1,
    GG_LINK_LOG,
    GG_LINK_INVERSE,
    GG_LINK_LOGIT,
    GG_LINK_PROBIT,
    GG_LINK_CLOGLOG,
    GG_LINK_CAUCHIT,
    GG_LINK_SQRT,
    GG_LINK_INVSQUARE,         /* "1/mu^2" */
    GG_LINK_POWER              /* R's power(lambda), "mu^lambda": link_power */
} gg_link_id;

typedef struct gg_family {
    gg_family_id fam;
    gg_link_id   link;
    double       link_power;   /* GG_LINK_POWER's lambda (> 0, != 1); 0 for the others */
    double       theta;        /* negbin: theta (> 0); Tweedie: p in (1, 2]; 0 for the others */
    int          efam;         /* 1: an extended family, fitted by efam_math.h's rows
                                  (nb() with theta estimated is negbin with efam = 1) */
    gg_fm_efpar  ef;           /* an extended family's theta and settings */
} gg_family;

/* The family's link as the row functions take it (code and power). */
static inline gg_fm_link gg_family_link(const gg_family *f)
{
    gg_fm_link l = {(int) f->link, f->link_power};
    return l;
}

/* 1 for the families that exist only as extended ones (tw, betar, ...). */
int gg_family_is_efam(gg_family_id f);

/* Looks names up as R spells them ("binomial", "1/mu^2"; "negbin" for
 * mgcv's negbin(theta), whose theta the caller sets; R's power(lambda)
 * links as "mu^" and lambda to full precision, "mu^0.10000000000000001");
 * checks that the link is one R allows for the family.  0 = OK. */
int gg_family_lookup(const char *family, const char *link, gg_family *out,
                     gg_status *st);
const char *gg_family_name(gg_family_id f);
const char *gg_link_name(gg_link_id l);
/* 1 when the scale parameter is estimated (all but binomial and poisson). */
int gg_family_scale_estimated(gg_family_id f);

double gg_linkfun(gg_fm_link l, double mu);
double gg_linkinv(gg_fm_link l, double eta);
double gg_mu_eta(gg_fm_link l, double eta);
double gg_variance(const gg_family *fam, double mu);
/* Unit deviance times the prior weight (R's dev.resids, before the sqrt). */
double gg_dev_resid(const gg_family *fam, double y, double mu, double wt);
/* R's family$initialize mustart for one row (binomial: weights = trials). */
double gg_mustart(gg_family_id f, double y, double wt);
/* The same for any family: an extended family's from its parameters. */
double gg_family_mustart(const gg_family *fam, double y, double wt);
/* A row's starting eta (the link of its mustart; gfam()'s member's, yat the
 * member index; y where a family has no second column): 1 when usable. */
int    gg_family_init_row(const gg_family *fam, double y, double yat, double wt, double *eta);
/* 1 if y is in the support of the family (binomial proportions in [0,1]). */
int    gg_y_valid(gg_family_id f, double y);
/* family$validmu / link valideta. */
int    gg_mu_valid(gg_family_id f, double mu);
int    gg_eta_valid(gg_fm_link l, double eta);
/* A usable starting eta: finite, valid for the link, its mean valid. */
int    gg_start_valid(const gg_family *fam, double eta);

/* One IRLS row: from eta (offset included) to mu, working weight w and
 * working response z = (eta - offset) + (y - mu)/mu_eta, as mgcv's bgam.fit.
 * Rows with zero prior weight or mu_eta == 0 get w = 0 and z = 0.  Returns
 * the row's deviance contribution. */
double gg_irls_row(const gg_family *fam, double y, double pw, double off,
                   double eta, double *mu, double *w, double *z);

double gg_qnorm(double p);     /* standard normal quantile (AS 241) */
double gg_pnorm(double x);

#endif
