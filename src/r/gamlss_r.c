/* gamlss_r.c -- R glue of the location-scale families' products
 * (family_gamlss.c), gamgpu's gamlss.gH() for a model matrix, and of their
 * ll() over the rows (family_ls.c) -- on X in R's memory, or on a model
 * session's X, on its device where it has one (cuda_ls.c)
 * (R/general_family.R, R/family_ls_rows.R). */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <string.h>

#include "errors_r.h"
#include "family_gamlss.h"
#include "family_ls.h"
#include "gamlss_r.h"
#include "interrupt_r.h"
#include "session_r.h"
#include "sexp_r.h"
#include "threads.h"

static const double *dmat(SEXP x, R_xlen_t rows, R_xlen_t cols, const char *what)
{
    if (!Rf_isReal(x) || XLENGTH(x) < rows * cols || (rows > 0 && XLENGTH(x) % rows != 0)) {
        char msg[160];
        snprintf(msg, sizeof msg, "the location-scale products' %s must be a double matrix of %lld rows",
                 what, (long long) rows);
        gg_abort("gamgpu_bad_input", msg);
    }
    return REAL(x);
}

/* 0-based copies of a 1-based index array of `len` entries in [1, hi] */
static const int *index0(SEXP x, R_xlen_t len, R_xlen_t hi, const char *what)
{
    if (!Rf_isInteger(x) || XLENGTH(x) != len) {
        char msg[160];
        snprintf(msg, sizeof msg, "the location-scale products' %s must be an integer array of %lld",
                 what, (long long) len);
        gg_abort("gamgpu_bad_input", msg);
    }
    int *out = (int *) R_alloc((size_t) (len > 0 ? len : 1), sizeof(int));
    for (R_xlen_t i = 0; i < len; i++) {
        const int v = INTEGER(x)[i];
        if (v == NA_INTEGER || v < 1 || v > hi) {
            char msg[160];
            snprintf(msg, sizeof msg, "the location-scale products' %s has an entry outside 1..%lld",
                     what, (long long) hi);
            gg_abort("gamgpu_bad_input", msg);
        }
        out[i] = v - 1;
    }
    return out;
}

/* r's K and columns from jj (list of K integer vectors: the predictors'
 * columns, 1-based, within X's p) */
static void read_columns(SEXP jj, int p, gg_ls_rows *r)
{
    if (TYPEOF(jj) != VECSXP || XLENGTH(jj) < 1 || XLENGTH(jj) > 64)
        gg_abort("gamgpu_bad_input", "jj must be a list of 1 to 64 index vectors");
    const int K = (int) XLENGTH(jj);
    const int **cols = (const int **) R_alloc((size_t) K, sizeof(int *));
    int *ncol = (int *) R_alloc((size_t) K, sizeof(int));
    for (int k = 0; k < K; k++) {
        SEXP c = VECTOR_ELT(jj, k);
        ncol[k] = (int) XLENGTH(c);
        cols[k] = index0(c, ncol[k], p, "jj");
    }
    r->p = p;
    r->K = K;
    r->cols = cols;
    r->ncol = ncol;
}

/* r's X, n, p, K and columns from X (n x p) and jj */
static void read_model_matrix(SEXP X, SEXP jj, gg_ls_rows *r)
{
    if (!Rf_isReal(X) || !Rf_isMatrix(X))
        gg_abort("gamgpu_bad_input", "the location-scale products' X must be a double matrix");
    SEXP dim = Rf_getAttrib(X, R_DimSymbol);
    memset(r, 0, sizeof *r);
    read_columns(jj, INTEGER(dim)[1], r);
    r->X = REAL(X);
    r->n = (size_t) INTEGER(dim)[0];
}

/* X (n x p), jj (list of K integer vectors: the predictors' columns),
 * l1, l2, l3, l4 (n-row matrices) with i2, i3, i4 (integer arrays K^2,
 * K^3, K^4), d1b (p x M), d2b (p x M (M + 1) / 2), Hm (p x p), deriv (0,
 * 2, 3), nthreads: list(lb, lbb, d1H, trHid2H). */
