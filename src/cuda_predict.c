/* cuda_predict.c -- prediction rows on the device: fit = X beta and the row
 * quadratic forms se2[i] = x_i' V x_i behind predict(se.fit = TRUE) on
 * large newdata (predict.gam_gpu() in R/predict.R, glue src/predict_r.c).
 *
 * X stays on the host and goes to the device in row chunks of at most
 * max(1, 2^24 / p) rows (~128 MiB; fewer when asked, and halved while the
 * arena cannot hold them), so the device never holds more than two chunks
 * of X, V, beta and the two n-vectors of results.  One chunk: X is copied
 * as it is.  Several: each chunk is packed into one of two pinned host
 * buffers and copied on a copy stream while the previous chunk's kernels
 * run on a compute stream (the pattern of cuda_backend.c's streaming).
 * Kernels: rows_xbeta and rows_quadform of inst/kernels/rows.cu (no offset,
 * no weights); each row's result is independent of the chunking, and equal
 * to the CPU twin's (predict_cpu.c).  Every buffer comes from the arena and
 * goes back on every path.  Compiled only with CUDA. */
#include "cuda_internal.h"
#include "gpu_telemetry.h"

#include <stdlib.h>
#include <string.h>

#define PRED_THREADS 256
#define PRED_CHUNK_DOUBLES ((size_t) 1 << 24)
static const char *LABEL = "predict";

typedef struct pred_run {
    CUfunction f_xbeta, f_quad;
    unsigned   max_blocks;
    double    *pinned[2];
    CUstream   s_copy, s_comp;
    CUevent    h2d_done[2], comp_done[2];
} pred_run;

