/* session_r.h -- a model session's .Call entry points (session_r.c). */
#ifndef GAMGPU_SESSION_R_H
#define GAMGPU_SESSION_R_H

#include <Rinternals.h>

#include "backend.h"

SEXP gg_session_open_r(SEXP X, SEXP y, SEXP w, SEXP offset, SEXP load, SEXP control);
SEXP gg_session_close_r(SEXP ptr);
SEXP gg_session_info_r(SEXP ptr);
SEXP gg_session_same_x_r(SEXP ptr, SEXP X, SEXP alias);
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

/* For fit_r.c, whose fit runs on the backend that already holds the data
 * and X.  Each raises a classed error for a closed or reloaded session.
 *
 * gg_session_call runs fn(be, d, ctx, st) on the session's backend as its
 * own operations run: within its thread budget, interrupts armed, and
 * under "auto" a device failure moves the session to the CPU (the data
 * loaded there again) and fn runs once more; then raises the classed
 * error of a failure.  fn must leave no helper thread running when it
 * returns. */
typedef int (*gg_session_fn)(gg_backend *be, const gg_data *d, void *ctx, gg_status *st);
void gg_session_call(SEXP ptr, gg_session_fn fn, void *ctx, const char *what);
/* its data (the arrays R's, kept for the session's life) */
const gg_data *gg_session_data(SEXP ptr);
/* why it left the device ("" if it did not) */
const char *gg_session_fallback(SEXP ptr);
/* what loading it cost: seconds in host-device copies and in building X */
void gg_session_load_seconds(SEXP ptr, double *transfer, double *build);

#endif
