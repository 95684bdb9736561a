/* outer_rows.c -- the row-wise work of gam()'s outer smoothing parameter
 * iteration (see outer_rows.h): each function hands the work to the
 * backend's outer ops where it has them (the rows then stay in its
 * memory), else does it here -- the rows over threads in blocks of
 * OR_BLOCK, each block's sums added in block order in long double, so
 * that neither the threads nor their number change a result; the
 * products with X through the backend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outer_rows.h"
#include "threads.h"
#include "outer_math.h"
#include "efam_outer.h"

#define OR_BLOCK 4096
#define OR_JOBS 32

typedef void (*block_fn)(void *ctx, size_t i0, size_t i1, size_t block);

typedef struct block_job {
    block_fn fn;
    void *ctx;
    size_t n, b0, b1;
} block_job;

static void *block_run(void *arg)
{
    const block_job *j = arg;
    for (size_t b = j->b0; b < j->b1; b++) {
        const size_t i1 = (b + 1) * OR_BLOCK < j->n ? (b + 1) * OR_BLOCK : j->n;
        j->fn(j->ctx, b * OR_BLOCK, i1, b);
    }
    return NULL;
}

static size_t n_blocks(size_t n) { return (n + OR_BLOCK - 1) / OR_BLOCK; }

/* fn on every block of rows, over the thread budget */
static void run_blocks(size_t n, block_fn fn, void *ctx)
{
    const size_t nb = n_blocks(n);
    if (nb == 0) return;
    block_job jobs[OR_JOBS];
    const int nj = nb < OR_JOBS ? (int) nb : OR_JOBS;
    for (int k = 0; k < nj; k++)
        jobs[k] = (block_job) {fn, ctx, n, nb * k / nj, nb * (k + 1) / nj};
    gg_run_jobs(nj, block_run, jobs, sizeof(block_job));
}

/* the blocks' partial sums (nb x k) added in block order */
static void sum_parts(const double *part, size_t nb, int k, double *out)
{
    for (int c = 0; c < k; c++) {
        long double t = 0;
        for (size_t b = 0; b < nb; b++) t += part[b * (size_t) k + c];
        out[c] = (double) t;
    }
}

/* the host vectors freed; the flags kept */
static void vectors_free(gg_outer_rows *r)
{
    double **v[] = {&r->eta, &r->mu, &r->w, &r->w1, &r->w2, &r->wF1, &r->wF2, &r->dev1,
                    &r->pe1, &r->pe2, &r->h, &r->zero, &r->one, &r->deta, &r->V,
                    &r->ewf, &r->eth};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        free(*v[i]);
        *v[i] = NULL;
    }
    r->Mcap = r->kcap = r->eth_cols = 0;
}

void gg_outer_rows_free(gg_outer_rows *r)
{
    vectors_free(r);
    memset(r, 0, sizeof *r);
}

static int oom(gg_status *st) { return gg_fail(st, "gamgpu_host_oom", "out of memory (outer iteration rows)"); }

/* the n-vectors, allocated once */
static int rows_alloc(gg_outer_rows *r, size_t n, gg_status *st)
{
    if (r->eta != NULL && r->n == n) return 0;
    vectors_free(r);
    r->n = n;
    double **v[] = {&r->eta, &r->mu, &r->w, &r->w1, &r->w2, &r->wF1, &r->wF2, &r->dev1,
                    &r->pe1, &r->pe2, &r->h, &r->zero, &r->one};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if ((*v[i] = malloc((n ? n : 1) * sizeof(double))) == NULL) {
            vectors_free(r);
            return oom(st);
        }
    memset(r->zero, 0, n * sizeof(double));
    for (size_t i = 0; i < n; i++) r->one[i] = 1.0;
    return 0;
}

/* an extended family's vectors for nth theta values (after rows_alloc) */
static int ef_alloc(gg_outer_rows *r, int nth, gg_status *st)
{
    const size_t n = r->n ? r->n : 1;
    const int k = GG_FM_EFO_NCOL(nth) > 0 ? GG_FM_EFO_NCOL(nth) : 1;
    if (r->ewf == NULL && (r->ewf = malloc(n * sizeof(double))) == NULL) return oom(st);
    if (r->eth != NULL && r->eth_cols == k) return 0;
    free(r->eth);
    r->eth_cols = 0;
    if ((r->eth = malloc(n * (size_t) k * sizeof(double))) == NULL) return oom(st);
    r->eth_cols = k;
    return 0;
}

