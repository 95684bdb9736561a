/* setup_stats.c -- the setup's passes over every row (setup_stats.h).
 * At 1e7 rows R's partial sort for the median of each covariate and the
 * logical temporaries of the response checks were most of the R side of a
 * fit's setup; here rows are shared out to threads in ranges, and each
 * result is combined in range order, so it does not depend on the thread
 * count.  No R API: this runs off R's thread. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "double_keys.h"
#include "setup_stats.h"
#include "threads.h"

#define RADIX_BITS 16
#define RADIX_BINS ((size_t) 1 << RADIX_BITS)
#define RADIX_PASSES (64 / RADIX_BITS)
#define ROWS_PER_JOB 65536      /* fewer rows than this per thread do not pay */
#define MAX_STACK_JOBS 64       /* jobs of the passes that keep them on the stack */

static int jobs_for(size_t n, int nthreads)
{
    size_t nj = n / ROWS_PER_JOB + 1;
    if (nthreads < 1) nthreads = 1;
    return nj < (size_t) nthreads ? (int) nj : nthreads;
}

/* ---- order statistic by radix selection ---------------------------------- */

typedef struct select_job {
    const double *x;
    size_t i0, i1;
    int pass;                  /* 0 .. RADIX_PASSES - 1; -1: gather */
    uint64_t prefix;           /* the key bits above this pass's, chosen so far */
    size_t *hist;              /* RADIX_BINS counts */
    size_t nvalid;             /* pass 0: non-NaN values, first min and max */
    double min, max;
    uint64_t *keys;            /* gather: where this range's keys in bin prefix go */
} select_job;

static void *select_run(void *arg)
{
    select_job *j = arg;
    const double *x = j->x;
    size_t *hist = j->hist;
    if (j->pass < 0) {         /* the keys of pass 0's chosen bin, in row order */
        uint64_t *out = j->keys;
        for (size_t i = j->i0; i < j->i1; i++) {
            const double v = x[i];
            if (isnan(v)) continue;
            const uint64_t k = key_of(v);
            if ((k >> (64 - RADIX_BITS)) == j->prefix) *out++ = k;
        }
        return NULL;
    }
    memset(hist, 0, RADIX_BINS * sizeof *hist);
    if (j->pass == 0) {
        size_t nv = 0;
        double lo = 0, hi = 0;
        for (size_t i = j->i0; i < j->i1; i++) {
            const double v = x[i];
            if (isnan(v)) continue;
            if (nv == 0 || v < lo) lo = v;
            if (nv == 0 || v > hi) hi = v;
            nv++;
            hist[key_of(v) >> (64 - RADIX_BITS)]++;
        }
        j->nvalid = nv;
        j->min = lo;
        j->max = hi;
        return NULL;
    }
    const int above = 64 - RADIX_BITS * j->pass;     /* bits fixed by earlier passes */
    const int shift = above - RADIX_BITS;
    for (size_t i = j->i0; i < j->i1; i++) {
        const double v = x[i];
        if (isnan(v)) continue;
        const uint64_t k = key_of(v);
        if ((k >> above) == j->prefix) hist[(k >> shift) & (RADIX_BINS - 1)]++;
    }
    return NULL;
}

/* The bin holding the value of 0-based rank *rank among the counted ones;
 * *rank becomes the rank within that bin. */
static uint64_t choose_bin(const select_job *jobs, int nj, size_t *rank)
{
    for (size_t b = 0; b < RADIX_BINS; b++) {
        size_t c = 0;
        for (int t = 0; t < nj; t++) c += jobs[t].hist[b];
        if (*rank < c) return b;
        *rank -= c;
    }
    return RADIX_BINS - 1;     /* not reached: the ranks add up */
}

/* The key of 0-based rank `rank` among the m keys of pass 0's bin b (all
 * with b as their top bits), by the remaining radix passes over them
 * alone; uses keys' memory, m > 0. */
