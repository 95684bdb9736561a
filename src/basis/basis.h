/* basis.h -- mgcv smooth bases evaluated row by row in C, for building the
 * model matrix on every row of a large data set (R/model_matrix.R).
 *
 * Each evaluator computes a smooth's raw basis row as mgcv's own C code
 * does, then gg_basis_map_row() applies what PredictMat applies next, in
 * its order: the "sweepDrop" identifiability constraint (drop one column,
 * subtract a constant from the others), the by-variable, then the "qr"
 * constraint as an explicit k x kc map Z. */
#ifndef GAMGPU_BASIS_H
#define GAMGPU_BASIS_H

#include <stddef.h>

typedef struct gg_basis_map {
    int           k;        /* raw basis dimension */
    int           drop;     /* sweepDrop column (0-based), -1 for none */
    const double *shift;    /* sweepDrop constants (k - 1), with drop */
    const double *Z;        /* (k or k - 1) x kc, NULL for none */
    int           kc;       /* columns written */
    const double *by;       /* n multipliers, NULL for none */
    const int    *by_code;  /* or a factor's n codes: the multiplier is 1
                               where by_code[i] == by_level, else 0 */
    int           by_level;
    const int    *col_of;   /* kc output columns, -1 = deleted (gam.side);
                               NULL: column c goes to column c */
} gg_basis_map;

/* Map the raw row of observation i (by[i]) into row orow of out (leading
 * dimension ldo).  mid must hold k doubles. */
void gg_basis_map_row(const gg_basis_map *map, const double *raw, size_t i, double *out,
                      size_t ldo, size_t orow, double *mid);

/* mgcv "cr"/"cs" for rows r0 .. r0+rows-1 of x, written to rows 0 ..
 * rows-1 of out: knots xk[k], F (k x k as the smooth stores it). work: 2k
 * doubles. */
void gg_cr_basis(const double *x, size_t r0, size_t rows, const double *xk, const double *F,
                 const gg_basis_map *map, double *out, size_t ldo, double *work);

/* mgcv "tp"/"ts" (thin plate regression splines): x is n x d column-major,
 * shift[d] is subtracted first; m the penalty order (p.order[1]; 0 or too
 * small = mgcv's default), M the null space dimension, Xu nXu x d unique
 * knots, UZ (nXu + M) x k.  Rows r0 .. r0+rows-1 go to rows 0 .. rows-1 of
 * out, split over `threads` POSIX threads (pure C, no R API).  0 on
 * success, -1 when memory ran out, -2 when stopped by a user interrupt
 * (interrupt.h). */
int gg_tprs_basis(const double *x, size_t n, int d, const double *shift, int m, int M,
                  const double *Xu, int nXu, const double *UZ, const gg_basis_map *map,
                  size_t r0, size_t rows, double *out, size_t ldo, int threads);

/* A thin plate basis in one variable as piecewise polynomials
 * (basis_math.h's gg_bm_tp1_*): D = gg_tp1_degree(m) for penalty order m
 * as stored; knots gets the K = nXu knots of Xu sorted, coef ((K + 1) x k
 * x (D + 1) doubles) interval j's polynomial of column c at coef + (j k +
 * c)(D + 1), computed from Xu and UZ ((K + M) x k) over `threads` POSIX
 * threads.  The same coefficients serve the host and the device, which
 * then agree bit for bit.  0, -1 when memory ran out, -2 when stopped by
 * a user interrupt. */
int gg_tp1_degree(int m);
int gg_tp1_table(const double *Xu, int K, const double *UZ, int k, int m, int M,
                 double *knots, double *coef, int threads);

/* Rows r0 .. r0+rows-1 of a one-variable tp basis from its table (x the
 * data's covariate, shift subtracted first), through map into rows 0 ..
 * rows-1 of out; work holds 2 map->k doubles. */
void gg_tp1_basis(const double *x, double shift, const double *knots, int K,
                  const double *coef, int D, const gg_basis_map *map, size_t r0, size_t rows,
                  double *out, size_t ldo, double *work);

/* What the thin plate evaluators (host and device) share, fixed per smooth:
 * the effective penalty order (mgcv's default when m is too small), eta's
 * constant, and the exponents of the M null-space polynomials
 * (power[l + M j] for variable j; M x d ints, the caller's). */
int    gg_tprs_order(int m, int d);
/* M, the null space's dimension for penalty order m (as stored) in d
 * dimensions: choose(m + d - 1, d) at the effective order. */
int    gg_tprs_null_space_dim(int m, int d);
double gg_tprs_eta_constant(int m, int d);
void   gg_tprs_null_space_powers(int *power, int M, int m, int d);

/* mgcv's thin plate regression spline construction from given knots
 * (tprs_construct.c): xu the nk knots (nk x d column-major, shifted, in
 * mgcv's sorted order), m the penalty order as stored, k the basis
 * dimension (M < k < nk).  Writes UZ ((nk + M) x k), S (k x k; before
 * mgcv's symmetrization and its scaling of the columns) and, unless NULL,
 * ev (the k eigenvalues of E kept).  E's products are spread over
 * `threads` POSIX threads (one thread: mgcv's arithmetic to the bit).  0;
 * -1 out of memory; -3 LAPACK failed; -4 k not in (M, nk). */
int gg_tprs_construct(const double *xu, int nk, int d, int m, int k, int threads, double *UZ,
                      double *S, double *ev);

/* A Gaussian process smooth's null space (mgcv's gpT) in the same form:
 * [1] (M = 1) or [1, x_1, .., x_d] (M = d + 1). */
void   gg_gp_null_space_powers(int *power, int M, int d);

#endif