/* deta with M columns and V with k */
static int work_alloc(gg_outer_rows *r, int M, int k, gg_status *st)
{
    if (M > r->Mcap) {
        free(r->deta);
        r->Mcap = 0;
        if ((r->deta = malloc(r->n * (size_t) M * sizeof(double))) == NULL) return oom(st);
        r->Mcap = M;
    }
    if (k > r->kcap) {
        free(r->V);
        r->kcap = 0;
        if ((r->V = malloc(r->n * (size_t) k * sizeof(double))) == NULL) return oom(st);
        r->kcap = k;
    }
    return 0;
}

/* The host's rows need y and the prior weights in this process: not so
 * for a cluster's session whose rows stay on its nodes (d->y NULL). */
static int rows_here(const gg_data *d, gg_status *st)
{
    if (d->y != NULL) return 0;
    return gg_fail(st, "gamgpu_unsupported",
                   "gam()'s outer iteration needs the rows in this process; a cluster's "
                   "rows left on its nodes take method = \"fREML\" or \"GCV.Cp\"");
}

static int fetch_state(gg_backend *be, gg_outer_rows *r, gg_status *st)
{
    return be->ops->fetch(be, GG_VEC_ETA, r->eta, st) || be->ops->fetch(be, GG_VEC_MU, r->mu, st)
               ? -1 : 0;
}

/* ---- the rows ----------------------------------------------------------- */

typedef struct rows_ctx {
    const gg_data *d;
    int f;
    gg_fm_link l;
    double th;          /* negbin's theta, Tweedie's p */
    gg_outer_rows *r;
    double *part;       /* nb: Pearson sums */
} rows_ctx;

static void rows_block(void *c_, size_t i0, size_t i1, size_t b)
{
    const rows_ctx *c = c_;
    gg_outer_rows *r = c->r;
    double s = 0, sb = 0;
    for (size_t i = i0; i < i1; i++) {
        const double y = c->d->y[i], pw = c->d->pw[i], mu = r->mu[i];
        const gg_fm_orow o = gg_fm_outer_row(c->f, c->l, r->fisher, y, pw, mu, c->th);
        r->w[i] = o.w;
        r->w1[i] = o.w1;
        r->w2[i] = o.w2;
        r->dev1[i] = o.dev1;
        if (!r->fisher) {
            const gg_fm_orow F = gg_fm_outer_row(c->f, c->l, 1, y, pw, mu, c->th);
            r->wF1[i] = F.w1;
            r->wF2[i] = F.w2;
        }
        if (r->pearson) {
            s += gg_fm_pearson_row(c->f, c->l, y, pw, mu, o.g1, c->th, r->pe1 + i, r->pe2 + i);
            sb += gg_fm_sbar_row(c->f, y, mu, c->th);
        }
    }
    c->part[2 * b] = s;
    c->part[2 * b + 1] = sb;
}

int gg_outer_rows_compute(gg_backend *be, const gg_data *d, const gg_family *fam,
                          int pearson, gg_outer_rows *r, gg_status *st)
{
    const size_t n = d->n;
    r->have = 0;
    r->efam = 0;
    const int fisher = gg_fm_canonical((int) fam->fam, gg_family_link(fam));
    if (be->ops->outer == NULL && rows_here(d, st)) return -1;
    if (be->ops->outer != NULL) {
        r->n = n;
        r->on_backend = 1;
        r->fisher = fisher;
        r->pearson = pearson;
        r->fam = *fam;
        double stats[2] = {0, 0};
        if (be->ops->outer->rows(be, fam, fisher, pearson, stats, st)) return -1;
        r->pearson_stat = pearson ? stats[0] : NAN;
        r->sbar_sum = pearson ? stats[1] : NAN;
        r->have = 1;
        return 0;
    }
    if (rows_alloc(r, n, st)) return -1;
    if (fetch_state(be, r, st)) return -1;
    r->on_backend = 0;
    r->fisher = fisher;
    r->pearson = pearson;
    r->fam = *fam;
    double *part = malloc(2 * (n_blocks(n) + 1) * sizeof(double));
    if (part == NULL) return oom(st);
    rows_ctx c = {d, (int) fam->fam, gg_family_link(fam), fam->theta, r, part};
    run_blocks(n, rows_block, &c);
    double ps[2] = {0, 0};
    sum_parts(part, n_blocks(n), 2, ps);
    free(part);
    r->pearson_stat = pearson ? ps[0] : NAN;
    r->sbar_sum = pearson ? ps[1] : NAN;
    r->have = 1;
    return 0;
}

