/* family_stats.c -- the fit's summaries over all rows (family_stats.h):
 * deviance residuals, null deviance and aic, as R's stats families compute
 * them but without n-length temporaries, in passes over fixed blocks of
 * rows that threads share out.  No R API at all (the densities are
 * family_dens.c's), so these run off R's thread.  The summaries are
 * composed from passes' sums (gg_stats_sum_fn): over rows in this
 * process's memory here, over a cluster's shards where the rows stay on
 * its nodes (fit_rows.c, node_r.c). */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "family_dens.h"
#include "family_stats.h"
#include "outer_math.h"

/* row i's prior weight; wt NULL: every weight is 1 (a lean cluster node
 * keeps no n-vector of ones) */
static inline double wt_at(const double *wt, size_t i) { return wt != NULL ? wt[i] : 1.0; }
#include "threads.h"

typedef struct stats_ctx {
    gg_stats_pass pass;
    gg_family fam;
    gg_family_id f;
    size_t n;
    const double *y, *mu, *wt;
    const double *eta;          /* GG_STATS_WORKING: the linear predictor */
    int canonical;              /* GG_STATS_WORKING: alpha is 1 */
    double na;                  /* GG_STATS_WORKING: the value of the rows left out */
    double *r;
    double ybar, disp, shape;   /* the null model's mean; the Gamma aic's */
    long double *part;          /* two partial sums per block */
} stats_ctx;

typedef struct stats_job {
    const stats_ctx *c;
    size_t b0, b1;              /* blocks [b0, b1) */
} stats_job;

static void block_sums(const stats_ctx *c, size_t i0, size_t i1, long double *s0,
                       long double *s1)
{
    const double *y = c->y, *mu = c->mu, *wt = c->wt;
    long double a = 0, b = 0;
    switch (c->pass) {
    case GG_STATS_MEAN:
        for (size_t i = i0; i < i1; i++) {
            if (wt_at(wt, i) != 0) a += y[i] * wt_at(wt, i);
            b += wt_at(wt, i);
        }
        break;
    case GG_STATS_NULL_DEV:
        for (size_t i = i0; i < i1; i++) a += gg_dev_resid(&c->fam, y[i], c->ybar, wt_at(wt, i));
        break;
    case GG_STATS_RESID:
        for (size_t i = i0; i < i1; i++) {
            const double d = gg_dev_resid(&c->fam, y[i], mu[i], wt_at(wt, i));
            const double q = d > 0 ? sqrt(d) : 0;
            const double ri = y[i] > mu[i] ? q : (y[i] < mu[i] ? -q : 0);
            const double sq = ri * ri;
            if (c->r != NULL) c->r[i] = ri;
            a += sq;
            b += wt_at(wt, i);
        }
        break;
    case GG_STATS_WORKING: {
        const gg_fm_link l = gg_family_link(&c->fam);
        for (size_t i = i0; i < i1; i++) {
            const double me = gg_fm_mu_eta(l, c->eta[i]);
            if (!(wt_at(wt, i) > 0) || me == 0) {
                c->r[i] = c->na;
                continue;
            }
            const double d = y[i] - mu[i];
            double al = 1.0;
            if (!c->canonical) {
                al = 1.0 + d * (gg_fm_dvar((int) c->f, mu[i], c->fam.theta) /
                                gg_fm_variance((int) c->f, mu[i], c->fam.theta) +
                                gg_fm_d2link(l, mu[i]) * me);
                if (al == 0) al = DBL_EPSILON;
            }
            c->r[i] = d / (me * al);
        }
        break;
    }
    case GG_STATS_AIC:
        switch (c->f) {
        case GG_FAM_GAUSSIAN:      /* sum(log(wt)); log(1) adds +0; the rows */
            for (size_t i = i0; i < i1; i++)
                if (wt_at(wt, i) != 1) a += log(wt_at(wt, i));
            b = (long double) (i1 - i0);
            break;
        case GG_FAM_BINOMIAL: {    /* sum(ifelse(m > 0, wt/m, 0) dbinom(round(m y), round(m), mu, log)), m = wt */
            int bad = 0;
            for (size_t i = i0; i < i1; i++) {
                const double m = wt_at(wt, i), fac = m > 0 ? wt_at(wt, i) / m : 0;
                a += fac * gg_ldbinom(nearbyint(m * y[i]), nearbyint(m), mu[i], &bad);
            }
            b = bad;
            break;
        }
        case GG_FAM_POISSON: {     /* sum(dpois(y, mu, log) wt) */
            int bad = 0;
            for (size_t i = i0; i < i1; i++) a += gg_ldpois(y[i], mu[i], &bad) * wt_at(wt, i);
            b = bad;
            break;
        }
        case GG_FAM_GAMMA:         /* sum(dgamma(y, 1/disp, scale = mu disp, log) wt) */
            for (size_t i = i0; i < i1; i++)
                a += gg_ldgamma(y[i], c->shape, mu[i] * c->disp) * wt_at(wt, i);
            break;
        case GG_FAM_INVGAUSS:      /* sum(wt), sum(log(y) wt) */
            for (size_t i = i0; i < i1; i++) {
                b += wt_at(wt, i);
                a += log(y[i]) * wt_at(wt, i);
            }
            break;
        default:
            break;
        }
        break;
    }
    *s0 = a;
    *s1 = b;
}

