/* family_r.h -- the family glue (family_r.c): the family lookup fit_r.c
 * shares, and the .Call entry point over a family's rows. */
#ifndef GAMGPU_FAMILY_R_H
#define GAMGPU_FAMILY_R_H

#include <Rinternals.h>

#include "family.h"

/* The family and link named by two strings, its theta unset, or a classed
 * R error. */
gg_family gg_family_named_or_abort(SEXP family, SEXP link);
/* The same with negbin's theta or Tweedie's p (NULL for the others). */
gg_family gg_family_or_abort(SEXP family, SEXP link, SEXP theta);

SEXP gg_family_rows(SEXP family, SEXP link, SEXP eta, SEXP y, SEXP wt, SEXP theta);
SEXP gg_log_density_r(SEXP which, SEXP x, SEXP a, SEXP b);
SEXP gg_sum_spread_r(SEXP t, SEXP idx, SEXP v, SEXP op);
SEXP gg_family_aic_r(SEXP family, SEXP y, SEXP mu, SEXP wt, SEXP dev, SEXP nthreads);
SEXP gg_working_residuals_r(SEXP family, SEXP link, SEXP theta, SEXP y, SEXP mu, SEXP eta,
                            SEXP wt, SEXP canonical, SEXP nthreads);

#endif
