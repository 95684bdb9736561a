/* cuda_predict.c -- prediction rows on the device: fit = X beta and the row
 * quadratic forms se2[i] = x_i' V x_i behind predict(se.fit = TRUE) on
 * large newdata (predict.gam_gpu() in R/predict.R, glue src/r/predict_r.c).
 *
 * X stays on the host and goes to the device in row chunks of at most
 * max(1, 2^24 / p) rows (~128 MiB; fewer when asked, and halved while the
 * arena cannot hold them), so the device never holds more than two chunks
 * of X, V, beta and the two n-vectors of results.  One chunk: X is copied
 * as it is.  Several: they go through cuda_stream.c, as the engine's
 * streamed X does (pinned double buffers, copies overlapping kernels).
 * Kernels: rows_xbeta of inst/kernels/rows.cu (no offset) and gram.cu's
 * gram_leverage (no weights), the tiled X V product with fixed-order row
 * sums that the fit's leverages use; each row's result is independent of
 * the chunking, and equal to the CPU twin's (predict_cpu.c) to rounding.
 * Every buffer comes from the arena and goes back on every path.  Compiled only with CUDA. */
#include "cuda_internal.h"
#include "gpu_telemetry.h"

#include <stdlib.h>
#include <string.h>

#define PRED_THREADS 256
#define PRED_CHUNK_DOUBLES ((size_t) 1 << 24)
static const char *LABEL = "predict";

typedef struct pred_run {
    CUfunction  f_xbeta, f_quad;
    unsigned    max_blocks;
    gg_xstream  xs;
    int         p;
    CUdeviceptr dbeta, dV, dfit, dse;   /* beta, V and the n-vectors of results */
} pred_run;

static CUdeviceptr rows_at(CUdeviceptr base, size_t r0)
{
    return base + r0 * sizeof(double);
}

/* fit and se2 of rows r0 .. r0+rows-1, whose X is the chunk Xc (ld rows);
 * a gg_xchunk_fn, also called once for an X that fits whole. */
