/* fit_r.c -- glue between R and the fitting engine: a fit runs in a model
 * session (session_r.c: the data loaded and X built once, on the device
 * for a GPU fit, the one way data enter the engine), with mgcv's penalty
 * setup, the family and the settings unpacked here into plain C structs;
 * gg_engine_fit() runs through gg_session_call(), so that under "auto" a
 * device failure moves the session to the CPU and the fit runs again
 * there (counted).  The results come back as a named list;
 * gg_backend_check runs each backend operation once, for tests.  The
 * rows' part of the gam object (the final vectors, deviance residuals,
 * null deviance, aic) comes from host threads beside the engine
 * (fit_rows.c).  Output vectors are allocated here (R memory) before the
 * engine runs, so a failure leaks nothing: the engine frees its scratch,
 * the helper threads are joined, then the classed error is raised.  Trace
 * lines are printed here (Rprintf); the engine's loops poll for
 * interrupts through interrupt_r.c, armed around the fit. */
#include <R.h>
#include <Rinternals.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "backend.h"
#include "engine.h"
#include "engine_internal.h"
#include "errors_r.h"
#include "family.h"
#include "efam_r.h"
#include "family_r.h"
#include "fit_r.h"
#include "fit_rows.h"
#include "sexp_r.h"
#include "session_r.h"
#include "threads.h"

/* The settings of spec and control, checked (sexp_r.h): a value that is
 * NA, not finite, not whole where a count is meant, or out of range is a
 * classed error, never a cast C leaves undefined. */
#define BAD_IN  "gamgpu_bad_input"
#define BAD_CTL "gamgpu_bad_control"

static void trace_line(void *ctx, int iter, double reml, double dev, double edf,
                       double secs)
{
    (void) ctx;
    Rprintf("iter %3d  REML %.10g  deviance %.10g  edf %8.3f  %6.2fs\n", iter, reml, dev,
            edf, secs);
}

static SEXP new_mat(int r, int c) { return Rf_allocMatrix(REALSXP, r, c); }

/* spec$name: NULL (absent), or a double vector of len finite values, whose
 * data is returned; anything else is a classed error with the message
 * bad_shape or not_finite. */
static const double *optional_finite(SEXP spec, const char *name, R_xlen_t len,
                                     const char *bad_shape, const char *not_finite)
{
    SEXP v = gg_list_elt(spec, name);
    if (v == R_NilValue)
        return NULL;
    if (TYPEOF(v) != REALSXP || XLENGTH(v) != len)
        gg_abort("gamgpu_bad_input", bad_shape);
    for (R_xlen_t i = 0; i < len; i++)
        if (!R_FINITE(REAL(v)[i]))
            gg_abort("gamgpu_bad_input", not_finite);
    return REAL(v);
}

/* A backend's work counters and seconds, to report a fit's own share of
 * them (a session's backend has done the outer iteration's work before). */
typedef struct be_tally {
    long   count[4];             /* gram, xbeta, row_state, halve_eta */
    double transfer, rows, build;
} be_tally;

static be_tally tally(const gg_backend *be)
{
    be_tally t = {{be->n_gram, be->n_xbeta, be->n_row_state, be->n_halve},
                  be->t_transfer, be->t_rows, be->t_build};
    return t;
}

static void tally_since(const gg_backend *be, be_tally t0, long counters[4], double *transfer,
                        double *rows, double *build)
{
    const be_tally t = tally(be);
    for (int k = 0; k < 4; k++) counters[k] = t.count[k] - t0.count[k];
    *transfer = t.transfer - t0.transfer;
    *rows = t.rows - t0.rows;
    *build = t.build - t0.build;
}

/* The fit on a session's backend: what the engine needs and where its
 * results go; one attempt per call of op_fit (a device fit may be run
 * again on the CPU). */
typedef struct fit_ctx {
    const gg_penalties *pen;
    const gg_fit_spec  *sp;
    gg_fit_control     *ctl;
    gg_fit_out         *out;
    double *const      *rows_out;
    gg_fit_rows         fr;
    long                counters[4];
    double              t_transfer, t_rows, t_build, t_pre, t_enter;
    char                placement[160];
    const char         *backend;
} fit_ctx;

