/* family_cox_hazard.c -- mgcv's cox.ph() hazard(), which its postproc runs
 * once on the fitted model (the baseline hazard, its variance and the
 * score and Schoenfeld-type residual matrices kept in fit$family$data):
 * mgcv's C coxpp() and the R around it, in one pass per column of X over
 * threads.  In R, hazard() spends its time in apply(, 2, cumsum) over the
 * n x p matrices (33 s at 10^6 rows and 36 columns on two cores).  The
 * arithmetic is mgcv's, in its order: coxpp()'s sums in double, R's
 * cumsum() in long double rounded per row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family_cox.h"
#include "interrupt.h"
#include "threads.h"

typedef struct hazard_job {
    const gg_cox_rows *r;
    const double *wt, *gamma, *xs, *cg, *drift;
    const int *order;
    double *tmp;
    gg_cox_hazard_out *o;
    int c0, c1;
} hazard_job;

/* coxpp()'s b vectors (risk-set sums of gamma X by time, latest first)
 * and a vectors (their forward accumulation), columns c0..c1-1 */
static void a_columns(const hazard_job *jb)
{
    const gg_cox_rows *r = jb->r;
    const size_t n = r->n;
    const int p = r->p, nt = r->nt;
    double *a = jb->o->a;
    for (int c = jb->c0; c < jb->c1; c++) {
        const double *x = r->X + (size_t) c * n;
        double b = 0.0;
        size_t i = 0;
        for (int j = 0; j < nt; j++) {
            while (i < n && r->grp[i] == j + 1) { b += x[i] * jb->gamma[i]; i++; }
            a[(size_t) j * p + c] = b;
        }
        a[(size_t) (nt - 1) * p + c] *= jb->xs[nt - 1];
        for (int j = nt - 2; j >= 0; j--)
            a[(size_t) j * p + c] = a[(size_t) (j + 1) * p + c] + a[(size_t) j * p + c] * jb->xs[j];
    }
}

/* hazard()'s Rs = (X - cumsum(gamma X) / cumsum(gamma)) wt and Rc = its
 * reverse cumsum less the drift, columns c0..c1-1; rows written at
 * order[i] - 1 when order is given (postproc's y.order; through the
 * job's scratch n-vector tmp) */
static void residual_columns(const hazard_job *jb)
{
    const gg_cox_rows *r = jb->r;
    const size_t n = r->n;
    for (int c = jb->c0; c < jb->c1; c++) {
        const double *x = r->X + (size_t) c * n;
        double *Rs = jb->o->Rs + (size_t) c * n, *Rc = jb->o->Rc + (size_t) c * n;
        long double s = 0.0L;
        /* (Rc's rows in the rows' own order first, in Rs's place) */
        for (size_t i = 0; i < n; i++) {
            s += (long double) (jb->gamma[i] * x[i]);
            Rc[i] = (x[i] - (double) s / jb->cg[i]) * jb->wt[i];
        }
        s = 0.0L;
        for (size_t i = n; i-- > 0;) {
            s += (long double) Rc[i];
            const double rs = Rc[i];
            Rc[i] = (double) s;
            Rs[i] = rs;
        }
        const double R1 = Rc[0];
        for (size_t i = 0; i < n; i++) Rc[i] -= jb->drift[i] * R1;
        if (jb->tmp != NULL) {
            double *tmp = jb->tmp;
            memcpy(tmp, Rs, n * sizeof(double));
            for (size_t i = 0; i < n; i++) Rs[jb->order[i] - 1] = tmp[i];
            memcpy(tmp, Rc, n * sizeof(double));
            for (size_t i = 0; i < n; i++) Rc[jb->order[i] - 1] = tmp[i];
        }
    }
}

static void *hazard_job_run(void *arg)
{
    hazard_job *jb = arg;
    if (gg_interrupt_check()) return NULL;
    a_columns(jb);
    if (jb->o->Rs != NULL) residual_columns(jb);
    return NULL;
}

