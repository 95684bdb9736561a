/* session_r.c -- R glue of a model session: a fitting backend loaded once
 * with X (or built from its recipe), the response, prior weights and
 * offset, and kept (in the device's memory for a GPU fit) across many
 * .Calls.  It is the one way a fit's data reach the engine: gam_gpu()
 * opens one per fit (R/session.R), every route's work runs against it --
 * gam()'s outer smoothing parameter iteration (R/outer.R) asks one X for
 * hundreds of penalized IRLS steps, weighted Gram products with signed
 * weights, X b and X' v products and leverages -- and the engine's fit
 * runs on its backend (fit_r.c, through gg_session_call()).
 *
 * The session is an external pointer (tag gamgpu_model_session) whose
 * protected value holds the R vectors the backend reads in place, with a
 * C finalizer registered to run at exit; gg_session_close_r() releases it
 * early, and every entry point checks for a released or reloaded pointer.
 *
 * mode: 0 = CPU, 1 = device with a recorded CPU fallback on a device
 * failure ("auto"), 2 = device or a classed error ("required").  Under
 * "auto" a device failure at any call moves the session to the CPU
 * backend (the last penalized IRLS state replayed there) and is recorded
 * in gg_session_info_r()'s fallback; the call then runs on the CPU.  Every
 * operation but fetch takes all its inputs in the call or from the
 * outer iteration's rows (outer_rows.h: kept on the device for a GPU
 * session, so they are made again on the CPU after a move), so nothing
 * else has to be replayed. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "basis_r.h"
#include "cluster_r.h"
#include "efam_r.h"
#include "errors_r.h"
#include "family_r.h"
#include "gpu_telemetry.h"
#include "interrupt.h"
#include "interrupt_r.h"
#include "outer_rows.h"
#include "session_r.h"
#include "sexp_r.h"
#include "threads.h"
#include "efam_outer.h"

#define BAD_IN  "gamgpu_bad_input"
#define BAD_CTL "gamgpu_bad_control"

typedef struct gg_session {
    gg_backend be;
    gg_data    d;
    int        loaded, on_device, mode, ordinal, nthreads;
    size_t     block_rows;               /* the CPU backend's row block (0: its own) */
    /* what loading cost: seconds in copies and in building X */
    double     load_transfer, load_build;
    /* the last eval(), replayed after a move to the CPU: its beta (NULL:
     * the family's start) and family */
    int        have_eval, eval_start;
    double    *eval_beta;
    gg_family  eval_fam;
    /* the outer iteration's rows at the last eval (outer_rows.h): on the
     * backend (the device's memory) or here */
    gg_outer_rows rows;
    int        rows_ever;                /* the rows were computed */
    /* X's recipe (when X is one), its blocks copied out of R's transient
     * memory; the arrays they point to are the protected plan list's */
    gg_xplan   xplan;
    int        have_xplan;
    /* a session over a cluster's nodes: the R function its backend's
     * operations call (cluster_r.c; protected by the pointer), else NULL */
    SEXP       dispatch;
    char       device[32];
    char       fallback[GG_TEL_REASON];
} gg_session;

static SEXP tag_session(void) { return Rf_install("gamgpu_model_session"); }

static void session_release(gg_session *s)
{
    if (s->be.ops != NULL)
        s->be.ops->release(&s->be);
    memset(&s->be, 0, sizeof s->be);
    s->loaded = 0;
}

static void session_finalizer(SEXP ptr)
{
    gg_session *s = R_ExternalPtrAddr(ptr);
    if (s == NULL)
        return;
    session_release(s);
    gg_outer_rows_free(&s->rows);
    if (s->have_xplan) gg_xplan_clone_free(&s->xplan);
    free(s->eval_beta);
    free(s);
    R_ClearExternalPtr(ptr);
}

static gg_session *session_get(SEXP ptr)
{
    if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != tag_session())
        gg_abort(BAD_IN, "not a gamgpu model session");
    gg_session *s = R_ExternalPtrAddr(ptr);
    if (s == NULL || !s->loaded)
        gg_abort("gamgpu_stale_pointer",
                 "this model session has been closed or was saved and reloaded");
    return s;
}

/* Load the session's data into a fresh backend: the device's, or the CPU's
 * (X's recipe then with the tables of the host's own plan: a device fit's
 * plan moved to the CPU builds the CPU fit's X). */
static int session_load(gg_session *s, int on_device, gg_status *st)
{
    memset(&s->be, 0, sizeof s->be);
    if (!on_device && s->dispatch == NULL && s->have_xplan) {
        const int rc = gg_xplan_tp1_tables(&s->xplan, s->nthreads);
        if (rc == -2)
            return gg_interrupt_fail(st, "a thin plate basis's polynomials");
        if (rc != 0)
            return gg_fail(st, "gamgpu_host_oom", "out of host memory (a thin plate basis's "
                           "polynomials)");
    }
    int rc = s->dispatch != NULL ? gg_backend_cluster_init(&s->be, s->dispatch, st)
             : on_device ? gg_backend_cuda_init(&s->be, s->ordinal, st)
                         : gg_backend_cpu_init(&s->be, s->block_rows, st);
    if (rc == 0)
        rc = s->be.ops->load(&s->be, &s->d, st);
    if (rc != 0) {
        session_release(s);
        return -1;
    }
    s->loaded = 1;
    s->load_transfer = s->be.t_transfer;
    s->load_build = s->be.t_build;
    s->on_device = on_device;
    if (s->dispatch != NULL)
        snprintf(s->device, sizeof s->device, "cluster");
    else if (on_device)
        snprintf(s->device, sizeof s->device, "cuda:%d", s->ordinal);
    else
        snprintf(s->device, sizeof s->device, "cpu");
    return 0;
}

