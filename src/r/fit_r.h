/* fit_r.h -- .Call entry points of the fitting engine (fit_r.c). */
#ifndef GAMGPU_FIT_R_H
#define GAMGPU_FIT_R_H

#include <Rinternals.h>

SEXP gg_fit(SEXP ses, SEXP family, SEXP link, SEXP S, SEXP off, SEXP L, SEXP lsp0, SEXP spec,
            SEXP control);
SEXP gg_backend_check(SEXP X, SEXP y, SEXP w, SEXP offset, SEXP family, SEXP link,
                      SEXP beta, SEXP M);

#endif
