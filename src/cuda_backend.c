/* cuda_backend.c -- the engine's backend (backend.h) on an NVIDIA device.
 *
 * load() copies X, y, prior weights and offset to the device once; the row
 * state (eta, eta_old, mu, w, z) is born and stays there.  Each IRLS
 * iteration then moves only p doubles in (beta) and (p+1)^2 + a few hundred
 * out (the Gram matrix and the deviance partial sums).  Every buffer comes
 * from the device's arena and goes back in release(), on every path.
 * Kernels: inst/kernels/rows.cu (row state, X beta, quadratic forms) and
 * gram.cu.  Reductions are fixed-order, so a fit is reproducible bit for
 * bit.  Compiled only with CUDA. */
#include "backend.h"
#include "cuda_internal.h"
#include "gpu_telemetry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROW_THREADS 256
static const char *LABEL = "engine";

typedef struct cuda_state {
    int          ordinal;
    gg_arena    *arena;
    gg_buflist   bufs;
    size_t       n;
    int          p;
    CUdeviceptr  X, y, pw, off, eta, eta_old, mu, w, z, beta, gP, G, partial, M, h;
    gg_gram_plan plan;
    unsigned     row_blocks;      /* grid of the row kernels */
    double      *partial_host;    /* row_blocks doubles */
    CUfunction   f_init, f_xbeta, f_step, f_state, f_quad;
} cuda_state;

static cuda_state *S(gg_backend *be) { return (cuda_state *) be->impl; }

static void cuda_release(gg_backend *be)
{
    cuda_state *s = S(be);
    if (s == NULL)
        return;
    gg_buflist_release(&s->bufs);
    free(s->partial_host);
    free(s);
    be->impl = NULL;
}