static int eval_rows(gg_session *s, double *dev, gg_status *st)
{
    gg_backend *be = &s->be;
    int rc = s->eval_start ? be->ops->init_eta(be, &s->eval_fam, st)
                           : be->ops->xbeta(be, s->eval_beta, st);
    return rc ? rc : be->ops->row_state(be, &s->eval_fam, dev, st);
}

/* After a device failure under "auto": the CPU backend, the last eval's
 * row state restored on it. */
static int session_to_cpu(gg_session *s, const gg_status *why, gg_status *st)
{
    gg_tel_fallback("session", why->msg);
    gg_strlcpy(s->fallback, why->msg, sizeof s->fallback);
    session_release(s);
    gg_status_clear(st);
    if (session_load(s, 0, st))
        return -1;
    double dev;
    if (s->have_eval && eval_rows(s, &dev, st))
        return -1;
    /* the outer iteration's rows the device kept, made again here */
    if (!s->rows.have)
        s->rows.on_backend = 0;
    if (s->rows.have && s->rows.on_backend) {
        const gg_family fam = s->rows.fam;
        return s->rows.efam
                   ? gg_outer_ef_rows_compute(&s->be, &s->d, &fam, s->rows.level, &s->rows, st)
                   : gg_outer_rows_compute(&s->be, &s->d, &fam, s->rows.pearson, &s->rows, st);
    }
    return 0;
}

typedef int (*session_op)(gg_session *s, void *ctx, gg_status *st);

/* Run op on the session's backend with the thread budget and interrupts
 * armed; a device failure under "auto" moves the session to the CPU and
 * runs op again there.  Raises the classed error of a failure (after the
 * helper threads are done). */
static void session_run(gg_session *s, session_op op, void *ctx, const char *what)
{
    gg_status st;
    gg_status_clear(&st);
    const int prev = gg_threads_set_limit(s->nthreads);
    gg_r_interrupt_arm();
    int rc = op(s, ctx, &st);
    if (rc != 0 && s->on_device && s->mode == 1 && gg_device_failure(&st)) {
        gg_status why = st;
        rc = session_to_cpu(s, &why, &st);
        if (rc == 0)
            rc = op(s, ctx, &st);
    }
    rc = gg_r_interrupt_disarm(rc, &st, what);
    gg_threads_set_limit(prev);
    if (rc != 0)
        gg_raise(&st);
}

/* ---- open, close, info ------------------------------------------------ */

/* load: list(device_mode, device_ordinal, unit_weights, lean_rows, ar_rho,
 * ar_start) -- where the session runs (mode as above), whether every prior
 * weight is 1 (not kept on a device; w may then be NULL where the device
 * is required), whether a device keeps the least
 * row state (gg_data.lean_rows), AR1 residuals (bam's rho and AR.start,
 * NULL: one series); control: gam_gpu_control()'s nthreads and the CPU
 * backend's row block (block.rows, else chunk.size). */
