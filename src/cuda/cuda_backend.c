/* cuda_backend.c -- the engine's backend (backend.h) on an NVIDIA device.
 *
 * load() (cuda_load.c) puts y, prior weights (none when each is 1),
 * offset and the row state (eta, eta_old, mu, w, z, the leverages' h) in
 * device memory for the whole fit, and X too when it fits; a lean session
 * (gg_data.lean_rows) keeps no eta_old, makes h at its first use, and
 * keeps mu only for an extended family (else makes it from eta when
 * fetched).  X
 * given as a recipe (xplan.h) is built on the device (cuda_xbuild.c) from
 * the covariates -- once when resident, chunk by chunk on every pass when
 * streamed -- so it never crosses the bus; X given as numbers is copied.
 * The recipe's covariates, factor codes and by-variables go up once per
 * distinct host array, however many blocks share them.  With X resident
 * each IRLS iteration moves only p doubles in (beta) and (p+1)^2 plus a few
 * hundred out (the Gram matrix, deviance partial sums).  When X does not fit
 * in what the arena may use (the device, or option gamgpu.device_memory),
 * it stays on the host and every pass over it streams row chunks through
 * two pinned host buffers and two device buffers, copies on one stream
 * overlapping kernels on another (cuda_stream.c, which predict shares), or
 * builds each chunk on the device from the recipe.  Each chunk's Gram
 * product fills the device with slabs of its own (gram_chunk), so a
 * streamed fit equals the resident one to rounding.
 *
 * Every buffer comes from the device's arena and goes back in release(), on
 * every path.  With bam's AR1 residuals (rho) the Gram and leverage
 * kernels transform the rows as they read them (ar1_math.h), which needs
 * row r - 1 of every row: X resident (a streamed X is a device failure,
 * so "auto" falls back to the CPU, counted).
 * gam()'s outer iteration's rows and products are cuda_outer.c's, on the
 * row state and passes over X this file lends it (cuda_backend.h);
 * cuda_open.c puts the two together.
 * Kernels: inst/kernels/rows.cu, gram.cu and basis.cu.  Reductions are
 * fixed-order, so fits are reproducible.  Compiled only with CUDA. */
#include "cuda_backend.h"
#include "cuda_state.h"
#include "outer_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *LABEL = GG_CUDA_ENGINE;

static cuda_state *S(gg_backend *be) { return (cuda_state *) be->impl; }

static void cuda_release(gg_backend *be)
{
    cuda_state *s = S(be);
    if (s == NULL)
        return;
    gg_status ignore;
    gg_status_clear(&ignore);
    int entered = gg_cuda_enter(s->ordinal, &ignore) == 0;
    if (entered) {
        gg_xstream_close(&s->xs);
        gg_cuda_leave(s->ordinal);
    }
    if (s->outer != NULL)
        s->outer->free(s->outer);
    s->outer = NULL;
    gg_buflist_release(&s->bufs);
    free(s->partial_host);
    free(s->beta_eta);
    free(s->beta_kept);
    free(s->dblocks);
    free(s);
    be->impl = NULL;
}

/* The stream row-wise work runs on: the compute stream when streaming (so
 * it orders with the chunk copies), else the default stream. */
static CUstream work_stream(const cuda_state *s) { return s->streamed ? s->xs.s_comp : NULL; }

/* Sum the per-block partials (in block order) into *out.  The synchronous
 * copy on the default stream waits for the blocking work stream too. */
/* The row kernels' block sums: partial[j * row_blocks + b] is block b's
 * part of sum j; out[j] = their sum in block order, for j < k. */
static int sum_partials(cuda_state *s, int k, double *out, gg_status *st)
{
    const size_t m = (size_t) k * s->row_blocks;
    if (gg_cuda_wait(NULL, "the row kernels on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(s->partial_host, s->partial, m * sizeof(double)),
                    "engine: running the row kernels", st))
        return -1;
    gg_tel_d2h(LABEL, (double) (m * sizeof(double)));
    for (int j = 0; j < k; j++) {
        long double t = 0;           /* as R's sum(): see backend_cpu.c's ef sums */
        for (unsigned b = 0; b < s->row_blocks; b++)
            t += s->partial_host[(size_t) j * s->row_blocks + b];
        out[j] = (double) t;
    }
    return 0;
}