typedef struct ef_rows_ctx {
    const gg_data *d;
    int f;
    gg_fm_link l;
    int level;
    const gg_fm_efpar *par;
    gg_outer_rows *r;
    double *part;       /* nb x GG_FM_EFO_NSUM(nth): rows not finite, Dth, Dth2 */
} ef_rows_ctx;

static void ef_rows_block(void *c_, size_t i0, size_t i1, size_t b)
{
    const ef_rows_ctx *c = c_;
    gg_outer_rows *r = c->r;
    const size_t n = r->n;
    const int nth = c->par->nth, npk = GG_FM_EFO_NPK(nth), ncol = GG_FM_EFO_NCOL(nth);
    const int ns = GG_FM_EFO_NSUM(nth);
    double *s = c->part + (size_t) ns * b;
    memset(s, 0, (size_t) ns * sizeof(double));
    gg_fm_eforow o;
    for (size_t i = i0; i < i1; i++) {
        gg_fm_ef_outer_row(c->f, c->l, c->d->y[i], c->d->yat ? c->d->yat[i] : c->d->y[i],
                           c->d->pw[i], r->mu[i], c->par, c->level, &o);
        r->w[i] = o.w;
        r->w1[i] = o.w1;
        r->w2[i] = o.w2;
        r->dev1[i] = o.dev1;
        r->ewf[i] = o.wf;
        for (int k = 0; k < ncol; k++) r->eth[i + (size_t) k * n] = o.th[k];
        s[0] += !o.good;
        for (int k = 0; k < nth; k++) s[1 + k] += o.dth[k];
        for (int k = 0; k < npk; k++) s[1 + nth + k] += o.dth2[k];
    }
}

int gg_outer_ef_rows_compute(gg_backend *be, const gg_data *d, const gg_family *fam,
                             int level, gg_outer_rows *r, gg_status *st)
{
    const size_t n = d->n;
    r->have = 0;
    if (be->ops->outer == NULL && rows_here(d, st)) return -1;
    if (!fam->efam || !gg_fm_ef_outer_ok((int) fam->fam, gg_family_link(fam), &fam->ef) ||
        fam->ef.nth > GG_FM_EFO_MAXTH || (level != 0 && level != 2))
        return gg_fail(st, "gamgpu_internal_error",
                       "outer rows: an extended family's rows are those gg_fm_ef_outer_ok() "
                       "takes (efam_outer.h), at level 0 or 2");
    r->fisher = 0;
    r->pearson = 0;
    r->efam = 1;
    r->level = level;
    r->nth = fam->ef.nth;
    r->fam = *fam;
    if (be->ops->outer != NULL) {
        r->n = n;
        r->on_backend = 1;
        if (be->ops->outer->ef_rows(be, fam, level, r->ef_sums, st)) return -1;
        r->have = 1;
        return 0;
    }
    if (rows_alloc(r, n, st) || ef_alloc(r, r->nth, st) || fetch_state(be, r, st)) return -1;
    r->on_backend = 0;
    const size_t nb = n_blocks(n);
    const int ns = GG_FM_EFO_NSUM(r->nth);
    double *part = malloc((nb + 1) * (size_t) ns * sizeof(double));
    if (part == NULL) return oom(st);
    ef_rows_ctx c = {d, (int) fam->fam, gg_family_link(fam), level, &fam->ef, r, part};
    run_blocks(n, ef_rows_block, &c);
    sum_parts(part, nb, ns, r->ef_sums);
    free(part);
    r->have = 1;
    return 0;
}

