/* xplan.h -- the model matrix as a recipe instead of numbers.
 *
 * When every smooth of a model has a C evaluator (cr/cs, tp/ts), R hands
 * the engine the ingredients of X -- covariates, knots, the constraint map
 * and the dense parametric columns -- instead of an n x p matrix.  A
 * backend then builds X where it needs it: the CPU backend on the host
 * (gg_xplan_fill, over threads), the CUDA backend on the device (basis.cu),
 * so X never crosses the PCIe bus and the host never holds n x p doubles.
 * Both builds run the arithmetic of inst/include/basis_math.h. */
#ifndef GAMGPU_XPLAN_H
#define GAMGPU_XPLAN_H

#include <stddef.h>

#include "basis.h"
#include "status.h"

typedef enum {
    GG_XB_DENSE = 0,        /* columns given as numbers (parametric terms) */
    GG_XB_CR    = 1,        /* mgcv "cr"/"cs" smooth */
    GG_XB_TPRS  = 2,        /* mgcv "tp"/"ts" smooth */
                            /* 3: was te() of two cr margins, now margins */
    GG_XB_MARG  = 4,        /* any smooth as a row tensor product of margins */
    GG_XB_ONES  = 5         /* columns of ones (the intercept): no arrays, the
                               backend writes them where it builds X */
} gg_xblock_kind;

/* One margin of a GG_XB_MARG block: a raw basis evaluated on the row, then
 * the margin's own map (mgcv's constraint of a ti() margin, te()'s XP,
 * fs's P: sweep-and-drop and/or a matrix, as gg_basis_map without by).
 * A block with one margin is an ordinary smooth (cc, ps, bs, re, ...). */
typedef enum {
    GG_XM_CR     = 1,       /* cr/cs: xk[k] knots, F k x k */
    GG_XM_TPRS   = 2,       /* tp/ts: d covariates, shift[d], m, M, Xu nXu x d,
                               UZ (nXu + M) x k */
    GG_XM_CC     = 3,       /* cc: xk[k + 1] knots, F = BD, k x k */
    GG_XM_BSPL   = 4,       /* ps/bs: xk[nk] knots, order ord, k = nk - ord
                               columns; between lo and hi the B-spline basis
                               (R's splineDesign), outside it linear from
                               F = D (4 x k: values and slopes at lo, hi) */
    GG_XM_CODE   = 5,       /* a factor: code[n] (1-based; other values give
                               a row of zeros), k levels, indicator columns */
    GG_XM_LINEAR = 6,       /* a numeric covariate as its one column (k = 1) */
    GG_XM_CP     = 7,       /* cp: xk[nk] knots (cSplineDes's, their ends
                               repeated ord - 1 more times: nk = k + 3 ord
                               - 2), order ord, x wrapped onto [lo, hi] */
    GG_XM_GP     = 8        /* gp: as TPRS with Xu the knots, gp_type's
                               covariance of range gp_rho (power gp_kp) in
                               place of eta, UZ's last M rows the identity
                               for the null space [1, x] (M = d + 1) or [1]
                               (M = 1) */
} gg_xmargin_kind;

#define GG_XMAX_MARGINS 4   /* margins of a block */
#define GG_XMAX_ORD 12      /* B-spline order */
#define GG_XMAX_TPRS_D 4    /* covariates of a thin plate margin */

typedef struct gg_xmargin {
    gg_xmargin_kind kind;
    const double *x;        /* n x d covariates (all but CODE) */
    const int    *code;     /* CODE: n codes */
    int           d;        /* covariates (1 but for TPRS) */
    int           k;        /* raw columns */
    const double *xk, *F;   /* CR, CC, BSPL: knots and their matrix (above) */
    int           nk, ord;  /* BSPL: knots, order */
    double        lo, hi;   /* BSPL: the interval of the B-spline basis */
    const double *shift, *Xu, *UZ;  /* TPRS, GP, as in gg_xblock */
    int           m, M, nXu;
    const double *pp_knots, *pp_coef;  /* TPRS, as in gg_xblock */
    int           pp_deg;
    int           gp_type;  /* GP: mgcv's covariance function 1 .. 5 */
    double        gp_rho, gp_kp;  /* GP: range, power (type 2) */
    gg_basis_map  map;      /* raw k -> map.kc columns (by, col_of unused);
                               map.drop < 0 and map.Z NULL: the identity */
} gg_xmargin;

typedef struct gg_xblock {
    gg_xblock_kind kind;
    int           col0;     /* first column of X written (0-based) */
    int           ncol;     /* columns written */
    const double *D;        /* dense: n x ncol, leading dimension n */
    gg_basis_map  map;      /* smooths: constraint, by, deletions (map.col_of) */
    const double *x;        /* smooths: covariates, n x d column-major */
    int           d;
    const double *xk, *F;   /* cr: k knots, k x k */
    const double *shift;    /* tprs: d */
    const double *Xu;       /* tprs: nXu x d unique knots */
    const double *UZ;       /* tprs: (nXu + M) x k */
    int           m, M, nXu;/* tprs: penalty order as stored, null space dim */
    const double *pp_knots; /* tprs, d = 1: the sorted knots (nXu) and the */
    const double *pp_coef;  /* piecewise polynomials (basis.h's gg_tp1_table) */
    int           pp_deg;   /* that every row is built from; 0: none, b' UZ */
    int           nmarg;    /* MARG: margins; map.k = the product of their
                               map.kc, the last margin's index fastest */
    gg_xmargin    marg[GG_XMAX_MARGINS];
} gg_xblock;

typedef struct gg_xplan {
    size_t           n;
    int              p;
    int              nblocks;
    const gg_xblock *blocks;
    int              threads;   /* host threads for gg_xplan_fill */
    int              tensor_cores;  /* a device may sum thin-plate bases on its
                                       tensor cores (to rounding, not the host's
                                       bits); 0: the host's sums bit for bit */
    double         **tables;    /* a clone's: the tp1 tables it made itself */
    int              ntables;   /* (gg_xplan_tp1_tables), freed with it */
} gg_xplan;

/* Rows r0 .. r0+rows-1 of X into out (rows x p, leading dimension ldo).
 * 0, or -1 with st (host memory). */
int gg_xplan_fill(const gg_xplan *plan, size_t r0, size_t rows, double *out, size_t ldo,
                  gg_status *st);

/* A copy of src's block structures in malloc'd memory, for a plan that
 * outlives the .Call that read it (a model session): the arrays the blocks
 * point to (covariates, knots, maps) are not copied and must stay valid.
 * 0, or -1 when out of memory (nothing to free then).  Free with
 * gg_xplan_clone_free. */
int  gg_xplan_clone(const gg_xplan *src, gg_xplan *dst);
void gg_xplan_clone_free(gg_xplan *x);

/* A clone's one-variable thin plate blocks and margins without their
 * piecewise polynomials given them (gg_tp1_table, over `threads` threads),
 * as R's plan for the host has them (R/model_matrix.R: tp1_table()): the
 * plan of a device fit, which may leave them to the device's direct sums,
 * then builds on the host the same X, bit for bit, as the host's own plan
 * -- a session moved to the CPU fits as a CPU fit does.  0, -1 out of
 * memory, -2 stopped by a user interrupt (the tables made so far kept). */
int  gg_xplan_tp1_tables(gg_xplan *x, int threads);

#endif
