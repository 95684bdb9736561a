/* basis_cr.h -- mgcv's cubic regression spline basis ("cr", "cs") evaluated
 * row by row in C (see basis_cr.c). */
#ifndef GAMGPU_BASIS_CR_H
#define GAMGPU_BASIS_CR_H

#include <stddef.h>

/* The constrained basis of one cr smooth for n values of x, written to the
 * n x kc matrix out (column-major, leading dimension ldo).
 *   xk[k]        knots, increasing;  F[k*k]  mgcv's F (second derivatives
 *                at the knots from values at the knots), as the smooth stores it
 *   drop, shift  mgcv's "sweepDrop" constraint: drop raw column `drop`
 *                (0-based; -1 for none) and subtract shift[c] from column c
 *   Z[k*kc]      mgcv's "qr" constraint as an explicit k x kc map (NULL: none)
 *   by[n]        multiplies each row (by-variable or factor indicator; NULL: 1)
 * The order of the steps is PredictMat's: raw basis, sweep/drop, by, Z.
 * work must hold 2*k doubles. */
void gg_cr_basis(const double *x, size_t n, const double *xk, int k, const double *F,
                 int drop, const double *shift, const double *Z, int kc, const double *by,
                 double *out, size_t ldo, double *work);

#endif
