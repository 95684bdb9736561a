/* basis_r.h -- .Call entry points of the basis glue (basis_r.c). */
#ifndef GAMGPU_BASIS_R_H
#define GAMGPU_BASIS_R_H

#include <Rinternals.h>

/* The model matrix recipe (R/model_matrix.R: model_matrix_plan) as C
 * structs allocated with R_alloc; classed R error when malformed. */
struct gg_xplan;
void gg_xplan_from_r(SEXP plan, size_t n, int p, struct gg_xplan *out);

/* A model's X as the engine takes it -- a double matrix, or the recipe the
 * backend builds it from (then *xp = buf, filled; else *xp = NULL) -- with
 * its response y, prior weights w and offset (NULL or one per row) checked
 * against it.  Sets *n and *p; a classed R error otherwise. */
void gg_model_x_from_r(SEXP X, SEXP y, SEXP w, SEXP offset, struct gg_xplan *buf,
                       const struct gg_xplan **xp, int *n, int *p);
SEXP gg_xplan_build_r(SEXP plan);

#endif
