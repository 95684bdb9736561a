/* engine_postproc.c -- what a fit reports besides its coefficients: the
 * Bayesian and frequentist covariance matrices Vp and Ve, the smoothing
 * parameter corrected Vc, the EDFs edf/edf1/edf2, V.sp, a factor R with
 * R'R = X'WX, and the leverages (mgcv's Sl.postproc; hat values through the
 * backend because they are an O(n) row operation, overlapped with the p x p
 * work, which runs on a thread of its own). */
#define USE_FC_LEN_T
#include <R_ext/BLAS.h>
#ifndef FCONE
#define FCONE
#endif

#include "engine_internal.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int postproc_host(gg_reml *r, const gg_reml_pt *best, const double *A_final,
                         const double *b_final, double zwz_final, int scale_known,
                         double scale, gg_fit_out *out, gg_status *st)
{
    const int p = r->p, m = r->m, nsp = r->nsp, nth = r->nth;
    const size_t pp = (size_t) p * p;
    const double done = 1.0, dzero = 0.0;
    double *F = malloc(pp * sizeof(double));
    double *T = malloc(pp * sizeof(double));
    double *d1b = malloc((size_t) p * (nsp > 0 ? nsp : 1) * sizeof(double));
    double *ev = malloc((size_t) (nth > 0 ? nth : 1) * sizeof(double));
    double *U = malloc((size_t) (nth > 0 ? nth : 1) * (nth > 0 ? nth : 1) * sizeof(double));
    double *rV = malloc((size_t) (nth > 0 ? nth : 1) * (nsp > 0 ? nsp : 1) * sizeof(double));
    gg_pchol c;
    memset(&c, 0, sizeof c);
    int rc = 0;
    if (!F || !T || !d1b || !ev || !U || !rV) {
        rc = gg_fail(st, "gamgpu_host_oom", "out of memory (post-processing)");
        goto done;
    }
    memcpy(out->coef, best->beta, (size_t) p * sizeof(double));
    /* F = P A */
    F77_CALL(dgemm)("N", "N", &p, &p, &p, &done, best->P, &p, A_final, &p, &dzero, F, &p
                    FCONE FCONE);
    double sedf = 0;
    for (int i = 0; i < p; i++) {
        out->edf[i] = F[i + (size_t) i * p];
        sedf += out->edf[i];
        double s = 0;
        for (int j = 0; j < p; j++) s += F[i + (size_t) j * p] * F[j + (size_t) i * p];
        out->edf1[i] = 2 * out->edf[i] - s;
    }
    if (!scale_known) scale = best->rss / (r->nobs_scale - sedf);
    out->scale_vp = scale;
    for (size_t i = 0; i < pp; i++) out->Vp[i] = best->P[i] * scale;
    F77_CALL(dgemm)("N", "N", &p, &p, &p, &done, F, &p, out->Vp, &p, &dzero, out->Ve, &p
                    FCONE FCONE);
    /* d1b = -PSkb %*% L  (p x nsp) */
    for (int a = 0; a < nsp; a++)
        for (int i = 0; i < p; i++) {
            double s = 0;
            for (int k = 0; k < m; k++) {
                double l = r->pin->L ? r->pin->L[k + (size_t) a * m] : (k == a);
                if (l != 0) s -= best->PSkb[i + (size_t) k * p] * l;
            }
            d1b[i + (size_t) a * p] = s;
        }
    memcpy(out->db_drho, d1b, (size_t) p * nsp * sizeof(double));
    memcpy(out->Vc, out->Vp, pp * sizeof(double));
    if (nth > 0) {
        if ((rc = gg_eigen_sym(nth, best->hess, ev, U, st))) goto done;
        /* rV = (d * t(U))[, 1:nsp], d = 1/sqrt(ev) for ev > 0 else 0 */
        for (int i = 0; i < nth; i++) {
            double d = ev[i] > 0 ? 1 / sqrt(ev[i]) : 0;
            for (int a = 0; a < nsp; a++) rV[i + (size_t) a * nth] = d * U[a + (size_t) i * nth];
        }
        for (int a = 0; a < nsp; a++)
            for (int b = 0; b < nsp; b++) {
                double s = 0;
                for (int i = 0; i < nth; i++) s += rV[i + (size_t) a * nth] * rV[i + (size_t) b * nth];
                out->V_sp[a + (size_t) b * nsp] = s;
            }
        if (nsp > 0) {
            /* Vc = Vp + d1b V.sp d1b' */
            double *W = malloc((size_t) p * nsp * sizeof(double));
            if (!W) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory"); goto done; }
            F77_CALL(dgemm)("N", "N", &p, &nsp, &nsp, &done, d1b, &p, out->V_sp, &nsp, &dzero,
                            W, &p FCONE FCONE);
            F77_CALL(dgemm)("N", "T", &p, &p, &nsp, &done, W, &p, d1b, &p, &done, out->Vc, &p
                            FCONE FCONE);
            free(W);
        }
    }
    double sedf1 = 0, sedf2 = 0;
    for (int i = 0; i < p; i++) {
        double s = 0;
        for (int j = 0; j < p; j++) s += out->Vc[i + (size_t) j * p] * A_final[i + (size_t) j * p];
        out->edf2[i] = s / scale;
        sedf1 += out->edf1[i];
        sedf2 += out->edf2[i];
    }
    if (sedf2 > sedf1) memcpy(out->edf2, out->edf1, (size_t) p * sizeof(double));

    /* R with R'R = A_final: pivoted Cholesky, columns returned to their order */
    if ((rc = gg_pchol_alloc(&c, p, st))) goto done;
    if ((rc = gg_pchol_factor(&c, A_final, st))) goto done;
    memset(out->R, 0, pp * sizeof(double));
    for (int j = 0; j < p; j++) {
        int cj = c.piv[j];
        for (int i = 0; i <= j && i < c.rank; i++)
            out->R[i + (size_t) cj * p] = c.R[i + (size_t) j * p] * c.d[cj];
    }
    /* f with R'f = b_final (R's first rank rows, in pivot order a lower
     * triangular system), zeros after; rss_extra = z'Wz - |f|^2 */
    double ff = 0;
    for (int j = 0; j < p; j++) {
        if (j >= c.rank) {
            out->f[j] = 0;
            continue;
        }
        const int cj = c.piv[j];
        double s = b_final[cj];
        for (int i = 0; i < j; i++) s -= out->R[i + (size_t) cj * p] * out->f[i];
        out->f[j] = s / out->R[j + (size_t) cj * p];
        ff += out->f[j] * out->f[j];
    }
    out->rss_extra = zwz_final - ff;
done:
    gg_pchol_free(&c);
    free(F); free(T); free(d1b); free(ev); free(U); free(rV);
    return rc;
}

