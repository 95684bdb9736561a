/* cuda_ls.c -- the location-scale families' ll() (family_ls.h) on the
 * device backend: X stays resident (or streamed) where the backend holds
 * it, and per call only the coefficients and the p-sized derivative
 * inputs go up and p x p results come back.
 *
 *   eta (n x K)         X B, B the coefficients spread over each
 *                       predictor's columns (the backend's X B pass)
 *   rows                ls.cu's ls_rows: each row's log likelihood and its
 *                       derivatives in the predictors (ls_math.h)
 *   lb                  X' l1, each predictor's columns taken
 *   lbb, d1H            X' diag(w) X per predictor pair (the backend's
 *                       Gram pass), w = l2's column, or ls_third's
 *                       weights for each smoothing parameter
 *   trd2H               the rows' quadratic forms in each pair's blocks
 *                       of Hm (the backend's leverage pass), then
 *                       ls_trace's sums
 *
 * The same sums as family_gamlss.c's in other orders (equal to rounding).
 * The rows' buffers are taken from the device's arena for the call and
 * returned at its end.  Launches and buffers are counted under "ls".
 * Compiled only with CUDA. */
#include "cuda_backend.h"
#include "cuda_internal.h"
#include "family_ls.h"
#include "gpu_arena.h"
#include "gpu_telemetry.h"
#include "ls_math.h"

#include <stdlib.h>
#include <string.h>

static const char *LABEL = "ls";

#define LS_THREADS 256             /* ls.cu's NTHREADS */

typedef struct ls_call {
    gg_backend        *be;
    const gg_ls_model *m;
    int                deriv, M;
    const double      *d1b, *d2b, *Hm;
    double            *l, *lb, *lbb, *d1H, *trd2H;
} ls_call;

typedef struct ls_dev {
    gg_cuda_rows r;
    gg_buflist   bufs;
    CUfunction   f_rows, f_third, f_copy, f_trace;
    double      *A, *bvec;         /* host: a Gram product's p x p and p */
} ls_dev;

static CUdeviceptr col(CUdeviceptr base, size_t n, size_t j)
{
    return base + j * n * sizeof(double);
}

