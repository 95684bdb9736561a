/* cox_r.c -- R glue of cox.ph()'s log partial likelihood (family_cox.c),
 * which the general-family route's ll() calls once per stratum
 * (R/general_family.R): on R's X, or on a model session's X (the
 * device's, for a GPU fit: cuda_cox.c). */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cox_r.h"
#include "errors_r.h"
#include "family_cox.h"
#include "interrupt_r.h"
#include "matprod_cpu.h"
#include "session_r.h"
#include "sexp_r.h"
#include "threads.h"

static const double *real_matrix(SEXP x, R_xlen_t rows, int cols, const char *what)
{
    if (!Rf_isReal(x) || XLENGTH(x) != rows * (R_xlen_t) cols) {
        char msg[160];
        snprintf(msg, sizeof msg, "cox.ph()'s %s must be a double matrix of %lld x %d",
                 what, (long long) rows, cols);
        gg_abort("gamgpu_bad_input", msg);
    }
    return REAL(x);
}

/* The arguments both entry points share, checked for n rows and p
 * columns: the time groups and events, nt, the level and its inputs.
 * gstr: the time groups' strata (integer nt), or NULL for one stratum. */
typedef struct cox_args {
    gg_cox_call c;
    int         nhh;
} cox_args;

static void read_args(R_xlen_t n, int p, SEXP grp, SEXP event, SEXP nt_, SEXP gstr,
                      SEXP level_, SEXP d1b, SEXP d2b, SEXP W, cox_args *a)
{
    if (!Rf_isInteger(grp) || XLENGTH(grp) != n || !Rf_isInteger(event) || XLENGTH(event) != n)
        gg_abort("gamgpu_bad_input", "cox.ph()'s time groups and events must be integer vectors, one per row");
    a->c.n = (size_t) n;
    a->c.p = p;
    a->c.grp = INTEGER(grp);
    a->c.event = INTEGER(event);
    a->c.nt = gg_as_int(nt_, "the number of event times", 0, INT_MAX, "gamgpu_bad_input");
    a->c.gstr = NULL;
    if (gstr != R_NilValue) {
        if (!Rf_isInteger(gstr) || XLENGTH(gstr) != a->c.nt)
            gg_abort("gamgpu_bad_input", "cox.ph()'s strata must be an integer vector, one per time group");
        a->c.gstr = INTEGER(gstr);
    }
    a->c.level = gg_as_int(level_, "the derivative level", -1, 3, "gamgpu_bad_input");
    if (a->c.level == 1) gg_abort("gamgpu_bad_input", "cox.ph()'s level 1 is level 2's traces (R)");
    a->c.M = 0;
    if (a->c.level >= 2) {
        if (!Rf_isMatrix(d1b)) gg_abort("gamgpu_bad_input", "cox.ph()'s d1b must be a matrix");
        a->c.M = INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[1];
        a->c.d1b = real_matrix(d1b, p, a->c.M, "d1b");
    }
    a->nhh = a->c.M * (a->c.M + 1) / 2;
    if (a->c.level >= 3) {
        a->c.d2b = real_matrix(d2b, p, a->nhh, "d2b");
        a->c.W = real_matrix(W, p, p, "W");
    }
}

/* list(l, lb, lbb, d1H, trHid2H) for the level, its vectors to fill */
static SEXP result(const cox_args *a, gg_cox_out *o)
{
    const int p = a->c.p, level = a->c.level;
    const char *names[] = {"l", "lb", "lbb", "d1H", "trHid2H"};
    SEXP out = PROTECT(gg_named_list(5, names));
    if (level >= 0) {
        SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, p));
        SET_VECTOR_ELT(out, 2, Rf_allocMatrix(REALSXP, p, p));
    }
    if (level == 2) SET_VECTOR_ELT(out, 3, Rf_alloc3DArray(REALSXP, p, p, a->c.M));
    if (level >= 3) SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, a->nhh));
    o->lp = 0.0;
    o->g = level >= 0 ? REAL(VECTOR_ELT(out, 1)) : NULL;
    o->H = level >= 0 ? REAL(VECTOR_ELT(out, 2)) : NULL;
    o->d1H = level == 2 ? REAL(VECTOR_ELT(out, 3)) : NULL;
    o->trd2H = level >= 3 ? REAL(VECTOR_ELT(out, 4)) : NULL;
    UNPROTECT(1);
    return out;
}

