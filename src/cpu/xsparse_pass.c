/* xsparse_pass.c -- the CPU backend's products through sparse rows
 * (xsparse.h): X'WX, X'Wz and z'Wz; X beta; leverages; X B; X' V.  Each is
 * a pass over the rows in fixed ranges over the thread budget (the results
 * do not depend on the threads), then M's products, which go through R's
 * BLAS block by block (M is block diagonal in the recipe's blocks) on the
 * caller's thread. */
#define USE_FC_LEN_T
#include "xsparse.h"
#include "vec2.h"
#include "gram_kernel.h"
#include "interrupt.h"
#include "threads.h"

#include <R_ext/BLAS.h>
#include <stdlib.h>
#include <string.h>

#ifndef FCONE
#define FCONE
#endif

#define XS_JOBS 16              /* fixed row ranges */
#define XS_POLL 4096            /* rows between looks for an interrupt */

/* x'y over m values, two lanes summed at the end */
static double dot(const double *x, const double *y, int m)
{
    int c = 0;
    double s = 0.0;
#ifdef GG_VEC2
    gg_v2d acc = {0.0, 0.0};
    for (; c + 2 <= m; c += 2)
        acc += gg_ld2(x + c) * gg_ld2(y + c);
    s = acc[0] + acc[1];
#endif
    for (; c < m; c++)
        s += x[c] * y[c];
    return s;
}

/* ---- products through M ------------------------------------------------------ */

/* C (Q x k, leading dimension ldc) = M B, B p x k (ldb) */
static void m_times(const gg_xsparse *xs, const double *B, int ldb, int k, double *C, int ldc)
{
    const double one = 1.0, zero = 0.0;
    const int Q = xs->Q;
    for (int j = 0; j < k; j++)
        memset(C + (size_t) j * ldc, 0, (size_t) Q * sizeof(double));
    for (int t = 0; t < xs->nblocks; t++) {
        const gg_xs_block *Bk = &xs->blocks[t];
        int q = Bk->q, nc = Bk->b->ncol;
        if (q == 0 || nc == 0 || k == 0)
            continue;
        F77_CALL(dgemm)("N", "N", &q, &k, &nc, &one, xs->M + Bk->q0 + (size_t) Q * Bk->b->col0,
                        &Q, B + Bk->b->col0, &ldb, &zero, C + Bk->q0, &ldc FCONE FCONE);
    }
}

/* out (p x k, leading dimension ldo) = M' P, P Q x k (ldp) */
static void mt_times(const gg_xsparse *xs, const double *P, int ldp, int k, double *out,
                     int ldo)
{
    const double one = 1.0, zero = 0.0;
    const int Q = xs->Q;
    for (int t = 0; t < xs->nblocks; t++) {
        const gg_xs_block *Bk = &xs->blocks[t];
        int q = Bk->q, nc = Bk->b->ncol;
        if (nc == 0 || k == 0)
            continue;
        F77_CALL(dgemm)("T", "N", &nc, &k, &q, &one, xs->M + Bk->q0 + (size_t) Q * Bk->b->col0,
                        &Q, P + Bk->q0, &ldp, &zero, out + Bk->b->col0, &ldo FCONE FCONE);
    }
}

/* ---- the row passes ------------------------------------------------------------ */

typedef enum { XS_GRAM, XS_XBETA, XS_LEV, XS_XMUL, XS_XTMUL } xs_op;

typedef struct xs_job {
    const gg_xsparse *xs;
    xs_op op;
    size_t r0, r1;
    const double *w, *z, *off, *V;   /* rows' inputs (V: n x k) */
    const double *G;                 /* Q-space input: gamma (Q), VQ (Q x Q), C (Q x k) */
    const double *R;                 /* G's reduced tables (tp1_reduce), nR x k */
    int k;
    double *acc;                     /* the job's Q x Q (gram) or Q x k (xtmul) sums */
    double *bq, zwz;                 /* gram: the job's Q sums of w z s, z'Wz */
    double *out;                     /* n-rows outputs: eta, h, X B (n x k) */
    int stopped;
} xs_job;

/* The Gram pass over a job's rows: the local entries' products scattered
 * into acc's upper triangle (idx_a <= idx_b at idx_a + Q idx_b); the dense
 * entries' products with the local ones, and among themselves eight rows
 * at a time (gram_kernel.c's steps), into its lower triangle (the dense
 * index the row). */