SEXP gg_session_open_r(SEXP X, SEXP y, SEXP w, SEXP offset, SEXP load, SEXP control)
{
    if (TYPEOF(load) != VECSXP || TYPEOF(control) != VECSXP)
        gg_abort(BAD_IN, "a model session's load and control settings must be lists");
    /* (a session over a cluster's nodes: X is theirs, p columns) */
    SEXP dispatch = gg_list_elt(load, "cluster");
    if (dispatch != R_NilValue && (!Rf_isFunction(dispatch) || X != R_NilValue))
        gg_abort(BAD_IN, "a cluster's model session takes its dispatch function and no X");
    if (dispatch == R_NilValue && !(Rf_isMatrix(X) && TYPEOF(X) == REALSXP) &&
        TYPEOF(X) != VECSXP)
        gg_abort(BAD_IN, "a model session takes X as a double matrix or its recipe");
    const int mode = dispatch != R_NilValue ? 0 : gg_list_int(load, "device_mode", 0, 0, 2, BAD_IN);
    const int ordinal = gg_list_int(load, "device_ordinal", 0, 0, INT_MAX, BAD_IN);
    const int pw_ones = gg_list_int(load, "unit_weights", 0, 0, 1, BAD_IN);
    const int lean_rows = gg_list_int(load, "lean_rows", 0, 0, 1, BAD_IN);
    const double ar_rho = gg_list_real(load, "ar_rho", 0, -1, 1, BAD_IN);
    SEXP ar_start = gg_list_elt(load, "ar_start");
    const int nthreads = gg_list_int(control, "nthreads", 1, 1, GG_MAX_THREADS, BAD_CTL);
    const int chunk = gg_list_int(control, "chunk.size", 0, 0, INT_MAX, BAD_CTL);
    const int block_rows = gg_list_int(control, "block.rows", chunk, 0, INT_MAX, BAD_CTL);
    gg_xplan plan;
    gg_data d;
    if (dispatch == R_NilValue) {
        gg_model_data_from_r(X, y, w, offset, &plan, &d);
    } else if (y != R_NilValue) {
        const int p = gg_list_int(load, "p", GG_REQUIRED, 1, INT_MAX, BAD_IN);
        gg_model_data_from_r(R_NilValue, y, w, offset, NULL, &d);
        d.p = p;
    } else {
        /* the rows stay on the nodes (their count in load$rows): no
         * n-vector here at all; the fit's summaries are sums from there */
        memset(&d, 0, sizeof d);
        d.p = gg_list_int(load, "p", GG_REQUIRED, 1, INT_MAX, BAD_IN);
        if (gg_list_elt(load, "rows") == R_NilValue)
            gg_abort(BAD_IN, "a cluster's session without y takes the rows' count (load$rows)");
        d.n = (size_t) gg_list_real(load, "rows", 1, 1, (double) INT_MAX, BAD_IN);
        if (w != R_NilValue || offset != R_NilValue)
            gg_abort(BAD_IN, "a cluster's session without y takes no weights or offset");
    }
    /* (no prior weights, every one 1: only a device keeps none; the CPU
     * backend reads them row by row) */
    if (dispatch == R_NilValue && d.pw == NULL && !(pw_ones && mode == 2))
        gg_abort(BAD_IN, "a model session without prior weights needs unit_weights and "
                         "the device required");
    d.pw_ones = pw_ones;
    d.lean_rows = lean_rows;
    if (ar_rho != 0) {
        if (!(fabs(ar_rho) < 1))
            gg_abort(BAD_IN, "AR1 residuals need |rho| < 1");
        if (ar_start != R_NilValue && (TYPEOF(ar_start) != REALSXP || (size_t) XLENGTH(ar_start) != d.n))
            gg_abort(BAD_IN, "ar_start must be a double vector, one per row");
        d.ar_rho = ar_rho;
        d.ar_start = ar_start == R_NilValue ? NULL : REAL(ar_start);
    }

    SEXP keep = PROTECT(Rf_allocVector(VECSXP, 6));
    SET_VECTOR_ELT(keep, 5, dispatch);
    SET_VECTOR_ELT(keep, 0, X);
    SET_VECTOR_ELT(keep, 1, y);
    SET_VECTOR_ELT(keep, 2, w);
    SET_VECTOR_ELT(keep, 3, offset);
    SET_VECTOR_ELT(keep, 4, ar_start);
    SEXP ptr = PROTECT(R_MakeExternalPtr(NULL, tag_session(), keep));
    R_RegisterCFinalizerEx(ptr, session_finalizer, TRUE);
    gg_session *s = calloc(1, sizeof *s);
    double *beta = malloc((size_t) d.p * sizeof(double));
    if (s == NULL || beta == NULL) {
        free(s);
        free(beta);
        gg_abort("gamgpu_host_oom", "out of memory (model session)");
    }
    R_SetExternalPtrAddr(ptr, s);
    s->d = d;
    if (d.xplan != NULL) {
        if (gg_xplan_clone(d.xplan, &s->xplan) != 0)
            gg_abort("gamgpu_host_oom", "out of memory (model session)");   /* the finalizer frees s */
        s->have_xplan = 1;
        s->d.xplan = &s->xplan;
    }
    s->eval_beta = beta;
    s->dispatch = dispatch == R_NilValue ? NULL : dispatch;
    s->mode = mode;
    s->ordinal = ordinal;
    s->nthreads = nthreads;
    s->block_rows = (size_t) block_rows;

    gg_status st;
    gg_status_clear(&st);
    const int prev = gg_threads_set_limit(nthreads);
    gg_r_interrupt_arm();
    int rc = -1;
    for (int on_device = mode > 0; on_device >= 0; on_device--) {
        gg_status_clear(&st);
        rc = session_load(s, on_device, &st);
        if (rc == 0 || !on_device || mode == 2 || !gg_device_failure(&st))
            break;
        gg_tel_fallback("session", st.msg);
        gg_strlcpy(s->fallback, st.msg, sizeof s->fallback);
    }
    rc = gg_r_interrupt_disarm(rc, &st, "loading the model session");
    gg_threads_set_limit(prev);
    if (rc != 0)
        gg_raise(&st);     /* the finalizer frees s */
    UNPROTECT(2);
    return ptr;
}

/* Whether X is the session's X: the R object it was opened with or
 * `alias` (one the caller found equal before and keeps), or a double
 * matrix of its shape with the same bits -- the device's copy then serves
 * it.  (gam.fit5() hands the location-scale ll() a new but equal X on
 * each of its calls: R/family_ls_rows.R.) */
SEXP gg_session_same_x_r(SEXP ptr, SEXP X, SEXP alias)
{
    gg_session *s = session_get(ptr);
    SEXP own = VECTOR_ELT(R_ExternalPtrProtected(ptr), 0);
    if (X == own || X == alias)
        return Rf_ScalarLogical(TRUE);
    if (TYPEOF(own) != REALSXP || !Rf_isMatrix(X) || TYPEOF(X) != REALSXP ||
        (size_t) Rf_nrows(X) != s->d.n || Rf_ncols(X) != s->d.p)
        return Rf_ScalarLogical(FALSE);
    return Rf_ScalarLogical(memcmp(REAL(X), REAL(own),
                                   s->d.n * (size_t) s->d.p * sizeof(double)) == 0);
}

const gg_data *gg_session_data(SEXP ptr) { return &session_get(ptr)->d; }

const char *gg_session_fallback(SEXP ptr) { return session_get(ptr)->fallback; }

void gg_session_load_seconds(SEXP ptr, double *transfer, double *build)
{
    const gg_session *s = session_get(ptr);
    *transfer = s->load_transfer;
    *build = s->load_build;
}

typedef struct call_ctx { gg_session_fn fn; void *ctx; } call_ctx;

static int op_call(gg_session *s, void *ctx_, gg_status *st)
{
    const call_ctx *c = ctx_;
    return c->fn(&s->be, &s->d, c->ctx, st);
}

