/* cuda_gram.c -- the weighted Gram product X'WX (and X'Wz, z'Wz) on the
 * device.  gg_cuda_gram_run() works on device-resident arrays and is what
 * the engine's device backend calls every IRLS iteration; gg_gpu_gram()
 * wraps it for host arrays (gpu_gram() in R).  Kernel source:
 * inst/kernels/gram.cu.  Compiled only with CUDA. */
#include "cuda_internal.h"
#include "gpu_telemetry.h"

#include <stdlib.h>
#include <string.h>

#define GRAM_TILE 64
#define GRAM_THREADS 256
#define GRAM_MIN_SLAB_ROWS 1024

/* Slabs: enough blocks to fill the device a few times over, each slab at
 * least GRAM_MIN_SLAB_ROWS rows (a multiple of 16, the kernel's row step). */
void gg_cuda_gram_plan_rows(size_t n, int q, long long rows_per_slab, gg_gram_plan *plan)
{
    int nt = (q + GRAM_TILE - 1) / GRAM_TILE;
    plan->n_pairs = nt * (nt + 1) / 2;
    plan->rows_per_slab = rows_per_slab;
    plan->n_slabs = (int) (((long long) n + rows_per_slab - 1) / rows_per_slab);
    if (plan->n_slabs < 1)
        plan->n_slabs = 1;
    plan->partial_elements = (size_t) plan->n_slabs * (size_t) q * (size_t) q;
}

/* Enough slabs to give every multiprocessor about four blocks, none
 * thinner than GRAM_MIN_SLAB_ROWS rows; the slab height, a multiple of 16,
 * then fixes the rest (gg_cuda_gram_plan_rows). */
void gg_cuda_gram_plan(int ordinal, size_t n, int q, gg_gram_plan *plan)
{
    int nt = (q + GRAM_TILE - 1) / GRAM_TILE;
    int sm = gg_cuda_sm_count(ordinal);
    long long n_pairs = (long long) nt * (nt + 1) / 2;
    long long target = 4LL * (sm > 0 ? sm : 80);
    long long slabs = (target + n_pairs - 1) / n_pairs;
    long long max_slabs = ((long long) n + GRAM_MIN_SLAB_ROWS - 1) / GRAM_MIN_SLAB_ROWS;
    if (slabs > max_slabs)
        slabs = max_slabs;
    if (slabs > 65535)
        slabs = 65535;
    if (slabs < 1)
        slabs = 1;
    long long rows = ((long long) n + slabs - 1) / slabs;
    rows = (rows + 15) / 16 * 16;
    if (rows < 16)
        rows = 16;
    gg_cuda_gram_plan_rows(n, q, rows, plan);
}

int gg_cuda_gram_run(int ordinal, const char *label, CUdeviceptr dX, size_t ldx,
                     CUdeviceptr dz, CUdeviceptr dw, size_t n, int p,
                     const gg_gram_plan *plan, CUdeviceptr dP, CUdeviceptr dG,
                     int accumulate, const gg_cuda_ar1 *ar, CUstream stream, gg_status *st)
{
    CUfunction f_partial, f_reduce;
    if (gg_cuda_function(ordinal, "gram", "gram_partial", &f_partial, st) != 0 ||
        gg_cuda_function(ordinal, "gram", "gram_reduce", &f_reduce, st) != 0)
        return -1;
    int q = p + (dz != 0);
    long long n_ll = (long long) n, ld = (long long) ldx, rows = plan->rows_per_slab;
    int n_slabs = plan->n_slabs;
    int ar_on = ar != NULL;
    double ar_ld = ar ? ar->ld : 0.0, ar_sd = ar ? ar->sd : 0.0;
    CUdeviceptr ar_start = ar ? ar->start : 0;
    void *args_partial[] = {&dX, &ld, &dz, &dw, &n_ll, &p, &rows, &dP,
                            &ar_on, &ar_ld, &ar_sd, &ar_start};
    if (gg_cu_check(gg_cu.cuLaunchKernel(f_partial, (unsigned) plan->n_pairs,
                                         (unsigned) n_slabs, 1, GRAM_THREADS, 1, 1, 0, stream,
                                         args_partial, NULL),
                    "gram: launching gram_partial", st))
        return -1;
    gg_tel_launch(label, 1);
    size_t qq = (size_t) q * (size_t) q;
    void *args_reduce[] = {&dP, &n_slabs, &q, &accumulate, &dG};
    unsigned blocks = (unsigned) ((qq + GRAM_THREADS - 1) / GRAM_THREADS);
    if (gg_cu_check(gg_cu.cuLaunchKernel(f_reduce, blocks, 1, 1, GRAM_THREADS, 1, 1, 0, stream,
                                         args_reduce, NULL),
                    "gram: launching gram_reduce", st))
        return -1;
    gg_tel_launch(label, 1);
    return 0;
}