int gg_outer_ef_newton(gg_backend *be, const gg_data *d, gg_outer_rows *r, int mask,
                       double *A, double *b, gg_status *st)
{
    if (!r->have || !r->efam)
        return gg_fail(st, "gamgpu_internal_error", "outer rows: no extended family's rows computed");
    if (r->on_backend) return be->ops->outer->ef_newton(be, mask, A, b, st);
    const size_t n = r->n;
    const int p = be->p;
    if (work_alloc(r, 0, 3, st)) return -1;
    double *w = r->V, *z = r->V + n, *hd = r->V + 2 * n;
    for (size_t i = 0; i < n; i++) {
        const double e = r->eta[i] - (d->offset != NULL ? d->offset[i] : 0.0);
        /* (gam.fit4's good rows: w and w (eta - offset) - Deta / 2 finite;
         * a censored family's start has rows at eta = -Inf) */
        const int good = isfinite(r->w[i]) && isfinite(r->w[i] * e - r->dev1[i] / 2);
        const int keep = good && (!mask || r->w[i] > 0);
        w[i] = keep ? r->w[i] : 0;
        z[i] = good ? e : 0;
        hd[i] = keep ? r->dev1[i] / 2 : 0;
    }
    double zwz, *xd = malloc((size_t) p * sizeof(double));
    if (xd == NULL) return oom(st);
    int rc = be->ops->set_rows(be, w, z, st) || be->ops->gram(be, A, b, &zwz, st) ||
             be->ops->xtmul(be, hd, 1, xd, st) ? -1 : 0;
    if (rc == 0)
        for (int a = 0; a < p; a++) b[a] -= xd[a];
    free(xd);
    return rc;
}

int gg_outer_ef_xg(gg_backend *be, gg_outer_rows *r, double *out, gg_status *st)
{
    if (!r->have || !r->efam || r->level < 2)
        return gg_fail(st, "gamgpu_internal_error",
                       "outer rows: X' Detath needs an extended family's level-2 rows");
    const int nth = r->nth;
    const size_t pn = (size_t) be->p * (size_t) nth;
    if (nth == 0) return 0;
    int rc = r->on_backend ? be->ops->outer->ef_xg(be, out, st)
                           : be->ops->xtmul(be, r->eth + (size_t) GG_FM_EFO_G(nth) * r->n, nth,
                                            out, st);
    if (rc == 0)
        for (size_t a = 0; a < pn; a++) out[a] *= 0.5;
    return rc;
}

int gg_outer_rows_to_host(gg_backend *be, gg_outer_rows *r, gg_status *st)
{
    if (!r->have) return gg_fail(st, "gamgpu_internal_error", "outer rows: no rows computed");
    if (!r->on_backend) return 0;
    if (rows_alloc(r, r->n, st) || (r->efam && ef_alloc(r, r->nth, st)) ||
        fetch_state(be, r, st))
        return -1;
    const gg_outer_ops *o = be->ops->outer;
    const int ef = r->efam, e2 = ef && r->level >= 2;
    struct { gg_outer_vec which; double *out; int want; } v[] = {
        {GG_OR_W, r->w, 1}, {GG_OR_W1, r->w1, !ef || e2}, {GG_OR_W2, r->w2, !ef || e2},
        {GG_OR_WF1, r->wF1, !ef && !r->fisher}, {GG_OR_WF2, r->wF2, !ef && !r->fisher},
        {GG_OR_DEV1, r->dev1, 1}, {GG_OR_PE1, r->pe1, r->pearson},
        {GG_OR_PE2, r->pe2, r->pearson}, {GG_OR_EWF, r->ewf, ef},
        {GG_OR_ETH, r->eth, e2 && r->nth > 0}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i].want && o->fetch(be, v[i].which, v[i].out, st)) return -1;
    return 0;
}

int gg_outer_rows_gram(gg_backend *be, gg_outer_rows *r, double *A, gg_status *st)
{
    if (!r->have) return gg_fail(st, "gamgpu_internal_error", "outer rows: no rows computed");
    if (r->on_backend) return be->ops->outer->gram(be, A, st);
    double *b = malloc((size_t) be->p * sizeof(double)), zwz;
    if (b == NULL) return oom(st);
    int rc = be->ops->set_rows(be, r->w, r->zero, st) || be->ops->gram(be, A, b, &zwz, st) ? -1 : 0;
    free(b);
    return rc;
}

