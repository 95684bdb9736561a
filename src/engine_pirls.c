/* engine_pirls.c -- the fit: penalized IRLS whose smoothing parameters are
 * re-estimated by fast REML on every working model (the performance
 * iteration of mgcv's bgam.fit with method = "fREML"), with bgam.fit's
 * deviance convergence test and step halving on the penalized deviance.
 * Gaussian identity models are one weighted least squares pass (bam.fit).
 * All O(n) work goes through the backend; this file sees p x p only. */
#include "engine_internal.h"
#include "threads.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int gg_engine_ntheta(const gg_penalties *pen, const gg_fit_spec *spec)
{
    return pen->nsp + (spec->scale > 0 ? 0 : 1);
}

/* beta' S_lambda beta with lambda = exp(rho_full) */
static double pen_quad(const gg_penalties *pin, const double *rho_full, const double *beta)
{
    double s = 0;
    for (int k = 0; k < pin->m; k++) {
        int d = pin->dim[k], o = pin->off[k];
        double l = exp(rho_full[k]), t = 0;
        for (int j = 0; j < d; j++)
            for (int i = 0; i < d; i++)
                t += beta[o + i] * pin->S[k][i + (size_t) j * d] * beta[o + j];
        s += l * t;
    }
    return s;
}

/* gg_reml_alloc on a thread of its own: its penalty set-up (eigen
 * decompositions of the penalty blocks) runs while the backend computes
 * the first working model. */
typedef struct reml_setup {
    gg_reml *r;
    const gg_penalties *pin;
    int p, phi_fixed, nthreads;
    double scale, nobs, gamma;
    int rc;
    gg_status st;
} reml_setup;

static void *reml_setup_run(void *arg)
{
    reml_setup *a = arg;
    a->rc = gg_reml_alloc(a->r, a->pin, a->p, a->phi_fixed, a->scale, a->nobs, a->gamma,
                          a->nthreads, &a->st);
    return NULL;
}

static double total_edf(int p, const double *P, const double *A)
{
    double s = 0;
    for (size_t i = 0; i < (size_t) p * p; i++) s += P[i] * A[i];
    return s;
}

/* nb()'s negative log likelihood in its log theta th, as mgcv's
 * estimate.theta()'s nlogl() at scale 1: dev/2 - ls, with the gradient and
 * Hessian for deriv 2 (g, H may be NULL for deriv 0). */
static int nb_nll(gg_backend *be, double th, int deriv, double *nll, double *g, double *H,
                  gg_status *st)
{
    double s[GG_NB_THETA_SUMS];
    if (be->ops->nb_theta_sums(be, th, deriv, s, st)) return -1;
    *nll = s[0] / 2 - s[1];
    if (deriv > 1) {
        *g = s[2] / 2 - s[4];
        *H = s[3] / 2 - s[5];
    }
    return 0;
}

/* mgcv's estimate.theta() for nb() (one theta, scale 1): Newton on the
 * log likelihood of theta at the current mu, steps of at most 4, halved
 * up to 25 times while the likelihood does not improve; stops when |g| <=
 * tol |nll|.  *failed is set when a step could not be improved. */
static int estimate_theta(gg_backend *be, double *th, int *failed, gg_status *st)
{
    const double tol = 1e-7;
    double nll, g, H, nll1, g1 = 0, H1 = 0;
    *failed = 0;
    if (nb_nll(be, *th, 2, &nll, &g, &H, st)) return -1;
    for (int i = 0; i < 100; i++) {
        const double h = H > 0 ? H : fabs(H);     /* eigen(H)'s values, made positive */
        double step = -g / h;
        if (!isfinite(step)) step = g > 0 ? -4 : 4;
        if (fabs(step) > 4) step = step * 4 / fabs(step);
        if (nb_nll(be, *th + step, 2, &nll1, &g1, &H1, st)) return -1;
        int it = 0;
        while (nll1 > nll) {
            step /= 2;
            it++;
            if (*th == *th + step || it > 25) {
                *failed = 1;
                break;
            }
            if (nb_nll(be, *th + step, 0, &nll1, NULL, NULL, st)) return -1;
        }
        if (*failed) break;
        *th += step;
        if (it > 0) {
            if (nb_nll(be, *th, 2, &nll, &g, &H, st)) return -1;
        } else {
            nll = nll1;
            g = g1;
            H = H1;
        }
        if (!(fabs(g) > tol * fabs(nll))) break;
    }
    return 0;
}

/* The deviance at log theta th0 from the current mu (nb()'s step halving
 * compares deviances at the previous iteration's theta, as bgam.fit). */
static int nb_dev_at(gg_backend *be, double th0, double *dev, gg_status *st)
{
    double s[GG_NB_THETA_SUMS];
    if (be->ops->nb_theta_sums(be, th0, 0, s, st)) return -1;
    *dev = s[0];
    return 0;
}

