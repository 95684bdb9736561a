/* gram_cpu.c -- the weighted Gram product on the CPU: A = X'WX, b = X'Wz,
 * z'Wz with BLAS over row chunks, so the memory beyond the data is
 * O(chunk * p + p^2).  It is the CPU backend's gram step and the oracle the
 * device kernel (cuda_gram.c) is tested against.
 *
 * With non-negative weights (always so for IRLS working weights) each chunk
 * of sqrt(w)-scaled rows goes through dsyrk, half the flops of a general
 * product; with any negative weight, (w X)' X through dgemm.  With AR1
 * residuals (bam's rho) each chunk holds the transformed rows
 * a_r x_r + c_r x_{r-1} (inst/include/ar1_math.h), which read one row
 * before the chunk, and goes through dsyrk unweighted.
 *
 * Without AR1 rows, gamgpu's own kernel (gram_kernel.c, over the thread
 * budget) takes the product instead when asked for (gg_cpu_gram_mode():
 * always, or "auto": where it is faster than the BLAS R has, timed once
 * per size class of p on the first large product). */
#define USE_FC_LEN_T
#include "gram_cpu.h"
#include "gram_kernel.h"
#include "interrupt.h"
#include "ar1_math.h"

#include <R_ext/BLAS.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FCONE
#define FCONE
#endif

#define CHUNK_ROWS_DEFAULT 4096

gg_ar1 gg_ar1_of(double rho, const double *start)
{
    gg_ar1 ar;
    ar.ld = 1.0 / sqrt(1.0 - rho * rho);
    ar.sd = -rho * ar.ld;
    ar.start = start;
    return ar;
}

/* The chunk of m rows from r0, AR1-transformed: WX (m x p) and, when z is
 * given, v = z~ (m). */
static void ar1_chunk(const double *X, size_t n, int p, const double *w, const double *z,
                      const gg_ar1 *ar, size_t r0, int m, double *WX, double *v,
                      double *ca, double *cc)
{
    for (int i = 0; i < m; i++)
        gg_ar1_row((long long) (r0 + i), ar->ld, ar->sd, ar->start, w, &ca[i], &cc[i]);
    for (int j = 0; j < p; j++) {
        const double *xj = X + (size_t) j * n + r0;
        double *wxj = WX + (size_t) j * m;
        for (int i = 0; i < m; i++)
            wxj[i] = cc[i] != 0.0 ? ca[i] * xj[i] + cc[i] * xj[i - 1] : ca[i] * xj[i];
    }
    if (z != NULL)
        for (int i = 0; i < m; i++) {
            const double *zi = z + r0 + i;
            v[i] = cc[i] != 0.0 ? ca[i] * zi[0] + cc[i] * zi[-1] : ca[i] * zi[0];
        }
}

static int blas_gram(const double *X, size_t ldx, size_t n, int p, const double *w,
                     const double *z, double *A, double *b, double *zwz, size_t chunk_rows,
                     const gg_ar1 *ar, gg_status *st);

/* ---- which product: the BLAS's or gamgpu's ------------------------------ */

#define GG_GRAM_CLASSES 4          /* p < 32, < 128, < 512, larger */
#define GG_GRAM_PROBE_ROWS 8192    /* rows timed, of a product at least twice that */

static int gram_mode = GG_CPU_GRAM_AUTO;  /* R's default: options(gamgpu.cpu_gram) */
static int gram_choice[GG_GRAM_CLASSES];          /* 0: undecided, 1: own, 2: BLAS */
static double gram_secs[GG_GRAM_CLASSES][2];      /* the probe's seconds: own, BLAS */

static int p_class(int p) { return p < 32 ? 0 : p < 128 ? 1 : p < 512 ? 2 : 3; }

int gg_cpu_gram_class(int p) { return p_class(p); }

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

void gg_cpu_gram_set_mode(int mode)
{
    gram_mode = mode;
    memset(gram_choice, 0, sizeof gram_choice);
}

