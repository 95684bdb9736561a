/* outer_rows.h -- the row-wise work of gam()'s outer smoothing parameter
 * iteration (R/outer.R) in pure C: from the penalized IRLS state a backend
 * holds (eta, mu), Newton's and Fisher's working weights and their
 * derivatives in eta, the deviance's and the Pearson statistic's, then the
 * criterion's O(n p) derivative products -- one X' diag(w' eta_k) X per
 * smoothing parameter, X' of the second derivatives' row terms, leverages
 * and their weighted sums -- through the backend's operations, so that
 * only p-sized results reach R.  The n-vectors live in host memory here
 * (inst/kernels/outer_math.h computes them row by row over threads); X
 * stays with the backend (the device's memory for a GPU fit).
 *
 * Every function returns 0 or -1 with *st filled. */
#ifndef GAMGPU_OUTER_ROWS_H
#define GAMGPU_OUTER_ROWS_H

#include <stddef.h>

#include "backend.h"
#include "family.h"
#include "status.h"

/* The rows at the last evaluated state, host memory, n each. */
typedef struct gg_outer_rows {
    size_t n;
    int have;                  /* the vectors below are the last eval's */
    int fisher;                /* Newton's weights are Fisher's (canonical link) */
    int pearson;               /* pe1 and pe2 computed */
    double *eta, *mu;
    double *w, *w1, *w2;       /* Newton's weights and d/d eta, d^2/d eta^2 */
    double *wF1, *wF2;         /* Fisher's (not set when fisher: Newton's are they) */
    double *dev1;              /* d deviance / d eta */
    double *pe1, *pe2;         /* the Pearson terms' first two derivatives */
    double *h, *zero, *one;    /* leverages; constant vectors for set_rows */
    double *deta;              /* n x M: X d beta / d rho */
    double *V;                 /* n x k: columns for X' V */
    int Mcap, kcap;
    double pearson_stat;       /* sum pw (y - mu)^2 / V */
} gg_outer_rows;

void gg_outer_rows_free(gg_outer_rows *r);

/* From the backend's last evaluated state: eta and mu copied to the host,
 * the weights of gg_fm_outer_row (Newton's, and Fisher's when the link is
 * not canonical), dev1, and with pearson the Pearson terms' derivatives
 * and r->pearson_stat. */
int gg_outer_rows_compute(gg_backend *be, const gg_data *d, const gg_family *fam,
                          int pearson, gg_outer_rows *r, gg_status *st);

/* X' W X with Newton's weights w of the computed rows (A: p x p). */
int gg_outer_rows_gram(gg_backend *be, gg_outer_rows *r, double *A, gg_status *st);

/* Newton's penalized IRLS step at the backend's last evaluated state
 * (gg_fm_newton_row): X'WX and X'Wz in A, b; *ok = 0 (A, b untouched)
 * when some Newton weight is not positive. */
int gg_outer_newton_gram(gg_backend *be, const gg_data *d, const gg_family *fam,
                         gg_outer_rows *r, double *A, double *b, int *ok, gg_status *st);

/* The criterion's derivative products at the computed rows.  In: M
 * smoothing parameters, db (p x M, d beta / d rho), Ml (p x p, symmetric)
 * for the leverages h_i = x_i' Ml x_i; fisher picks Fisher's weights
 * (else Newton's) for dH and for the leverage sums; pe:
 * also X' dev1 and deta' diag(w) deta; pearson: X' pe1 and deta' diag(pe2)
 * deta.  The pairs (j, k), j <= k, run column by column of the upper
 * triangle: (1,1), (1,2), (2,2), (1,3), ... */
typedef struct gg_outer_derivs {
    int M;
    const double *db, *Ml;
    int fisher, pe, pearson;
    /* out (caller's memory) */
    double *dH;     /* p x p x M: X' diag(w1 eta_k) X */
    double *RHS;    /* p x npairs: X' (Newton w1 eta_j eta_k); dH_j d beta_k
                       when dH has Newton's weights (the same product) */
    double *Xd;     /* p: X' dev1 (pe) */
    double *Xp;     /* p: X' pe1 (pearson) */
    double *u;      /* p: X' (h w1) */
    double *hww;    /* M x M: eta' diag(h w2) eta */
    double *hd;     /* M: sum h w1 eta_k */
    double *Dw;     /* M x M: eta' diag(w) eta (pe) */
    double *Dp2;    /* M x M: eta' diag(pe2) eta (pearson) */
} gg_outer_derivs;

int gg_outer_derivs_compute(gg_backend *be, gg_outer_rows *r, gg_outer_derivs *o,
                            gg_status *st);

#endif