/* ---- Newton's penalized IRLS step ------------------------------------------ */

typedef struct newton_ctx {
    const gg_data *d;
    int f;
    gg_fm_link l;
    double th;
    const gg_outer_rows *r;
    double *w, *z;
    int *bad;           /* nb: a block with a weight that is not positive */
} newton_ctx;

static void newton_block(void *c_, size_t i0, size_t i1, size_t b)
{
    const newton_ctx *c = c_;
    int bad = 0;
    for (size_t i = i0; i < i1; i++) {
        const double off = c->d->offset != NULL ? c->d->offset[i] : 0.0;
        if (!gg_fm_newton_row(c->f, c->l, c->d->y[i], c->d->pw[i], off, c->r->eta[i],
                              c->r->mu[i], c->th, c->w + i, c->z + i))
            bad = 1;
    }
    c->bad[b] = bad;
}

int gg_outer_newton_gram(gg_backend *be, const gg_data *d, const gg_family *fam,
                         gg_outer_rows *r, double *A, double *b, int *ok, gg_status *st)
{
    const size_t n = d->n;
    r->have = 0;                 /* the rows are stale: the step takes the backend's
                                    w and z (and here eta and mu) */
    if (be->ops->outer != NULL) return be->ops->outer->newton_gram(be, fam, A, b, ok, st);
    if (rows_here(d, st) || rows_alloc(r, n, st) || work_alloc(r, 0, 2, st)) return -1;
    if (fetch_state(be, r, st)) return -1;
    const size_t nb = n_blocks(n);
    int *bad = calloc(nb + 1, sizeof(int));
    if (bad == NULL) return oom(st);
    newton_ctx c = {d, (int) fam->fam, gg_family_link(fam), fam->theta, r, r->V, r->V + n, bad};
    run_blocks(n, newton_block, &c);
    *ok = 1;
    for (size_t k = 0; k < nb; k++)
        if (bad[k]) *ok = 0;
    free(bad);
    if (!*ok) return 0;
    double zwz;
    return be->ops->set_rows(be, c.w, c.z, st) || be->ops->gram(be, A, b, &zwz, st) ? -1 : 0;
}

/* ---- the derivative products ------------------------------------------- */

/* column k of an extended family's theta block */
static const double *ef_col(const gg_outer_rows *r, int k)
{
    return r->eth + (size_t) k * r->n;
}

/* mgcv's packing of theta's pair (j, k), j <= k, 0-based */
static int ef_pk(int j, int k, int nth)
{
    return j * nth - j * (j - 1) / 2 + (k - j);
}

/* the theta sums' count (deriv_block's t) */
static int theta_nsum(int nth, int M)
{
    return nth ? 2 * nth * M + nth + GG_FM_EFO_NPK(nth) : 0;
}

typedef struct deriv_ctx {
    const gg_outer_rows *r;
    const gg_outer_derivs *o;
    const double *wl1, *wl2;    /* the leverage sums' weights */
    int M, ne, k;               /* E columns (pairs, or 0); columns of V */
    double *part;               /* nb x nsum */
    int nsum;
} deriv_ctx;

/* V's columns (Newton's w1 eta_j eta_k pair by pair, dev1, pe1, h wl1) and
 * the blocks' sums: eta' diag(h wl2) eta, h wl1 eta, eta' diag(w) eta,
 * eta' diag(pe2) eta */
