/* engine_linalg.c -- small dense helpers for the p x p work of the engine:
 * a clock, symmetric eigen-decomposition and a pivoted, Jacobi-scaled
 * Cholesky factorization with solve/inverse (LAPACK through R's headers). */
#define USE_FC_LEN_T
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#ifndef FCONE
#define FCONE
#endif

#include "engine_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double gg_now(void)
{
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) == 0) return 0.0;
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int gg_eigen_sym(int n, const double *A, double *values, double *vectors,
                 gg_status *st)
{
    if (n == 0) return 0;
    double *a = malloc((size_t) n * n * sizeof(double));
    double *w = malloc((size_t) n * sizeof(double));
    double *z = malloc((size_t) n * n * sizeof(double));
    int *isuppz = malloc((size_t) 2 * n * sizeof(int));
    int rc = 0;
    if (!a || !w || !z || !isuppz) {
        rc = gg_fail(st, "gamgpu_host_oom", "out of memory (eigen, n = %d)", n);
        goto done;
    }
    memcpy(a, A, (size_t) n * n * sizeof(double));
    {
        const char *jobz = vectors ? "V" : "N";
        double vl = 0, vu = 0, abstol = 0;
        int il = 0, iu = 0, m = 0, info = 0, lwork = -1, liwork = -1, iwq = 0;
        double wq = 0;
        F77_CALL(dsyevr)(jobz, "A", "L", &n, a, &n, &vl, &vu, &il, &iu, &abstol, &m, w,
                         z, &n, isuppz, &wq, &lwork, &iwq, &liwork, &info
                         FCONE FCONE FCONE);
        lwork = (int) wq;
        liwork = iwq;
        double *work = malloc((size_t) lwork * sizeof(double));
        int *iwork = malloc((size_t) liwork * sizeof(int));
        if (!work || !iwork) {
            free(work); free(iwork);
            rc = gg_fail(st, "gamgpu_host_oom", "out of memory (eigen work)");
            goto done;
        }
        F77_CALL(dsyevr)(jobz, "A", "L", &n, a, &n, &vl, &vu, &il, &iu, &abstol, &m, w,
                         z, &n, isuppz, work, &lwork, iwork, &liwork, &info
                         FCONE FCONE FCONE);
        free(work); free(iwork);
        if (info != 0) {
            rc = gg_fail(st, "gamgpu_numerical", "eigen decomposition failed (info %d)", info);
            goto done;
        }
    }
    /* LAPACK gives increasing order; return decreasing as R's eigen() */
    for (int i = 0; i < n; i++) {
        values[i] = w[n - 1 - i];
        if (vectors)
            memcpy(vectors + (size_t) i * n, z + (size_t) (n - 1 - i) * n,
                   (size_t) n * sizeof(double));
    }
done:
    free(a); free(w); free(z); free(isuppz);
    return rc;
}

int gg_pchol_alloc(gg_pchol *f, int n, gg_status *st)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    size_t nn = (size_t) (n > 0 ? n : 1);
    f->R = malloc(nn * nn * sizeof(double));
    f->piv = malloc(nn * sizeof(int));
    f->ipiv = malloc(nn * sizeof(int));
    f->d = malloc(nn * sizeof(double));
    f->work = malloc(2 * nn * sizeof(double));
    f->Ri = malloc(nn * nn * sizeof(double));
    if (!f->R || !f->piv || !f->ipiv || !f->d || !f->work || !f->Ri)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (Cholesky, n = %d)", n);
    return 0;
}

void gg_pchol_free(gg_pchol *f)
{
    free(f->R); free(f->piv); free(f->ipiv); free(f->d); free(f->work); free(f->Ri);
    memset(f, 0, sizeof *f);
}

