/* matprod_cpu.c -- dense products over the rows on the CPU by gamgpu's own
 * kernels (matprod_cpu.h), over the thread budget: the general families'
 * row passes call them where R's BLAS is the slower here
 * (gg_cpu_gram_prefers_own()).
 *
 * gg_matprod() splits the rows of C among jobs, each entry one sum in
 * order; gg_crossprod_rows() splits the rows into GG_MP_JOBS fixed ranges
 * whose sums (blocks of rows copied to row-major order, 4 x 4 tiles held
 * in registers: gg_tiles_accumulate()) are added in job order.  Neither
 * result depends on the threads. */
#include "matprod_cpu.h"
#include "interrupt.h"
#include "threads.h"
#include "vec2.h"

#include <stdlib.h>
#include <string.h>

#define GG_MP_JOBS 16
#define GG_MP_BLOCK 64          /* rows copied to row-major at a time */
#define GG_MP_POLL 4096         /* rows between polls for an interrupt */

void gg_tiles_accumulate(int m, int na, const double *restrict wa, int nb,
                         const double *restrict xb, double *restrict A, int sym)
{
    for (int j0 = 0; j0 < na; j0 += 4) {
        const int jn = na - j0 < 4 ? na - j0 : 4;
        for (int k0 = sym ? j0 : 0; k0 < nb; k0 += 4) {
            const int kn = nb - k0 < 4 ? nb - k0 : 4;
            if (jn == 4 && kn == 4) {
#ifdef GG_VEC2
                gg_v2d c00 = {0, 0}, c01 = {0, 0}, c10 = {0, 0}, c11 = {0, 0},
                       c20 = {0, 0}, c21 = {0, 0}, c30 = {0, 0}, c31 = {0, 0};
                for (int r = 0; r < m; r++) {
                    const double *xr = xb + (size_t) r * nb + k0, *ar = wa + (size_t) r * na + j0;
                    const gg_v2d b0 = gg_ld2(xr), b1 = gg_ld2(xr + 2);
                    const gg_v2d a0 = {ar[0], ar[0]}, a1 = {ar[1], ar[1]}, a2 = {ar[2], ar[2]},
                                 a3 = {ar[3], ar[3]};
                    c00 += a0 * b0; c01 += a0 * b1;
                    c10 += a1 * b0; c11 += a1 * b1;
                    c20 += a2 * b0; c21 += a2 * b1;
                    c30 += a3 * b0; c31 += a3 * b1;
                }
                double *A0 = A + (size_t) j0 * nb + k0;
                gg_st2(A0, gg_ld2(A0) + c00); gg_st2(A0 + 2, gg_ld2(A0 + 2) + c01);
                A0 += nb;
                gg_st2(A0, gg_ld2(A0) + c10); gg_st2(A0 + 2, gg_ld2(A0 + 2) + c11);
                A0 += nb;
                gg_st2(A0, gg_ld2(A0) + c20); gg_st2(A0 + 2, gg_ld2(A0 + 2) + c21);
                A0 += nb;
                gg_st2(A0, gg_ld2(A0) + c30); gg_st2(A0 + 2, gg_ld2(A0 + 2) + c31);
                continue;
#endif
            }
            double c[4][4] = {{0}};
            for (int r = 0; r < m; r++) {
                const double *xr = xb + (size_t) r * nb + k0, *ar = wa + (size_t) r * na + j0;
                for (int jj = 0; jj < jn; jj++)
                    for (int kk = 0; kk < kn; kk++) c[jj][kk] += ar[jj] * xr[kk];
            }
            for (int jj = 0; jj < jn; jj++)
                for (int kk = 0; kk < kn; kk++) A[(size_t) (j0 + jj) * nb + k0 + kk] += c[jj][kk];
        }
    }
}

typedef struct mp_job {
    const double *A, *B;
    double *C;
    size_t lda, ldc, r0, r1;
    int p, q, stopped;
} mp_job;

/* rows [r0, r1) of C = A B, four rows by four columns at a time */
static void *mp_run(void *arg)
{
    mp_job *jb = arg;
    const int p = jb->p, q = jb->q;
    const size_t lda = jb->lda, ldc = jb->ldc;
    for (size_t i0 = jb->r0; i0 < jb->r1; i0 += 4) {
        if ((i0 - jb->r0) % GG_MP_POLL == 0 && gg_interrupt_check()) {
            jb->stopped = 1;
            return NULL;
        }
        const int in = jb->r1 - i0 < 4 ? (int) (jb->r1 - i0) : 4;
        for (int k0 = 0; k0 < q; k0 += 4) {
            const int kn = q - k0 < 4 ? q - k0 : 4;
            const double *b0 = jb->B + (size_t) k0 * p;
#ifdef GG_VEC2
            if (in == 4 && kn == 4) {
                gg_v2d c00 = {0, 0}, c01 = {0, 0}, c10 = {0, 0}, c11 = {0, 0},
                       c20 = {0, 0}, c21 = {0, 0}, c30 = {0, 0}, c31 = {0, 0};
                for (int j = 0; j < p; j++) {
                    const double *a = jb->A + i0 + (size_t) j * lda;
                    const gg_v2d a0 = gg_ld2(a), a1 = gg_ld2(a + 2);
                    const double v0 = b0[j], v1 = b0[j + p], v2 = b0[j + 2 * (size_t) p],
                                 v3 = b0[j + 3 * (size_t) p];
                    const gg_v2d w0 = {v0, v0}, w1 = {v1, v1}, w2 = {v2, v2}, w3 = {v3, v3};
                    c00 += a0 * w0; c01 += a1 * w0;
                    c10 += a0 * w1; c11 += a1 * w1;
                    c20 += a0 * w2; c21 += a1 * w2;
                    c30 += a0 * w3; c31 += a1 * w3;
                }
                double *c = jb->C + i0 + (size_t) k0 * ldc;
                gg_st2(c, c00); gg_st2(c + 2, c01);
                c += ldc;
                gg_st2(c, c10); gg_st2(c + 2, c11);
                c += ldc;
                gg_st2(c, c20); gg_st2(c + 2, c21);
                c += ldc;
                gg_st2(c, c30); gg_st2(c + 2, c31);
                continue;
            }
#endif
            double acc[4][4] = {{0}};
            for (int j = 0; j < p; j++) {
                const double *a = jb->A + i0 + (size_t) j * lda;
                for (int kk = 0; kk < kn; kk++) {
                    const double v = b0[j + (size_t) kk * p];
                    for (int ii = 0; ii < in; ii++) acc[kk][ii] += a[ii] * v;
                }
            }
            for (int kk = 0; kk < kn; kk++)
                for (int ii = 0; ii < in; ii++)
                    jb->C[i0 + ii + (size_t) (k0 + kk) * ldc] = acc[kk][ii];
        }
    }
    return NULL;
}

