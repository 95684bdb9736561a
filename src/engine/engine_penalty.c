/* engine_penalty.c -- the penalty S_lambda = sum_k lambda_k S_k: its block
 * structure, its log pseudo-determinant with derivatives, and mgcv's
 * initial smoothing parameters.
 *
 * Penalties whose non-zero rows overlap are grouped into blocks (as mgcv's
 * Sl.setup does); log|S|_+ is the sum over blocks.  A block with one
 * penalty contributes rank * log(lambda) + const exactly.  A block with
 * several (tensor products, select = TRUE, ...) is projected once onto the
 * range of its total penalty, where sum_k lambda_k U'S_kU is positive
 * definite, and factored with the Jacobi-scaled pivoted Cholesky at every
 * evaluation. */
#define USE_FC_LEN_T
#include <R_ext/BLAS.h>
#ifndef FCONE
#define FCONE
#endif

#include "engine_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double sget(const gg_penalties *in, int k, int i, int j)
{
    return in->S[k][i + (size_t) j * in->dim[k]];
}

void gg_pen_free(gg_pen *pen)
{
    if (pen->blk) {
        for (int b = 0; b < pen->nblk; b++) {
            gg_pblock *B = &pen->blk[b];
            free(B->term);
            free(B->U);
            if (B->Sr) {
                for (int t = 0; t < B->nterm; t++) free(B->Sr[t]);
                free(B->Sr);
            }
            free(B->M); free(B->Minv); free(B->MS);
            gg_pchol_free(&B->ch);
        }
        free(pen->blk);
    }
    free(pen->lo); free(pen->hi);
    memset(pen, 0, sizeof *pen);
}

typedef struct { int k, a, b; } ival;
static int ival_cmp(const void *x, const void *y)
{
    const ival *u = x, *v = y;
    return (u->a > v->a) - (u->a < v->a);
}

