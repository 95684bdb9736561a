/* mvn_r.h -- .Call entry point of mgcv's mvn() log likelihood from the
 * rows' sufficient statistics (mvn_r.c). */
#ifndef GAMGPU_MVN_R_H
#define GAMGPU_MVN_R_H

#include <Rinternals.h>

SEXP gg_mvn_ll_r(SEXP XX, SEXP yX, SEXP yty, SEXP n, SEXP coef, SEXP lpi, SEXP d1b);

#endif
