/* cuda_backend.h -- what the device backend (cuda_backend.c) lends the
 * files that add operations to it: its row state on the device and its
 * passes over X (resident, or streamed chunk by chunk), all with the
 * backend's context entered by the caller.  cuda_outer.c builds gam()'s
 * outer iteration's rows and products (outer_rows.h: gg_outer_ops) on
 * them; cuda_open.c puts the two together as the device backend.
 * Compiled only with CUDA. */
#ifndef GAMGPU_CUDA_BACKEND_H
#define GAMGPU_CUDA_BACKEND_H

#include <stddef.h>

#include "backend.h"
#include "cuda_internal.h"
#include "outer_rows.h"

/* The backend's row state: n-vectors on the device (off 0 without an
 * offset), partial: the row kernels' block sums (gg_cuda_partial_sums),
 * stream: the one row-wise work runs on, outer: the slot of cuda_outer.c's
 * state (gg_cuda_ext), freed with the backend. */
typedef struct gg_cuda_rows {
    int          ordinal;
    size_t       n;
    int          p;
    unsigned     row_blocks;        /* the row kernels' grid */
    CUdeviceptr  y, yat, pw, off, eta, mu, w, z, h, partial;  /* yat: 0 when none;
                                        pw: 0 when every weight is 1; h: 0
                                        until made (gg_cuda_need_h()) */
    CUstream     stream;
    int          ar_on;
    gg_cuda_ext **outer;
} gg_cuda_rows;

void gg_cuda_rows_of(gg_backend *be, gg_cuda_rows *out);

/* The row state's n-vector h, made now if the session is lean and has not
 * used it yet (gg_data.lean_rows); context entered. */
int gg_cuda_need_h(gg_backend *be, CUdeviceptr *h, gg_status *st);

/* out[j] = the sum of the row kernels' block sums j (partial[j *
 * row_blocks + b]) in block order, j < k; waits for the kernels. */
int gg_cuda_partial_sums(gg_backend *be, int k, double *out, gg_status *st);

/* out (n x k, device) = X B for B (p x k) on the device; queued, not
 * waited for. */
int gg_cuda_xmul_device(gg_backend *be, CUdeviceptr B, int k, CUdeviceptr out,
                        gg_status *st);

/* The row state's h = (w ? w : 1) x_i' M x_i for M (p x p, host) and
 * weights w on the device (0: none); queued, not waited for. */
int gg_cuda_leverage_device(gg_backend *be, const double *M, CUdeviceptr w, gg_status *st);

/* fn over X's rows in order, chunk by chunk (all of X at once where it is
 * resident): rows r0 .. r0+rows-1 at Xc, leading dimension ldx, the work
 * queued on stream (a chunk's buffer is reused once the next but one is
 * built: fn's kernels read it on that stream). */
typedef int (*gg_cuda_chunk_fn)(CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                                CUstream stream, void *ctx, gg_status *st);
int gg_cuda_each_x_chunk(gg_backend *be, gg_cuda_chunk_fn fn, void *ctx, gg_status *st);

/* The end of an operation's call on the device: its buffers back to the
 * arena, after the kernels it queued have ended where it failed (rc != 0;
 * what names the work in a wait's error, which is dropped). */
void gg_cuda_call_release(int rc, gg_buflist *bufs, const char *what);

/* out (p x k, host) = X' V for V (n x k) on the device. */
int gg_cuda_xtmul_device(gg_backend *be, CUdeviceptr V, int k, double *out, gg_status *st);

/* The backend's row-wise operations (outer: NULL) and its opening: the
 * state for device `ordinal`, nothing loaded (cuda_open.c completes it). */
extern const gg_backend_ops gg_cuda_row_ops;
int gg_cuda_backend_open(gg_backend *be, int ordinal, gg_status *st);

/* cuda_outer.c: gam()'s outer iteration's rows on the device */
extern const gg_outer_ops gg_cuda_outer_ops;

/* cuda_ls.c: a location-scale family's ll() on the device (backend.h:
 * ops->ls_ll) */
int gg_cuda_ls_ll(gg_backend *be, const struct gg_ls_model *m, int deriv, const double *d1b,
                  int M, const double *d2b, const double *Hm, double *l, double *lb,
                  double *lbb, double *d1H, double *trd2H, gg_status *st);

/* cuda_cox.c: cox.ph()'s log partial likelihood on the device (backend.h:
 * ops->cox_ll) */
int gg_cuda_cox_ll(gg_backend *be, const struct gg_cox_call *c, struct gg_cox_out *o,
                   gg_status *st);

#endif