void gg_session_call(SEXP ptr, gg_session_fn fn, void *ctx, const char *what)
{
    gg_session *s = session_get(ptr);
    call_ctx c = {fn, ctx};
    session_run(s, op_call, &c, what);
}

SEXP gg_session_close_r(SEXP ptr)
{
    if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != tag_session())
        gg_abort(BAD_IN, "not a gamgpu model session");
    session_finalizer(ptr);
    return R_NilValue;
}

/* Where the session runs ("cuda:0", "cpu"), why it left the device
 * ("" if it did not), the backend's work counters, its seconds in copies
 * between host and device, in row-wise work and in building X, and where
 * the outer iteration's rows were last computed ("cuda:0": kept on the
 * device; "cpu": in host memory; "": never), and where X is held
 * (fit$device$placement's words: "device (X resident)", "host", ...). */
SEXP gg_session_info_r(SEXP ptr)
{
    gg_session *s = session_get(ptr);
    const char *names[] = {"device", "fallback", "backend", "grams", "xbeta", "row_state",
                           "t_transfer", "t_rows", "t_build", "rows", "placement"};
    SEXP out = PROTECT(gg_named_list(11, names));
    SET_VECTOR_ELT(out, 0, gg_scalar_string(s->device));
    SET_VECTOR_ELT(out, 1, gg_scalar_string(s->fallback));
    SET_VECTOR_ELT(out, 2, gg_scalar_string(s->be.ops->name));
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal((double) s->be.n_gram));
    SET_VECTOR_ELT(out, 4, Rf_ScalarReal((double) s->be.n_xbeta));
    SET_VECTOR_ELT(out, 5, Rf_ScalarReal((double) s->be.n_row_state));
    SET_VECTOR_ELT(out, 6, Rf_ScalarReal(s->be.t_transfer));
    SET_VECTOR_ELT(out, 7, Rf_ScalarReal(s->be.t_rows));
    SET_VECTOR_ELT(out, 8, Rf_ScalarReal(s->be.t_build));
    SET_VECTOR_ELT(out, 9, gg_scalar_string(!s->rows_ever ? "" : s->rows.on_backend ? s->device : "cpu"));
    SET_VECTOR_ELT(out, 10, gg_scalar_string(s->be.placement[0] ? s->be.placement : "host"));
    UNPROTECT(1);
    return out;
}

/* ---- the operations --------------------------------------------------- */

static const double *double_arg(SEXP v, R_xlen_t len, const char *what)
{
    if (TYPEOF(v) != REALSXP || XLENGTH(v) != len) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s must be a double vector of length %.0f", what,
                 (double) len);
        gg_abort(BAD_IN, msg);
    }
    return REAL(v);
}

typedef struct eval_ctx {
    int want_gram;
    double dev, zwz, *A, *b;
} eval_ctx;

static int op_eval(gg_session *s, void *ctx_, gg_status *st)
{
    eval_ctx *c = ctx_;
    s->have_eval = 1;
    s->rows.have = 0;        /* the rows are the last eval's: now stale */
    int rc = eval_rows(s, &c->dev, st);
    if (rc == 0 && c->want_gram)
        rc = s->be.ops->gram(&s->be, c->A, c->b, &c->zwz, st);
    return rc;
}

/* The penalized IRLS row state at beta (NULL: the family's starting
 * values): eta = X beta + offset, then mu, Fisher's weights w and the
 * working response z; returns the deviance and, with gram TRUE, X'WX,
 * X'Wz and z'Wz at that state (NA without). */
SEXP gg_session_eval_r(SEXP ptr, SEXP beta, SEXP family, SEXP link, SEXP gram, SEXP theta)
{
    gg_session *s = session_get(ptr);
    const int p = s->d.p;
    const int start = beta == R_NilValue;
    const double *b0 = start ? NULL : double_arg(beta, p, "beta");
    const gg_family fam = gg_family_or_abort(family, link, theta);
    const int want = Rf_asLogical(gram) == TRUE;
    const char *names[] = {"dev", "XtWX", "XtWz", "zWz"};
    SEXP out = PROTECT(gg_named_list(4, names));
    SEXP A = PROTECT(Rf_allocMatrix(REALSXP, want ? p : 0, want ? p : 0));
    SEXP b = PROTECT(Rf_allocVector(REALSXP, want ? p : 0));
    s->eval_start = start;
    if (!start)
        memcpy(s->eval_beta, b0, (size_t) p * sizeof(double));
    s->eval_fam = fam;
    eval_ctx c = {want, 0, 0, REAL(A), REAL(b)};
    session_run(s, op_eval, &c, "the penalized IRLS rows");
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(c.dev));
    SET_VECTOR_ELT(out, 1, A);
    SET_VECTOR_ELT(out, 2, b);
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal(want ? c.zwz : NA_REAL));
    UNPROTECT(3);
    return out;
}

typedef struct fetch_ctx { gg_vec which; double *out; } fetch_ctx;

static int op_fetch(gg_session *s, void *ctx_, gg_status *st)
{
    fetch_ctx *c = ctx_;
    if (!s->have_eval)
        return gg_fail(st, BAD_IN, "a model session's fetch needs an eval first");
    return s->be.ops->fetch(&s->be, c->which, c->out, st);
}

