/* cluster_r.c -- the leader's backend of a fit whose rows are spread over
 * the nodes of an R parallel cluster (R/cluster.R).
 *
 * The engine (engine_pirls.c, engine_reml.c) drives it as it drives the
 * CPU and device backends; each operation calls the R function `dispatch`
 * (op, arg, fam), which runs the operation on every node's own session
 * (node_r.c) through R's parallel package and combines the results: sums
 * over the shards for the deviance, X'WX, X'Wz and theta sums, the shards'
 * vectors in order for the n-vectors a fit gathers at its end.  Only
 * p-sized numbers cross the network per iteration.
 *
 * This is glue: it calls R, on R's thread (the engine runs its backend's
 * operations on the thread that called it; its helper threads do host
 * work only).  dispatch never signals an error: it returns a list of class
 * "gamgpu_cluster_failure" (class, message) for a node's error, a lost
 * node or an interrupt, which becomes the operation's status; an error
 * that escapes it anyway is caught here (R_tryEvalSilent). */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cluster_r.h"
#include "efam_par.h"

typedef struct cluster_impl {
    SEXP dispatch;
} cluster_impl;

static const char *list_string(SEXP x, const char *name)
{
    SEXP nm = Rf_getAttrib(x, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(x); i++)
        if (strcmp(CHAR(STRING_ELT(nm, i)), name) == 0) {
            SEXP v = VECTOR_ELT(x, i);
            if (TYPEOF(v) == STRSXP && XLENGTH(v) >= 1 && STRING_ELT(v, 0) != NA_STRING)
                return CHAR(STRING_ELT(v, 0));
        }
    return NULL;
}

/* dispatch(op, arg, fam) in R: its result protected (the caller
 * unprotects one), or NULL with *st filled and nothing protected. */
static SEXP cluster_call(gg_backend *be, const char *op, SEXP arg, const gg_family *fam,
                         gg_status *st)
{
    cluster_impl *c = be->impl;
    SEXP famr = R_NilValue;
    if (fam != NULL) {
        famr = Rf_allocVector(RAWSXP, (R_xlen_t) sizeof *fam);
        memcpy(RAW(famr), fam, sizeof *fam);
    }
    PROTECT(famr);
    SEXP opr = PROTECT(Rf_mkString(op));
    SEXP call = PROTECT(Rf_lang4(c->dispatch, opr, arg, famr));
    int err = 0;
    SEXP res = R_tryEvalSilent(call, R_GlobalEnv, &err);
    UNPROTECT(3);
    if (err) {
        gg_fail(st, "gamgpu_cluster_failed", "the cluster's %s failed: %s", op,
                R_curErrorBuf());
        return NULL;
    }
    PROTECT(res);
    if (Rf_inherits(res, "gamgpu_cluster_failure") && TYPEOF(res) == VECSXP) {
        const char *cls = list_string(res, "class"), *msg = list_string(res, "message");
        gg_fail(st, cls ? cls : "gamgpu_cluster_failed", "%s", msg ? msg : "a cluster node failed");
        UNPROTECT(1);
        return NULL;
    }
    return res;
}

/* The result as doubles: len of them into out, or a status. */
static int take_doubles(SEXP res, double *out, R_xlen_t len, const char *op, gg_status *st)
{
    if (TYPEOF(res) != REALSXP || XLENGTH(res) != len)
        return gg_fail(st, "gamgpu_cluster_failed",
                       "the cluster's %s returned %.0f numbers, not %.0f", op,
                       (double) (TYPEOF(res) == REALSXP ? XLENGTH(res) : 0), (double) len);
    memcpy(out, REAL(res), (size_t) len * sizeof(double));
    return 0;
}

/* An operation with no result but success. */
static int cluster_void(gg_backend *be, const char *op, SEXP arg, const gg_family *fam,
                        gg_status *st)
{
    SEXP res = cluster_call(be, op, arg, fam, st);
    if (res == NULL) return -1;
    UNPROTECT(1);
    return 0;
}

static int cl_load(gg_backend *self, const gg_data *data, gg_status *st)
{
    (void) st;
    self->n = data->n;
    self->p = data->p;
    snprintf(self->placement, sizeof self->placement, "on the cluster's nodes");
    return 0;
}

static int cl_init_eta(gg_backend *self, const gg_family *fam, gg_status *st)
{
    return cluster_void(self, "init_eta", R_NilValue, fam, st);
}

static int cl_xbeta(gg_backend *self, const double *beta, gg_status *st)
{
    SEXP b = PROTECT(Rf_allocVector(REALSXP, self->p));
    memcpy(REAL(b), beta, (size_t) self->p * sizeof(double));
    const int rc = cluster_void(self, "xbeta", b, NULL, st);
    UNPROTECT(1);
    self->n_xbeta++;
    return rc;
}

