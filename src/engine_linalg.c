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
    if (!f->R || !f->piv || !f->ipiv || !f->d || !f->work)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (Cholesky, n = %d)", n);
    return 0;
}

void gg_pchol_free(gg_pchol *f)
{
    free(f->R); free(f->piv); free(f->ipiv); free(f->d); free(f->work);
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

void gg_pchol_inverse(const gg_pchol *f, double *Hinv)
{
    const int n = f->n, r = f->rank;
    memset(Hinv, 0, (size_t) n * n * sizeof(double));
    if (r == 0) return;
    /* Rinv (r x r upper) in the leading block of a copy */
    double *Ri = malloc((size_t) r * r * sizeof(double));
    double *Pr = malloc((size_t) r * r * sizeof(double));
    if (!Ri || !Pr) { free(Ri); free(Pr); return; }
    for (int j = 0; j < r; j++)
        for (int i = 0; i < r; i++)
            Ri[i + (size_t) j * r] = i <= j ? f->R[i + (size_t) j * n] : 0.0;
    int info = 0;
    F77_CALL(dtrtri)("U", "N", &r, Ri, &r, &info FCONE FCONE);
    /* Pr = Ri Ri' */
    double one = 1.0, zero = 0.0;
    F77_CALL(dsyrk)("U", "N", &r, &r, &one, Ri, &r, &zero, Pr, &r FCONE FCONE);
    for (int j = 0; j < r; j++)
        for (int i = 0; i <= j; i++) {
            int a = f->piv[i], b = f->piv[j];
            double v = Pr[i + (size_t) j * r] / (f->d[a] * f->d[b]);
            Hinv[a + (size_t) b * n] = v;
            Hinv[b + (size_t) a * n] = v;
        }
    free(Ri); free(Pr);
}
