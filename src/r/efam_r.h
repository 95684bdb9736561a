/* efam_r.h -- the extended-family glue (efam_r.c). */
#ifndef GAMGPU_EFAM_R_H
#define GAMGPU_EFAM_R_H

#include <Rinternals.h>

#include "efam_par.h"

/* An extended family's parameters from R's list, or a classed R error. */
gg_fm_efpar gg_efpar_or_abort(SEXP ef);

SEXP gg_zip_saturated_r(SEXP y, SEXP wt, SEXP ef, SEXP nthreads);
SEXP gg_efam_dev_resids_r(SEXP family, SEXP y, SEXP mu, SEXP wt, SEXP ef, SEXP nthreads);
SEXP gg_efam_dev_sum_r(SEXP family, SEXP y, SEXP mu, SEXP wt, SEXP ef, SEXP nthreads);
SEXP gg_tw_aic_r(SEXP y, SEXP mu, SEXP wt, SEXP ef, SEXP dev, SEXP nthreads);
SEXP gg_efam_rows_r(SEXP family, SEXP link, SEXP eta, SEXP y, SEXP wt, SEXP ef, SEXP deriv);
SEXP gg_efam_deta_r(SEXP family, SEXP link, SEXP mu, SEXP y, SEXP wt, SEXP ef, SEXP deriv);

#endif
