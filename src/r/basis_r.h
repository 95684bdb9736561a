/* basis_r.h -- .Call entry points of the basis glue (basis_r.c). */
#ifndef GAMGPU_BASIS_R_H
#define GAMGPU_BASIS_R_H

#include <Rinternals.h>

/* The model matrix recipe (R/model_matrix.R: model_matrix_plan) as C
 * structs allocated with R_alloc; classed R error when malformed. */
struct gg_xplan;
struct gg_data;
void gg_xplan_from_r(SEXP plan, size_t n, int p, struct gg_xplan *out);

/* A model's data as the backends take it (backend.h's gg_data): X a double
 * matrix, or the recipe the backend builds it from (filled into buf), its
 * response y, prior weights w (NULL: all 1) and offset (NULL or one per row) checked
 * against it; no AR1 residuals.  A classed R error otherwise. */
void gg_model_data_from_r(SEXP X, SEXP y, SEXP w, SEXP offset, struct gg_xplan *buf,
                          struct gg_data *d);
SEXP gg_xplan_build_r(SEXP plan);
SEXP gg_xplan_build_device_r(SEXP plan, SEXP mode, SEXP ordinal);
SEXP gg_xplan_stats_device_r(SEXP plan, SEXP rms_scale, SEXP mode, SEXP ordinal);
SEXP gg_tprs_pp_r(SEXP Xu, SEXP UZ, SEXP m, SEXP M, SEXP threads);
SEXP gg_tprs_construct_r(SEXP Xu, SEXP m, SEXP k, SEXP threads);
SEXP gg_tprs_construct_all_r(SEXP Xus, SEXP m, SEXP k, SEXP threads);

#endif