/* The p x p work on a thread of its own while this one drives the
 * backend's leverage pass (on the device, or the CPU backend's own threads):
 * both read only the final P and A. */
typedef struct postproc_job {
    gg_reml *r;
    const gg_reml_pt *best;
    const double *A, *b;
    double zwz;
    int scale_known;
    double scale;
    gg_fit_out *out;
    int rc;
    gg_status st;
} postproc_job;

static void *postproc_run(void *arg)
{
    postproc_job *j = arg;
    gg_status_clear(&j->st);
    j->rc = postproc_host(j->r, j->best, j->A, j->b, j->zwz, j->scale_known, j->scale, j->out,
                          &j->st);
    return NULL;
}

int gg_postproc(gg_reml *r, const gg_reml_pt *best, const double *A_final,
                const double *b_final, double zwz_final, gg_backend *be, int scale_known,
                double scale, gg_fit_out *out, gg_status *st)
{
    postproc_job job = {.r = r, .best = best, .A = A_final, .b = b_final, .zwz = zwz_final,
                        .scale_known = scale_known, .scale = scale, .out = out};
    if (out->hat == NULL)
        return postproc_host(r, best, A_final, b_final, zwz_final, scale_known, scale, out,
                             st);
    gg_task task;
    gg_task_start(&task, postproc_run, &job);
    int rc = be->ops->leverage(be, best->P, out->hat, st);
    gg_task_join(&task);
    if (rc == 0 && job.rc) {
        *st = job.st;
        rc = job.rc;
    }
    return rc;
}
