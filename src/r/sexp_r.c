/* sexp_r.c -- small SEXP builders and checked readers shared by the glue
 * files. */
#include "sexp_r.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors_r.h"

SEXP gg_named_list(int n, const char **names)
{
    SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, n));
    for (int i = 0; i < n; i++)
        SET_STRING_ELT(nm, i, Rf_mkCharCE(names[i], CE_UTF8));
    Rf_setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
}

SEXP gg_as_data_frame(SEXP list, R_xlen_t nrow)
{
    PROTECT(list);
    SEXP rn = PROTECT(Rf_allocVector(INTSXP, 2));
    INTEGER(rn)[0] = NA_INTEGER;
    INTEGER(rn)[1] = -(int) nrow;
    Rf_setAttrib(list, R_RowNamesSymbol, rn);
    SEXP cls = PROTECT(Rf_mkString("data.frame"));
    Rf_setAttrib(list, R_ClassSymbol, cls);
    UNPROTECT(3);
    return list;
}

SEXP gg_scalar_string(const char *s)
{
    SEXP c = PROTECT(Rf_mkCharCE(s, CE_UTF8));
    SEXP out = Rf_ScalarString(c);
    UNPROTECT(1);
    return out;
}

SEXP gg_list_elt(SEXP list, const char *name)
{
    if (TYPEOF(list) != VECSXP)
        return R_NilValue;
    SEXP names = Rf_getAttrib(list, R_NamesSymbol);
    if (TYPEOF(names) != STRSXP || XLENGTH(names) != XLENGTH(list))
        return R_NilValue;
    for (R_xlen_t i = 0; i < XLENGTH(list); i++)
        if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0)
            return VECTOR_ELT(list, i);
    return R_NilValue;
}

SEXP gg_named_doubles(int n, const char **names, const double *values)
{
    SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, n));
    for (int i = 0; i < n; i++) {
        REAL(out)[i] = values[i];
        SET_STRING_ELT(nm, i, Rf_mkCharCE(names[i], CE_UTF8));
    }
    Rf_setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
}

/* ---- checked conversions ------------------------------------------------- */

GG_NORETURN static void bad_value(const char *cls, const char *what, const char *need)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s must be %s", what, need);
    gg_abort(cls, msg);
}

/* The value of a length-one logical, integer or double vector as a double
 * (NA as NaN); raises unless v is one. */
static double one_number(SEXP v, const char *what, const char *cls)
{
    if (XLENGTH(v) != 1)
        bad_value(cls, what, "a single number");
    switch (TYPEOF(v)) {
    case LGLSXP:
        return LOGICAL(v)[0] == NA_LOGICAL ? NAN : (double) LOGICAL(v)[0];
    case INTSXP:
        return INTEGER(v)[0] == NA_INTEGER ? NAN : (double) INTEGER(v)[0];
    case REALSXP:
        return REAL(v)[0];
    default:
        bad_value(cls, what, "a single number");
    }
}

/* x as R would print it in a message: NA for NaN, Inf, or 17 digits */
static void value_text(char *buf, size_t len, double x)
{
    if (isnan(x))
        snprintf(buf, len, "NA");
    else if (isinf(x))
        snprintf(buf, len, x > 0 ? "Inf" : "-Inf");
    else
        snprintf(buf, len, "%.17g", x);
}

const double *gg_y_censor(SEXP y)
{
    SEXP yat = Rf_getAttrib(y, Rf_install("censor"));
    if (yat == R_NilValue) return NULL;
    if (TYPEOF(yat) != REALSXP || XLENGTH(yat) != XLENGTH(y))
        gg_abort("gamgpu_bad_response",
                 "attr(y, \"censor\") must be a double vector with one entry per row");
    return REAL(yat);
}

double gg_as_real(SEXP v, const char *what, double lo, double hi, const char *cls)
{
    const double x = one_number(v, what, cls);
    if (!(isfinite(x) && x >= lo && x <= hi)) {
        char need[200], val[40];
        value_text(val, sizeof val, x);
        snprintf(need, sizeof need, "a finite number in [%g, %g], not %s", lo, hi, val);
        bad_value(cls, what, need);
    }
    return x;
}

int gg_as_int(SEXP v, const char *what, int lo, int hi, const char *cls)
{
    const double x = one_number(v, what, cls);
    if (!(isfinite(x) && x == floor(x) && x >= lo && x <= hi)) {
        char need[200], val[40];
        value_text(val, sizeof val, x);
        snprintf(need, sizeof need, "a whole number in [%d, %d], not %s", lo, hi, val);
        bad_value(cls, what, need);
    }
    return (int) x;
}

size_t gg_as_size(SEXP v, const char *what, double hi, const char *cls)
{
    const double x = one_number(v, what, cls);
    if (hi > 9007199254740992.0)
        hi = 9007199254740992.0;
    if (!(isfinite(x) && x == floor(x) && x >= 0 && x <= hi)) {
        char need[200], val[40];
        value_text(val, sizeof val, x);
        snprintf(need, sizeof need, "a whole number in [0, %.0f], not %s", hi, val);
        bad_value(cls, what, need);
    }
    return (size_t) x;
}

const char *gg_as_utf8(SEXP v, const char *what, const char *cls)
{
    if (TYPEOF(v) != STRSXP || XLENGTH(v) != 1 || STRING_ELT(v, 0) == NA_STRING)
        bad_value(cls, what, "a single string");
    return Rf_translateCharUTF8(STRING_ELT(v, 0));
}

static void list_what(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "'%s'", name);
}

int gg_list_int(SEXP list, const char *name, int dflt, int lo, int hi, const char *cls)
{
    SEXP v = gg_list_elt(list, name);
    char what[96];
    list_what(what, sizeof what, name);
    if (v == R_NilValue) {
        if (dflt == GG_REQUIRED)
            bad_value(cls, what, "given");
        return dflt;
    }
    return gg_as_int(v, what, lo, hi, cls);
}

double gg_list_real(SEXP list, const char *name, double dflt, double lo, double hi,
                    const char *cls)
{
    SEXP v = gg_list_elt(list, name);
    char what[96];
    list_what(what, sizeof what, name);
    return v == R_NilValue ? dflt : gg_as_real(v, what, lo, hi, cls);
}

/* ---- a malloc'd string into R, freed on every path ------------------------ */

static SEXP mkchar_body(void *s) { return Rf_mkCharCE((const char *) s, CE_UTF8); }

static void free_on_jump(void *s, Rboolean jump)
{
    if (jump)
        free(s);
}

SEXP gg_mkchar_free(char *s, SEXP token)
{
    if (s == NULL)
        return Rf_mkChar("");
    SEXP out = R_UnwindProtect(mkchar_body, s, free_on_jump, s, token);
    free(s);
    return out;
}
