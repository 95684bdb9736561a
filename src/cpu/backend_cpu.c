/* backend_cpu.c -- the CPU implementation of backend.h.
 *
 * Uses the caller's X, y, weights and offset in place (no copy) and keeps
 * five n-vectors of row state.  X'WX and X'Wz come from gram_cpu.c (BLAS
 * over row chunks of sqrt(w)-scaled rows), so the memory beyond the data is
 * O(chunk x p + p^2) and the BLAS works on cache-sized blocks.  With AR1
 * residuals (bam's rho) the Gram product and the leverages are those of
 * the transformed rows (inst/include/ar1_math.h).
 *
 * X given as a recipe is built here once (n x p), unless the recipe's
 * bases are local and sparse rows are cheaper (xsparse.h): then X is never
 * formed, and every product goes through the rows' few entries. */
#define USE_FC_LEN_T
#include <R_ext/BLAS.h>
#ifndef FCONE
#define FCONE
#endif

#include "backend.h"
#include "gram_cpu.h"
#include "interrupt.h"
#include "threads.h"
#include "xsparse.h"
#include "ar1_math.h"
#include "efam_math.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GG_CPU_CHUNK_DEFAULT 4096

typedef struct cpu_state {
    gg_data d;
    size_t  chunk;
    double *eta, *eta_old, *mu, *w, *z;
    double *buf;            /* chunk x p */
    double *buf2;           /* chunk x p (leverage) */
    double *X_built;        /* X built here from d.xplan, or NULL */
    int     sparse;         /* X as sparse rows times a map (xs) */
    gg_xsparse xs;
    gg_ar1  ar;             /* AR1 residuals, when d.ar_rho != 0 */
} cpu_state;

static cpu_state *S(gg_backend *be) { return (cpu_state *) be->impl; }

static void cpu_release(gg_backend *be)
{
    cpu_state *s = S(be);
    if (s == NULL) return;
    free(s->eta); free(s->eta_old); free(s->mu); free(s->w); free(s->z);
    free(s->buf); free(s->buf2); free(s->X_built);
    gg_xsparse_free(&s->xs);
    free(s);
    be->impl = NULL;
}

/* What fit$device$placement says of sparse rows: their entries, the map,
 * and the columns of blocks that are not local (stored, or made per row) */
static void sparse_placement(const gg_xsparse *xs, char *out, size_t len)
{
    int w = snprintf(out, len, "host (sparse rows: %d entries of %d, times a %d x %d map",
                     xs->nnz, xs->Q, xs->Q, xs->p);
    if (xs->pd > 0 && w >= 0 && (size_t) w < len)
        w += snprintf(out + w, len - (size_t) w, "; %d dense columns", xs->pd);
    if (xs->ngen > 0 && w >= 0 && (size_t) w < len)
        w += snprintf(out + w, len - (size_t) w, "; %d thin plate columns made per row",
                      xs->ngen);
    if (w >= 0 && (size_t) w < len)
        snprintf(out + w, len - (size_t) w, ")");
}

static int cpu_load(gg_backend *be, const gg_data *d, gg_status *st)
{
    if (d->n == 0 || d->p <= 0)
        return gg_fail(st, "gamgpu_bad_input", "no data to fit (n = %lu, p = %d)",
                       (unsigned long) d->n, d->p);
    if (d->n > (size_t) INT_MAX)
        return gg_fail(st, "gamgpu_too_large",
                       "the CPU backend handles at most %d rows", INT_MAX);
    cpu_state *s = S(be);          /* allocated by gg_backend_cpu_init */
    if (s == NULL) return gg_fail(st, "gamgpu_internal_error", "cpu backend not initialised");
    if (s->eta != NULL) return gg_fail(st, "gamgpu_internal_error", "cpu backend loaded twice");
    if (d->ar_rho != 0 && !(fabs(d->ar_rho) < 1))
        return gg_fail(st, "gamgpu_bad_input", "the AR1 parameter rho must lie in (-1, 1)");
    s->d = *d;
    s->ar = gg_ar1_of(d->ar_rho, d->ar_start);
    be->n = d->n;
    be->p = d->p;
    s->chunk = s->chunk ? s->chunk : GG_CPU_CHUNK_DEFAULT;
    if (s->chunk > d->n) s->chunk = d->n;
    size_t n = d->n, cp = s->chunk * (size_t) d->p;
    s->eta = malloc(n * sizeof(double));
    s->eta_old = malloc(n * sizeof(double));
    s->mu = malloc(n * sizeof(double));
    s->w = malloc(n * sizeof(double));
    s->z = malloc(n * sizeof(double));
    s->buf = malloc(cp * sizeof(double));
    s->buf2 = malloc(cp * sizeof(double));
    if (!s->eta || !s->eta_old || !s->mu || !s->w || !s->z || !s->buf || !s->buf2)
        return gg_fail(st, "gamgpu_host_oom",
                       "out of memory allocating the row state for %lu rows",
                       (unsigned long) n);
    memset(s->eta, 0, n * sizeof(double));
    memset(s->eta_old, 0, n * sizeof(double));
    memset(s->mu, 0, n * sizeof(double));
    memset(s->w, 0, n * sizeof(double));
    memset(s->z, 0, n * sizeof(double));
    if (d->X == NULL) {
        if (d->xplan == NULL || d->xplan->n != n || d->xplan->p != d->p)
            return gg_fail(st, "gamgpu_internal_error", "cpu backend: no model matrix");
        if (d->ar_rho == 0 && gg_xsparse_mode() != GG_XS_NEVER) {
            char why[160];
            const int rc = gg_xsparse_compile(d->xplan, &s->xs, why, sizeof why, st);
            if (rc < 0)
                return -1;
            if (rc == 0 && gg_xsparse_wanted(&s->xs)) {
                if (gg_xsparse_fill_dense(&s->xs, st))
                    return -1;
                s->sparse = 1;
                sparse_placement(&s->xs, be->placement, sizeof be->placement);
                return 0;
            }
            gg_xsparse_free(&s->xs);
        }
        s->X_built = malloc(n * (size_t) d->p * sizeof(double));
        if (s->X_built == NULL)
            return gg_fail(st, "gamgpu_host_oom",
                           "out of memory building the %lu x %d model matrix",
                           (unsigned long) n, d->p);
        if (gg_xplan_fill(d->xplan, 0, n, s->X_built, n, st))
            return -1;
        s->d.X = s->X_built;
    }
    return 0;
}

