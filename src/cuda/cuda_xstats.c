/* cuda_xstats.c -- the statistics gam()'s set-up takes of a smooth's raw
 * basis on every row (R/basis_facts.R: column RMS, column means, the row
 * of largest absolute scaled row sum), reduced on the device where X was
 * built (basis.cu's basis_stats_cols and basis_stats_rows) so that only
 * they come back, not X.  Compiled only with CUDA. */
#include "cuda_state.h"

#include <math.h>
#include <stdlib.h>

static const char *LABEL = GG_CUDA_ENGINE;

#define STATS_BLOCK_ROWS 65536   /* rows per block of basis_stats_cols/rows */
#define STATS_THREADS 256        /* basis.cu's STATS_THREADS */

typedef struct stats_ctx {
    int     rms;
    double *scale, *mean, *rowmax;
    size_t *imax;
} stats_ctx;

static int fetch(void *dst, CUdeviceptr src, size_t bytes, gg_status *st)
{
    if (gg_cu_check(gg_cu.cuMemcpyDtoH(dst, src, bytes), "engine: copying basis statistics back",
                    st))
        return -1;
    gg_tel_d2h(LABEL, (double) bytes);
    return 0;
}

/* basis_stats_cols per pass (the squares for the scale, then the scaled
 * values for the mean) and basis_stats_rows, each block's partial summed
 * here in block order in long double, as gg_basis_stats() sums. */
static int reduce_stats(cuda_state *s, void *ctx, gg_status *st)
{
    stats_ctx *c = ctx;
    const size_t n = s->n;
    int k = s->p;
    long long nn = (long long) n, ld = (long long) n, br = STATS_BLOCK_ROWS;
    const unsigned nb = (unsigned) ((n + STATS_BLOCK_ROWS - 1) / STATS_BLOCK_ROWS);
    CUfunction fc, fr;
    CUdeviceptr part, dscale, rmax, rat;
    if (gg_cuda_function(s->ordinal, "basis", "basis_stats_cols", &fc, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_stats_rows", &fr, st) ||
        !(part = gg_buflist_alloc(&s->bufs, (size_t) nb * k, LABEL, st)) ||
        !(dscale = gg_buflist_alloc(&s->bufs, (size_t) k, LABEL, st)) ||
        !(rmax = gg_buflist_alloc(&s->bufs, nb, LABEL, st)) ||
        !(rat = gg_buflist_alloc(&s->bufs, nb, LABEL, st)))
        return -1;
    double *hp = malloc((size_t) nb * k * sizeof(double)), *hr = malloc(nb * sizeof(double));
    long long *hi = malloc(nb * sizeof(long long));
    int rc = -1;
    if (hp == NULL || hr == NULL || hi == NULL) {
        gg_fail(st, "gamgpu_host_oom", "out of memory (basis statistics)");
        goto done;
    }
    for (int j = 0; j < k; j++) c->scale[j] = 1.0;
    for (int pass = c->rms ? 0 : 1; pass <= 1; pass++) {
        if (gg_cu_check(gg_cu.cuMemcpyHtoD(dscale, c->scale, (size_t) k * sizeof(double)),
                        "engine: copying basis scales", st))
            goto done;
        gg_tel_h2d(LABEL, (double) k * sizeof(double));
        void *args[] = {&s->X, &nn, &ld, &k, &br, &pass, &dscale, &part};
        if (gg_cu_check(gg_cu.cuLaunchKernel(fc, nb, (unsigned) k, 1, STATS_THREADS, 1, 1, 0,
                                             NULL, args, NULL),
                        "engine: launching basis_stats_cols", st))
            goto done;
        gg_tel_launch(LABEL, 1);
        if (gg_cuda_wait(NULL, "a basis's statistics on the device", st) ||
            fetch(hp, part, (size_t) nb * k * sizeof(double), st))
            goto done;
        for (int j = 0; j < k; j++) {
            long double t = 0;
            for (unsigned b = 0; b < nb; b++) t += hp[(size_t) b * k + j];
            if (pass == 0)
                c->scale[j] = sqrt((double) (t / (long double) n));
            else
                c->mean[j] = (double) (t / (long double) n);
        }
    }
    if (gg_cu_check(gg_cu.cuMemcpyHtoD(dscale, c->scale, (size_t) k * sizeof(double)),
                    "engine: copying basis scales", st))
        goto done;
    void *rargs[] = {&s->X, &nn, &ld, &k, &br, &dscale, &rmax, &rat};
    if (gg_cu_check(gg_cu.cuLaunchKernel(fr, nb, 1, 1, STATS_THREADS, 1, 1, 0, NULL, rargs, NULL),
                    "engine: launching basis_stats_rows", st))
        goto done;
    gg_tel_launch(LABEL, 1);
    if (gg_cuda_wait(NULL, "a basis's statistics on the device", st) ||
        fetch(hr, rmax, nb * sizeof(double), st) || fetch(hi, rat, nb * sizeof(long long), st))
        goto done;
    *c->rowmax = -1;
    *c->imax = 0;
    for (unsigned b = 0; b < nb; b++)
        if (hr[b] > *c->rowmax) {
            *c->rowmax = hr[b];
            *c->imax = (size_t) hi[b];
        }
    rc = 0;
done:
    free(hp);
    free(hr);
    free(hi);
    return rc;
}

/* gg_basis_stats() of X (n x p from its recipe), X built and reduced on the
 * device: only the statistics come back (at 10^7 rows and 60 columns, 40
 * bytes a column and block in place of 4.8 GB). */
int gg_cuda_xplan_stats(int ordinal, const gg_xplan *xp, int rms_scale, double *scale,
                        double *mean, double *rowmax, size_t *imax, gg_status *st)
{
    stats_ctx c = {rms_scale, scale, mean, rowmax, imax};
    return gg_cuda_xplan_run(ordinal, xp, reduce_stats, &c, st);
}