/* ---- passes over X: resident, or streamed in chunks ------------------ */

/* fn sees rows r0 .. r0+rows-1 of X at Xc (leading dimension ldx). */
typedef int (*x_pass_fn)(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                         CUstream stream, void *ctx, gg_status *st);

/* a pass's chunk callback, seen through gg_xstream's */
typedef struct x_pass {
    cuda_state *s;
    x_pass_fn   fn;
    void       *ctx;
} x_pass;

static int x_pass_chunk(void *arg, CUdeviceptr Xc, size_t r0, size_t rows, CUstream stream,
                        gg_status *st)
{
    x_pass *xp = arg;
    return xp->fn(xp->s, Xc, rows, r0, rows, stream, xp->ctx, st);
}

static int for_each_x_chunk(cuda_state *s, x_pass_fn fn, void *ctx, gg_status *st)
{
    if (!s->streamed)
        return fn(s, s->X, s->n, 0, s->n, NULL, ctx, st);
    gg_xstream *xs = &s->xs;
    if (s->xplan != NULL) {
        /* build each chunk on the device, in order on one stream, its two
         * buffers in turn; after queuing chunk k a polled wait for chunk
         * k - 1, so the device always has the next chunk queued and an
         * interrupt is heard within two */
        const size_t n = s->n, C = xs->chunk_rows;
        for (size_t k = 0, r0 = 0; r0 < n; k++, r0 += C) {
            const size_t rows = n - r0 < C ? n - r0 : C;
            if (gg_cuda_build_x(s, r0, rows, xs->xbuf[k % 2], rows, xs->s_comp, st) ||
                fn(s, xs->xbuf[k % 2], rows, r0, rows, xs->s_comp, ctx, st) ||
                gg_cu_check(gg_cu.cuEventRecord(xs->comp_done[k % 2], xs->s_comp),
                            "engine: recording a chunk's end", st) ||
                (k > 0 && gg_cuda_wait_event(xs->comp_done[(k + 1) % 2],
                                             "a streamed pass over X", st))) {
                gg_cu.cuStreamSynchronize(xs->s_comp);   /* what was queued ends first */
                return -1;
            }
        }
        return gg_cuda_wait(xs->s_comp, "a streamed pass over X", st);
    }
    x_pass xp = {s, fn, ctx};
    return gg_xstream_pass(xs, x_pass_chunk, &xp, st);
}

static CUdeviceptr rows_at(CUdeviceptr base, size_t r0)
{
    return base ? base + r0 * sizeof(double) : 0;
}


/* ---- the row-wise steps ---------------------------------------------- */

/* The operations below each run their work, a function *_on_device of
 * their arguments (a struct *_call), inside the device's context:
 * gg_cuda_run() enters and leaves it, counts the call and times it. */

typedef struct init_call {
    gg_backend      *be;
    const gg_family *fam;
} init_call;

static int init_eta_on_device(void *arg, gg_status *st)
{
    const init_call *c = arg;
    cuda_state *s = S(c->be);
    const gg_family *fam = c->fam;
    int f = (int) fam->fam, efam = fam->efam;
    gg_fm_link l = gg_family_link(fam);
    gg_fm_efpar par = fam->ef;
    long long n = (long long) s->n;
    void *args[] = {&f, &l, &efam, &par, &s->y, &s->yat, &s->pw, &n, &s->eta, &s->eta_old,
                    &s->partial};
    double bad = 0;
    if (launch_rows(s, s->f_init, args, work_stream(s), "engine: launching rows_init_eta", st) ||
        sum_partials(s, 1, &bad, st))
        return -1;
    if (bad > 0) {
        /* Rare: find the first offending row for the message, on the host. */
        double *y = malloc(s->n * sizeof(double));
        double *pw = s->pw ? malloc(s->n * sizeof(double)) : NULL;
        double *yat = s->yat ? malloc(s->n * sizeof(double)) : NULL;
        size_t row = s->n;
        double e;
        if (y != NULL && (pw != NULL || s->pw == 0) && (yat != NULL || s->yat == 0) &&
            gg_cu.cuMemcpyDtoH(y, s->y, s->n * sizeof(double)) == CUDA_SUCCESS &&
            (pw == NULL || gg_cu.cuMemcpyDtoH(pw, s->pw, s->n * sizeof(double)) == CUDA_SUCCESS) &&
            (yat == NULL || gg_cu.cuMemcpyDtoH(yat, s->yat, s->n * sizeof(double)) == CUDA_SUCCESS))
            for (row = 0; row < s->n; row++)
                if (!gg_family_init_row(fam, y[row], yat ? yat[row] : y[row], pw ? pw[row] : 1.0, &e))
                    break;
        gg_fail(st, "gamgpu_bad_start",
                "cannot find valid starting values for the %s family with %s link "
                "(%.0f rows; the first is row %lu, y = %g)",
                gg_family_name(fam->fam), gg_link_name(fam->link), bad,
                (unsigned long) row + 1, row < s->n ? y[row] : NAN);
        free(yat);
        free(pw);
        free(y);
        return -1;
    }
    return 0;
}

