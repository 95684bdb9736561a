/* outer_rows.h -- the row-wise work of gam()'s outer smoothing parameter
 * iteration (R/outer.R) in pure C: from the penalized IRLS state a backend
 * holds (eta, mu), Newton's and Fisher's working weights and their
 * derivatives in eta, the deviance's and the Pearson statistic's, then the
 * criterion's O(n p) derivative products -- one X' diag(w' eta_k) X per
 * smoothing parameter, X' of the second derivatives' row terms, leverages
 * and their weighted sums -- so that only p-sized results reach R.
 *
 * Where the rows live is the backend's choice (backend.h: ops->outer).
 * A backend with outer ops (the device's: cuda_outer.c, kernels in
 * inst/kernels/outer.cu) computes and keeps them in its own memory, next
 * to X, and nothing n-sized crosses the bus; for one without (the CPU's)
 * the n-vectors live in host memory here (inst/include/outer_math.h
 * computes them row by row over threads) and the products go through
 * the backend's set_rows(), gram(), xmul() and xtmul().  Both evaluate
 * the same per-row expressions (outer_math.h).
 *
 * An extended family with its rows in C (nb(), tw(), betar(), scat():
 * R/outer_efam.R) has rows of its own (inst/include/efam_outer.h):
 * Newton's weight w = Deta2 / 2, its eta derivatives w1, w2 and dev1 =
 * Deta as above, Fisher's weight and theta's row terms (a block of
 * GG_FM_EFO_NCOL(nth) columns); gam.fit4's Newton step
 * (gg_outer_ef_newton) and the same derivative products with theta's
 * columns first (gg_outer_derivs.nth).
 *
 * Every function returns 0 or -1 with *st filled. */
#ifndef GAMGPU_OUTER_ROWS_H
#define GAMGPU_OUTER_ROWS_H

#include <stddef.h>

#include "backend.h"
#include "family.h"
#include "status.h"

/* The rows at the last evaluated state: in the backend (on_backend), or
 * in host memory here, n each. */
typedef struct gg_outer_rows {
    size_t n;
    int have;                  /* the rows are the last eval's */
    int on_backend;            /* kept by the backend's outer ops, not below */
    int fisher;                /* Newton's weights are Fisher's (canonical link) */
    int pearson;               /* pe1 and pe2 computed */
    int efam, level;           /* an extended family's rows (efam_outer.h), at level 0 or 2 */
    gg_family fam;             /* the family they were computed for */
    double *eta, *mu;
    double *w, *w1, *w2;       /* Newton's weights and d/d eta, d^2/d eta^2 */
    double *wF1, *wF2;         /* Fisher's (not set when fisher: Newton's are they) */
    double *dev1;              /* d deviance / d eta */
    double *pe1, *pe2;         /* the Pearson terms' first two derivatives */
    double *h, *zero, *one;    /* leverages; constant vectors for set_rows */
    double *ewf;               /* efam: Fisher's weight */
    double *eth;               /* efam: theta's terms, n x GG_FM_EFO_NCOL(nth)
                                  (efam_par.h: g, a, c, then b, d) */
    int nth, eth_cols;         /* efam: theta values (fam.ef.nth); eth's columns */
    double *deta;              /* n x M: X d beta / d rho */
    double *V;                 /* n x k: columns for X' V */
    int Mcap, kcap;
    double pearson_stat;       /* sum pw (y - mu)^2 / V */
    double sbar_sum;           /* sum dV/dmu (y - mu) / V: n times Fletcher's s.bar */
    double ef_sums[GG_FM_EFO_NSUM(GG_FM_EFO_MAXTH)];  /* efam: rows not finite,
                                  sum Dth (nth), sum Dth2 (theta's pairs) */
} gg_outer_rows;

void gg_outer_rows_free(gg_outer_rows *r);

/* The rows' vectors that a backend's outer ops keep (fetch) */
typedef enum {
    GG_OR_W = 0, GG_OR_W1, GG_OR_W2, GG_OR_WF1, GG_OR_WF2, GG_OR_DEV1, GG_OR_PE1, GG_OR_PE2,
    /* an extended family's (efam_outer.h) */
    GG_OR_EWF, GG_OR_ETH       /* (ETH: the block, n x GG_FM_EFO_NCOL(nth)) */
} gg_outer_vec;

#define GG_OR_NVEC 10

typedef struct gg_outer_derivs gg_outer_derivs;

/* The rows and their products kept by a backend (backend.h: ops->outer).
 * Same meaning as the functions below that call them. */
