/* cluster_r.c -- the leader's backend of a fit whose rows are spread over
 * the nodes of an R parallel cluster (R/cluster.R).
 *
 * The engine (engine_pirls.c, engine_reml.c) drives it as it drives the
 * CPU and device backends; each operation calls the R function `dispatch`
 * (ops), which runs the operations on every node's own session (node_r.c)
 * through R's parallel package and combines the last one's results: sums
 * over the shards for the deviance, X'WX, X'Wz and theta sums, the shards'
 * vectors in order for the n-vectors a fit gathers at its end (or, for
 * rows that stay on the nodes, the sums of the fit's summaries: row_sums).
 * Only p-sized numbers cross the network per iteration.
 *
 * This is glue: it calls R, on R's thread (the engine runs its backend's
 * operations on the thread that called it; its helper threads do host
 * work only).  dispatch never signals an error: it returns a list of class
 * "gamgpu_cluster_failure" (class, message) for a node's error or a lost
 * node, which becomes the operation's status; an error that escapes it
 * anyway is caught here (R_tryEvalSilent).  (An interrupt while the
 * nodes answer is dispatch's failure too: R/cluster.R.) */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cluster_r.h"
#include "efam_par.h"

/* Operations without a result (init_eta, xbeta, keep_eta, halve_eta) wait
 * here and go with the next one that has one: one round trip per result,
 * two or three per penalized IRLS iteration.  (A failure among them is
 * the next call's failure: the engine stops there.) */
#define CL_QUEUE 16

typedef struct cluster_op {
    const char *op;
    double *arg;             /* beta (p), or NULL */
    gg_family fam;
    int has_fam;
} cluster_op;

typedef struct cluster_impl {
    SEXP dispatch;
    cluster_op queue[CL_QUEUE];
    int nq;
} cluster_impl;

static void queue_clear(cluster_impl *c)
{
    for (int i = 0; i < c->nq; i++) free(c->queue[i].arg);
    c->nq = 0;
}

static SEXP family_raw(const gg_family *fam)
{
    SEXP r = Rf_allocVector(RAWSXP, (R_xlen_t) sizeof *fam);
    memcpy(RAW(r), fam, sizeof *fam);
    return r;
}

/* list(op =, arg =, fam =), as R/cluster.R's dispatch takes each. */
static SEXP op_list(const char *op, SEXP arg, SEXP fam)
{
    const char *names[] = {"op", "arg", "fam"};
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, 3));
    for (int i = 0; i < 3; i++) SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
    SEXP x = PROTECT(Rf_allocVector(VECSXP, 3));
    Rf_setAttrib(x, R_NamesSymbol, nm);
    SET_VECTOR_ELT(x, 0, Rf_mkString(op));
    SET_VECTOR_ELT(x, 1, arg);
    SET_VECTOR_ELT(x, 2, fam);
    UNPROTECT(2);
    return x;
}

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

/* dispatch(ops) in R, ops the queued operations and then op (arg, fam):
 * the last one's combined result protected (the caller unprotects one),
 * or NULL with *st filled and nothing protected. */
