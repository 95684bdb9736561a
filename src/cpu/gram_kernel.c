/* gram_kernel.c -- gamgpu's own weighted Gram product on the CPU, A =
 * X'WX, b = X'Wz, z'Wz, for weights of any sign, over the thread budget:
 * what the CPU engine's time is mostly spent on, and where R's reference
 * BLAS (one thread, no blocking) runs at a fraction of the machine
 * (issue 40).  gram_cpu.c picks it or the BLAS, whichever is faster here.
 *
 * The rows are split into GG_GK_JOBS fixed ranges (the result does not
 * depend on the number of threads); each job copies blocks of its rows
 * into row-major order and adds eight rows at a time to its upper
 * triangle, A[j, k] += sum_r w_r x_rj x_rk for k >= j, as AXPYs along k
 * (contiguous, vectorisable without reassociating a sum); the jobs'
 * triangles are then added in job order. */
#include "gram_kernel.h"
#include "interrupt.h"
#include "threads.h"
#include "vec2.h"

#include <stdlib.h>
#include <string.h>

#define GG_GK_JOBS 16
#define GG_GK_BLOCK 64          /* rows copied to row-major at a time */
#define GG_GK_POLL 4096         /* rows between polls for an interrupt */

typedef struct gk_job {
    const double *X, *w, *z;
    size_t ldx, r0, r1;
    int p;
    double *A, *b, zwz;         /* the job's upper triangle (row-major), b */
    double *buf;                /* GG_GK_BLOCK x p, row-major */
    int stopped;
} gk_job;

/* (gram_kernel.h) */
void gg_gram_rows8(int p, const double *restrict x, size_t ldx, const double *restrict w,
                   double *restrict A, size_t lda)
{
    const size_t P = ldx;
    const double *restrict x0 = x, *restrict x1 = x + P, *restrict x2 = x + 2 * P,
                           *restrict x3 = x + 3 * P, *restrict x4 = x + 4 * P,
                           *restrict x5 = x + 5 * P, *restrict x6 = x + 6 * P,
                           *restrict x7 = x + 7 * P;
    for (int j = 0; j < p; j++) {
        const double a0 = w[0] * x0[j], a1 = w[1] * x1[j], a2 = w[2] * x2[j],
                     a3 = w[3] * x3[j], a4 = w[4] * x4[j], a5 = w[5] * x5[j],
                     a6 = w[6] * x6[j], a7 = w[7] * x7[j];
        double *restrict Aj = A + (size_t) j * lda;
        int k = j;
#ifdef GG_VEC2
        const gg_v2d v0 = {a0, a0}, v1 = {a1, a1}, v2 = {a2, a2}, v3 = {a3, a3},
                     v4 = {a4, a4}, v5 = {a5, a5}, v6 = {a6, a6}, v7 = {a7, a7};
        for (; k + 2 <= p; k += 2)
            gg_st2(Aj + k, gg_ld2(Aj + k) + ((v0 * gg_ld2(x0 + k) + v1 * gg_ld2(x1 + k) +
                                        v2 * gg_ld2(x2 + k) + v3 * gg_ld2(x3 + k)) +
                                       (v4 * gg_ld2(x4 + k) + v5 * gg_ld2(x5 + k) +
                                        v6 * gg_ld2(x6 + k) + v7 * gg_ld2(x7 + k))));
#endif
        for (; k < p; k++)
            Aj[k] += (a0 * x0[k] + a1 * x1[k] + a2 * x2[k] + a3 * x3[k]) +
                     (a4 * x4[k] + a5 * x5[k] + a6 * x6[k] + a7 * x7[k]);
    }
}

void gg_gram_rows1(int p, const double *restrict x0, double w0, double *restrict A, size_t lda)
{
    for (int j = 0; j < p; j++) {
        const double a0 = w0 * x0[j];
        double *restrict Aj = A + (size_t) j * lda;
        for (int k = j; k < p; k++)
            Aj[k] += a0 * x0[k];
    }
}