static void *stats_run(void *arg)
{
    const stats_job *j = arg;
    const stats_ctx *c = j->c;
    for (size_t k = j->b0; k < j->b1; k++) {
        const size_t i0 = k * GG_STATS_BLOCK;
        const size_t i1 = i0 + GG_STATS_BLOCK < c->n ? i0 + GG_STATS_BLOCK : c->n;
        block_sums(c, i0, i1, &c->part[2 * k], &c->part[2 * k + 1]);
    }
    return NULL;
}

/* One pass: the blocks' partial sums, then their sums in block order.  With
 * no memory for the partials or the jobs, one block's worth of rows at a
 * time on this thread gives the same numbers. */
static void run_pass(stats_ctx *c, int nthreads, double *s0, double *s1)
{
    const size_t nb = c->n == 0 ? 0 : (c->n - 1) / GG_STATS_BLOCK + 1;
    long double part1[2], a = 0, b = 0;
    long double *part = nb > 1 ? malloc(2 * nb * sizeof(long double)) : NULL;
    const int nj = nthreads < 1 ? 1 : ((size_t) nthreads > nb ? (int) (nb ? nb : 1) : nthreads);
    stats_job *jobs = part && nj > 1 ? malloc((size_t) nj * sizeof(stats_job)) : NULL;
    if (part) {
        c->part = part;
        if (jobs) {
            for (int t = 0; t < nj; t++)
                jobs[t] = (stats_job) {c, nb * t / nj, nb * (t + 1) / nj};
        }
        if (jobs) {
            gg_run_jobs(nj, stats_run, jobs, sizeof(stats_job));
        } else {
            stats_job all = {c, 0, nb};
            stats_run(&all);
        }
        for (size_t k = 0; k < nb; k++) {
            a += part[2 * k];
            b += part[2 * k + 1];
        }
    } else {
        for (size_t k = 0; k < nb; k++) {
            const size_t i0 = k * GG_STATS_BLOCK;
            const size_t i1 = i0 + GG_STATS_BLOCK < c->n ? i0 + GG_STATS_BLOCK : c->n;
            block_sums(c, i0, i1, &part1[0], &part1[1]);
            a += part1[0];
            b += part1[1];
        }
    }
    free(jobs);
    free(part);
    c->part = NULL;
    *s0 = (double) a;
    *s1 = (double) b;
}

void gg_stats_rows(const gg_family *fam, const gg_stats_par *par, size_t n, const double *y,
                   const double *mu, const double *wt, int nthreads, double *r, double out[3])
{
    stats_ctx c = {.pass = par->pass, .fam = *fam, .f = fam->fam, .n = n, .y = y, .mu = mu,
                   .wt = wt, .r = r, .ybar = par->ybar, .disp = par->disp,
                   .shape = par->disp != 0 ? 1 / par->disp : 0};
    run_pass(&c, nthreads, &out[0], &out[1]);
    out[2] = NAN;
    if (par->pass == GG_STATS_AIC && out[1] > 0 &&
        (fam->fam == GG_FAM_POISSON || fam->fam == GG_FAM_BINOMIAL))
        for (size_t i = 0; i < n; i++) {
            const double x = fam->fam == GG_FAM_POISSON ? y[i] : nearbyint(wt_at(wt, i) * y[i]);
            if (gg_dens_nonint(x)) {
                out[2] = x;
                break;
            }
        }
}

void gg_working_residuals(const gg_family *fam, size_t n, const double *y, const double *mu,
                          const double *eta, const double *wt, int canonical, double na,
                          int nthreads, double *r)
{
    stats_ctx c = {.pass = GG_STATS_WORKING, .fam = *fam, .f = fam->fam, .n = n, .y = y,
                   .mu = mu, .wt = wt, .eta = eta, .canonical = canonical, .na = na, .r = r};
    double s0, s1;
    run_pass(&c, nthreads, &s0, &s1);
}

/* ---- the summaries, from a pass's sums over every row -------------------- */

double gg_stats_null_deviance(gg_stats_sum_fn sum, void *ctx, int *fail)
{
    double s[3];
    gg_stats_par par = {GG_STATS_MEAN, 0, 0};
    if (sum(ctx, &par, s)) {
        *fail = 1;
        return NAN;
    }
    par.pass = GG_STATS_NULL_DEV;
    par.ybar = s[0] / s[1];
    if (sum(ctx, &par, s)) {
        *fail = 1;
        return NAN;
    }
    *fail = 0;
    return s[0];
}

