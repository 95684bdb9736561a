/* basis_tprs.c -- the thin plate regression spline basis of mgcv's "tp"
 * and "ts" smooths, row by row in pure C, over POSIX threads.
 *
 * A row is b' UZ, where b holds the radial basis eta(|x - u_j|) against the
 * nXu unique knots u_j followed by the M polynomials spanning the penalty's
 * null space, and UZ is the smooth's stored (nXu + M) x k map.  eta, its
 * constant and the polynomial ordering follow mgcv's definitions exactly
 * (the constant is computed by the same sequence of operations), because
 * UZ was built with them.  This is the costly basis -- n x nXu x k
 * multiply-adds, nXu up to 2000 -- so rows are split over threads; no
 * thread touches R. */
#include "basis.h"
#include "interrupt.h"
#include "threads.h"
#include "basis_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GG_PI 3.141592653589793238462643383280

/* mgcv's constant in front of eta for penalty order m in d dimensions. */
double gg_tprs_eta_constant(int m, int d)
{
    const double root_pi = sqrt(GG_PI);
    double f;
    if (d % 2 == 0) {
        f = (m + 1 + d / 2) % 2 ? -1.0 : 1.0;
        for (int i = 0; i < 2 * m - 1; i++) f /= 2;
        for (int i = 0; i < d / 2; i++) f /= GG_PI;
        for (int i = 2; i < m; i++) f /= i;
        for (int i = 2; i <= m - d / 2; i++) f /= i;
    } else {
        f = root_pi;
        for (int i = 0; i < m - (d - 1) / 2; i++) f /= -0.5 - i;
        for (int i = 0; i < m; i++) f /= 4;
        for (int i = 0; i < (d - 1) / 2; i++) f /= GG_PI;
        f /= root_pi;
        for (int i = 2; i < m; i++) f /= i;
    }
    return f;
}

/* Exponents of the M null-space polynomials (power[l + M * j] for variable
 * j), enumerated in mgcv's order: total degree below m, the first variable
 * varying fastest.  Each row is the previous one stepped on, in place in
 * power itself: no scratch memory, so nothing can fail and every entry is
 * written. */
void gg_tprs_null_space_powers(int *power, int M, int m, int d)
{
    for (int l = 0; l < M; l++) {
        int *e = power + l;                 /* e[M * j]: row l's exponent of j */
        if (l == 0) {
            for (int j = 0; j < d; j++) e[M * j] = 0;
            continue;
        }
        int sum = 0;
        for (int j = 0; j < d; j++) {
            e[M * j] = e[M * j - 1];        /* row l - 1 */
            sum += e[M * j];
        }
        if (sum < m - 1) {
            e[0]++;
        } else {
            sum -= e[0];
            e[0] = 0;
            for (int j = 1; j < d; j++) {
                e[M * j]++;
                sum++;
                if (sum == m) {
                    sum -= e[M * j];
                    e[M * j] = 0;
                } else {
                    break;
                }
            }
        }
    }
}

/* gpT's columns [1, x_1, .., x_d] are tp's null space of order 2 in d
 * variables, and [1] that of order 1. */
void gg_gp_null_space_powers(int *power, int M, int d)
{
    gg_tprs_null_space_powers(power, M, M == 1 ? 1 : 2, d);
}

typedef struct tprs_job {
    const double *x, *shift, *Xu, *UZ;
    size_t n, r0, row0, row1;
    int d, m, M, nXu;
    double eta0;
    const int *power;
    const gg_basis_map *map;
    double *out;
    size_t ldo;
    int failed, interrupted;
} tprs_job;

/* Rows go in blocks of TPRS_BLOCK: b is kept for the block's rows side by
 * side (bt[l * TPRS_BLOCK + r]), and four columns are summed at a time, so
 * that the products are 32 independent chains the CPU overlaps (and
 * vectorizes) instead of one long chain of dependent adds per row and
 * column, and bt is read once per four columns.  Each row's sum is still
 * taken over l in order, as BLAS's reference dgemv takes it, so X is the
 * same to the bit (2.5x faster on one core at nXu = 2000, k = 10). */
#define TPRS_BLOCK 8

