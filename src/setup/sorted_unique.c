/* sorted_unique.c -- a covariate's distinct values in increasing order,
 * sort(unique(x)), for the knots of gam()'s bases set up from every row
 * (R/sorted_distinct.R, R/distinct_rows.R): a radix sort over threads, and
 * several covariates side by side (sorted_unique.h).  No R API: this runs
 * off R's thread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "double_keys.h"
#include "sorted_unique.h"
#include "threads.h"

/* A parallel LSD radix sort of the keys: the rows in SU_JOBS fixed
 * segments; per byte, each segment's histogram (phase 1), then each
 * segment scattered to its own offsets within each bucket (phase 2), which
 * keeps the sort stable and its result independent of the threads. */
#define SU_JOBS 16
#define SU_MIN_ROWS 65536      /* rows per segment at the least */

typedef struct su_job {
    const double *x;
    const uint64_t *src;
    uint64_t *dst;
    size_t i0, i1;
    int phase, sh;             /* 0: keys and every byte's histogram; 1, 2: byte sh */
    size_t hist[256];
    size_t all[8][256];
} su_job;

static void *su_run(void *arg)
{
    su_job *j = arg;
    if (j->phase == 0) {
        memset(j->all, 0, sizeof j->all);
        for (size_t i = j->i0; i < j->i1; i++) {
            const uint64_t k = key_of(j->x[i]);
            j->dst[i] = k;
            for (int d = 0; d < 8; d++) j->all[d][(k >> (8 * d)) & 0xFF]++;
        }
    } else if (j->phase == 1) {
        memset(j->hist, 0, sizeof j->hist);
        for (size_t i = j->i0; i < j->i1; i++) j->hist[(j->src[i] >> j->sh) & 0xFF]++;
    } else {
        for (size_t i = j->i0; i < j->i1; i++)
            j->dst[j->hist[(j->src[i] >> j->sh) & 0xFF]++] = j->src[i];
    }
    return NULL;
}

int gg_sorted_unique(const double *x, size_t n, double *out, size_t *nu)
{
    *nu = 0;
    if (n == 0) return 0;
    size_t nj = n / SU_MIN_ROWS;
    nj = nj < 1 ? 1 : nj > SU_JOBS ? SU_JOBS : nj;
    uint64_t *a = malloc(n * sizeof(uint64_t)), *b = malloc(n * sizeof(uint64_t));
    su_job *jobs = calloc(nj, sizeof *jobs);
    if (a == NULL || b == NULL || jobs == NULL) {
        free(a);
        free(b);
        free(jobs);
        return -1;
    }
    for (size_t q = 0; q < nj; q++) {
        jobs[q].x = x;
        jobs[q].i0 = n * q / nj;
        jobs[q].i1 = n * (q + 1) / nj;
        jobs[q].dst = a;
        jobs[q].phase = 0;
    }
    /* the keys and every byte's histogram in one pass */
    gg_run_jobs((int) nj, su_run, jobs, sizeof *jobs);
    /* least significant byte first, skipping a byte that every key shares */
    for (int d = 0; d < 8; d++) {
        const int sh = 8 * d;
        const unsigned v0 = (unsigned) ((a[0] >> sh) & 0xFF);
        size_t same = 0;
        for (size_t q = 0; q < nj; q++) same += jobs[q].all[d][v0];
        if (same == n) continue;
        for (size_t q = 0; q < nj; q++) {
            jobs[q].src = a;
            jobs[q].dst = b;
            jobs[q].sh = sh;
            jobs[q].phase = 1;
        }
        gg_run_jobs((int) nj, su_run, jobs, sizeof *jobs);
        size_t at = 0;
        for (int v = 0; v < 256; v++)
            for (size_t q = 0; q < nj; q++) {
                const size_t c = jobs[q].hist[v];
                jobs[q].hist[v] = at;
                at += c;
            }
        for (size_t q = 0; q < nj; q++) jobs[q].phase = 2;
        gg_run_jobs((int) nj, su_run, jobs, sizeof *jobs);
        uint64_t *t = a;
        a = b;
        b = t;
    }
    /* equal values (-0 and +0 among them) once each */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const double v = value_of(a[i]);
        if (m == 0 || v != out[m - 1]) out[m++] = v;
    }
    *nu = m;
    free(a);
    free(b);
    free(jobs);
    return 0;
}

typedef struct su_many_job {
    const double *x;
    size_t n, nu;
    double *out;
    int rc;
} su_many_job;

static void *su_many_run(void *arg)
{
    su_many_job *j = arg;
    j->rc = gg_sorted_unique(j->x, j->n, j->out, &j->nu);
    return NULL;
}

int gg_sorted_unique_many(int m, const double *const *x, const size_t *n, double *const *out,
                          size_t *nu)
{
    if (m < 1) return 0;
    if (m == 1) return gg_sorted_unique(x[0], n[0], out[0], nu);   /* every thread on it */
    su_many_job *jobs = calloc((size_t) m, sizeof *jobs);
    if (jobs == NULL) return -1;
    for (int j = 0; j < m; j++) jobs[j] = (su_many_job) {x[j], n[j], 0, out[j], 0};
    gg_run_jobs(m, su_many_run, jobs, sizeof *jobs);
    int rc = 0;
    for (int j = 0; j < m; j++) {
        nu[j] = jobs[j].nu;
        if (jobs[j].rc != 0) rc = -1;
    }
    free(jobs);
    return rc;
}