/* X's rows n and columns p, X a double matrix and eta n doubles */
static void x_dims(SEXP X, SEXP eta, R_xlen_t *n, int *p)
{
    if (!Rf_isReal(X) || !Rf_isMatrix(X))
        gg_abort("gamgpu_bad_input", "cox.ph()'s X must be a double matrix");
    SEXP dim = Rf_getAttrib(X, R_DimSymbol);
    *n = INTEGER(dim)[0];
    *p = INTEGER(dim)[1];
    real_matrix(eta, *n, 1, "eta");
}

/* eta (n), X (n x p), grp and event (integer n), nt, gstr (integer nt, or
 * NULL: one stratum), level (-1, 0, 2, 3),
 * d1b (p x M), d2b (p x M (M + 1) / 2), W (p x p), nthreads: list(l, lb,
 * lbb, d1H, trHid2H): d1H at level 2, trHid2H at level 3, else NULL. */
SEXP gg_cox_ll_r(SEXP eta, SEXP X, SEXP grp, SEXP event, SEXP nt_, SEXP gstr, SEXP level_,
                 SEXP d1b, SEXP d2b, SEXP W, SEXP nthreads)
{
    R_xlen_t n;
    int p;
    x_dims(X, eta, &n, &p);
    cox_args a = {{0}, 0};
    read_args(n, p, grp, event, nt_, gstr, level_, d1b, d2b, W, &a);
    gg_cox_out o;
    SEXP out = PROTECT(result(&a, &o));
    gg_cox_rows rows = {REAL(eta), REAL(X), (size_t) n, p, a.c.grp, a.c.event, a.c.nt, a.c.gstr};
    gg_status st;
    gg_status_clear(&st);
    const int nth = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    gg_r_interrupt_arm();
    const int prev = gg_threads_set_limit(nth);
    int rc = gg_cox_ll(&rows, a.c.level, a.c.d1b, a.c.M, a.c.d2b, a.c.W, &o, &st);
    gg_threads_set_limit(prev);
    if (gg_r_interrupt_disarm(rc, &st, "cox.ph()'s log likelihood") != 0) gg_raise(&st);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(o.lp));
    UNPROTECT(1);
    return out;
}

typedef struct cox_session_ctx {
    const gg_cox_call *c;
    gg_cox_out        *o;
} cox_session_ctx;

/* on the session's backend: its device's, else gg_cox_ll() on its host X */
static int cox_on_session(gg_backend *be, const gg_data *d, void *ctx_, gg_status *st)
{
    cox_session_ctx *x = ctx_;
    const gg_cox_call *c = x->c;
    if (be->ops->cox_ll != NULL)
        return be->ops->cox_ll(be, c, x->o, st);
    const double *X = d->X != NULL ? d->X : be->ops->host_x != NULL ? be->ops->host_x(be) : NULL;
    if (X == NULL)
        return gg_fail(st, "gamgpu_internal_error", "cox.ph() rows: the session holds no X in host memory");
    double *eta = malloc((c->n ? c->n : 1) * sizeof(double));
    if (eta == NULL) return gg_fail(st, "gamgpu_host_oom", "out of memory (cox.ph() rows)");
    if (c->n > 0 && gg_matprod(X, c->n, c->n, c->p, c->coef, 1, eta, c->n, st) != 0) {
        free(eta);
        return -1;
    }
    if (c->off != NULL)
        for (size_t i = 0; i < c->n; i++) eta[i] += c->off[i];
    gg_cox_rows rows = {eta, X, c->n, c->p, c->grp, c->event, c->nt, c->gstr};
    const int rc = gg_cox_ll(&rows, c->level, c->d1b, c->M, c->d2b, c->W, x->o, st);
    free(eta);
    return rc;
}

/* The ll() of gg_cox_ll_r() over a model session's X (R/general_family.R),
 * eta = X coef + offset (NULL: none) made where X is. */
