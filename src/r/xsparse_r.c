/* xsparse_r.c -- R glue of the sparse model matrix rows (xsparse.h): the
 * mode the CPU backend takes them under (options(gamgpu.cpu_x)) and one
 * pass of every product from a recipe, for tests against the dense X. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <string.h>

#include "basis_r.h"
#include "errors_r.h"
#include "interrupt_r.h"
#include "sexp_r.h"
#include "threads.h"
#include "xplan.h"
#include "xsparse.h"
#include "xsparse_r.h"

SEXP gg_xsparse_mode_r(SEXP mode)
{
    if (mode != R_NilValue)
        gg_xsparse_set_mode(gg_as_int(mode, "the sparse rows' mode", 0, 2, "gamgpu_bad_input"));
    return Rf_ScalarInteger(gg_xsparse_mode());
}

static const double *doubles_or_null(SEXP v, R_xlen_t len, const char *what)
{
    if (v == R_NilValue)
        return NULL;
    if (TYPEOF(v) != REALSXP || XLENGTH(v) != len) {
        gg_status st;
        gg_status_clear(&st);
        gg_fail(&st, "gamgpu_bad_input", "%s must be a double vector of length %lld", what,
                (long long) len);
        gg_raise(&st);
    }
    return REAL(v);
}

/* The recipe compiled and every product once: A = X'WX, b = X'Wz, zwz,
 * eta = X beta, h = w x' V x, XB = X B, XtU = X' U (B p x k, U n x k). */
SEXP gg_xsparse_check_r(SEXP plan, SEXP w_, SEXP z_, SEXP beta_, SEXP V_, SEXP B_, SEXP U_)
{
    const int n = gg_list_int(plan, "n", GG_REQUIRED, 1, INT_MAX, "gamgpu_bad_input");
    const int p = gg_list_int(plan, "p", GG_REQUIRED, 1, INT_MAX, "gamgpu_bad_input");
    if (TYPEOF(B_) != REALSXP || !Rf_isMatrix(B_) || Rf_nrows(B_) != p ||
        TYPEOF(U_) != REALSXP || !Rf_isMatrix(U_) || Rf_nrows(U_) != n ||
        Rf_ncols(U_) != Rf_ncols(B_))
        gg_abort("gamgpu_bad_input", "B must be a p x k and U an n x k double matrix");
    const int k = Rf_ncols(B_);
    const double *w = doubles_or_null(w_, n, "w"), *z = doubles_or_null(z_, n, "z");
    const double *beta = doubles_or_null(beta_, p, "beta");
    const double *V = doubles_or_null(V_, (R_xlen_t) p * p, "V");
    if (w == NULL || z == NULL || beta == NULL || V == NULL)
        gg_abort("gamgpu_bad_input", "w, z, beta and V must be given");
    gg_xplan xp;
    gg_xplan_from_r(plan, (size_t) n, p, &xp);
    const char *names[] = {"A", "b", "zwz", "eta", "h", "XB", "XtU", "Q", "nnz", "pd", "ngen", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, Rf_allocMatrix(REALSXP, p, p));
    SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, p));
    SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, 1));
    SET_VECTOR_ELT(out, 3, Rf_allocVector(REALSXP, n));
    SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, n));
    SET_VECTOR_ELT(out, 5, Rf_allocMatrix(REALSXP, n, k));
    SET_VECTOR_ELT(out, 6, Rf_allocMatrix(REALSXP, p, k));
    gg_status st;
    gg_status_clear(&st);
    gg_xsparse xs;
    char why[160];
    const int prev = gg_threads_set_limit(xp.threads);
    gg_r_interrupt_arm();
    int rc = gg_xsparse_compile(&xp, &xs, why, sizeof why, &st);
    const int local = rc == 0;
    if (rc == 0) rc = gg_xsparse_fill_dense(&xs, &st);
    if (rc == 0) rc = gg_xsparse_gram(&xs, w, z, REAL(VECTOR_ELT(out, 0)),
                                      REAL(VECTOR_ELT(out, 1)), REAL(VECTOR_ELT(out, 2)), &st);
    if (rc == 0) rc = gg_xsparse_xbeta(&xs, beta, NULL, REAL(VECTOR_ELT(out, 3)), &st);
    if (rc == 0) rc = gg_xsparse_leverage(&xs, V, w, REAL(VECTOR_ELT(out, 4)), &st);
    if (rc == 0) rc = gg_xsparse_xmul(&xs, REAL(B_), k, REAL(VECTOR_ELT(out, 5)), &st);
    if (rc == 0) rc = gg_xsparse_xtmul(&xs, REAL(U_), k, REAL(VECTOR_ELT(out, 6)), &st);
    SET_VECTOR_ELT(out, 7, Rf_ScalarInteger(local ? xs.Q : NA_INTEGER));
    SET_VECTOR_ELT(out, 8, Rf_ScalarInteger(local ? xs.nnz : NA_INTEGER));
    SET_VECTOR_ELT(out, 9, Rf_ScalarInteger(local ? xs.pd : NA_INTEGER));
    SET_VECTOR_ELT(out, 10, Rf_ScalarInteger(local ? xs.ngen : NA_INTEGER));
    if (local)
        gg_xsparse_free(&xs);
    rc = gg_r_interrupt_disarm(rc < 0 ? rc : 0, &st, "the sparse rows' products");
    gg_threads_set_limit(prev);
    if (rc)
        gg_raise(&st);
    if (!local) {
        gg_fail(&st, "gamgpu_unsupported_term", "not local: %s", why);
        gg_raise(&st);
    }
    UNPROTECT(1);
    return out;
}

/* Whether the CPU backend would take the recipe as sparse rows under the
 * current mode (options(gamgpu.cpu_x)): for a model whose X mgcv's setup
 * built on every row, the recipe then replaces it. */
SEXP gg_xsparse_takes_r(SEXP plan)
{
    const int n = gg_list_int(plan, "n", GG_REQUIRED, 1, INT_MAX, "gamgpu_bad_input");
    const int p = gg_list_int(plan, "p", GG_REQUIRED, 1, INT_MAX, "gamgpu_bad_input");
    gg_xplan xp;
    gg_xplan_from_r(plan, (size_t) n, p, &xp);
    gg_status st;
    gg_status_clear(&st);
    gg_xsparse xs;
    char why[160];
    const int rc = gg_xsparse_compile(&xp, &xs, why, sizeof why, &st);
    if (rc < 0)
        gg_raise(&st);
    const int takes = rc == 0 && gg_xsparse_wanted(&xs);
    if (rc == 0)
        gg_xsparse_free(&xs);
    return Rf_ScalarLogical(takes);
}