static SEXP cluster_call(gg_backend *be, const char *op, SEXP arg, const gg_family *fam,
                         gg_status *st)
{
    cluster_impl *c = be->impl;
    PROTECT(arg);
    SEXP ops = PROTECT(Rf_allocVector(VECSXP, c->nq + 1));
    for (int i = 0; i < c->nq; i++) {
        const cluster_op *q = &c->queue[i];
        SEXP a = R_NilValue, f = R_NilValue;
        if (q->arg != NULL) {
            a = Rf_allocVector(REALSXP, be->p);
            memcpy(REAL(a), q->arg, (size_t) be->p * sizeof(double));
        }
        PROTECT(a);
        if (q->has_fam) f = family_raw(&q->fam);
        PROTECT(f);
        SET_VECTOR_ELT(ops, i, op_list(q->op, a, f));
        UNPROTECT(2);
    }
    SEXP famr = PROTECT(fam != NULL ? family_raw(fam) : R_NilValue);
    SET_VECTOR_ELT(ops, c->nq, op_list(op, arg, famr));
    queue_clear(c);
    SEXP call = PROTECT(Rf_lang2(c->dispatch, ops));
    int err = 0;
    SEXP res = R_tryEvalSilent(call, R_GlobalEnv, &err);
    UNPROTECT(4);
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

/* An operation without a result, queued for the next call (sent at once
 * when the queue is full). */
static int cluster_queue(gg_backend *be, const char *op, const double *arg,
                         const gg_family *fam, gg_status *st)
{
    cluster_impl *c = be->impl;
    if (c->nq == CL_QUEUE) {
        SEXP res = cluster_call(be, "none", R_NilValue, NULL, st);
        if (res == NULL) return -1;
        UNPROTECT(1);
    }
    cluster_op *q = &c->queue[c->nq];
    memset(q, 0, sizeof *q);
    q->op = op;
    if (arg != NULL) {
        if ((q->arg = malloc((size_t) be->p * sizeof(double))) == NULL)
            return gg_fail(st, "gamgpu_host_oom", "out of memory (cluster backend)");
        memcpy(q->arg, arg, (size_t) be->p * sizeof(double));
    }
    if (fam != NULL) {
        q->fam = *fam;
        q->has_fam = 1;
    }
    c->nq++;
    return 0;
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
    return cluster_queue(self, "init_eta", NULL, fam, st);
}

static int cl_xbeta(gg_backend *self, const double *beta, gg_status *st)
{
    self->n_xbeta++;
    return cluster_queue(self, "xbeta", beta, NULL, st);
}

static int cl_keep_eta(gg_backend *self, gg_status *st)
{
    return cluster_queue(self, "keep_eta", NULL, NULL, st);
}

static int cl_halve_eta(gg_backend *self, gg_status *st)
{
    self->n_halve++;
    return cluster_queue(self, "halve_eta", NULL, NULL, st);
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
    SEXP m = Rf_allocVector(REALSXP, (R_xlen_t) p * p);
    memcpy(REAL(m), M, (size_t) p * p * sizeof(double));
    SEXP res = cluster_call(self, "leverage", m, NULL, st);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, h, (R_xlen_t) self->n, "leverage", st);
    UNPROTECT(1);
    return rc;
}

static int cl_ef_sums(gg_backend *self, const gg_family *fam, int deriv, double *s, gg_status *st)
{
    SEXP a = Rf_allocVector(INTSXP, 2);
    INTEGER(a)[0] = deriv;
    INTEGER(a)[1] = GG_FM_EF_MAXSUM;
    SEXP res = cluster_call(self, "ef_sums", a, fam, st);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, s, GG_FM_EF_MAXSUM, "ef_sums", st);
    UNPROTECT(1);
    return rc;
}

static int cl_fetch(gg_backend *self, gg_vec which, double *out, gg_status *st)
{
    static const char *names[] = {"eta", "mu", "w", "z"};
    SEXP res = cluster_call(self, "fetch", Rf_mkString(names[which]), NULL, st);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, out, (R_xlen_t) self->n, "fetch", st);
    UNPROTECT(1);
    return rc;
}

static int cl_row_sums(gg_backend *self, const gg_family *fam, const gg_stats_par *par,
                       double out[3], gg_status *st)
{
    SEXP a = Rf_allocVector(REALSXP, 3);
    REAL(a)[0] = (double) par->pass;
    REAL(a)[1] = par->ybar;
    REAL(a)[2] = par->disp;
    SEXP res = cluster_call(self, "row_sums", a, fam, st);
    if (res == NULL) return -1;
    const int rc = take_doubles(res, out, 3, "row_sums", st);
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
    if (self->impl != NULL) queue_clear(self->impl);
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
    .row_sums = cl_row_sums,
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
