/* sexp_r.h -- small SEXP builders and checked readers shared by the glue
 * files. */
#ifndef GAMGPU_SEXP_R_H
#define GAMGPU_SEXP_R_H

#include <Rinternals.h>
#include <stddef.h>

/* A list with the given names (n of them), elements NULL; caller protects. */
SEXP gg_named_list(int n, const char **names);
/* Turn a named list of equal-length vectors into a data.frame in place. */
SEXP gg_as_data_frame(SEXP list, R_xlen_t nrow);
SEXP gg_scalar_string(const char *s);
/* A named double vector: values[i] called names[i]; caller protects. */
SEXP gg_named_doubles(int n, const char **names, const double *values);
/* The element of a named list called name, or R_NilValue. */
SEXP gg_list_elt(SEXP list, const char *name);

/* ---- checked conversions ---------------------------------------------------
 * Each reads one value (a length-one logical, integer or double vector) and
 * raises a classed error (class cls, message naming `what`) through
 * gg_abort when it is missing, NA, not finite, not a whole number where one
 * is needed, or outside [lo, hi] -- so that no double reaches a cast to int
 * or size_t that C leaves undefined. */
int    gg_as_int(SEXP v, const char *what, int lo, int hi, const char *cls);
double gg_as_real(SEXP v, const char *what, double lo, double hi, const char *cls);
/* A whole number in [0, hi] as a size_t (hi at most 2^53). */
size_t gg_as_size(SEXP v, const char *what, double hi, const char *cls);
/* One string, not NA; its bytes in UTF-8 (R memory: valid during the .Call). */
const char *gg_as_utf8(SEXP v, const char *what, const char *cls);

/* The element `name` of a list, checked as above; dflt when the element is
 * absent (NULL).  GG_REQUIRED as dflt makes an absent element an error. */
#define GG_REQUIRED NA_INTEGER
int    gg_list_int(SEXP list, const char *name, int dflt, int lo, int hi, const char *cls);
double gg_list_real(SEXP list, const char *name, double dflt, double lo, double hi,
                    const char *cls);

/* A censored family's second response column, attr(y, "censor") (mgcv's
 * cnorm(), clog(), cpois()): a double vector as long as y, or NULL where y
 * has none. */
const double *gg_y_censor(SEXP y);

/* A CHARSXP (UTF-8) of s, which was malloc'd (or NULL: ""): s is freed on
 * every path, also when the allocation fails and longjmps.  token: from
 * R_MakeUnwindCont(), made and protected by the caller before it took s,
 * since nothing may allocate while s is held unguarded. */
SEXP gg_mkchar_free(char *s, SEXP token);

#endif