static int launch_chunk(void *arg, CUdeviceptr Xc, size_t r0, size_t rows, CUstream stream,
                        gg_status *st)
{
    const pred_run *r = arg;
    long long ld = (long long) rows, nr = (long long) rows;
    int p = r->p;
    CUdeviceptr none = 0, dbeta = r->dbeta, dV = r->dV;
    CUdeviceptr dfit = rows_at(r->dfit, r0), dse = rows_at(r->dse, r0);
    size_t blocks = (rows + PRED_THREADS - 1) / PRED_THREADS;
    unsigned grid = (unsigned) (blocks < r->max_blocks ? blocks : r->max_blocks);
    void *a_xbeta[] = {&Xc, &ld, &nr, &p, &dbeta, &none, &dfit};
    if (gg_cu_check(gg_cu.cuLaunchKernel(r->f_xbeta, grid, 1, 1, PRED_THREADS, 1, 1, 0, stream,
                                         a_xbeta, NULL),
                    "predict: launching rows_xbeta", st))
        return -1;
    gg_tel_launch(LABEL, 1);
    /* gram_leverage: one block of its 256 threads per 64 rows */
    int no_ar = 0;
    double zero = 0.0;
    void *a_quad[] = {&Xc, &ld, &nr, &p, &dV, &none, &dse, &no_ar, &zero, &zero, &none};
    const unsigned lev_blocks = (unsigned) ((rows + 63) / 64);
    if (gg_cu_check(gg_cu.cuLaunchKernel(r->f_quad, lev_blocks, 1, 1, PRED_THREADS, 1, 1, 0,
                                         stream, a_quad, NULL),
                    "predict: launching gram_leverage", st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

/* Chunks of C rows through two pinned and two device buffers. */
static int predict_streamed(pred_run *r, const double *X, size_t n, int p, size_t C,
                            CUdeviceptr xbuf[2], gg_status *st)
{
    return gg_xstream_open(&r->xs, LABEL, X, n, p, C, xbuf[0], xbuf[1], st) ||
           gg_xstream_pass(&r->xs, launch_chunk, r, st);
}

/* Wait for whatever was queued, then free the streams, events and pinned
 * buffers (context current). */
static void pred_cleanup(pred_run *r, int failed)
{
    gg_xstream_close(&r->xs);
    if (failed)
        gg_cu.cuCtxSynchronize();   /* default-stream work of a failed call */
}

int gg_gpu_predict(int ordinal, const double *X, size_t n, int p, const double *beta,
                   const double *V, size_t max_chunk_rows, double *fit, double *se2,
                   gg_status *st)
{
    if (p < 1)
        return gg_fail(st, "gamgpu_bad_input", "predict: the model has no coefficients");
    gg_arena *arena = gg_gpu_arena(ordinal, st);
    if (arena == NULL || gg_cuda_enter(ordinal, st) != 0)
        return -1;
    pred_run r;
    memset(&r, 0, sizeof r);
    gg_buflist bufs;
    gg_buflist_init(&bufs, arena);
    int rc = -1;
    if (gg_cuda_function(ordinal, "rows", "rows_xbeta", &r.f_xbeta, st) ||
        gg_cuda_function(ordinal, "gram", "gram_leverage", &r.f_quad, st))
        goto done;
    gg_tel_dispatch(LABEL);
    if (n == 0) {
        rc = 0;
        goto done;
    }
    int sm = gg_cuda_sm_count(ordinal);
    r.max_blocks = (unsigned) (8 * (sm > 0 ? sm : 80));

    size_t C = PRED_CHUNK_DOUBLES / (size_t) p;
    if (C < 1)
        C = 1;
    if (max_chunk_rows > 0 && C > max_chunk_rows)
        C = max_chunk_rows;
    if (C > n)
        C = n;

    r.p = p;
    r.dbeta = gg_buflist_alloc(&bufs, (size_t) p, LABEL, st);
    r.dV = r.dbeta ? gg_buflist_alloc(&bufs, (size_t) p * (size_t) p, LABEL, st) : 0;
    r.dfit = r.dV ? gg_buflist_alloc(&bufs, n, LABEL, st) : 0;
    r.dse = r.dfit ? gg_buflist_alloc(&bufs, n, LABEL, st) : 0;
    if (r.dse == 0)
        goto done;

    /* X's chunk buffers: one when a single chunk holds X, else two; the
     * chunk is halved while the arena cannot hold them. */
    CUdeviceptr xbuf[2] = {0, 0};
    int streamed = C < n;
    for (;;) {
        gg_status try;
        gg_status_clear(&try);
        int mark = bufs.n;
        xbuf[0] = gg_buflist_alloc(&bufs, C * (size_t) p, LABEL, &try);
        xbuf[1] = xbuf[0] && streamed ? gg_buflist_alloc(&bufs, C * (size_t) p, LABEL, &try) : 0;
        if (xbuf[0] && (!streamed || xbuf[1]))
            break;
        gg_buflist_truncate(&bufs, mark);    /* give back what this attempt took */
        if (C == 1 || !gg_device_failure(&try)) {
            *st = try;
            goto done;
        }
        C = (C + 1) / 2;
        streamed = 1;
    }

    if (gg_cuda_upload(LABEL, r.dbeta, beta, (size_t) p, st) ||
        gg_cuda_upload(LABEL, r.dV, V, (size_t) p * (size_t) p, st))
        goto done;
    if (!streamed) {
        if (gg_cuda_upload(LABEL, xbuf[0], X, n * (size_t) p, st) ||
            launch_chunk(&r, xbuf[0], 0, n, NULL, st))
            goto done;
    } else if (predict_streamed(&r, X, n, p, C, xbuf, st)) {
        goto done;
    }
    /* Synchronous copies on the default stream: they wait for the kernels
     * (the streams are blocking ones) and report any fault they raised. */
    if (gg_cuda_wait(NULL, "the prediction on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(fit, r.dfit, n * sizeof(double)),
                    "predict: running the kernels / copying the fit back", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(se2, r.dse, n * sizeof(double)),
                    "predict: copying the standard errors back", st))
        goto done;
    gg_tel_d2h(LABEL, (double) (2 * n * sizeof(double)));
    rc = 0;
done:
    pred_cleanup(&r, rc != 0);
    gg_buflist_release(&bufs);
    gg_cuda_leave(ordinal);
    return rc;
}