int gg_pen_setup(gg_pen *pen, const gg_penalties *in, int p, gg_status *st)
{
    memset(pen, 0, sizeof *pen);
    pen->in = in;
    pen->p = p;
    pen->m = in->m;
    const int m = in->m;
    if (m == 0) return 0;
    pen->lo = malloc((size_t) m * sizeof(int));
    pen->hi = malloc((size_t) m * sizeof(int));
    ival *iv = malloc((size_t) m * sizeof(ival));
    int *grp = malloc((size_t) m * sizeof(int));
    int rc = 0;
    if (!pen->lo || !pen->hi || !iv || !grp) {
        rc = gg_fail(st, "gamgpu_host_oom", "out of memory (penalty setup)");
        goto done;
    }
    for (int k = 0; k < m; k++) {
        int d = in->dim[k], lo = -1, hi = -1;
        if (d <= 0 || in->off[k] < 0 || in->off[k] + d > p) {
            rc = gg_fail(st, "gamgpu_bad_input",
                         "penalty %d does not fit the %d coefficients", k + 1, p);
            goto done;
        }
        for (int i = 0; i < d; i++) {
            int nz = 0;
            for (int j = 0; j < d; j++) {
                double v = sget(in, k, i, j);
                if (!isfinite(v)) {
                    rc = gg_fail(st, "gamgpu_bad_input", "penalty %d has non-finite entries", k + 1);
                    goto done;
                }
                if (v != 0) nz = 1;
            }
            if (nz) { if (lo < 0) lo = i; hi = i; }
        }
        if (lo < 0) {
            rc = gg_fail(st, "gamgpu_bad_input", "penalty %d is zero", k + 1);
            goto done;
        }
        pen->lo[k] = lo;
        pen->hi[k] = hi;
        iv[k].k = k;
        iv[k].a = in->off[k] + lo;
        iv[k].b = in->off[k] + hi;
    }
    /* merge overlapping intervals into blocks */
    qsort(iv, (size_t) m, sizeof(ival), ival_cmp);
    int nb = 0, cur_hi = -1;
    for (int t = 0; t < m; t++) {
        if (t == 0 || iv[t].a > cur_hi) { nb++; cur_hi = iv[t].b; }
        else if (iv[t].b > cur_hi) cur_hi = iv[t].b;
        grp[t] = nb - 1;
    }
    pen->nblk = nb;
    pen->blk = calloc((size_t) nb, sizeof(gg_pblock));
    if (!pen->blk) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory (penalty blocks)"); goto done; }
    for (int b = 0; b < nb; b++) {
        gg_pblock *B = &pen->blk[b];
        int cnt = 0, a = p, z = -1;
        for (int t = 0; t < m; t++)
            if (grp[t] == b) {
                cnt++;
                if (iv[t].a < a) a = iv[t].a;
                if (iv[t].b > z) z = iv[t].b;
            }
        B->start = a;
        B->size = z - a + 1;
        B->nterm = cnt;
        B->term = malloc((size_t) cnt * sizeof(int));
        if (!B->term) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory"); goto done; }
        cnt = 0;
        for (int t = 0; t < m; t++)
            if (grp[t] == b) B->term[cnt++] = iv[t].k;
        /* sort terms by index so derivative order is stable */
        for (int i = 1; i < B->nterm; i++)
            for (int j = i; j > 0 && B->term[j - 1] > B->term[j]; j--) {
                int tmp = B->term[j]; B->term[j] = B->term[j - 1]; B->term[j - 1] = tmp;
            }
        const int s = B->size;
        double *St = calloc((size_t) s * s, sizeof(double));
        double *ev = malloc((size_t) s * sizeof(double));
        double *U = malloc((size_t) s * s * sizeof(double));
        if (!St || !ev || !U) {
            free(St); free(ev); free(U);
            rc = gg_fail(st, "gamgpu_host_oom", "out of memory");
            goto done;
        }
        for (int t = 0; t < B->nterm; t++) {
            int k = B->term[t];
            double nrm = 0;
            for (int j = pen->lo[k]; j <= pen->hi[k]; j++)
                for (int i = pen->lo[k]; i <= pen->hi[k]; i++) {
                    double v = sget(in, k, i, j);
                    nrm += v * v;
                }
            nrm = B->nterm > 1 ? sqrt(nrm) : 1.0;
            int o = in->off[k] - B->start;
            for (int j = pen->lo[k]; j <= pen->hi[k]; j++)
                for (int i = pen->lo[k]; i <= pen->hi[k]; i++)
                    St[(o + i) + (size_t) (o + j) * s] += sget(in, k, i, j) / nrm;
        }
        rc = gg_eigen_sym(s, St, ev, U, st);
        if (rc) { free(St); free(ev); free(U); goto done; }
        int r = 0;
        double thr = pow(DBL_EPSILON, 0.8) * ev[0];
        for (int i = 0; i < s; i++) if (ev[i] > thr) r++;
        B->rank = r;
        pen->total_rank += r;
        if (B->nterm == 1) {
            double ld = 0;
            for (int i = 0; i < r; i++) ld += log(ev[i]);
            B->ldet0 = ld;
            free(U);
        } else {
            B->U = U;        /* first r columns are the range basis */
            B->Sr = calloc((size_t) B->nterm, sizeof(double *));
            B->M = malloc((size_t) r * r * sizeof(double));
            B->Minv = malloc((size_t) r * r * sizeof(double));
            B->MS = malloc((size_t) B->nterm * r * r * sizeof(double));
            double *T = malloc((size_t) s * r * sizeof(double));
            double *Sk = calloc((size_t) s * s, sizeof(double));
            if (!B->Sr || !B->M || !B->Minv || !B->MS || !T || !Sk) {
                free(T); free(Sk); free(St); free(ev);
                rc = gg_fail(st, "gamgpu_host_oom", "out of memory");
                goto done;
            }
            for (int t = 0; t < B->nterm; t++) {
                int k = B->term[t], o = in->off[k] - B->start;
                memset(Sk, 0, (size_t) s * s * sizeof(double));
                for (int j = pen->lo[k]; j <= pen->hi[k]; j++)
                    for (int i = pen->lo[k]; i <= pen->hi[k]; i++)
                        Sk[(o + i) + (size_t) (o + j) * s] = sget(in, k, i, j);
                B->Sr[t] = malloc((size_t) r * r * sizeof(double));
                if (!B->Sr[t]) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory"); break; }
                double one = 1.0, zero = 0.0;
                /* T = Sk U_r ; Sr = U_r' T */
                F77_CALL(dgemm)("N", "N", &s, &r, &s, &one, Sk, &s, U, &s, &zero, T, &s FCONE FCONE);
                F77_CALL(dgemm)("T", "N", &r, &r, &s, &one, U, &s, T, &s, &zero, B->Sr[t], &r FCONE FCONE);
                for (int j = 0; j < r; j++)       /* symmetrize */
                    for (int i = j + 1; i < r; i++) {
                        double v = 0.5 * (B->Sr[t][i + (size_t) j * r] + B->Sr[t][j + (size_t) i * r]);
                        B->Sr[t][i + (size_t) j * r] = B->Sr[t][j + (size_t) i * r] = v;
                    }
            }
            free(T); free(Sk);
            if (rc == 0) rc = gg_pchol_alloc(&B->ch, r, st);
            if (rc) { free(St); free(ev); goto done; }
        }
        free(St); free(ev);
    }
done:
    free(iv); free(grp);
    return rc;
}