int gg_cpu_gram_mode(void) { return gram_mode; }

int gg_cpu_gram_choice(int p, double *own_secs, double *blas_secs)
{
    const int c = p_class(p);
    if (own_secs) *own_secs = gram_secs[c][0];
    if (blas_secs) *blas_secs = gram_secs[c][1];
    return gram_mode == GG_CPU_GRAM_OWN ? 1 : gram_mode == GG_CPU_GRAM_BLAS ? 2 : gram_choice[c];
}

/* Under "auto", the first product of a size class of p with enough rows
 * times both on its first GG_GRAM_PROBE_ROWS rows (into A, b: overwritten
 * by the product itself afterwards), three times each, and keeps the
 * faster. */
static int use_own(const double *X, size_t n, int p, const double *w, const double *z,
                   double *A, double *b, gg_status *st)
{
    if (gram_mode != GG_CPU_GRAM_AUTO) return gram_mode == GG_CPU_GRAM_OWN;
    const int c = p_class(p);
    if (gram_choice[c] == 0 && n >= 2 * (size_t) GG_GRAM_PROBE_ROWS) {
        /* each timed three times in turn, the fastest kept: a first call
         * pays for its buffers and caches, and one run of a few
         * milliseconds is at the mercy of the machine's other work */
        double s, t_own = INFINITY, t_blas = INFINITY;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = seconds();
            if (gg_gram_kernel(X, n, GG_GRAM_PROBE_ROWS, p, w, z, A, b, &s, st)) return -1;
            const double to = seconds() - t0;
            t0 = seconds();
            if (blas_gram(X, n, GG_GRAM_PROBE_ROWS, p, w, z, A, b, &s, 0, NULL, st)) return -1;
            const double tb = seconds() - t0;
            if (to < t_own) t_own = to;
            if (tb < t_blas) t_blas = tb;
        }
        gram_secs[c][0] = t_own;
        gram_secs[c][1] = t_blas;
        gram_choice[c] = t_own < t_blas ? 1 : 2;
    }
    return gram_choice[c] == 1;
}

int gg_cpu_gram_prefers_own(const double *X, size_t n, int p, gg_status *st)
{
    if (gram_mode != GG_CPU_GRAM_AUTO) return gram_mode == GG_CPU_GRAM_OWN;
    if (gram_choice[p_class(p)] != 0 || n < 2 * (size_t) GG_GRAM_PROBE_ROWS || p < 1)
        return gram_choice[p_class(p)] != 2;
    double *A = malloc(((size_t) p * p + p) * sizeof(double));
    if (A == NULL)
        return gg_fail(st, "gamgpu_host_oom", "gram: out of host memory (%d x %d)", p, p);
    const int own = use_own(X, n, p, NULL, NULL, A, A + (size_t) p * p, st);
    free(A);
    return own;
}

int gg_cpu_gram(const double *X, size_t n, int p, const double *w, const double *z,
                double *A, double *b, double *zwz, size_t chunk_rows, const gg_ar1 *ar,
                gg_status *st)
{
    if (ar == NULL && n > 0 && p > 0) {
        const int own = use_own(X, n, p, w, z, A, b, st);
        if (own < 0) return -1;
        if (own) return gg_gram_kernel(X, n, n, p, w, z, A, b, zwz, st);
    }
    return blas_gram(X, n, n, p, w, z, A, b, zwz, chunk_rows, ar, st);
}