static int launch(const ls_dev *d, CUfunction f, void **args, const char *what, gg_status *st)
{
    if (gg_cu_check(gg_cu.cuLaunchKernel(f, d->r.row_blocks, 1, 1, LS_THREADS, 1, 1, 0,
                                         d->r.stream, args, NULL), what, st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

/* a buffer of n doubles from the call's list, 0 on failure (st filled) */
static CUdeviceptr take(ls_dev *d, size_t n, gg_status *st)
{
    return gg_buflist_alloc(&d->bufs, n > 0 ? n : 1, LABEL, st);
}

/* d eta = X B for the K predictors' columns of q p-vectors v (p x q): the
 * n x K x q result column k + K j is X_k v[cols_k, j] */
static int predictor_pass(ls_dev *d, gg_backend *be, const gg_ls_rows *rw, const double *v,
                          int q, CUdeviceptr out, gg_status *st)
{
    const int p = rw->p, K = rw->K;
    const size_t cols = (size_t) K * q;
    double *B = calloc((size_t) p * cols, sizeof(double));
    if (B == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (location-scale rows)");
    for (int j = 0; j < q; j++)
        for (int k = 0; k < K; k++)
            for (int c = 0; c < rw->ncol[k]; c++) {
                const int at = rw->cols[k][c];
                B[at + (size_t) p * (k + (size_t) K * j)] = v[at + (size_t) p * j];
            }
    CUdeviceptr dB = take(d, (size_t) p * cols, st);
    int rc = dB == 0 || gg_cuda_upload(LABEL, dB, B, (size_t) p * cols, st) ||
             gg_cuda_xmul_device(be, dB, (int) cols, out, st) ? -1 : 0;
    free(B);
    return rc;
}

/* H += the (a, b) block of X' diag(w) X, and its transpose when a != b
 * (family_gamlss.c's add_block, from the whole p x p product) */
static int pair_gram(ls_dev *d, gg_backend *be, const gg_ls_rows *rw, int a, int b,
                     CUdeviceptr w, double *H, gg_status *st)
{
    const int p = rw->p;
    long long n = (long long) d->r.n;
    double zwz;
    void *args[] = {&w, &n, &d->r.w, &d->r.z};
    if (launch(d, d->f_copy, args, "ls: launching ls_copy", st) ||
        be->ops->gram(be, d->A, d->bvec, &zwz, st))
        return -1;
    for (int l = 0; l < rw->ncol[b]; l++)
        for (int k = 0; k < rw->ncol[a]; k++) {
            const size_t ca = (size_t) rw->cols[a][k], cb = (size_t) rw->cols[b][l];
            const double v = d->A[ca + cb * p];
            H[ca + cb * p] += v;
            if (a != b) H[cb + ca * p] += v;
        }
    return 0;
}

/* every pair a <= b's block product with weights w (n x K(K+1)/2) into H */
static int pair_grams(ls_dev *d, gg_backend *be, const gg_ls_rows *rw, CUdeviceptr w,
                      double *H, gg_status *st)
{
    int t = 0;
    for (int a = 0; a < rw->K; a++)
        for (int b = a; b < rw->K; b++, t++)
            if (pair_gram(d, be, rw, a, b, col(w, d->r.n, (size_t) t), H, st)) return -1;
    return 0;
}

/* hq (n x K(K+1)/2): column t of pair (a, b) holds each row's q_ab + q_ba
 * (a < b) or q_aa, q_ab = x_a' Hm_ab x_b over the columns c of a that a
 * owns (a column in several predictors is the last one's) -- as
 * gamlss_blocks.c's gg_ls_quad_rows(), through the symmetric matrix of
 * the pair's blocks */
static int pair_quads(ls_dev *d, gg_backend *be, const gg_ls_rows *rw, const double *Hm,
                      CUdeviceptr hq, gg_status *st)
{
    const int p = rw->p, K = rw->K;
    int *owner = malloc((size_t) p * sizeof(int));
    double *E = malloc((size_t) p * p * sizeof(double));
    if (owner == NULL || E == NULL) {
        free(owner); free(E);
        return gg_fail(st, "gamgpu_host_oom", "out of memory (location-scale rows)");
    }
    for (int c = 0; c < p; c++) owner[c] = -1;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < rw->ncol[k]; j++) owner[rw->cols[k][j]] = k;
    int rc = 0, t = 0;
    long long n = (long long) d->r.n;
    CUdeviceptr none = 0;
    for (int a = 0; a < K && rc == 0; a++)
        for (int b = a; b < K && rc == 0; b++, t++) {
            memset(E, 0, (size_t) p * p * sizeof(double));
            for (int side = 0; side < (a == b ? 1 : 2); side++) {
                const int u = side ? b : a, v = side ? a : b;
                for (int j = 0; j < rw->ncol[u]; j++) {
                    const int c = rw->cols[u][j];
                    if (owner[c] != u) continue;
                    for (int i = 0; i < rw->ncol[v]; i++) {
                        const int c2 = rw->cols[v][i];
                        const double h = Hm[c + (size_t) c2 * p] / 2;
                        E[c + (size_t) c2 * p] += h;
                        E[c2 + (size_t) c * p] += h;
                    }
                }
            }
            CUdeviceptr h = 0, dst = col(hq, d->r.n, (size_t) t);
            void *args[] = {&h, &n, &dst, &none};
            rc = gg_cuda_leverage_device(be, E, 0, st) || gg_cuda_need_h(be, &h, st) ||
                 launch(d, d->f_copy, args, "ls: launching ls_copy", st) ? -1 : 0;
        }
    free(owner);
    free(E);
    return rc;
}

/* out[j] = the sum of partial's k-th block of row_blocks sums, in block
 * order (as the backend's row sums) */
static int block_sums(ls_dev *d, CUdeviceptr partial, int k, double *out, gg_status *st)
{
    const size_t m = (size_t) k * d->r.row_blocks;
    double *h = malloc(m * sizeof(double));
    if (h == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (location-scale rows)");
    if (gg_cuda_wait(NULL, "the location-scale rows on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(h, partial, m * sizeof(double)),
                    "ls: copying the rows' sums back", st)) {
        free(h);
        return -1;
    }
    gg_tel_d2h(LABEL, (double) (m * sizeof(double)));
    for (int j = 0; j < k; j++) {
        long double t = 0;
        for (unsigned b = 0; b < d->r.row_blocks; b++) t += h[(size_t) j * d->r.row_blocks + b];
        out[j] = (double) t;
    }
    free(h);
    return 0;
}

/* an int array to the device (through doubles' buffers: the arena's unit) */
static CUdeviceptr index_up(ls_dev *d, const int *v, int len, gg_status *st)
{
    CUdeviceptr dv = take(d, ((size_t) len + 1) / 2, st);
    if (dv == 0) return 0;
    if (gg_cu_check(gg_cu.cuMemcpyHtoD(dv, v, (size_t) len * sizeof(int)),
                    "ls: copying an index array to the device", st))
        return 0;
    gg_tel_h2d(LABEL, (double) len * sizeof(int));
    return dv;
}

static int ls_on_device(void *arg, gg_status *st)
{
    const ls_call *c = arg;
    gg_backend *be = c->be;
    const gg_ls_model *m = c->m;
    const gg_ls_rows *rw = &m->rows;
    const int K = rw->K, p = rw->p, deriv = c->deriv, M = c->M;
    const int n2 = gg_ls_n2(K), n3 = gg_ls_n3(K), n4 = gg_ls_n4(K), nhh = M * (M + 1) / 2;
    ls_dev d;
    memset(&d, 0, sizeof d);
    gg_cuda_rows_of(be, &d.r);
    const size_t n = d.r.n;
    gg_arena *arena = gg_gpu_arena(d.r.ordinal, st);
    if (arena == NULL) return -1;
    gg_buflist_init(&d.bufs, arena);
    gg_tel_dispatch(LABEL);
    int rc = -1;
    d.A = malloc((size_t) p * p * sizeof(double));
    d.bvec = malloc((size_t) p * sizeof(double));
    double *off = NULL, *xtl = NULL;
    if (d.A == NULL || d.bvec == NULL) {
        gg_fail(st, "gamgpu_host_oom", "out of memory (location-scale rows)");
        goto done;
    }
    if (gg_cuda_function(d.r.ordinal, "ls", "ls_rows", &d.f_rows, st) ||
        gg_cuda_function(d.r.ordinal, "ls", "ls_third", &d.f_third, st) ||
        gg_cuda_function(d.r.ordinal, "ls", "ls_copy", &d.f_copy, st) ||
        gg_cuda_function(d.r.ordinal, "ls", "ls_trace", &d.f_trace, st))
        goto done;

    /* eta, then the rows */
    CUdeviceptr eta = take(&d, n * K, st), doff = 0, partial = take(&d, d.r.row_blocks, st);
    CUdeviceptr i2 = index_up(&d, rw->i2, K * K, st), i3 = index_up(&d, rw->i3, K * K * K, st);
    if (!eta || !partial || !i2 || !i3 || predictor_pass(&d, be, rw, m->coef, 1, eta, st))
        goto done;
    int any_off = 0;
    for (int k = 0; k < K; k++) any_off |= m->off[k] != NULL;
    if (any_off) {
        if ((off = calloc(n * K, sizeof(double))) == NULL) {
            gg_fail(st, "gamgpu_host_oom", "out of memory (location-scale rows' offsets)");
            goto done;
        }
        for (int k = 0; k < K; k++)
            if (m->off[k] != NULL) memcpy(off + n * k, m->off[k], n * sizeof(double));
        if (!(doff = take(&d, n * K, st)) || gg_cuda_upload(LABEL, doff, off, n * K, st))
            goto done;
    }
    const int nd = deriv >= 1 ? K + n2 + (deriv >= 3 ? n3 : 0) + (deriv >= 4 ? n4 : 0) : 0;
    CUdeviceptr dd = take(&d, n * (nd > 0 ? nd : 1), st);
    if (!dd) goto done;
    CUdeviceptr l1 = dd, l2 = col(dd, n, K), l3 = col(dd, n, (size_t) K + n2),
                l4 = col(dd, n, (size_t) K + n2 + (deriv >= 3 ? n3 : 0));
    CUdeviceptr z3 = deriv >= 3 ? l3 : 0, z4 = deriv >= 4 ? l4 : 0;
    gg_fm_link lk[GG_LS_MAXK] = {{0}};
    for (int k = 0; k < K; k++) lk[k] = m->links[k];
    int fam = m->fam;
    long long nn = (long long) n;
    void *rargs[] = {&fam, (void *) &K, (void *) &deriv, &lk[0], &lk[1], &lk[2], &lk[3], &i2,
                     &i3, &d.r.y, &eta, &doff, &nn, &l1, &l2, &z3, &z4, &partial};
    if (launch(&d, d.f_rows, rargs, "ls: launching ls_rows", st) ||
        block_sums(&d, partial, 1, c->l, st))
        goto done;
    if (deriv < 1) { rc = 0; goto done; }

    /* lb, lbb */
    if ((xtl = malloc((size_t) p * K * sizeof(double))) == NULL) {
        gg_fail(st, "gamgpu_host_oom", "out of memory (location-scale rows)");
        goto done;
    }
    if (gg_cuda_xtmul_device(be, l1, K, xtl, st)) goto done;
    memset(c->lb, 0, (size_t) p * sizeof(double));
    for (int k = 0; k < K; k++)
        for (int j = 0; j < rw->ncol[k]; j++) {
            const int at = rw->cols[k][j];
            c->lb[at] = c->lb[at] + xtl[at + (size_t) p * k];
        }
    memset(c->lbb, 0, (size_t) p * p * sizeof(double));
    for (int a = 0; a < K; a++)
        for (int b = a; b < K; b++)
            if (pair_gram(&d, be, rw, a, b, col(l2, n, (size_t) rw->i2[a + K * b]), c->lbb, st))
                goto done;
    if (deriv < 3) { rc = 0; goto done; }

    /* d1H: each smoothing parameter's weights, then its pair products */
    CUdeviceptr e1 = take(&d, n * K * (M > 0 ? M : 1), st), w = take(&d, n * n2, st);
    if (!e1 || !w || (M > 0 && predictor_pass(&d, be, rw, c->d1b, M, e1, st))) goto done;
    memset(c->d1H, 0, (size_t) p * p * M * sizeof(double));
    for (int j = 0; j < M; j++) {
        CUdeviceptr ej = col(e1, n, (size_t) K * j);
        void *targs[] = {(void *) &K, &i3, &l3, &ej, &nn, &w};
        if (launch(&d, d.f_third, targs, "ls: launching ls_third", st) ||
            pair_grams(&d, be, rw, w, c->d1H + (size_t) j * p * p, st))
            goto done;
    }
    if (deriv < 4 || nhh == 0) {
        if (deriv >= 4) memset(c->trd2H, 0, (size_t) nhh * sizeof(double));
        rc = 0;
        goto done;
    }

    /* trd2H: the rows' quadratic forms in Hm's pair blocks, then the sums */
    CUdeviceptr e2 = take(&d, n * K * nhh, st), hq = take(&d, n * n2, st);
    CUdeviceptr i4 = index_up(&d, rw->i4, K * K * K * K, st);
    CUdeviceptr tpart = take(&d, (size_t) nhh * d.r.row_blocks, st);
    if (!e2 || !hq || !i4 || !tpart || predictor_pass(&d, be, rw, c->d2b, nhh, e2, st) ||
        pair_quads(&d, be, rw, c->Hm, hq, st))
        goto done;
    void *sargs[] = {(void *) &K, (void *) &M, &i3, &i4, &l3, &l4, &e1, &e2, &hq, &nn, &tpart};
    if (launch(&d, d.f_trace, sargs, "ls: launching ls_trace", st) ||
        block_sums(&d, tpart, nhh, c->trd2H, st))
        goto done;
    rc = 0;
done:
    gg_cuda_call_release(rc, &d.bufs, "the location-scale rows on the device");
    free(d.A);
    free(d.bvec);
    free(off);
    free(xtl);
    return rc;
}

int gg_cuda_ls_ll(gg_backend *be, const gg_ls_model *m, int deriv, const double *d1b, int M,
                  const double *d2b, const double *Hm, double *l, double *lb, double *lbb,
                  double *d1H, double *trd2H, gg_status *st)
{
    const int K = m->rows.K;
    if (K < 1 || K > GG_LS_MAXK)
        return gg_fail(st, "gamgpu_bad_input", "the location-scale rows take 1 to %d predictors",
                       GG_LS_MAXK);
    if (deriv != 0 && deriv != 1 && deriv != 3 && deriv != 4)
        return gg_fail(st, "gamgpu_bad_input", "the location-scale ll() takes deriv 0, 1, 3 or 4");
    if (m->rows.p != be->p || m->rows.n != be->n)
        return gg_fail(st, "gamgpu_internal_error",
                       "location-scale rows: the model's X is not the session's");
    ls_call c = {be, m, deriv, M, d1b, d2b, Hm, l, lb, lbb, d1H, trd2H};
    gg_cuda_rows r;
    gg_cuda_rows_of(be, &r);
    return gg_cuda_run(r.ordinal, ls_on_device, &c, NULL, &be->t_rows, st);
}
