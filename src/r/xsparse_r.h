/* xsparse_r.h -- .Call entry points of xsparse_r.c. */
#ifndef GAMGPU_XSPARSE_R_H
#define GAMGPU_XSPARSE_R_H

#include <Rinternals.h>

SEXP gg_xsparse_mode_r(SEXP mode);
SEXP gg_xsparse_check_r(SEXP plan, SEXP w, SEXP z, SEXP beta, SEXP V, SEXP B, SEXP U);
SEXP gg_xsparse_takes_r(SEXP plan);

#endif