SEXP gg_ls_gh_r(SEXP X, SEXP jj, SEXP l1, SEXP l2, SEXP i2, SEXP l3, SEXP i3, SEXP l4,
                SEXP i4, SEXP d1b, SEXP d2b, SEXP Hm, SEXP deriv_, SEXP nthreads)
{
    gg_ls_rows r;
    read_model_matrix(X, jj, &r);
    const R_xlen_t n = (R_xlen_t) r.n;
    const int p = r.p, K = r.K;
    const int deriv = gg_as_int(deriv_, "deriv", 0, 3, "gamgpu_bad_input");
    if (deriv == 1) gg_abort("gamgpu_bad_input", "deriv 1 of the location-scale products is mgcv's");
    const R_xlen_t K2 = (R_xlen_t) K * K, K3 = K2 * K, K4 = K3 * K;
    r.l1 = dmat(l1, n, K, "l1");
    r.l2 = dmat(l2, n, 1, "l2");
    r.i2 = index0(i2, K2, XLENGTH(l2) / (n > 0 ? n : 1), "i2");
    int M = 0;
    if (deriv >= 2) {
        r.l3 = dmat(l3, n, 1, "l3");
        r.i3 = index0(i3, K3, XLENGTH(l3) / (n > 0 ? n : 1), "i3");
        if (!Rf_isMatrix(d1b)) gg_abort("gamgpu_bad_input", "d1b must be a matrix");
        M = INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[1];
        if (INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[0] != p || !Rf_isReal(d1b))
            gg_abort("gamgpu_bad_input", "d1b must be a double matrix of p rows");
    }
    const int nhh = M * (M + 1) / 2;
    if (deriv >= 3) {
        r.l4 = dmat(l4, n, 1, "l4");
        r.i4 = index0(i4, K4, XLENGTH(l4) / (n > 0 ? n : 1), "i4");
        if (!Rf_isReal(d2b) || XLENGTH(d2b) != (R_xlen_t) p * nhh)
            gg_abort("gamgpu_bad_input", "d2b must be a double matrix of p x M (M + 1) / 2");
        if (!Rf_isReal(Hm) || XLENGTH(Hm) != (R_xlen_t) p * p)
            gg_abort("gamgpu_bad_input", "Hm must be a double p x p matrix");
    }
    const char *names[] = {"lb", "lbb", "d1H", "trHid2H"};
    SEXP out = PROTECT(gg_named_list(4, names));
    SEXP lb = PROTECT(Rf_allocVector(REALSXP, p));
    SEXP lbb = PROTECT(Rf_allocMatrix(REALSXP, p, p));
    SEXP d1H = PROTECT(deriv >= 2 ? Rf_alloc3DArray(REALSXP, p, p, M) : R_NilValue);
    SEXP tr = PROTECT(deriv >= 3 ? Rf_allocVector(REALSXP, nhh) : R_NilValue);
    gg_status st;
    gg_status_clear(&st);
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    gg_r_interrupt_arm();
    const int prev = gg_threads_set_limit(nt);
    int rc = gg_ls_gh(&r, deriv, deriv >= 2 ? REAL(d1b) : NULL, M,
                      deriv >= 3 ? REAL(d2b) : NULL, deriv >= 3 ? REAL(Hm) : NULL, REAL(lb),
                      REAL(lbb), deriv >= 2 ? REAL(d1H) : NULL, deriv >= 3 ? REAL(tr) : NULL, &st);
    gg_threads_set_limit(prev);
    if (gg_r_interrupt_disarm(rc, &st, "the location-scale family's products") != 0) gg_raise(&st);
    SET_VECTOR_ELT(out, 0, lb);
    SET_VECTOR_ELT(out, 1, lbb);
    SET_VECTOR_ELT(out, 2, d1H);
    SET_VECTOR_ELT(out, 3, tr);
    UNPROTECT(5);
    return out;
}

/* The arguments of a location-scale ll() beside X, y and eta: the model
 * m (its rows' n, p, K and columns already read), deriv, M, d1b, d2b, Hm. */
typedef struct ls_args {
    gg_ls_model   m;
    int           deriv, M;
    const double *d1b, *d2b, *Hm;
} ls_args;