/* eta (offset included) or mu of the last eval, as an n-vector. */
SEXP gg_session_fetch_r(SEXP ptr, SEXP which)
{
    gg_session *s = session_get(ptr);
    const char *wh = gg_as_utf8(which, "which", BAD_IN);
    fetch_ctx c;
    if (strcmp(wh, "eta") == 0)
        c.which = GG_VEC_ETA;
    else if (strcmp(wh, "mu") == 0)
        c.which = GG_VEC_MU;
    else
        gg_abort(BAD_IN, "a model session fetches \"eta\" or \"mu\"");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) s->d.n));
    c.out = REAL(out);
    session_run(s, op_fetch, &c, "fetching a row vector");
    UNPROTECT(1);
    return out;
}

/* list(XtWX = p x p, XtWz = p[, zWz]) for an operation to fill: *A and *b
 * point into it (zWz, with zwz, is the caller's to set). */
static SEXP gram_result(int p, int zwz, double **A, double **b)
{
    const char *names[] = {"XtWX", "XtWz", "zWz"};
    SEXP out = PROTECT(gg_named_list(zwz ? 3 : 2, names));
    SET_VECTOR_ELT(out, 0, Rf_allocMatrix(REALSXP, p, p));
    SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, p));
    *A = REAL(VECTOR_ELT(out, 0));
    *b = REAL(VECTOR_ELT(out, 1));
    UNPROTECT(1);
    return out;
}

typedef struct gram_ctx {
    const double *w, *z, *M;
    double *A, *b, zwz, *h;
} gram_ctx;

static int op_gram(gg_session *s, void *ctx_, gg_status *st)
{
    gram_ctx *c = ctx_;
    int rc = s->be.ops->set_rows(&s->be, c->w, c->z, st);
    if (rc == 0 && c->M == NULL)
        rc = s->be.ops->gram(&s->be, c->A, c->b, &c->zwz, st);
    if (rc == 0 && c->M != NULL)
        rc = s->be.ops->leverage(&s->be, c->M, c->h, st);
    return rc;
}

/* X' diag(w) X, X' diag(w) z and z' diag(w) z, w of any sign. */
SEXP gg_session_gram_r(SEXP ptr, SEXP w, SEXP z)
{
    gg_session *s = session_get(ptr);
    const R_xlen_t n = (R_xlen_t) s->d.n;
    const int p = s->d.p;
    gram_ctx c = {double_arg(w, n, "w"), double_arg(z, n, "z"), NULL, NULL, NULL, 0, NULL};
    SEXP out = PROTECT(gram_result(p, 1, &c.A, &c.b));
    session_run(s, op_gram, &c, "the weighted Gram product");
    SET_VECTOR_ELT(out, 2, Rf_ScalarReal(c.zwz));
    UNPROTECT(1);
    return out;
}

/* h[i] = w[i] x_i' M x_i for M p x p symmetric. */
SEXP gg_session_leverage_r(SEXP ptr, SEXP w, SEXP M)
{
    gg_session *s = session_get(ptr);
    const R_xlen_t n = (R_xlen_t) s->d.n;
    const int p = s->d.p;
    if (!Rf_isMatrix(M) || TYPEOF(M) != REALSXP || Rf_nrows(M) != p || Rf_ncols(M) != p)
        gg_abort(BAD_IN, "M must be a p x p double matrix (p, the columns of X)");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
    /* z is not read by the leverages; w serves as its (ignored) value */
    gram_ctx c = {double_arg(w, n, "w"), REAL(w), REAL(M), NULL, NULL, 0, REAL(out)};
    session_run(s, op_gram, &c, "the leverages");
    UNPROTECT(1);
    return out;
}

typedef struct mul_ctx { int t, k; const double *in; double *out; } mul_ctx;

static int op_mul(gg_session *s, void *ctx_, gg_status *st)
{
    mul_ctx *c = ctx_;
    return c->t ? s->be.ops->xtmul(&s->be, c->in, c->k, c->out, st)
                : s->be.ops->xmul(&s->be, c->in, c->k, c->out, st);
}

/* X B (n x k) for B p x k, or with t TRUE X' V (p x k) for V n x k. */
SEXP gg_session_mul_r(SEXP ptr, SEXP B, SEXP t_)
{
    gg_session *s = session_get(ptr);
    const int t = Rf_asLogical(t_) == TRUE;
    const R_xlen_t rows = t ? (R_xlen_t) s->d.n : s->d.p;
    if (!Rf_isMatrix(B) || TYPEOF(B) != REALSXP || Rf_nrows(B) != rows)
        gg_abort(BAD_IN, t ? "X' V needs V a double matrix with one row per row of X"
                           : "X B needs B a double matrix with one row per column of X");
    const int k = Rf_ncols(B);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, t ? s->d.p : (int) s->d.n, k));
    mul_ctx c = {t, k, REAL(B), REAL(out)};
    session_run(s, op_mul, &c, t ? "the product X' V" : "the product X B");
    UNPROTECT(1);
    return out;
}

/* ---- the outer iteration's rows (outer_rows.h) -------------------------- */

typedef struct rows_ctx {
    gg_family fam;
    int pearson, gram, vectors;
    double *A;
} rows_ctx;

static int op_rows(gg_session *s, void *ctx_, gg_status *st)
{
    rows_ctx *c = ctx_;
    if (!s->have_eval)
        return gg_fail(st, BAD_IN, "a model session's rows need an eval first");
    int rc = gg_outer_rows_compute(&s->be, &s->d, &c->fam, c->pearson, &s->rows, st);
    if (rc == 0) s->rows_ever = 1;
    if (rc == 0 && c->gram)
        rc = gg_outer_rows_gram(&s->be, &s->rows, c->A, st);
    if (rc == 0 && c->vectors)
        rc = gg_outer_rows_to_host(&s->be, &s->rows, st);
    return rc;
}