static void *tprs_rows(void *arg)
{
    tprs_job *J = arg;
    const int d = J->d, nXu = J->nXu, M = J->M, nb = nXu + M, k = J->map->k;
    double *bt = malloc((size_t) nb * TPRS_BLOCK * sizeof(double));
    double *raw = malloc((size_t) k * TPRS_BLOCK * sizeof(double));
    double *mid = malloc((size_t) k * sizeof(double));
    double *xx = malloc((size_t) d * sizeof(double));
    if (bt == NULL || raw == NULL || mid == NULL || xx == NULL) {
        J->failed = 1;
    } else {
        for (size_t i0 = J->row0; i0 < J->row1; i0 += TPRS_BLOCK) {
            if (gg_interrupt_check()) {
                J->interrupted = 1;
                break;
            }
            const int nr = J->row1 - i0 < TPRS_BLOCK ? (int) (J->row1 - i0) : TPRS_BLOCK;
            for (int r = 0; r < TPRS_BLOCK; r++) {
                double *b = bt + r;            /* b[l] at b[l * TPRS_BLOCK] */
                if (r >= nr) {                 /* a short last block: zeros, not used */
                    for (int l = 0; l < nb; l++) b[(size_t) l * TPRS_BLOCK] = 0.0;
                    continue;
                }
                const size_t i = i0 + (size_t) r;
                for (int j = 0; j < d; j++)
                    xx[j] = J->x[(size_t) j * J->n + i] - J->shift[j];
                for (int u = 0; u < nXu; u++) {
                    double r2 = 0.0;
                    for (int j = 0; j < d; j++) {
                        const double z = J->Xu[u + (size_t) nXu * j] - xx[j];
                        r2 += z * z;
                    }
                    b[(size_t) u * TPRS_BLOCK] = gg_bm_tprs_eta(J->m, d, r2, J->eta0);
                }
                for (int l = 0; l < M; l++) {
                    double v = 1.0;
                    for (int j = 0; j < d; j++)
                        for (int e = 0; e < J->power[l + M * j]; e++) v *= xx[j];
                    b[(size_t) (nXu + l) * TPRS_BLOCK] = v;
                }
            }
            int c = 0;
            for (; c + 3 < k; c += 4) {        /* four columns at a time: a quarter of the reads of bt */
                const double *uz0 = J->UZ + (size_t) c * nb, *uz1 = uz0 + nb, *uz2 = uz1 + nb,
                             *uz3 = uz2 + nb;
                double s0[TPRS_BLOCK], s1[TPRS_BLOCK], s2[TPRS_BLOCK], s3[TPRS_BLOCK];
                for (int r = 0; r < TPRS_BLOCK; r++) s0[r] = s1[r] = s2[r] = s3[r] = 0.0;
                for (int l = 0; l < nb; l++) {
                    const double a0 = uz0[l], a1 = uz1[l], a2 = uz2[l], a3 = uz3[l];
                    const double *bl = bt + (size_t) l * TPRS_BLOCK;
                    for (int r = 0; r < TPRS_BLOCK; r++) {
                        s0[r] += a0 * bl[r];
                        s1[r] += a1 * bl[r];
                        s2[r] += a2 * bl[r];
                        s3[r] += a3 * bl[r];
                    }
                }
                for (int r = 0; r < nr; r++) {
                    raw[(size_t) r * k + c] = s0[r];
                    raw[(size_t) r * k + c + 1] = s1[r];
                    raw[(size_t) r * k + c + 2] = s2[r];
                    raw[(size_t) r * k + c + 3] = s3[r];
                }
            }
            for (; c < k; c++) {
                const double *uz = J->UZ + (size_t) c * nb;
                double s[TPRS_BLOCK];
                for (int r = 0; r < TPRS_BLOCK; r++) s[r] = 0.0;
                for (int l = 0; l < nb; l++) {
                    const double a = uz[l];
                    const double *bl = bt + (size_t) l * TPRS_BLOCK;
                    for (int r = 0; r < TPRS_BLOCK; r++) s[r] += a * bl[r];
                }
                for (int r = 0; r < nr; r++) raw[(size_t) r * k + c] = s[r];
            }
            for (int r = 0; r < nr; r++) {
                const size_t i = i0 + (size_t) r;
                gg_basis_map_row(J->map, raw + (size_t) r * k, i, J->out, J->ldo, i - J->r0, mid);
            }
        }
    }
    free(bt);
    free(raw);
    free(mid);
    free(xx);
    return NULL;
}

int gg_tprs_null_space_dim(int m, int d)
{
    m = gg_tprs_order(m, d);
    int M = 1;
    for (int i = 0; i < d; i++) M *= d + m - 1 - i;
    for (int i = 2; i <= d; i++) M /= i;
    return M;
}

int gg_tprs_order(int m, int d)
{
    if (2 * m <= d && d > 0) {          /* mgcv's default order */
        m = 0;
        while (2 * m < d + 2) m++;
    }
    return m;
}