static void xs_gram_run(xs_job *J)
{
    const gg_xsparse *xs = J->xs;
    const size_t Q = (size_t) xs->Q;
    const int nd = xs->nd, qd0 = xs->qd0;
    int idx[GG_XS_MAX_NNZ];
    double val[GG_XS_MAX_NNZ];
    double buf[8 * GG_XS_MAX_NNZ], wb[8];
    double *A = J->acc, *Add = J->acc + (size_t) qd0 * (Q + 1);
    double zwz = 0.0;
    int held = 0;
    for (size_t i = J->r0; i < J->r1; i++) {
        if ((i - J->r0) % XS_POLL == 0 && gg_interrupt_check()) {
            J->stopped = 1;
            break;
        }
        const double wi = J->w != NULL ? J->w[i] : 1.0;
        const int nz = gg_xs_row_local(xs, i, idx, val);
        for (int b = 0; b < nz; b++) {
            const double t = wi * val[b];
            double *col = A + (size_t) idx[b] * Q;
            for (int a = 0; a <= b; a++)
                col[idx[a]] += t * val[a];
        }
        double *d = buf + (size_t) held * nd;
        if (nd > 0) {
            gg_xs_row_dense(xs, i, d);
            for (int b = 0; b < nz; b++) {
                const double t = wi * val[b];
                double *col = A + (size_t) idx[b] * Q + qd0;
                for (int c = 0; c < nd; c++)
                    col[c] += t * d[c];
            }
            wb[held++] = wi;
            if (held == 8) {
                gg_gram_rows8(nd, buf, (size_t) nd, wb, Add, Q);
                held = 0;
            }
        }
        if (J->z != NULL) {
            const double wz = wi * J->z[i];
            for (int b = 0; b < nz; b++)
                J->bq[idx[b]] += wz * val[b];
            for (int c = 0; c < nd; c++)
                J->bq[qd0 + c] += wz * d[c];
            zwz += wz * J->z[i];
        }
    }
    for (int r = 0; r < held && !J->stopped; r++)
        gg_gram_rows1(nd, buf + (size_t) r * nd, wb[r], Add, Q);
    J->zwz = zwz;
}

/* R (nR values): each generated block's T times its part of G (Q values):
 * a row's product with G is then one Horner sum of D + 1 terms */
static void tp1_reduce(const gg_xsparse *xs, const double *G, double *R)
{
    for (int k = 0; k < xs->nblocks; k++) {
        const gg_xs_block *B = &xs->blocks[k];
        if (!B->gen)
            continue;
        const int nc = B->b->ncol, D1 = B->b->pp_deg + 1;
        const size_t rows = ((size_t) B->b->nXu + 1) * (size_t) D1;
        for (size_t r = 0; r < rows; r++) {
            const double *Tr = B->T + r * nc;
            double s = 0.0;
            for (int c = 0; c < nc; c++)
                s += Tr[c] * G[B->q0 + c];
            R[B->roff + r] = s;
        }
    }
}

/* x_i' M g for the k vectors G (Q x k) and their tables R (nR x k) into
 * out[i + n c] */
static void row_dots(const gg_xsparse *xs, size_t i, const double *G, const double *R, int k,
                     const double *off, double *out)
{
    int idx[GG_XS_MAX_NNZ];
    double val[GG_XS_MAX_NNZ];
    const size_t Q = (size_t) xs->Q, n = xs->n;
    const int nz = gg_xs_row_local(xs, i, idx, val);
    for (int c = 0; c < k; c++)
        out[i + n * (size_t) c] = 0.0;
    for (int kb = 0; kb < xs->nblocks; kb++) {
        const gg_xs_block *B = &xs->blocks[kb];
        if (!B->dense)
            continue;
        const int nc = B->b->ncol;
        if (!B->gen) {
            for (int c = 0; c < k; c++) {
                const double *Gc = G + Q * (size_t) c + B->q0;
                double e = 0.0;
                for (int a = 0; a < nc; a++)
                    e += B->cols[i + n * (size_t) a] * Gc[a];
                out[i + n * (size_t) c] += e;
            }
            continue;
        }
        double t, by;
        const int j = gg_xs_tp1_point(B, i, &t, &by), D = B->b->pp_deg;
        for (int c = 0; c < k; c++) {
            const double *Rj = R + xs->nR * (size_t) c + B->roff + (size_t) j * (D + 1);
            double v = Rj[D];
            for (int a = D - 1; a >= 0; a--)
                v = v * t + Rj[a];
            out[i + n * (size_t) c] += by * v;
        }
    }
    for (int c = 0; c < k; c++) {
        const double *Gc = G + Q * (size_t) c;
        double e = 0.0;
        for (int a = 0; a < nz; a++)
            e += val[a] * Gc[idx[a]];
        out[i + n * (size_t) c] += e;
        if (off != NULL)
            out[i + n * (size_t) c] += off[i];
    }
}

