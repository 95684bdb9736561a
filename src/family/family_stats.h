/* family_stats.h -- what the gam object needs over all rows once a fit is
 * done, by the family arithmetic of the fit (family.h), in pure C: signed
 * deviance residuals with their sum of squares, the null deviance and the
 * family's aic.  Each is a pass over blocks of rows spread over threads,
 * without temporaries, with the numbers R's own family functions give
 * (the log densities of family_dens.c, R's to rounding; long double sums in R's order within a block of
 * GG_STATS_BLOCK rows, then over the blocks in order: the same result for
 * any thread count, and R's sum() itself up to one block). */
#ifndef GAMGPU_FAMILY_STATS_H
#define GAMGPU_FAMILY_STATS_H

#include <stddef.h>

#include "family.h"

#define GG_STATS_BLOCK 65536

/* The passes over rows the summaries are made of; each gives two sums
 * (family_stats.c's block_sums() says which) that add over row shards. */
typedef enum {
    GG_STATS_MEAN,       /* sum(y wt) over wt != 0, sum(wt) */
    GG_STATS_NULL_DEV,   /* sum(d(y, ybar, wt)) */
    GG_STATS_RESID,      /* sum(r^2), sum(wt) (r: the deviance residuals) */
    GG_STATS_AIC,        /* the family's aic sum, and the rows (gaussian),
                            sum(wt) (inverse.gaussian) or the count of rows
                            whose density R warns about (binomial, poisson) */
    GG_STATS_WORKING     /* the working residuals into r (gg_working_residuals());
                            its sums are 0 */
} gg_stats_pass;

typedef struct gg_stats_par {
    gg_stats_pass pass;
    double ybar;         /* GG_STATS_NULL_DEV: the null model's mean */
    double disp;         /* GG_STATS_AIC, Gamma: dev / sum(wt) */
} gg_stats_par;

/* One pass over rows [0, n): out[0], out[1] its two sums, out[2] for
 * GG_STATS_AIC the first row's x that R's density warns about (NaN:
 * none); r (n, or NULL) receives the deviance residuals in
 * GG_STATS_RESID.  mu is read by GG_STATS_RESID and GG_STATS_AIC only;
 * wt NULL: every prior weight is 1. */
void gg_stats_rows(const gg_family *fam, const gg_stats_par *par, size_t n, const double *y,
                   const double *mu, const double *wt, int nthreads, double *r, double out[3]);

/* A pass's sums over every row of a fit, wherever they are (out as
 * gg_stats_rows()'s, the shards' sums added, out[2] the first shard's
 * that has one); nonzero on failure. */
typedef int (*gg_stats_sum_fn)(void *ctx, const gg_stats_par *par, double out[3]);

/* sum(dev.resids(y, weighted.mean(y, wt), wt)), with weighted.mean's
 * exclusion of zero weights. */
double gg_null_deviance(const gg_family *fam, size_t n, const double *y, const double *wt,
                        int nthreads);

/* Rows whose log density R's family$aic would warn about ("non-integer x
 * = %f", e.g. a Poisson response that is not a whole number): R's density
 * is then 0, so the aic is Inf (or NaN where a weight is 0), as here. */
typedef struct gg_aic_nonint {
    size_t count;      /* how many rows */
    double x;          /* the first such row's x, for R's message */
} gg_aic_nonint;

/* r_i = sign(y_i - mu_i) sqrt(max(d_i, 0)), d_i the deviance contribution
 * (family$dev.resids), into r; *resid_ss = sum(r^2); and family$aic(y, 1,
 * mu, wt, dev) with dev as mgcv passes it (sum(r^2) for the gaussian, sig2
 * sum(wt) otherwise) into *aic, with the rows R would warn about in
 * *bad.  Returns 0, or 1 where the aic is not computed here: NA for the
 * quasi families, and negbin's, which the caller takes from R's family
 * (then *aic is not set).  Pure C: runs on any thread. */
/* sum over rows r of (t[idx[r]] op v[r]) -- op 0: *, 1: -, 2: /, 3: t
 * alone (v unused) -- each term rounded to double, summed in row order in
 * long double as R's sum() sums: R's sum(t[idx] op v) to the bit, without
 * the n-vectors.  idx is 1-based, as R's match() gives it. */
double gg_sum_spread(const double *t, const int *idx, const double *v, size_t n, int op);

/* gg_null_deviance() and gg_residuals_aic() (without the residuals
 * themselves) from passes' sums: *fail set, or -1 returned, when a sum
 * failed. */
double gg_stats_null_deviance(gg_stats_sum_fn sum, void *ctx, int *fail);
int gg_stats_residuals_aic(const gg_family *fam, gg_stats_sum_fn sum, void *ctx, double sig2,
                           double *resid_ss, double *aic, gg_aic_nonint *bad);

int gg_residuals_aic(const gg_family *fam, size_t n, const double *y, const double *mu,
                     const double *wt, double sig2, int nthreads, double *r,
                     double *resid_ss, double *aic, gg_aic_nonint *bad);

/* gam.fit3's working residuals at its fitted eta and mu: (y - mu) /
 * (mu.eta(eta) alpha) on the rows with wt > 0 and mu.eta(eta) != 0, alpha
 * 1 where the link is canonical, else Newton's 1 + (y - mu) (dvar / V +
 * d2link mu.eta) (DBL_EPSILON where it is 0); `na` on the other rows.
 * wt NULL: every prior weight is 1. */
void gg_working_residuals(const gg_family *fam, size_t n, const double *y, const double *mu,
                          const double *eta, const double *wt, int canonical, double na,
                          int nthreads, double *r);

/* The family's aic, family$aic(y, n, mu, wt, dev), at a given dev (the
 * outer iteration's scale times sum(wt)); its rows are not written. */
int gg_family_aic(const gg_family *fam, size_t n, const double *y, const double *mu,
                  const double *wt, double dev, int nthreads, double *aic, gg_aic_nonint *bad);

#endif