static void read_ll_args(ls_args *a, SEXP coef, SEXP fam, SEXP links, SEXP link_par,
                         SEXP offsets, SEXP deriv_, SEXP i2, SEXP i3, SEXP i4, SEXP d1b,
                         SEXP d2b, SEXP Hm)
{
    gg_ls_model *m = &a->m;
    gg_ls_rows *r = &m->rows;
    const R_xlen_t n = (R_xlen_t) r->n;
    const int p = r->p, K = r->K;
    a->deriv = gg_as_int(deriv_, "deriv", 0, 4, "gamgpu_bad_input");
    if (a->deriv == 2) gg_abort("gamgpu_bad_input", "deriv 2 of the location-scale ll() is mgcv's");
    m->coef = dmat(coef, p, 1, "coef");
    m->fam = gg_as_int(fam, "the family code", 1, 8, "gamgpu_bad_input");
    if (!Rf_isInteger(links) || XLENGTH(links) != K || !Rf_isReal(link_par) ||
        XLENGTH(link_par) != K)
        gg_abort("gamgpu_bad_input", "links and link_par must give one link per predictor");
    gg_fm_link *lk = (gg_fm_link *) R_alloc((size_t) K, sizeof(gg_fm_link));
    for (int k = 0; k < K; k++) {
        lk[k].code = INTEGER(links)[k];
        lk[k].power = REAL(link_par)[k];
    }
    m->links = lk;
    if (TYPEOF(offsets) != VECSXP || XLENGTH(offsets) != K)
        gg_abort("gamgpu_bad_input", "offsets must be a list with one entry per predictor");
    const double **off = (const double **) R_alloc((size_t) K, sizeof(double *));
    for (int k = 0; k < K; k++) {
        SEXP o = VECTOR_ELT(offsets, k);
        off[k] = Rf_isNull(o) ? NULL : dmat(o, n, 1, "offset");
    }
    m->off = off;
    const R_xlen_t K2 = (R_xlen_t) K * K, K3 = K2 * K, K4 = K3 * K;
    r->i2 = index0(i2, K2, K * (K + 1) / 2, "i2");
    r->i3 = index0(i3, K3, (R_xlen_t) K * (K + 1) * (K + 2) / 6, "i3");
    r->i4 = index0(i4, K4, (R_xlen_t) K * (K + 1) * (K + 2) * (K + 3) / 24, "i4");
    a->M = 0;
    if (a->deriv >= 3) {
        if (!Rf_isMatrix(d1b) || !Rf_isReal(d1b) ||
            INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[0] != p)
            gg_abort("gamgpu_bad_input", "d1b must be a double matrix of p rows");
        a->M = INTEGER(Rf_getAttrib(d1b, R_DimSymbol))[1];
        a->d1b = REAL(d1b);
    }
    const int nhh = a->M * (a->M + 1) / 2;
    if (a->deriv >= 4) {
        if (!Rf_isReal(d2b) || XLENGTH(d2b) != (R_xlen_t) p * nhh)
            gg_abort("gamgpu_bad_input", "d2b must be a double matrix of p x M (M + 1) / 2");
        if (!Rf_isReal(Hm) || XLENGTH(Hm) != (R_xlen_t) p * p)
            gg_abort("gamgpu_bad_input", "Hm must be a double p x p matrix");
        a->d2b = REAL(d2b);
        a->Hm = REAL(Hm);
    }
}

/* ll()'s list(l, l0, lb, lbb, d1H, trHid2H), l0 with n rows (n < 0: NULL),
 * the others by deriv (NULL where not computed); l is set by the caller
 * (element 0). */
static SEXP ll_result(const ls_args *a, R_xlen_t n)
{
    const int p = a->m.rows.p, deriv = a->deriv, M = a->M;
    const char *names[] = {"l", "l0", "lb", "lbb", "d1H", "trHid2H"};
    SEXP out = PROTECT(gg_named_list(6, names));
    if (n >= 0) SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, n));
    if (deriv >= 1) {
        SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, p));
        SET_VECTOR_ELT(out, 3, Rf_allocMatrix(REALSXP, p, p));
    }
    if (deriv >= 3) SET_VECTOR_ELT(out, 4, Rf_alloc3DArray(REALSXP, p, p, M));
    if (deriv >= 4) SET_VECTOR_ELT(out, 5, Rf_allocVector(REALSXP, M * (M + 1) / 2));
    UNPROTECT(1);
    return out;
}

/* the result's vector i, or NULL */
static double *at(SEXP out, int i)
{
    SEXP v = VECTOR_ELT(out, i);
    return Rf_isNull(v) ? NULL : REAL(v);
}

/* mgcv's location-scale ll() (family_ls.c): y (n), X (n x p), coef (p),
 * jj, fam (ls_math.h's code), links (integer K: family_math.h's codes),
 * link_par (double K: "logb"'s b, else 0), offsets (list of K, each NULL or
 * n doubles), eta (NULL, or n x K: the predictors given), deriv (0, 1, 3,
 * 4), i2, i3, i4 (mgcv's family$tri), d1b (p x M), d2b, Hm (p x p),
 * nthreads: list(l, l0, lb, lbb, d1H, trHid2H). */