SEXP gg_cox_session_ll_r(SEXP ptr, SEXP coef, SEXP offset, SEXP grp, SEXP event, SEXP nt_,
                         SEXP gstr, SEXP level_, SEXP d1b, SEXP d2b, SEXP W)
{
    const gg_data *d = gg_session_data(ptr);
    cox_args a = {{0}, 0};
    read_args((R_xlen_t) d->n, d->p, grp, event, nt_, gstr, level_, d1b, d2b, W, &a);
    a.c.coef = real_matrix(coef, d->p, 1, "coefficients");
    a.c.off = offset == R_NilValue ? NULL : real_matrix(offset, (R_xlen_t) d->n, 1, "offset");
    gg_cox_out o;
    SEXP out = PROTECT(result(&a, &o));
    cox_session_ctx x = {&a.c, &o};
    gg_session_call(ptr, cox_on_session, &x, "cox.ph()'s log likelihood");
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(o.lp));
    UNPROTECT(1);
    return out;
}

/* mgcv's cox.ph() hazard() (family_cox_hazard.c): eta (n), X (n x p), grp
 * and event (integer n), nt, wt (n), order (integer n, or NULL),
 * residuals (TRUE: Rs and Rc), nthreads: list(h, q, km, a, Rs, Rc), Rs
 * NA on the rows of zero weight as hazard() leaves it. */
SEXP gg_cox_hazard_r(SEXP eta, SEXP X, SEXP grp, SEXP event, SEXP nt_, SEXP wt, SEXP order,
                     SEXP residuals, SEXP nthreads)
{
    R_xlen_t n;
    int p;
    x_dims(X, eta, &n, &p);
    real_matrix(wt, n, 1, "prior weights");
    cox_args a = {{0}, 0};
    read_args(n, p, grp, event, nt_, R_NilValue, Rf_ScalarInteger(-1), R_NilValue, R_NilValue,
              R_NilValue, &a);
    if (order != R_NilValue) {
        if (!Rf_isInteger(order) || XLENGTH(order) != n)
            gg_abort("gamgpu_bad_input", "cox.ph()'s row order must be an integer vector, one per row");
        char *seen = (char *) R_alloc((size_t) n + 1, 1);
        memset(seen, 0, (size_t) n + 1);
        for (R_xlen_t i = 0; i < n; i++) {
            const int k = INTEGER(order)[i];
            if (k < 1 || k > n || seen[k])
                gg_abort("gamgpu_bad_input", "cox.ph()'s row order must be a permutation of 1..n");
            seen[k] = 1;
        }
    }
    const int resid = Rf_asLogical(residuals) == TRUE;
    const int nt = a.c.nt;
    const char *names[] = {"h", "q", "km", "a", "Rs", "Rc"};
    SEXP out = PROTECT(gg_named_list(6, names));
    gg_cox_hazard_out o;
    SET_VECTOR_ELT(out, 0, Rf_allocVector(REALSXP, nt));
    SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, nt));
    SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, nt));
    SET_VECTOR_ELT(out, 3, Rf_allocMatrix(REALSXP, p, nt));
    o.h = REAL(VECTOR_ELT(out, 0));
    o.q = REAL(VECTOR_ELT(out, 1));
    o.km = REAL(VECTOR_ELT(out, 2));
    o.a = REAL(VECTOR_ELT(out, 3));
    o.Rs = o.Rc = NULL;
    if (resid) {
        SET_VECTOR_ELT(out, 4, Rf_allocMatrix(REALSXP, (int) n, p));
        SET_VECTOR_ELT(out, 5, Rf_allocMatrix(REALSXP, (int) n, p));
        o.Rs = REAL(VECTOR_ELT(out, 4));
        o.Rc = REAL(VECTOR_ELT(out, 5));
    }
    gg_cox_rows rows = {REAL(eta), REAL(X), (size_t) n, p, a.c.grp, a.c.event, nt};
    gg_status st;
    gg_status_clear(&st);
    const int nth = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    gg_r_interrupt_arm();
    const int prev = gg_threads_set_limit(nth);
    const int rc = gg_cox_hazard(&rows, REAL(wt), order == R_NilValue ? NULL : INTEGER(order), nth,
                                 &o, &st);
    gg_threads_set_limit(prev);
    if (gg_r_interrupt_disarm(rc, &st, "cox.ph()'s hazard") != 0) gg_raise(&st);
    if (resid) {
        const double *w = REAL(wt);
        const int *ord = order == R_NilValue ? NULL : INTEGER(order);
        for (R_xlen_t i = 0; i < n; i++) {
            if (w[i] != 0) continue;
            const R_xlen_t row = ord != NULL ? ord[i] - 1 : i;
            for (int c = 0; c < p; c++) o.Rs[row + (R_xlen_t) c * n] = NA_REAL;
        }
    }
    UNPROTECT(1);
    return out;
}