int gg_pchol_factor(gg_pchol *f, const double *H, gg_status *st)
{
    const int n = f->n;
    f->rank = 0;
    f->ldet = 0;
    if (n == 0) return 0;
    for (int i = 0; i < n; i++) {
        double h = H[i + (size_t) i * n];
        if (!isfinite(h))
            return gg_fail(st, "gamgpu_numerical",
                           "non-finite entry in the penalized normal equations");
        f->d[i] = h > 0 ? sqrt(h) : 1.0;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            f->R[i + (size_t) j * n] = H[i + (size_t) j * n] / (f->d[i] * f->d[j]);
    int rank = 0, info = 0;
    double tol = -1.0;
    F77_CALL(dpstrf)("U", &n, f->R, &n, f->ipiv, &rank, &tol, f->work, &info FCONE);
    if (info < 0)
        return gg_fail(st, "gamgpu_numerical", "pivoted Cholesky failed (info %d)", info);
    for (int i = 0; i < n; i++) f->piv[i] = f->ipiv[i] - 1;
    /* drop trailing pivots that are negligible relative to the first */
    while (rank > 0 &&
           !(f->R[(rank - 1) + (size_t) (rank - 1) * n] >
             f->R[0] * pow(DBL_EPSILON, 0.9) * 1e6))
        rank--;
    f->rank = rank;
    double ld = 0;
    for (int i = 0; i < rank; i++)
        ld += log(f->R[i + (size_t) i * n]) + log(f->d[f->piv[i]]);
    f->ldet = 2 * ld;
    return 0;
}

void gg_pchol_solve(const gg_pchol *f, const double *b, double *x)
{
    const int n = f->n, r = f->rank, one = 1;
    double *u = f->work;        /* n doubles of scratch */
    for (int i = 0; i < r; i++) u[i] = b[f->piv[i]] / f->d[f->piv[i]];
    if (r > 0) {
        F77_CALL(dtrsv)("U", "T", "N", &r, f->R, &n, u, &one FCONE FCONE FCONE);
        F77_CALL(dtrsv)("U", "N", "N", &r, f->R, &n, u, &one FCONE FCONE FCONE);
    }
    for (int i = 0; i < n; i++) x[i] = 0.0;
    for (int i = 0; i < r; i++) x[f->piv[i]] = u[i] / f->d[f->piv[i]];
}

/* Columns c0..c1-1 of the inverse of the pivoted, scaled factor (the
 * upper triangle of f->Ri, leading dimension rank) into Hinv, unpivoted,
 * unscaled and mirrored. */
static void scatter_inverse_cols(const gg_pchol *f, int c0, int c1, double *Hinv)
{
    const int n = f->n, r = f->rank;
    for (int j = c0; j < c1; j++) {
        const int b = f->piv[j];
        const double db = f->d[b];
        const double *x = f->Ri + (size_t) j * r;
        for (int i = 0; i <= j; i++) {
            const int a = f->piv[i];
            const double v = x[i] / (f->d[a] * db);
            Hinv[a + (size_t) b * n] = v;
            Hinv[b + (size_t) a * n] = v;
        }
    }
}

void gg_pchol_inverse(const gg_pchol *f, double *Hinv)
{
    const int n = f->n, r = f->rank;
    memset(Hinv, 0, (size_t) n * n * sizeof(double));
    if (r == 0) return;
    /* (R'R)^-1 of the leading r x r factor: dpotri (triangular inverse, then
     * its product with its transpose, both on triangles only) */
    double *Pr = f->Ri;
    for (int j = 0; j < r; j++)
        memcpy(Pr + (size_t) j * r, f->R + (size_t) j * n, (size_t) (j + 1) * sizeof(double));
    int info = 0;
    F77_CALL(dpotri)("U", &r, Pr, &r, &info FCONE);
    /* info > 0 cannot happen: the kept pivots are positive */
    scatter_inverse_cols(f, 0, r, Hinv);
}

void gg_pchol_inverse_cols(const gg_pchol *f, int c0, int c1, double *Hinv)
{
    const int n = f->n, r = f->rank;
    if (c1 > r) c1 = r;
    if (c0 >= c1) return;
    const int w = c1 - c0, t = r - c0;
    const double one = 1.0;
    /* columns c0..c1-1 of (R'R)^-1: R'Y = E has Y = 0 above row c0, so the
     * first solve runs on the trailing triangle only; then R X = Y */
    double *X = f->Ri + (size_t) c0 * r;
    for (int j = 0; j < w; j++) {
        double *x = X + (size_t) j * r;
        memset(x, 0, (size_t) r * sizeof(double));
        x[c0 + j] = 1.0;
    }
    F77_CALL(dtrsm)("L", "U", "T", "N", &t, &w, &one, f->R + c0 + (size_t) c0 * n, &n,
                    X + c0, &r FCONE FCONE FCONE FCONE);
    F77_CALL(dtrsm)("L", "U", "N", "N", &r, &w, &one, f->R, &n, X, &r
                    FCONE FCONE FCONE FCONE);
    scatter_inverse_cols(f, c0, c1, Hinv);
}
