/* basis_r.h -- .Call entry points of the basis glue (basis_r.c). */
#ifndef GAMGPU_BASIS_R_H
#define GAMGPU_BASIS_R_H

#include <Rinternals.h>

/* The model matrix recipe (R/model_matrix.R: model_matrix_plan) as C
 * structs allocated with R_alloc; classed R error when malformed. */
struct gg_xplan;
void gg_xplan_from_r(SEXP plan, size_t n, int p, struct gg_xplan *out);
SEXP gg_xplan_build_r(SEXP plan);

#endif
