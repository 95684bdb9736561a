/* xplan.h -- the model matrix as a recipe instead of numbers.
 *
 * When every smooth of a model has a C evaluator (cr/cs, tp/ts), R hands
 * the engine the ingredients of X -- covariates, knots, the constraint map
 * and the dense parametric columns -- instead of an n x p matrix.  A
 * backend then builds X where it needs it: the CPU backend on the host
 * (gg_xplan_fill, over threads), the CUDA backend on the device (basis.cu),
 * so X never crosses the PCIe bus and the host never holds n x p doubles.
 * Both builds run the arithmetic of inst/kernels/basis_math.h. */
#ifndef GAMGPU_XPLAN_H
#define GAMGPU_XPLAN_H

#include <stddef.h>

#include "basis.h"
#include "status.h"

typedef enum {
    GG_XB_DENSE = 0,        /* columns given as numbers (parametric terms) */
    GG_XB_CR    = 1,        /* mgcv "cr"/"cs" smooth */
    GG_XB_TPRS  = 2,        /* mgcv "tp"/"ts" smooth */
    GG_XB_TE2   = 3         /* mgcv te() of two "cr"/"cs" margins */
} gg_xblock_kind;

typedef struct gg_xblock {
    gg_xblock_kind kind;
    int           col0;     /* first column of X written (0-based) */
    int           ncol;     /* columns written */
    const double *D;        /* dense: n x ncol, leading dimension n */
    gg_basis_map  map;      /* smooths: constraint, by, deletions (map.col_of) */
    const double *x;        /* smooths: covariates, n x d column-major */
    int           d;
    const double *xk, *F;   /* cr: k knots, k x k; te: the first margin's */
    const double *xk2, *F2; /* te: the second margin's knots and F */
    int           k1, k2;   /* te: margin dimensions (map.k = k1 k2) */
    const double *shift;    /* tprs: d */
    const double *Xu;       /* tprs: nXu x d unique knots */
    const double *UZ;       /* tprs: (nXu + M) x k */
    int           m, M, nXu;/* tprs: penalty order as stored, null space dim */
} gg_xblock;

typedef struct gg_xplan {
    size_t           n;
    int              p;
    int              nblocks;
    const gg_xblock *blocks;
    int              threads;   /* host threads for gg_xplan_fill */
} gg_xplan;

/* Rows r0 .. r0+rows-1 of X into out (rows x p, leading dimension ldo).
 * 0, or -1 with st (host memory). */
int gg_xplan_fill(const gg_xplan *plan, size_t r0, size_t rows, double *out, size_t ldo,
                  gg_status *st);

#endif