static int cpu_init_eta(gg_backend *be, const gg_family *fam, gg_status *st)
{
    cpu_state *s = S(be);
    for (size_t i = 0; i < s->d.n; i++) {
        double eta;
        if (!gg_family_init_row(fam, s->d.y[i], s->d.yat ? s->d.yat[i] : s->d.y[i], s->d.pw[i],
                                &eta))
            return gg_fail(st, "gamgpu_bad_start",
                           "cannot find valid starting values for the %s family "
                           "with %s link (row %lu, y = %g)",
                           gg_family_name(fam->fam), gg_link_name(fam->link),
                           (unsigned long) i + 1, s->d.y[i]);
        s->eta[i] = eta;
    }
    memcpy(s->eta_old, s->eta, s->d.n * sizeof(double));
    return 0;
}

static int cpu_xbeta(gg_backend *be, const double *beta, gg_status *st)
{
    cpu_state *s = S(be);
    if (s->sparse) {
        be->n_xbeta++;
        return gg_xsparse_xbeta(&s->xs, beta, s->d.offset, s->eta, st);
    }
    int n = (int) s->d.n, p = s->d.p, one = 1;
    double a = 1.0, zero = 0.0;
    F77_CALL(dgemv)("N", &n, &p, &a, s->d.X, &n, beta, &one, &zero, s->eta, &one FCONE);
    if (s->d.offset)
        for (size_t i = 0; i < s->d.n; i++) s->eta[i] += s->d.offset[i];
    be->n_xbeta++;
    return 0;
}

static int cpu_keep_eta(gg_backend *be, gg_status *st)
{
    (void) st;
    cpu_state *s = S(be);
    memcpy(s->eta_old, s->eta, s->d.n * sizeof(double));
    return 0;
}

static int cpu_halve_eta(gg_backend *be, gg_status *st)
{
    (void) st;
    cpu_state *s = S(be);
    be->n_halve++;
    for (size_t i = 0; i < s->d.n; i++) s->eta[i] = (s->eta[i] + s->eta_old[i]) / 2;
    return 0;
}

static int cpu_row_state(gg_backend *be, const gg_family *fam, double *dev,
                         gg_status *st)
{
    cpu_state *s = S(be);
    double D = 0.0;
    const double *off = s->d.offset;
    if (fam->efam)
        for (size_t i = 0; i < s->d.n; i++)
            D += gg_fm_ef_row((int) fam->fam, gg_family_link(fam), s->d.y[i],
                              s->d.yat ? s->d.yat[i] : s->d.y[i], s->d.pw[i],
                              off ? off[i] : 0.0, s->eta[i], &fam->ef, &s->mu[i], &s->w[i],
                              &s->z[i]);
    else
        for (size_t i = 0; i < s->d.n; i++)
            D += gg_irls_row(fam, s->d.y[i], s->d.pw[i], off ? off[i] : 0.0, s->eta[i],
                             &s->mu[i], &s->w[i], &s->z[i]);
    be->n_row_state++;
    *dev = D;
    if (!isfinite(D))
        return gg_fail(st, "gamgpu_nonfinite", "non-finite deviance");
    return 0;
}