static void deriv_block(void *c_, size_t i0, size_t i1, size_t b)
{
    const deriv_ctx *c = c_;
    const gg_outer_rows *r = c->r;
    const size_t n = r->n;
    const int M = c->M, MM = M * M;
    double *V = r->V;
    int q = 0;
    if (c->ne > 0) for (int k = 0; k < M; k++)
        for (int j = 0; j <= k; j++, q++) {
            const double *ej = r->deta + (size_t) j * n, *ek = r->deta + (size_t) k * n;
            double *v = V + (size_t) q * n;
            for (size_t i = i0; i < i1; i++) v[i] = r->w1[i] * ej[i] * ek[i];
        }
    if (c->o->pe) {
        memcpy(V + (size_t) q * n + i0, r->dev1 + i0, (i1 - i0) * sizeof(double));
        q++;
    }
    if (c->o->pearson) {
        memcpy(V + (size_t) q * n + i0, r->pe1 + i0, (i1 - i0) * sizeof(double));
        q++;
    }
    double *v = V + (size_t) q * n;
    for (size_t i = i0; i < i1; i++) v[i] = r->h[i] * c->wl1[i];
    const int nth = c->o->nth;
    /* theta's pairs' columns of RHS past dH_j d beta_k: a_k eta_j + b_jk */
    for (int kk = 0, qq = 0; kk < nth; kk++)
        for (int j = 0; j <= kk; j++, qq++) {
            const double *ak = ef_col(r, GG_FM_EFO_A(nth) + kk), *ej = r->deta + (size_t) j * n;
            const double *bjk = ef_col(r, GG_FM_EFO_B(nth) + ef_pk(j, kk, nth));
            v = V + (size_t) (q + 1 + qq) * n;
            for (size_t i = i0; i < i1; i++) v[i] = ak[i] * ej[i] + bjk[i];
        }
    /* sums: hww (M x M), hd (M), Dw (M x M), Dp2 (M x M); with nth, sum h
     * c_i eta_k (nth x M), tg (nth x M), sum h a_i (nth), sum h d_jk (npk) */
    double *s = c->part + b * (size_t) c->nsum;
    memset(s, 0, (size_t) c->nsum * sizeof(double));
    if (nth) {
        double *t = s + 3 * MM + M;
        for (int k = 0; k < M; k++) {
            const double *ek = r->deta + (size_t) k * n;
            for (int a = 0; a < nth; a++) {
                const double *ca = ef_col(r, GG_FM_EFO_C(nth) + a);
                const double *ga = ef_col(r, GG_FM_EFO_G(nth) + a);
                double hc = 0, tg = 0;
                for (size_t i = i0; i < i1; i++) {
                    hc += r->h[i] * ca[i] * ek[i];
                    tg += ga[i] * ek[i];
                }
                t[a + k * nth] = hc;
                t[nth * M + a + k * nth] = tg;
            }
        }
        t += 2 * nth * M;
        for (int a = 0; a < nth; a++) {
            const double *aa = ef_col(r, GG_FM_EFO_A(nth) + a);
            double ha = 0;
            for (size_t i = i0; i < i1; i++) ha += r->h[i] * aa[i];
            t[a] = ha;
        }
        for (int a = 0; a < GG_FM_EFO_NPK(nth); a++) {
            const double *da = ef_col(r, GG_FM_EFO_D(nth) + a);
            double hd = 0;
            for (size_t i = i0; i < i1; i++) hd += r->h[i] * da[i];
            t[nth + a] = hd;
        }
    }
    for (int k = 0; k < M; k++) {
        const double *ek = r->deta + (size_t) k * n;
        for (int j = 0; j <= k; j++) {
            const double *ej = r->deta + (size_t) j * n;
            double a = 0, d = 0, e = 0;
            for (size_t i = i0; i < i1; i++) {
                const double t = ej[i] * ek[i];
                a += r->h[i] * c->wl2[i] * t;
                if (c->o->pe) d += r->w[i] * t;
                if (c->o->pearson) e += r->pe2[i] * t;
            }
            s[j + k * M] = a;
            s[MM + M + j + k * M] = d;
            s[2 * MM + M + j + k * M] = e;
        }
        double h = 0;
        for (size_t i = i0; i < i1; i++) h += r->h[i] * c->wl1[i] * ek[i];
        s[MM + k] = h;
    }
}