static SEXP host_vector(const double *v, size_t n)
{
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    memcpy(REAL(out), v, n * sizeof(double));
    UNPROTECT(1);
    return out;
}

/* Whether the rows' vector `name` is asked for: vectors TRUE (all of them)
 * or the names of those wanted. */
static int vector_wanted(SEXP vectors, const char *name)
{
    if (TYPEOF(vectors) != STRSXP) return 1;
    for (R_xlen_t i = 0; i < XLENGTH(vectors); i++)
        if (strcmp(CHAR(STRING_ELT(vectors, i)), name) == 0) return 1;
    return 0;
}

/* Names the entries of a session's result that hold a value per row
 * (names[first .. first + count - 1]): a cluster's leader joins those over
 * its nodes and sums the rest (R/cluster.R: outer_combine()). */
static void mark_row_vectors(SEXP out, const char **names, int first, int count)
{
    SEXP rv = PROTECT(Rf_allocVector(STRSXP, count));
    for (int i = 0; i < count; i++)
        SET_STRING_ELT(rv, i, Rf_mkChar(names[first + i]));
    Rf_setAttrib(out, Rf_install("row_vectors"), rv);
    UNPROTECT(1);
}

/* gam.fit3's rows at the last eval, kept in the session for
 * gg_session_derivs_r(): Newton's weights and their derivatives (Fisher's
 * too for a link that is not canonical), with pearson the Pearson terms'.
 * Returns the Pearson statistic and s.bar's sum (with pearson), with gram
 * TRUE X' W X with Newton's
 * weights, with vectors TRUE the rows (eta, mu, Newton's weights w and
 * their derivatives w1, w2, Fisher's wF1, wF2, dev1 and with pearson pe1,
 * pe2), or those of them that vectors names. */
SEXP gg_session_rows_r(SEXP ptr, SEXP family, SEXP link, SEXP pearson, SEXP gram,
                       SEXP vectors, SEXP theta)
{
    gg_session *s = session_get(ptr);
    const int p = s->d.p, want = Rf_asLogical(gram) == TRUE;
    const int vec = TYPEOF(vectors) == STRSXP ? XLENGTH(vectors) > 0
                                              : Rf_asLogical(vectors) == TRUE;
    rows_ctx c = {gg_family_or_abort(family, link, theta), Rf_asLogical(pearson) == TRUE,
                  want, vec, NULL};
    const char *names[] = {"pearson", "XtWX", "eta", "mu", "w", "w1", "w2", "wF1", "wF2",
                           "dev1", "pe1", "pe2", "sbar_sum"};
    SEXP out = PROTECT(gg_named_list(13, names));
    SEXP A = PROTECT(Rf_allocMatrix(REALSXP, want ? p : 0, want ? p : 0));
    c.A = REAL(A);
    session_run(s, op_rows, &c, "the outer iteration's rows");
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(s->rows.pearson_stat));
    SET_VECTOR_ELT(out, 12, Rf_ScalarReal(s->rows.sbar_sum));
    if (want) SET_VECTOR_ELT(out, 1, A);
    if (vec) {
        const gg_outer_rows *r = &s->rows;
        const double *v[] = {r->eta, r->mu, r->w, r->w1, r->w2, r->fisher ? r->w1 : r->wF1,
                             r->fisher ? r->w2 : r->wF2, r->dev1, r->pearson ? r->pe1 : NULL,
                             r->pearson ? r->pe2 : NULL};
        for (int i = 0; i < 10; i++)
            if (v[i] != NULL && vector_wanted(vectors, names[2 + i]))
                SET_VECTOR_ELT(out, 2 + i, host_vector(v[i], s->d.n));
    }
    mark_row_vectors(out, names, 2, 10);
    UNPROTECT(2);
    return out;
}

typedef struct newton_ctx {
    gg_family fam;
    double *A, *b;
    int ok;
} newton_ctx;

static int op_newton(gg_session *s, void *ctx_, gg_status *st)
{
    newton_ctx *c = ctx_;
    if (!s->have_eval)
        return gg_fail(st, BAD_IN, "a model session's Newton step needs an eval first");
    return gg_outer_newton_gram(&s->be, &s->d, &c->fam, &s->rows, c->A, c->b, &c->ok, st);
}

/* Newton's penalized IRLS step at the last eval (gam.fit3's weights with
 * its alpha): X'WX and X'Wz, or NULL where some weight is not positive. */
SEXP gg_session_newton_gram_r(SEXP ptr, SEXP family, SEXP link, SEXP theta)
{
    gg_session *s = session_get(ptr);
    const int p = s->d.p;
    newton_ctx c = {gg_family_or_abort(family, link, theta), NULL, NULL, 0};
    SEXP out = PROTECT(gram_result(p, 0, &c.A, &c.b));
    session_run(s, op_newton, &c, "Newton's penalized IRLS step");
    UNPROTECT(1);
    return c.ok ? out : R_NilValue;
}

static int op_derivs(gg_session *s, void *ctx_, gg_status *st)
{
    return gg_outer_derivs_compute(&s->be, &s->rows, ctx_, st);
}

/* The criterion's derivative products at the rows of gg_session_rows_r()
 * (outer_rows.h: gg_outer_derivs): db p x M, Ml p x p, flags c(fisher, pe,
 * pearson). */