/* The BLAS's product over rows [0, n) of X (leading dimension ldx). */
static int blas_gram(const double *X, size_t ldx_, size_t n, int p, const double *w,
                     const double *z, double *A, double *b, double *zwz, size_t chunk_rows,
                     const gg_ar1 *ar, gg_status *st)
{
    memset(A, 0, (size_t) p * p * sizeof(double));
    if (z != NULL) {
        memset(b, 0, (size_t) p * sizeof(double));
        *zwz = 0;
    }
    if (n == 0 || p == 0)
        return 0;
    int nonneg = 1;
    for (size_t i = 0; w != NULL && i < n && nonneg; i++)
        nonneg = w[i] >= 0;
    size_t chunk = chunk_rows > 0 ? chunk_rows : CHUNK_ROWS_DEFAULT;
    if (chunk > n)
        chunk = n;
    if (ar != NULL)
        nonneg = 1;        /* the caller's promise: AR1 weights are not negative */
    double *WX = malloc(chunk * (size_t) p * sizeof(double));
    double *v = malloc(chunk * sizeof(double));
    double *ca = ar != NULL ? malloc(2 * chunk * sizeof(double)) : NULL;
    if (WX == NULL || v == NULL || (ar != NULL && ca == NULL)) {
        free(WX);
        free(v);
        free(ca);
        return gg_fail(st, "gamgpu_host_oom", "gram: out of host memory for a %lu x %d chunk",
                       (unsigned long) chunk, p);
    }
    const double one = 1.0;
    const int inc = 1, ldx = (int) ldx_;
    double s = 0;
    for (size_t r0 = 0; r0 < n; r0 += chunk) {
        const int m = (int) (n - r0 < chunk ? n - r0 : chunk);
        if (gg_interrupt_check()) {
            free(WX);
            free(v);
            free(ca);
            return gg_interrupt_fail(st, "the weighted Gram product");
        }
        if (ar != NULL) {
            /* A += X~'X~, b += X~'z~, s += z~'z~ */
            ar1_chunk(X, ldx_, p, w, z, ar, r0, m, WX, v, ca, ca + chunk);
            F77_CALL(dsyrk)("U", "T", &p, &m, &one, WX, &m, &one, A, &p FCONE FCONE);
            if (z != NULL) {
                for (int i = 0; i < m; i++)
                    s += v[i] * v[i];
                F77_CALL(dgemv)("T", &m, &p, &one, WX, &m, v, &inc, &one, b, &inc FCONE);
            }
            continue;
        }
        /* v = sqrt(w) (dsyrk path) or w (dgemm path) for the chunk's rows */
        for (int i = 0; i < m; i++) {
            const double wi = w != NULL ? w[r0 + i] : 1.0;
            v[i] = nonneg ? sqrt(wi) : wi;
        }
        for (int j = 0; j < p; j++) {
            const double *xj = X + (size_t) j * ldx_ + r0;
            double *wxj = WX + (size_t) j * m;
            for (int i = 0; i < m; i++)
                wxj[i] = xj[i] * v[i];
        }
        if (nonneg) {
            /* A += (V X)'(V X), upper triangle */
            F77_CALL(dsyrk)("U", "T", &p, &m, &one, WX, &m, &one, A, &p FCONE FCONE);
            if (z != NULL) {
                for (int i = 0; i < m; i++) {
                    v[i] *= z[r0 + i];            /* sqrt(w) z */
                    s += v[i] * v[i];
                }
                F77_CALL(dgemv)("T", &m, &p, &one, WX, &m, v, &inc, &one, b, &inc FCONE);
            }
        } else {
            /* A += X' (W X) */
            F77_CALL(dgemm)("T", "N", &p, &p, &m, &one, X + r0, &ldx, WX, &m, &one, A, &p
                            FCONE FCONE);
            if (z != NULL) {
                for (int i = 0; i < m; i++) {
                    s += v[i] * z[r0 + i] * z[r0 + i];
                    v[i] *= z[r0 + i];            /* w z */
                }
                F77_CALL(dgemv)("T", &m, &p, &one, X + r0, &ldx, v, &inc, &one, b, &inc FCONE);
            }
        }
    }
    if (nonneg)
        for (int j = 0; j < p; j++)
            for (int i = j + 1; i < p; i++)
                A[i + (size_t) j * p] = A[j + (size_t) i * p];
    if (z != NULL)
        *zwz = s;
    free(WX);
    free(v);
    free(ca);
    return 0;
}
