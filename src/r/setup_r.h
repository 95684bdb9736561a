/* setup_r.h -- .Call entry points of the setup glue (setup_r.c). */
#ifndef GAMGPU_SETUP_R_H
#define GAMGPU_SETUP_R_H

#include <Rinternals.h>
#include <stddef.h>

SEXP gg_column_summary_r(SEXP x, SEXP nthreads);
SEXP gg_column_extremes_r(SEXP x, SEXP count_only, SEXP nthreads);
SEXP gg_check_rows_r(SEXP y, SEXP w, SEXP offset, SEXP nthreads);
SEXP gg_fill_r(SEXP n, SEXP value, SEXP nthreads);
SEXP gg_variance_r(SEXP x, SEXP nthreads);
SEXP gg_first_rows_r(SEXP x, SEXP v, SEXP nthreads);
SEXP gg_basis_stats_r(SEXP X, SEXP rms_scale, SEXP nthreads);
SEXP gg_basis_stats_list(SEXP scale, SEXP mean, double rowmax, size_t imax);
SEXP gg_sorted_unique_list_r(SEXP xs, SEXP nthreads);
SEXP gg_count_pivots_r(SEXP x, SEXP p);
SEXP gg_response_sums_r(SEXP y, SEXP w);
SEXP gg_rsq_sums_r(SEXP y, SEXP mu, SEXP w, SEXP mean_y);
SEXP gg_values_between_r(SEXP x, SEXP lo, SEXP hi);

#endif