static int cuda_init_eta(gg_backend *be, const gg_family *fam, gg_status *st)
{
    init_call c = {be, fam};
    S(be)->have_beta_eta = 0;        /* eta from the family's start, not X beta */
    return gg_cuda_run(S(be)->ordinal, init_eta_on_device, &c, NULL, &be->t_rows, st);
}

/* eta = X beta + off, beta p doubles on the device */
typedef struct xbeta_ctx { CUdeviceptr off, eta, beta; } xbeta_ctx;

static int xbeta_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                       CUstream stream, void *ctx_, gg_status *st)
{
    xbeta_ctx *c = ctx_;
    long long ld = (long long) ldx, nr = (long long) rows;
    int p = s->p;
    CUdeviceptr off = rows_at(c->off, r0), eta = rows_at(c->eta, r0);
    void *args[] = {&Xc, &ld, &nr, &p, &c->beta, &off, &eta};
    return launch_rows(s, s->f_xbeta, args, stream, "engine: launching rows_xbeta", st);
}

typedef struct xbeta_call {
    gg_backend   *be;
    const double *beta;
} xbeta_call;

static int xbeta_on_device(void *arg, gg_status *st)
{
    const xbeta_call *a = arg;
    cuda_state *s = S(a->be);
    xbeta_ctx c = {s->off, s->eta, s->beta};
    return gg_cuda_upload(LABEL, s->beta, a->beta, (size_t) s->p, st) ||
           for_each_x_chunk(s, xbeta_chunk, &c, st) ? -1 : 0;
}

static int cuda_xbeta(gg_backend *be, const double *beta, gg_status *st)
{
    cuda_state *s = S(be);
    xbeta_call a = {be, beta};
    if (gg_cuda_run(s->ordinal, xbeta_on_device, &a, &be->n_xbeta, &be->t_rows, st))
        return -1;
    memcpy(s->beta_eta, beta, (size_t) s->p * sizeof(double));
    s->have_beta_eta = 1;
    return 0;
}

typedef struct step_call {
    gg_backend *be;
    int         mode;
} step_call;

static int eta_step_on_device(void *arg, gg_status *st)
{
    step_call *c = arg;
    cuda_state *s = S(c->be);
    long long n = (long long) s->n;
    void *args[] = {&c->mode, &n, &s->eta, &s->eta_old};
    return launch_rows(s, s->f_step, args, work_stream(s), "engine: launching rows_eta_step",
                       st);
}

static int eta_step(gg_backend *be, int mode, gg_status *st)
{
    step_call c = {be, mode};
    return gg_cuda_run(S(be)->ordinal, eta_step_on_device, &c, NULL, &be->t_rows, st);
}

/* Step halving.  With eta_old (the default) eta_old = eta is kept and a
 * halving averages the two, as bgam.fit.  A lean session keeps the
 * coefficients instead (p doubles on the host: those of the last X beta,
 * beta_eta, and the kept ones) and makes eta = X b + offset for the
 * halved b = (kept + last) / 2, which is the engine's own halving of its
 * coefficients, bit for bit. */
static int cuda_keep_eta(gg_backend *be, gg_status *st)
{
    cuda_state *s = S(be);
    if (s->eta_old)
        return eta_step(be, 0, st);
    if (!s->have_beta_eta)
        return gg_fail(st, "gamgpu_internal_error",
                       "engine: a lean session keeps eta only after an X beta");
    memcpy(s->beta_kept, s->beta_eta, (size_t) s->p * sizeof(double));
    s->have_beta_kept = 1;
    return 0;
}

