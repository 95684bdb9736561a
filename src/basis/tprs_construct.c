/* tprs_construct.c -- mgcv's thin plate regression spline construction
 * from given knots (the steps of its construct_tprs() when knots are
 * supplied), over threads.
 *
 * gam()'s "tp" set-up on more than max.knots (2000) distinct values draws
 * 2000 knots and then spends its time in one thread: forming E (the radial
 * function between every pair of knots), the Lanczos iteration for E's k
 * eigenvectors of largest magnitude (an O(nk^2) product E q per step), and
 * the basis on its data rows.  gamgpu evaluates the basis on every row
 * itself (basis_tprs.c), so here only the construction runs: E formed over
 * threads, each Lanczos product split over a pool of threads, and the rest
 * as mgcv takes it -- the same start vector, full re-orthogonalization
 * twice a step, convergence test (its test of the smallest eigenvalues
 * included) and Ritz vectors; T'U's null space by the same Householder
 * reflections; UZ and the penalty Z'diag(v)Z as mgcv lays them out.  With
 * one thread E q is BLAS's dsymv, as mgcv's, and the result mgcv's to the
 * bit; with more, to rounding (tests/testthat/test-basis-tprs-construct.R).
 * The columns' scaling to unit root mean square over the rows is the
 * caller's (R/tprs_setup.R), over every row. */
#include "basis.h"
#include "basis_math.h"
#include "threads.h"

#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef FCONE
#define FCONE
#endif

/* ---- E: the radial function between every pair of knots ---------------- */

typedef struct e_job {
    const double *xu;
    double *E;
    int nk, d, m, c0, c1;
    double eta0;
} e_job;

/* Columns c0 .. c1-1 of E, whole (E[i, j] and E[j, i] are the same
 * numbers: (a - b)^2 == (b - a)^2), so no two jobs write one place. */
static void *e_columns(void *arg)
{
    e_job *J = arg;
    const int nk = J->nk, d = J->d;
    for (int i = J->c0; i < J->c1; i++) {
        double *col = J->E + (size_t) i * nk;
        for (int j = 0; j < nk; j++) {
            double r2 = 0.0;
            for (int l = 0; l < d; l++) {
                const double z = J->xu[i + (size_t) nk * l] - J->xu[j + (size_t) nk * l];
                r2 += z * z;
            }
            col[j] = j == i ? 0.0 : gg_bm_tprs_eta(J->m, d, r2, J->eta0);
        }
    }
    return NULL;
}

/* ---- the Lanczos product E q over a pool -------------------------------- */

typedef struct mv_job {
    const double *A, *q;
    double *z;
    int n, c0, c1;
} mv_job;

/* z[i] = E[, i]' q for columns c0 .. c1-1 (E symmetric: column i is row i),
 * four columns at a time: four sums side by side, each in its column's
 * order (the numbers of one sum at a time, in a quarter of its latency). */
static void *mv_columns(void *arg)
{
    mv_job *J = arg;
    const int n = J->n;
    const double *q = J->q;
    int i = J->c0;
    for (; i + 4 <= J->c1; i += 4) {
        const double *a0 = J->A + (size_t) i * n, *a1 = a0 + n, *a2 = a1 + n, *a3 = a2 + n;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int j = 0; j < n; j++) {
            s0 += a0[j] * q[j];
            s1 += a1[j] * q[j];
            s2 += a2[j] * q[j];
            s3 += a3[j] * q[j];
        }
        J->z[i] = s0;
        J->z[i + 1] = s1;
        J->z[i + 2] = s2;
        J->z[i + 3] = s3;
    }
    for (; i < J->c1; i++) {
        const double *a = J->A + (size_t) i * n;
        double s = 0.0;
        for (int j = 0; j < n; j++) s += a[j] * q[j];
        J->z[i] = s;
    }
    return NULL;
}

typedef struct lanczos_ws {
    gg_pool *pool;
    mv_job *jobs;
    int nt;
} lanczos_ws;