/* family$aic(y, n, mu, wt, dev) given dev and sum(wt) */
static int aic_at_dev(const gg_family *fam, gg_stats_sum_fn sum, void *ctx, double dev,
                      double sw, double *aic, gg_aic_nonint *bad)
{
    double s[3];
    gg_stats_par par = {GG_STATS_AIC, 0, 0};
    bad->count = 0;
    bad->x = 0;
    switch (fam->fam) {
    case GG_FAM_GAUSSIAN:
        /* nobs (log(dev/nobs 2 pi) + 1) + 2 - sum(log(wt)) */
        if (sum(ctx, &par, s)) return -1;
        *aic = s[1] * (log(dev / s[1] * 2 * M_PI) + 1) + 2 - s[0];
        return 0;
    case GG_FAM_BINOMIAL:
    case GG_FAM_POISSON:
        if (sum(ctx, &par, s)) return -1;
        *aic = -2 * s[0];
        if (s[1] > 0) {
            /* rows whose density R warns about: how many, and the first
             * one's x, for the warning the glue gives on R's thread */
            bad->count = (size_t) s[1];
            bad->x = s[2];
        }
        return 0;
    case GG_FAM_GAMMA:
        /* n = sum(wt); disp = dev/n; -2 sum(...) + 2 */
        par.disp = dev / sw;
        if (sum(ctx, &par, s)) return -1;
        *aic = -2 * s[0] + 2;
        return 0;
    case GG_FAM_INVGAUSS:
        /* sum(wt) (1 + log(dev/sum(wt) 2 pi)) + 3 sum(log(y) wt) + 2 */
        if (sum(ctx, &par, s)) return -1;
        *aic = s[1] * (1 + log(dev / s[1] * 2 * M_PI)) + 3 * s[0] + 2;
        return 0;
    default:
        return 1;
    }
}

int gg_stats_residuals_aic(const gg_family *fam, gg_stats_sum_fn sum, void *ctx, double sig2,
                           double *resid_ss, double *aic, gg_aic_nonint *bad)
{
    double s[3];
    gg_stats_par par = {GG_STATS_RESID, 0, 0};
    bad->count = 0;
    bad->x = 0;
    if (sum(ctx, &par, s)) return -1;
    *resid_ss = s[0];
    /* family$aic's dev argument, as mgcv passes it */
    const double dev = fam->fam == GG_FAM_GAUSSIAN ? s[0] : sig2 * s[1];
    return aic_at_dev(fam, sum, ctx, dev, s[1], aic, bad);
}

/* ---- the summaries over rows in this process's memory -------------------- */

typedef struct local_rows {
    const gg_family *fam;
    size_t n;
    const double *y, *mu, *wt;
    double *r;
    int nthreads;
} local_rows;

static int local_sum(void *ctx, const gg_stats_par *par, double out[3])
{
    const local_rows *l = ctx;
    gg_stats_rows(l->fam, par, l->n, l->y, l->mu, l->wt, l->nthreads, l->r, out);
    return 0;
}

double gg_null_deviance(const gg_family *fam, size_t n, const double *y, const double *wt,
                        int nthreads)
{
    local_rows l = {fam, n, y, NULL, wt, NULL, nthreads};
    int fail;
    return gg_stats_null_deviance(local_sum, &l, &fail);
}

int gg_residuals_aic(const gg_family *fam, size_t n, const double *y, const double *mu,
                     const double *wt, double sig2, int nthreads, double *r,
                     double *resid_ss, double *aic, gg_aic_nonint *bad)
{
    local_rows l = {fam, n, y, mu, wt, r, nthreads};
    return gg_stats_residuals_aic(fam, local_sum, &l, sig2, resid_ss, aic, bad);
}

int gg_family_aic(const gg_family *fam, size_t n, const double *y, const double *mu,
                  const double *wt, double dev, int nthreads, double *aic, gg_aic_nonint *bad)
{
    local_rows l = {fam, n, y, mu, wt, NULL, nthreads};
    double s[3];
    const gg_stats_par par = {GG_STATS_MEAN, 0, 0};
    local_sum(&l, &par, s);
    return aic_at_dev(fam, local_sum, &l, dev, s[1], aic, bad);
}

/* ---- a sum over rows of per-value terms: gg_sum_spread --------------------- */

double gg_sum_spread(const double *t, const int *idx, const double *v, size_t n, int op)
{
    long double s = 0;
    for (size_t r = 0; r < n; r++) {
        const double a = t[idx[r] - 1];
        double q;
        switch (op) {
        case 0: q = a * v[r]; break;
        case 1: q = a - v[r]; break;
        case 2: q = a / v[r]; break;
        default: q = a; break;
        }
        s += q;
    }
    if (s > DBL_MAX) return INFINITY;
    if (s < -DBL_MAX) return -INFINITY;
    return (double) s;
}
