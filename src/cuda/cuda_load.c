/* cuda_load.c -- the CUDA backend's load() (backend.h): the row state and
 * y, the prior weights (none when each is 1) and the offset put in device
 * memory for the whole fit -- a lean session's (gg_data.lean_rows) without
 * eta_old, h or mu -- then X: resident when it fits (built on the device
 * from its recipe, cuda_xbuild.c, or copied), else streamed in chunks
 * (cuda_stream.c).  The backend's other operations are cuda_backend.c's.
 * Compiled only with CUDA. */
#include "cuda_backend.h"
#include "cuda_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *LABEL = GG_CUDA_ENGINE;

static cuda_state *S(gg_backend *be) { return (cuda_state *) be->impl; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* ---- load ------------------------------------------------------------ */

/* The n-vector h (the leverages, and X B's scratch), made if not yet: at
 * load, or at its first use in a lean session (gg_data.lean_rows);
 * context entered. */
int gg_cuda_need_h(gg_backend *be, CUdeviceptr *h, gg_status *st)
{
    cuda_state *s = S(be);
    if (s->h == 0 && !(s->h = gg_buflist_alloc(&s->bufs, s->n, LABEL, st)))
        return -1;
    *h = s->h;
    return 0;
}

/* Set up streaming: chunks of about CHUNK_TARGET_DOUBLES (a multiple of
 * 1024 rows), two device and two pinned buffers, two streams.  Halves the
 * chunk until the buffers fit. */
static int setup_streaming(cuda_state *s, const gg_data *d, gg_status *st)
{
    const size_t unit = 1024;
    size_t units = CHUNK_TARGET_DOUBLES / ((size_t) d->p * unit);
    if (units < 1)
        units = 1;
    const size_t max_units = (d->n + unit - 1) / unit;
    if (units > max_units)
        units = max_units;
    size_t C = 0;
    CUdeviceptr a = 0, b = 0;
    for (;;) {
        gg_status try;
        gg_status_clear(&try);
        C = units * unit;
        int mark = s->bufs.n;
        a = gg_buflist_alloc(&s->bufs, C * (size_t) d->p, LABEL, &try);
        b = a ? gg_buflist_alloc(&s->bufs, C * (size_t) d->p, LABEL, &try) : 0;
        if (b)
            break;
        gg_buflist_truncate(&s->bufs, mark);   /* give back what this attempt took */
        if (units == 1 || !gg_device_failure(&try)) {
            *st = try;
            return -1;
        }
        units /= 2;
    }
    /* a recipe (d->X NULL): chunks are built on the device */
    s->streamed = 1;
    return gg_xstream_open(&s->xs, LABEL, d->X, d->n, d->p, C, a, b, st);
}

/* load()'s call: its work on the device (context entered) */
typedef struct load_call {
    gg_backend    *be;
    const gg_data *d;
} load_call;

static int load_on_device(void *arg, gg_status *st)
{
    const load_call *c = arg;
    gg_backend *be = c->be;
    const gg_data *d = c->d;
    cuda_state *s = S(be);
    const size_t n = d->n;
    const int p = d->p;
    if (gg_cuda_function(s->ordinal, "rows", "rows_init_eta", &s->f_init, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_xbeta", &s->f_xbeta, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_eta_step", &s->f_step, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_state", &s->f_state, st) ||
        gg_cuda_function(s->ordinal, "gram", "gram_leverage", &s->f_lev, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_ef_sums", &s->f_ef, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_mu", &s->f_mu, st))
        return -1;
    gg_tel_dispatch(LABEL);

    s->row_blocks = row_blocks_for(s->ordinal, n);
    s->partial_host = malloc(MAX_SUMS * (size_t) s->row_blocks * sizeof(double));
    s->beta_eta = malloc((size_t) p * sizeof(double));
    s->beta_kept = malloc((size_t) p * sizeof(double));
    if (s->partial_host == NULL || s->beta_eta == NULL || s->beta_kept == NULL)
        return gg_fail(st, "gamgpu_host_oom", "engine: out of host memory");
    gg_cuda_gram_plan(s->ordinal, n, p + 1, &s->plan);

    /* the row state first: it must be resident */
    gg_buflist *b = &s->bufs;
    if (!(s->y = gg_buflist_alloc(b, n, LABEL, st)) ||
        (d->yat && !(s->yat = gg_buflist_alloc(b, n, LABEL, st))) ||
        /* (no prior weights when each is 1: the kernels take 1) */
        (!d->pw_ones && !(s->pw = gg_buflist_alloc(b, n, LABEL, st))) ||
        (d->offset && !(s->off = gg_buflist_alloc(b, n, LABEL, st))) ||
        !(s->eta = gg_buflist_alloc(b, n, LABEL, st)) ||
        (!d->lean_rows && !(s->eta_old = gg_buflist_alloc(b, n, LABEL, st))) ||
        (!d->lean_rows && !(s->mu = gg_buflist_alloc(b, n, LABEL, st))) ||
        !(s->w = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->z = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->beta = gg_buflist_alloc(b, (size_t) p, LABEL, st)) ||
        !(s->G = gg_buflist_alloc(b, (size_t) (p + 1) * (p + 1), LABEL, st)) ||
        !(s->partial = gg_buflist_alloc(b, MAX_SUMS * (size_t) s->row_blocks, LABEL, st)) ||
        !(s->gP = gg_buflist_alloc(b, s->plan.partial_elements, LABEL, st)) ||
        /* the leverage pass's M and h too (h at its first use in a lean
         * session): streaming below takes what is left */
        !(s->M = gg_buflist_alloc(b, (size_t) p * p, LABEL, st)) ||
        (!d->lean_rows && gg_cuda_need_h(be, &s->h, st)) ||
        (d->ar_rho != 0 && d->ar_start &&
         !(s->ar.start = gg_buflist_alloc(b, n, LABEL, st))))
        return -1;
    if (d->ar_rho != 0) {
        s->ar_on = 1;
        s->ar.ld = 1.0 / sqrt(1.0 - d->ar_rho * d->ar_rho);
        s->ar.sd = -d->ar_rho * s->ar.ld;
    }

    /* then X: resident if it fits, else streamed */
    gg_status x_st;
    gg_status_clear(&x_st);
    if (d->X == NULL && gg_cuda_load_recipe(s, d, st))
        return -1;
    s->X = gg_buflist_alloc(b, n * (size_t) p, LABEL, &x_st);
    if (s->X) {
        if (d->X == NULL) {
            double tb = now();
            if (gg_cuda_build_x_resident(s, st))
                return -1;
            be->t_build += now() - tb;
            snprintf(be->placement, sizeof be->placement, "device (X built and resident)");
        } else {
            if (gg_cuda_upload(LABEL, s->X, d->X, n * (size_t) p, st))
                return -1;
            snprintf(be->placement, sizeof be->placement, "device (X resident)");
        }
    } else {
        if (!gg_device_failure(&x_st)) {
            *st = x_st;
            return -1;
        }
        if (s->ar_on)
            return gg_fail(st, "gamgpu_device_unsupported",
                           "AR1 residuals (rho) need the model matrix resident in device "
                           "memory, and its %lu x %d doubles do not fit", (unsigned long) n, p);
        if (setup_streaming(s, d, st))
            return -1;
        snprintf(be->placement, sizeof be->placement,
                 d->X == NULL ? "device (X built on the device in streamed chunks of %lu rows)"
                              : "device (X streamed from the host in chunks of %lu rows)",
                 (unsigned long) s->xs.chunk_rows);
    }
    if (gg_cuda_upload(LABEL, s->y, d->y, n, st) ||
        (d->yat && gg_cuda_upload(LABEL, s->yat, d->yat, n, st)) ||
        (s->pw && gg_cuda_upload(LABEL, s->pw, d->pw, n, st)) ||
        (d->offset && gg_cuda_upload(LABEL, s->off, d->offset, n, st)) ||
        (s->ar.start && gg_cuda_upload(LABEL, s->ar.start, d->ar_start, n, st)))
        return -1;
    return 0;
}

int gg_cuda_backend_load(gg_backend *be, const gg_data *d, gg_status *st)
{
    cuda_state *s = S(be);
    if (d->n == 0 || d->p <= 0)
        return gg_fail(st, "gamgpu_bad_input", "no data to fit (n = %lu, p = %d)",
                       (unsigned long) d->n, d->p);
    if (d->ar_rho != 0 && !(fabs(d->ar_rho) < 1))
        return gg_fail(st, "gamgpu_bad_input", "the AR1 parameter rho must lie in (-1, 1)");
    s->n = d->n;
    s->p = d->p;
    be->n = d->n;
    be->p = d->p;
    load_call c = {be, d};
    double t = 0;
    const int rc = gg_cuda_run(s->ordinal, load_on_device, &c, NULL, &t, st);
    be->t_transfer += t - be->t_build;     /* X built on the device: not a transfer */
    return rc;
}
