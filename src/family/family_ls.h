/* family_ls.h -- the location-scale families' ll() over the rows
 * (family_ls.c): the linear predictors from X and the coefficients, each
 * row's log likelihood and its derivatives (inst/include/ls_math.h), and
 * the products over the rows (family_gamlss.c). */
#ifndef GAMGPU_FAMILY_LS_H
#define GAMGPU_FAMILY_LS_H

#include <stddef.h>

#include "family_gamlss.h"
#include "family_math.h"
#include "status.h"

/* The model's rows: rows.X, n, p, K, cols, ncol and i2, i3, i4 as
 * gg_ls_gh() takes them (rows.l1 .. l4 are filled here); y (n); coef (p);
 * off[k] (n, or NULL) each predictor's offset; eta (n x K) the linear
 * predictors where given (then X and coef are not read); fam and links
 * (K) as ls_math.h codes them. */
typedef struct gg_ls_model {
    gg_ls_rows        rows;
    const double     *y, *coef, *const *off, *eta;
    int               fam;
    const gg_fm_link *links;
} gg_ls_model;

/* mgcv's ll() at deriv 0, 1, 3 or 4: *l and l0 (n: each row's log
 * likelihood, or NULL: not kept); deriv >= 1: lb, lbb; 3: d1H (p x p x M, given d1b p x M);
 * 4: trd2H (M (M + 1) / 2, given d2b and Hm as gg_ls_gh() takes them). */
int gg_ls_ll(gg_ls_model *m, int deriv, const double *d1b, int M, const double *d2b,
             const double *Hm, double *l, double *l0, double *lb, double *lbb, double *d1H,
             double *trd2H, gg_status *st);

#endif
