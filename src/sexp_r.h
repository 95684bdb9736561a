/* sexp_r.h -- small SEXP builders shared by the glue files. */
#ifndef GAMGPU_SEXP_R_H
#define GAMGPU_SEXP_R_H

#include <Rinternals.h>

/* A list with the given names (n of them), elements NULL; caller protects. */
SEXP gg_named_list(int n, const char **names);
/* Turn a named list of equal-length vectors into a data.frame in place. */
SEXP gg_as_data_frame(SEXP list, R_xlen_t nrow);
SEXP gg_scalar_string(const char *s);
/* A named double vector: values[i] called names[i]; caller protects. */
SEXP gg_named_doubles(int n, const char **names, const double *values);
/* The element of a named list called name, or R_NilValue. */
SEXP gg_list_elt(SEXP list, const char *name);

#endif