static int cpu_gram(gg_backend *be, double *A, double *b, double *zwz, gg_status *st)
{
    cpu_state *s = S(be);
    be->n_gram++;
    if (s->sparse)
        return gg_xsparse_gram(&s->xs, s->w, s->z, A, b, zwz, st);
    return gg_cpu_gram(s->d.X, s->d.n, s->d.p, s->w, s->z, A, b, zwz, s->chunk,
                       s->d.ar_rho != 0 ? &s->ar : NULL, st);
}

static int cpu_leverage(gg_backend *be, const double *M, double *h, gg_status *st)
{
    cpu_state *s = S(be);
    if (s->sparse)
        return gg_xsparse_leverage(&s->xs, M, s->w, h, st);
    const int p = s->d.p, ar = s->d.ar_rho != 0;
    const size_t n = s->d.n;
    double done = 1.0, dzero = 0.0;
    for (size_t r0 = 0; r0 < n; r0 += s->chunk) {
        int m = (int) ((n - r0) < s->chunk ? (n - r0) : s->chunk);
        if (gg_interrupt_check())
            return gg_interrupt_fail(st, "the leverages");
        if (ar) {
            /* the transformed rows a x_r + c x_{r-1}; h = x~' M x~ (the
             * coefficients go in h, overwritten below) */
            double *ca = h + r0, *cc = s->buf2;
            for (int i = 0; i < m; i++)
                gg_ar1_row((long long) (r0 + i), s->ar.ld, s->ar.sd, s->ar.start, s->w, &ca[i],
                           &cc[i]);
            for (int j = 0; j < p; j++) {
                const double *xj = s->d.X + (size_t) j * n + r0;
                double *bj = s->buf + (size_t) j * m;
                for (int i = 0; i < m; i++)
                    bj[i] = cc[i] != 0.0 ? ca[i] * xj[i] + cc[i] * xj[i - 1] : ca[i] * xj[i];
            }
        } else
            for (int j = 0; j < p; j++)
                memcpy(s->buf + (size_t) j * m, s->d.X + (size_t) j * n + r0,
                       (size_t) m * sizeof(double));
        F77_CALL(dgemm)("N", "N", &m, &p, &p, &done, s->buf, &m, M, &p, &dzero,
                        s->buf2, &m FCONE FCONE);
        for (int i = 0; i < m; i++) h[r0 + i] = 0.0;
        for (int j = 0; j < p; j++) {
            const double *a = s->buf + (size_t) j * m, *c = s->buf2 + (size_t) j * m;
            for (int i = 0; i < m; i++) h[r0 + i] += a[i] * c[i];
        }
        if (!ar)
            for (int i = 0; i < m; i++) h[r0 + i] *= s->w[r0 + i];
    }
    return 0;
}

/* The sums in blocks of EF_BLOCK rows, spread over EF_JOBS jobs on the
 * thread budget (threads.h), each block's sums then added to the total in
 * block order in long double, as R's sum() and colSums() accumulate:
 * estimate.theta()'s halving compares likelihoods that differ in the last
 * digits near the optimum, and sums as exact as R's decide those
 * comparisons as R does.  Neither the threads nor their number change a
 * result. */
#define EF_BLOCK 256
#define EF_JOBS 32

typedef struct ef_job {
    const cpu_state *s;
    const gg_family *fam;
    int deriv, nsum;
    size_t b0, b1;          /* blocks */
    double *part;           /* nblocks x nsum */
} ef_job;

static void *ef_run(void *arg)
{
    const ef_job *j = arg;
    const size_t n = j->s->d.n;
    for (size_t b = j->b0; b < j->b1; b++) {
        double *t = j->part + b * (size_t) j->nsum;
        memset(t, 0, (size_t) j->nsum * sizeof(double));
        const size_t i1 = (b + 1) * EF_BLOCK < n ? (b + 1) * EF_BLOCK : n;
        const double *y = j->s->d.y, *yat = j->s->d.yat;
        for (size_t i = b * EF_BLOCK; i < i1; i++)
            gg_fm_ef_theta_row((int) j->fam->fam, y[i], yat ? yat[i] : y[i], j->s->mu[i],
                               j->s->d.pw[i], &j->fam->ef, j->deriv, t);
    }
    return NULL;
}

