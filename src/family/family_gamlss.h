/* family_gamlss.h -- the products over the rows of mgcv's location-scale
 * (and multinom) families: what mgcv's gamlss.gH() returns from the rows'
 * derivatives of the log likelihood in the K linear predictors
 * (family_gamlss.c). */
#ifndef GAMGPU_FAMILY_GAMLSS_H
#define GAMGPU_FAMILY_GAMLSS_H

#include "ls_rows.h"
#include "status.h"

/* d1b p x M, d2b p x M (M + 1) / 2; Hm (p x p): the scaled (pseudo-)inverse
 * Hessian D H^-1 D (R/general_family.R).
 * deriv 0: lb (p), lbb (p x p); 2: and d1H (p x p x M); 3: and trd2H
 * (M (M + 1) / 2): tr(Hm d2H), mgcv's sum(Xe * VX) with Xe the rows of
 * the predictors' model matrices times Hm, VX's row block j and predictor
 * i's columns v_ij X_i, v the rows' second derivatives of l_ij in rho. */
int gg_ls_gh(const gg_ls_rows *r, int deriv, const double *d1b, int M, const double *d2b,
             const double *Hm, double *lb, double *lbb, double *d1H, double *trd2H,
             gg_status *st);

#endif