int gg_tprs_basis(const double *x, size_t n, int d, const double *shift, int m, int M,
                  const double *Xu, int nXu, const double *UZ, const gg_basis_map *map,
                  size_t r0, size_t rows, double *out, size_t ldo, int threads)
{
    m = gg_tprs_order(m, d);
    int *power = malloc((size_t) M * (size_t) d * sizeof(int));
    if (power == NULL)
        return -1;
    gg_tprs_null_space_powers(power, M, m, d);
    const double eta0 = gg_tprs_eta_constant(m, d);

    if (threads < 1) threads = 1;
    if ((size_t) threads > rows) threads = rows > 0 ? (int) rows : 1;
    tprs_job *jobs = calloc((size_t) threads, sizeof *jobs);
    if (jobs == NULL) {
        free(power);
        return -1;
    }
    for (int t = 0; t < threads; t++) {
        tprs_job *J = &jobs[t];
        J->x = x; J->shift = shift; J->Xu = Xu; J->UZ = UZ; J->n = n; J->r0 = r0;
        J->row0 = r0 + rows * (size_t) t / (size_t) threads;
        J->row1 = r0 + rows * (size_t) (t + 1) / (size_t) threads;
        J->d = d; J->m = m; J->M = M; J->nXu = nXu; J->eta0 = eta0; J->power = power;
        J->map = map; J->out = out; J->ldo = ldo;
    }
    gg_run_jobs(threads, tprs_rows, jobs, sizeof *jobs);
    int failed = 0, interrupted = 0;
    for (int t = 0; t < threads; t++) {
        failed |= jobs[t].failed;
        interrupted |= jobs[t].interrupted;
    }
    free(power);
    free(jobs);
    return failed ? -1 : interrupted ? -2 : 0;
}

/* ---- one variable: the basis as piecewise polynomials -------------------
 * With x = a + t for an interval's anchor a (basis_math.h), knot u on the
 * left of the interval gives eta0 (x - u)^D and one on the right
 * -eta0 (x - u)^D (D odd), and (x - u)^D = sum_p C(D, p) t^p (a - u)^(D-p):
 * so column c's coefficient of t^p is eta0 C(D, p) sum_l s_l UZ[l, c]
 * (a - u_l)^(D-p), plus the null space's sum_q UZ[K + q, c] C(q, p) a^(q-p).
 * Every coefficient is a direct sum over the knots (no recurrence from
 * interval to interval to accumulate rounding): (K + 1) K k (D + 1)
 * multiply-adds per smooth, split over intervals. */
int gg_tp1_degree(int m)
{
    return 2 * gg_tprs_order(m, 1) - 1;
}

typedef struct tp1_job {
    const double *UZt, *UZ, *knots, *Xu;
    const int *rank;
    int K, k, D, M, j0, j1;
    double eta0;
    double *coef;
    int failed, interrupted;
} tp1_job;

#define TP1_MAX_D 31    /* m up to 16: far beyond any penalty order used */

/* One knot's terms of an interval's sums: column c's np sums S[c np + p]
 * take sgn UZ[l, c] (a - u_l)^(D - p) (rp[p]).  Inlined, so that a
 * constant np gives loops of a known trip count (the same products and
 * sums, element by element). */
static inline void tp1_add_knot(double *restrict S, const double *restrict row, double sgn,
                                const double *restrict rp, int k, int np)
{
    for (int c = 0; c < k; c++) {
        const double u = sgn * row[c];
        double *restrict s = S + (size_t) c * np;
        for (int p = 0; p < np; p++) s[p] += u * rp[p];
    }
}

/* Intervals j0 .. j1 - 1.  UZt is UZ's first K rows by row (row l's k
 * entries together), so that the sum over the knots reads memory in order
 * and keeps each interval's k (D + 1) sums in cache; every sum still runs
 * over l = 0 .. K - 1 in turn with the same products, so the table is the
 * same bit for bit as a column-by-column loop would make it. */