static uint64_t select_keys(uint64_t *keys, size_t m, uint64_t b, size_t rank, size_t *hist)
{
    uint64_t prefix = b;
    for (int pass = 1; pass < RADIX_PASSES; pass++) {
        const int shift = 64 - RADIX_BITS * (pass + 1);
        memset(hist, 0, RADIX_BINS * sizeof *hist);
        for (size_t i = 0; i < m; i++)
            hist[(keys[i] >> shift) & (RADIX_BINS - 1)]++;
        size_t c = 0, bin = 0;
        for (; bin < RADIX_BINS; bin++) {
            if (rank < c + hist[bin]) break;
            c += hist[bin];
        }
        rank -= c;
        prefix = (prefix << RADIX_BITS) | bin;
        size_t kept = 0;                 /* the chosen bin's keys move to the front */
        for (size_t i = 0; i < m; i++)
            if (((keys[i] >> shift) & (RADIX_BINS - 1)) == bin)
                keys[kept++] = keys[i];
        m = kept;
    }
    return prefix;
}

/* The k of quantile(x, 0.5, type = 3) for m values: nppm = m / 2 - 1/2,
 * j = floor(nppm); the (j + 1)-th value when nppm is not whole or j is odd,
 * else the max(j, 1)-th. */
static size_t median_rank(size_t m)
{
    const double nppm = (double) m * 0.5 - 0.5;
    const double j = floor(nppm);
    const int up = nppm != j || fmod(j, 2.0) == 1.0;
    return up ? (size_t) j + 1 : (j < 1 ? 1 : (size_t) j);
}

/* ---- the median in one pass, from a bracket drawn on a sample ------------- */

/* A sample of SAMPLE_N evenly spaced rows brackets the median: the values
 * between the sample's order statistics SAMPLE_MARGIN either side of its
 * middle hold the median unless the sample misleads (then the radix
 * selection runs).  One pass over the rows counts the values below the
 * bracket, gathers those in it (about 1.6% of the rows) and takes the
 * first min and max; the median is selected among the gathered ones. */
#define SAMPLE_N 65536
#define SAMPLE_MARGIN 528          /* ~4 binomial sd of the sample's middle rank, + 16 */
#define BRACKET_MIN_ROWS ((size_t) 1 << 20)

typedef struct bracket_job {
    const double *x;
    size_t i0, i1;
    double lo, hi;             /* the bracket, inclusive */
    size_t nvalid, below, in, cap;
    double min, max;
    double *buf;               /* cap values: this range's in the bracket */
} bracket_job;

