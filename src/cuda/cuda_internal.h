/* cuda_internal.h -- what the cuda_*.c files share and nothing else sees:
 * entering a device's primary context (and running an operation there),
 * its module cache slot, and the driver-error helper.  Compiled only with
 * CUDA. */
#ifndef GAMGPU_CUDA_INTERNAL_H
#define GAMGPU_CUDA_INTERNAL_H

#include "cuda_loader.h"
#include "gpu.h"

/* Make the device's primary context current (retaining it on first use).
 * Every successful enter must be paired with gg_cuda_leave(). */
int  gg_cuda_enter(int ordinal, gg_status *st);
void gg_cuda_leave(int ordinal);

/* One operation of a backend: op(ctx, st) inside the device's context,
 * entered before and left after whatever op returns.  Once entered, *count
 * (when non-NULL) is counted up, and *timer (when non-NULL) ends as it was
 * before plus the seconds from just before entering to just after leaving:
 * what op's own calls added to it is replaced, so an operation made of
 * others is not timed twice.  Returns op's status, or -1 (st filled) if
 * the context could not be entered: op not run, nothing counted or timed. */
typedef int (*gg_cuda_op)(void *ctx, gg_status *st);
int  gg_cuda_run(int ordinal, gg_cuda_op op, void *ctx, long *count, double *timer,
                 gg_status *st);

/* Multiprocessor count and NVRTC arch of a usable device. */
int         gg_cuda_sm_count(int ordinal);
const char *gg_cuda_arch(int ordinal);

/* Check a driver call; on failure fill st with "what: CUDA_ERROR_..." */
int gg_cu_check(CUresult r, const char *what, gg_status *st);

/* State that a file adding operations to the device backend keeps in it
 * (cuda_outer.c's): its
 * first member, so that the backend's release() frees it without knowing it. */
typedef struct gg_cuda_ext {
    void (*free)(struct gg_cuda_ext *self);
} gg_cuda_ext;

/* The module cache (cuda_modules.c).  Returns the kernel `fn` of module
 * `name`, compiling it on first request on this device.  Context must be
 * current. */
int  gg_cuda_function(int ordinal, const char *module, const char *fn,
                      CUfunction *out, gg_status *st);
/* fn(ordinal) runs for each device, its context current, before
 * gg_gpu_shutdown() releases the context (one fn: a later call replaces). */
void gg_cuda_on_release(void (*fn)(int ordinal));
/* Unload every module of a device (context current). */
void gg_cuda_modules_unload(int ordinal);
/* Whether a failed compile is cached (the default) or reported and tried
 * again on the next request: off while cuda_fault.c injects compile
 * failures, so that the tests' injected failure does not stick. */
void gg_cuda_modules_cache_failures(int on);

/* The Gram product on device-resident arrays (cuda_gram.c).  A plan fixes
 * the grid (tile pairs x row slabs) and the size of the partial-sum buffer
 * (partial_elements doubles) the caller provides as dP; dG holds q*q. */
typedef struct gg_gram_plan {
    int       n_pairs, n_slabs;
    long long rows_per_slab;
    size_t    partial_elements;
} gg_gram_plan;

void gg_cuda_gram_plan(int ordinal, size_t n, int q, gg_gram_plan *plan);
/* The plan for n rows cut into slabs of rows_per_slab rows: row chunks
 * streamed with the resident plan's slab height sum their slabs in the
 * resident order, so the streamed Gram is bit-identical to the resident. */
void gg_cuda_gram_plan_rows(size_t n, int q, long long rows_per_slab, gg_gram_plan *plan);
/* bam's AR1 residual model on the device (inst/include/ar1_math.h): ld =
 * 1 / sqrt(1 - rho^2), sd = -rho ld; start: n doubles on the device,
 * nonzero where a series starts, or 0 for one series. */
typedef struct gg_cuda_ar1 {
    double      ld, sd;
    CUdeviceptr start;
} gg_cuda_ar1;
/* Launch (asynchronously) G = [X z]' W [X z] over n rows, X with leading
 * dimension ldx; dz and dw may be 0.  With accumulate, G += instead.  With
 * ar non-NULL, G = [X~ z~]'[X~ z~] of the AR1-transformed rows (the weights
 * inside), which read row r - 1: X must start at row 0 of the data. */
int  gg_cuda_gram_run(int ordinal, const char *label, CUdeviceptr dX, size_t ldx,
                      CUdeviceptr dz, CUdeviceptr dw, size_t n, int p,
                      const gg_gram_plan *plan, CUdeviceptr dP, CUdeviceptr dG,
                      int accumulate, const gg_cuda_ar1 *ar, CUstream stream,
                      gg_status *st);
/* Wait, copy G back and split it into A (p x p), b and *zwz (with_z). */
int  gg_cuda_gram_fetch(const char *label, CUdeviceptr dG, int p, int with_z, double *A,
                        double *b, double *zwz, gg_status *st);
/* A host X (n x p, column-major) streamed through the device in chunks of
 * chunk_rows rows (cuda_stream.c): pinned double buffers into the device
 * buffers xbuf[0..1] (each chunk_rows x p), copies overlapping kernels.
 * With X NULL only the compute stream is made (chunks built on the device
 * by the caller).  Context current for every call. */
typedef struct gg_xstream {
    const char   *label;          /* telemetry backend */
    const double *X;
    size_t        n, chunk_rows;
    int           p;
    double       *pinned[2];
    CUdeviceptr   xbuf[2];
    CUstream      s_copy, s_comp; /* blocking streams */
    CUevent       h2d_done[2], comp_done[2];
} gg_xstream;

/* fn sees rows r0 .. r0+rows-1 of X at Xc (leading dimension rows). */
typedef int (*gg_xchunk_fn)(void *ctx, CUdeviceptr Xc, size_t r0, size_t rows,
                            CUstream stream, gg_status *st);
int  gg_xstream_open(gg_xstream *xs, const char *label, const double *X, size_t n, int p,
                     size_t chunk_rows, CUdeviceptr xbuf0, CUdeviceptr xbuf1, gg_status *st);
/* One pass over all chunks in order; returns when their kernels are done. */
int  gg_xstream_pass(gg_xstream *xs, gg_xchunk_fn fn, void *ctx, gg_status *st);
/* Wait for what was queued, free the buffers, events and streams
 * (safe on a zeroed or half-opened xs). */
void gg_xstream_close(gg_xstream *xs);

/* Waits until the work queued on stream (NULL: the default stream) has
 * ended, polling for a user interrupt (interrupt.h) meanwhile, so that a
 * long device pass does not hold R deaf.  On an interrupt it still waits
 * for the queued work (its buffers must outlive it: kernels cannot be
 * stopped), then fails with gamgpu_interrupted during `what`. */
int  gg_cuda_wait(CUstream stream, const char *what, gg_status *st);
/* The same for the work queued before event (recorded). */
int  gg_cuda_wait_event(CUevent event, const char *what, gg_status *st);

/* Synchronous host -> device copy of n doubles, counted in telemetry. */
int  gg_cuda_upload(const char *label, CUdeviceptr dst, const double *src, size_t n,
                    gg_status *st);

#endif
