/* gamlss_blocks.c -- the passes over the rows behind the location-scale
 * families' products (family_gamlss.c), over the thread budget:
 *
 *  - block Gram products X_a' diag(w) X_b, several in one pass (the
 *    Hessian's blocks, and each smoothing parameter's derivative of them);
 *  - the rows' quadratic forms q_ab = x_a' Hm_ab x_b in the scaled inverse
 *    Hessian Hm, from which the traces tr(Hm d2H) are sums of q_ab times
 *    the rows' second derivatives of l_ab -- O(n p^2) once, in place of
 *    mgcv's n K x p matrix Xe = X Hm and a product with it per pair of
 *    smoothing parameters;
 *  - those trace sums.
 *
 * The rows are split into GG_LS_JOBS fixed ranges, each job adds its rows
 * into accumulators of its own (blocks of rows copied to row-major order,
 * each block's sums in 4 x 4 tiles held in registers), and the jobs' sums
 * are added in job order: the numbers do not depend on the threads.  They are not
 * mgcv's BLAS calls' to the bit (other orders of the same sums). */
#include "gamlss_blocks.h"
#include "interrupt.h"
#include "matprod_cpu.h"
#include "threads.h"

#include <stdlib.h>
#include <string.h>

#define GG_LS_JOBS 16
#define GG_LS_BLOCK 64          /* rows copied to row-major at a time */
#define GG_LS_POLL 4096         /* rows between polls for an interrupt */

/* the fixed row range [*r0, *r1) of job k of nj, on block boundaries */
static void job_rows(size_t n, int k, int nj, size_t *r0, size_t *r1)
{
    const size_t nb = (n + GG_LS_BLOCK - 1) / GG_LS_BLOCK;
    const size_t b0 = nb * k / nj, b1 = nb * (k + 1) / nj;
    *r0 = b0 * GG_LS_BLOCK;
    *r1 = b1 * GG_LS_BLOCK < n ? b1 * GG_LS_BLOCK : n;
}

static int jobs_for(size_t n)
{
    return n < (size_t) GG_LS_JOBS * GG_LS_BLOCK ? 1 : GG_LS_JOBS;
}

typedef struct bp_job {
    const gg_ls_rows *r;
    int nprod;
    const gg_ls_prod *prods;
    const size_t *off;          /* product t's accumulator at acc + off[t] */
    const size_t *boff;         /* predictor k's rows at buf + boff[k] */
    size_t r0, r1;
    double *acc, *buf, *wa;     /* wa: GG_LS_BLOCK x (the widest predictor) */
    int stopped;
} bp_job;

/* copy rows [row, row + m) of each predictor's columns into buf, row-major */
static void pack_rows(const gg_ls_rows *r, size_t row, int m, double *buf, const size_t *boff)
{
    for (int k = 0; k < r->K; k++) {
        const int nc = r->ncol[k];
        double *bk = buf + boff[k];
        for (int j = 0; j < nc; j++) {
            const double *x = r->X + (size_t) r->cols[k][j] * r->n + row;
            for (int i = 0; i < m; i++) bk[(size_t) i * nc + j] = x[i];
        }
    }
}

static void *bp_run(void *arg)
{
    bp_job *jb = arg;
    const gg_ls_rows *r = jb->r;
    for (size_t row = jb->r0; row < jb->r1; row += GG_LS_BLOCK) {
        if ((row - jb->r0) % GG_LS_POLL == 0 && gg_interrupt_check()) {
            jb->stopped = 1;
            return NULL;
        }
        const int m = (int) (jb->r1 - row < GG_LS_BLOCK ? jb->r1 - row : GG_LS_BLOCK);
        pack_rows(r, row, m, jb->buf, jb->boff);
        for (int t = 0; t < jb->nprod; t++) {
            const gg_ls_prod *pr = jb->prods + t;
            const int na = r->ncol[pr->a], nb = r->ncol[pr->b];
            const double *xa = jb->buf + jb->boff[pr->a], *xb = jb->buf + jb->boff[pr->b];
            const double *w = pr->w + row;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < na; j++)
                    jb->wa[(size_t) i * na + j] = w[i] * xa[(size_t) i * na + j];
            gg_tiles_accumulate(m, na, jb->wa, nb, xb, jb->acc + jb->off[t], pr->a == pr->b);
        }
    }
    return NULL;
}

