/* engine_pirls.c -- the fit: penalized IRLS whose smoothing parameters are
 * re-estimated by fast REML on every working model (the performance
 * iteration of mgcv's bgam.fit with method = "fREML"), with bgam.fit's
 * deviance convergence test and step halving on the penalized deviance.
 * Gaussian identity models are one weighted least squares pass (bam.fit).
 * All O(n) work goes through the backend; this file sees p x p only. */
#include "engine_internal.h"
#include "efam_par.h"
#include "interrupt.h"
#include "threads.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
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

/* An extended family's theta (and tw()'s log scale), as mgcv's
 * estimate.theta() estimates them between iterations: Newton on the
 * negative log likelihood nll = dev / (2 scale) - ls at the current mu,
 * over the row sums the backend returns (efam_math.h's layout). */
typedef struct ef_theta {
    gg_backend *be;
    gg_family  *fam;      /* its ef.th and ef.log_scale are evaluated in place */
    int         nth, ns;  /* theta values; parameters (nth + the log scale) */
    int         lo;       /* first estimated parameter: 0, or nth when only
                             the scale is (n.theta 0: theta fixed) */
    double      s[GG_FM_EF_MAXSUM];
} ef_theta;

/* nlogl(): at x (nth theta values, then the log scale when estimated),
 * the value and, for deriv 2, the gradient g and Hessian H (ns x ns) of
 * all ns parameters. */
static int ef_nll(ef_theta *e, const double *x, int deriv, double *nll, double *g, double *H,
                  gg_status *st)
{
    gg_fm_efpar *par = &e->fam->ef;
    const int nth = e->nth, ns = e->ns;
    for (int i = 0; i < nth; i++) par->th[i] = x[i];
    const int get_scale = ns > nth;
    if (get_scale) par->log_scale = x[nth];
    const double scale = get_scale ? exp(x[nth]) : 1.0;
    if (e->be->ops->ef_sums(e->be, e->fam, deriv > 0 ? deriv : 0, e->s, st)) return -1;
    const double dev = e->s[GG_FM_EF_DEV] / scale;
    *nll = dev / 2 - e->s[GG_FM_EF_LS];
    if (deriv < 2) return 0;
    const double *l1 = e->s + GG_FM_EF_LSTH1(nth), *l2 = e->s + GG_FM_EF_LSTH2(nth, ns);
    for (int i = 0; i < nth; i++) g[i] = e->s[GG_FM_EF_DTH + i] / (2 * scale);
    for (int k = 0, i = 0; i < nth; i++)
        for (int j = i; j < nth; j++, k++)
            H[i + ns * j] = H[j + ns * i] = e->s[GG_FM_EF_DTH2(nth) + k] / (2 * scale);
    if (get_scale) {
        for (int i = 0; i < nth; i++) H[i + ns * nth] = H[nth + ns * i] = -g[i];
        H[nth + ns * nth] = dev / 2;
        g[nth] = -dev / 2;
    }
    for (int i = 0; i < ns; i++) g[i] -= l1[i];
    for (int k = 0, i = 0; i < ns; i++)
        for (int j = i; j < ns; j++, k++) {
            H[i + ns * j] -= l2[k];
            if (j != i) H[j + ns * i] -= l2[k];
        }
    return 0;
}

/* estimate.theta(): from x (ns values, updated), Newton steps on the
 * estimated parameters lo..ns-1 along the eigenvectors of their Hessian
 * (eigenvalues made positive, floored at a fraction of the largest), the
 * step scaled to at most 4 in any parameter, halved up to 25 times while
 * the likelihood does not improve.  *failed is set when a step could not
 * be improved (mgcv warns).  Two rules, as mgcv's releases have them
 * (spec->theta_rule, chosen in R by behaviour: R/families.R):
 *   GG_THETA_RULE_1_8 (mgcv 1.8-41): every parameter steps, floor 1e-7,
 *     a step is halved while nll rises at all, stop when every
 *     |g| <= tol |nll|;
 *   GG_THETA_RULE_1_9 (mgcv 1.9-x): only the parameters not yet
 *     converged (|g| > tol (|nll| + 1)) step, floor 1e-5, a step is halved
 *     while nll rises by more than eps^0.75 |nll|, stop when none is left. */
