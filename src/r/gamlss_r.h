/* gamlss_r.h -- .Call entry points of the location-scale products and ll()
 * (gamlss_r.c). */
#ifndef GAMGPU_GAMLSS_R_H
#define GAMGPU_GAMLSS_R_H

#include <Rinternals.h>

SEXP gg_ls_gh_r(SEXP X, SEXP jj, SEXP l1, SEXP l2, SEXP i2, SEXP l3, SEXP i3, SEXP l4,
                SEXP i4, SEXP d1b, SEXP d2b, SEXP Hm, SEXP deriv, SEXP nthreads);

SEXP gg_ls_ll_r(SEXP y, SEXP X, SEXP coef, SEXP jj, SEXP fam, SEXP links, SEXP link_par,
                SEXP offsets, SEXP eta, SEXP deriv, SEXP i2, SEXP i3, SEXP i4, SEXP d1b,
                SEXP d2b, SEXP Hm, SEXP nthreads);

SEXP gg_ls_session_ll_r(SEXP ptr, SEXP coef, SEXP jj, SEXP fam, SEXP links, SEXP link_par,
                        SEXP offsets, SEXP deriv, SEXP i2, SEXP i3, SEXP i4, SEXP d1b,
                        SEXP d2b, SEXP Hm);

#endif