static void e_times(const lanczos_ws *W, const double *A, int n, const double *q, double *z)
{
    if (W->nt < 2) {                       /* mgcv's product, to the bit */
        const char uplo = 'U';
        const double one = 1.0, zero = 0.0;
        const int inc = 1;
        F77_CALL(dsymv)(&uplo, &n, &one, A, &n, q, &inc, &zero, z, &inc FCONE);
        return;
    }
    for (int t = 0; t < W->nt; t++) {
        W->jobs[t].q = q;
        W->jobs[t].z = z;
    }
    gg_pool_run(W->pool, W->nt, mv_columns, W->jobs, sizeof *W->jobs);
}

/* Eigenvalues (descending) and eigenvectors (columns of v, n x n) of the
 * symmetric tridiagonal matrix of diagonal d and off-diagonal g, by LAPACK's
 * dstedc as mgcv's mgcv_trisymeig(); 0, or -1 when out of memory or LAPACK
 * failed. */
static int trisym_eigen(double *d, double *g, double *v, int n)
{
    const char compz = 'I';
    int lwork = -1, liwork = -1, info = 0, iwork1 = 0;
    double work1 = 0.0;
    F77_CALL(dstedc)(&compz, &n, d, g, v, &n, &work1, &lwork, &iwork1, &liwork, &info FCONE);
    if (info != 0) return -1;
    lwork = (int) floor(work1);
    if (work1 - lwork > 0.5) lwork++;
    liwork = iwork1;
    double *work = malloc((size_t) (lwork > 0 ? lwork : 1) * sizeof(double));
    int *iwork = malloc((size_t) (liwork > 0 ? liwork : 1) * sizeof(int));
    if (work == NULL || iwork == NULL) {
        free(work);
        free(iwork);
        return -1;
    }
    F77_CALL(dstedc)(&compz, &n, d, g, v, &n, work, &lwork, iwork, &liwork, &info FCONE);
    free(work);
    free(iwork);
    if (info != 0) return -1;
    for (int i = 0; i < n / 2; i++) {      /* descending, vectors with them */
        const double x = d[i];
        d[i] = d[n - i - 1];
        d[n - i - 1] = x;
        double *a = v + (size_t) n * i, *b = v + (size_t) n * (n - i - 1);
        for (int j = 0; j < n; j++) {
            const double y = a[j];
            a[j] = b[j];
            b[j] = y;
        }
    }
    return 0;
}

/* The k eigenvalues of E (n x n) of largest magnitude into D and their
 * eigenvectors into U (n x k, zero on entry), as mgcv's Rlanczos() with
 * lm < 0.  0, -1 out of memory, -3 LAPACK failed. */
