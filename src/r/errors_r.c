/* errors_r.c -- turning a failed gg_status into a classed R condition.
 *
 * Called only from glue, after the pure-C callee has released everything
 * it owned, so the longjmp of the R error leaks nothing.  The condition is
 * built and signalled by gamgpu_abort() in R (R/conditions.R), so C and R
 * errors have the same classes and shape. */
#include "errors_r.h"

#include <Rinternals.h>

static SEXP namespace_env(void)
{
    SEXP name = PROTECT(Rf_mkString("gamgpu"));
    SEXP ns = R_FindNamespace(name);
    UNPROTECT(1);
    return ns;
}

static void signal(const char *fun, const char *cls, const char *msg)
{
    SEXP ns = PROTECT(namespace_env());
    /* every argument protected before the next allocation (Rf_lang4
     * allocates; symbols from Rf_install are never collected) */
    SEXP s_cls = PROTECT(Rf_mkString(cls));
    SEXP s_msg = PROTECT(Rf_mkString(msg));
    SEXP sym = Rf_install(fun);
    SEXP call = PROTECT(Rf_lang4(sym, s_cls, s_msg, R_NilValue));
    SEXP tag = Rf_install("call");
    SET_TAG(CDR(CDDR(call)), tag);
    Rf_eval(call, ns);
    UNPROTECT(4);
}

void gg_raise(const gg_status *st)
{
    signal("gamgpu_abort", st->cls[0] ? st->cls : "gamgpu_internal_error",
           st->msg[0] ? st->msg : "unknown failure");
    /* gamgpu_abort() never returns; this is unreachable but keeps the
     * noreturn promise if it ever did. */
    Rf_error("%s", st->msg);
}

void gg_raise_if(const gg_status *st)
{
    if (st->failed)
        gg_raise(st);
}

void gg_abort(const char *cls, const char *msg)
{
    gg_status st;
    gg_status_clear(&st);
    gg_fail(&st, cls, "%s", msg);
    gg_raise(&st);
}