struct gg_outer_ops {
    /* the rows at the backend's last row_state() (its eta and mu): fisher,
     * the link is canonical (Fisher's weights are Newton's: wF1, wF2 not
     * computed); pearson, pe1, pe2 and stats too (the Pearson statistic,
     * s.bar's sum) */
    int (*rows)(gg_backend *be, const gg_family *fam, int fisher, int pearson,
                double stats[2], gg_status *st);
    /* one vector of the rows to host memory out[n] (GG_OR_ETH: the block,
     * out[n x GG_FM_EFO_NCOL(nth)]) */
    int (*fetch)(gg_backend *be, gg_outer_vec which, double *out, gg_status *st);
    /* A = X' diag(w) X, Newton's weights of the rows */
    int (*gram)(gg_backend *be, double *A, gg_status *st);
    /* gg_outer_newton_gram() at the backend's last row_state() */
    int (*newton_gram)(gg_backend *be, const gg_family *fam, double *A, double *b, int *ok,
                       gg_status *st);
    /* gg_outer_derivs_compute()'s products but RHS where Fisher's weights
     * are Newton's (*rhs_done = 0 then: the caller forms it from dH);
     * every M x M result with both triangles */
    int (*derivs)(gg_backend *be, gg_outer_derivs *o, int *rhs_done, gg_status *st);
    /* an extended family's rows at the backend's last row_state() (fam
     * with efam set, gg_fm_ef_outer_ok), level 0 or 2; sums as
     * gg_outer_rows.ef_sums */
    int (*ef_rows)(gg_backend *be, const gg_family *fam, int level, double *sums,
                   gg_status *st);
    /* gg_outer_ef_newton() at those rows */
    int (*ef_newton)(gg_backend *be, int mask, double *A, double *b, gg_status *st);
    /* out (p x nth) = X' g, theta's first columns of the level-2 rows */
    int (*ef_xg)(gg_backend *be, double *out, gg_status *st);
};

/* From the backend's last evaluated state (eta and mu): the weights of
 * gg_fm_outer_row (Newton's, and Fisher's when the link is not
 * canonical), dev1, and with pearson the Pearson terms' derivatives and
 * r->pearson_stat -- kept by the backend's outer ops where it has them,
 * else computed here from eta and mu copied to the host. */
int gg_outer_rows_compute(gg_backend *be, const gg_data *d, const gg_family *fam,
                          int pearson, gg_outer_rows *r, gg_status *st);

/* Host copies of the computed rows (r->eta, r->mu, r->w, ...), fetched
 * from the backend where it keeps them. */
int gg_outer_rows_to_host(gg_backend *be, gg_outer_rows *r, gg_status *st);

/* X' W X with Newton's weights w of the computed rows (A: p x p). */
int gg_outer_rows_gram(gg_backend *be, gg_outer_rows *r, double *A, gg_status *st);

/* Newton's penalized IRLS step at the backend's last evaluated state
 * (gg_fm_newton_row): X'WX and X'Wz in A, b; *ok = 0 (A, b untouched)
 * when some Newton weight is not positive. */
int gg_outer_newton_gram(gg_backend *be, const gg_data *d, const gg_family *fam,
                         gg_outer_rows *r, double *A, double *b, int *ok, gg_status *st);

/* An extended family's rows (efam_outer.h) from the backend's last
 * evaluated state: level 0 (w, dev1, Fisher's weight) or 2 (all), with
 * r->ef_sums. */
int gg_outer_ef_rows_compute(gg_backend *be, const gg_data *d, const gg_family *fam,
                             int level, gg_outer_rows *r, gg_status *st);

/* gam.fit4's Newton step at an extended family's rows: A = X'WX and b =
 * X'W(eta - offset) - X'(dev1 / 2) with Newton's weights w; mask: the rows
 * whose w is not positive left out of both (its fallback where X'WX + S
 * is not positive definite). */
int gg_outer_ef_newton(gg_backend *be, const gg_data *d, gg_outer_rows *r, int mask,
                       double *A, double *b, gg_status *st);

/* out (p x nth) = X' Detath / 2 at an extended family's level-2 rows */
int gg_outer_ef_xg(gg_backend *be, gg_outer_rows *r, double *out, gg_status *st);

/* The criterion's derivative products at the computed rows.  In: M
 * smoothing parameters, db (p x M, d beta / d rho), Ml (p x p, symmetric)
 * for the leverages h_i = x_i' Ml x_i; fisher picks Fisher's weights
 * (else Newton's) for dH and for the leverage sums; pe:
 * also X' dev1 and deta' diag(w) deta; pearson: X' pe1 and deta' diag(pe2)
 * deta.  The pairs (j, k), j <= k, run column by column of the upper
 * triangle: (1,1), (1,2), (2,2), (1,3), ...
 *
 * nth > 0 (an extended family's level-2 rows, Newton's weights, nth its
 * theta values): db's first nth columns are d beta / d theta, and theta's
 * row terms join in as R/outer_efam.R writes them, with [j] for "j is
 * theta's" -- dw_j = w1 eta_j + [j] a_j in dH_j and hd_j, hww_jk +
 * [k] sum h c_k eta_j + [j] sum h c_j eta_k + [j][k] sum h d_jk, RHS_jk +
 * [k] X'(a_k eta_j + [j] b_jk) past dH_j d beta_k -- and tg_ik = sum g_i
 * eta_k. */
struct gg_outer_derivs {
    int M;
    const double *db, *Ml;
    int fisher, pe, pearson;
    int nth;        /* 0, or theta's columns (see above) */
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
    double *tg;     /* nth x M: sum g_i eta_k (nth) */
    /* theta's raw parts (nth; the backend's, added in by the caller):
     * p x npk X'(a_k eta_j + b_jk) for theta's pairs j <= k (column by
     * column), nth x M sum h c_i eta_k, nth sum h a_i, npk sum h d_jk
     * (mgcv's packing) */
    double *th_rhs, *th_hc, *th_ha, *th_hd;
};

int gg_outer_derivs_compute(gg_backend *be, gg_outer_rows *r, gg_outer_derivs *o,
                            gg_status *st);

#endif