int gg_cox_hazard(const gg_cox_rows *r, const double *wt, const int *order, int nthreads,
                  gg_cox_hazard_out *o, gg_status *st)
{
    const size_t n = r->n;
    const int p = r->p, nt = r->nt;
    if (nt < 1) return gg_fail(st, "gamgpu_bad_input", "cox.ph()'s hazard needs at least one time");
    if (gg_cox_check_groups(r->grp, n, nt, NULL, st) != 0) return -1;
    double *gp = calloc((size_t) nt, sizeof(double)), *gnp = calloc((size_t) nt, sizeof(double));
    double *dc = calloc((size_t) nt, sizeof(double)), *xs = malloc((size_t) nt * sizeof(double));
    double *gamma = malloc((n ? n : 1) * sizeof(double));
    double *cg = NULL, *drift = NULL;
    int rc = 0;
    if (gp == NULL || gnp == NULL || dc == NULL || xs == NULL || gamma == NULL) goto oom;
    /* coxpp(): gamma 1 without columns */
    for (size_t i = 0; i < n; i++) gamma[i] = p > 0 ? exp(r->eta[i]) : 1.0;
    {
        int *cnt = calloc((size_t) nt, sizeof(int));
        if (cnt == NULL) goto oom;
        /* (coxpp()'s running sums, carried on from the later times) */
        double sg = 0.0, sn = 0.0;
        size_t i = 0;
        for (int j = 0; j < nt; j++) {
            for (; i < n && r->grp[i] == j + 1; i++) {
                sg += gamma[i];
                sn += 1.0;
                cnt[j] += r->event[i];
            }
            gp[j] = sg;
            gnp[j] = sn;
        }
        for (int j = 0; j < nt; j++) dc[j] = cnt[j];
        free(cnt);
    }
    {
        int j = nt - 1;
        double x = dc[j] / gp[j];
        o->h[j] = x;
        o->km[j] = dc[j] / gnp[j];
        x /= gp[j];
        o->q[j] = x;
        xs[j] = x;
        for (j--; j >= 0; j--) {
            double y = dc[j];
            x = y / gp[j];
            y /= gnp[j];
            o->h[j] = o->h[j + 1] + x;
            o->km[j] = o->km[j + 1] + y;
            x /= gp[j];
            o->q[j] = o->q[j + 1] + x;
            xs[j] = x;
        }
    }
    if (p > 0 && o->Rs != NULL) {
        cg = malloc((n ? n : 1) * sizeof(double));
        drift = malloc((n ? n : 1) * sizeof(double));
        if (cg == NULL || drift == NULL) goto oom;
        long double s = 0.0L;
        for (size_t i = 0; i < n; i++) { s += (long double) gamma[i]; cg[i] = (double) s; }
        /* approx(which(wt != 0), seq(1, 0, length = m), 1:n, "constant",
         * rule = 2): the value of the last event row at or before each row */
        size_t m = 0;
        for (size_t i = 0; i < n; i++) m += wt[i] != 0;
        if (m < 2) {
            rc = gg_fail(st, "gamgpu_bad_input", "cox.ph()'s hazard needs at least two events");
            goto done;
        }
        const double by = (0.0 - 1.0) / (double) (m - 1);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (wt[i] != 0) k++;
            drift[i] = k <= 1 ? 1.0 : k == m ? 0.0 : 1.0 + (double) (k - 1) * by;
        }
    }
    if (p > 0) {
        int nj = nthreads < p ? nthreads : p;
        if (nj < 1) nj = 1;
        hazard_job *jobs = calloc((size_t) nj, sizeof(hazard_job));
        double *tmp = order != NULL && o->Rs != NULL ? malloc((size_t) nj * (n ? n : 1) * sizeof(double))
                                                     : NULL;
        if (jobs == NULL || (order != NULL && o->Rs != NULL && tmp == NULL)) {
            free(jobs);
            free(tmp);
            goto oom;
        }
        for (int t = 0; t < nj; t++)
            jobs[t] = (hazard_job) {r, wt, gamma, xs, cg, drift, order,
                                    tmp != NULL ? tmp + (size_t) t * n : NULL, o,
                                    (int) ((long) p * t / nj), (int) ((long) p * (t + 1) / nj)};
        gg_run_jobs(nj, hazard_job_run, jobs, sizeof(hazard_job));
        free(jobs);
        free(tmp);
        if (gg_interrupt_seen()) rc = gg_interrupt_fail(st, "cox.ph()'s hazard");
    }
    goto done;
oom:
    rc = gg_fail(st, "gamgpu_host_oom", "out of memory for cox.ph()'s hazard (n = %zu, p = %d)", n, p);
done:
    free(gp); free(gnp); free(dc); free(xs); free(gamma); free(cg); free(drift);
    return rc;
}
