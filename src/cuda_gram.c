/* cuda_gram.c -- the weighted Gram product X'WX (and X'Wz, z'Wz) on the
 * device: the first kernel through the whole runtime (arena, module cache,
 * telemetry), and the building block of the engine's device backend.
 * Kernel source: inst/kernels/gram.cu.  Compiled only with CUDA. */
#include "cuda_internal.h"
#include "gpu_telemetry.h"

#include <stdlib.h>
#include <string.h>

#define GRAM_TILE 64
#define GRAM_THREADS 256
#define GRAM_MIN_SLAB_ROWS 1024

static const char *LABEL = "gram";

/* Slabs: enough blocks to fill the device a few times over, each slab at
 * least GRAM_MIN_SLAB_ROWS rows (a multiple of 16, the kernel's row step). */
static void plan_slabs(size_t n, int q, int sm_count, int *n_pairs, int *n_slabs,
                       long long *rows_per_slab)
{
    int nt = (q + GRAM_TILE - 1) / GRAM_TILE;
    *n_pairs = nt * (nt + 1) / 2;
    long long target = 4LL * (sm_count > 0 ? sm_count : 80);
    long long slabs = (target + *n_pairs - 1) / *n_pairs;
    long long max_slabs = ((long long) n + GRAM_MIN_SLAB_ROWS - 1) / GRAM_MIN_SLAB_ROWS;
    if (slabs > max_slabs)
        slabs = max_slabs;
    if (slabs > 65535)
        slabs = 65535;
    if (slabs < 1)
        slabs = 1;
    long long rows = ((long long) n + slabs - 1) / slabs;
    rows = (rows + 15) / 16 * 16;
    *n_slabs = (int) (((long long) n + rows - 1) / rows);
    if (*n_slabs < 1)
        *n_slabs = 1;
    *rows_per_slab = rows;
}

int gg_gpu_gram(int ordinal, const double *X, size_t n, int p, const double *w,
                const double *z, double *A, double *b, double *zwz, gg_status *st)
{
    const int q = p + (z != NULL);
    gg_arena *arena = gg_gpu_arena(ordinal, st);
    if (arena == NULL || gg_cuda_enter(ordinal, st) != 0)
        return -1;

    gg_buflist bufs;
    gg_buflist_init(&bufs, arena);
    double *G = NULL;
    int rc = -1;
    CUfunction f_partial, f_reduce;
    if (gg_cuda_function(ordinal, "gram", "gram_partial", &f_partial, st) != 0 ||
        gg_cuda_function(ordinal, "gram", "gram_reduce", &f_reduce, st) != 0)
        goto done;
    gg_tel_dispatch(LABEL);

    int n_pairs, n_slabs;
    long long rows_per_slab;
    plan_slabs(n, q, gg_cuda_sm_count(ordinal), &n_pairs, &n_slabs, &rows_per_slab);

    const size_t qq = (size_t) q * (size_t) q;
    CUdeviceptr dX = gg_buflist_alloc(&bufs, n * (size_t) q, LABEL, st);
    CUdeviceptr dW = (dX && w) ? gg_buflist_alloc(&bufs, n, LABEL, st) : 0;
    CUdeviceptr dP = (dX && (dW || !w)) ? gg_buflist_alloc(&bufs, (size_t) n_slabs * qq, LABEL, st) : 0;
    CUdeviceptr dG = dP ? gg_buflist_alloc(&bufs, qq, LABEL, st) : 0;
    if (dG == 0)
        goto done;

    const size_t xbytes = n * (size_t) p * sizeof(double);
    if (gg_cu_check(gg_cu.cuMemcpyHtoD(dX, X, xbytes), "gram: copying X to the device", st))
        goto done;
    gg_tel_h2d(LABEL, (double) xbytes);
    if (z != NULL) {
        if (gg_cu_check(gg_cu.cuMemcpyHtoD(dX + xbytes, z, n * sizeof(double)),
                        "gram: copying z to the device", st))
            goto done;
        gg_tel_h2d(LABEL, (double) (n * sizeof(double)));
    }
    if (w != NULL) {
        if (gg_cu_check(gg_cu.cuMemcpyHtoD(dW, w, n * sizeof(double)),
                        "gram: copying w to the device", st))
            goto done;
        gg_tel_h2d(LABEL, (double) (n * sizeof(double)));
    }

    long long n_ll = (long long) n;
    void *args_partial[] = {&dX, &dW, &n_ll, (void *) &q, &rows_per_slab, &dP};
    if (gg_cu_check(gg_cu.cuLaunchKernel(f_partial, (unsigned) n_pairs, (unsigned) n_slabs, 1,
                                         GRAM_THREADS, 1, 1, 0, NULL, args_partial, NULL),
                    "gram: launching gram_partial", st))
        goto done;
    gg_tel_launch(LABEL, 1);
    void *args_reduce[] = {&dP, &n_slabs, (void *) &q, &dG};
    unsigned reduce_blocks = (unsigned) ((qq + GRAM_THREADS - 1) / GRAM_THREADS);
    if (gg_cu_check(gg_cu.cuLaunchKernel(f_reduce, reduce_blocks, 1, 1, GRAM_THREADS, 1, 1, 0,
                                         NULL, args_reduce, NULL),
                    "gram: launching gram_reduce", st))
        goto done;
    gg_tel_launch(LABEL, 1);

    G = malloc(qq * sizeof(double));
    if (G == NULL) {
        gg_fail(st, "gamgpu_host_oom", "gram: out of host memory for the %d x %d result", q, q);
        goto done;
    }
    /* Synchronous copy on the default stream: waits for both kernels and
     * reports any fault they raised. */
    if (gg_cu_check(gg_cu.cuMemcpyDtoH(G, dG, qq * sizeof(double)),
                    "gram: running the kernels / copying the result back", st))
        goto done;
    gg_tel_d2h(LABEL, (double) (qq * sizeof(double)));

    for (int j = 0; j < p; j++)
        memcpy(A + (size_t) j * p, G + (size_t) j * q, (size_t) p * sizeof(double));
    if (z != NULL) {
        memcpy(b, G + (size_t) p * q, (size_t) p * sizeof(double));
        *zwz = G[(size_t) p * q + p];
    }
    rc = 0;
done:
    free(G);
    gg_buflist_release(&bufs);
    gg_cuda_leave(ordinal);
    return rc;
}