/* RHS pair by pair as dH_j d beta_k (Newton's weights in dH) */
static void rhs_from_dH(int p, gg_outer_derivs *o)
{
    int q = 0;
    for (int kk = 0; kk < o->M; kk++)
        for (int j = 0; j <= kk; j++, q++) {
            const double *A = o->dH + (size_t) j * p * p, *v = o->db + (size_t) kk * p;
            double *out = o->RHS + (size_t) q * p;
            for (int a = 0; a < p; a++) out[a] = 0;
            for (int c2 = 0; c2 < p; c2++)
                for (int a = 0; a < p; a++) out[a] += A[a + (size_t) c2 * p] * v[c2];
        }
}

static void symmetric_from_upper(double *A, int M)
{
    for (int k = 0; k < M; k++)
        for (int j = 0; j < k; j++) A[k + j * M] = A[j + k * M];
}

static int derivs_host(gg_backend *be, gg_outer_rows *r, gg_outer_derivs *o, gg_status *st);

/* theta's raw parts added in (outer_rows.h: gg_outer_derivs.nth) */
static void theta_terms(int p, gg_outer_derivs *o)
{
    const int M = o->M, nth = o->nth, npk = GG_FM_EFO_NPK(nth);
    for (size_t a = 0; a < (size_t) p * npk; a++) o->RHS[a] += o->th_rhs[a];
    for (int k = 0; k < M; k++)
        for (int j = 0; j <= k; j++) {
            double v = o->hww[j + k * M];
            if (k < nth) v += o->th_hc[k + j * nth];
            if (j < nth) v += o->th_hc[j + k * nth];
            if (k < nth) v += o->th_hd[ef_pk(j, k, nth)];
            o->hww[j + k * M] = o->hww[k + j * M] = v;
        }
    for (int j = 0; j < nth; j++) o->hd[j] += o->th_ha[j];
}

int gg_outer_derivs_compute(gg_backend *be, gg_outer_rows *r, gg_outer_derivs *o,
                            gg_status *st)
{
    if (!r->have) return gg_fail(st, "gamgpu_internal_error", "outer rows: no rows computed");
    if (o->nth != 0 && (!r->efam || o->nth != r->nth || r->level < 2 || o->M < o->nth ||
                        o->fisher || o->pe || o->pearson))
        return gg_fail(st, "gamgpu_internal_error",
                       "outer rows: theta's derivative products need an extended family's "
                       "level-2 rows, Newton's weights and theta's column");
    if (r->efam && (r->level < 2 || o->fisher || o->pe || o->pearson))
        return gg_fail(st, "gamgpu_internal_error",
                       "outer rows: an extended family's products take its level-2 rows "
                       "and Newton's weights");
    /* theta's raw parts: th_rhs (p x npk), th_hc (nth x M), th_ha (nth),
     * th_hd (npk) in one block */
    const int nth = o->nth, npk = GG_FM_EFO_NPK(nth);
    double *th = NULL;
    if (nth) {
        th = malloc(((size_t) be->p * npk + (size_t) nth * o->M + nth + npk) * sizeof(double));
        if (th == NULL) return oom(st);
        o->th_rhs = th;
        o->th_hc = o->th_rhs + (size_t) be->p * npk;
        o->th_ha = o->th_hc + (size_t) nth * o->M;
        o->th_hd = o->th_ha + nth;
    }
    int rc;
    if (r->on_backend) {
        int rhs_done = 0;
        rc = be->ops->outer->derivs(be, o, &rhs_done, st);
        if (rc == 0 && !rhs_done) rhs_from_dH(be->p, o);
    } else {
        rc = derivs_host(be, r, o, st);
    }
    if (rc == 0 && nth) theta_terms(be->p, o);
    free(th);
    o->th_rhs = o->th_hc = o->th_ha = o->th_hd = NULL;
    return rc;
}