static int cpu_ef_sums(gg_backend *be, const gg_family *fam, int deriv, double *s_out,
                       gg_status *st)
{
    cpu_state *s = S(be);
    const int nth = fam->ef.nth, nsum = GG_FM_EF_NSUM(nth, nth + fam->ef.scale_est);
    const size_t nblocks = (s->d.n + EF_BLOCK - 1) / EF_BLOCK;
    double *part = malloc(nblocks * (size_t) nsum * sizeof(double));
    if (part == NULL) return gg_fail(st, "gamgpu_host_oom", "out of memory (theta sums)");
    ef_job jobs[EF_JOBS];
    const int nj = nblocks < EF_JOBS ? (int) nblocks : EF_JOBS;
    for (int k = 0; k < nj; k++)
        jobs[k] = (ef_job) {s, fam, deriv, nsum, nblocks * k / nj, nblocks * (k + 1) / nj, part};
    gg_run_jobs(nj, ef_run, jobs, sizeof(ef_job));
    long double tot[GG_FM_EF_MAXSUM];
    for (int k = 0; k < nsum; k++) tot[k] = 0;
    for (size_t b = 0; b < nblocks; b++)
        for (int k = 0; k < nsum; k++) tot[k] += part[b * (size_t) nsum + k];
    free(part);
    for (int k = 0; k < nsum; k++) s_out[k] = (double) tot[k];
    if (!isfinite(s_out[GG_FM_EF_DEV]) || !isfinite(s_out[GG_FM_EF_LS]))
        return gg_fail(st, "gamgpu_nonfinite", "non-finite deviance in the theta estimation");
    return 0;
}

static int cpu_fetch(gg_backend *be, gg_vec which, double *out, gg_status *st)
{
    cpu_state *s = S(be);
    const double *src = NULL;
    switch (which) {
    case GG_VEC_ETA: src = s->eta; break;
    case GG_VEC_MU: src = s->mu; break;
    case GG_VEC_W: src = s->w; break;
    case GG_VEC_Z: src = s->z; break;
    }
    if (src == NULL) return gg_fail(st, "gamgpu_internal_error", "fetch: unknown vector");
    memcpy(out, src, s->d.n * sizeof(double));
    return 0;
}

static int cpu_set_rows(gg_backend *be, const double *w, const double *z, gg_status *st)
{
    (void) st;
    cpu_state *s = S(be);
    memcpy(s->w, w, s->d.n * sizeof(double));
    memcpy(s->z, z, s->d.n * sizeof(double));
    return 0;
}

static int cpu_xmul(gg_backend *be, const double *B, int k, double *out, gg_status *st)
{
    cpu_state *s = S(be);
    if (k <= 0)
        return 0;
    if (s->sparse)
        return gg_xsparse_xmul(&s->xs, B, k, out, st);
    if (gg_interrupt_check())
        return gg_interrupt_fail(st, "the product X B");
    int n = (int) s->d.n, p = s->d.p;
    double one = 1.0, zero = 0.0;
    F77_CALL(dgemm)("N", "N", &n, &k, &p, &one, s->d.X, &n, B, &p, &zero, out, &n
                    FCONE FCONE);
    return 0;
}

static int cpu_xtmul(gg_backend *be, const double *V, int k, double *out, gg_status *st)
{
    cpu_state *s = S(be);
    if (k <= 0)
        return 0;
    if (s->sparse)
        return gg_xsparse_xtmul(&s->xs, V, k, out, st);
    if (gg_interrupt_check())
        return gg_interrupt_fail(st, "the product X' V");
    int n = (int) s->d.n, p = s->d.p;
    double one = 1.0, zero = 0.0;
    F77_CALL(dgemm)("T", "N", &p, &k, &n, &one, s->d.X, &n, V, &n, &zero, out, &p
                    FCONE FCONE);
    return 0;
}

/* X built here from its recipe (dense; NULL where the rows are sparse) */
static const double *cpu_host_x(gg_backend *be)
{
    cpu_state *s = S(be);
    return s->sparse ? NULL : s->X_built;
}

static const gg_backend_ops cpu_ops = {
    .name      = "cpu",
    .load      = cpu_load,
    .init_eta  = cpu_init_eta,
    .xbeta     = cpu_xbeta,
    .keep_eta  = cpu_keep_eta,
    .halve_eta = cpu_halve_eta,
    .row_state = cpu_row_state,
    .gram      = cpu_gram,
    .leverage  = cpu_leverage,
    .ef_sums   = cpu_ef_sums,
    .fetch     = cpu_fetch,
    .set_rows  = cpu_set_rows,
    .xmul      = cpu_xmul,
    .xtmul     = cpu_xtmul,
    .release   = cpu_release,
    .outer     = NULL,
    .host_x    = cpu_host_x,
};

int gg_backend_cpu_init(gg_backend *be, size_t chunk_rows, gg_status *st)
{
    (void) st;
    memset(be, 0, sizeof *be);
    be->ops = &cpu_ops;
    /* the chunk size travels to load() through a pre-allocated state */
    cpu_state *s = calloc(1, sizeof *s);
    if (s == NULL) return gg_fail(st, "gamgpu_host_oom", "out of memory (cpu backend)");
    s->chunk = chunk_rows;
    be->impl = s;
    return 0;
}
