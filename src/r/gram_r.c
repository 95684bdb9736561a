/* gram_r.c -- R glue of the weighted Gram product (gpu_gram() in R) and
 * of the CPU's choice of Gram kernel.
 *
 * mode: 0 = CPU (policy "off", or the caller chose it), 1 = device with a
 * recorded CPU fallback on a device failure ("auto"), 2 = device or a
 * classed error ("required"); see gg_device_outcome().  The device path
 * owns its buffers and has released them before any R error is raised
 * here. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "device_r.h"
#include "errors_r.h"
#include "gpu.h"
#include "gpu_telemetry.h"
#include "gram_cpu.h"
#include "interrupt_r.h"
#include "sexp_r.h"

SEXP gg_gram_r(SEXP X, SEXP w, SEXP z, SEXP mode_, SEXP ordinal_)
{
    if (!Rf_isReal(X) || !Rf_isMatrix(X))
        gg_abort("gamgpu_bad_input", "X must be a double matrix");
    SEXP dim = Rf_getAttrib(X, R_DimSymbol);
    const size_t n = (size_t) INTEGER(dim)[0];
    const int p = INTEGER(dim)[1];
    if (w != R_NilValue && (!Rf_isReal(w) || (size_t) XLENGTH(w) != n))
        gg_abort("gamgpu_bad_input", "w must be a double vector with one value per row of X");
    if (z != R_NilValue && (!Rf_isReal(z) || (size_t) XLENGTH(z) != n))
        gg_abort("gamgpu_bad_input", "z must be a double vector with one value per row of X");
    const int mode = gg_as_int(mode_, "the mode", 0, 2, "gamgpu_bad_input");
    const int ordinal = gg_as_int(ordinal_, "the device ordinal", 0, INT_MAX, "gamgpu_bad_input");
    const double *wp = w == R_NilValue ? NULL : REAL(w);
    const double *zp = z == R_NilValue ? NULL : REAL(z);

    const char *names[] = {"XtWX", "XtWz", "zWz", "device", "fallback"};
    SEXP out = PROTECT(gg_named_list(5, names));
    SEXP A = PROTECT(Rf_allocMatrix(REALSXP, p, p));
    SEXP b = PROTECT(Rf_allocVector(REALSXP, zp ? p : 0));
    double zwz = NA_REAL;

    gg_status st;
    gg_status_clear(&st);
    char device[32] = "cpu";
    const char *fallback = "";
    /* armed for an interrupt around each backend's call (no R error within) */
    int rc = 0;
    if (mode > 0) {
        gg_r_interrupt_arm();
        rc = gg_gpu_gram(ordinal, REAL(X), n, p, wp, zp, REAL(A), REAL(b), &zwz, &st);
        rc = gg_r_interrupt_disarm(rc, &st, "the Gram product");
    }
    if (!gg_device_outcome(mode, rc, ordinal, "gram", &st, device, sizeof device, &fallback)) {
        if (n > INT_MAX)
            gg_abort("gamgpu_bad_input", "the CPU Gram product needs fewer than 2^31 rows");
        gg_status cst;
        gg_status_clear(&cst);
        gg_r_interrupt_arm();
        int rc2 = gg_cpu_gram(REAL(X), n, p, wp, zp, REAL(A), REAL(b), &zwz, 0, NULL, &cst);
        if (gg_r_interrupt_disarm(rc2, &cst, "the Gram product") != 0)
            gg_raise(&cst);
    }
    SET_VECTOR_ELT(out, 0, A);
    SET_VECTOR_ELT(out, 1, b);
    SET_VECTOR_ELT(out, 2, Rf_ScalarReal(zp ? zwz : NA_REAL));
    SET_VECTOR_ELT(out, 3, gg_scalar_string(device));
    SET_VECTOR_ELT(out, 4, gg_scalar_string(fallback));
    UNPROTECT(3);
    return out;
}

/* Which weighted Gram product the CPU takes (gram_cpu.h): mode NULL asks,
 * 0/1/2 sets "auto" (the faster, timed once per size class of p), gamgpu's
 * own kernel or the BLAS's.  Returns list(mode, choice, own_seconds,
 * blas_seconds, class): the middle three by size class of p (< 32, < 128,
 * < 512, larger; choice 1 own, 2 BLAS, 0 not timed yet), class the 1-based
 * size class of p (NA for p NULL). */
SEXP gg_cpu_gram_mode_r(SEXP mode, SEXP p)
{
    if (mode != R_NilValue)
        gg_cpu_gram_set_mode(gg_as_int(mode, "the CPU Gram mode", 0, 2, "gamgpu_bad_input"));
    const int ps[] = {16, 64, 256, 1024};
    const char *names[] = {"mode", "choice", "own_seconds", "blas_seconds", "class"};
    SEXP out = PROTECT(gg_named_list(5, names));
    SET_VECTOR_ELT(out, 4, Rf_ScalarInteger(
        p == R_NilValue ? NA_INTEGER
                        : 1 + gg_cpu_gram_class(gg_as_int(p, "p", 1, INT_MAX, "gamgpu_bad_input"))));
    SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(gg_cpu_gram_mode()));
    SEXP ch = PROTECT(Rf_allocVector(INTSXP, 4));
    SEXP so = PROTECT(Rf_allocVector(REALSXP, 4));
    SEXP sb = PROTECT(Rf_allocVector(REALSXP, 4));
    for (int c = 0; c < 4; c++)
        INTEGER(ch)[c] = gg_cpu_gram_choice(ps[c], REAL(so) + c, REAL(sb) + c);
    SET_VECTOR_ELT(out, 1, ch);
    SET_VECTOR_ELT(out, 2, so);
    SET_VECTOR_ELT(out, 3, sb);
    UNPROTECT(4);
    return out;
}