static void *tp1_rows(void *arg)
{
    tp1_job *J = arg;
    const int K = J->K, k = J->k, D = J->D, M = J->M, nb = K + J->M, np = D + 1;
    const double *restrict UZt = J->UZt, *restrict UZ = J->UZ, *restrict Xu = J->Xu;
    const int *restrict rank = J->rank;
    double binom[TP1_MAX_D + 1][TP1_MAX_D + 1];
    for (int a = 0; a <= D; a++) {
        binom[a][0] = binom[a][a] = 1.0;
        for (int b = 1; b < a; b++) binom[a][b] = binom[a - 1][b - 1] + binom[a - 1][b];
    }
    double *restrict S = malloc((size_t) k * np * sizeof(double));
    if (S == NULL) {
        J->failed = 1;
        return NULL;
    }
    for (int j = J->j0; j < J->j1; j++) {
        if (gg_interrupt_check()) {
            J->interrupted = 1;
            break;
        }
        const double a = J->knots[j > 0 ? j - 1 : 0];
        for (size_t i = 0; i < (size_t) k * np; i++) S[i] = 0.0;
        for (int l = 0; l < K; l++) {
            double pw[TP1_MAX_D + 1];           /* pw[q] = (a - u_l)^q */
            double rp[TP1_MAX_D + 1];           /* rp[p] = pw[D - p] */
            const double delta = a - Xu[l];
            pw[0] = 1.0;
            for (int q = 1; q <= D; q++) pw[q] = pw[q - 1] * delta;
            for (int p = 0; p <= D; p++) rp[p] = pw[D - p];
            const double *restrict row = UZt + (size_t) l * k;
            const double sgn = rank[l] < j ? 1.0 : -1.0;
            /* (m = 2, the default, with its trip count known to the
             * compiler: four sums a column, vectorized) */
            if (D == 3) tp1_add_knot(S, row, sgn, rp, k, 4);
            else tp1_add_knot(S, row, sgn, rp, k, np);
        }
        double *out = J->coef + (size_t) j * k * np;
        for (int c = 0; c < k; c++) {
            for (int p = 0; p <= D; p++) {
                double v = J->eta0 * binom[D][p] * S[(size_t) c * np + p];
                for (int q = p; q < M; q++) {   /* the null space: x^q = (a + t)^q */
                    double ap = 1.0;
                    for (int e = 0; e < q - p; e++) ap *= a;
                    v += UZ[(size_t) c * nb + K + q] * binom[q][p] * ap;
                }
                out[(size_t) c * np + p] = v;
            }
        }
    }
    free(S);
    return NULL;
}

typedef struct tp1_knot {
    double u;
    int l;
} tp1_knot;

static int tp1_by_knot(const void *a, const void *b)
{
    const tp1_knot *x = a, *y = b;
    return x->u < y->u ? -1 : x->u > y->u ? 1 : (x->l > y->l) - (x->l < y->l);
}

int gg_tp1_table(const double *Xu, int K, const double *UZ, int k, int m, int M,
                 double *knots, double *coef, int threads)
{
    const int order = gg_tprs_order(m, 1), D = 2 * order - 1;
    if (D > TP1_MAX_D || M > D + 1 || K < 1)
        return -1;
    tp1_knot *sorted = malloc((size_t) K * sizeof *sorted);
    int *rank = malloc((size_t) K * sizeof(int));
    if (sorted == NULL || rank == NULL) {
        free(sorted);
        free(rank);
        return -1;
    }
    for (int l = 0; l < K; l++) {
        sorted[l].u = Xu[l];
        sorted[l].l = l;
    }
    qsort(sorted, (size_t) K, sizeof *sorted, tp1_by_knot);
    for (int r = 0; r < K; r++) {
        rank[sorted[r].l] = r;
        knots[r] = sorted[r].u;
    }
    free(sorted);
    if (threads < 1) threads = 1;
    if (threads > K + 1) threads = K + 1;
    tp1_job *jobs = calloc((size_t) threads, sizeof *jobs);
    double *UZt = malloc((size_t) K * k * sizeof(double));
    if (jobs == NULL || UZt == NULL) {
        free(jobs);
        free(UZt);
        free(rank);
        return -1;
    }
    for (int c = 0; c < k; c++)
        for (int l = 0; l < K; l++)
            UZt[(size_t) l * k + c] = UZ[(size_t) c * (K + M) + l];
    const double eta0 = gg_tprs_eta_constant(order, 1);
    for (int t = 0; t < threads; t++) {
        tp1_job *J = &jobs[t];
        J->Xu = Xu; J->UZ = UZ; J->UZt = UZt; J->knots = knots; J->rank = rank;
        J->K = K; J->k = k; J->D = D; J->M = M; J->eta0 = eta0; J->coef = coef;
        J->j0 = (int) ((long long) (K + 1) * t / threads);
        J->j1 = (int) ((long long) (K + 1) * (t + 1) / threads);
    }
    gg_run_jobs(threads, tp1_rows, jobs, sizeof *jobs);
    int failed = 0, interrupted = 0;
    for (int t = 0; t < threads; t++) {
        failed |= jobs[t].failed;
        interrupted |= jobs[t].interrupted;
    }
    free(jobs);
    free(UZt);
    free(rank);
    return failed ? -1 : interrupted ? -2 : 0;
}

void gg_tp1_basis(const double *x, double shift, const double *knots, int K,
                  const double *coef, int D, const gg_basis_map *map, size_t r0, size_t rows,
                  double *out, size_t ldo, double *work)
{
    double *raw = work, *mid = work + map->k;
    for (size_t r = 0; r < rows; r++) {
        gg_bm_tp1_row(x[r0 + r] - shift, knots, K, coef, map->k, D, raw, 1);
        gg_basis_map_row(map, raw, r0 + r, out, ldo, r, mid);
    }
}
