/* cuda_cox.c -- cox.ph()'s log partial likelihood (family_cox.h) on the
 * device backend: X stays where the backend holds it (resident, or
 * streamed), and per call only the coefficients, the p-sized derivative
 * inputs and the rows' event times go up, p x p results come back.  The
 * same sums as family_cox.c's, in other orders (equal to rounding):
 *
 *   eta, gamma         X beta (the backend's X B pass), exp(eta + offset)
 *   Gamma, b, b_m      prefix sums down the rows (time decreasing) of
 *                      gamma, gamma x, d gamma / d rho_m x, read where a
 *                      row closes an event time (cox.cu's scans; over X's
 *                      chunks in order where X is streamed); with strata
 *                      segmented scans, the rows' strata their keys
 *   g, H               X'(d - gamma C); X' diag(gamma C) X by the backend's
 *                      Gram pass, B' diag(e) B by cuda_gram.c's over B
 *   d1H                the Gram pass with each rho's row weights, [B C_m]'
 *                      diag(e) [B C_m]'s off-diagonal block
 *   trd2H              q_i = x_i' W x_i (the backend's leverage pass), the
 *                      event times' b' W b (cox_bilinear), cox_trace's sums
 *
 * The buffers are taken from the device's arena for the call and returned
 * at its end.  Launches and buffers are counted under "cox".  Compiled
 * only with CUDA. */
#include "cuda_backend.h"
#include "cuda_internal.h"
#include "family_cox.h"
#include "gpu_arena.h"
#include "gpu_telemetry.h"

#include <stdlib.h>
#include <string.h>

static const char *LABEL = "cox";

#define COX_THREADS 256            /* cox.cu's NTHREADS */
#define COX_TILE (COX_THREADS * 8) /* cox.cu's TILE */

typedef struct cox_dev {
    gg_backend  *be;
    gg_cuda_rows r;
    gg_buflist   bufs;
    CUfunction   f_tiles, f_carry, f_write, f_gamma, f_events, f_rows, f_times, f_less,
                 f_bil, f_trace;
    size_t       n;
    int          p;
    long long    ne;
    CUdeviceptr  tsum, carry, rowe, rowf, event, dr;
    CUdeviceptr  rowkey, evkey, topen;  /* strata: the rows', the event times'; 0: none */
    double      *A;                /* host: a p x p product */
} cox_dev;

static CUdeviceptr col(CUdeviceptr base, size_t rows, size_t j)
{
    return base + j * rows * sizeof(double);
}

/* a buffer of n doubles from the call's list, 0 on failure (st filled) */
static CUdeviceptr take(cox_dev *d, size_t n, gg_status *st)
{
    return gg_buflist_alloc(&d->bufs, n > 0 ? n : 1, LABEL, st);
}

static int upload(CUdeviceptr dst, const void *src, size_t bytes, gg_status *st)
{
    if (bytes == 0) return 0;
    if (gg_cu_check(gg_cu.cuMemcpyHtoD(dst, src, bytes), "cox: copying to the device", st))
        return -1;
    gg_tel_h2d(LABEL, (double) bytes);
    return 0;
}

