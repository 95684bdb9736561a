/* family_gamlss.c -- the products over the rows of mgcv's location-scale
 * families (gaulss, gammals, gumbls, gevlss, twlss, ziplss, shash) and
 * multinom (family_gamlss.h): the gradient, the Hessian's blocks
 * X_i' diag(l2_ij) X_j, their derivatives in the log smoothing parameters
 * and the traces REML's Hessian needs -- mgcv's gamlss.gH() for a model
 * matrix, given the rows' derivatives (the family's own code).
 *
 * The block products and the linear predictors' derivatives run over
 * threads (gamlss_blocks.c, matprod_cpu.c) or, where R's BLAS is the
 * faster here (gram_cpu.c's choice for X's shape), as the BLAS products R
 * makes for mgcv's expressions; the rows' quadratic forms of the traces
 * over threads.  The numbers are mgcv's to
 * rounding (sums in other orders).  No R API: the glue is gamlss_r.c. */
#define USE_FC_LEN_T
#include "family_gamlss.h"
#include "gamlss_blocks.h"
#include "gram_cpu.h"
#include "matprod_cpu.h"

#include <R_ext/BLAS.h>
#include <stdlib.h>
#include <string.h>

#ifndef FCONE
#define FCONE
#endif

/* dst (n x nc) = X's columns cols[0..nc) */
static void gather(const gg_ls_rows *r, int k, double *dst)
{
    for (int j = 0; j < r->ncol[k]; j++)
        memcpy(dst + (size_t) j * r->n, r->X + (size_t) r->cols[k][j] * r->n,
               r->n * sizeof(double));
}

/* A (na x nb) = crossprod(X_a, w * X_b) by the BLAS, as R's crossprod() */
static void blas_block(const gg_ls_rows *r, int a, int b, const double *w, double *A,
                       double *bufa, double *bufb)
{
    const size_t n = r->n;
    int na = r->ncol[a], nb = r->ncol[b], nn = (int) n;
    const double one = 1.0, zero = 0.0;
    if (na == 0 || nb == 0) return;
    gather(r, a, bufa);
    for (int k = 0; k < nb; k++) {
        const double *x = r->X + (size_t) r->cols[b][k] * n;
        double *o = bufb + (size_t) k * n;
        for (size_t i = 0; i < n; i++) o[i] = w[i] * x[i];
    }
    F77_CALL(dgemm)("T", "N", &na, &nb, &nn, &one, bufa, &nn, bufb, &nn, &zero, A, &na
                    FCONE FCONE);
}

/* block (a, b) of the p x p H += A (na x nb), and its transpose when a != b */
static void add_block(const gg_ls_rows *r, int a, int b, const double *A, double *H)
{
    const int p = r->p;
    for (int l = 0; l < r->ncol[b]; l++)
        for (int k = 0; k < r->ncol[a]; k++)
            H[r->cols[a][k] + (size_t) r->cols[b][l] * p] += A[k + (size_t) l * r->ncol[a]];
    if (a != b)
        for (int l = 0; l < r->ncol[b]; l++)
            for (int k = 0; k < r->ncol[a]; k++)
                H[r->cols[b][l] + (size_t) r->cols[a][k] * p] += A[k + (size_t) l * r->ncol[a]];
}

/* out (n K x q): block k = X_k %*% d[cols_k, ], by gamgpu's kernel over
 * threads (own), else as R's matprod */
static int predictor_products(const gg_ls_rows *r, const double *d, int q, double *out,
                              double *bufx, double *bufd, int own, gg_status *st)
{
    const size_t n = r->n;
    const int p = r->p, K = r->K;
    const double one = 1.0, zero = 0.0;
    const int ione = 1;
    int nn = (int) n, nK = (int) n * K;
    for (int k = 0; k < K; k++) {
        int nc = r->ncol[k];
        double *o = out + (size_t) k * n;
        if (nc == 0) {
            for (int c = 0; c < q; c++) memset(o + (size_t) c * n * K, 0, n * sizeof(double));
            continue;
        }
        gather(r, k, bufx);
        for (int c = 0; c < q; c++)
            for (int j = 0; j < nc; j++) bufd[j + (size_t) c * nc] = d[r->cols[k][j] + (size_t) c * p];
        if (own) {
            int rc = gg_matprod(bufx, n, n, nc, bufd, q, o, (size_t) n * K, st);
            if (rc != 0) return rc;
        } else if (q == 1) {
            F77_CALL(dgemv)("N", &nn, &nc, &one, bufx, &nn, bufd, &ione, &zero, o, &ione FCONE);
        } else {
            /* (into a contiguous n x q block, then to out's rows of block k) */
            double *tmp = bufx + (size_t) nc * n;
            F77_CALL(dgemm)("N", "N", &nn, &q, &nc, &one, bufx, &nn, bufd, &nc, &zero, tmp, &nn
                            FCONE FCONE);
            for (int c = 0; c < q; c++)
                memcpy(o + (size_t) c * nK, tmp + (size_t) c * n, n * sizeof(double));
        }
    }
    return 0;
}

