/* node_r.c -- R glue of a cluster node's part of a fit: the engine's
 * backend operations run on the node's own model session (session_r.c),
 * which holds the node's row shard (and X, built from its recipe on the
 * node's device or by its CPU), one .Call per operation.
 *
 * The leader's engine drives a cluster backend (cluster_r.c) whose every
 * operation is one of these on each node, through R's parallel package
 * (R/cluster.R): only p-sized results come back (a deviance, X'WX and
 * X'Wz, an extended family's theta sums, the sums of the fit's summaries),
 * but for the n-vectors a fit gathers at its end (fetch, leverages) when
 * the rows are not left on the nodes.  The family travels as the raw
 * bytes of the leader's gg_family (its current theta included), checked
 * against this build's size.
 *
 * gg_tcp_nodelay_r(): R writes a serialized value to a socket in many
 * small writes, and with Nagle's algorithm on, a reply of a few kilobytes
 * (a p x p Gram) then waits for the peer's delayed acknowledgement: 40 ms
 * a round trip on Linux, whatever the network.  The leader and the nodes
 * turn it off on their TCP sockets (R 4.2's socketConnection() has no
 * option for it). */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#endif

#include "backend.h"
#include "errors_r.h"
#include "node_r.h"
#include "session_r.h"
#include "sexp_r.h"

#define BAD_IN "gamgpu_bad_input"

typedef enum {
    NODE_INIT_ETA, NODE_XBETA, NODE_KEEP_ETA, NODE_HALVE_ETA, NODE_ROW_STATE, NODE_GRAM,
    NODE_LEVERAGE, NODE_EF_SUMS, NODE_FETCH, NODE_ROW_SUMS
} node_opcode;

static const char *node_op_names[] = {"init_eta", "xbeta", "keep_eta", "halve_eta",
                                      "row_state", "gram", "leverage", "ef_sums", "fetch",
                                      "row_sums"};

typedef struct node_ctx {
    node_opcode op;
    gg_family fam;
    const double *arg;       /* beta (p) or M (p x p) */
    int deriv;
    gg_vec which;
    gg_stats_par par;
    double dev, zwz, *A, *b, *out;
} node_ctx;

/* A pass of the fit's summaries over the shard (family_stats.h), with mu
 * from the backend where the pass reads it. */
static int node_row_sums(gg_backend *be, const gg_data *d, node_ctx *c, gg_status *st)
{
    double *mu = NULL;
    if (c->par.pass == GG_STATS_RESID || c->par.pass == GG_STATS_AIC) {
        mu = malloc((d->n ? d->n : 1) * sizeof(double));
        if (mu == NULL) return gg_fail(st, "gamgpu_host_oom", "out of memory (cluster node)");
        if (be->ops->fetch(be, GG_VEC_MU, mu, st)) {
            free(mu);
            return -1;
        }
    }
    gg_stats_rows(&c->fam, &c->par, d->n, d->y, mu, d->pw, 64, NULL, c->out);   /* (within the session's thread limit) */
    free(mu);
    return 0;
}

static int node_run(gg_backend *be, const gg_data *d, void *ctx_, gg_status *st)
{
    node_ctx *c = ctx_;
    switch (c->op) {
    case NODE_INIT_ETA:  return be->ops->init_eta(be, &c->fam, st);
    case NODE_XBETA:     return be->ops->xbeta(be, c->arg, st);
    case NODE_KEEP_ETA:  return be->ops->keep_eta(be, st);
    case NODE_HALVE_ETA: return be->ops->halve_eta(be, st);
    case NODE_ROW_STATE: return be->ops->row_state(be, &c->fam, &c->dev, st);
    case NODE_GRAM:      return be->ops->gram(be, c->A, c->b, &c->zwz, st);
    case NODE_LEVERAGE:  return be->ops->leverage(be, c->arg, c->out, st);
    case NODE_EF_SUMS:   return be->ops->ef_sums(be, &c->fam, c->deriv, c->out, st);
    case NODE_FETCH:     return be->ops->fetch(be, c->which, c->out, st);
    case NODE_ROW_SUMS:  return node_row_sums(be, d, c, st);
    }
    return gg_fail(st, BAD_IN, "cluster node: unknown operation");
}

static gg_family family_from_raw(SEXP fam)
{
    gg_family f;
    if (TYPEOF(fam) != RAWSXP || XLENGTH(fam) != (R_xlen_t) sizeof f)
        gg_abort("gamgpu_cluster_mismatch",
                 "cluster node: the leader's family does not fit this node's build of gamgpu "
                 "(install the same gamgpu on every node)");
    memcpy(&f, RAW(fam), sizeof f);
    return f;
}

/* One backend operation on the node's session ptr: op (a name above), arg
 * (beta, M, or for fetch the vector's name, for ef_sums the derivative
 * order and the sums' count), fam (raw bytes of a gg_family, or NULL).
 * Returns the deviance (row_state), list(XtWX, XtWz, zWz) (gram), the
 * shard's n-vector (leverage, fetch), the sums (ef_sums), or NULL. */
