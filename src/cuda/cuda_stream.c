/* cuda_stream.c -- the one way a host-resident X goes through the device
 * in row chunks: two pinned host buffers and two device buffers, copies on
 * a copy stream overlapping the previous chunk's kernels on a compute
 * stream, ordered by events (chunk k reuses the buffers of chunk k - 2
 * once its copy and its kernels are done).  The engine's streamed passes
 * (cuda_backend.c) and predict's chunks (cuda_predict.c) both use it.  Both
 * streams are blocking ones, so they also order with the default stream.
 * Compiled only with CUDA. */
#include "cuda_internal.h"
#include "gpu_telemetry.h"
#include "interrupt.h"

#include <stdio.h>
#include <string.h>

/* gg_cu_check with the stream's label in front of what failed */
static int check(const gg_xstream *xs, CUresult r, const char *what, gg_status *st)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s: %s", xs->label, what);
    return gg_cu_check(r, msg, st);
}

int gg_xstream_open(gg_xstream *xs, const char *label, const double *X, size_t n, int p,
                    size_t chunk_rows, CUdeviceptr xbuf0, CUdeviceptr xbuf1, gg_status *st)
{
    memset(xs, 0, sizeof *xs);
    xs->label = label;
    xs->X = X;
    xs->n = n;
    xs->p = p;
    xs->chunk_rows = chunk_rows;
    xs->xbuf[0] = xbuf0;
    xs->xbuf[1] = xbuf1;
    if (check(xs, gg_cu.cuStreamCreate(&xs->s_comp, CU_STREAM_DEFAULT), "stream", st))
        return -1;
    for (int b = 0; b < 2; b++)
        if (check(xs, gg_cu.cuEventCreate(&xs->comp_done[b], CU_EVENT_DISABLE_TIMING),
                  "event", st))
            return -1;
    if (X == NULL)                  /* chunks made on the device: compute stream only */
        return 0;
    const size_t bytes = chunk_rows * (size_t) p * sizeof(double);
    for (int b = 0; b < 2; b++) {
        void *host = NULL;
        if (check(xs, gg_cu.cuMemHostAlloc(&host, bytes, 0), "pinned host buffer", st))
            return -1;
        xs->pinned[b] = host;
        if (check(xs, gg_cu.cuEventCreate(&xs->h2d_done[b], CU_EVENT_DISABLE_TIMING),
                        "event", st))
            return -1;
    }
    return check(xs, gg_cu.cuStreamCreate(&xs->s_copy, CU_STREAM_DEFAULT), "stream", st);
}

int gg_xstream_pass(gg_xstream *xs, gg_xchunk_fn fn, void *ctx, gg_status *st)
{
    const size_t n = xs->n, C = xs->chunk_rows;
    const int p = xs->p;
    for (size_t k = 0, r0 = 0; r0 < n; k++, r0 += C) {
        const int b = (int) (k % 2);
        const size_t rows = n - r0 < C ? n - r0 : C;
        /* (on an interrupt, gg_xstream_close waits for the chunks queued) */
        if (gg_interrupt_check())
            return gg_interrupt_fail(st, "a streamed pass over X");
        /* pinned[b] is free once the copy of chunk k-2 is done */
        if (k >= 2 && check(xs, gg_cu.cuEventSynchronize(xs->h2d_done[b]),
                                  "waiting for a chunk copy", st))
            return -1;
        for (int j = 0; j < p; j++)
            memcpy(xs->pinned[b] + (size_t) j * rows, xs->X + (size_t) j * n + r0,
                   rows * sizeof(double));
        /* xbuf[b] is free once the kernels of chunk k-2 are done */
        if ((k >= 2 && check(xs, gg_cu.cuStreamWaitEvent(xs->s_copy, xs->comp_done[b], 0),
                                   "ordering a chunk copy", st)) ||
            check(xs, gg_cu.cuMemcpyHtoDAsync(xs->xbuf[b], xs->pinned[b],
                                                rows * (size_t) p * sizeof(double), xs->s_copy),
                        "copying a chunk of X to the device", st) ||
            check(xs, gg_cu.cuEventRecord(xs->h2d_done[b], xs->s_copy), "event", st) ||
            check(xs, gg_cu.cuStreamWaitEvent(xs->s_comp, xs->h2d_done[b], 0),
                        "ordering chunk kernels", st))
            return -1;
        gg_tel_h2d(xs->label, (double) (rows * (size_t) p * sizeof(double)));
        if (fn(ctx, xs->xbuf[b], r0, rows, xs->s_comp, st) != 0 ||
            check(xs, gg_cu.cuEventRecord(xs->comp_done[b], xs->s_comp), "event", st))
            return -1;
    }
    return gg_cuda_wait(xs->s_comp, "a streamed pass over X", st);
}

void gg_xstream_close(gg_xstream *xs)
{
    if (xs->s_comp) gg_cu.cuStreamSynchronize(xs->s_comp);
    if (xs->s_copy) gg_cu.cuStreamSynchronize(xs->s_copy);
    for (int b = 0; b < 2; b++) {
        if (xs->pinned[b]) gg_cu.cuMemFreeHost(xs->pinned[b]);
        if (xs->h2d_done[b]) gg_cu.cuEventDestroy(xs->h2d_done[b]);
        if (xs->comp_done[b]) gg_cu.cuEventDestroy(xs->comp_done[b]);
    }
    if (xs->s_copy) gg_cu.cuStreamDestroy(xs->s_copy);
    if (xs->s_comp) gg_cu.cuStreamDestroy(xs->s_comp);
    memset(xs, 0, sizeof *xs);
}