int gg_ls_block_products(const gg_ls_rows *r, int nprod, const gg_ls_prod *prods,
                         gg_status *st)
{
    const size_t n = r->n;
    const int K = r->K, nj = jobs_for(n);
    size_t *off = malloc(((size_t) nprod + 1) * sizeof(size_t));
    size_t *boff = malloc(((size_t) K + 1) * sizeof(size_t));
    if (off == NULL || boff == NULL) {
        free(off); free(boff);
        return gg_fail(st, "gamgpu_host_oom", "out of memory for the block products");
    }
    off[0] = 0;
    for (int t = 0; t < nprod; t++)
        off[t + 1] = off[t] + (size_t) r->ncol[prods[t].a] * r->ncol[prods[t].b];
    boff[0] = 0;
    int maxc = 1;
    for (int k = 0; k < K; k++) {
        boff[k + 1] = boff[k] + (size_t) GG_LS_BLOCK * r->ncol[k];
        if (r->ncol[k] > maxc) maxc = r->ncol[k];
    }
    const size_t per_job = off[nprod] + boff[K] + (size_t) GG_LS_BLOCK * maxc;
    double *mem = calloc((size_t) nj * per_job + 1, sizeof(double));
    bp_job jobs[GG_LS_JOBS];
    if (mem == NULL) {
        free(off); free(boff);
        return gg_fail(st, "gamgpu_host_oom",
                       "out of memory for the block products (%d jobs of %zu doubles)", nj,
                       per_job);
    }
    for (int k = 0; k < nj; k++) {
        jobs[k] = (bp_job) {.r = r, .nprod = nprod, .prods = prods, .off = off, .boff = boff,
                            .acc = mem + (size_t) k * per_job,
                            .buf = mem + (size_t) k * per_job + off[nprod],
                            .wa = mem + (size_t) k * per_job + off[nprod] + boff[K]};
        job_rows(n, k, nj, &jobs[k].r0, &jobs[k].r1);
    }
    gg_run_jobs(nj, bp_run, jobs, sizeof(bp_job));
    int stopped = 0;
    for (int k = 0; k < nj; k++) stopped |= jobs[k].stopped;
    if (!stopped)
        for (int t = 0; t < nprod; t++) {
            const int na = r->ncol[prods[t].a], nb = r->ncol[prods[t].b];
            const int sym = prods[t].a == prods[t].b;
            double *A = prods[t].A;
            for (int j = 0; j < na; j++)
                for (int l = sym ? j : 0; l < nb; l++) {
                    double s = 0;
                    for (int k = 0; k < nj; k++) s += jobs[k].acc[off[t] + (size_t) j * nb + l];
                    A[j + (size_t) l * na] = s;
                    if (sym) A[l + (size_t) j * na] = s;
                }
        }
    free(mem); free(off); free(boff);
    if (stopped) return gg_interrupt_fail(st, "the location-scale family's block products");
    return 0;
}

typedef struct qr_job {
    const gg_ls_rows *r;
    const int *own;
    const double *Hm;
    double *q, *t;              /* t: 4 x p */
    size_t r0, r1;
    int stopped;
} qr_job;

static void *qr_run(void *arg)
{
    qr_job *jb = arg;
    const gg_ls_rows *r = jb->r;
    const size_t n = r->n;
    const int p = r->p, K = r->K;
    for (size_t i = jb->r0; i < jb->r1; i += 4) {
        if ((i - jb->r0) % GG_LS_POLL == 0 && gg_interrupt_check()) {
            jb->stopped = 1;
            return NULL;
        }
        const int m = (int) (jb->r1 - i < 4 ? jb->r1 - i : 4);
        for (int b = 0; b < K; b++) {
            /* t_s = Hm[, cols_b] x_{i+s, cols_b} */
            memset(jb->t, 0, 4 * (size_t) p * sizeof(double));
            for (int j = 0; j < r->ncol[b]; j++) {
                const int c2 = r->cols[b][j];
                const double *x = r->X + (size_t) c2 * n + i, *restrict h = jb->Hm + (size_t) c2 * p;
                for (int s = 0; s < m; s++) {
                    const double xv = x[s];
                    double *restrict ts = jb->t + (size_t) s * p;
                    for (int c = 0; c < p; c++) ts[c] += xv * h[c];
                }
            }
            for (int a = 0; a < K; a++)
                for (int s = 0; s < m; s++) {
                    const double *ts = jb->t + (size_t) s * p;
                    double v = 0;
                    for (int j = 0; j < r->ncol[a]; j++) {
                        const int c = r->cols[a][j];
                        if (jb->own[c] == a) v += ts[c] * r->X[(size_t) c * n + i + s];
                    }
                    jb->q[(size_t) (a + K * b) * n + i + s] = v;
                }
        }
    }
    return NULL;
}

int gg_ls_quad_rows(const gg_ls_rows *r, const int *own, const double *Hm, double *q,
                    gg_status *st)
{
    const int nj = jobs_for(r->n);
    double *t = malloc((size_t) nj * 4 * (size_t) (r->p > 0 ? r->p : 1) * sizeof(double));
    if (t == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory for the rows' quadratic forms");
    qr_job jobs[GG_LS_JOBS];
    for (int k = 0; k < nj; k++) {
        jobs[k] = (qr_job) {.r = r, .own = own, .Hm = Hm, .q = q,
                            .t = t + (size_t) k * 4 * r->p};
        job_rows(r->n, k, nj, &jobs[k].r0, &jobs[k].r1);
    }
    gg_run_jobs(nj, qr_run, jobs, sizeof(qr_job));
    free(t);
    for (int k = 0; k < nj; k++)
        if (jobs[k].stopped) return gg_interrupt_fail(st, "the rows' quadratic forms");
    return 0;
}