static int ef_estimate(ef_theta *e, double *x, int rule, int *failed, gg_status *st)
{
    enum { NMAX = GG_FM_EF_MAXTH + 1 };
    const double tol = 1e-7;
    const int r19 = rule == GG_THETA_RULE_1_9;
    const double floor_rel = r19 ? 1e-5 : 1e-7;
    const int ns = e->ns, lo = e->lo;
    double nll, nll1, g[NMAX], H[NMAX * NMAX], g1[NMAX], H1[NMAX * NMAX];
    double Hk[NMAX * NMAX], ev[NMAX], V[NMAX * NMAX], step[NMAX], x1[NMAX];
    int act[NMAX];           /* the parameters that step */
    *failed = 0;
    if (ef_nll(e, x, 2, &nll, g, H, st)) return -1;
    for (int it = 0; it < 100; it++) {
        int k = 0;
        for (int i = lo; i < ns; i++)
            if (!r19 || fabs(g[i]) > tol * (fabs(nll) + 1)) act[k++] = i;
        if (k == 0) break;   /* (1.9-x: every parameter converged) */
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) Hk[i + k * j] = H[act[i] + ns * act[j]];
        if (gg_eigen_sym(k, Hk, ev, V, st)) return -1;
        int pdef = 1;
        double emax = 0;
        for (int i = 0; i < k; i++) {
            if (ev[i] <= 0) pdef = 0;
            if (fabs(ev[i]) > emax) emax = fabs(ev[i]);
        }
        if (!pdef)
            for (int i = 0; i < k; i++) {
                ev[i] = fabs(ev[i]);
                if (ev[i] < emax * floor_rel) ev[i] = emax * floor_rel;
            }
        double ms = 0;
        for (int i = 0; i < ns; i++) step[i] = 0;
        for (int j = 0; j < k; j++) {
            double c = 0;
            for (int i = 0; i < k; i++) c += V[i + k * j] * g[act[i]];
            c /= ev[j];
            for (int i = 0; i < k; i++) step[act[i]] -= V[i + k * j] * c;
        }
        for (int i = 0; i < ns; i++) if (fabs(step[i]) > ms) ms = fabs(step[i]);
        if (ms > 4)
            for (int i = 0; i < ns; i++) step[i] *= 4 / ms;
        for (int i = 0; i < ns; i++) x1[i] = x[i] + step[i];
        if (ef_nll(e, x1, 2, &nll1, g1, H1, st)) return -1;
        int halvings = 0;
        const double slack = r19 ? pow(DBL_EPSILON, 0.75) * fabs(nll) : 0;
        while (!(nll1 - nll <= slack)) {
            for (int i = 0; i < ns; i++) step[i] /= 2;
            halvings++;
            int moved = 0;
            for (int i = 0; i < ns; i++) if (x[i] != x[i] + step[i]) moved = 1;
            if (!moved || halvings > 25) {
                *failed = 1;
                break;
            }
            for (int i = 0; i < ns; i++) x1[i] = x[i] + step[i];
            if (ef_nll(e, x1, 0, &nll1, NULL, NULL, st)) return -1;
        }
        if (*failed) break;
        for (int i = 0; i < ns; i++) x[i] += step[i];
        if (halvings > 0) {
            if (ef_nll(e, x, 2, &nll, g, H, st)) return -1;
        } else {
            nll = nll1;
            memcpy(g, g1, sizeof g);
            memcpy(H, H1, sizeof H);
        }
        if (!r19) {
            int small = 1;
            for (int i = lo; i < ns; i++) if (fabs(g[i]) > tol * fabs(nll)) small = 0;
            if (small) break;
        }
    }
    /* the family carries the estimate (ef_nll left the last trial there) */
    for (int i = 0; i < e->nth; i++) e->fam->ef.th[i] = x[i];
    if (ns > e->nth) e->fam->ef.log_scale = x[e->nth];
    return 0;
}

/* The deviance at the theta of fam0 from the current mu (an extended
 * family's step halving compares deviances at the previous iteration's
 * theta, as bgam.fit). */
static int ef_dev_at(gg_backend *be, const gg_family *fam0, double *dev, gg_status *st)
{
    double s[GG_FM_EF_MAXSUM];
    if (be->ops->ef_sums(be, fam0, -1, s, st)) return -1;
    *dev = s[GG_FM_EF_DEV];
    return 0;
}