static int cuda_halve_eta(gg_backend *be, gg_status *st)
{
    cuda_state *s = S(be);
    be->n_halve++;
    if (s->eta_old)
        return eta_step(be, 1, st);
    if (!s->have_beta_kept || !s->have_beta_eta)
        return gg_fail(st, "gamgpu_internal_error",
                       "engine: a lean session halves a step only after keeping eta");
    for (int j = 0; j < s->p; j++)
        s->beta_eta[j] = (s->beta_kept[j] + s->beta_eta[j]) / 2;
    xbeta_call a = {be, s->beta_eta};
    return gg_cuda_run(s->ordinal, xbeta_on_device, &a, NULL, &be->t_rows, st);
}

typedef struct state_call {
    gg_backend      *be;
    const gg_family *fam;
    double          *dev;
} state_call;

static int row_state_on_device(void *arg, gg_status *st)
{
    const state_call *c = arg;
    cuda_state *s = S(c->be);
    const gg_family *fam = c->fam;
    int f = (int) fam->fam, efam = fam->efam;
    gg_fm_link l = gg_family_link(fam);
    double th = fam->theta;
    gg_fm_efpar par = fam->ef;
    long long n = (long long) s->n;
    /* a lean session keeps mu for an extended family alone (its theta
     * sums read it); for the others it is made when fetched (mu_on_device) */
    if (efam && s->mu == 0 && !(s->mu = gg_buflist_alloc(&s->bufs, s->n, LABEL, st)))
        return -1;
    s->mu_link = l;
    s->have_mu_link = 1;
    void *args[] = {&f, &l, &th, &efam, &par, &s->y, &s->yat, &s->pw, &s->off, &s->eta, &n,
                    &s->mu, &s->w, &s->z, &s->partial};
    return launch_rows(s, s->f_state, args, work_stream(s), "engine: launching rows_state", st) ||
           sum_partials(s, 1, c->dev, st) ? -1 : 0;
}

static int cuda_row_state(gg_backend *be, const gg_family *fam, double *dev, gg_status *st)
{
    state_call c = {be, fam, dev};
    const int rc = gg_cuda_run(S(be)->ordinal, row_state_on_device, &c, &be->n_row_state,
                               &be->t_rows, st);
    if (rc == 0 && !isfinite(*dev))
        return gg_fail(st, "gamgpu_nonfinite", "non-finite deviance");
    return rc;
}

/* The slabs of a pass's products over rows of X: the resident plan for
 * all of X, else a chunk's own, as many as the device takes (a chunk holds
 * few of the resident plan's slabs, which ran on as few multiprocessors),
 * never more than the resident plan's partial buffers hold.  The chunks'
 * sums are added in order: deterministic, and a streamed fit equals the
 * resident one to rounding, not bit for bit. */
static void chunk_plan(const cuda_state *s, size_t rows, gg_gram_plan *plan)
{
    if (rows == s->n) {
        *plan = s->plan;
        return;
    }
    gg_cuda_gram_plan(s->ordinal, rows, s->p + 1, plan);
    if (plan->n_slabs > s->plan.n_slabs) {     /* slab heights rounded to 16 */
        long long h = ((long long) rows + s->plan.n_slabs - 1) / s->plan.n_slabs;
        gg_cuda_gram_plan_rows(rows, s->p + 1, (h + 15) / 16 * 16, plan);
    }
}

static int gram_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                      CUstream stream, void *ctx, gg_status *st)
{
    (void) ctx;
    gg_gram_plan plan;
    chunk_plan(s, rows, &plan);
    return gg_cuda_gram_run(s->ordinal, LABEL, Xc, ldx, rows_at(s->z, r0), rows_at(s->w, r0),
                            rows, s->p, &plan, s->gP, s->G, r0 > 0,
                            s->ar_on ? &s->ar : NULL, stream, st);
}

typedef struct gram_call {
    gg_backend *be;
    double     *A, *b, *zwz;
} gram_call;

