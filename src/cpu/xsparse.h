/* xsparse.h -- the model matrix as sparse rows times a fixed map, X = S M,
 * for a recipe (xplan.h) whose bases are local (issue 40).
 *
 * A row of a cr, cc, B-spline, cyclic P-spline, factor or linear margin is
 * a combination of a few fixed vectors: a cr row is a0 e_j + a1 e_{j+1} +
 * cm F_j + cp F_{j+1}, four entries of a sparse vector s times G = [I; F];
 * a B-spline row has ord entries; a factor's, one.  A tensor product's row
 * is the Kronecker product of its margins' sparse vectors times that of
 * their maps, and the constraints, deletions and sweep-and-drop shifts
 * that follow are one more fixed map (a shift through an extra entry of
 * value 1).  So every row of X is s_i' M with s_i a sparse Q-vector of a
 * few dozen entries and M (Q x p) fixed, and
 *     X'WX = M' (sum_i w_i s_i s_i') M,
 * whose per-row cost is (entries)^2 rather than p^2; X beta, leverages and
 * the products X B, X' V likewise go through M once and the rows' few
 * entries.  Exact: the same numbers as the dense build, to rounding.
 *
 * A block that is not local enters as its own columns, mapped by the
 * identity: its entries are all its columns.  A thin plate basis in one
 * variable is generated row by row from its piecewise polynomials
 * (basis.h's gg_tp1_table) with the block's map folded in, (D + 1) ncol
 * multiply-adds a row and no storage; the others (a Gaussian process or
 * thin plate basis in several variables, dense parametric columns) are
 * stored n x ncol.  These dense entries come last in Q (from qd0), and
 * the Gram product takes them eight rows at a time through
 * gram_kernel.c's steps, the sparse ones scattered.  AR1 rows are the
 * caller's to refuse. */
#ifndef GAMGPU_XSPARSE_H
#define GAMGPU_XSPARSE_H

#include <stddef.h>

#include "status.h"
#include "xplan.h"

#define GG_XS_MAX_Q 1024        /* Q: the accumulators are Q x Q per job */
#define GG_XS_MAX_NNZ 256       /* entries of a row */

typedef struct gg_xs_margin {
    gg_xmargin g;               /* the margin (a cr block's, made up) */
    int q;                      /* its sparse dimension, the shift's entry included */
    int nnz;                    /* most entries of a row */
    int aug;                    /* 1: entry q - 1 (value 1) carries the map's shift */
} gg_xs_margin;

typedef struct gg_xs_block {
    const gg_xblock *b;
    int dense;                  /* 1: not local, its columns at cols (n x ncol):
                                   the plan's (dense parametric columns) or
                                   column dcol of D; or generated (gen) */
    int dcol;
    const double *cols;
    int gen;                    /* 1: a one-variable thin plate basis made
                                   from T, (K + 1) x (D + 1) x ncol: interval
                                   j's coefficient of t^a for column c at
                                   T[(j (D + 1) + a) ncol + c], the map folded in */
    double *T;
    size_t roff;                /* gen: its T reduced by a vector, (K + 1) x (D + 1)
                                   values at roff of the pass's tables */
    int *lut, nlut;             /* gen: knots <= the left end of each of nlut
                                   equal cells over the knots' range */
    double lut_lo, lut_scale;
    int nm;                     /* margins (ONES, dense: 0) */
    gg_xs_margin m[GG_XMAX_MARGINS];
    int q0, q;                  /* its first index in Q, its dimension */
    int qT;                     /* the margins' product (q without the shift's entry) */
    int aug;                    /* 1: entry q0 + qT (value by_i) carries the block's shift */
    int nnz;
} gg_xs_block;

