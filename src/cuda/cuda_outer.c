/* cuda_outer.c -- gam()'s outer smoothing parameter iteration's rows and
 * products (outer_rows.h: gg_outer_ops) on the device backend: the rows
 * (Newton's and Fisher's weights and their derivatives in eta, dev1, the
 * Pearson terms; an extended family's, efam_outer.h) are computed from
 * the resident mu by
 * inst/kernels/outer.cu and stay in device memory beside X; d eta / d rho
 * = X d beta / d rho is formed there, and every derivative product is a
 * pass of the backend's (cuda_backend.h) -- X' diag(w' eta_k) X through
 * its Gram product, the leverages, X' V -- or a Gram product of the
 * n x M matrix d eta itself (cuda_gram.c).  Only p-sized inputs go up and
 * p- and M-sized results come back: where the host's rows (outer_rows.c)
 * moved (M + 6) n doubles across the bus per evaluation, this moves none.
 *
 * The state lives in the backend's outer slot, its buffers in a list of
 * its own from the device's arena, freed with the backend.  Kernel
 * launches are counted under the telemetry label "outer".  Compiled only
 * with CUDA. */
#include "cuda_backend.h"
#include "cuda_internal.h"
#include "gpu_arena.h"
#include "gpu_telemetry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *LABEL = "outer";

#define OUTER_THREADS 256          /* outer.cu's NTHREADS */

/* the rows' n-vectors, in gg_outer_vec order: an exponential family's
 * 8, an extended family's all (its wf, and theta's block of
 * GG_FM_EFO_NCOL(nth) columns) */
#define N_ROWVEC 8

typedef struct outer_state {
    gg_cuda_ext ext;               /* first: the backend frees it */
    gg_buflist  bufs;              /* rows, then deta and V, then a call's scratch */
    CUdeviceptr v[GG_OR_NVEC];     /* w, w1, w2, wF1, wF2, dev1, pe1, pe2, and an
                                      extended family's wf and theta's block */
    int         nvec;              /* N_ROWVEC or GG_OR_NVEC of them allocated */
    int         nth;               /* the extended family's theta values */
    CUdeviceptr deta, V;           /* n x Mcap, n x kcap */
    int         Mcap, kcap;
    int         have, fisher, pearson, efam, level;
    CUfunction  f_rows, f_newton, f_prod, f_ef_rows, f_ef_newton;
} outer_state;

static void outer_free(gg_cuda_ext *ext)
{
    outer_state *o = (outer_state *) ext;
    if (o == NULL)
        return;
    gg_buflist_release(&o->bufs);
    free(o);
}

/* The state, made (with the rows' buffers and kernels) on first use, with
 * an extended family's vectors too where nth >= 0 (its theta values;
 * made again with them if it lacks them: a session has one family);
 * context entered. */
static outer_state *state(const gg_cuda_rows *r, int nth, gg_status *st)
{
    if (r->mu == 0) {
        gg_fail(st, "gamgpu_internal_error",
                "outer rows: a lean session keeps no mu (gam()'s methods open full ones)");
        return NULL;
    }
    outer_state *old = (outer_state *) *r->outer;
    if (old != NULL && (nth < 0 || (old->nvec == GG_OR_NVEC && old->nth == nth)))
        return old;
    if (old != NULL) {
        outer_free(&old->ext);
        *r->outer = NULL;
    }
    if (r->ar_on) {
        gg_fail(st, "gamgpu_internal_error",
                "outer rows: the AR1 residual model has no outer iteration");
        return NULL;
    }
    gg_arena *arena = gg_gpu_arena(r->ordinal, st);
    if (arena == NULL)
        return NULL;
    outer_state *o = calloc(1, sizeof *o);
    if (o == NULL) {
        gg_fail(st, "gamgpu_host_oom", "out of memory (outer rows)");
        return NULL;
    }
    o->ext.free = outer_free;
    gg_buflist_init(&o->bufs, arena);
    int bad = gg_cuda_function(r->ordinal, "outer", "outer_rows", &o->f_rows, st) ||
              gg_cuda_function(r->ordinal, "outer", "outer_newton", &o->f_newton, st) ||
              gg_cuda_function(r->ordinal, "outer", "outer_prod", &o->f_prod, st) ||
              gg_cuda_function(r->ordinal, "outer", "outer_ef_rows", &o->f_ef_rows, st) ||
              gg_cuda_function(r->ordinal, "outer", "outer_ef_newton", &o->f_ef_newton, st);
    o->nvec = nth >= 0 ? GG_OR_NVEC : N_ROWVEC;
    o->nth = nth >= 0 ? nth : 0;
    const size_t kth = GG_FM_EFO_NCOL(o->nth) > 0 ? (size_t) GG_FM_EFO_NCOL(o->nth) : 1;
    for (int i = 0; !bad && i < o->nvec; i++)
        if (!(o->v[i] = gg_buflist_alloc(&o->bufs, r->n * (i == GG_OR_ETH ? kth : 1), LABEL,
                                         st)))
            bad = 1;
    if (bad) {
        outer_free(&o->ext);
        return NULL;
    }
    *r->outer = &o->ext;
    return o;
}