static int gram_on_device(void *arg, gg_status *st)
{
    const gram_call *c = arg;
    cuda_state *s = S(c->be);
    return for_each_x_chunk(s, gram_chunk, NULL, st) ||
           gg_cuda_gram_fetch(LABEL, s->G, s->p, 1, c->A, c->b, c->zwz, st) ? -1 : 0;
}

static int cuda_gram(gg_backend *be, double *A, double *b, double *zwz, gg_status *st)
{
    gram_call c = {be, A, b, zwz};
    return gg_cuda_run(S(be)->ordinal, gram_on_device, &c, &be->n_gram, &be->t_rows, st);
}

/* Leverages of a chunk: gram.cu's gram_leverage, one block per 64 rows
 * (a matrix product X M on the tensor cores, then row sums). */
static int quad_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                      CUstream stream, void *ctx, gg_status *st)
{
    const CUdeviceptr *wbase = ctx;       /* the row weights, or 0: none */
    long long ld = (long long) ldx, nr = (long long) rows;
    int p = s->p;
    CUdeviceptr w = rows_at(*wbase, r0), h = rows_at(s->h, r0);
    void *args[] = {&Xc, &ld, &nr, &p, &s->M, &w, &h, &s->ar_on, &s->ar.ld, &s->ar.sd,
                    &s->ar.start};
    const unsigned blocks = (unsigned) ((rows + 63) / 64);
    if (gg_cu_check(gg_cu.cuLaunchKernel(s->f_lev, blocks, 1, 1, ROW_THREADS, 1, 1, 0, stream,
                                         args, NULL), "engine: launching gram_leverage", st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

int gg_cuda_leverage_device(gg_backend *be, const double *M, CUdeviceptr w, gg_status *st)
{
    cuda_state *s = S(be);
    return gg_cuda_need_h(be, &s->h, st) ||
           gg_cuda_upload(LABEL, s->M, M, (size_t) s->p * s->p, st) ||
           for_each_x_chunk(s, quad_chunk, &w, st) ? -1 : 0;
}

typedef struct leverage_call {
    gg_backend   *be;
    const double *M;
    double       *h;
} leverage_call;

static int leverage_on_device(void *arg, gg_status *st)
{
    const leverage_call *c = arg;
    cuda_state *s = S(c->be);
    if (gg_cuda_leverage_device(c->be, c->M, s->w, st) ||
        gg_cuda_wait(NULL, "the leverages on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(c->h, s->h, s->n * sizeof(double)),
                    "engine: copying leverages back", st))
        return -1;
    gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    return 0;
}

static int cuda_leverage(gg_backend *be, const double *M, double *h, gg_status *st)
{
    leverage_call c = {be, M, h};
    return gg_cuda_run(S(be)->ordinal, leverage_on_device, &c, NULL, &be->t_rows, st);
}

typedef struct ef_call {
    gg_backend      *be;
    const gg_family *fam;
    int              deriv;
    double          *out;
} ef_call;

static int ef_sums_on_device(void *arg, gg_status *st)
{
    ef_call *c = arg;
    cuda_state *s = S(c->be);
    const gg_family *fam = c->fam;
    int f = (int) fam->fam, nsum = GG_FM_EF_NSUM(fam->ef.nth, fam->ef.nth + fam->ef.scale_est);
    gg_fm_efpar par = fam->ef;
    long long n = (long long) s->n;
    void *args[] = {&f, &par, &c->deriv, &nsum, &s->y, &s->yat, &s->pw, &s->mu, &n,
                    &s->partial};
    return launch_rows(s, s->f_ef, args, work_stream(s), "engine: launching rows_ef_sums",
                       st) ||
           sum_partials(s, nsum, c->out, st) ? -1 : 0;
}

static int cuda_ef_sums(gg_backend *be, const gg_family *fam, int deriv, double *out,
                        gg_status *st)
{
    if (S(be)->mu == 0)
        return gg_fail(st, "gamgpu_internal_error", "engine: theta sums before the rows' mu");
    ef_call c = {be, fam, deriv, out};
    const int rc = gg_cuda_run(S(be)->ordinal, ef_sums_on_device, &c, NULL, &be->t_rows, st);
    if (rc == 0 && (!isfinite(out[GG_FM_EF_DEV]) || !isfinite(out[GG_FM_EF_LS])))
        return gg_fail(st, "gamgpu_nonfinite", "non-finite deviance in the theta estimation");
    return rc;
}

typedef struct fetch_call {
    gg_backend *be;
    CUdeviceptr src;
    double     *out;
} fetch_call;

static int fetch_on_device(void *arg, gg_status *st)
{
    const fetch_call *c = arg;
    const size_t n = S(c->be)->n;
    int rc = gg_cu_check(gg_cu.cuMemcpyDtoH(c->out, c->src, n * sizeof(double)),
                         "engine: copying a result vector back", st);
    if (rc == 0)
        gg_tel_d2h(LABEL, (double) (n * sizeof(double)));
    return rc;
}

/* mu into the host's out.  A lean session keeps none for a family that is
 * not extended: linkinv(eta) at the last row state's link -- rows_state's
 * own mu, bit for bit -- made MU_CHUNK rows at a time in a buffer of that
 * size and copied out, no n-vector on the device. */
#define MU_CHUNK ((size_t) 1 << 22)

static int mu_on_device(void *arg, gg_status *st)
{
    fetch_call *c = arg;
    cuda_state *s = S(c->be);
    if (s->mu != 0) {
        c->src = s->mu;
        return fetch_on_device(c, st);
    }
    if (!s->have_mu_link)
        return gg_fail(st, "gamgpu_internal_error", "engine: mu asked for before the rows' state");
    const size_t C = s->n < MU_CHUNK ? s->n : MU_CHUNK;
    const int mark = s->bufs.n;
    CUdeviceptr buf = gg_buflist_alloc(&s->bufs, C, LABEL, st);
    if (!buf)
        return -1;
    int rc = 0;
    for (size_t r0 = 0; r0 < s->n && rc == 0; r0 += C) {
        long long rows = (long long) (s->n - r0 < C ? s->n - r0 : C);
        CUdeviceptr eta = rows_at(s->eta, r0);
        void *args[] = {&s->mu_link, &eta, &rows, &buf};
        rc = launch_rows(s, s->f_mu, args, work_stream(s), "engine: launching rows_mu", st) ||
             gg_cuda_wait(work_stream(s), "mu on the device", st) ||
             gg_cu_check(gg_cu.cuMemcpyDtoH(c->out + r0, buf, (size_t) rows * sizeof(double)),
                         "engine: copying mu back", st);
    }
    gg_buflist_truncate(&s->bufs, mark);
    if (rc == 0)
        gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    return rc;
}

static int cuda_fetch(gg_backend *be, gg_vec which, double *out, gg_status *st)
{
    cuda_state *s = S(be);
    CUdeviceptr src = 0;
    switch (which) {
    case GG_VEC_ETA: src = s->eta; break;
    case GG_VEC_MU: {
        fetch_call c = {be, 0, out};
        return gg_cuda_run(s->ordinal, mu_on_device, &c, NULL, &be->t_transfer, st);
    }
    case GG_VEC_W: src = s->w; break;
    case GG_VEC_Z: src = s->z; break;
    }
    if (src == 0)
        return gg_fail(st, "gamgpu_internal_error", "fetch: unknown vector");
    fetch_call c = {be, src, out};
    return gg_cuda_run(s->ordinal, fetch_on_device, &c, NULL, &be->t_transfer, st);
}


/* ---- products for the outer smoothing parameter iteration ------------ */

typedef struct set_rows_call {
    gg_backend   *be;
    const double *w, *z;
} set_rows_call;

static int set_rows_on_device(void *arg, gg_status *st)
{
    const set_rows_call *c = arg;
    cuda_state *s = S(c->be);
    return gg_cuda_upload(LABEL, s->w, c->w, s->n, st) ||
           gg_cuda_upload(LABEL, s->z, c->z, s->n, st) ? -1 : 0;
}

static int cuda_set_rows(gg_backend *be, const double *w, const double *z, gg_status *st)
{
    set_rows_call c = {be, w, z};
    return gg_cuda_run(S(be)->ordinal, set_rows_on_device, &c, NULL, &be->t_transfer, st);
}

/* X B one column at a time: rows_xbeta without an offset into the
 * leverage buffer h, copied back. */
typedef struct xmul_call {
    gg_backend   *be;
    const double *B;        /* X B, or X' V: V */
    int           k;
    double       *out;
} xmul_call;

static int xmul_on_device(void *arg, gg_status *st)
{
    const xmul_call *a = arg;
    cuda_state *s = S(a->be);
    if (gg_cuda_need_h(a->be, &s->h, st)) return -1;
    xbeta_ctx c = {0, s->h, s->beta};
    for (int j = 0; j < a->k; j++) {
        if (gg_cuda_upload(LABEL, s->beta, a->B + (size_t) j * s->p, (size_t) s->p, st) ||
            for_each_x_chunk(s, xbeta_chunk, &c, st) ||
            gg_cuda_wait(NULL, "the product X B on the device", st) ||
            gg_cu_check(gg_cu.cuMemcpyDtoH(a->out + (size_t) j * s->n, s->h,
                                           s->n * sizeof(double)),
                        "engine: copying X B back", st))
            return -1;
        gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    }
    return 0;
}

static int cuda_xmul(gg_backend *be, const double *B, int k, double *out, gg_status *st)
{
    xmul_call c = {be, B, k, out};
    return gg_cuda_run(S(be)->ordinal, xmul_on_device, &c, NULL, &be->t_rows, st);
}

int gg_cuda_xmul_device(gg_backend *be, CUdeviceptr B, int k, CUdeviceptr out, gg_status *st)
{
    cuda_state *s = S(be);
    for (int j = 0; j < k; j++) {
        xbeta_ctx c = {0, out + (size_t) j * s->n * sizeof(double),
                       B + (size_t) j * s->p * sizeof(double)};
        if (for_each_x_chunk(s, xbeta_chunk, &c, st)) return -1;
    }
    return 0;
}

typedef struct xtv_ctx {
    CUfunction f, f_reduce;
    CUdeviceptr V, partial, out;
    int k;
} xtv_ctx;

/* One chunk's X' V: gram.cu's gram_xtv over the chunk's slabs, then the
 * slabs summed in order into out (added to the earlier chunks'). */
static int xtv_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                     CUstream stream, void *ctx_, gg_status *st)
{
    xtv_ctx *c = ctx_;
    gg_gram_plan plan;
    chunk_plan(s, rows, &plan);
    long long ld = (long long) ldx, ldv = (long long) s->n, nr = (long long) rows,
              rps = plan.rows_per_slab, m = (long long) s->p * c->k;
    int p = s->p, k = c->k, n_slabs = plan.n_slabs, acc = r0 > 0;
    CUdeviceptr V = rows_at(c->V, r0);
    const unsigned tiles = (unsigned) (((p + 63) / 64) * ((k + 63) / 64));
    void *args[] = {&Xc, &ld, &V, &ldv, &nr, &p, &k, &rps, &c->partial};
    if (gg_cu_check(gg_cu.cuLaunchKernel(c->f, tiles, (unsigned) n_slabs, 1, 256, 1, 1, 0,
                                         stream, args, NULL),
                    "engine: launching gram_xtv", st))
        return -1;
    void *rargs[] = {&c->partial, &n_slabs, &m, &acc, &c->out};
    if (gg_cu_check(gg_cu.cuLaunchKernel(c->f_reduce, (unsigned) ((m + 255) / 256), 1, 1, 256, 1,
                                         1, 0, stream, rargs, NULL),
                    "engine: launching gram_xtv_reduce", st))
        return -1;
    gg_tel_launch(LABEL, 2);
    return 0;
}

static int xtmul_on_device(void *arg, gg_status *st)
{
    const xmul_call *c = arg;
    cuda_state *s = S(c->be);
    const int mark = s->bufs.n;
    CUdeviceptr dV = gg_buflist_alloc(&s->bufs, s->n * (size_t) c->k, LABEL, st);
    int rc = !dV || gg_cuda_upload(LABEL, dV, c->B, s->n * (size_t) c->k, st) ||
             gg_cuda_xtmul_device(c->be, dV, c->k, c->out, st) ? -1 : 0;
    gg_buflist_truncate(&s->bufs, mark);
    return rc;
}

static int cuda_xtmul(gg_backend *be, const double *V, int k, double *out, gg_status *st)
{
    if (k <= 0)
        return 0;
    xmul_call c = {be, V, k, out};
    return gg_cuda_run(S(be)->ordinal, xtmul_on_device, &c, NULL, &be->t_rows, st);
}

int gg_cuda_xtmul_device(gg_backend *be, CUdeviceptr V, int k, double *out, gg_status *st)
{
    cuda_state *s = S(be);
    if (k <= 0)
        return 0;
    int rc = -1;
    const int mark = s->bufs.n;
    const size_t pk = (size_t) s->p * (size_t) k;
    xtv_ctx c = {0};
    c.k = k;
    c.V = V;
    if (gg_cuda_function(s->ordinal, "gram", "gram_xtv", &c.f, st) ||
        gg_cuda_function(s->ordinal, "gram", "gram_xtv_reduce", &c.f_reduce, st) ||
        !(c.partial = gg_buflist_alloc(&s->bufs, (size_t) s->plan.n_slabs * pk, LABEL, st)) ||
        !(c.out = gg_buflist_alloc(&s->bufs, pk, LABEL, st)) ||
        for_each_x_chunk(s, xtv_chunk, &c, st) ||
        gg_cuda_wait(NULL, "the product X' V on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(out, c.out, pk * sizeof(double)),
                    "engine: copying X' V back", st))
        goto done;
    gg_tel_d2h(LABEL, (double) (pk * sizeof(double)));
    rc = 0;
done:
    gg_buflist_truncate(&s->bufs, mark);
    return rc;
}

/* ---- the row state, for cuda_outer.c ----------------------------------- */

void gg_cuda_rows_of(gg_backend *be, gg_cuda_rows *out)
{
    cuda_state *s = S(be);
    out->ordinal = s->ordinal;
    out->n = s->n;
    out->p = s->p;
    out->row_blocks = s->row_blocks;
    out->y = s->y;
    out->yat = s->yat;
    out->pw = s->pw;
    out->off = s->off;
    out->eta = s->eta;
    out->mu = s->mu;
    out->w = s->w;
    out->z = s->z;
    out->h = s->h;
    out->partial = s->partial;
    out->stream = work_stream(s);
    out->ar_on = s->ar_on;
    out->outer = &s->outer;
}

void gg_cuda_call_release(int rc, gg_buflist *bufs, const char *what)
{
    if (rc != 0) {
        gg_status ignore;
        gg_status_clear(&ignore);
        gg_cuda_wait(NULL, what, &ignore);
    }
    gg_buflist_release(bufs);
}

typedef struct chunk_adaptor {
    gg_cuda_chunk_fn fn;
    void            *ctx;
} chunk_adaptor;

static int adapt_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                       CUstream stream, void *ctx_, gg_status *st)
{
    (void) s;
    chunk_adaptor *a = ctx_;
    return a->fn(Xc, ldx, r0, rows, stream, a->ctx, st);
}

int gg_cuda_each_x_chunk(gg_backend *be, gg_cuda_chunk_fn fn, void *ctx, gg_status *st)
{
    chunk_adaptor a = {fn, ctx};
    return for_each_x_chunk(S(be), adapt_chunk, &a, st);
}

int gg_cuda_partial_sums(gg_backend *be, int k, double *out, gg_status *st)
{
    return sum_partials(S(be), k, out, st);
}

const gg_backend_ops gg_cuda_row_ops = {
    .name      = "cuda",
    .load      = gg_cuda_backend_load,
    .init_eta  = cuda_init_eta,
    .xbeta     = cuda_xbeta,
    .keep_eta  = cuda_keep_eta,
    .halve_eta = cuda_halve_eta,
    .row_state = cuda_row_state,
    .gram      = cuda_gram,
    .leverage  = cuda_leverage,
    .ef_sums   = cuda_ef_sums,
    .fetch     = cuda_fetch,
    .set_rows  = cuda_set_rows,
    .xmul      = cuda_xmul,
    .xtmul     = cuda_xtmul,
    .release   = cuda_release,
    .outer     = NULL,
};

int gg_cuda_backend_open(gg_backend *be, int ordinal, gg_status *st)
{
    memset(be, 0, sizeof *be);
    gg_arena *arena = gg_gpu_arena(ordinal, st);
    if (arena == NULL)
        return -1;
    cuda_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (cuda backend)");
    s->ordinal = ordinal;
    gg_buflist_init(&s->bufs, arena);
    be->ops = &gg_cuda_row_ops;
    be->impl = s;
    return 0;
}