typedef struct gg_xsparse {
    size_t n;
    int p, Q, nnz;              /* nnz: most entries of a row */
    int qd0, nd;                /* the dense entries: Q indices qd0 .. Q - 1 */
    int ngen;                   /* columns generated row by row (gen blocks') */
    size_t nR;                  /* the gen blocks' reduced tables, all together */
    int nblocks;
    gg_xs_block *blocks;
    double *M;                  /* Q x p, column-major */
    int pd;                     /* columns of the blocks that are not local */
    double *D;                  /* their columns, n x pd (gg_xsparse_fill_dense) */
    const gg_xplan *plan;
    int threads;
} gg_xsparse;

/* Compiles plan into xs (M and the rows' layout; the columns of blocks
 * that are not local not yet stored): 0; 1 when sparse rows cannot take
 * the plan (why says which block, xs left empty); -1 when out of memory
 * (st filled).  plan's arrays must outlive xs. */
int  gg_xsparse_compile(const gg_xplan *plan, gg_xsparse *xs, char *why, size_t nwhy,
                        gg_status *st);
/* Builds and stores the columns of the blocks that are not local (n x pd,
 * over the plan's threads): 0, or -1 with st. */
int  gg_xsparse_fill_dense(gg_xsparse *xs, gg_status *st);
void gg_xsparse_free(gg_xsparse *xs);

/* Row i's entries: indices into Q (ascending, distinct) and values; returns
 * their number (at most xs->nnz). */
int  gg_xsparse_row(const gg_xsparse *xs, size_t i, int *idx, double *val);

/* Row i's entries of the local blocks (indices below qd0, ascending) and
 * its dense entries (Q indices qd0 .. Q - 1, nd values into d): the two
 * parts of gg_xsparse_row, for xsparse_pass.c */
int  gg_xs_row_local(const gg_xsparse *xs, size_t i, int *idx, double *val);
void gg_xs_row_dense(const gg_xsparse *xs, size_t i, double *d);
/* A generated block's row: its interval j (returned), t = x minus the
 * interval's knot, and the by-value (0 where a factor by does not match) */
int  gg_xs_tp1_point(const gg_xs_block *B, size_t i, double *t, double *by);

/* The backend's products (xsparse_pass.c), over the thread budget in fixed row
 * ranges (the results do not depend on the threads); 0, or -1 with st. */
/* A = X'WX (p x p), b = X'Wz, *zwz = z'Wz (b, zwz when z != NULL); w of any sign */
int gg_xsparse_gram(const gg_xsparse *xs, const double *w, const double *z, double *A,
                    double *b, double *zwz, gg_status *st);
/* eta = X beta + offset (offset NULL: none) */
int gg_xsparse_xbeta(const gg_xsparse *xs, const double *beta, const double *offset,
                     double *eta, gg_status *st);
/* h[i] = w[i] x_i' V x_i, V p x p symmetric (w NULL: 1) */
int gg_xsparse_leverage(const gg_xsparse *xs, const double *V, const double *w, double *h,
                        gg_status *st);
/* out = X B (n x k), B p x k */
int gg_xsparse_xmul(const gg_xsparse *xs, const double *B, int k, double *out, gg_status *st);
/* out = X' V (p x k), V n x k */
int gg_xsparse_xtmul(const gg_xsparse *xs, const double *V, int k, double *out,
                     gg_status *st);

/* Whether the CPU backend takes X as sparse rows: GG_XS_AUTO where the
 * plan compiles, has at least GG_XS_AUTO_ROWS rows and its rows' products
 * cost about as much as dense rows' or less (gg_xsparse_cost); GG_XS_ALWAYS
 * wherever the plan compiles; GG_XS_NEVER (options(gamgpu.cpu_x)). */
#define GG_XS_AUTO   0
#define GG_XS_ALWAYS 1
#define GG_XS_NEVER  2
#define GG_XS_AUTO_ROWS 50000
void gg_xsparse_set_mode(int mode);
int  gg_xsparse_mode(void);
/* Under the mode: whether a compiled plan of n rows should be taken */
int  gg_xsparse_wanted(const gg_xsparse *xs);
/* A row's Gram product through sparse rows against dense rows' p^2 / 2,
 * in the dense kernel's multiply-adds */
double gg_xsparse_cost(const gg_xsparse *xs);

#endif
