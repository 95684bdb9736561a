/* ls_rows.h -- the rows of a location-scale (or multinom) model as the
 * C passes over them take them: the model matrix, each linear predictor's
 * columns and the rows' derivatives of the log likelihood (family_gamlss.c,
 * gamlss_blocks.c, family_ls.c). */
#ifndef GAMGPU_LS_ROWS_H
#define GAMGPU_LS_ROWS_H

#include <stddef.h>

/* X n x p column-major; linear predictor k's columns are cols[k][0..ncol[k])
 * (0-based).  l1 n x K; l2, l3, l4 n x (their counts), addressed through
 * i2 (K x K), i3 (K^3), i4 (K^4), whose entries are 0-based columns. */
typedef struct gg_ls_rows {
    const double *X;
    size_t        n;
    int           p, K;
    const int   *const *cols;
    const int    *ncol;
    const double *l1, *l2, *l3, *l4;
    const int    *i2, *i3, *i4;
} gg_ls_rows;

#endif
