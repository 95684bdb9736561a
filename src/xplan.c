/* xplan.c -- building rows of the model matrix on the host from its
 * recipe (xplan.h), over POSIX threads: the CPU backend's X, and the CPU
 * twin of the device build in basis.cu.  Pure C. */
#include "xplan.h"
#include "threads.h"

#include <stdlib.h>
#include <string.h>

typedef struct fill_job {
    const gg_xplan *plan;
    size_t          r0, rows;       /* this thread's rows of X */
    double         *out;            /* row r0 of the caller's block */
    size_t          ldo;
    int             failed;
} fill_job;

static int fill_block(const gg_xblock *b, size_t n, size_t r0, size_t rows, double *out,
                      size_t ldo)
{
    double *dst = out + (size_t) b->col0 * ldo;
    switch (b->kind) {
    case GG_XB_DENSE:
        for (int c = 0; c < b->ncol; c++)
            memcpy(dst + (size_t) c * ldo, b->D + (size_t) c * n + r0, rows * sizeof(double));
        return 0;
    case GG_XB_CR: {
        double *work = malloc(2 * (size_t) b->map.k * sizeof(double));
        if (work == NULL)
            return -1;
        gg_cr_basis(b->x, r0, rows, b->xk, b->F, &b->map, dst, ldo, work);
        free(work);
        return 0;
    }
    case GG_XB_TE2: {
        double *work = malloc((2 * (size_t) b->map.k + (size_t) (b->k1 + b->k2)) * sizeof(double));
        if (work == NULL)
            return -1;
        gg_te_cr2_basis(b->x, b->x + n, r0, rows, b->xk, b->k1, b->F, b->xk2, b->k2, b->F2,
                        &b->map, dst, ldo, work);
        free(work);
        return 0;
    }
    case GG_XB_TPRS:
        return gg_tprs_basis(b->x, n, b->d, b->shift, b->m, b->M, b->Xu, b->nXu, b->UZ,
                             &b->map, r0, rows, dst, ldo, 1);
    }
    return -1;
}

static void *fill_rows(void *arg)
{
    fill_job *J = arg;
    for (int k = 0; k < J->plan->nblocks && !J->failed; k++)
        if (fill_block(&J->plan->blocks[k], J->plan->n, J->r0, J->rows, J->out, J->ldo))
            J->failed = 1;
    return NULL;
}

int gg_xplan_fill(const gg_xplan *plan, size_t r0, size_t rows, double *out, size_t ldo,
                  gg_status *st)
{
    int threads = plan->threads < 1 ? 1 : plan->threads;
    /* a thread gets at least a few thousand rows: below that, starting it
     * costs more than it saves */
    if ((size_t) threads > rows / 4096 + 1)
        threads = (int) (rows / 4096 + 1);
    fill_job *jobs = calloc((size_t) threads, sizeof *jobs);
    int failed = jobs == NULL;
    if (!failed) {
        for (int t = 0; t < threads; t++) {
            const size_t a = rows * (size_t) t / (size_t) threads;
            const size_t e = rows * (size_t) (t + 1) / (size_t) threads;
            jobs[t] = (fill_job) {plan, r0 + a, e - a, out + a, ldo, 0};
        }
        gg_run_jobs(threads, fill_rows, jobs, sizeof *jobs);
        for (int t = 0; t < threads; t++)
            failed |= jobs[t].failed;
    }
    free(jobs);
    if (failed)
        return gg_fail(st, "gamgpu_host_oom",
                       "out of host memory building rows of the model matrix");
    return 0;
}