static void *xs_run(void *arg)
{
    xs_job *J = arg;
    if (J->op == XS_GRAM) {
        xs_gram_run(J);
        return NULL;
    }
    const gg_xsparse *xs = J->xs;
    const size_t Q = (size_t) xs->Q, n = xs->n;
    int idx[GG_XS_MAX_NNZ];
    double val[GG_XS_MAX_NNZ];
    double zwz = 0.0;
    for (size_t i = J->r0; i < J->r1; i++) {
        if ((i - J->r0) % XS_POLL == 0 && gg_interrupt_check()) {
            J->stopped = 1;
            break;
        }
        if (J->op == XS_XBETA || J->op == XS_XMUL) {
            row_dots(xs, i, J->G, J->R, J->op == XS_XBETA ? 1 : J->k, J->off, J->out);
            continue;
        }
        const int nz = gg_xsparse_row(xs, i, idx, val);
        switch (J->op) {
        case XS_GRAM: case XS_XBETA: case XS_XMUL:
            break;
        case XS_LEV: {
            /* the dense entries last, at qd0 onwards: their sums contiguous */
            const int nl = nz - xs->nd;
            const double *vd = val + nl;
            double s = 0.0;
            for (int b = 0; b < nz; b++) {
                const double *col = J->G + (size_t) idx[b] * Q;
                double t = 0.0;
                for (int a = 0; a < b && a < nl; a++)
                    t += val[a] * col[idx[a]];
                if (b > nl)
                    t += dot(vd, col + xs->qd0, b - nl);
                s += val[b] * (2 * t + val[b] * col[idx[b]]);
            }
            J->out[i] = J->w != NULL ? J->w[i] * s : s;
            break;
        }
        case XS_XTMUL:
            for (int c = 0; c < J->k; c++) {
                const double v = J->V[i + n * (size_t) c];
                double *P = J->acc + (size_t) c * Q;
                for (int a = 0; a < nz; a++)
                    P[idx[a]] += val[a] * v;
            }
            break;
        }
    }
    J->zwz = zwz;
    return NULL;
}

/* Runs op over fixed row ranges (the number of ranges depends on n only);
 * per-job sums of acc_len (and Q for bq) doubles each, added in job order
 * into the first job's. */
static int xs_pass(const gg_xsparse *xs, xs_job proto, size_t acc_len, const char *what,
                   double *acc_out, double *bq_out, double *zwz_out, gg_status *st)
{
    const size_t n = xs->n;
    int nj = (int) (n / 2048 + 1);
    if (nj > XS_JOBS)
        nj = XS_JOBS;
    xs_job *jobs = calloc((size_t) nj, sizeof *jobs);
    double *acc = NULL, *bq = NULL;
    if (jobs == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (%s)", what);
    const int with_bq = bq_out != NULL;
    if (acc_len > 0) {
        acc = calloc((size_t) nj * acc_len, sizeof(double));
        if (with_bq)
            bq = calloc((size_t) nj * (size_t) xs->Q, sizeof(double));
        if (acc == NULL || (with_bq && bq == NULL)) {
            free(jobs);
            free(acc);
            free(bq);
            return gg_fail(st, "gamgpu_host_oom", "out of memory (%s)", what);
        }
    }
    for (int j = 0; j < nj; j++) {
        jobs[j] = proto;
        jobs[j].r0 = n * (size_t) j / (size_t) nj;
        jobs[j].r1 = n * (size_t) (j + 1) / (size_t) nj;
        jobs[j].acc = acc != NULL ? acc + (size_t) j * acc_len : NULL;
        jobs[j].bq = bq != NULL ? bq + (size_t) j * xs->Q : NULL;
    }
    gg_run_jobs(nj, xs_run, jobs, sizeof *jobs);
    int stopped = 0;
    double zwz = 0.0;
    for (int j = 0; j < nj; j++) {
        stopped |= jobs[j].stopped;
        zwz += jobs[j].zwz;
    }
    if (!stopped && acc_len > 0) {
        for (int j = 1; j < nj; j++) {
            const double *a = acc + (size_t) j * acc_len;
            for (size_t e = 0; e < acc_len; e++)
                acc[e] += a[e];
            if (with_bq)
                for (int e = 0; e < xs->Q; e++)
                    bq[e] += bq[(size_t) j * xs->Q + e];
        }
        memcpy(acc_out, acc, acc_len * sizeof(double));
        if (with_bq)
            memcpy(bq_out, bq, (size_t) xs->Q * sizeof(double));
    }
    if (zwz_out != NULL)
        *zwz_out = zwz;
    free(jobs);
    free(acc);
    free(bq);
    if (stopped)
        return gg_interrupt_fail(st, what);
    return 0;
}

int gg_xsparse_gram(const gg_xsparse *xs, const double *w, const double *z, double *A,
                    double *b, double *zwz, gg_status *st)
{
    const size_t Q = (size_t) xs->Q;
    const int p = xs->p, q = xs->Q;
    double *AQ = malloc((Q * Q + Q + Q * (size_t) p) * sizeof(double));
    if (AQ == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the Gram product)");
    double *bq = AQ + Q * Q, *R = bq + Q;
    xs_job proto = {.xs = xs, .op = XS_GRAM, .w = w, .z = z};
    if (xs_pass(xs, proto, Q * Q, "the Gram product", AQ, z != NULL ? bq : NULL, zwz, st)) {
        free(AQ);
        return -1;
    }
    /* mirrored: the local entries' upper triangle, the dense rows' lower */
    for (size_t j = 0; j < Q; j++)
        for (size_t i = j + 1; i < Q; i++) {
            if (i < (size_t) xs->qd0)
                AQ[i + Q * j] = AQ[j + Q * i];
            else
                AQ[j + Q * i] = AQ[i + Q * j];
        }
    /* R = M' AQ (p x Q); A = M' R' = M' AQ M */
    double *Rt = malloc(Q * (size_t) p * sizeof(double));
    if (Rt == NULL) {
        free(AQ);
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the Gram product)");
    }
    mt_times(xs, AQ, q, q, R, p);
    for (int i = 0; i < p; i++)
        for (size_t j = 0; j < Q; j++)
            Rt[j + Q * (size_t) i] = R[i + (size_t) p * j];
    mt_times(xs, Rt, q, p, A, p);
    for (int j = 0; j < p; j++)              /* exactly symmetric, as the dense path's */
        for (int i = j + 1; i < p; i++)
            A[i + (size_t) p * j] = A[j + (size_t) p * i];
    if (z != NULL)
        mt_times(xs, bq, q, 1, b, p);
    free(Rt);
    free(AQ);
    return 0;
}

