/* predict_cpu.c -- prediction rows on the CPU: fit = X beta and the row
 * quadratic forms se2[i] = x_i' V x_i behind predict(se.fit = TRUE).
 *
 * It is the CPU path of predict.gam_gpu() (policy "off", and "auto" when
 * the device fails) and the oracle the device routine (cuda_predict.c) is
 * tested against.  fit[i] is computed in the order of the rows_xbeta kernel
 * (inst/kernels/rows.cu, compiled with --fmad=false), so the two are equal:
 *   fit[i] = (((0 + x_i1 b_1) + x_i2 b_2) + ...)
 * se2[i] = sum_j x_ij t_j in j order, t_j = sum_k V[k, j] x_ik in k order,
 * each product rounded before its addition (no contraction here either);
 * the device forms it as a tiled product (gram.cu's gram_leverage), equal
 * to rounding.
 * Rows go in blocks so the column-major X is read with unit stride; the
 * per-row order is unchanged by the blocking and by the row threads. */
#include "predict_cpu.h"
#include "interrupt.h"
#include "threads.h"

#include <stdlib.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define ROW_BLOCK 64

typedef struct predict_job {
    const double *X, *beta, *V;
    size_t        n, r0, r1;
    int           p;
    double       *fit, *se2;
} predict_job;

static void predict_rows(const predict_job *J)
{
    const size_t n = J->n;
    const int p = J->p;
    double f[ROW_BLOCK], s[ROW_BLOCK], t[ROW_BLOCK];
    for (size_t i0 = J->r0; i0 < J->r1; i0 += ROW_BLOCK) {
        if (gg_interrupt_check())
            return;                     /* the caller sees it (gg_cpu_predict) */
        const int m = (int) (J->r1 - i0 < ROW_BLOCK ? J->r1 - i0 : ROW_BLOCK);
        for (int r = 0; r < m; r++)
            f[r] = s[r] = 0.0;
        for (int j = 0; j < p; j++) {
            const double *xj = J->X + (size_t) j * n + i0;
            const double *Vj = J->V + (size_t) j * p;
            const double bj = J->beta[j];
            for (int r = 0; r < m; r++) {
                f[r] += xj[r] * bj;
                t[r] = 0.0;
            }
            for (int k = 0; k < p; k++) {
                const double *xk = J->X + (size_t) k * n + i0;
                const double v = Vj[k];
                for (int r = 0; r < m; r++)
                    t[r] += v * xk[r];
            }
            for (int r = 0; r < m; r++)
                s[r] += xj[r] * t[r];
        }
        for (int r = 0; r < m; r++) {
            J->fit[i0 + r] = f[r];
            J->se2[i0 + r] = s[r];
        }
    }
}

static void *predict_thread(void *arg)
{
    predict_rows(arg);
    return NULL;
}

int gg_cpu_predict(const double *X, size_t n, int p, const double *beta, const double *V,
                   double *fit, double *se2, int threads, gg_status *st)
{
    if (n == 0)
        return 0;
    if (p < 0)
        return gg_fail(st, "gamgpu_bad_input", "predict: %d columns", p);
    if (threads < 1)
        threads = 1;
    /* at least a few blocks of rows per thread */
    size_t max_threads = n / (4 * ROW_BLOCK);
    if ((size_t) threads > max_threads)
        threads = max_threads > 1 ? (int) max_threads : 1;
    predict_job *jobs = malloc((size_t) threads * sizeof *jobs);
    if (jobs == NULL)
        return gg_fail(st, "gamgpu_host_oom", "predict: out of host memory");
    /* contiguous row ranges, whole blocks each except the last */
    size_t blocks = (n + ROW_BLOCK - 1) / ROW_BLOCK;
    for (int t = 0; t < threads; t++) {
        size_t b0 = blocks * (size_t) t / (size_t) threads;
        size_t b1 = blocks * (size_t) (t + 1) / (size_t) threads;
        predict_job *J = &jobs[t];
        J->X = X; J->beta = beta; J->V = V; J->n = n; J->p = p;
        J->fit = fit; J->se2 = se2;
        J->r0 = b0 * ROW_BLOCK;
        J->r1 = b1 * ROW_BLOCK < n ? b1 * ROW_BLOCK : n;
    }
    gg_run_jobs(threads, predict_thread, jobs, sizeof *jobs);
    free(jobs);
    if (gg_interrupt_seen())
        return gg_interrupt_fail(st, "the prediction");
    return 0;
}
