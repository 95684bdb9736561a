/* cox_r.h -- .Call entry points of cox.ph()'s rows (cox_r.c). */
#ifndef GAMGPU_COX_R_H
#define GAMGPU_COX_R_H

#include <Rinternals.h>

SEXP gg_cox_ll_r(SEXP eta, SEXP X, SEXP grp, SEXP event, SEXP nt, SEXP gstr, SEXP level,
                 SEXP d1b, SEXP d2b, SEXP W, SEXP nthreads);
SEXP gg_cox_session_ll_r(SEXP ptr, SEXP coef, SEXP offset, SEXP grp, SEXP event, SEXP nt,
                         SEXP gstr, SEXP level, SEXP d1b, SEXP d2b, SEXP W);
SEXP gg_cox_hazard_r(SEXP eta, SEXP X, SEXP grp, SEXP event, SEXP nt, SEXP wt, SEXP order,
                     SEXP residuals, SEXP nthreads);

#endif