static void *gk_run(void *arg)
{
    gk_job *jb = arg;
    const int p = jb->p;
    double s = 0;
    for (size_t r = jb->r0; r < jb->r1; r += GG_GK_BLOCK) {
        /* (a poll every GG_GK_POLL rows, as the BLAS path polls per chunk) */
        if ((r - jb->r0) % GG_GK_POLL == 0 && gg_interrupt_check()) {
            jb->stopped = 1;
            return NULL;
        }
        const int m = (int) (jb->r1 - r < GG_GK_BLOCK ? jb->r1 - r : GG_GK_BLOCK);
        /* the block's rows, row-major */
        for (int j = 0; j < p; j++) {
            const double *xj = jb->X + (size_t) j * jb->ldx + r;
            for (int i = 0; i < m; i++) jb->buf[(size_t) i * p + j] = xj[i];
        }
        const double *w = jb->w != NULL ? jb->w + r : NULL;
        double ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        int i = 0;
        for (; i + 8 <= m; i += 8)
            gg_gram_rows8(p, jb->buf + (size_t) i * p, (size_t) p, w ? w + i : ones, jb->A,
                          (size_t) p);
        for (; i < m; i++) gg_gram_rows1(p, jb->buf + (size_t) i * p, w ? w[i] : 1.0, jb->A,
                                         (size_t) p);
        if (jb->z != NULL)
            for (i = 0; i < m; i++) {
                const double wz = (w ? w[i] : 1.0) * jb->z[r + i];
                const double *x = jb->buf + (size_t) i * p;
                s += wz * jb->z[r + i];
                for (int j = 0; j < p; j++) jb->b[j] += wz * x[j];
            }
    }
    jb->zwz = s;
    return NULL;
}

int gg_gram_kernel(const double *X, size_t ldx, size_t n, int p, const double *w,
                   const double *z, double *A, double *b, double *zwz, gg_status *st)
{
    const size_t pp = (size_t) p * p;
    memset(A, 0, pp * sizeof(double));
    if (z != NULL) {
        memset(b, 0, (size_t) p * sizeof(double));
        *zwz = 0;
    }
    if (n == 0 || p == 0) return 0;
    const int nj = n < (size_t) GG_GK_JOBS * GG_GK_BLOCK ? 1 : GG_GK_JOBS;
    gk_job jobs[GG_GK_JOBS];
    const size_t per_job = pp + (size_t) p + (size_t) GG_GK_BLOCK * p;
    double *mem = calloc((size_t) nj * per_job, sizeof(double));
    if (mem == NULL)
        return gg_fail(st, "gamgpu_host_oom", "gram: out of host memory (%d x %d)", nj, p);
    for (int k = 0; k < nj; k++) {
        double *base = mem + (size_t) k * per_job;
        /* (job ranges on block boundaries) */
        const size_t nb = (n + GG_GK_BLOCK - 1) / GG_GK_BLOCK;
        const size_t b0 = nb * k / nj, b1 = nb * (k + 1) / nj;
        jobs[k] = (gk_job) {.X = X, .w = w, .z = z, .ldx = ldx, .p = p,
                            .r0 = b0 * GG_GK_BLOCK,
                            .r1 = b1 * GG_GK_BLOCK < n ? b1 * GG_GK_BLOCK : n,
                            .A = base, .b = base + pp, .buf = base + pp + p};
    }
    gg_run_jobs(nj, gk_run, jobs, sizeof(gk_job));
    int stopped = 0;
    double s = 0;
    for (int k = 0; k < nj; k++) {
        stopped |= jobs[k].stopped;
        for (size_t e = 0; e < pp; e++) A[e] += jobs[k].A[e];
        if (z != NULL) {
            for (int j = 0; j < p; j++) b[j] += jobs[k].b[j];
            s += jobs[k].zwz;
        }
    }
    free(mem);
    if (stopped) return gg_interrupt_fail(st, "the weighted Gram product");
    /* the row-major upper triangle is the column-major lower one: mirrored */
    for (int j = 0; j < p; j++)
        for (int k = j + 1; k < p; k++) A[j + (size_t) k * p] = A[(size_t) j * p + k];
    if (z != NULL) *zwz = s;
    return 0;
}