static int launch(CUfunction f, unsigned gx, unsigned gy, CUstream stream, void **args,
                  const char *what, gg_status *st)
{
    if (gx == 0 || gy == 0) return 0;
    if (gg_cu_check(gg_cu.cuLaunchKernel(f, gx, gy, 1, COX_THREADS, 1, 1, 0, stream, args,
                                         NULL), what, st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

/* a row (or event time) kernel over the backend's row grid */
static int launch_rows(const cox_dev *d, CUfunction f, void **args, const char *what,
                       gg_status *st)
{
    return launch(f, d->r.row_blocks, 1, d->r.stream, args, what, st);
}

/* the one sum a kernel left in the backend's partial buffer */
static int one_sum(cox_dev *d, double *out, gg_status *st)
{
    return gg_cuda_partial_sums(d->be, 1, out, st);
}

/* The inclusive prefix sums of q columns of V (len rows, leading dimension
 * ldv) times s (or not), in reverse with rev; written at the event time
 * rowe[i] of each row (rowe 0: every element) of out (ldo rows a column).
 * carry (q, or 0): the columns' sums before these rows, updated.  key (len
 * ints, or 0): the elements' segments, each scanned on its own; first:
 * the index of V's first row among the rows keyed (key[-1] the key of the
 * row before, where first > 0). */
static int scan(cox_dev *d, CUdeviceptr V, size_t ldv, int q, CUdeviceptr s, size_t len,
                int rev, CUdeviceptr rowe, CUdeviceptr out, size_t ldo, CUdeviceptr carry,
                CUdeviceptr key, size_t first, CUstream stream, gg_status *st)
{
    if (len == 0 || q == 0) return 0;
    const unsigned nt = (unsigned) ((len + COX_TILE - 1) / COX_TILE);
    long long ldv_ = (long long) ldv, len_ = (long long) len, ldo_ = (long long) ldo,
              first_ = (long long) first;
    int ntiles = (int) nt;
    CUdeviceptr topen = key ? d->topen : 0;
    void *a1[] = {&V, &ldv_, &s, &len_, &rev, &key, &first_, &d->tsum, &topen};
    void *a2[] = {&d->tsum, &topen, &ntiles, &q, &carry};
    void *a3[] = {&V, &ldv_, &s, &len_, &rev, &key, &first_, &rowe, &d->tsum, &out, &ldo_};
    return launch(d->f_tiles, nt, (unsigned) q, stream, a1, "cox: launching cox_scan_tiles",
                  st) ||
           launch(d->f_carry, (unsigned) (q + COX_THREADS - 1) / COX_THREADS, 1, stream, a2,
                  "cox: launching cox_scan_carry", st) ||
           launch(d->f_write, nt, (unsigned) q, stream, a3, "cox: launching cox_scan_write",
                  st) ? -1 : 0;
}

/* prefix sums of n-vectors at the event times: out (ne x q) */
static int scan_events(cox_dev *d, CUdeviceptr V, int q, CUdeviceptr s, CUdeviceptr out,
                       gg_status *st)
{
    return scan(d, V, d->n, q, s, d->n, 0, d->rowe, out, (size_t) d->ne, 0, d->rowkey, 0,
                d->r.stream, st);
}

/* sfx[e] = the sum of c over the event times e' >= e of e's stratum */
static int suffix(cox_dev *d, CUdeviceptr c, CUdeviceptr sfx, gg_status *st)
{
    return scan(d, c, (size_t) d->ne, 1, 0, (size_t) d->ne, 1, 0, sfx, (size_t) d->ne, 0,
                d->evkey, 0, d->r.stream, st);
}

typedef struct xscan_ctx {
    cox_dev    *d;
    CUdeviceptr v, out;
} xscan_ctx;

static int xscan_chunk(CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows, CUstream stream,
                       void *ctx_, gg_status *st)
{
    xscan_ctx *c = ctx_;
    cox_dev *d = c->d;
    const int p = d->p;
    return scan(d, Xc, ldx, p, c->v + r0 * sizeof(double), rows, 0,
                d->rowe + r0 * sizeof(int), c->out, (size_t) d->ne, d->carry,
                d->rowkey ? d->rowkey + r0 * sizeof(int) : 0, r0, stream, st);
}

/* out (ne x p, leading dimension ne) = the risk sets' sums of v x at the
 * event times: X's columns scanned chunk by chunk, their totals carried */
static int scan_x(cox_dev *d, CUdeviceptr v, CUdeviceptr out, gg_status *st)
{
    if (d->ne == 0) return 0;
    double *zero = calloc((size_t) d->p, sizeof(double));
    if (zero == NULL) return gg_fail(st, "gamgpu_host_oom", "out of memory (cox.ph() rows)");
    int rc = upload(d->carry, zero, (size_t) d->p * sizeof(double), st);
    free(zero);
    xscan_ctx c = {d, v, out};
    return rc || gg_cuda_each_x_chunk(d->be, xscan_chunk, &c, st) ? -1 : 0;
}

/* A (p x p, host) = X' diag(w) X, w on the device: copied into the
 * backend's working weights (its z cleared) by cox_rows, whose what and
 * arguments make w */
static int x_gram(cox_dev *d, void **rows_args, gg_status *st)
{
    double zwz;
    double *bvec = malloc((size_t) d->p * sizeof(double));
    if (bvec == NULL) return gg_fail(st, "gamgpu_host_oom", "out of memory (cox.ph() rows)");
    int rc = launch_rows(d, d->f_rows, rows_args, "cox: launching cox_rows", st) ||
             d->be->ops->gram(d->be, d->A, bvec, &zwz, st) ? -1 : 0;
    free(bvec);
    return rc;
}

/* G (q x q, host) = V' diag(w) V over the ne event times, V (ne x q) */
static int event_gram(cox_dev *d, CUdeviceptr V, int q, CUdeviceptr w, double *G,
                      gg_status *st)
{
    if (d->ne == 0) {
        memset(G, 0, (size_t) q * q * sizeof(double));
        return 0;
    }
    gg_gram_plan plan;
    gg_cuda_gram_plan(d->r.ordinal, (size_t) d->ne, q, &plan);
    CUdeviceptr dP = take(d, plan.partial_elements, st), dG = take(d, (size_t) q * q, st);
    if (!dP || !dG) return -1;
    return gg_cuda_gram_run(d->r.ordinal, LABEL, V, (size_t) d->ne, 0, w, (size_t) d->ne, q,
                            &plan, dP, dG, 0, NULL, d->r.stream, st) ||
           gg_cuda_gram_fetch(LABEL, dG, q, 0, G, NULL, NULL, st) ? -1 : 0;
}

static int functions(cox_dev *d, gg_status *st)
{
    const int o = d->r.ordinal;
    return gg_cuda_function(o, "cox", "cox_scan_tiles", &d->f_tiles, st) ||
           gg_cuda_function(o, "cox", "cox_scan_carry", &d->f_carry, st) ||
           gg_cuda_function(o, "cox", "cox_scan_write", &d->f_write, st) ||
           gg_cuda_function(o, "cox", "cox_gamma", &d->f_gamma, st) ||
           gg_cuda_function(o, "cox", "cox_events", &d->f_events, st) ||
           gg_cuda_function(o, "cox", "cox_rows", &d->f_rows, st) ||
           gg_cuda_function(o, "cox", "cox_times_gamma", &d->f_times, st) ||
           gg_cuda_function(o, "cox", "cox_bm_less", &d->f_less, st) ||
           gg_cuda_function(o, "cox", "cox_bilinear", &d->f_bil, st) ||
           gg_cuda_function(o, "cox", "cox_trace", &d->f_trace, st) ? -1 : 0;
}

typedef struct cox_call {
    gg_backend        *be;
    const gg_cox_call *c;
    gg_cox_out        *o;
} cox_call;

static int cox_on_device(void *arg, gg_status *st)
{
    const cox_call *cc = arg;
    const gg_cox_call *c = cc->c;
    gg_cox_out *o = cc->o;
    cox_dev d;
    memset(&d, 0, sizeof d);
    d.be = cc->be;
    gg_cuda_rows_of(cc->be, &d.r);
    const size_t n = d.r.n;
    const int p = d.r.p, M = c->level >= 2 ? c->M : 0, level = c->level;
    const int nhh = M * (M + 1) / 2;
    const size_t pp = (size_t) p * p;
    d.n = n;
    d.p = p;
    gg_arena *arena = gg_gpu_arena(d.r.ordinal, st);
    if (arena == NULL) return -1;
    gg_buflist_init(&d.bufs, arena);
    gg_tel_dispatch(LABEL);
    int rc = -1;
    int *rowe = malloc((n ? n : 1) * sizeof(int)), *rowf = malloc((n ? n : 1) * sizeof(int));
    int *rowkey = NULL, *evkey = NULL;
    double *dr = malloc(((size_t) c->nt + 1) * sizeof(double)), *G2h = NULL;
    d.A = malloc(pp * sizeof(double));
    if (c->gstr != NULL) {
        rowkey = malloc((n ? n : 1) * sizeof(int));
        evkey = malloc(((size_t) c->nt + 1) * sizeof(int));
    }
    if (rowe == NULL || rowf == NULL || dr == NULL || d.A == NULL ||
        (c->gstr != NULL && (rowkey == NULL || evkey == NULL))) {
        gg_fail(st, "gamgpu_host_oom", "out of memory (cox.ph() rows)");
        goto done;
    }
    const int ne_i = gg_cox_event_times(c->grp, c->event, n, c->nt, c->gstr, dr, rowe, rowf,
                                        evkey, st);
    if (ne_i < 0 || functions(&d, st)) goto done;
    if (rowkey != NULL)
        for (size_t i = 0; i < n; i++) rowkey[i] = c->gstr[c->grp[i] - 1];
    d.ne = ne_i;
    const size_t ne = (size_t) ne_i;
    long long nn = (long long) n, nel = d.ne;
    int qmax = p > M + 1 ? p : M + 1;

    /* the rows' event times, then eta and gamma (column 0 of GD, the rest
     * d gamma / d rho_m) */
    const size_t tiles = (n + COX_TILE - 1) / COX_TILE + 1;
    d.tsum = take(&d, tiles * (size_t) qmax, st);
    d.carry = take(&d, (size_t) p, st);
    d.rowe = take(&d, (n + 1) / 2, st);
    d.rowf = take(&d, (n + 1) / 2, st);
    d.event = take(&d, (n + 1) / 2, st);
    d.dr = take(&d, ne, st);
    if (rowkey != NULL) {
        d.rowkey = take(&d, (n + 1) / 2, st);
        d.evkey = take(&d, (ne + 1) / 2, st);
        d.topen = take(&d, (tiles + 1) / 2, st);
        if (!d.rowkey || !d.evkey || !d.topen ||
            upload(d.rowkey, rowkey, n * sizeof(int), st) ||
            upload(d.evkey, evkey, ne * sizeof(int), st))
            goto done;
    }
    CUdeviceptr eta = take(&d, n, st), GD = take(&d, n * (size_t) (M + 1), st),
                dcoef = take(&d, (size_t) p, st), off = c->off ? take(&d, n, st) : 0,
                G = take(&d, ne, st), ev1 = take(&d, ne, st), ev2 = take(&d, ne, st);
    if (!d.tsum || !d.carry || !d.rowe || !d.rowf || !d.event || !d.dr || !eta || !GD ||
        !dcoef || (c->off && !off) || !G || !ev1 || !ev2 ||
        upload(d.rowe, rowe, n * sizeof(int), st) || upload(d.rowf, rowf, n * sizeof(int), st) ||
        upload(d.event, c->event, n * sizeof(int), st) ||
        upload(d.dr, dr, ne * sizeof(double), st) ||
        upload(dcoef, c->coef, (size_t) p * sizeof(double), st) ||
        (off && upload(off, c->off, n * sizeof(double), st)) ||
        gg_cuda_xmul_device(cc->be, dcoef, 1, eta, st))
        goto done;
    CUdeviceptr gam = GD, none = 0;
    double s_eta = 0.0, s_log = 0.0;
    int what = 0;
    void *ga[] = {&eta, &off, &d.event, &nn, &gam, &d.r.partial};
    if (launch_rows(&d, d.f_gamma, ga, "cox: launching cox_gamma", st) ||
        one_sum(&d, &s_eta, st) || scan_events(&d, gam, 1, 0, G, st))
        goto done;
    void *ea[] = {&what, &G, &d.dr, &none, &nel, &ev1, &d.r.partial};
    if (launch_rows(&d, d.f_events, ea, "cox: launching cox_events", st) ||
        one_sum(&d, &s_log, st))
        goto done;
    o->lp = s_eta - s_log;
    if (level < 0) { rc = 0; goto done; }

    /* g and H: C_i from the suffix sums of dr / Gamma, B in BC's first p
     * columns (the rest C_m for d1H) */
    CUdeviceptr sfx = take(&d, ne, st), C = take(&d, n, st), v = take(&d, n, st),
                BC = take(&d, ne * 2 * (size_t) p, st);
    if (!sfx || !C || !v || !BC || suffix(&d, ev1, sfx, st)) goto done;
    int w0 = 0, w1 = 1, w2 = 2, w3 = 3;
    void *ra0[] = {&w0, &sfx, &d.rowf, &nel, &d.event, &gam, &none, &none, &nn, &C, &none};
    void *ra1[] = {&w1, &sfx, &d.rowf, &nel, &d.event, &gam, &C, &none, &nn, &v, &none};
    if (launch_rows(&d, d.f_rows, ra0, "cox: launching cox_rows", st) ||
        launch_rows(&d, d.f_rows, ra1, "cox: launching cox_rows", st) ||
        gg_cuda_xtmul_device(cc->be, v, 1, o->g, st) || scan_x(&d, gam, BC, st))
        goto done;
    void *ra2[] = {&w2, &sfx, &d.rowf, &nel, &d.event, &gam, &C, &none, &nn, &d.r.w, &d.r.z};
    what = 1;
    if (x_gram(&d, ra2, st) ||
        launch_rows(&d, d.f_events, ea, "cox: launching cox_events", st) ||  /* ev1 = e */
        event_gram(&d, BC, p, ev1, o->H, st))
        goto done;
    for (size_t k = 0; k < pp; k++) o->H[k] -= d.A[k];
    if (level < 2) { rc = 0; goto done; }

    /* d gamma / d rho_m, their Gamma_m (ne x M) and b_m (ne x p x M) */
    CUdeviceptr d1b = take(&d, (size_t) p * M, st), d1eta = take(&d, n * (size_t) M, st),
                G1 = take(&d, ne * (size_t) M, st), Bm = take(&d, ne * (size_t) p * M, st);
    CUdeviceptr d1g = col(GD, n, 1);
    int Mi = M;
    void *ta[] = {&gam, &d1eta, &none, &none, &nn, &Mi, &d1g};
    if (!d1b || !d1eta || !G1 || !Bm ||
        upload(d1b, c->d1b, (size_t) p * M * sizeof(double), st) ||
        (M > 0 && gg_cuda_xmul_device(cc->be, d1b, M, d1eta, st)) ||
        (M > 0 && launch_rows(&d, d.f_times, ta, "cox: launching cox_times_gamma", st)) ||
        scan_events(&d, d1g, M, 0, G1, st))
        goto done;
    for (int m = 0; m < M; m++)
        if (scan_x(&d, col(d1g, n, (size_t) m), col(Bm, ne * (size_t) p, (size_t) m), st))
            goto done;
    if (level == 2) {
        /* d1H_m = X' diag(gamma C2_m - d1gamma_m C) X + B' e C_m + C_m' e B,
         * C_m = B_m - (Gamma_m / Gamma) B; ev1 holds e */
        if ((G2h = malloc(4 * pp * sizeof(double))) == NULL) {
            gg_fail(st, "gamgpu_host_oom", "out of memory (cox.ph() rows)");
            goto done;
        }
        CUdeviceptr Cm = col(BC, ne, (size_t) p);
        for (int m = 0; m < M; m++) {
            CUdeviceptr Gm = col(G1, ne, (size_t) m), dg = col(d1g, n, (size_t) m),
                        Bmm = col(Bm, ne * (size_t) p, (size_t) m);
            double *dH = o->d1H + (size_t) m * pp;
            what = 2;
            void *ea2[] = {&what, &G, &d.dr, &Gm, &nel, &ev2, &none};
            void *ra3[] = {&w3, &sfx, &d.rowf, &nel, &d.event, &gam, &C, &dg, &nn, &d.r.w,
                           &d.r.z};
            void *la[] = {&Bmm, &Gm, &G, &BC, &nel, (void *) &p, &Cm};
            if (launch_rows(&d, d.f_events, ea2, "cox: launching cox_events", st) ||
                suffix(&d, ev2, sfx, st) || x_gram(&d, ra3, st))
                goto done;
            memcpy(dH, d.A, pp * sizeof(double));
            if (launch_rows(&d, d.f_less, la, "cox: launching cox_bm_less", st) ||
                event_gram(&d, BC, 2 * p, ev1, G2h, st))
                goto done;
            for (int k = 0; k < p; k++)
                for (int l = 0; l < p; l++) {
                    const double t = G2h[k + (size_t) (p + l) * 2 * p];   /* (B' e C_m)[k, l] */
                    dH[k + (size_t) l * p] += t;
                    dH[l + (size_t) k * p] += t;
                }
        }
        rc = 0;
        goto done;
    }

    /* level 3: tr(W d2H_mk) for m <= k */
    CUdeviceptr dW = take(&d, pp, st), d2b = take(&d, (size_t) p * (nhh ? nhh : 1), st),
                d2eta = take(&d, n * (size_t) (nhh ? nhh : 1), st),
                TA = take(&d, ne * (size_t) (M + 1), st), BQ = take(&d, ne * (size_t) (M + 1), st),
                d2g = take(&d, n, st), G2 = take(&d, ne, st), tA2 = take(&d, ne, st),
                Bmk = take(&d, ne * (size_t) p, st), bmkWb = take(&d, ne, st),
                bmWbk = take(&d, ne, st), q = 0;
    if (!dW || !d2b || !d2eta || !TA || !BQ || !d2g || !G2 || !tA2 || !Bmk || !bmkWb ||
        !bmWbk || upload(dW, c->W, pp * sizeof(double), st) ||
        gg_cuda_leverage_device(cc->be, c->W, 0, st) || gg_cuda_need_h(cc->be, &q, st) ||
        (nhh > 0 && (upload(d2b, c->d2b, (size_t) p * nhh * sizeof(double), st) ||
                     gg_cuda_xmul_device(cc->be, d2b, nhh, d2eta, st))) ||
        scan_events(&d, GD, M + 1, q, TA, st))
        goto done;
    /* the event times' b' W b and b_m' W b */
    for (int m = -1; m < M; m++) {
        CUdeviceptr A = m < 0 ? BC : col(Bm, ne * (size_t) p, (size_t) m),
                    out = col(BQ, ne, (size_t) (m + 1));
        void *ba[] = {&A, &BC, &dW, &nel, (void *) &p, &out};
        if (launch_rows(&d, d.f_bil, ba, "cox: launching cox_bilinear", st)) goto done;
    }
    int off_i = 0;
    for (int m = 0; m < M; m++)
        for (int k = m; k < M; k++, off_i++) {
            CUdeviceptr e12 = col(d2eta, n, (size_t) off_i), e1 = col(d1eta, n, (size_t) m),
                        e2 = col(d1eta, n, (size_t) k), Bmm = col(Bm, ne * (size_t) p, (size_t) m),
                        Bkk = col(Bm, ne * (size_t) p, (size_t) k),
                        Gm = col(G1, ne, (size_t) m), Gk = col(G1, ne, (size_t) k),
                        tA = TA, tAm = col(TA, ne, (size_t) m + 1),
                        tAk = col(TA, ne, (size_t) k + 1), bWb = BQ,
                        bmWb = col(BQ, ne, (size_t) m + 1), bkWb = col(BQ, ne, (size_t) k + 1);
            int one = 1;
            void *ta2[] = {&gam, &e12, &e1, &e2, &nn, &one, &d2g};
            void *b1[] = {&Bmk, &BC, &dW, &nel, (void *) &p, &bmkWb};
            void *b2[] = {&Bmm, &Bkk, &dW, &nel, (void *) &p, &bmWbk};
            void *tr[] = {&G, &d.dr, &Gm, &Gk, &G2, &tA, &tAm, &tAk, &tA2, &bWb, &bmWb, &bkWb,
                          &bmkWb, &bmWbk, &nel, &d.r.partial};
            if (launch_rows(&d, d.f_times, ta2, "cox: launching cox_times_gamma", st) ||
                scan_events(&d, d2g, 1, 0, G2, st) || scan_events(&d, d2g, 1, q, tA2, st) ||
                scan_x(&d, d2g, Bmk, st) ||
                launch_rows(&d, d.f_bil, b1, "cox: launching cox_bilinear", st) ||
                launch_rows(&d, d.f_bil, b2, "cox: launching cox_bilinear", st) ||
                launch_rows(&d, d.f_trace, tr, "cox: launching cox_trace", st) ||
                one_sum(&d, o->trd2H + off_i, st))
                goto done;
        }
    rc = 0;
done:
    gg_cuda_call_release(rc, &d.bufs, "cox.ph()'s rows on the device");
    free(rowe);
    free(rowf);
    free(rowkey);
    free(evkey);
    free(dr);
    free(d.A);
    free(G2h);
    return rc;
}

int gg_cuda_cox_ll(gg_backend *be, const gg_cox_call *c, gg_cox_out *o, gg_status *st)
{
    if (c->level != -1 && c->level != 0 && c->level != 2 && c->level != 3)
        return gg_fail(st, "gamgpu_bad_input", "cox.ph()'s ll() takes level -1, 0, 2 or 3");
    if (c->p != be->p || c->n != be->n)
        return gg_fail(st, "gamgpu_internal_error", "cox.ph() rows: the call's X is not the session's");
    if (c->level >= 2 && (c->M < 0 || (c->M > 0 && c->d1b == NULL)))
        return gg_fail(st, "gamgpu_internal_error", "cox.ph()'s d1H needs beta's derivatives");
    if (c->level >= 3 && ((c->M > 0 && c->d2b == NULL) || c->W == NULL))
        return gg_fail(st, "gamgpu_internal_error", "cox.ph()'s traces need d2b and W");
    if (gg_cox_check_groups(c->grp, c->n, c->nt, c->gstr, st) != 0) return -1;
    cox_call cc = {be, c, o};
    gg_cuda_rows r;
    gg_cuda_rows_of(be, &r);
    return gg_cuda_run(r.ordinal, cox_on_device, &cc, NULL, &be->t_rows, st);
}