/* fit[0..rows) and se2[0..rows) of one chunk Xc (rows x p, ld rows). */
static int launch_chunk(const pred_run *r, CUdeviceptr Xc, size_t rows, int p,
                        CUdeviceptr dbeta, CUdeviceptr dV, CUdeviceptr dfit, CUdeviceptr dse,
                        CUstream stream, gg_status *st)
{
    long long ld = (long long) rows, nr = (long long) rows;
    CUdeviceptr none = 0;
    size_t blocks = (rows + PRED_THREADS - 1) / PRED_THREADS;
    unsigned grid = (unsigned) (blocks < r->max_blocks ? blocks : r->max_blocks);
    void *a_xbeta[] = {&Xc, &ld, &nr, &p, &dbeta, &none, &dfit};
    if (gg_cu_check(gg_cu.cuLaunchKernel(r->f_xbeta, grid, 1, 1, PRED_THREADS, 1, 1, 0, stream,
                                         a_xbeta, NULL),
                    "predict: launching rows_xbeta", st))
        return -1;
    gg_tel_launch(LABEL, 1);
    void *a_quad[] = {&Xc, &ld, &nr, &p, &dV, &none, &dse};
    if (gg_cu_check(gg_cu.cuLaunchKernel(r->f_quad, grid, 1, 1, PRED_THREADS, 1, 1, 0, stream,
                                         a_quad, NULL),
                    "predict: launching rows_quadform", st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

static CUdeviceptr rows_at(CUdeviceptr base, size_t r0)
{
    return base + r0 * sizeof(double);
}

/* Chunks of C rows through two pinned and two device buffers. */
static int predict_streamed(pred_run *r, const double *X, size_t n, int p, size_t C,
                            CUdeviceptr xbuf[2], CUdeviceptr dbeta, CUdeviceptr dV,
                            CUdeviceptr dfit, CUdeviceptr dse, gg_status *st)
{
    const size_t bytes = C * (size_t) p * sizeof(double);
    for (int b = 0; b < 2; b++) {
        void *host = NULL;
        if (gg_cu_check(gg_cu.cuMemHostAlloc(&host, bytes, 0), "predict: pinned host buffer", st))
            return -1;
        r->pinned[b] = host;
        if (gg_cu_check(gg_cu.cuEventCreate(&r->h2d_done[b], CU_EVENT_DISABLE_TIMING),
                        "predict: event", st) ||
            gg_cu_check(gg_cu.cuEventCreate(&r->comp_done[b], CU_EVENT_DISABLE_TIMING),
                        "predict: event", st))
            return -1;
    }
    if (gg_cu_check(gg_cu.cuStreamCreate(&r->s_copy, CU_STREAM_DEFAULT), "predict: stream", st) ||
        gg_cu_check(gg_cu.cuStreamCreate(&r->s_comp, CU_STREAM_DEFAULT), "predict: stream", st))
        return -1;
    for (size_t k = 0, r0 = 0; r0 < n; k++, r0 += C) {
        const int b = (int) (k % 2);
        const size_t rows = n - r0 < C ? n - r0 : C;
        /* pinned[b] is free once the copy of chunk k-2 is done */
        if (k >= 2 && gg_cu_check(gg_cu.cuEventSynchronize(r->h2d_done[b]),
                                  "predict: waiting for a chunk copy", st))
            return -1;
        for (int j = 0; j < p; j++)
            memcpy(r->pinned[b] + (size_t) j * rows, X + (size_t) j * n + r0,
                   rows * sizeof(double));
        /* xbuf[b] is free once the kernels of chunk k-2 are done */
        if ((k >= 2 && gg_cu_check(gg_cu.cuStreamWaitEvent(r->s_copy, r->comp_done[b], 0),
                                   "predict: ordering a chunk copy", st)) ||
            gg_cu_check(gg_cu.cuMemcpyHtoDAsync(xbuf[b], r->pinned[b],
                                                rows * (size_t) p * sizeof(double), r->s_copy),
                        "predict: copying a chunk of X to the device", st) ||
            gg_cu_check(gg_cu.cuEventRecord(r->h2d_done[b], r->s_copy), "predict: event", st) ||
            gg_cu_check(gg_cu.cuStreamWaitEvent(r->s_comp, r->h2d_done[b], 0),
                        "predict: ordering chunk kernels", st))
            return -1;
        gg_tel_h2d(LABEL, (double) (rows * (size_t) p * sizeof(double)));
        if (launch_chunk(r, xbuf[b], rows, p, dbeta, dV, rows_at(dfit, r0), rows_at(dse, r0),
                         r->s_comp, st) ||
            gg_cu_check(gg_cu.cuEventRecord(r->comp_done[b], r->s_comp), "predict: event", st))
            return -1;
    }
    return gg_cu_check(gg_cu.cuStreamSynchronize(r->s_comp), "predict: running the kernels", st);
}

/* Wait for whatever was queued, then free the streams, events and pinned
 * buffers (context current). */
static void pred_cleanup(pred_run *r, int failed)
{
    if (r->s_comp) gg_cu.cuStreamSynchronize(r->s_comp);
    if (r->s_copy) gg_cu.cuStreamSynchronize(r->s_copy);
    if (failed)
        gg_cu.cuCtxSynchronize();   /* default-stream work of a failed call */
    for (int b = 0; b < 2; b++) {
        if (r->pinned[b]) gg_cu.cuMemFreeHost(r->pinned[b]);
        if (r->h2d_done[b]) gg_cu.cuEventDestroy(r->h2d_done[b]);
        if (r->comp_done[b]) gg_cu.cuEventDestroy(r->comp_done[b]);
    }
    if (r->s_copy) gg_cu.cuStreamDestroy(r->s_copy);
    if (r->s_comp) gg_cu.cuStreamDestroy(r->s_comp);
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
        gg_cuda_function(ordinal, "rows", "rows_quadform", &r.f_quad, st))
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

    CUdeviceptr dbeta = gg_buflist_alloc(&bufs, (size_t) p, LABEL, st);
    CUdeviceptr dV = dbeta ? gg_buflist_alloc(&bufs, (size_t) p * (size_t) p, LABEL, st) : 0;
    CUdeviceptr dfit = dV ? gg_buflist_alloc(&bufs, n, LABEL, st) : 0;
    CUdeviceptr dse = dfit ? gg_buflist_alloc(&bufs, n, LABEL, st) : 0;
    if (dse == 0)
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

    if (gg_cuda_upload(LABEL, dbeta, beta, (size_t) p, st) ||
        gg_cuda_upload(LABEL, dV, V, (size_t) p * (size_t) p, st))
        goto done;
    if (!streamed) {
        if (gg_cuda_upload(LABEL, xbuf[0], X, n * (size_t) p, st) ||
            launch_chunk(&r, xbuf[0], n, p, dbeta, dV, dfit, dse, NULL, st))
            goto done;
    } else if (predict_streamed(&r, X, n, p, C, xbuf, dbeta, dV, dfit, dse, st)) {
        goto done;
    }
    /* Synchronous copies on the default stream: they wait for the kernels
     * (the streams are blocking ones) and report any fault they raised. */
    if (gg_cu_check(gg_cu.cuMemcpyDtoH(fit, dfit, n * sizeof(double)),
                    "predict: running the kernels / copying the fit back", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(se2, dse, n * sizeof(double)),
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
