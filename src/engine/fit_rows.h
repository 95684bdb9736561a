/* fit_rows.h -- the rows' part of a fit's result, worked out on host
 * threads beside the engine (fit_rows.c): the final eta, mu and working
 * weights fetched from the backend, the deviance residuals, their sum of
 * squares, the null deviance and the aic.  Pure C; the glue (fit_r.c)
 * allocates the output vectors and hands them over. */
#ifndef GAMGPU_FIT_ROWS_H
#define GAMGPU_FIT_ROWS_H

#include <stddef.h>

#include "backend.h"
#include "family.h"
#include "family_stats.h"
#include "status.h"
#include "threads.h"

enum { GG_ROWS_ETA, GG_ROWS_MU, GG_ROWS_W, GG_ROWS_RESID, GG_ROWS_HAT, GG_ROWS_NOUT };

typedef struct gg_fit_rows {
    /* results, once gg_fit_rows_wait() says the final vectors came */
    double null_deviance, resid_ss, aic;
    int aic_na;                     /* quasi families: no aic */
    gg_aic_nonint aic_nonint;       /* rows R's aic would warn about */
    /* private */
    gg_family fam;
    size_t n;
    int nthreads;
    const double *y, *pw;
    double *out[GG_ROWS_NOUT];
    double sig2;
    int fetched;
    int resident;                   /* the rows stay with the backend */
    gg_task prep, stats;
} gg_fit_rows;

/* Starts the work that needs no fit: touching the pages of the n-length
 * outputs (fresh memory; out[GG_ROWS_HAT] may be NULL) so that later
 * copies into them do not fault on the critical path, and the null
 * deviance.  y and pw (prior weights) must outlive gg_fit_rows_finish(). */
void gg_fit_rows_start(gg_fit_rows *fr, gg_family fam, size_t n, const double *y,
                       const double *pw, double *const out[GG_ROWS_NOUT], int nthreads);

/* For a backend whose rows stay where it holds them (a cluster's shards:
 * backend.h's row_sums): no n-vectors; the null deviance, the deviance
 * and the aic from its sums when the iterations are done. */
void gg_fit_rows_start_resident(gg_fit_rows *fr, gg_family fam);

/* The engine's iterations_done hook (ctx: the gg_fit_rows): fetches eta,
 * mu and w from the backend, then starts the residuals and the aic (with
 * the fit's scale sig2) beside the engine's post-processing. */
int gg_fit_rows_iterations_done(void *ctx, gg_backend *be, const gg_family *fam, double sig2,
                                gg_status *st);

/* Before each attempt of a fit (a device fit may be retried on the CPU). */
void gg_fit_rows_new_attempt(gg_fit_rows *fr);

/* After an attempt: waits for the residuals and the aic; 1 when this
 * attempt fetched the final vectors (the results are then set), else 0. */
int gg_fit_rows_wait(gg_fit_rows *fr);

/* Joins everything; call once, before any return or error. */
void gg_fit_rows_finish(gg_fit_rows *fr);

#endif