int gg_pen_ldet(gg_pen *pen, const double *lam, double *ldet, double *d1,
                double *d2, gg_status *st)
{
    const int m = pen->m;
    double L = 0;
    for (int k = 0; k < m; k++) d1[k] = 0;
    for (int k = 0; k < m * m; k++) d2[k] = 0;
    for (int b = 0; b < pen->nblk; b++) {
        gg_pblock *B = &pen->blk[b];
        if (B->nterm == 1) {
            int k = B->term[0];
            L += B->rank * log(lam[k]) + B->ldet0;
            d1[k] = B->rank;
            continue;
        }
        const int r = B->rank;
        size_t rr = (size_t) r * r;
        memset(B->M, 0, rr * sizeof(double));
        for (int t = 0; t < B->nterm; t++) {
            double l = lam[B->term[t]];
            for (size_t i = 0; i < rr; i++) B->M[i] += l * B->Sr[t][i];
        }
        if (gg_pchol_factor(&B->ch, B->M, st)) return -1;
        if (B->ch.rank < r)
            return gg_fail(st, "gamgpu_numerical",
                           "penalty block starting at coefficient %d lost rank "
                           "(%d of %d) at the current smoothing parameters",
                           B->start + 1, B->ch.rank, r);
        L += B->ch.ldet;
        gg_pchol_inverse(&B->ch, B->Minv);
        double one = 1.0, zero = 0.0;
        for (int t = 0; t < B->nterm; t++) {
            double *MS = B->MS + (size_t) t * rr;
            double l = lam[B->term[t]];
            F77_CALL(dgemm)("N", "N", &r, &r, &r, &l, B->Minv, &r, B->Sr[t], &r, &zero,
                            MS, &r FCONE FCONE);
            double tr = 0;
            for (int i = 0; i < r; i++) tr += MS[i + (size_t) i * r];
            d1[B->term[t]] = tr;
        }
        (void) one;
        for (int t = 0; t < B->nterm; t++)
            for (int u = 0; u <= t; u++) {
                const double *X = B->MS + (size_t) t * rr, *Y = B->MS + (size_t) u * rr;
                double s = 0;
                for (int j = 0; j < r; j++)
                    for (int i = 0; i < r; i++) s += X[i + (size_t) j * r] * Y[j + (size_t) i * r];
                int kt = B->term[t], ku = B->term[u];
                double v = -s + (t == u ? d1[kt] : 0.0);
                d2[kt + (size_t) ku * m] = d2[ku + (size_t) kt * m] = v;
            }
    }
    *ldet = L;
    return 0;
}

int gg_pen_initial_sp(const gg_pen *pen, const double *A, double *sp, gg_status *st)
{
    const gg_penalties *in = pen->in;
    const int m = in->m, p = pen->p;
    if (m == 0) return 0;
    double *ldxx = malloc((size_t) p * sizeof(double));
    double *ldss = calloc((size_t) p, sizeof(double));
    int *pen_ = calloc((size_t) p, sizeof(int));
    int rc = 0;
    if (!ldxx || !ldss || !pen_) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory"); goto done; }
    for (int i = 0; i < p; i++) ldxx[i] = A[i + (size_t) i * p];
    for (int k = 0; k < m; k++) {
        int d = in->dim[k], o = in->off[k];
        double maS = 0;
        for (size_t i = 0; i < (size_t) d * d; i++) if (fabs(in->S[k][i]) > maS) maS = fabs(in->S[k][i]);
        double thresh = pow(DBL_EPSILON, 0.8) * maS, sxx = 0, sss = 0;
        int cnt = 0;
        for (int i = 0; i < d; i++) {
            double rs = 0, cs = 0;
            for (int j = 0; j < d; j++) { rs += fabs(sget(in, k, i, j)); cs += fabs(sget(in, k, j, i)); }
            rs /= d; cs /= d;
            double ds = fabs(sget(in, k, i, i));
            if (rs > thresh && cs > thresh && ds > thresh) {
                sss += sget(in, k, i, i);
                sxx += ldxx[o + i];
                pen_[o + i] = 1;
                cnt++;
            }
        }
        double sizeS = cnt ? sss / cnt : 0, sizeXX = cnt ? sxx / cnt : 0;
        if (!(sizeS > 0)) { rc = gg_fail(st, "gamgpu_bad_input", "penalty %d is not positive semi-definite", k + 1); goto done; }
        sp[k] = sizeXX / sizeS;
        for (int i = 0; i < d; i++) ldss[o + i] += sp[k] * sget(in, k, i, i);
    }
    {
        /* scale all by powers of 10 so that mean(ldxx/(ldxx+ldss)) ~ 0.4 */
        int any = 0;
        for (int i = 0; i < p; i++) if (ldss[i] > 0 && pen_[i] && ldxx[i] > 0) any = 1;
        if (any) {
            double f = 1.0;
            for (int pass = 0; pass < 2; pass++)
                for (int it = 0; it < 400; it++) {
                    double s = 0; int c = 0;
                    for (int i = 0; i < p; i++)
                        if (ldss[i] > 0 && pen_[i] && ldxx[i] > 0) {
                            s += ldxx[i] / (ldxx[i] + ldss[i] * f); c++;
                        }
                    s /= c;
                    if (pass == 0) { if (s > 0.4) f *= 10; else break; }
                    else { if (s < 0.4) f /= 10; else break; }
                }
            for (int k = 0; k < m; k++) sp[k] *= f;
        }
    }
done:
    free(ldxx); free(ldss); free(pen_);
    return rc;
}