/* Run one kernel over the rows; counts the launch. */
static int launch_rows(cuda_state *s, CUfunction f, void **args, const char *what,
                       gg_status *st)
{
    if (gg_cu_check(gg_cu.cuLaunchKernel(f, s->row_blocks, 1, 1, ROW_THREADS, 1, 1, 0, NULL,
                                         args, NULL), what, st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

/* Sum the per-block partials (in block order) into *out. */
static int sum_partials(cuda_state *s, double *out, gg_status *st)
{
    if (gg_cu_check(gg_cu.cuMemcpyDtoH(s->partial_host, s->partial,
                                       s->row_blocks * sizeof(double)),
                    "engine: running the row kernels", st))
        return -1;
    gg_tel_d2h(LABEL, (double) (s->row_blocks * sizeof(double)));
    double t = 0;
    for (unsigned b = 0; b < s->row_blocks; b++)
        t += s->partial_host[b];
    *out = t;
    return 0;
}

static int cuda_load(gg_backend *be, const gg_data *d, gg_status *st)
{
    cuda_state *s = S(be);
    if (d->n == 0 || d->p <= 0)
        return gg_fail(st, "gamgpu_bad_input", "no data to fit (n = %lu, p = %d)",
                       (unsigned long) d->n, d->p);
    s->n = d->n;
    s->p = d->p;
    be->n = d->n;
    be->p = d->p;
    const size_t n = d->n;
    const int p = d->p;
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = -1;
    if (gg_cuda_function(s->ordinal, "rows", "rows_init_eta", &s->f_init, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_xbeta", &s->f_xbeta, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_eta_step", &s->f_step, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_state", &s->f_state, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_quadform", &s->f_quad, st))
        goto done;
    gg_tel_dispatch(LABEL);

    long long blocks = ((long long) n + ROW_THREADS - 1) / ROW_THREADS;
    long long cap = 8LL * (gg_cuda_sm_count(s->ordinal) > 0 ? gg_cuda_sm_count(s->ordinal) : 80);
    s->row_blocks = (unsigned) (blocks < cap ? blocks : cap);
    s->partial_host = malloc(s->row_blocks * sizeof(double));
    if (s->partial_host == NULL) {
        gg_fail(st, "gamgpu_host_oom", "engine: out of host memory");
        goto done;
    }
    gg_cuda_gram_plan(s->ordinal, n, p + 1, &s->plan);

    gg_buflist *b = &s->bufs;
    if (!(s->X = gg_buflist_alloc(b, n * (size_t) p, LABEL, st)) ||
        !(s->y = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->pw = gg_buflist_alloc(b, n, LABEL, st)) ||
        (d->offset && !(s->off = gg_buflist_alloc(b, n, LABEL, st))) ||
        !(s->eta = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->eta_old = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->mu = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->w = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->z = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->beta = gg_buflist_alloc(b, (size_t) p, LABEL, st)) ||
        !(s->gP = gg_buflist_alloc(b, s->plan.partial_elements, LABEL, st)) ||
        !(s->G = gg_buflist_alloc(b, (size_t) (p + 1) * (p + 1), LABEL, st)) ||
        !(s->partial = gg_buflist_alloc(b, s->row_blocks, LABEL, st)))
        goto done;
    if (gg_cuda_upload(LABEL, s->X, d->X, n * (size_t) p, st) ||
        gg_cuda_upload(LABEL, s->y, d->y, n, st) ||
        gg_cuda_upload(LABEL, s->pw, d->pw, n, st) ||
        (d->offset && gg_cuda_upload(LABEL, s->off, d->offset, n, st)))
        goto done;
    rc = 0;
done:
    gg_cuda_leave(s->ordinal);
    return rc;
}

static int cuda_init_eta(gg_backend *be, const gg_family *fam, gg_status *st)
{
    cuda_state *s = S(be);
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int f = (int) fam->fam, l = (int) fam->link, rc = -1;
    long long n = (long long) s->n;
    void *args[] = {&f, &l, &s->y, &s->pw, &n, &s->eta, &s->eta_old, &s->partial};
    double bad = 0;
    if (launch_rows(s, s->f_init, args, "engine: launching rows_init_eta", st) ||
        sum_partials(s, &bad, st))
        goto done;
    if (bad > 0) {
        /* Rare: find the first offending row for the message, on the host. */
        double *y = malloc(s->n * sizeof(double)), *pw = malloc(s->n * sizeof(double));
        size_t row = s->n;
        if (y != NULL && pw != NULL &&
            gg_cu.cuMemcpyDtoH(y, s->y, s->n * sizeof(double)) == CUDA_SUCCESS &&
            gg_cu.cuMemcpyDtoH(pw, s->pw, s->n * sizeof(double)) == CUDA_SUCCESS)
            for (row = 0; row < s->n; row++)
                if (!gg_start_valid(fam, gg_linkfun(fam->link, gg_mustart(fam->fam, y[row], pw[row]))))
                    break;
        gg_fail(st, "gamgpu_bad_start",
                "cannot find valid starting values for the %s family with %s link "
                "(%.0f rows; the first is row %lu, y = %g)",
                gg_family_name(fam->fam), gg_link_name(fam->link), bad,
                (unsigned long) row + 1, row < s->n ? y[row] : NAN);
        free(pw);
        free(y);
        goto done;
    }
    rc = 0;
done:
    gg_cuda_leave(s->ordinal);
    return rc;
}

static int cuda_xbeta(gg_backend *be, const double *beta, gg_status *st)
{
    cuda_state *s = S(be);
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    long long n = (long long) s->n;
    int p = s->p;
    void *args[] = {&s->X, &n, &n, &p, &s->beta, &s->off, &s->eta};
    int rc = gg_cuda_upload(LABEL, s->beta, beta, (size_t) p, st) ||
             launch_rows(s, s->f_xbeta, args, "engine: launching rows_xbeta", st) ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->n_xbeta++;
    return rc;
}

static int eta_step(gg_backend *be, int mode, gg_status *st)
{
    cuda_state *s = S(be);
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    long long n = (long long) s->n;
    void *args[] = {&mode, &n, &s->eta, &s->eta_old};
    int rc = launch_rows(s, s->f_step, args, "engine: launching rows_eta_step", st);
    gg_cuda_leave(s->ordinal);
    return rc;
}

static int cuda_keep_eta(gg_backend *be, gg_status *st)  { return eta_step(be, 0, st); }
static int cuda_halve_eta(gg_backend *be, gg_status *st) { return eta_step(be, 1, st); }

static int cuda_row_state(gg_backend *be, const gg_family *fam, double *dev, gg_status *st)
{
    cuda_state *s = S(be);
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int f = (int) fam->fam, l = (int) fam->link;
    long long n = (long long) s->n;
    void *args[] = {&f, &l, &s->y, &s->pw, &s->off, &s->eta, &n,
                    &s->mu, &s->w, &s->z, &s->partial};
    int rc = launch_rows(s, s->f_state, args, "engine: launching rows_state", st) ||
             sum_partials(s, dev, st) ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->n_row_state++;
    if (rc == 0 && !isfinite(*dev))
        return gg_fail(st, "gamgpu_nonfinite", "non-finite deviance");
    return rc;
}

static int cuda_gram(gg_backend *be, double *A, double *b, double *zwz, gg_status *st)
{
    cuda_state *s = S(be);
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = gg_cuda_gram_run(s->ordinal, LABEL, s->X, s->n, s->z, s->w, s->n, s->p,
                              &s->plan, s->gP, s->G, 0, st) ||
             gg_cuda_gram_fetch(LABEL, s->G, s->p, 1, A, b, zwz, st) ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->n_gram++;
    return rc;
}

static int cuda_leverage(gg_backend *be, const double *M, double *h, gg_status *st)
{
    cuda_state *s = S(be);
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = -1;
    const int p = s->p;
    long long n = (long long) s->n;
    if ((!s->M && !(s->M = gg_buflist_alloc(&s->bufs, (size_t) p * p, LABEL, st))) ||
        (!s->h && !(s->h = gg_buflist_alloc(&s->bufs, s->n, LABEL, st))))
        goto done;
    void *args[] = {&s->X, &n, &n, (void *) &p, &s->M, &s->w, &s->h};
    if (gg_cuda_upload(LABEL, s->M, M, (size_t) p * p, st) ||
        launch_rows(s, s->f_quad, args, "engine: launching rows_quadform", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(h, s->h, s->n * sizeof(double)),
                    "engine: copying leverages back", st))
        goto done;
    gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    rc = 0;
done:
    gg_cuda_leave(s->ordinal);
    return rc;
}

static int cuda_fetch(gg_backend *be, gg_vec which, double *out, gg_status *st)
{
    cuda_state *s = S(be);
    CUdeviceptr src = 0;
    switch (which) {
    case GG_VEC_ETA: src = s->eta; break;
    case GG_VEC_MU: src = s->mu; break;
    case GG_VEC_W: src = s->w; break;
    case GG_VEC_Z: src = s->z; break;
    }
    if (src == 0)
        return gg_fail(st, "gamgpu_internal_error", "fetch: unknown vector");
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = gg_cu_check(gg_cu.cuMemcpyDtoH(out, src, s->n * sizeof(double)),
                         "engine: copying a result vector back", st);
    if (rc == 0)
        gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    gg_cuda_leave(s->ordinal);
    return rc;
}

static const gg_backend_ops cuda_ops = {
    "cuda", cuda_load, cuda_init_eta, cuda_xbeta, cuda_keep_eta, cuda_halve_eta,
    cuda_row_state, cuda_gram, cuda_leverage, cuda_fetch, cuda_release};

int gg_backend_cuda_init(gg_backend *be, int ordinal, gg_status *st)
{
    memset(be, 0, sizeof *be);
    gg_arena *arena = gg_gpu_arena(ordinal, st);
    if (arena == NULL)
        return -1;
    cuda_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (cuda backend)");
    s->ordinal = ordinal;
    s->arena = arena;
    gg_buflist_init(&s->bufs, arena);
    be->ops = &cuda_ops;
    be->impl = s;
    return 0;
}