static void *bracket_run(void *arg)
{
    bracket_job *j = arg;
    const double *x = j->x;
    const double lo = j->lo, hi = j->hi;
    double *buf = j->buf;
    const size_t cap = j->cap;             /* > 0 */
    size_t nv = 0, below = 0, in = 0;
    size_t i = j->i0;
    while (i < j->i1 && isnan(x[i])) i++;
    double mn = i < j->i1 ? x[i] : 0, mx = mn;
    /* (branch-free but for NaN: half the values fall below the bracket,
     * in no order a branch predictor could follow) */
    for (; i < j->i1; i++) {
        const double v = x[i];
        if (isnan(v)) continue;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
        nv++;
        below += v < lo;
        /* every value is stored at the next free place, which moves on
         * when it is in the bracket (past cap: counted, the bracket fails) */
        buf[in < cap ? in : cap - 1] = v;
        in += (size_t) ((v >= lo) & (v <= hi));
    }
    j->nvalid = nv;
    j->below = below;
    j->in = in;
    j->min = mn;
    j->max = mx;
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The value of 0-based rank r among v[0 .. m-1] (reordered): quickselect
 * with a middle pivot, sorting what is left after too many rounds. */
static double select_rank(double *v, size_t m, size_t r)
{
    size_t a = 0, b = m;                 /* the rank lies in v[a .. b-1] */
    for (int round = 0; b - a > 16 && round < 64; round++) {
        const double piv = v[a + (b - a) / 2];
        size_t lt = a, gt = b, i = a;    /* [a, lt) < piv, [lt, i) == piv, [gt, b) > piv */
        while (i < gt) {
            const double t = v[i];
            if (t < piv) { v[i] = v[lt]; v[lt++] = t; i++; }
            else if (t > piv) { v[i] = v[--gt]; v[gt] = t; }
            else i++;
        }
        if (r < lt) b = lt;
        else if (r >= gt) a = gt;
        else return piv;
    }
    qsort(v + a, b - a, sizeof *v, cmp_double);
    return v[r];
}

/* 1 with the summary set, 0 where the bracket missed the median (or the
 * data are too few for it), -1 out of memory. */
static int summary_by_bracket(const double *x, size_t n, int nthreads, size_t *nvalid,
                              double *min, double *median, double *max)
{
    if (n < BRACKET_MIN_ROWS)
        return 0;
    double *smp = malloc(SAMPLE_N * sizeof *smp);
    if (!smp) return -1;
    size_t ns = 0;
    for (size_t i = 0; i < SAMPLE_N; i++) {
        const double v = x[(size_t) ((double) i * (double) n / SAMPLE_N)];
        if (!isnan(v)) smp[ns++] = v;
    }
    if (ns < 4 * SAMPLE_MARGIN) {
        free(smp);
        return 0;
    }
    const size_t mid = median_rank(ns) - 1;
    const size_t rlo = mid > SAMPLE_MARGIN ? mid - SAMPLE_MARGIN : 0;
    const size_t rhi = mid + SAMPLE_MARGIN < ns ? mid + SAMPLE_MARGIN : ns - 1;
    const double lo = select_rank(smp, ns, rlo);
    const double hi = select_rank(smp, ns, rhi);
    free(smp);

    const int nj = jobs_for(n, nthreads);
    bracket_job *jobs = calloc((size_t) nj, sizeof *jobs);
    const double share = (double) (rhi - rlo + 1) / (double) ns;   /* expected in bracket */
    size_t total = 0;
    for (int t = 0; t < nj; t++) {
        const size_t i0 = n * (size_t) t / (size_t) nj, i1 = n * (size_t) (t + 1) / (size_t) nj;
        const size_t cap = (size_t) (2.0 * share * (double) (i1 - i0)) + 4096;
        if (jobs) jobs[t] = (bracket_job) {x, i0, i1, lo, hi, 0, 0, 0, cap, 0, 0, NULL};
        total += cap;
    }
    double *buf = jobs ? malloc(total * sizeof *buf) : NULL;
    if (!buf) {
        free(jobs);
        return -1;
    }
    for (size_t t = 0, at = 0; t < (size_t) nj; t++) {
        jobs[t].buf = buf + at;
        at += jobs[t].cap;
    }
    gg_run_jobs(nj, bracket_run, jobs, sizeof *jobs);

    size_t m = 0, below = 0, in = 0;
    int overflow = 0;
    double mn = 0, mx = 0;
    for (int t = 0; t < nj; t++) {     /* in row order: the first min and max */
        below += jobs[t].below;
        in += jobs[t].in;
        overflow |= jobs[t].in > jobs[t].cap;
        if (!jobs[t].nvalid) continue;
        if (m == 0 || jobs[t].min < mn) mn = jobs[t].min;
        if (m == 0 || jobs[t].max > mx) mx = jobs[t].max;
        m += jobs[t].nvalid;
    }
    int done = 0;
    const size_t rank = m > 0 ? median_rank(m) - 1 : 0;
    if (m > 0 && !overflow && rank >= below && rank < below + in) {
        size_t at = 0;                 /* the gathered values, packed */
        for (int t = 0; t < nj; t++) {
            memmove(buf + at, jobs[t].buf, jobs[t].in * sizeof *buf);
            at += jobs[t].in;
        }
        *nvalid = m;
        *min = mn;
        *max = mx;
        *median = select_rank(buf, in, rank - below);
        done = 1;
    }
    free(buf);
    free(jobs);
    return done;
}

int gg_column_summary(const double *x, size_t n, int nthreads, size_t *nvalid,
                      double *min, double *median, double *max)
{
    const int b = summary_by_bracket(x, n, nthreads, nvalid, min, median, max);
    if (b != 0)
        return b > 0 ? 0 : -1;
    const int nj = jobs_for(n, nthreads);
    select_job *jobs = calloc((size_t) nj, sizeof *jobs);
    size_t *hist = malloc((size_t) nj * RADIX_BINS * sizeof *hist);
    if (!jobs || !hist) {
        free(jobs);
        free(hist);
        return -1;
    }
    for (int t = 0; t < nj; t++)
        jobs[t] = (select_job) {x, n * (size_t) t / (size_t) nj,
                                n * (size_t) (t + 1) / (size_t) nj, 0, 0,
                                hist + (size_t) t * RADIX_BINS, 0, 0, 0, NULL};
    gg_run_jobs(nj, select_run, jobs, sizeof *jobs);

    size_t m = 0;
    double lo = 0, hi = 0;
    for (int t = 0; t < nj; t++) {     /* in row order: the first min and max */
        if (!jobs[t].nvalid) continue;
        if (m == 0 || jobs[t].min < lo) lo = jobs[t].min;
        if (m == 0 || jobs[t].max > hi) hi = jobs[t].max;
        m += jobs[t].nvalid;
    }
    *nvalid = m;
    if (m > 0) {
        size_t rank = median_rank(m) - 1;
        uint64_t prefix = choose_bin(jobs, nj, &rank);
        /* the chosen bin's keys, when they are few (for data spread over
         * more than a few bins), gathered in one more pass and selected
         * among alone; else every remaining pass reads all rows */
        size_t in_bin = 0;
        for (int t = 0; t < nj; t++) in_bin += jobs[t].hist[prefix];
        uint64_t *keys = in_bin <= n / 8 ? malloc((in_bin > 0 ? in_bin : 1) * sizeof *keys)
                                         : NULL;
        if (keys != NULL) {
            size_t at = 0;
            for (int t = 0; t < nj; t++) {
                jobs[t].pass = -1;
                jobs[t].prefix = prefix;
                jobs[t].keys = keys + at;
                at += jobs[t].hist[prefix];
            }
            gg_run_jobs(nj, select_run, jobs, sizeof *jobs);
            prefix = select_keys(keys, in_bin, prefix, rank, hist);
            free(keys);
        } else {
            for (int pass = 1; pass < RADIX_PASSES; pass++) {
                for (int t = 0; t < nj; t++) {
                    jobs[t].pass = pass;
                    jobs[t].prefix = prefix;
                }
                gg_run_jobs(nj, select_run, jobs, sizeof *jobs);
                prefix = (prefix << RADIX_BITS) | choose_bin(jobs, nj, &rank);
            }
        }
        *min = lo;
        *median = value_of(prefix);
        *max = hi;
    }
    free(hist);
    free(jobs);
    return 0;
}

/* ---- first extremes ------------------------------------------------------ */

typedef struct extremes_job {
    const double *x;
    size_t i0, i1;
    int count_only;            /* the NaNs alone */
    size_t nnan, imin, imax;   /* imin = imax = i1: no value */
} extremes_job;

static void *extremes_run(void *arg)
{
    extremes_job *j = arg;
    const double *x = j->x;
    size_t nnan = 0, imin = j->i1, imax = j->i1;
    if (j->count_only) {
        for (size_t i = j->i0; i < j->i1; i++)
            nnan += x[i] != x[i];
    } else {
        double lo = 0, hi = 0;
        for (size_t i = j->i0; i < j->i1; i++) {
            const double v = x[i];
            if (isnan(v)) {
                nnan++;
                continue;
            }
            if (imin == j->i1) {
                lo = hi = v;
                imin = imax = i;
            }
            if (v < lo) {
                lo = v;
                imin = i;
            }
            if (v > hi) {
                hi = v;
                imax = i;
            }
        }
    }
    j->nnan = nnan;
    j->imin = imin;
    j->imax = imax;
    return NULL;
}

static int extremes(const double *x, size_t n, int nthreads, int count_only, size_t *nnan,
                    size_t *imin, size_t *imax)
{
    const int nj = jobs_for(n, nthreads);
    extremes_job *jobs = malloc((size_t) nj * sizeof *jobs);
    if (!jobs) return -1;
    for (int t = 0; t < nj; t++)
        jobs[t] = (extremes_job) {x, n * (size_t) t / (size_t) nj,
                                  n * (size_t) (t + 1) / (size_t) nj, count_only, 0, 0, 0};
    gg_run_jobs(nj, extremes_run, jobs, sizeof *jobs);
    size_t na = 0, lo = n, hi = n;
    for (int t = 0; t < nj; t++) {     /* in row order: strict comparisons keep the first */
        na += jobs[t].nnan;
        if (count_only || jobs[t].imin == jobs[t].i1) continue;
        if (lo == n || x[jobs[t].imin] < x[lo]) lo = jobs[t].imin;
        if (hi == n || x[jobs[t].imax] > x[hi]) hi = jobs[t].imax;
    }
    free(jobs);
    *nnan = na;
    if (imin) *imin = lo;
    if (imax) *imax = hi;
    return 0;
}

int gg_column_extremes(const double *x, size_t n, int nthreads, size_t *nnan,
                       size_t *imin, size_t *imax)
{
    return extremes(x, n, nthreads, 0, nnan, imin, imax);
}

int gg_count_nan(const double *x, size_t n, int nthreads, size_t *nnan)
{
    return extremes(x, n, nthreads, 1, nnan, NULL, NULL);
}

/* ---- var(x): gg_column_variance ------------------------------------------ */

#define VAR_BLOCK 65536

typedef struct var_job {
    const double *x;
    size_t n, b0, b1;          /* blocks b0 .. b1-1 of VAR_BLOCK rows */
    int pass;                  /* 0: x; 1: x - m (long double); 2: (x - m)^2 (double) */
    long double m;
    long double *part;         /* one sum per block */
} var_job;

static void *var_run(void *arg)
{
    var_job *j = arg;
    const double md = (double) j->m;
    for (size_t b = j->b0; b < j->b1; b++) {
        const size_t i0 = b * VAR_BLOCK, i1 = i0 + VAR_BLOCK < j->n ? i0 + VAR_BLOCK : j->n;
        long double sum = 0;
        if (j->pass == 0)
            for (size_t i = i0; i < i1; i++) sum += j->x[i];
        else if (j->pass == 1)
            for (size_t i = i0; i < i1; i++) sum += j->x[i] - j->m;
        else
            for (size_t i = i0; i < i1; i++) {
                const double d = j->x[i] - md;
                sum += d * d;
            }
        j->part[b] = sum;
    }
    return NULL;
}

static long double var_pass(var_job *jobs, int nj, int pass, long double m, size_t nb)
{
    for (int t = 0; t < nj; t++) {
        jobs[t].pass = pass;
        jobs[t].m = m;
    }
    gg_run_jobs(nj, var_run, jobs, sizeof *jobs);
    long double sum = 0;
    for (size_t b = 0; b < nb; b++) sum += jobs[0].part[b];
    return sum;
}

double gg_column_variance(const double *x, size_t n, int nthreads)
{
    const size_t nb = (n + VAR_BLOCK - 1) / VAR_BLOCK;
    var_job jobs[MAX_STACK_JOBS];
    long double *part = malloc((nb ? nb : 1) * sizeof *part);
    if (!part || n < 2) {
        free(part);
        return NAN;
    }
    int nj = jobs_for(n, nthreads);
    if (nj > MAX_STACK_JOBS) nj = MAX_STACK_JOBS;
    if ((size_t) nj > nb) nj = (int) nb;
    for (int t = 0; t < nj; t++)
        jobs[t] = (var_job) {x, n, nb * (size_t) t / (size_t) nj,
                             nb * (size_t) (t + 1) / (size_t) nj, 0, 0, part};
    /* R's MEAN: the sum over n, then the mean of the residuals added */
    long double m = var_pass(jobs, nj, 0, 0, nb) / (long double) n;
    if (isfinite((double) m))
        m += var_pass(jobs, nj, 1, m, nb) / (long double) n;
    /* cov.c's: the deviations from the mean as a double, their squares in
     * double, summed in long double */
    const long double ss = var_pass(jobs, nj, 2, (long double) (double) m, nb);
    free(part);
    return (double) (ss / (long double) (n - 1));
}

/* ---- rep(v, n): gg_fill --------------------------------------------------- */

typedef struct fill_job {
    double *x, v;
    size_t i0, i1;
} fill_job;

static void *fill_run(void *arg)
{
    fill_job *j = arg;
    for (size_t i = j->i0; i < j->i1; i++)
        j->x[i] = j->v;
    return NULL;
}

void gg_fill(double *x, size_t n, double v, int nthreads)
{
    fill_job jobs[MAX_STACK_JOBS];
    int nj = jobs_for(n, nthreads);
    if (nj > MAX_STACK_JOBS) nj = MAX_STACK_JOBS;
    for (int t = 0; t < nj; t++)
        jobs[t] = (fill_job) {x, v, n * (size_t) t / (size_t) nj,
                              n * (size_t) (t + 1) / (size_t) nj};
    gg_run_jobs(nj, fill_run, jobs, sizeof *jobs);
}

/* ---- match(v, x) for a few values in many rows: gg_first_rows ------------- */

/* The values in an open-addressed hash table (a quarter full at most) of
 * their indices + 1, keyed by their bits (0 and -0 as one key, as == has
 * them): one probe or two per row rather than a binary search. */
static uint64_t first_key(double x)
{
    if (x == 0) x = 0.0;                       /* -0 == 0 */
    uint64_t k;
    memcpy(&k, &x, sizeof k);
    k ^= k >> 33;                              /* (MurmurHash3's finalizer) */
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

typedef struct first_job {
    const double *xd;
    const int *xi;
    const double *v;
    const size_t *slot;       /* the hash table: index + 1, 0 empty */
    size_t mask;
    size_t m, i0, i1;
    size_t *first;            /* m, this job's rows only; n where none */
    size_t none;
} first_job;

static void *first_run(void *arg)
{
    first_job *j = arg;
    for (size_t c = 0; c < j->m; c++) j->first[c] = j->none;
    size_t left = j->m;        /* values without a row in this job yet */
    for (size_t i = j->i0; i < j->i1 && left > 0; i++) {
        if (!j->xd && j->xi[i] == INT_MIN) continue;    /* R's NA_integer_: no match */
        const double xv = j->xd ? j->xd[i] : (double) j->xi[i];
        if (xv != xv) continue;                          /* NaN: no match */
        for (size_t h = first_key(xv) & j->mask; j->slot[h] != 0; h = (h + 1) & j->mask) {
            const size_t c = j->slot[h] - 1;
            if (j->v[c] == xv) {
                if (j->first[c] == j->none) {
                    j->first[c] = i;
                    left--;
                }
                break;
            }
        }
    }
    return NULL;
}

int gg_first_rows(const double *xd, const int *xi, size_t n, const double *v, size_t m,
                  int nthreads, size_t *first)
{
    const int nj = jobs_for(n, nthreads);
    size_t size = 16;
    while (size < 4 * m) size *= 2;
    first_job *jobs = malloc((size_t) nj * sizeof *jobs);
    size_t *part = malloc((size_t) nj * (m ? m : 1) * sizeof *part);
    size_t *slot = calloc(size, sizeof *slot);
    if (!jobs || !part || !slot) {
        free(jobs);
        free(part);
        free(slot);
        return -1;
    }
    for (size_t c = 0; c < m; c++) {           /* (distinct values: no key twice) */
        size_t h = first_key(v[c]) & (size - 1);
        while (slot[h] != 0) h = (h + 1) & (size - 1);
        slot[h] = c + 1;
    }
    for (int t = 0; t < nj; t++)
        jobs[t] = (first_job) {xd, xi, v, slot, size - 1, m, n * (size_t) t / (size_t) nj,
                               n * (size_t) (t + 1) / (size_t) nj, part + (size_t) t * m, n};
    gg_run_jobs(nj, first_run, jobs, sizeof *jobs);
    for (size_t c = 0; c < m; c++) {           /* the earliest job's row */
        first[c] = n;
        for (int t = 0; t < nj && first[c] == n; t++)
            first[c] = jobs[t].first[c];
    }
    free(jobs);
    free(part);
    free(slot);
    return 0;
}

/* ---- the response, weights and offset: gg_check_rows --------------------- */

typedef struct check_job {
    const double *y, *w, *offset;
    size_t i0, i1;
    gg_row_checks r;
    int y_seen;                /* some finite y in the range */
} check_job;

static void *check_run(void *arg)
{
    check_job *j = arg;
    gg_row_checks r = {0, 0, 0, 0, 0, 0, 0, 0};
    int seen = 0;
    if (j->offset)
        for (size_t i = j->i0; i < j->i1; i++) {
            const double oi = j->offset[i];
            if (oi != 0) r.o_nonzero = 1;      /* NaN too */
            if (!isfinite(oi)) r.o_bad = 1;
        }
    for (size_t i = j->i0; i < j->i1; i++) {
        const double wi = j->w != NULL ? j->w[i] : 1.0, yi = j->y[i];
        if (!isfinite(wi) || wi < 0) r.w_bad = 1;
        else if (wi > 0) r.w_positive = 1;
        if (wi != 1) r.w_not_one = 1;
        if (!isfinite(yi)) {
            r.y_bad = 1;
            continue;
        }
        if (!seen || yi < r.y_min) r.y_min = yi;
        if (!seen || yi > r.y_max) r.y_max = yi;
        seen = 1;
    }
    j->r = r;
    j->y_seen = seen;
    return NULL;
}

int gg_check_rows(const double *y, const double *w, const double *offset, size_t n,
                  int nthreads, gg_row_checks *out)
{
    const int nj = jobs_for(n, nthreads);
    check_job *jobs = malloc((size_t) nj * sizeof *jobs);
    if (!jobs) return -1;
    for (int t = 0; t < nj; t++)
        jobs[t] = (check_job) {y, w, offset, n * (size_t) t / (size_t) nj,
                               n * (size_t) (t + 1) / (size_t) nj, {0, 0, 0, 0, 0, 0, 0, 0}, 0};
    gg_run_jobs(nj, check_run, jobs, sizeof *jobs);
    gg_row_checks r = {0, 0, 0, 0, 0, 0, NAN, NAN};
    int seen = 0;
    for (int t = 0; t < nj; t++) {
        r.w_bad |= jobs[t].r.w_bad;
        r.w_positive |= jobs[t].r.w_positive;
        r.w_not_one |= jobs[t].r.w_not_one;
        r.y_bad |= jobs[t].r.y_bad;
        r.o_nonzero |= jobs[t].r.o_nonzero;
        r.o_bad |= jobs[t].r.o_bad;
        if (!jobs[t].y_seen) continue;
        if (!seen || jobs[t].r.y_min < r.y_min) r.y_min = jobs[t].r.y_min;
        if (!seen || jobs[t].r.y_max > r.y_max) r.y_max = jobs[t].r.y_max;
        seen = 1;
    }
    free(jobs);
    *out = r;
    return 0;
}

/* ---- a smooth's raw basis: gg_basis_stats ------------------------------ */

#define BS_BLOCK 8192
#define BS_JOBS 32

typedef struct bstats_job {
    const double *X, *scale;
    size_t n, b0, b1;
    int k, pass;            /* 0: sums of squares; 1: scaled sums and row maxima */
    double *part;           /* nblocks x (k + 2) */
} bstats_job;

static void *bstats_run(void *arg)
{
    const bstats_job *j = arg;
    const int k = j->k;
    for (size_t b = j->b0; b < j->b1; b++) {
        const size_t i0 = b * BS_BLOCK, i1 = i0 + BS_BLOCK < j->n ? i0 + BS_BLOCK : j->n;
        double *t = j->part + b * (size_t) (k + 2);
        for (int c = 0; c < k; c++) {
            const double *x = j->X + (size_t) c * j->n;
            long double s = 0;
            if (j->pass == 0)
                for (size_t i = i0; i < i1; i++) {
                    const double q = x[i] * x[i];   /* (R's X^2, then its sum) */
                    s += q;
                }
            else
                for (size_t i = i0; i < i1; i++) s += x[i] / j->scale[c];
            t[c] = (double) s;
        }
        if (j->pass == 1) {
            double best = -1;
            size_t at = i0;
            for (size_t i = i0; i < i1; i++) {
                double r = 0;
                for (int c = 0; c < k; c++) r += fabs(j->X[(size_t) c * j->n + i] / j->scale[c]);
                if (r > best || 0) {
                    best = r;
                    at = i;
                }
            }
            t[k] = best;
            t[k + 1] = (double) at;
        }
    }
    return NULL;
}

int gg_basis_stats(const double *X, size_t n, int k, int rms_scale,
                   double *scale, double *mean, double *rowmax, size_t *imax)
{
    const size_t nb = (n + BS_BLOCK - 1) / BS_BLOCK;
    double *part = malloc((nb ? nb : 1) * (size_t) (k + 2) * sizeof(double));
    if (part == NULL) return -1;
    bstats_job jobs[BS_JOBS];
    const int nj = nb < BS_JOBS ? (int) (nb ? nb : 1) : BS_JOBS;
    for (int c = 0; c < k; c++) scale[c] = 1.0;
    for (int pass = rms_scale ? 0 : 1; pass <= 1; pass++) {
        for (int q = 0; q < nj; q++)
            jobs[q] = (bstats_job) {X, scale, n, nb * q / nj, nb * (q + 1) / nj, k, pass, part};
        gg_run_jobs(nj, bstats_run, jobs, sizeof *jobs);
        for (int c = 0; c < k; c++) {
            long double s = 0;
            for (size_t b = 0; b < nb; b++) s += part[b * (size_t) (k + 2) + c];
            if (pass == 0)
                scale[c] = sqrt((double) (s / (long double) n));
            else
                mean[c] = (double) (s / (long double) n);
        }
    }
    *rowmax = -1;
    *imax = 0;
    for (size_t b = 0; b < nb; b++) {
        const double *t = part + b * (size_t) (k + 2);
        if (t[k] > *rowmax) {
            *rowmax = t[k];
            *imax = (size_t) t[k + 1];
        }
    }
    free(part);
    return 0;
}