static int lanczos(const double *A, int n, int k, double tol, const lanczos_ws *W, double *U,
                   double *D)
{
    int m = k, lm = 0, rc = 0, vlength = 0, j;
    int f_check = m / 2;
    if (f_check < 10) f_check = 10;
    int kk = n / 10;
    if (kk < 1) kk = 1;
    if (kk < f_check) f_check = kk;

    double **q = calloc((size_t) n + 1, sizeof(double *));
    double *a = calloc((size_t) n, sizeof(double)), *b = calloc((size_t) n, sizeof(double));
    double *g = calloc((size_t) n, sizeof(double)), *d = calloc((size_t) n, sizeof(double));
    double *z = calloc((size_t) n, sizeof(double)), *err = calloc((size_t) n, sizeof(double));
    double *v = NULL;
    if (q == NULL || a == NULL || b == NULL || g == NULL || d == NULL || z == NULL ||
        err == NULL || (q[0] = calloc((size_t) n, sizeof(double))) == NULL) {
        rc = -1;
        goto done;
    }
    {   /* mgcv's "somewhat randomized" start vector */
        unsigned long jran = 1, ia = 106, ic = 1283, im = 6075;
        double bt = 0.0, *q0 = q[0];
        for (int i = 0; i < n; i++) {
            jran = (jran * ia + ic) % im;
            q0[i] = (double) jran / (double) im - 0.5;
            bt += q0[i] * q0[i];
        }
        bt = sqrt(bt);
        for (int i = 0; i < n; i++) q0[i] /= bt;
    }
    for (int i = 0; i < n; i++) err[i] = 1e300;
    const int inc = 1;
    for (j = 0; j < n; j++) {
        e_times(W, A, n, q[j], z);
        double xx = 0.0;
        for (int i = 0; i < n; i++) xx += q[j][i] * z[i];
        a[j] = xx;
        if (j == 0) {
            for (int i = 0; i < n; i++) z[i] -= xx * q[j][i];
        } else {
            const double yy = b[j - 1];
            for (int i = 0; i < n; i++) z[i] -= xx * q[j][i] + yy * q[j - 1][i];
            for (int pass = 0; pass < 2; pass++)      /* full re-orthogonalization, twice */
                for (int i = 0; i <= j; i++) {
                    double c = -F77_CALL(ddot)(&n, z, &inc, q[i], &inc);
                    F77_CALL(daxpy)(&n, &c, q[i], &inc, z, &inc);
                }
        }
        xx = 0.0;
        for (int i = 0; i < n; i++) xx += z[i] * z[i];
        b[j] = sqrt(xx);
        if (j < n - 1) {
            if ((q[j + 1] = malloc((size_t) n * sizeof(double))) == NULL) {
                rc = -1;
                goto done;
            }
            for (int i = 0; i < n; i++) q[j + 1][i] = z[i] / b[j];
        }
        if ((j >= m + lm && j % f_check == 0) || j == n - 1) {
            for (int i = 0; i < j + 1; i++) d[i] = a[i];
            for (int i = 0; i < j; i++) g[i] = b[i];
            free(v);
            vlength = j + 1;
            if ((v = calloc((size_t) vlength * vlength, sizeof(double))) == NULL) {
                rc = -1;
                goto done;
            }
            if (trisym_eigen(d, g, v, j + 1)) {
                rc = -3;
                goto done;
            }
            double normTj = fabs(d[0]);
            if (fabs(d[j]) > normTj) normTj = fabs(d[j]);
            for (int l = 0; l < j + 1; l++) err[l] = fabs(b[j] * v[(size_t) l * vlength + j]);
            if (j >= m + lm) {
                const double max_err = normTj * tol;
                /* mgcv's test: the m largest in magnitude from either end
                 * (the smallest end's bound read at err[ni], as mgcv reads it) */
                int pi = 0, ni = 0, converged = 1;
                while (pi + ni < m) {
                    if (fabs(d[pi]) >= fabs(d[j - ni])) {
                        if (err[pi] > max_err) { converged = 0; break; }
                        pi++;
                    } else {
                        if (err[ni] > max_err) { converged = 0; break; }
                        ni++;
                    }
                }
                if (converged) {
                    m = pi;
                    lm = ni;
                    j++;
                    break;
                }
            }
        }
    }
    /* Ritz vectors: the m largest, then the lm most negative */
    for (int c = 0; c < m + lm; c++) {
        const int e = c < m ? c : j - (lm + m - c);
        D[c] = d[e];
        double *u = U + (size_t) c * n;
        for (int l = 0; l < j; l++) {
            const double x = v[l + (size_t) e * vlength];
            const double *ql = q[l];
            for (int i = 0; i < n; i++) u[i] += ql[i] * x;
        }
    }
done:
    if (q != NULL)
        for (int i = 0; i <= n; i++) free(q[i]);
    free(q);
    free(a);
    free(b);
    free(g);
    free(d);
    free(z);
    free(err);
    free(v);
    return rc;
}

/* ---- T'U's null space, as mgcv's QT() and HQmult() ---------------------- */

/* Householder vectors (rows of H, r x c, row-major) such that A (r x c,
 * row-major, overwritten) times Q = H_0 H_1 .. is [0, T]: mgcv's QT() with
 * fullQ = 0. */