int gg_xsparse_xbeta(const gg_xsparse *xs, const double *beta, const double *offset,
                     double *eta, gg_status *st)
{
    double *g = malloc(((size_t) xs->Q + xs->nR) * sizeof(double));
    if (g == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (X beta)");
    m_times(xs, beta, xs->p, 1, g, xs->Q);
    tp1_reduce(xs, g, g + xs->Q);
    xs_job proto = {.xs = xs, .op = XS_XBETA, .off = offset, .G = g, .R = g + xs->Q,
                    .out = eta};
    const int rc = xs_pass(xs, proto, 0, "the linear predictor", NULL, NULL, NULL, st);
    free(g);
    return rc;
}

int gg_xsparse_leverage(const gg_xsparse *xs, const double *V, const double *w, double *h,
                        gg_status *st)
{
    const size_t Q = (size_t) xs->Q;
    const int p = xs->p, q = xs->Q;
    double *U = malloc((Q * (size_t) p * 2 + Q * Q) * sizeof(double));
    if (U == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the leverages)");
    double *Ut = U + Q * (size_t) p, *VQ = Ut + Q * (size_t) p;
    m_times(xs, V, p, p, U, q);              /* U = M V (Q x p) */
    for (size_t i = 0; i < Q; i++)
        for (int j = 0; j < p; j++)
            Ut[j + (size_t) p * i] = U[i + Q * (size_t) j];
    m_times(xs, Ut, p, q, VQ, q);            /* VQ = M (M V)' = M V M' */
    xs_job proto = {.xs = xs, .op = XS_LEV, .w = w, .G = VQ, .out = h};
    const int rc = xs_pass(xs, proto, 0, "the leverages", NULL, NULL, NULL, st);
    free(U);
    return rc;
}

int gg_xsparse_xmul(const gg_xsparse *xs, const double *B, int k, double *out, gg_status *st)
{
    if (k <= 0)
        return 0;
    double *C = malloc(((size_t) xs->Q + xs->nR) * (size_t) k * sizeof(double));
    if (C == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the product X B)");
    m_times(xs, B, xs->p, k, C, xs->Q);
    double *R = C + (size_t) xs->Q * k;
    for (int c = 0; c < k; c++)
        tp1_reduce(xs, C + (size_t) xs->Q * c, R + xs->nR * (size_t) c);
    xs_job proto = {.xs = xs, .op = XS_XMUL, .G = C, .R = R, .k = k, .out = out};
    const int rc = xs_pass(xs, proto, 0, "the product X B", NULL, NULL, NULL, st);
    free(C);
    return rc;
}

int gg_xsparse_xtmul(const gg_xsparse *xs, const double *V, int k, double *out,
                     gg_status *st)
{
    if (k <= 0)
        return 0;
    const size_t len = (size_t) xs->Q * (size_t) k;
    double *P = malloc(len * sizeof(double));
    if (P == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the product X' V)");
    xs_job proto = {.xs = xs, .op = XS_XTMUL, .V = V, .k = k};
    if (xs_pass(xs, proto, len, "the product X' V", P, NULL, NULL, st)) {
        free(P);
        return -1;
    }
    mt_times(xs, P, xs->Q, k, out, xs->p);
    free(P);
    return 0;
}