SEXP gg_node_op_r(SEXP ptr, SEXP op_, SEXP arg, SEXP fam)
{
    const char *opn = gg_as_utf8(op_, "op", BAD_IN);
    int op = -1;
    for (int i = 0; i < (int) (sizeof node_op_names / sizeof *node_op_names); i++)
        if (strcmp(opn, node_op_names[i]) == 0) op = i;
    if (op < 0)
        gg_abort(BAD_IN, "cluster node: unknown operation");
    const gg_data *d = gg_session_data(ptr);
    const int p = d->p;
    const R_xlen_t n = (R_xlen_t) d->n;
    node_ctx c;
    memset(&c, 0, sizeof c);
    c.op = (node_opcode) op;
    if (op == NODE_INIT_ETA || op == NODE_ROW_STATE || op == NODE_EF_SUMS || op == NODE_ROW_SUMS)
        c.fam = family_from_raw(fam);
    SEXP out = R_NilValue;
    int nprot = 0;
    switch (c.op) {
    case NODE_XBETA:
        if (TYPEOF(arg) != REALSXP || XLENGTH(arg) != p)
            gg_abort(BAD_IN, "cluster node: beta must be a double vector, one per column of X");
        c.arg = REAL(arg);
        break;
    case NODE_LEVERAGE:
        if (TYPEOF(arg) != REALSXP || XLENGTH(arg) != (R_xlen_t) p * p)
            gg_abort(BAD_IN, "cluster node: M must be p x p doubles");
        c.arg = REAL(arg);
        out = PROTECT(Rf_allocVector(REALSXP, n));
        nprot++;
        c.out = REAL(out);
        break;
    case NODE_GRAM: {
        const char *names[] = {"XtWX", "XtWz", "zWz"};
        out = PROTECT(gg_named_list(3, names));
        nprot++;
        SET_VECTOR_ELT(out, 0, Rf_allocMatrix(REALSXP, p, p));
        SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, p));
        c.A = REAL(VECTOR_ELT(out, 0));
        c.b = REAL(VECTOR_ELT(out, 1));
        break;
    }
    case NODE_EF_SUMS: {
        if (TYPEOF(arg) != INTSXP || XLENGTH(arg) != 2 || INTEGER(arg)[1] < 1)
            gg_abort(BAD_IN, "cluster node: ef_sums takes the derivative order and the sums' count");
        c.deriv = INTEGER(arg)[0];
        out = PROTECT(Rf_allocVector(REALSXP, INTEGER(arg)[1]));
        nprot++;
        memset(REAL(out), 0, (size_t) INTEGER(arg)[1] * sizeof(double));
        c.out = REAL(out);
        break;
    }
    case NODE_FETCH: {
        const char *wh = gg_as_utf8(arg, "which", BAD_IN);
        const char *vn[] = {"eta", "mu", "w", "z"};
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(wh, vn[i]) == 0) k = i;
        if (k < 0)
            gg_abort(BAD_IN, "cluster node: fetch takes \"eta\", \"mu\", \"w\" or \"z\"");
        c.which = (gg_vec) k;
        out = PROTECT(Rf_allocVector(REALSXP, n));
        nprot++;
        c.out = REAL(out);
        break;
    }
    case NODE_ROW_SUMS: {
        if (TYPEOF(arg) != REALSXP || XLENGTH(arg) != 3 || !(REAL(arg)[0] >= GG_STATS_MEAN) ||
            !(REAL(arg)[0] <= GG_STATS_AIC))
            gg_abort(BAD_IN, "cluster node: row_sums takes the pass, the mean and the dispersion");
        c.par.pass = (gg_stats_pass) (int) REAL(arg)[0];
        c.par.ybar = REAL(arg)[1];
        c.par.disp = REAL(arg)[2];
        out = PROTECT(Rf_allocVector(REALSXP, 3));
        nprot++;
        c.out = REAL(out);
        break;
    }
    default:
        break;
    }
    gg_session_call(ptr, node_run, &c, node_op_names[op]);
    if (c.op == NODE_ROW_STATE)
        out = Rf_ScalarReal(c.dev);
    else if (c.op == NODE_GRAM)
        SET_VECTOR_ELT(out, 2, Rf_ScalarReal(c.zwz));
    UNPROTECT(nprot);
    return out;
}

/* TCP_NODELAY on every TCP socket of this process (R's connections among
 * them); the count set.  A no-op where there are no POSIX sockets. */
SEXP gg_tcp_nodelay_r(void)
{
    int set = 0;
#ifndef _WIN32
    struct rlimit rl;
    int top = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536)
        top = (int) rl.rlim_cur;
    for (int fd = 0; fd < top; fd++) {
        struct stat sb;
        if (fstat(fd, &sb) != 0 || !S_ISSOCK(sb.st_mode)) continue;
        struct sockaddr_storage sa;
        socklen_t len = sizeof sa;
        int type = 0;
        socklen_t tl = sizeof type;
        if (getsockname(fd, (struct sockaddr *) &sa, &len) != 0) continue;
        if (sa.ss_family != AF_INET && sa.ss_family != AF_INET6) continue;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM) continue;
        const int one = 1;
        if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0) set++;
    }
#endif
    return Rf_ScalarInteger(set);
}