int gg_matprod(const double *A, size_t lda, size_t m, int p, const double *B, int q,
               double *C, size_t ldc, gg_status *st)
{
    if (m == 0 || q == 0) return 0;
    const int nj = m < (size_t) GG_MP_JOBS * GG_MP_BLOCK ? 1 : GG_MP_JOBS;
    mp_job jobs[GG_MP_JOBS];
    for (int k = 0; k < nj; k++) {
        /* (ranges of whole blocks of four rows) */
        const size_t nb = (m + 3) / 4, b0 = nb * k / nj, b1 = nb * (k + 1) / nj;
        jobs[k] = (mp_job) {.A = A, .B = B, .C = C, .lda = lda, .ldc = ldc, .r0 = 4 * b0,
                            .r1 = 4 * b1 < m ? 4 * b1 : m, .p = p, .q = q};
    }
    gg_run_jobs(nj, mp_run, jobs, sizeof(mp_job));
    for (int k = 0; k < nj; k++)
        if (jobs[k].stopped) return gg_interrupt_fail(st, "a matrix product over the rows");
    return 0;
}

typedef struct cp_job {
    const double *A, *B, *w;
    size_t m, r0, r1;
    int p, q, stopped;
    double *acc, *wa, *xb;      /* p x q row-major; GG_MP_BLOCK x p; x q */
} cp_job;

static void *cp_run(void *arg)
{
    cp_job *jb = arg;
    const int p = jb->p, q = jb->q;
    for (size_t row = jb->r0; row < jb->r1; row += GG_MP_BLOCK) {
        if ((row - jb->r0) % GG_MP_POLL == 0 && gg_interrupt_check()) {
            jb->stopped = 1;
            return NULL;
        }
        const int m = (int) (jb->r1 - row < GG_MP_BLOCK ? jb->r1 - row : GG_MP_BLOCK);
        for (int j = 0; j < p; j++) {
            const double *a = jb->A + (size_t) j * jb->m + row;
            for (int i = 0; i < m; i++)
                jb->wa[(size_t) i * p + j] = jb->w != NULL ? jb->w[row + i] * a[i] : a[i];
        }
        for (int k = 0; k < q; k++) {
            const double *b = jb->B + (size_t) k * jb->m + row;
            for (int i = 0; i < m; i++) jb->xb[(size_t) i * q + k] = b[i];
        }
        gg_tiles_accumulate(m, p, jb->wa, q, jb->xb, jb->acc, 0);
    }
    return NULL;
}

int gg_crossprod_rows(const double *A, const double *B, size_t m, int p, int q,
                      const double *w, double *C, gg_status *st)
{
    const size_t pq = (size_t) p * q;
    memset(C, 0, pq * sizeof(double));
    if (m == 0 || pq == 0) return 0;
    const int nj = m < (size_t) GG_MP_JOBS * GG_MP_BLOCK ? 1 : GG_MP_JOBS;
    const size_t per_job = pq + (size_t) GG_MP_BLOCK * (p + q);
    double *mem = calloc((size_t) nj * per_job, sizeof(double));
    if (mem == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory for a cross product (%d x %d)", p, q);
    cp_job jobs[GG_MP_JOBS];
    for (int k = 0; k < nj; k++) {
        const size_t nb = (m + GG_MP_BLOCK - 1) / GG_MP_BLOCK;
        const size_t b0 = nb * k / nj, b1 = nb * (k + 1) / nj;
        double *base = mem + (size_t) k * per_job;
        jobs[k] = (cp_job) {.A = A, .B = B, .w = w, .m = m, .r0 = b0 * GG_MP_BLOCK,
                            .r1 = b1 * GG_MP_BLOCK < m ? b1 * GG_MP_BLOCK : m, .p = p, .q = q,
                            .acc = base, .wa = base + pq,
                            .xb = base + pq + (size_t) GG_MP_BLOCK * p};
    }
    gg_run_jobs(nj, cp_run, jobs, sizeof(cp_job));
    int stopped = 0;
    for (int k = 0; k < nj; k++) stopped |= jobs[k].stopped;
    if (!stopped)
        for (int j = 0; j < p; j++)
            for (int l = 0; l < q; l++) {
                double s = 0;
                for (int k = 0; k < nj; k++) s += jobs[k].acc[(size_t) j * q + l];
                C[j + (size_t) l * p] = s;
            }
    free(mem);
    if (stopped) return gg_interrupt_fail(st, "a cross product over the rows");
    return 0;
}