int gg_engine_fit(gg_backend *be, const gg_penalties *pin, const gg_fit_spec *spec,
                  const gg_fit_control *ctl, gg_fit_out *out, gg_status *st)
{
    const int p = be->p, m = pin->m;
    const double t0 = gg_now();
    gg_family famv = spec->family;             /* an extended family: its theta moves */
    gg_family fam0 = famv;                     /* ... and here is last iteration's */
    const gg_family *fam = &famv;
    const int efam = famv.efam;
    /* bgam.fit calls estimate.theta() when theta or (tw()) the scale is free */
    const int est_theta = efam && (spec->theta_estimated || famv.ef.scale_est);
    ef_theta eft;
    memset(&eft, 0, sizeof eft);
    double efx[GG_FM_EF_MAXTH + 1];
    if (est_theta) {
        eft.be = be;
        eft.fam = &famv;
        eft.nth = famv.ef.nth;
        eft.ns = famv.ef.nth + famv.ef.scale_est;
        eft.lo = spec->theta_estimated ? 0 : famv.ef.nth;
    }
    /* an extended family's scale is known to the REML fit: 1, or (tw())
     * estimate.theta()'s estimate, var(y) / 10 until the first */
    const int phi_fixed = spec->scale > 0;
    double scale_known = spec->scale;
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

    if (!spec->additive && spec->beta_start != NULL) {
        memcpy(coef, spec->beta_start, (size_t) p * sizeof(double));
        if ((rc = be->ops->xbeta(be, coef, st))) goto done;
        have_coef = 1;
    } else if (!spec->additive) {
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
        if (gg_interrupt_check()) {
            char what[64];
            snprintf(what, sizeof what, "penalized IRLS iteration %d", iter);
            rc = gg_interrupt_fail(st, what);
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
                if (efam && (rc = ef_dev_at(be, &fam0, &dev1, st))) goto done;
                double pen0 = dev0 + pen_quad(pin, rho_fit, pcoef0);
                double pen1 = dev1 + pen_quad(pin, rho_fit, coef);
                while (pen0 < pen1 && kk < 6) {
                    for (int i = 0; i < p; i++) coef[i] = (coef0[i] + coef[i]) / 2;
                    if ((rc = be->ops->halve_eta(be, st))) goto done;
                    if ((rc = be->ops->row_state(be, fam, &dev, st))) goto done;
                    dev1 = dev;
                    if (efam && (rc = ef_dev_at(be, &fam0, &dev1, st))) goto done;
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
            fam0 = famv;
        }
        /* theta (and tw()'s scale) from the current mu: bgam.fit's
         * estimate.theta(), whose scale starts at var(y) / 10 every time */
        if (est_theta && iter > 1) {
            int failed = 0;
            for (int i = 0; i < eft.nth; i++) efx[i] = famv.ef.th[i];
            if (famv.ef.scale_est) efx[eft.nth] = log(spec->yvar * 0.1);
            if ((rc = ef_estimate(&eft, efx, spec->theta_rule, &failed, st))) goto done;
            out->theta_failed = out->theta_failed || failed;
            if (famv.ef.scale_est) scale_known = exp(famv.ef.log_scale);
            if (famv.fam == GG_FAM_NEGBIN) famv.theta = exp(famv.ef.th[0]);
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
            if (spec->Mp >= 0) r.Mp = spec->Mp;
            if (spec->ml && (rc = gg_reml_ml_setup(&r, st))) goto done;
            out->Mp = r.Mp;
            out->reml_threads = gg_pool_size(r.pool);
        }
        r.zwz = zwz;
        if (phi_fixed) r.phi_known = scale_known;
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
    out->ef = famv.ef;
    if (ctl->iterations_done && (rc = ctl->iterations_done(ctl->ctx, be, fam, best->phi, st)))
        goto done;
    if (spec->nobs_scale > 0) r.nobs_scale = spec->nobs_scale;
    if ((rc = gg_postproc(&r, best, A, b, zwz, be, phi_fixed, scale_known, out, st))) goto done;
    out->t_postproc = gg_now() - t1;
done:
    gg_task_join(&setup_task);
    gg_reml_free(&r);
    free(A); free(b); free(coef); free(coef0); free(pcoef0); free(sp0); free(rho_fit);
    free(theta);
    return rc;
}