static int op_fit(gg_backend *be, const gg_data *d, void *ctx_, gg_status *st)
{
    fit_ctx *c = ctx_;
    const be_tally t0 = tally(be);
    c->t_pre = gg_now() - c->t_enter;
    /* the rows' helper, started afresh for this attempt and joined before
     * returning (gg_session_call's rule) */
    if (d->y == NULL)          /* the rows stay on a cluster's nodes */
        gg_fit_rows_start_resident(&c->fr, c->sp->family);
    else
        gg_fit_rows_start(&c->fr, c->sp->family, d->n, d->y, d->pw, c->rows_out,
                          c->ctl->nthreads);
    c->ctl->iterations_done = gg_fit_rows_iterations_done;
    c->ctl->ctx = &c->fr;
    int rc = gg_engine_fit(be, c->pen, c->sp, c->ctl, c->out, st);
    if (!gg_fit_rows_wait(&c->fr) && rc == 0)
        rc = gg_fail(st, "gamgpu_internal_error", "the engine returned without its final vectors");
    gg_fit_rows_finish(&c->fr);
    tally_since(be, t0, c->counters, &c->t_transfer, &c->t_rows, &c->t_build);
    gg_strlcpy(c->placement, be->placement[0] ? be->placement : "host", sizeof c->placement);
    c->backend = be->ops->name;
    return rc;
}

/* The fit in model session ses (gg_session_open_r: its y, prior weights,
 * offset and X, its device or CPU backend). */
