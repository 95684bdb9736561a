/* family_ls.c -- mgcv's location-scale families' ll() over the rows
 * (family_ls.h): each predictor's eta = X_k beta_k + offset_k from the
 * model matrix in place (mgcv's ll() copies X's columns of each predictor
 * on every call), the rows' log likelihood and derivatives in the
 * predictors by inst/include/ls_math.h (the family's expressions and
 * gamlss.etamu()'s chain rule), then gamlss.gH()'s products
 * (family_gamlss.c).  No R API: the glue is gamlss_r.c. */
#include "family_ls.h"
#include "interrupt.h"
#include "ls_math.h"

#include <stdlib.h>
#include <string.h>

#define GG_LS_POLL 65536        /* rows between polls for an interrupt */

int gg_ls_ll(gg_ls_model *m, int deriv, const double *d1b, int M, const double *d2b,
             const double *Hm, double *l, double *l0, double *lb, double *lbb, double *d1H,
             double *trd2H, gg_status *st)
{
    gg_ls_rows *r = &m->rows;
    const size_t n = r->n;
    const int K = r->K;
    if (K < 1 || K > GG_LS_MAXK)
        return gg_fail(st, "gamgpu_bad_input", "the location-scale rows take 1 to %d predictors",
                       GG_LS_MAXK);
    if (deriv != 0 && deriv != 1 && deriv != 3 && deriv != 4)
        return gg_fail(st, "gamgpu_bad_input", "the location-scale ll() takes deriv 0, 1, 3 or 4");
    const int n2 = gg_ls_n2(K), n3 = gg_ls_n3(K), n4 = gg_ls_n4(K);
    int rc = 0;
    double *eta = NULL, *d = NULL;
    if (m->eta == NULL) {
        eta = malloc(n * (size_t) K * sizeof(double) + 1);
        if (eta == NULL) goto oom;
        for (int k = 0; k < K; k++) {
            double *e = eta + (size_t) k * n;
            memset(e, 0, n * sizeof(double));
            /* (X_k beta_k column by column, as the BLAS's dgemv sums it,
             * then the offset) */
            for (int j = 0; j < r->ncol[k]; j++) {
                const int c = r->cols[k][j];
                const double b = m->coef[c], *x = r->X + (size_t) c * n;
                for (size_t i = 0; i < n; i++) e[i] += b * x[i];
            }
            if (m->off[k] != NULL)
                for (size_t i = 0; i < n; i++) e[i] += m->off[k][i];
        }
    }
    const double *E = m->eta != NULL ? m->eta : eta;
    const int nd = deriv >= 1 ? K + n2 + (deriv >= 3 ? n3 : 0) + (deriv >= 4 ? n4 : 0) : 0;
    if (nd > 0) {
        d = malloc(n * (size_t) nd * sizeof(double));
        if (d == NULL) goto oom;
    }
    double *D1 = d, *D2 = d + n * (size_t) K, *D3 = D2 + n * (size_t) n2,
           *D4 = D3 + (deriv >= 3 ? n * (size_t) n3 : 0);
    long double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (i % GG_LS_POLL == 0 && gg_interrupt_check()) {
            free(eta); free(d);
            return gg_interrupt_fail(st, "the location-scale family's rows");
        }
        double e[GG_LS_MAXK], r1[GG_LS_MAXK], r2[GG_LS_MAX2], r3[GG_LS_MAX3], r4[GG_LS_MAX4];
        for (int k = 0; k < K; k++) e[k] = E[i + (size_t) k * n];
        const double v = gg_ls_row(m->fam, K, m->links, m->y[i], e, deriv, r->i2, r->i3, r1,
                                   r2, r3, r4);
        if (l0 != NULL) l0[i] = v;
        sum += v;
        if (deriv < 1) continue;
        for (int k = 0; k < K; k++) D1[i + (size_t) k * n] = r1[k];
        for (int k = 0; k < n2; k++) D2[i + (size_t) k * n] = r2[k];
        if (deriv >= 3) for (int k = 0; k < n3; k++) D3[i + (size_t) k * n] = r3[k];
        if (deriv >= 4) for (int k = 0; k < n4; k++) D4[i + (size_t) k * n] = r4[k];
    }
    *l = (double) sum;
    if (deriv >= 1) {
        r->l1 = D1;
        r->l2 = D2;
        r->l3 = deriv >= 3 ? D3 : NULL;
        r->l4 = deriv >= 4 ? D4 : NULL;
        rc = gg_ls_gh(r, deriv - 1, d1b, M, d2b, Hm, lb, lbb, d1H, trd2H, st);
    }
    free(eta);
    free(d);
    return rc;
oom:
    free(eta);
    free(d);
    return gg_fail(st, "gamgpu_host_oom",
                   "out of memory for the location-scale family's rows (n = %zu)", n);
}