/* deta with M columns and V with k (the buffers after the rows' grown) */
static int work_alloc(outer_state *o, const gg_cuda_rows *r, int M, int k, gg_status *st)
{
    if (M <= o->Mcap && k <= o->kcap)
        return 0;
    const int Mc = M > o->Mcap ? M : o->Mcap, kc = k > o->kcap ? k : o->kcap;
    gg_buflist_truncate(&o->bufs, o->nvec);
    o->Mcap = o->kcap = 0;
    if (!(o->deta = gg_buflist_alloc(&o->bufs, r->n * (size_t) Mc, LABEL, st)) ||
        !(o->V = gg_buflist_alloc(&o->bufs, r->n * (size_t) kc, LABEL, st)))
        return -1;
    o->Mcap = Mc;
    o->kcap = kc;
    return 0;
}

/* one row kernel over the backend's grid */
static int launch(const gg_cuda_rows *r, CUfunction f, void **args, const char *what,
                  gg_status *st)
{
    if (gg_cu_check(gg_cu.cuLaunchKernel(f, r->row_blocks, 1, 1, OUTER_THREADS, 1, 1, 0,
                                         r->stream, args, NULL), what, st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

/* out = scale a b c + add over the rows (null factors are 1, a null add 0) */
static int prod_add(const outer_state *o, const gg_cuda_rows *r, double scale, CUdeviceptr a,
                    CUdeviceptr b, CUdeviceptr c, CUdeviceptr add, CUdeviceptr out,
                    gg_status *st)
{
    long long n = (long long) r->n;
    void *args[] = {&n, &scale, &a, &b, &c, &add, &out};
    return launch(r, o->f_prod, args, "outer: launching outer_prod", st);
}

static int prod(const outer_state *o, const gg_cuda_rows *r, double scale, CUdeviceptr a,
                CUdeviceptr b, CUdeviceptr c, CUdeviceptr out, gg_status *st)
{
    return prod_add(o, r, scale, a, b, c, 0, out, st);
}

static CUdeviceptr col(CUdeviceptr base, size_t n, int j)
{
    return base + (size_t) j * n * sizeof(double);
}

/* ---- the ops ------------------------------------------------------------ */

/* Each runs its work (a function *_on_device of its arguments, a struct
 * *_call) inside the device's context: gg_cuda_run() enters and leaves it
 * and times it. */

typedef struct rows_call {
    gg_backend      *be;
    gg_cuda_rows     r;
    const gg_family *fam;
    int              fisher, pearson;
    double          *stats;
} rows_call;

static int rows_on_device(void *arg, gg_status *st)
{
    rows_call *c = arg;
    gg_cuda_rows *r = &c->r;
    outer_state *o = state(r, -1, st);
    if (o == NULL)
        return -1;
    o->have = 0;
    o->efam = 0;
    int f = (int) c->fam->fam;
    gg_fm_link l = gg_family_link(c->fam);
    double th = c->fam->theta;
    long long n = (long long) r->n;
    CUdeviceptr *v = o->v;
    void *args[] = {&f, &l, &c->fisher, &c->pearson, &th, &r->y, &r->pw, &r->mu, &n,
                    &v[GG_OR_W], &v[GG_OR_W1], &v[GG_OR_W2], &v[GG_OR_WF1], &v[GG_OR_WF2],
                    &v[GG_OR_DEV1], &v[GG_OR_PE1], &v[GG_OR_PE2], &r->partial};
    if (launch(r, o->f_rows, args, "outer: launching outer_rows", st) ||
        gg_cuda_partial_sums(c->be, 2, c->stats, st))
        return -1;
    o->have = 1;
    o->fisher = c->fisher;
    o->pearson = c->pearson;
    return 0;
}

static int outer_rows(gg_backend *be, const gg_family *fam, int fisher, int pearson,
                      double stats[2], gg_status *st)
{
    rows_call c = {be, {0}, fam, fisher, pearson, stats};
    gg_cuda_rows_of(be, &c.r);
    return gg_cuda_run(c.r.ordinal, rows_on_device, &c, NULL, &be->t_rows, st);
}

static outer_state *rows_state(gg_backend *be, gg_cuda_rows *r, gg_status *st)
{
    gg_cuda_rows_of(be, r);
    outer_state *o = (outer_state *) *r->outer;
    if (o == NULL || !o->have)
        gg_fail(st, "gamgpu_internal_error", "outer rows: none computed on the device");
    return o != NULL && o->have ? o : NULL;
}

/* 1 if the rows' vector which was computed at the last rows */
static int vec_computed(const outer_state *o, gg_outer_vec which)
{
    const int i = (int) which;
    if (i < 0 || i >= o->nvec)
        return 0;
    if (o->efam)
        return which == GG_OR_W || which == GG_OR_DEV1 || which == GG_OR_EWF ||
               (o->level >= 2 && (which == GG_OR_W1 || which == GG_OR_W2 ||
                                  (which == GG_OR_ETH && o->nth > 0)));
    return i < N_ROWVEC && !((which == GG_OR_WF1 || which == GG_OR_WF2) && o->fisher) &&
           !((which == GG_OR_PE1 || which == GG_OR_PE2) && !o->pearson);
}

typedef struct fetch_call {
    const outer_state *o;
    gg_outer_vec       which;
    double            *out;
    size_t             bytes;
} fetch_call;

static int fetch_on_device(void *arg, gg_status *st)
{
    const fetch_call *c = arg;
    int rc = gg_cuda_wait(NULL, "the outer iteration's rows", st) ||
             gg_cu_check(gg_cu.cuMemcpyDtoH(c->out, c->o->v[c->which], c->bytes),
                         "outer: copying a row vector back", st) ? -1 : 0;
    if (rc == 0)
        gg_tel_d2h(LABEL, (double) c->bytes);
    return rc;
}

static int outer_fetch(gg_backend *be, gg_outer_vec which, double *out, gg_status *st)
{
    gg_cuda_rows r;
    outer_state *o = rows_state(be, &r, st);
    if (o == NULL)
        return -1;
    if (!vec_computed(o, which))
        return gg_fail(st, "gamgpu_internal_error", "outer rows: that vector was not computed");
    fetch_call c = {o, which, out,
                    r.n * sizeof(double) *
                        (which == GG_OR_ETH ? (size_t) GG_FM_EFO_NCOL(o->nth) : 1)};
    return gg_cuda_run(r.ordinal, fetch_on_device, &c, NULL, &be->t_transfer, st);
}

/* X' diag(wt) X into A (p x p): the backend's Gram pass with its w = wt,
 * z = 0 (context entered) */
static int weighted_gram(gg_backend *be, const outer_state *o, const gg_cuda_rows *r,
                         CUdeviceptr wt, double *A, gg_status *st)
{
    double *b = malloc((size_t) r->p * sizeof(double)), zwz;
    if (b == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (outer rows)");
    int rc = prod(o, r, 1.0, wt, 0, 0, r->w, st) || prod(o, r, 0.0, 0, 0, 0, r->z, st) ||
             be->ops->gram(be, A, b, &zwz, st) ? -1 : 0;
    free(b);
    return rc;
}

typedef struct gram_call {
    gg_backend        *be;
    gg_cuda_rows       r;
    const outer_state *o;
    double            *A;
} gram_call;

static int gram_on_device(void *arg, gg_status *st)
{
    const gram_call *c = arg;
    return weighted_gram(c->be, c->o, &c->r, c->o->v[GG_OR_W], c->A, st);
}

/* untimed: the Gram pass times itself */
static int outer_gram(gg_backend *be, double *A, gg_status *st)
{
    gram_call c = {be, {0}, NULL, A};
    if ((c.o = rows_state(be, &c.r, st)) == NULL)
        return -1;
    return gg_cuda_run(c.r.ordinal, gram_on_device, &c, NULL, NULL, st);
}

typedef struct newton_call {
    gg_backend      *be;
    gg_cuda_rows     r;
    const gg_family *fam;
    double          *A, *b;
    int             *ok;
} newton_call;

static int newton_gram_on_device(void *arg, gg_status *st)
{
    newton_call *c = arg;
    gg_backend *be = c->be;
    gg_cuda_rows *r = &c->r;
    outer_state *o = state(r, -1, st);
    if (o == NULL)
        return -1;
    o->have = 0;          /* as the host's: the rows are the last eval's no more */
    int f = (int) c->fam->fam;
    gg_fm_link l = gg_family_link(c->fam);
    double th = c->fam->theta, bad = 0, zwz;
    long long n = (long long) r->n;
    void *args[] = {&f, &l, &th, &r->y, &r->pw, &r->off, &r->eta, &r->mu, &n, &r->w, &r->z,
                    &r->partial};
    if (launch(r, o->f_newton, args, "outer: launching outer_newton", st) ||
        gg_cuda_partial_sums(be, 1, &bad, st))
        return -1;
    *c->ok = bad == 0;
    return *c->ok ? be->ops->gram(be, c->A, c->b, &zwz, st) : 0;
}

/* timed as one: the Gram pass's own time is within it */
static int outer_newton_gram(gg_backend *be, const gg_family *fam, double *A, double *b,
                             int *ok, gg_status *st)
{
    newton_call c = {be, {0}, fam, A, b, ok};
    gg_cuda_rows_of(be, &c.r);
    return gg_cuda_run(c.r.ordinal, newton_gram_on_device, &c, NULL, &be->t_rows, st);
}

/* G = deta' diag(wt) deta (M x M) and, with z, *b = deta' diag(wt) z:
 * a Gram product of the n x M matrix deta (wt, z: 0 for none) */
static int mat_gram(const gg_cuda_rows *r, CUdeviceptr A, gg_buflist *tmp, int M,
                    CUdeviceptr wt, CUdeviceptr z, double *G, double *b, gg_status *st);

static int deta_gram(const gg_cuda_rows *r, const outer_state *o, gg_buflist *tmp, int M,
                     CUdeviceptr wt, CUdeviceptr z, double *G, double *b, gg_status *st)
{
    return mat_gram(r, o->deta, tmp, M, wt, z, G, b, st);
}

/* *G = x' x and *b = x' z for n-vectors x, z on the device */
static int vec_gram(const gg_cuda_rows *r, gg_buflist *tmp, CUdeviceptr x, CUdeviceptr z,
                    double *G, double *b, gg_status *st)
{
    return mat_gram(r, x, tmp, 1, 0, z, G, b, st);
}

/* G = A' diag(wt) A (M x M) and, with z, *b = A' diag(wt) z for A n x M
 * on the device (wt, z: 0 for none) */
static int mat_gram(const gg_cuda_rows *r, CUdeviceptr A, gg_buflist *tmp, int M,
                    CUdeviceptr wt, CUdeviceptr z, double *G, double *b, gg_status *st)
{
    gg_gram_plan plan;
    const int q = M + (z != 0);
    gg_cuda_gram_plan(r->ordinal, r->n, q, &plan);
    const int mark = tmp->n;
    CUdeviceptr dP = gg_buflist_alloc(tmp, plan.partial_elements, LABEL, st);
    CUdeviceptr dG = dP ? gg_buflist_alloc(tmp, (size_t) q * q, LABEL, st) : 0;
    double zwz;
    int rc = !dG ||
             gg_cuda_gram_run(r->ordinal, LABEL, A, r->n, z, wt, r->n, M, &plan, dP, dG,
                              0, NULL, r->stream, st) ||
             gg_cuda_gram_fetch(LABEL, dG, M, z != 0, G, b, &zwz, st) ? -1 : 0;
    gg_buflist_truncate(tmp, mark);
    return rc;
}

/* mgcv's packing of theta's pair (j, k), j <= k, 0-based */
static int pk(int j, int k, int nth)
{
    return j * nth - j * (j - 1) / 2 + (k - j);
}

typedef struct derivs_call {
    gg_backend      *be;
    gg_cuda_rows     r;
    outer_state     *o;
    gg_outer_derivs *d;
    int              F;        /* Fisher's weights differ from Newton's */
    int              ne;       /* then their pairs' columns of RHS: M (M + 1) / 2 */
} derivs_call;

static int derivs_on_device(void *arg, gg_status *st)
{
    const derivs_call *c = arg;
    gg_backend *be = c->be;
    gg_cuda_rows r = c->r;
    if (gg_cuda_need_h(be, &r.h, st)) return -1;
    outer_state *o = c->o;
    gg_outer_derivs *d = c->d;
    const size_t n = r.n;
    const int p = r.p, M = d->M, np = M * (M + 1) / 2;
    const int F = c->F, ne = c->ne;
    const int nth = d->nth, npk = GG_FM_EFO_NPK(nth);
    const int k = ne + (d->pe != 0) + (d->pearson != 0) + 1 + npk;
    int rc = -1;
    double *XV = malloc((size_t) p * (size_t) k * sizeof(double));
    double *scratch = malloc(((size_t) M * M + 1) * sizeof(double));
    /* theta's sums as Gram products: deta' [h c | g] (n x 2 nth), and h'
     * [a | d] (n x (nth + npk)) */
    double *tsum = malloc(((size_t) (M + 1) * (2 * nth + npk) + 1) * sizeof(double));
    double *bp = malloc((size_t) p * sizeof(double));      /* the Gram passes' X'Wz */
    CUdeviceptr dB;
    if (XV == NULL || scratch == NULL || bp == NULL || tsum == NULL) {
        gg_fail(st, "gamgpu_host_oom", "out of memory (outer derivatives)");
        goto done;
    }
    if (work_alloc(o, &r, M > 0 ? M : 1, k, st))
        goto done;
    const CUdeviceptr *v = o->v;
    const CUdeviceptr wl1 = F ? v[GG_OR_WF1] : v[GG_OR_W1];
    const CUdeviceptr wl2 = F ? v[GG_OR_WF2] : v[GG_OR_W2];
    if (M > 0) {
        /* d eta / d rho_k = X d beta / d rho_k */
        if (!(dB = gg_buflist_alloc(&o->bufs, (size_t) p * M, LABEL, st)) ||
            gg_cuda_upload(LABEL, dB, d->db, (size_t) p * M, st) ||
            gg_cuda_xmul_device(be, dB, M, o->deta, st))
            goto done;
        /* dH_k = X' diag(w1 eta_k) X (z = 0 for all of them: the Gram
         * pass does not write it) */
        if (prod(o, &r, 0.0, 0, 0, 0, r.z, st))
            goto done;
        for (int j = 0; j < M; j++) {
            /* (theta's: w1 eta + a) */
            if (prod_add(o, &r, 1.0, wl1, col(o->deta, n, j), 0,
                         j < nth ? col(v[GG_OR_ETH], n, GG_FM_EFO_A(nth) + j) : 0, r.w, st))
                goto done;
            double zwz;
            if (be->ops->gram(be, d->dH + (size_t) j * p * p, bp, &zwz, st))
                goto done;
        }
    }
    /* h_i = x_i' Ml x_i, into the backend's h */
    if (gg_cuda_leverage_device(be, d->Ml, 0, st))
        goto done;
    /* V's columns: Newton's w1 eta_j eta_k pair by pair, dev1, pe1, h wl1 */
    int q = 0;
    if (ne > 0)
        for (int kk = 0; kk < M; kk++)
            for (int j = 0; j <= kk; j++, q++)
                if (prod(o, &r, 1.0, v[GG_OR_W1], col(o->deta, n, j), col(o->deta, n, kk),
                         col(o->V, n, q), st))
                    goto done;
    if (d->pe && prod(o, &r, 1.0, v[GG_OR_DEV1], 0, 0, col(o->V, n, q++), st))
        goto done;
    if (d->pearson && prod(o, &r, 1.0, v[GG_OR_PE1], 0, 0, col(o->V, n, q++), st))
        goto done;
    const CUdeviceptr hw1 = col(o->V, n, q);
    if (prod(o, &r, 1.0, r.h, wl1, 0, hw1, st))
        goto done;
    /* theta's pairs' columns of RHS past dH_j d beta_k: a_k eta_j + b_jk */
    const CUdeviceptr eth = v[GG_OR_ETH];
    for (int kk = 0, qq = 0; kk < nth; kk++)
        for (int j = 0; j <= kk; j++, qq++)
            if (prod_add(o, &r, 1.0, col(eth, n, GG_FM_EFO_A(nth) + kk), col(o->deta, n, j), 0,
                         col(eth, n, GG_FM_EFO_B(nth) + pk(j, kk, nth)),
                         col(o->V, n, q + 1 + qq), st))
                goto done;
    if (gg_cuda_xtmul_device(be, o->V, k, XV, st))
        goto done;
    if (nth)
        memcpy(d->th_rhs, XV + (size_t) p * (q + 1), (size_t) p * npk * sizeof(double));
    if (ne > 0)
        memcpy(d->RHS, XV, (size_t) p * np * sizeof(double));
    q = ne;
    if (d->pe) memcpy(d->Xd, XV + (size_t) p * q++, (size_t) p * sizeof(double));
    if (d->pearson) memcpy(d->Xp, XV + (size_t) p * q++, (size_t) p * sizeof(double));
    memcpy(d->u, XV + (size_t) p * q, (size_t) p * sizeof(double));
    if (M > 0) {
        /* the sums, as Gram products of deta: hww = deta' diag(h wl2) deta
         * (h wl2 in the backend's w, free again), hd = deta' (h wl1),
         * Dw = deta' diag(w) deta, Dp2 = deta' diag(pe2) deta */
        if (prod(o, &r, 1.0, r.h, wl2, 0, r.w, st) ||
            deta_gram(&r, o, &o->bufs, M, r.w, 0, d->hww, NULL, st) ||
            deta_gram(&r, o, &o->bufs, M, 0, hw1, scratch, d->hd, st) ||
            (d->pe && deta_gram(&r, o, &o->bufs, M, v[GG_OR_W], 0, d->Dw, NULL, st)) ||
            (d->pearson && deta_gram(&r, o, &o->bufs, M, v[GG_OR_PE2], 0, d->Dp2, NULL, st)))
            goto done;
        /* theta's sums: deta' (h c_i) (h c_i in w), tg = deta' g_i, and
         * sum h a_i, sum h d_jk as Gram products of h (n x 1) */
        for (int a = 0; a < nth; a++) {
            double G1;
            if (prod(o, &r, 1.0, r.h, col(eth, n, GG_FM_EFO_C(nth) + a), 0, r.w, st) ||
                deta_gram(&r, o, &o->bufs, M, 0, r.w, scratch, tsum, st) ||
                deta_gram(&r, o, &o->bufs, M, 0, col(eth, n, GG_FM_EFO_G(nth) + a), scratch,
                          tsum + M, st) ||
                vec_gram(&r, &o->bufs, r.h, col(eth, n, GG_FM_EFO_A(nth) + a), &G1,
                         &d->th_ha[a], st))
                goto done;
            for (int kk = 0; kk < M; kk++) {
                d->th_hc[a + kk * nth] = tsum[kk];
                d->tg[a + kk * nth] = tsum[M + kk];
            }
        }
        for (int a = 0; a < npk; a++) {
            double G1;
            if (vec_gram(&r, &o->bufs, r.h, col(eth, n, GG_FM_EFO_D(nth) + a), &G1,
                         &d->th_hd[a], st))
                goto done;
        }
    }
    rc = 0;
done:
    /* the call's scratch (after the rows, deta and V) goes back */
    if (o->bufs.n > o->nvec + 2)
        gg_buflist_truncate(&o->bufs, o->nvec + 2);
    free(XV);
    free(scratch);
    free(tsum);
    free(bp);
    return rc;
}

/* timed as one: the Gram passes' own time is within it */
static int outer_derivs(gg_backend *be, gg_outer_derivs *d, int *rhs_done, gg_status *st)
{
    derivs_call c = {be, {0}, NULL, d, 0, 0};
    if ((c.o = rows_state(be, &c.r, st)) == NULL)
        return -1;
    c.F = d->fisher && !c.o->fisher;
    c.ne = c.F ? d->M * (d->M + 1) / 2 : 0;
    *rhs_done = c.ne > 0;
    return gg_cuda_run(c.r.ordinal, derivs_on_device, &c, NULL, &be->t_rows, st);
}

/* ---- an extended family's rows (efam_outer.h) ------------------------- */

typedef struct ef_rows_call {
    gg_backend      *be;
    gg_cuda_rows     r;
    const gg_family *fam;
    int              level;
    double          *sums;
} ef_rows_call;

static int ef_rows_on_device(void *arg, gg_status *st)
{
    ef_rows_call *c = arg;
    gg_cuda_rows *r = &c->r;
    const gg_family *fam = c->fam;
    outer_state *o = state(r, fam->ef.nth, st);
    if (o == NULL)
        return -1;
    o->have = 0;
    int f = (int) fam->fam;
    gg_fm_link l = gg_family_link(fam);
    gg_fm_efpar par = fam->ef;
    long long n = (long long) r->n;
    CUdeviceptr *v = o->v;
    void *args[] = {&f, &l, &c->level, &par, &r->y, &r->yat, &r->pw, &r->mu, &n, &v[GG_OR_W],
                    &v[GG_OR_W1], &v[GG_OR_W2], &v[GG_OR_DEV1], &v[GG_OR_EWF], &v[GG_OR_ETH],
                    &r->partial};
    if (launch(r, o->f_ef_rows, args, "outer: launching outer_ef_rows", st) ||
        gg_cuda_partial_sums(c->be, GG_FM_EFO_NSUM(o->nth), c->sums, st))
        return -1;
    o->have = 1;
    o->efam = 1;
    o->level = c->level;
    o->fisher = 0;
    o->pearson = 0;
    return 0;
}

static int outer_ef_rows(gg_backend *be, const gg_family *fam, int level, double *sums,
                         gg_status *st)
{
    ef_rows_call c = {be, {0}, fam, level, sums};
    gg_cuda_rows_of(be, &c.r);
    return gg_cuda_run(c.r.ordinal, ef_rows_on_device, &c, NULL, &be->t_rows, st);
}

typedef struct ef_newton_call {
    gg_backend  *be;
    gg_cuda_rows r;
    outer_state *o;
    int          mask;
    double      *A, *b;
} ef_newton_call;

static int ef_newton_on_device(void *arg, gg_status *st)
{
    ef_newton_call *c = arg;
    gg_backend *be = c->be;
    gg_cuda_rows *r = &c->r;
    outer_state *o = c->o;
    const int p = r->p;
    int rc = -1;
    double *xd = malloc((size_t) p * sizeof(double)), zwz;
    if (xd == NULL) {
        gg_fail(st, "gamgpu_host_oom", "out of memory (outer rows)");
        goto done;
    }
    if (work_alloc(o, r, 1, 1, st))
        goto done;
    long long n = (long long) r->n;
    int m = c->mask != 0;
    void *args[] = {&n, &m, &o->v[GG_OR_W], &o->v[GG_OR_DEV1], &r->eta, &r->off, &r->w, &r->z,
                    &o->V};
    if (launch(r, o->f_ef_newton, args, "outer: launching outer_ef_newton", st) ||
        be->ops->gram(be, c->A, c->b, &zwz, st) || gg_cuda_xtmul_device(be, o->V, 1, xd, st))
        goto done;
    for (int a = 0; a < p; a++)
        c->b[a] -= xd[a];
    rc = 0;
done:
    free(xd);
    return rc;
}

/* timed as one: the Gram pass's own time is within it */
static int outer_ef_newton(gg_backend *be, int mask, double *A, double *b, gg_status *st)
{
    ef_newton_call c = {be, {0}, NULL, mask, A, b};
    if ((c.o = rows_state(be, &c.r, st)) == NULL)
        return -1;
    if (!c.o->efam)
        return gg_fail(st, "gamgpu_internal_error", "outer rows: no extended family's rows");
    return gg_cuda_run(c.r.ordinal, ef_newton_on_device, &c, NULL, &be->t_rows, st);
}

typedef struct ef_xg_call {
    gg_backend *be;
    CUdeviceptr g;             /* theta's g columns */
    int         nth;
    double     *out;
} ef_xg_call;

static int ef_xg_on_device(void *arg, gg_status *st)
{
    const ef_xg_call *c = arg;
    return gg_cuda_xtmul_device(c->be, c->g, c->nth, c->out, st);
}

static int outer_ef_xg(gg_backend *be, double *out, gg_status *st)
{
    gg_cuda_rows r;
    outer_state *o = rows_state(be, &r, st);
    if (o == NULL)
        return -1;
    if (!vec_computed(o, GG_OR_ETH))
        return gg_fail(st, "gamgpu_internal_error", "outer rows: no level-2 theta rows");
    ef_xg_call c = {be, col(o->v[GG_OR_ETH], r.n, GG_FM_EFO_G(o->nth)), o->nth, out};
    return gg_cuda_run(r.ordinal, ef_xg_on_device, &c, NULL, &be->t_rows, st);
}

const gg_outer_ops gg_cuda_outer_ops = {outer_rows, outer_fetch, outer_gram, outer_newton_gram,
                                        outer_derivs, outer_ef_rows, outer_ef_newton,
                                        outer_ef_xg};