static void householder_qt(double *A, int r, int c, double *H)
{
    for (int i = 0; i < r; i++) {
        double *p = A + (size_t) i * c;
        const int w = c - i;
        double mx = 0.0;
        for (int j = 0; j < w; j++)
            if (fabs(p[j]) > mx) mx = fabs(p[j]);
        if (mx != 0.0)
            for (int j = 0; j < w; j++) p[j] /= mx;
        double lsq = 0.0;
        for (int j = 0; j < w; j++) lsq += p[j] * p[j];
        lsq = sqrt(lsq);
        if (p[w - 1] < 0.0) lsq = -lsq;
        p[w - 1] += lsq;
        const double gm = lsq != 0.0 ? 1 / (lsq * p[w - 1]) : 0.0;
        lsq *= mx;
        for (int jr = i + 1; jr < r; jr++) {
            double *p1 = A + (size_t) jr * c, x = 0.0;
            for (int l = 0; l < w; l++) x += p[l] * p1[l];
            x *= gm;
            for (int l = 0; l < w; l++) p1[l] += -x * p[l];
        }
        const double sg = sqrt(gm);
        double *h = H + (size_t) i * c;
        for (int j = 0; j < w; j++) h[j] = p[j] * sg;
        for (int j = w; j < c; j++) h[j] = 0.0;
        p[w - 1] = -lsq;
        for (int j = 0; j < w - 1; j++) p[j] = 0.0;
    }
}

/* C (rows x cols, row-major) <- C H_0 H_1 .. H_{r-1}: HQmult(C, H, 0, 0). */
static void post_householder(double *C, int rows, int cols, const double *H, int r, double *work)
{
    for (int k = 0; k < r; k++) {
        const double *u = H + (size_t) k * cols;
        for (int i = 0; i < rows; i++) {
            double s = 0.0;
            for (int j = 0; j < cols; j++) s += C[(size_t) i * cols + j] * u[j];
            work[i] = s;
        }
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) C[(size_t) i * cols + j] -= work[i] * u[j];
    }
}

/* C (rows x cols, row-major) <- .. H_1 H_0 C: HQmult(C, H, 1, 1). */
static void pre_householder_t(double *C, int rows, int cols, const double *H, int r, double *work)
{
    for (int k = 0; k < r; k++) {
        const double *u = H + (size_t) k * rows;
        for (int i = 0; i < cols; i++) {
            double s = 0.0;
            for (int j = 0; j < rows; j++) s += C[(size_t) j * cols + i] * u[j];
            work[i] = s;
        }
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) C[(size_t) i * cols + j] -= work[j] * u[i];
    }
}

/* ---- the construction ---------------------------------------------------- */

typedef struct tc_mem {
    double *E, *T, *U, *D, *TU, *H, *uz, *s, *work;
    int *power;
    e_job *ejobs;
    mv_job *mvjobs;
} tc_mem;

static void tc_free(tc_mem *W)
{
    free(W->E); free(W->T); free(W->U); free(W->D); free(W->TU); free(W->H);
    free(W->uz); free(W->s); free(W->work); free(W->power); free(W->ejobs); free(W->mvjobs);
}