/* v (n) = sum_c l3[, i3(a, b, c)] * e[block c, col], in mgcv's order of
 * additions */
static void third_rows(const gg_ls_rows *r, int a, int b, const double *e, size_t ecol,
                       double *v)
{
    const size_t n = r->n;
    const int K = r->K;
    memset(v, 0, n * sizeof(double));
    for (int c = 0; c < K; c++) {
        const double *l3 = r->l3 + (size_t) r->i3[a + K * (b + K * c)] * n,
                     *de = e + (size_t) c * n + ecol * n * K;
        for (size_t i = 0; i < n; i++) v[i] = v[i] + l3[i] * de[i];
    }
}

/* the products of the block pairs a <= b, weights w + (pair's index) n, into
 * a p x p matrix H (added): by gamgpu's kernels over threads (own), else by
 * the BLAS (bufa, bufb: n x the widest predictor each) */
static int pair_products(const gg_ls_rows *r, const double *w, double *A, gg_ls_prod *pr,
                         double *H, int own, double *bufa, double *bufb, gg_status *st)
{
    const int K = r->K;
    int t = 0;
    size_t off = 0;
    for (int a = 0; a < K; a++)
        for (int b = a; b < K; b++, t++) {
            pr[t] = (gg_ls_prod) {.a = a, .b = b, .w = w + (size_t) t * r->n, .A = A + off};
            off += (size_t) r->ncol[a] * r->ncol[b];
        }
    if (own) {
        int rc = gg_ls_block_products(r, t, pr, st);
        if (rc != 0) return rc;
    } else {
        for (int u = 0; u < t; u++) blas_block(r, pr[u].a, pr[u].b, pr[u].w, pr[u].A, bufa, bufb);
    }
    for (int u = 0; u < t; u++) add_block(r, pr[u].a, pr[u].b, pr[u].A, H);
    return 0;
}

#define NEED(ptr) do { if ((ptr) == NULL) { rc = gg_fail(st, "gamgpu_host_oom", \
    "out of memory for the location-scale family's products (n = %zu, p = %d)", n, p); \
    goto done; } } while (0)