/* gg_outer_derivs_compute() with the rows in host memory */
static int derivs_host(gg_backend *be, gg_outer_rows *r, gg_outer_derivs *o, gg_status *st)
{
    const size_t n = r->n;
    const int p = be->p, M = o->M, np = M * (M + 1) / 2;
    const int F = o->fisher && !r->fisher;     /* Fisher's weights differ from Newton's */
    /* X' (w1 eta_j eta_k) = X' diag(w1 eta_j) X d beta_k = dH_j d beta_k when
     * dH has Newton's weights: no pass over the rows then */
    const int ne = F ? np : 0;
    const int nth = o->nth, npk = GG_FM_EFO_NPK(nth);
    const int k = ne + (o->pe != 0) + (o->pearson != 0) + 1 + npk;
    if (work_alloc(r, M > 0 ? M : 1, k > 1 ? k : 1, st)) return -1;
    double *b = malloc((size_t) p * sizeof(double)), zwz;
    double *XV = malloc((size_t) p * (size_t) k * sizeof(double));
    const int nsum = 3 * M * M + M + theta_nsum(nth, M);
    const size_t nb = n_blocks(n);
    double *part = malloc((nb + 1) * (size_t) (nsum > 0 ? nsum : 1) * sizeof(double));
    double *tot = malloc((size_t) (nsum > 0 ? nsum : 1) * sizeof(double));
    int rc = -1;
    if (b == NULL || XV == NULL || part == NULL || tot == NULL) {
        oom(st);
        goto done;
    }
    /* d eta / d rho_k = X d beta / d rho_k */
    if (M > 0 && be->ops->xmul(be, o->db, M, r->deta, st)) goto done;
    /* dH_k = X' diag(w1 eta_k) X */
    const double *wg1 = F ? r->wF1 : r->w1;
    for (int j = 0; j < M; j++) {
        const double *e = r->deta + (size_t) j * n;
        if (j < nth) {       /* theta's: dw = w1 eta + a */
            const double *a = ef_col(r, GG_FM_EFO_A(nth) + j);
            for (size_t i = 0; i < n; i++) r->V[i] = wg1[i] * e[i] + a[i];
        } else
            for (size_t i = 0; i < n; i++) r->V[i] = wg1[i] * e[i];
        if (be->ops->set_rows(be, r->V, r->zero, st) ||
            be->ops->gram(be, o->dH + (size_t) j * p * p, b, &zwz, st))
            goto done;
    }
    /* h_i = x_i' Ml x_i */
    if (be->ops->set_rows(be, r->one, r->zero, st) || be->ops->leverage(be, o->Ml, r->h, st))
        goto done;
    deriv_ctx c = {r, o, F ? r->wF1 : r->w1, F ? r->wF2 : r->w2,
                   M, ne, k, part, nsum};
    run_blocks(n, deriv_block, &c);
    if (be->ops->xtmul(be, r->V, k, XV, st)) goto done;
    if (ne > 0)
        memcpy(o->RHS, XV, (size_t) p * np * sizeof(double));
    else
        rhs_from_dH(p, o);
    int q = ne;
    if (o->pe) memcpy(o->Xd, XV + (size_t) p * q++, (size_t) p * sizeof(double));
    if (o->pearson) memcpy(o->Xp, XV + (size_t) p * q++, (size_t) p * sizeof(double));
    memcpy(o->u, XV + (size_t) p * q, (size_t) p * sizeof(double));
    if (nth) memcpy(o->th_rhs, XV + (size_t) p * (q + 1), (size_t) p * npk * sizeof(double));
    if (nsum > 0) {
        sum_parts(part, nb, nsum, tot);
        if (nth) {
            const double *t = tot + 3 * M * M + M;
            const size_t nm = (size_t) nth * M;
            memcpy(o->th_hc, t, nm * sizeof(double));
            memcpy(o->tg, t + nm, nm * sizeof(double));
            memcpy(o->th_ha, t + 2 * nm, (size_t) nth * sizeof(double));
            memcpy(o->th_hd, t + 2 * nm + nth, (size_t) npk * sizeof(double));
        }
        memcpy(o->hww, tot, (size_t) M * M * sizeof(double));
        memcpy(o->hd, tot + M * M, (size_t) M * sizeof(double));
        symmetric_from_upper(o->hww, M);
        if (o->pe) {
            memcpy(o->Dw, tot + M * M + M, (size_t) M * M * sizeof(double));
            symmetric_from_upper(o->Dw, M);
        }
        if (o->pearson) {
            memcpy(o->Dp2, tot + 2 * M * M + M, (size_t) M * M * sizeof(double));
            symmetric_from_upper(o->Dp2, M);
        }
    }
    rc = 0;
done:
    free(b);
    free(XV);
    free(part);
    free(tot);
    return rc;
}