int gg_tprs_construct(const double *xu, int nk, int d, int m, int k, int threads, double *UZ,
                      double *S, double *ev)
{
    const int M = gg_tprs_null_space_dim(m, d);
    m = gg_tprs_order(m, d);
    if (k <= M || k >= nk) return -4;
    if (threads < 1) threads = 1;
    if (threads > nk) threads = nk;
    tc_mem W;
    memset(&W, 0, sizeof W);
    const size_t nn = (size_t) nk * nk;
    W.E = malloc(nn * sizeof(double));
    W.T = malloc((size_t) nk * M * sizeof(double));
    W.U = calloc((size_t) nk * k, sizeof(double));
    W.D = malloc((size_t) k * sizeof(double));
    W.TU = malloc((size_t) M * k * sizeof(double));
    W.H = malloc((size_t) M * k * sizeof(double));
    W.uz = malloc((size_t) nk * k * sizeof(double));
    W.s = calloc((size_t) k * k, sizeof(double));
    W.work = malloc((size_t) (nk > k ? nk : k) * sizeof(double));
    W.power = malloc((size_t) M * d * sizeof(int));
    W.ejobs = calloc((size_t) threads, sizeof(e_job));
    W.mvjobs = calloc((size_t) threads, sizeof(mv_job));
    if (W.E == NULL || W.T == NULL || W.U == NULL || W.D == NULL || W.TU == NULL ||
        W.H == NULL || W.uz == NULL || W.s == NULL || W.work == NULL || W.power == NULL ||
        W.ejobs == NULL || W.mvjobs == NULL) {
        tc_free(&W);
        return -1;
    }
    const double eta0 = gg_tprs_eta_constant(m, d);
    for (int t = 0; t < threads; t++) {
        e_job *J = &W.ejobs[t];
        J->xu = xu; J->E = W.E; J->nk = nk; J->d = d; J->m = m; J->eta0 = eta0;
        J->c0 = (int) ((size_t) nk * t / threads);
        J->c1 = (int) ((size_t) nk * (t + 1) / threads);
        mv_job *V = &W.mvjobs[t];
        V->A = W.E; V->n = nk; V->c0 = J->c0; V->c1 = J->c1;
    }
    gg_run_jobs(threads, e_columns, W.ejobs, sizeof *W.ejobs);
    /* T: the null space's polynomials at the knots (mgcv's tpsT) */
    gg_tprs_null_space_powers(W.power, M, m, d);
    for (int i = 0; i < nk; i++)
        for (int l = 0; l < M; l++) {
            double x = 1.0;
            for (int v = 0; v < d; v++)
                for (int e = 0; e < W.power[l + M * v]; e++) x *= xu[i + (size_t) nk * v];
            W.T[i + (size_t) nk * l] = x;
        }
    lanczos_ws L = {threads > 1 ? gg_pool_new(threads) : NULL, W.mvjobs, threads};
    if (threads > 1 && L.pool == NULL) L.nt = 1;
    const int rc = lanczos(W.E, nk, k, pow(DBL_EPSILON, 0.7), &L, W.U, W.D);
    gg_pool_free(L.pool);
    if (rc) {
        tc_free(&W);
        return rc;
    }
    /* TU = T'U (M x k, row-major), its null space as Householder vectors */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < k; j++) {
            double s = 0.0;
            for (int l = 0; l < nk; l++) s += W.T[l + (size_t) nk * i] * W.U[l + (size_t) nk * j];
            W.TU[(size_t) i * k + j] = s;
        }
    householder_qt(W.TU, M, k, W.H);
    /* UZ: [U Q's first k - M columns, 0; 0, I_M] ((nk + M) x k, column-major) */
    for (int i = 0; i < nk; i++)
        for (int j = 0; j < k; j++) W.uz[(size_t) i * k + j] = W.U[i + (size_t) nk * j];
    post_householder(W.uz, nk, k, W.H, M, W.work);
    const int nr = nk + M;
    memset(UZ, 0, (size_t) nr * k * sizeof(double));
    for (int i = 0; i < nk; i++)
        for (int j = 0; j < k - M; j++) UZ[i + (size_t) nr * j] = W.uz[(size_t) i * k + j];
    for (int i = 0; i < M; i++) UZ[(nr - i - 1) + (size_t) nr * (k - i - 1)] = 1.0;
    /* S = Q' diag(eigenvalues) Q, the null space's rows and columns zero */
    for (int i = 0; i < k; i++) W.s[(size_t) i * k + i] = W.D[i];
    post_householder(W.s, k, k, W.H, M, W.work);
    pre_householder_t(W.s, k, k, W.H, M, W.work);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            S[i + (size_t) k * j] = (i >= k - M || j >= k - M) ? 0.0 : W.s[(size_t) i * k + j];
    if (ev != NULL) memcpy(ev, W.D, (size_t) k * sizeof(double));
    tc_free(&W);
    return 0;
}