int gg_engine_fit(gg_backend *be, const gg_penalties *pin, const gg_fit_spec *spec,
                  const gg_fit_control *ctl, gg_fit_out *out, gg_status *st)
{
    const int p = be->p, m = pin->m;
    const double t0 = gg_now();
    gg_family famv = spec->family;             /* nb(): its theta moves */
    const gg_family *fam = &famv;
    const int est_theta = spec->theta_estimated && famv.fam == GG_FAM_NEGBIN;
    double th = est_theta ? log(famv.theta) : 0, th0 = th;
    const int phi_fixed = spec->scale > 0;
    gg_reml r;
    memset(&r, 0, sizeof r);
    gg_task setup_task;
    memset(&setup_task, 0, sizeof setup_task);
    reml_setup rs;
    memset(&rs, 0, sizeof rs);
    int reml_ready = 0;
    out->theta_failed = 0;
    /* the iteration limits: with none, there would be no fit to report */
    if (ctl->maxit < 1 || ctl->newton_maxit < 1)
        return gg_fail(st, "gamgpu_bad_control",
                       "control maxit (%d) and newton.maxit (%d) must be at least 1",
                       ctl->maxit, ctl->newton_maxit);
    double *A = malloc((size_t) p * p * sizeof(double));
    double *b = malloc((size_t) p * sizeof(double));
    double *coef = calloc((size_t) p, sizeof(double));
    double *coef0 = calloc((size_t) p, sizeof(double));
    double *pcoef0 = calloc((size_t) p, sizeof(double));
    double *sp0 = malloc((size_t) (m > 0 ? m : 1) * sizeof(double));
    double *rho_fit = calloc((size_t) (m > 0 ? m : 1), sizeof(double));
    double *theta = calloc((size_t) (pin->nsp + 1), sizeof(double));
    int rc = 0;
    if (!A || !b || !coef || !coef0 || !pcoef0 || !sp0 || !rho_fit || !theta) {
        rc = gg_fail(st, "gamgpu_host_oom", "out of memory (engine)");
        goto done;
    }
    rs = (reml_setup) {.r = &r, .pin = pin, .p = p, .phi_fixed = phi_fixed,
                       .nthreads = ctl->nthreads, .scale = spec->scale, .nobs = spec->nobs,
                       .gamma = spec->gamma};
    gg_task_start(&setup_task, reml_setup_run, &rs);

    double dev = 0, devold, dev0 = 0, zwz = 0, log_phi = 0;
    int have_coef = 0, conv = 0, iter = 0, newton_iter = 0, newton_status = 0;
    gg_reml_pt *best = NULL;
    const int maxit = spec->additive ? 1 : ctl->maxit;

    if (!spec->additive) {
        if ((rc = be->ops->init_eta(be, fam, st))) goto done;
    } else {
        double *zero = calloc((size_t) p, sizeof(double));
        if (!zero) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory"); goto done; }
        rc = be->ops->xbeta(be, zero, st);      /* eta = offset */
        free(zero);
        if (rc) goto done;
    }
    if ((rc = be->ops->row_state(be, fam, &dev, st))) goto done;

    for (iter = 1; iter <= maxit; iter++) {
        if (ctl->interrupted && ctl->interrupted(ctl->ctx)) {
            rc = gg_fail(st, "gamgpu_interrupted", "fit interrupted at iteration %d", iter);
            goto done;
        }
        double t_it = gg_now();
        devold = dev;
        int kk = 0;
        for (;;) {
            if (have_coef && (rc = be->ops->xbeta(be, coef, st))) goto done;
            if ((rc = be->ops->row_state(be, fam, &dev, st))) goto done;
            if ((rc = be->ops->gram(be, A, b, &zwz, st))) goto done;
            if (iter > 2 && fabs(dev - devold) / (0.1 + fabs(dev)) < ctl->epsilon) {
                conv = 1;
                break;
            }
            if (kk > 0) break;
            if (iter > 2) {
                double dev1 = dev;
                if (est_theta && (rc = nb_dev_at(be, th0, &dev1, st))) goto done;
                double pen0 = dev0 + pen_quad(pin, rho_fit, pcoef0);
                double pen1 = dev1 + pen_quad(pin, rho_fit, coef);
                while (pen0 < pen1 && kk < 6) {
                    for (int i = 0; i < p; i++) coef[i] = (coef0[i] + coef[i]) / 2;
                    if ((rc = be->ops->halve_eta(be, st))) goto done;
                    if ((rc = be->ops->row_state(be, fam, &dev, st))) goto done;
                    dev1 = dev;
                    if (est_theta && (rc = nb_dev_at(be, th0, &dev1, st))) goto done;
                    pen1 = dev1 + pen_quad(pin, rho_fit, coef);
                    kk++;
                }
            }
            if (kk == 0) break;
        }
        if (conv) break;
        if (iter > 1) {
            memcpy(coef0, coef, (size_t) p * sizeof(double));
            memcpy(pcoef0, coef, (size_t) p * sizeof(double));
            if ((rc = be->ops->keep_eta(be, st))) goto done;
            dev0 = dev;
            th0 = th;
        }
        /* nb(): theta from the current mu (bgam.fit's estimate.theta) */
        if (est_theta && iter > 1) {
            int failed = 0;
            if ((rc = estimate_theta(be, &th, &failed, st))) goto done;
            out->theta_failed = out->theta_failed || failed;
            famv.theta = exp(th);
        }
        /* fast REML on the working model, from mgcv's initial sp */
        if (!reml_ready) {
            gg_task_join(&setup_task);
            reml_ready = 1;
            if (rs.rc) {
                *st = rs.st;
                rc = -1;
                goto done;
            }
            r.A = A;
            r.b = b;
            out->Mp = r.Mp;
            out->reml_threads = gg_pool_size(r.pool);
        }
        r.zwz = zwz;
        if ((rc = gg_pen_initial_sp(&r.pen, A, sp0, st))) goto done;
        for (int k = 0; k < m; k++) sp0[k] = log(sp0[k]);
        if ((rc = gg_reml_theta_from_full(&r, sp0, theta, st))) goto done;
        if (!phi_fixed) {
            if (iter == 1) log_phi = log(spec->yvar * 0.05);
            if (!isfinite(log_phi)) log_phi = 0;
            theta[pin->nsp] = log_phi;
        }
        if (iter == 1 && spec->theta_start != NULL)
            memcpy(theta, spec->theta_start, (size_t) r.nth * sizeof(double));
        if ((rc = gg_reml_newton(&r, theta, ctl->newton_maxit, ctl->newton_tol, &best,
                                 &newton_iter, &newton_status, st)))
            goto done;
        memcpy(coef, best->beta, (size_t) p * sizeof(double));
        have_coef = 1;
        gg_reml_rho_full(&r, best->theta, rho_fit);
        if (!phi_fixed) log_phi = best->theta[pin->nsp];
        for (int i = 0; i < p; i++)
            if (!isfinite(coef[i])) {
                rc = gg_fail(st, "gamgpu_nonfinite", "non-finite coefficients at iteration %d", iter);
                goto done;
            }
        if (ctl->trace && ctl->trace_fn)
            ctl->trace_fn(ctl->ctx, iter, best->V, dev, total_edf(p, best->P, A),
                          gg_now() - t_it);
    }
    if (iter > maxit) iter = maxit;
    if (best == NULL) {     /* no REML fit ran: cannot happen with maxit >= 1 */
        rc = gg_fail(st, "gamgpu_internal_error", "the fit ended before its first iteration");
        goto done;
    }
    /* the REML pool's workers are done: their threads go back to the
     * budget for the rows' summaries and the post-processing (threads.h) */
    gg_pool_free(r.pool);
    r.pool = NULL;
    if (spec->additive) conv = 1;
    if (!conv || spec->additive) {
        /* the last fit's coefficients have not reached eta yet */
        if ((rc = be->ops->xbeta(be, coef, st))) goto done;
        if ((rc = be->ops->row_state(be, fam, &dev, st))) goto done;
        if (!spec->additive)
            if ((rc = be->ops->gram(be, A, b, &zwz, st))) goto done;
    }
    out->t_iterations = gg_now() - t0;
    double t1 = gg_now();
    out->iter = iter;
    out->converged = conv;
    out->newton_iter = newton_iter;
    out->newton_status = newton_status;
    out->deviance = dev;
    out->reml = best->V;
    out->sig2 = best->phi;
    out->rss = best->rss;
    out->rank = best->rank;
    for (int i = 0; i < r.nth; i++) out->rho[i] = best->theta[i];
    gg_reml_rho_full(&r, best->theta, out->rho_full);
    memcpy(out->grad, best->grad, (size_t) r.nth * sizeof(double));
    memcpy(out->hess, best->hess, (size_t) r.nth * r.nth * sizeof(double));
    out->theta = famv.theta;
    if (ctl->iterations_done && (rc = ctl->iterations_done(ctl->ctx, be, fam, best->phi, st)))
        goto done;
    if ((rc = gg_postproc(&r, best, A, be, phi_fixed, spec->scale, out, st))) goto done;
    out->t_postproc = gg_now() - t1;
done:
    gg_task_join(&setup_task);
    gg_reml_free(&r);
    free(A); free(b); free(coef); free(coef0); free(pcoef0); free(sp0); free(rho_fit);
    free(theta);
    return rc;
}