SEXP gg_session_derivs_r(SEXP ptr, SEXP db, SEXP Ml, SEXP flags)
{
    gg_session *s = session_get(ptr);
    const int p = s->d.p;
    if (!s->rows.have)
        gg_abort(BAD_IN, "a model session's derivatives need its rows first");
    if (!Rf_isMatrix(db) || TYPEOF(db) != REALSXP || Rf_nrows(db) != p)
        gg_abort(BAD_IN, "db must be a double matrix with one row per column of X");
    if (!Rf_isMatrix(Ml) || TYPEOF(Ml) != REALSXP || Rf_nrows(Ml) != p || Rf_ncols(Ml) != p)
        gg_abort(BAD_IN, "Ml must be a p x p double matrix (p, the columns of X)");
    if (TYPEOF(flags) != INTSXP || (XLENGTH(flags) != 3 && XLENGTH(flags) != 4))
        gg_abort(BAD_IN, "flags must be 3 or 4 integers");
    const int M = Rf_ncols(db), np = M * (M + 1) / 2;
    const int *fl = INTEGER(flags);
    const int nth = XLENGTH(flags) == 4 ? fl[3] : 0;
    if (nth != 0 && (!s->rows.efam || nth != s->rows.nth || M < nth))
        gg_abort(BAD_IN, "theta's derivative products (flags[4] = nth) need an extended "
                 "family's rows with nth theta values and theta's columns first in db");
    gg_outer_derivs o;
    memset(&o, 0, sizeof o);
    o.M = M;
    o.db = REAL(db);
    o.Ml = REAL(Ml);
    o.fisher = fl[0];
    o.pe = fl[1];
    o.pearson = fl[2];
    o.nth = nth;
    const char *names[] = {"dH", "RHS", "Xd", "Xp", "u", "hww", "hd", "Dw", "Dp2", "tg"};
    SEXP out = PROTECT(gg_named_list(10, names));
    SEXP dH = PROTECT(Rf_alloc3DArray(REALSXP, p, p, M));
    SEXP RHS = PROTECT(Rf_allocMatrix(REALSXP, p, np));
    SEXP Xd = PROTECT(Rf_allocVector(REALSXP, o.pe ? p : 0));
    SEXP Xp = PROTECT(Rf_allocVector(REALSXP, o.pearson ? p : 0));
    SEXP u = PROTECT(Rf_allocVector(REALSXP, p));
    SEXP hww = PROTECT(Rf_allocMatrix(REALSXP, M, M));
    SEXP hd = PROTECT(Rf_allocVector(REALSXP, M));
    SEXP Dw = PROTECT(Rf_allocMatrix(REALSXP, o.pe ? M : 0, o.pe ? M : 0));
    SEXP Dp2 = PROTECT(Rf_allocMatrix(REALSXP, o.pearson ? M : 0, o.pearson ? M : 0));
    SEXP tg = PROTECT(Rf_allocMatrix(REALSXP, nth, nth ? M : 0));
    o.tg = REAL(tg);
    o.dH = REAL(dH);
    o.RHS = REAL(RHS);
    o.Xd = REAL(Xd);
    o.Xp = REAL(Xp);
    o.u = REAL(u);
    o.hww = REAL(hww);
    o.hd = REAL(hd);
    o.Dw = REAL(Dw);
    o.Dp2 = REAL(Dp2);
    session_run(s, op_derivs, &o, "the outer iteration's derivatives");
    SEXP parts[] = {dH, RHS, Xd, Xp, u, hww, hd, Dw, Dp2, tg};
    for (int i = 0; i < 10; i++) SET_VECTOR_ELT(out, i, parts[i]);
    UNPROTECT(11);
    return out;
}

/* ---- an extended family's rows (outer_rows.h, efam_outer.h) ------------ */

/* An extended family for the outer rows (efam_outer.h's
 * gg_fm_ef_outer_ok(): nb(), tw(), betar(), scat(), ziP(), ocat(), the
 * censored families): the family and link by name ("negbin" for nb()),
 * its theta (negbin: exp of ef's) and parameters ef (efam_r.c's list) */
static gg_family ef_family_or_abort(SEXP family, SEXP link, SEXP theta, SEXP ef)
{
    gg_family fam = gg_family_or_abort(family, link, theta);
    fam.ef = gg_efpar_or_abort(ef);
    fam.efam = 1;
    if (!gg_fm_ef_outer_ok((int) fam.fam, gg_family_link(&fam), &fam.ef) ||
        fam.ef.nth > GG_FM_EFO_MAXTH)
        gg_abort("gamgpu_bad_family", "the outer iteration's extended-family rows are nb()'s, "
                 "tw()'s, betar()'s, cnorm()'s and clog()'s (one theta), scat()'s and ziP()'s "
                 "(two), ocat()'s (one to four cut points to estimate) and cpois()'s, with "
                 "mgcv's links for them");
    return fam;
}

/* The penalized IRLS row state of an extended family at beta (NULL: the
 * family's starting mu, eta = linkfun(mu)): eta = X beta + offset, mu;
 * returns the deviance (not finite where mu is not valid). */
SEXP gg_session_ef_eval_r(SEXP ptr, SEXP beta, SEXP family, SEXP link, SEXP theta, SEXP ef)
{
    gg_session *s = session_get(ptr);
    const int start = beta == R_NilValue;
    const double *b0 = start ? NULL : double_arg(beta, s->d.p, "beta");
    const gg_family fam = ef_family_or_abort(family, link, theta, ef);
    s->eval_start = start;
    if (!start)
        memcpy(s->eval_beta, b0, (size_t) s->d.p * sizeof(double));
    s->eval_fam = fam;
    eval_ctx c = {0, 0, 0, NULL, NULL};
    session_run(s, op_eval, &c, "the extended family's penalized IRLS rows");
    return Rf_ScalarReal(c.dev);
}

