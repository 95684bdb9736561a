/* family_gamlss.h -- the products over the rows of mgcv's location-scale
 * (and multinom) families: what mgcv's gamlss.gH() returns from the rows'
 * derivatives of the log likelihood in the K linear predictors
 * (family_gamlss.c). */
#ifndef GAMGPU_FAMILY_GAMLSS_H
#define GAMGPU_FAMILY_GAMLSS_H

#include <stddef.h>

#include "status.h"

/* X n x p column-major; linear predictor k's columns are cols[k][0..ncol[k])
 * (0-based).  l1 n x K; l2, l3, l4 n x (their counts), addressed through
 * i2 (K x K), i3 (K^3), i4 (K^4), whose entries are 0-based columns.  d1b
 * p x M, d2b p x M (M + 1) / 2; Hm (p x p): the scaled (pseudo-)inverse
 * Hessian D H^-1 D (R/general_family.R). */
typedef struct gg_ls_rows {
    const double *X;
    size_t        n;
    int           p, K;
    const int   *const *cols;
    const int    *ncol;
    const double *l1, *l2, *l3, *l4;
    const int    *i2, *i3, *i4;
} gg_ls_rows;

/* deriv 0: lb (p), lbb (p x p); 2: and d1H (p x p x M); 3: and trd2H
 * (M (M + 1) / 2): tr(Hm d2H), mgcv's sum(Xe * VX) with Xe the rows of
 * the predictors' model matrices times Hm, VX's row block j and predictor
 * i's columns v_ij X_i, v the rows' second derivatives of l_ij in rho. */
int gg_ls_gh(const gg_ls_rows *r, int deriv, const double *d1b, int M, const double *d2b,
             const double *Hm, double *lb, double *lbb, double *d1H, double *trd2H,
             gg_status *st);

#endif
