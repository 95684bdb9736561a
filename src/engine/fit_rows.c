/* fit_rows.c -- the rows' part of a fit's result (fit_rows.h), worked out
 * on host threads while the engine is busy.  From the start of the fit:
 * touch every page of the n-length outputs (fresh R memory), so that the
 * device's copies and the residuals do not fault them in on the critical
 * path, and sum the null deviance (it needs only y and the weights).  When
 * the iterations are done (the engine's iterations_done hook): fetch the
 * final eta, mu and working weights, then compute the deviance residuals
 * and the aic (family_stats.c) while the engine post-processes (the
 * leverage pass, the p x p covariances).  Where the rows stay on a
 * cluster's nodes (gg_fit_rows_start_resident), none of that: the null
 * deviance, the deviance and the aic from the passes' sums over the
 * shards (the backend's row_sums), when the iterations are done. */
#include <string.h>

#include "family_stats.h"
#include "fit_rows.h"

typedef struct touch_job {
    const gg_fit_rows *fr;
    size_t i0, i1;
} touch_job;

static void *touch_run(void *arg)
{
    const touch_job *j = arg;
    const size_t step = 4096 / sizeof(double);
    for (int k = 0; k < GG_ROWS_NOUT; k++)
        if (j->fr->out[k] != NULL)
            for (size_t i = j->i0; i < j->i1; i += step) j->fr->out[k][i] = 0;
    return NULL;
}

static void *fit_rows_prep(void *arg)
{
    gg_fit_rows *fr = arg;
    /* row ranges of whole pages (4096 bytes of doubles), one per thread,
     * each of 256 pages (1 MiB per vector) at least */
    enum { MAXJ = 64, MIN_PAGES = 256 };
    touch_job jobs[MAXJ];
    int nj = fr->nthreads < 1 ? 1 : (fr->nthreads > MAXJ ? MAXJ : fr->nthreads);
    const size_t page = 4096 / sizeof(double), pages = (fr->n + page - 1) / page;
    if ((size_t) nj > pages / MIN_PAGES)
        nj = pages >= 2 * MIN_PAGES ? (int) (pages / MIN_PAGES) : 1;
    for (int t = 0; t < nj; t++) {
        size_t a = pages * t / nj * page, b = pages * (t + 1) / nj * page;
        jobs[t] = (touch_job) {fr, a, b < fr->n ? b : fr->n};
    }
    gg_run_jobs(nj, touch_run, jobs, sizeof(touch_job));
    fr->null_deviance = gg_null_deviance(&fr->fam, fr->n, fr->y, fr->pw, fr->nthreads);
    return NULL;
}

static void *fit_rows_stats(void *arg)
{
    gg_fit_rows *fr = arg;
    fr->aic_na = gg_residuals_aic(&fr->fam, fr->n, fr->y, fr->out[GG_ROWS_MU], fr->pw,
                                  fr->sig2, fr->nthreads, fr->out[GG_ROWS_RESID],
                                  &fr->resid_ss, &fr->aic, &fr->aic_nonint);
    return NULL;
}

/* The rows stay where the backend holds them (a cluster's shards): each
 * pass's sums come from the backend's row_sums(). */
typedef struct resident_sums {
    gg_backend *be;
    const gg_family *fam;
    gg_status *st;
} resident_sums;

static int resident_sum(void *ctx, const gg_stats_par *par, double out[3])
{
    resident_sums *r = ctx;
    return r->be->ops->row_sums(r->be, r->fam, par, out, r->st);
}

static int resident_done(gg_fit_rows *fr, gg_backend *be, const gg_family *fam, double sig2,
                         gg_status *st)
{
    if (be->ops->row_sums == NULL)
        return gg_fail(st, "gamgpu_internal_error",
                       "the %s backend keeps no rows of its own", be->ops->name);
    int fail = 0;
    resident_sums r0 = {be, &fr->fam, st};
    fr->null_deviance = gg_stats_null_deviance(resident_sum, &r0, &fail);
    if (fail) return -1;
    fr->fam = *fam;
    resident_sums r = {be, &fr->fam, st};
    const int rc = gg_stats_residuals_aic(&fr->fam, resident_sum, &r, sig2, &fr->resid_ss,
                                          &fr->aic, &fr->aic_nonint);
    if (rc < 0) return -1;
    fr->aic_na = rc;
    fr->fetched = 1;
    return 0;
}

int gg_fit_rows_iterations_done(void *ctx, gg_backend *be, const gg_family *fam, double sig2,
                                gg_status *st)
{
    gg_fit_rows *fr = ctx;
    if (fr->resident) return resident_done(fr, be, fam, sig2, st);
    gg_task_join(&fr->prep);
    fr->fam = *fam;            /* nb(): the residuals at the final theta */
    if (be->ops->fetch(be, GG_VEC_ETA, fr->out[GG_ROWS_ETA], st) ||
        be->ops->fetch(be, GG_VEC_MU, fr->out[GG_ROWS_MU], st) ||
        be->ops->fetch(be, GG_VEC_W, fr->out[GG_ROWS_W], st))
        return -1;
    fr->fetched = 1;
    fr->sig2 = sig2;
    gg_task_start(&fr->stats, fit_rows_stats, fr);
    return 0;
}

void gg_fit_rows_start(gg_fit_rows *fr, gg_family fam, size_t n, const double *y,
                       const double *pw, double *const out[GG_ROWS_NOUT], int nthreads)
{
    memset(fr, 0, sizeof *fr);
    fr->fam = fam;
    fr->n = n;
    fr->y = y;
    fr->pw = pw;
    fr->nthreads = nthreads;
    for (int k = 0; k < GG_ROWS_NOUT; k++) fr->out[k] = out[k];
    gg_task_start(&fr->prep, fit_rows_prep, fr);
}

void gg_fit_rows_start_resident(gg_fit_rows *fr, gg_family fam)
{
    memset(fr, 0, sizeof *fr);
    fr->fam = fam;
    fr->resident = 1;
}

void gg_fit_rows_new_attempt(gg_fit_rows *fr)
{
    gg_task_join(&fr->stats);
    fr->fetched = 0;
}

int gg_fit_rows_wait(gg_fit_rows *fr)
{
    gg_task_join(&fr->stats);
    return fr->fetched;
}

void gg_fit_rows_finish(gg_fit_rows *fr)
{
    gg_task_join(&fr->stats);
    gg_task_join(&fr->prep);
}
