/* gamlss_blocks.h -- the row passes of the location-scale families'
 * products (gamlss_blocks.c): weighted block Gram products and the rows'
 * quadratic forms in the scaled inverse Hessian, over row jobs. */
#ifndef GAMGPU_GAMLSS_BLOCKS_H
#define GAMGPU_GAMLSS_BLOCKS_H

#include "ls_rows.h"
#include "status.h"

/* One product A = X_a' diag(w) X_b (ncol[a] x ncol[b], column-major; both
 * triangles when a == b) over the rows of r. */
typedef struct gg_ls_prod {
    int           a, b;
    const double *w;
    double       *A;
} gg_ls_prod;

/* Every product of prods in one pass over the rows, split into fixed row
 * ranges (the result does not depend on the threads that run them). */
int gg_ls_block_products(const gg_ls_rows *r, int nprod, const gg_ls_prod *prods,
                         gg_status *st);

/* q (n x K^2): column a + K b holds, for each row i,
 * sum over c' in cols_b and c in cols_a with own[c] == a of
 * x_ic Hm[c, c'] x_ic' (Hm p x p column-major). */
int gg_ls_quad_rows(const gg_ls_rows *r, const int *own, const double *Hm, double *q,
                    gg_status *st);

#endif
