/* session_r.h -- a model session's .Call entry points (session_r.c). */
#ifndef GAMGPU_SESSION_R_H
#define GAMGPU_SESSION_R_H

#include <Rinternals.h>

#include "backend.h"

SEXP gg_session_open_r(SEXP X, SEXP y, SEXP w, SEXP offset, SEXP mode, SEXP ordinal,
                       SEXP nthreads);
SEXP gg_session_close_r(SEXP ptr);
SEXP gg_session_info_r(SEXP ptr);
SEXP gg_session_eval_r(SEXP ptr, SEXP beta, SEXP family, SEXP link, SEXP gram, SEXP theta);
SEXP gg_session_fetch_r(SEXP ptr, SEXP which);
SEXP gg_session_gram_r(SEXP ptr, SEXP w, SEXP z);
SEXP gg_session_leverage_r(SEXP ptr, SEXP w, SEXP M);
SEXP gg_session_mul_r(SEXP ptr, SEXP B, SEXP t);
SEXP gg_session_rows_r(SEXP ptr, SEXP family, SEXP link, SEXP pearson, SEXP gram,
                       SEXP vectors, SEXP theta);
SEXP gg_session_newton_gram_r(SEXP ptr, SEXP family, SEXP link, SEXP theta);
SEXP gg_session_derivs_r(SEXP ptr, SEXP db, SEXP Ml, SEXP flags);
SEXP gg_session_ef_eval_r(SEXP ptr, SEXP beta, SEXP family, SEXP link, SEXP theta, SEXP ef);
SEXP gg_session_ef_rows_r(SEXP ptr, SEXP level, SEXP gram, SEXP xg, SEXP vectors);
SEXP gg_session_ef_newton_r(SEXP ptr, SEXP mask);

/* The session behind ptr (NULL-checked, open) as fit_r.c's final fit
 * takes it, so that the fit runs on the backend that already holds the
 * data and X: its backend, a copy of its data, whether it is the device's
 * and why it left the device ("" if it did not).  Raises a classed error
 * for a closed or reloaded session. */
gg_backend *gg_session_backend(SEXP ptr, gg_data *d, int *on_device, const char **fallback);

#endif