int gg_ls_gh(const gg_ls_rows *r, int deriv, const double *d1b, int M, const double *d2b,
             const double *Hm, double *lb, double *lbb, double *d1H, double *trd2H,
             gg_status *st)
{
    const size_t n = r->n;
    const int p = r->p, K = r->K, npair = K * (K + 1) / 2;
    if (n > 2147483647u)
        return gg_fail(st, "gamgpu_bad_input",
                       "the location-scale products take fewer than 2^31 rows (as R's BLAS calls)");
    int rc = 0, maxc = 1;
    for (int k = 0; k < K; k++) if (r->ncol[k] > maxc) maxc = r->ncol[k];
    const int nhh = M * (M + 1) / 2, qmax = nhh > M ? nhh : (M > 0 ? M : 1);
    size_t asize = 0;
    for (int a = 0; a < K; a++)
        for (int b = a; b < K; b++) asize += (size_t) r->ncol[a] * r->ncol[b];
    const int own = gg_cpu_gram_prefers_own(r->X, n, p, st);
    if (own < 0) return -1;
    double *bufa = malloc(n * (size_t) (maxc + qmax) * sizeof(double));
    double *bufb = own ? NULL : malloc(n * (size_t) maxc * sizeof(double));
    double *A = malloc((asize > 0 ? asize : 1) * sizeof(double));
    double *w = malloc(n * (size_t) (K * K > npair ? K * K : npair) * sizeof(double));
    double *bufd = malloc((size_t) maxc * qmax * sizeof(double));
    gg_ls_prod *pr = malloc((size_t) npair * sizeof(gg_ls_prod));
    double *d1eta = NULL, *d2eta = NULL, *q = NULL;
    int *owner = NULL;
    NEED(bufa); NEED(A); NEED(w); NEED(bufd); NEED(pr);
    if (!own) NEED(bufb);

    /* lb[jj_k] += colSums(l1[, k] * X[, jj_k]) */
    memset(lb, 0, (size_t) p * sizeof(double));
    memset(lbb, 0, (size_t) p * p * sizeof(double));
    for (int k = 0; k < K; k++)
        for (int j = 0; j < r->ncol[k]; j++) {
            const double *x = r->X + (size_t) r->cols[k][j] * n, *l = r->l1 + (size_t) k * n;
            long double s = 0.0;
            for (size_t i = 0; i < n; i++) s += (double) (l[i] * x[i]);
            lb[r->cols[k][j]] = lb[r->cols[k][j]] + (double) s;
        }
    {
        int t = 0;
        for (int a = 0; a < K; a++)
            for (int b = a; b < K; b++, t++)
                memcpy(w + (size_t) t * n, r->l2 + (size_t) r->i2[a + K * b] * n,
                       n * sizeof(double));
    }
    if ((rc = pair_products(r, w, A, pr, lbb, own, bufa, bufb, st)) != 0) goto done;
    if (deriv < 2) goto done;

    d1eta = malloc(n * (size_t) K * (M > 0 ? M : 1) * sizeof(double));
    NEED(d1eta);
    if (M > 0 && (rc = predictor_products(r, d1b, M, d1eta, bufa, bufd, own, st)) != 0)
        goto done;
    memset(d1H, 0, (size_t) p * p * M * sizeof(double));
    for (int m = 0; m < M; m++) {
        int t = 0;
        for (int a = 0; a < K; a++)
            for (int b = a; b < K; b++, t++) third_rows(r, a, b, d1eta, (size_t) m,
                                                         w + (size_t) t * n);
        if ((rc = pair_products(r, w, A, pr, d1H + (size_t) m * p * p, own, bufa, bufb,
                                st)) != 0)
            goto done;
    }
    if (deriv < 3) goto done;

    /* trHid2H[kk] = tr(Hm d2H_kk) = sum over rows and predictor pairs (a, b)
     * of v_ab q_ab: v_ab the rows' second derivative of l_ab in the
     * smoothing parameters (m, l), q_ab the rows' quadratic forms in Hm
     * (mgcv's sum(Xe * VX), VX's block of rows b and predictor a's columns
     * v_ab X_a, a column in several predictors taken as the last one's) */
    d2eta = malloc(n * (size_t) K * (nhh > 0 ? nhh : 1) * sizeof(double));
    owner = malloc((size_t) p * sizeof(int));
    q = malloc(n * (size_t) K * K * sizeof(double));
    NEED(d2eta); NEED(owner); NEED(q);
    if (nhh > 0 && (rc = predictor_products(r, d2b, nhh, d2eta, bufa, bufd, own, st)) != 0)
        goto done;
    for (int c = 0; c < p; c++) owner[c] = -1;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < r->ncol[k]; j++) owner[r->cols[k][j]] = k;
    if ((rc = gg_ls_quad_rows(r, owner, Hm, q, st)) != 0) goto done;
    const size_t nK = n * (size_t) K;
    int kk = 0;
    for (int m = 0; m < M; m++)
        for (int l = m; l < M; l++, kk++) {
            long double t = 0.0;
            for (int a = 0; a < K; a++)
                for (int b = 0; b < K; b++) {
                    double *vab = w;
                    memset(vab, 0, n * sizeof(double));
                    for (int c = 0; c < K; c++) {
                        const double *l3 = r->l3 + (size_t) r->i3[a + K * (b + K * c)] * n,
                                     *e2 = d2eta + (size_t) c * n + (size_t) kk * nK,
                                     *e1 = d1eta + (size_t) c * n + (size_t) m * nK;
                        for (size_t i = 0; i < n; i++) vab[i] = vab[i] + e2[i] * l3[i];
                        for (int s = 0; s < K; s++) {
                            const double *l4 = r->l4 +
                                (size_t) r->i4[a + K * (b + K * (c + K * s))] * n,
                                *f1 = d1eta + (size_t) s * n + (size_t) l * nK;
                            for (size_t i = 0; i < n; i++)
                                vab[i] = vab[i] + e1[i] * f1[i] * l4[i];
                        }
                    }
                    const double *qab = q + (size_t) (a + K * b) * n;
                    for (size_t i = 0; i < n; i++) t += vab[i] * qab[i];
                }
            trd2H[kk] = (double) t;
        }

done:
    free(bufa); free(bufb); free(A); free(w); free(bufd); free(pr); free(d1eta); free(d2eta); free(q);
    free(owner);
    return rc;
}
