/* sexp_r.c -- small SEXP builders shared by the glue files. */
#include "sexp_r.h"

#include <string.h>

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
    Rf_setAttrib(list, R_ClassSymbol, Rf_mkString("data.frame"));
    UNPROTECT(2);
    return list;
}

SEXP gg_scalar_string(const char *s)
{
    return Rf_ScalarString(Rf_mkCharCE(s, CE_UTF8));
}

SEXP gg_list_elt(SEXP list, const char *name)
{
    SEXP names = Rf_getAttrib(list, R_NamesSymbol);
    if (TYPEOF(list) != VECSXP || names == R_NilValue)
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