SEXP gg_ls_ll_r(SEXP y, SEXP X, SEXP coef, SEXP jj, SEXP fam, SEXP links, SEXP link_par,
                SEXP offsets, SEXP eta, SEXP deriv_, SEXP i2, SEXP i3, SEXP i4, SEXP d1b,
                SEXP d2b, SEXP Hm, SEXP nthreads)
{
    ls_args a;
    memset(&a, 0, sizeof a);
    read_model_matrix(X, jj, &a.m.rows);
    const R_xlen_t n = (R_xlen_t) a.m.rows.n;
    read_ll_args(&a, coef, fam, links, link_par, offsets, deriv_, i2, i3, i4, d1b, d2b, Hm);
    a.m.y = dmat(y, n, 1, "y");
    a.m.eta = Rf_isNull(eta) ? NULL : dmat(eta, n, a.m.rows.K, "eta");
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    SEXP out = PROTECT(ll_result(&a, n));
    gg_status st;
    gg_status_clear(&st);
    double l = 0.0;
    gg_r_interrupt_arm();
    const int prev = gg_threads_set_limit(nt);
    int rc = gg_ls_ll(&a.m, a.deriv, a.d1b, a.M, a.d2b, a.Hm, &l, at(out, 1), at(out, 2),
                      at(out, 3), at(out, 4), at(out, 5), &st);
    gg_threads_set_limit(prev);
    if (gg_r_interrupt_disarm(rc, &st, "the location-scale family's rows") != 0) gg_raise(&st);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(l));
    UNPROTECT(1);
    return out;
}

typedef struct ls_session_ctx {
    ls_args *a;
    double   l, *lb, *lbb, *d1H, *tr;
} ls_session_ctx;

/* the ll() on a model session's backend: where it keeps its rows (the
 * device's), else gg_ls_ll() on the session's X in host memory */
static int ls_on_session(gg_backend *be, const gg_data *d, void *ctx_, gg_status *st)
{
    ls_session_ctx *c = ctx_;
    ls_args *a = c->a;
    if (be->ops->ls_ll != NULL)
        return be->ops->ls_ll(be, &a->m, a->deriv, a->d1b, a->M, a->d2b, a->Hm, &c->l, c->lb,
                              c->lbb, c->d1H, c->tr, st);
    const double *X = d->X != NULL ? d->X : be->ops->host_x != NULL ? be->ops->host_x(be) : NULL;
    if (X == NULL || d->y == NULL)
        return gg_fail(st, "gamgpu_internal_error",
                       "location-scale rows: the session holds no X or y in host memory");
    a->m.rows.X = X;
    a->m.y = d->y;
    return gg_ls_ll(&a->m, a->deriv, a->d1b, a->M, a->d2b, a->Hm, &c->l, NULL, c->lb, c->lbb,
                    c->d1H, c->tr, st);
}

/* The ll() of gg_ls_ll_r() over a model session's X and y (R/session.R,
 * opened with them): on its device where it has one, in the device's
 * memory; l0 NULL (gam.fit5() does not read it). */
SEXP gg_ls_session_ll_r(SEXP ptr, SEXP coef, SEXP jj, SEXP fam, SEXP links, SEXP link_par,
                        SEXP offsets, SEXP deriv_, SEXP i2, SEXP i3, SEXP i4, SEXP d1b,
                        SEXP d2b, SEXP Hm)
{
    const gg_data *d = gg_session_data(ptr);
    if (d->y == NULL)
        gg_abort("gamgpu_bad_input", "the location-scale ll() takes a session with its y");
    ls_args a;
    memset(&a, 0, sizeof a);
    a.m.rows.n = d->n;
    read_columns(jj, d->p, &a.m.rows);
    read_ll_args(&a, coef, fam, links, link_par, offsets, deriv_, i2, i3, i4, d1b, d2b, Hm);
    SEXP out = PROTECT(ll_result(&a, -1));
    ls_session_ctx c = {&a, 0.0, at(out, 2), at(out, 3), at(out, 4), at(out, 5)};
    gg_session_call(ptr, ls_on_session, &c, "the location-scale family's rows");
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(c.l));
    UNPROTECT(1);
    return out;
}