int gg_cuda_gram_fetch(const char *label, CUdeviceptr dG, int p, int with_z, double *A,
                       double *b, double *zwz, gg_status *st)
{
    int q = p + (with_z != 0);
    size_t qq = (size_t) q * (size_t) q;
    double *G = malloc(qq * sizeof(double));
    if (G == NULL)
        return gg_fail(st, "gamgpu_host_oom", "%s: out of host memory for a %d x %d matrix",
                       label, q, q);
    /* Synchronous copy on the default stream: waits for the kernels and
     * reports any fault they raised; the polled wait first hears an
     * interrupt during a long product. */
    if (gg_cuda_wait(NULL, "the Gram product on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(G, dG, qq * sizeof(double)),
                    "gram: running the kernels / copying the result back", st)) {
        free(G);
        return -1;
    }
    gg_tel_d2h(label, (double) (qq * sizeof(double)));
    for (int j = 0; j < p; j++)
        memcpy(A + (size_t) j * p, G + (size_t) j * q, (size_t) p * sizeof(double));
    if (with_z) {
        memcpy(b, G + (size_t) p * q, (size_t) p * sizeof(double));
        *zwz = G[(size_t) p * q + p];
    }
    free(G);
    return 0;
}

int gg_cuda_upload(const char *label, CUdeviceptr dst, const double *src, size_t n,
                   gg_status *st)
{
    if (n == 0)
        return 0;
    if (gg_cu_check(gg_cu.cuMemcpyHtoD(dst, src, n * sizeof(double)),
                    "copying to the device", st))
        return -1;
    gg_tel_h2d(label, (double) (n * sizeof(double)));
    return 0;
}

int gg_gpu_gram(int ordinal, const double *X, size_t n, int p, const double *w,
                const double *z, double *A, double *b, double *zwz, gg_status *st)
{
    static const char *label = "gram";
    const int q = p + (z != NULL);
    gg_arena *arena = gg_gpu_arena(ordinal, st);
    if (arena == NULL || gg_cuda_enter(ordinal, st) != 0)
        return -1;
    gg_tel_dispatch(label);
    gg_gram_plan plan;
    gg_cuda_gram_plan(ordinal, n, q, &plan);

    gg_buflist bufs;
    gg_buflist_init(&bufs, arena);
    int rc = -1;
    CUdeviceptr dX = gg_buflist_alloc(&bufs, n * (size_t) p, label, st);
    CUdeviceptr dz = (dX && z) ? gg_buflist_alloc(&bufs, n, label, st) : 0;
    CUdeviceptr dw = (dX && w) ? gg_buflist_alloc(&bufs, n, label, st) : 0;
    CUdeviceptr dP = dX ? gg_buflist_alloc(&bufs, plan.partial_elements, label, st) : 0;
    CUdeviceptr dG = dP ? gg_buflist_alloc(&bufs, (size_t) q * q, label, st) : 0;
    if (dG == 0 || (z && !dz) || (w && !dw))
        goto done;
    if (gg_cuda_upload(label, dX, X, n * (size_t) p, st) ||
        (z && gg_cuda_upload(label, dz, z, n, st)) ||
        (w && gg_cuda_upload(label, dw, w, n, st)))
        goto done;
    if (gg_cuda_gram_run(ordinal, label, dX, n, dz, dw, n, p, &plan, dP, dG, 0, NULL, NULL,
                         st) ||
        gg_cuda_gram_fetch(label, dG, p, z != NULL, A, b, zwz, st))
        goto done;
    rc = 0;
done:
    gg_buflist_release(&bufs);
    gg_cuda_leave(ordinal);
    return rc;
}