SEXP gg_fit(SEXP ses, SEXP family, SEXP link, SEXP S, SEXP off, SEXP L, SEXP lsp0, SEXP spec,
            SEXP control)
{
    const double t_enter = gg_now();
    const gg_data d = *gg_session_data(ses);
    const int n = (int) d.n, p = d.p;

    gg_fit_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.family = gg_family_or_abort(family, link, gg_list_elt(spec, "theta"));
    sp.theta_estimated = gg_list_int(spec, "theta_estimated", 0, 0, 1, BAD_IN);
    sp.theta_rule = gg_list_int(spec, "theta_rule", GG_THETA_RULE_1_8, GG_THETA_RULE_1_8,
                                GG_THETA_RULE_1_9, BAD_IN);
    {   /* an extended family: its parameters (efam_r.c) */
        SEXP ef = gg_list_elt(spec, "ef");
        if (ef != R_NilValue) {
            sp.family.ef = gg_efpar_or_abort(ef);
            sp.family.efam = 1;
        } else if (sp.family.efam)
            gg_abort(BAD_IN, "an extended family needs its parameters (spec$ef)");
    }
    sp.nobs = gg_list_real(spec, "nobs", n, 0, DBL_MAX, BAD_IN);
    sp.nobs_scale = gg_list_real(spec, "nobs_scale", 0, 0, DBL_MAX, BAD_IN);
    sp.scale = gg_list_real(spec, "scale", 0, -DBL_MAX, DBL_MAX, BAD_IN);
    sp.gamma = gg_list_real(spec, "gamma", 1, 0, DBL_MAX, BAD_IN);
    sp.additive = gg_list_int(spec, "additive", 0, 0, 1, BAD_IN);
    sp.Mp = gg_list_int(spec, "Mp", -1, -1, p, BAD_IN);
    sp.ml = gg_list_int(spec, "ml", 0, 0, 1, BAD_IN);
    {   /* var(y): only a starting value, NA for one row */
        SEXP v = gg_list_elt(spec, "yvar");
        sp.yvar = v == R_NilValue ? 1 : Rf_asReal(v);
    }
    /* rows that stay on a cluster's nodes: no n-vector comes back (their
     * leverages not computed, the summaries summed there) */
    const int resident = d.y == NULL;
    const int want_hat = gg_list_int(spec, "hat", 1, 0, 1, BAD_IN) && !resident;
    const R_xlen_t nrow = resident ? 0 : n;

    /* penalties */
    const int m = Rf_length(S);
    if (TYPEOF(off) != INTSXP || XLENGTH(off) != m) gg_abort("gamgpu_bad_input", "off must be an integer vector, one per penalty");
    const double **Sp = (const double **) R_alloc(m > 0 ? m : 1, sizeof(double *));
    int *dims = (int *) R_alloc(m > 0 ? m : 1, sizeof(int));
    int *offs = (int *) R_alloc(m > 0 ? m : 1, sizeof(int));
    for (int k = 0; k < m; k++) {
        SEXP Sk = VECTOR_ELT(S, k);
        if (!Rf_isMatrix(Sk) || TYPEOF(Sk) != REALSXP || Rf_nrows(Sk) != Rf_ncols(Sk))
            gg_abort("gamgpu_bad_input", "each penalty must be a square double matrix");
        Sp[k] = REAL(Sk);
        dims[k] = Rf_nrows(Sk);
        offs[k] = INTEGER(off)[k] == NA_INTEGER ? -1 : INTEGER(off)[k] - 1;
        if (offs[k] < 0 || dims[k] > p - offs[k])
            gg_abort(BAD_IN, "each penalty must lie within the coefficients (off and its size)");
    }
    gg_penalties pen;
    pen.m = m;
    pen.off = offs;
    pen.dim = dims;
    pen.S = Sp;
    if (L == R_NilValue) {
        pen.L = NULL;
        pen.nsp = m;
    } else {
        if (!Rf_isMatrix(L) || TYPEOF(L) != REALSXP || Rf_nrows(L) != m)
            gg_abort("gamgpu_bad_input", "L must be a double matrix with one row per penalty");
        pen.L = REAL(L);
        pen.nsp = Rf_ncols(L);
    }
    if (lsp0 != R_NilValue && (TYPEOF(lsp0) != REALSXP || XLENGTH(lsp0) != m))
        gg_abort("gamgpu_bad_input", "lsp0 must be a double vector, one per penalty");
    pen.lsp0 = lsp0 == R_NilValue ? NULL : REAL(lsp0);

    gg_fit_control ctl;
    memset(&ctl, 0, sizeof ctl);
    /* the iteration limits' range (>= 1) is the engine's to check */
    ctl.maxit = gg_list_int(control, "maxit", 200, -INT_MAX, INT_MAX, BAD_CTL);
    ctl.epsilon = gg_list_real(control, "epsilon", 1e-7, 0, DBL_MAX, BAD_CTL);
    ctl.newton_maxit = gg_list_int(control, "newton.maxit", 200, -INT_MAX, INT_MAX, BAD_CTL);
    ctl.newton_tol = gg_list_real(control, "newton.tol", 1.490116119384765625e-08, 0, DBL_MAX,
                                  BAD_CTL);
    ctl.trace = gg_list_int(control, "trace", 0, 0, 1, BAD_CTL);
    ctl.nthreads = gg_list_int(control, "nthreads", 1, 1, GG_MAX_THREADS, BAD_CTL);
    ctl.trace_fn = trace_line;

    const int nsp = pen.nsp, nth = gg_engine_ntheta(&pen, &sp);

    /* outputs */
    const char *names[] = {"coefficients", "Vp", "Ve", "Vc", "edf", "edf1", "edf2", "R",
                           "db.drho", "rho", "rho.full", "grad", "hess", "V.sp", "hat",
                           "linear.predictors", "fitted.values", "weights", "scalars",
                           "backend", "counters", "fallback", "placement", "device.times",
                           "residuals", "ef.theta", "working.f"};
    const int nout = (int) (sizeof names / sizeof names[0]);
    SEXP res = PROTECT(gg_named_list(nout, names));
    SET_VECTOR_ELT(res, 0, Rf_allocVector(REALSXP, p));
    SET_VECTOR_ELT(res, 1, new_mat(p, p));
    SET_VECTOR_ELT(res, 2, new_mat(p, p));
    SET_VECTOR_ELT(res, 3, new_mat(p, p));
    SET_VECTOR_ELT(res, 4, Rf_allocVector(REALSXP, p));
    SET_VECTOR_ELT(res, 5, Rf_allocVector(REALSXP, p));
    SET_VECTOR_ELT(res, 6, Rf_allocVector(REALSXP, p));
    SET_VECTOR_ELT(res, 7, new_mat(p, p));
    SET_VECTOR_ELT(res, 8, new_mat(p, nsp));
    SET_VECTOR_ELT(res, 9, Rf_allocVector(REALSXP, nth));
    SET_VECTOR_ELT(res, 10, Rf_allocVector(REALSXP, m));
    SET_VECTOR_ELT(res, 11, Rf_allocVector(REALSXP, nth));
    SET_VECTOR_ELT(res, 12, new_mat(nth, nth));
    SET_VECTOR_ELT(res, 13, new_mat(nsp, nsp));
    SET_VECTOR_ELT(res, 14, want_hat ? Rf_allocVector(REALSXP, n) : R_NilValue);
    SET_VECTOR_ELT(res, 15, Rf_allocVector(REALSXP, nrow));
    SET_VECTOR_ELT(res, 16, Rf_allocVector(REALSXP, nrow));
    SET_VECTOR_ELT(res, 17, Rf_allocVector(REALSXP, nrow));
    SET_VECTOR_ELT(res, 24, Rf_allocVector(REALSXP, nrow));
    SET_VECTOR_ELT(res, 25, Rf_allocVector(REALSXP, sp.family.efam ? sp.family.ef.nth : 0));
    SET_VECTOR_ELT(res, 26, Rf_allocVector(REALSXP, p));

    gg_fit_out out;
    memset(&out, 0, sizeof out);
    out.coef = REAL(VECTOR_ELT(res, 0));
    out.Vp = REAL(VECTOR_ELT(res, 1));
    out.Ve = REAL(VECTOR_ELT(res, 2));
    out.Vc = REAL(VECTOR_ELT(res, 3));
    out.edf = REAL(VECTOR_ELT(res, 4));
    out.edf1 = REAL(VECTOR_ELT(res, 5));
    out.edf2 = REAL(VECTOR_ELT(res, 6));
    out.R = REAL(VECTOR_ELT(res, 7));
    out.f = REAL(VECTOR_ELT(res, 26));
    out.db_drho = REAL(VECTOR_ELT(res, 8));
    out.rho = REAL(VECTOR_ELT(res, 9));
    out.rho_full = REAL(VECTOR_ELT(res, 10));
    out.grad = REAL(VECTOR_ELT(res, 11));
    out.hess = REAL(VECTOR_ELT(res, 12));
    out.V_sp = REAL(VECTOR_ELT(res, 13));
    out.hat = want_hat ? REAL(VECTOR_ELT(res, 14)) : NULL;

    /* AR1 residuals (the session's, bam's rho): gaussian identity fits only */
    if (d.ar_rho != 0 && !sp.additive)
        gg_abort(BAD_IN, "AR1 residuals need a gaussian identity model");
    /* the first REML optimization's start (gam()'s in.out) and the
     * coefficients the penalized IRLS starts from, or NULL */
    sp.theta_start = optional_finite(spec, "theta_start", nth,
                                     "theta_start must be a double vector, one per theta",
                                     "theta_start must be finite");
    sp.beta_start = optional_finite(spec, "beta_start", p,
                                    "beta_start must be a double vector, one per column of X",
                                    "beta_start must be finite");

    /* the rows' part of the result, on host threads beside the engine */
    double *const rows_out[GG_ROWS_NOUT] = {
        resident ? NULL : REAL(VECTOR_ELT(res, 15)), resident ? NULL : REAL(VECTOR_ELT(res, 16)),
        resident ? NULL : REAL(VECTOR_ELT(res, 17)), resident ? NULL : REAL(VECTOR_ELT(res, 24)),
        out.hat};
    fit_ctx c;
    memset(&c, 0, sizeof c);
    c.pen = &pen;
    c.sp = &sp;
    c.ctl = &ctl;
    c.out = &out;
    c.rows_out = rows_out;
    c.t_enter = t_enter;
    gg_session_call(ses, op_fit, &c, "the fit");
    const gg_fit_rows fr = c.fr;
    /* loading the session (the data copied, X built) counts with the fit's
     * own copies and build: what the fit cost */
    double load_transfer, load_build;
    gg_session_load_seconds(ses, &load_transfer, &load_build);

    const char *snames[] = {"reml", "sig2", "scale.vp", "deviance", "rss", "iter",
                            "converged", "newton.iter", "newton.status", "rank", "Mp",
                            "reml.threads", "t.iterations", "t.postproc", "resid.ss",
                            "null.deviance", "aic", "theta", "theta.failed", "ef.log.scale",
                            "rss.extra"};
    const double sv[] = {out.reml, out.sig2, out.scale_vp, out.deviance, out.rss, out.iter,
                         out.converged, out.newton_iter, out.newton_status, out.rank, out.Mp,
                         out.reml_threads, out.t_iterations, out.t_postproc, fr.resid_ss,
                         fr.null_deviance, fr.aic_na ? NA_REAL : fr.aic, out.theta,
                         out.theta_failed, out.ef.log_scale, out.rss_extra};
    SET_VECTOR_ELT(res, 18, gg_named_doubles((int) (sizeof sv / sizeof sv[0]), snames, sv));
    SET_VECTOR_ELT(res, 19, Rf_mkString(c.backend));
    SET_VECTOR_ELT(res, 21, Rf_mkString(gg_session_fallback(ses)));
    SET_VECTOR_ELT(res, 22, Rf_mkString(c.placement));
    /* pre: from entry to the engine's start (checks, allocating the
     * outputs); loading the session is before the call */
    const char *tnames[] = {"transfer", "rows", "build", "pre"};
    const double tv[] = {load_transfer + c.t_transfer, c.t_rows, load_build + c.t_build, c.t_pre};
    SET_VECTOR_ELT(res, 23, gg_named_doubles(4, tnames, tv));
    for (int i = 0; i < (sp.family.efam ? sp.family.ef.nth : 0); i++)
        REAL(VECTOR_ELT(res, 25))[i] = out.ef.th[i];
    const char *cnames[] = {"gram", "xbeta", "row_state", "halve_eta"};
    const double cv[] = {(double) c.counters[0], (double) c.counters[1],
                         (double) c.counters[2], (double) c.counters[3]};
    SET_VECTOR_ELT(res, 20, gg_named_doubles(4, cnames, cv));
    /* R's density warns where it is 0 (a Poisson response that is not a
     * whole number: the aic is Inf); family_stats.c counted those rows off
     * R's thread, the warning is given here, as family$aic gives it */
    if (fr.aic_nonint.count > 0)
        Rf_warningcall(R_NilValue, "non-integer x = %f", fr.aic_nonint.x);
    UNPROTECT(1);
    return res;
}