typedef struct ef_rows_ctx {
    int level, gram, xg, vectors;
    double *A, *Xg;
} ef_rows_ctx;

static int op_ef_rows(gg_session *s, void *ctx_, gg_status *st)
{
    ef_rows_ctx *c = ctx_;
    if (!s->have_eval || !s->eval_fam.efam)
        return gg_fail(st, BAD_IN, "an extended family's rows need its eval first");
    int rc = gg_outer_ef_rows_compute(&s->be, &s->d, &s->eval_fam, c->level, &s->rows, st);
    if (rc == 0) s->rows_ever = 1;
    if (rc == 0 && c->gram)
        rc = gg_outer_rows_gram(&s->be, &s->rows, c->A, st);
    if (rc == 0 && c->xg)
        rc = gg_outer_ef_xg(&s->be, &s->rows, c->Xg, st);
    if (rc == 0 && c->vectors)
        rc = gg_outer_rows_to_host(&s->be, &s->rows, st);
    return rc;
}

/* An extended family's rows at the last ef eval, kept in the session:
 * level 0 (Newton's weights w, dev1 = Deta, Fisher's weights wf) or 2 (and
 * the derivatives' rows).  Returns the count of rows whose derivatives are
 * not finite (bad), sum Dth (nth) and sum Dth2 (theta's pairs, mgcv's
 * packing; level 2), with gram TRUE X'WX (Newton's weights), with xg TRUE
 * X' Detath / 2 (p x nth), with vectors TRUE eta, mu, w and wf. */
SEXP gg_session_ef_rows_r(SEXP ptr, SEXP level, SEXP gram, SEXP xg, SEXP vectors)
{
    gg_session *s = session_get(ptr);
    const int p = s->d.p;
    ef_rows_ctx c = {gg_as_int(level, "level", 0, 2, BAD_IN), Rf_asLogical(gram) == TRUE,
                     Rf_asLogical(xg) == TRUE, Rf_asLogical(vectors) == TRUE, NULL, NULL};
    if (c.level == 1)
        gg_abort(BAD_IN, "an extended family's rows are at level 0 or 2");
    if (c.xg && c.level < 2)
        gg_abort(BAD_IN, "X' Detath needs the level-2 rows");
    const char *names[] = {"bad", "Dth", "Dth2", "XtWX", "Xg", "eta", "mu", "w", "wf"};
    SEXP out = PROTECT(gg_named_list(9, names));
    SEXP A = PROTECT(Rf_allocMatrix(REALSXP, c.gram ? p : 0, c.gram ? p : 0));
    const int nth = s->have_eval ? s->eval_fam.ef.nth : 0, npk = GG_FM_EFO_NPK(nth);
    SEXP Xg = PROTECT(Rf_allocMatrix(REALSXP, c.xg ? p : 0, c.xg ? nth : 0));
    c.A = REAL(A);
    c.Xg = REAL(Xg);
    session_run(s, op_ef_rows, &c, "the extended family's outer rows");
    const gg_outer_rows *r = &s->rows;
    SEXP Dth = PROTECT(Rf_allocVector(REALSXP, c.level >= 2 ? nth : 1));
    SEXP Dth2 = PROTECT(Rf_allocVector(REALSXP, c.level >= 2 ? npk : 1));
    for (int k = 0; k < XLENGTH(Dth); k++)
        REAL(Dth)[k] = c.level >= 2 ? r->ef_sums[1 + k] : NA_REAL;
    for (int k = 0; k < XLENGTH(Dth2); k++)
        REAL(Dth2)[k] = c.level >= 2 ? r->ef_sums[1 + nth + k] : NA_REAL;
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(r->ef_sums[0]));
    SET_VECTOR_ELT(out, 1, Dth);
    SET_VECTOR_ELT(out, 2, Dth2);
    if (c.gram) SET_VECTOR_ELT(out, 3, A);
    if (c.xg) SET_VECTOR_ELT(out, 4, Xg);
    if (c.vectors) {
        const double *v[] = {r->eta, r->mu, r->w, r->ewf};
        for (int i = 0; i < 4; i++) SET_VECTOR_ELT(out, 5 + i, host_vector(v[i], s->d.n));
    }
    mark_row_vectors(out, names, 5, 4);
    UNPROTECT(5);
    return out;
}

typedef struct ef_newton_ctx {
    int mask;
    double *A, *b;
} ef_newton_ctx;

static int op_ef_newton(gg_session *s, void *ctx_, gg_status *st)
{
    ef_newton_ctx *c = ctx_;
    if (!s->rows.have || !s->rows.efam)
        return gg_fail(st, BAD_IN, "an extended family's Newton step needs its rows first");
    return gg_outer_ef_newton(&s->be, &s->d, &s->rows, c->mask, c->A, c->b, st);
}

/* gam.fit4's Newton step at an extended family's rows: X'WX and X'W(eta -
 * offset) - X' Deta / 2 (as XtWX, XtWz), with mask TRUE the rows of a
 * Newton weight that is not positive left out. */
SEXP gg_session_ef_newton_r(SEXP ptr, SEXP mask)
{
    gg_session *s = session_get(ptr);
    ef_newton_ctx c = {Rf_asLogical(mask) == TRUE, NULL, NULL};
    SEXP out = PROTECT(gram_result(s->d.p, 0, &c.A, &c.b));
    session_run(s, op_ef_newton, &c, "the extended family's Newton step");
    UNPROTECT(1);
    return out;
}