static int cl_keep_eta(gg_backend *self, gg_status *st)
{
    return cluster_void(self, "keep_eta", R_NilValue, NULL, st);
}

static int cl_halve_eta(gg_backend *self, gg_status *st)
{
    self->n_halve++;
    return cluster_void(self, "halve_eta", R_NilValue, NULL, st);
}

static int cl_row_state(gg_backend *self, const gg_family *fam, double *dev, gg_status *st)
{
    SEXP res = cluster_call(self, "row_state", R_NilValue, fam, st);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, dev, 1, "row_state", st);
    UNPROTECT(1);
    self->n_row_state++;
    return rc;
}

static int cl_gram(gg_backend *self, double *A, double *b, double *zwz, gg_status *st)
{
    SEXP res = cluster_call(self, "gram", R_NilValue, NULL, st);
    if (res == NULL) return -1;
    const int p = self->p;
    int rc = TYPEOF(res) == VECSXP && XLENGTH(res) == 3
                 ? 0 : gg_fail(st, "gamgpu_cluster_failed", "the cluster's gram returned no Gram");
    if (rc == 0) rc = take_doubles(VECTOR_ELT(res, 0), A, (R_xlen_t) p * p, "gram", st);
    if (rc == 0) rc = take_doubles(VECTOR_ELT(res, 1), b, p, "gram", st);
    if (rc == 0) rc = take_doubles(VECTOR_ELT(res, 2), zwz, 1, "gram", st);
    UNPROTECT(1);
    self->n_gram++;
    return rc;
}

static int cl_leverage(gg_backend *self, const double *M, double *h, gg_status *st)
{
    const int p = self->p;
    SEXP m = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) p * p));
    memcpy(REAL(m), M, (size_t) p * p * sizeof(double));
    SEXP res = cluster_call(self, "leverage", m, NULL, st);
    UNPROTECT(1);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, h, (R_xlen_t) self->n, "leverage", st);
    UNPROTECT(1);
    return rc;
}

static int cl_ef_sums(gg_backend *self, const gg_family *fam, int deriv, double *s, gg_status *st)
{
    SEXP a = PROTECT(Rf_allocVector(INTSXP, 2));
    INTEGER(a)[0] = deriv;
    INTEGER(a)[1] = GG_FM_EF_MAXSUM;
    SEXP res = cluster_call(self, "ef_sums", a, fam, st);
    UNPROTECT(1);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, s, GG_FM_EF_MAXSUM, "ef_sums", st);
    UNPROTECT(1);
    return rc;
}

static int cl_fetch(gg_backend *self, gg_vec which, double *out, gg_status *st)
{
    static const char *names[] = {"eta", "mu", "w", "z"};
    SEXP wh = PROTECT(Rf_mkString(names[which]));
    SEXP res = cluster_call(self, "fetch", wh, NULL, st);
    UNPROTECT(1);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, out, (R_xlen_t) self->n, "fetch", st);
    UNPROTECT(1);
    return rc;
}

static int cl_refuse(gg_status *st, const char *what)
{
    return gg_fail(st, "gamgpu_unsupported",
                   "%s is not available on a cluster's rows (gam()'s outer iteration); "
                   "fit with method = \"fREML\" on a cluster", what);
}

static int cl_set_rows(gg_backend *self, const double *w, const double *z, gg_status *st)
{
    (void) self; (void) w; (void) z;
    return cl_refuse(st, "setting the rows' weights");
}

static int cl_xmul(gg_backend *self, const double *B, int k, double *out, gg_status *st)
{
    (void) self; (void) B; (void) k; (void) out;
    return cl_refuse(st, "X B");
}

static int cl_xtmul(gg_backend *self, const double *V, int k, double *out, gg_status *st)
{
    (void) self; (void) V; (void) k; (void) out;
    return cl_refuse(st, "X' V");
}

static void cl_release(gg_backend *self)
{
    free(self->impl);
    self->impl = NULL;
}

static const gg_backend_ops cluster_ops = {
    .name = "cluster",
    .load = cl_load,
    .init_eta = cl_init_eta,
    .xbeta = cl_xbeta,
    .keep_eta = cl_keep_eta,
    .halve_eta = cl_halve_eta,
    .row_state = cl_row_state,
    .gram = cl_gram,
    .leverage = cl_leverage,
    .ef_sums = cl_ef_sums,
    .fetch = cl_fetch,
    .set_rows = cl_set_rows,
    .xmul = cl_xmul,
    .xtmul = cl_xtmul,
    .release = cl_release,
    .outer = NULL,
};

int gg_backend_cluster_init(gg_backend *be, SEXP dispatch, gg_status *st)
{
    memset(be, 0, sizeof *be);
    cluster_impl *c = calloc(1, sizeof *c);
    if (c == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (cluster backend)");
    c->dispatch = dispatch;
    be->impl = c;
    be->ops = &cluster_ops;
    return 0;
}