/* One pass of every backend operation on given data, for tests and for
 * checking another backend against the CPU one: eta = X beta + offset, row
 * state, gram, leverages with M, then fetch of all four vectors. */
SEXP gg_backend_check(SEXP X, SEXP y, SEXP w, SEXP offset, SEXP family, SEXP link,
                      SEXP beta, SEXP M)
{
    gg_status st;
    gg_status_clear(&st);
    if (!Rf_isMatrix(X) || TYPEOF(X) != REALSXP || TYPEOF(y) != REALSXP ||
        TYPEOF(w) != REALSXP || TYPEOF(beta) != REALSXP || TYPEOF(M) != REALSXP ||
        (offset != R_NilValue && TYPEOF(offset) != REALSXP))
        gg_abort("gamgpu_bad_input", "X, y, w, offset, beta and M must be double");
    const int n = Rf_nrows(X), p = Rf_ncols(X);
    if (XLENGTH(y) != n || XLENGTH(w) != n || XLENGTH(beta) != p ||
        XLENGTH(M) != (R_xlen_t) p * p || (offset != R_NilValue && XLENGTH(offset) != n))
        gg_abort("gamgpu_bad_input", "inconsistent dimensions");
    const gg_family f = gg_family_or_abort(family, link, R_NilValue);
    const char *names[] = {"deviance", "A", "b", "zwz", "eta", "mu", "w", "z", "h"};
    SEXP res = PROTECT(gg_named_list(9, names));
    SET_VECTOR_ELT(res, 0, Rf_allocVector(REALSXP, 1));
    SET_VECTOR_ELT(res, 1, new_mat(p, p));
    SET_VECTOR_ELT(res, 2, Rf_allocVector(REALSXP, p));
    SET_VECTOR_ELT(res, 3, Rf_allocVector(REALSXP, 1));
    for (int i = 4; i < 9; i++) SET_VECTOR_ELT(res, i, Rf_allocVector(REALSXP, n));
    gg_backend be;
    memset(&be, 0, sizeof be);
    if (gg_backend_cpu_init(&be, 7, &st)) gg_raise(&st);   /* small chunks: exercise the blocking */
    gg_data d = {.n = (size_t) n, .p = p, .X = REAL(X), .y = REAL(y), .pw = REAL(w),
                 .offset = offset == R_NilValue ? NULL : REAL(offset)};
    int rc = be.ops->load(&be, &d, &st);
    if (rc == 0) rc = be.ops->xbeta(&be, REAL(beta), &st);
    if (rc == 0) rc = be.ops->row_state(&be, &f, REAL(VECTOR_ELT(res, 0)), &st);
    if (rc == 0) rc = be.ops->gram(&be, REAL(VECTOR_ELT(res, 1)), REAL(VECTOR_ELT(res, 2)),
                                   REAL(VECTOR_ELT(res, 3)), &st);
    if (rc == 0) rc = be.ops->fetch(&be, GG_VEC_ETA, REAL(VECTOR_ELT(res, 4)), &st);
    if (rc == 0) rc = be.ops->fetch(&be, GG_VEC_MU, REAL(VECTOR_ELT(res, 5)), &st);
    if (rc == 0) rc = be.ops->fetch(&be, GG_VEC_W, REAL(VECTOR_ELT(res, 6)), &st);
    if (rc == 0) rc = be.ops->fetch(&be, GG_VEC_Z, REAL(VECTOR_ELT(res, 7)), &st);
    if (rc == 0) rc = be.ops->leverage(&be, REAL(M), REAL(VECTOR_ELT(res, 8)), &st);
    be.ops->release(&be);
    if (rc) gg_raise(&st);
    UNPROTECT(1);
    return res;
}
