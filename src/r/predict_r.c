/* predict_r.c -- R glue of the prediction rows (predict.gam_gpu() in
 * R/predict.R): fit = X beta and se.fit = sqrt(max(0, x_i' V x_i)) for
 * every row of the lp matrix X, on the device (cuda_predict.c) or the CPU
 * twin (predict_cpu.c).
 *
 * mode: 0 = CPU (policy "off"), 1 = device with a recorded CPU fallback on
 * a device failure ("auto"), 2 = device or a classed error ("required").
 * The device path has released all its buffers before any R error is
 * raised here. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <math.h>

#include "device_r.h"
#include "errors_r.h"
#include "gpu.h"
#include "gpu_telemetry.h"
#include "interrupt.h"
#include "interrupt_r.h"
#include "predict_cpu.h"
#include "sexp_r.h"
#include "threads.h"

SEXP gg_predict_r(SEXP X, SEXP beta, SEXP V, SEXP mode_, SEXP ordinal_, SEXP chunk_rows_,
                  SEXP threads_)
{
    if (!Rf_isReal(X) || !Rf_isMatrix(X))
        gg_abort("gamgpu_bad_input", "predict: X must be a double matrix");
    SEXP dim = Rf_getAttrib(X, R_DimSymbol);
    const size_t n = (size_t) INTEGER(dim)[0];
    const int p = INTEGER(dim)[1];
    if (p < 1)
        gg_abort("gamgpu_bad_input", "predict: the model has no coefficients");
    if (!Rf_isReal(beta) || XLENGTH(beta) != (R_xlen_t) p)
        gg_abort("gamgpu_bad_input",
                 "predict: beta must be a double vector with one value per column of X");
    if (!Rf_isReal(V) || !Rf_isMatrix(V) || Rf_nrows(V) != p || Rf_ncols(V) != p)
        gg_abort("gamgpu_bad_input", "predict: V must be a p x p double matrix, p = ncol(X)");
    const int mode = gg_as_int(mode_, "predict: the mode", 0, 2, "gamgpu_bad_input");
    const int ordinal = gg_as_int(ordinal_, "predict: the device ordinal", 0, INT_MAX,
                                  "gamgpu_bad_input");
    const int threads = gg_as_int(threads_, "predict: threads", 1, GG_MAX_THREADS,
                                  "gamgpu_bad_input");
    /* rows per device chunk (option gamgpu.predict_chunk_rows): a whole
     * number of rows, 0 for no limit; Inf is no limit too (0), rather than
     * a cast C leaves undefined */
    const size_t chunk = Rf_isReal(chunk_rows_) && XLENGTH(chunk_rows_) == 1 &&
                         REAL(chunk_rows_)[0] == R_PosInf
        ? 0
        : gg_as_size(chunk_rows_, "predict: the chunk size (rows)", 0x1p53, "gamgpu_bad_input");

    const char *names[] = {"fit", "se.fit", "backend", "fallback"};
    SEXP out = PROTECT(gg_named_list(4, names));
    SEXP fit = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    SEXP se = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));

    gg_status st;
    gg_status_clear(&st);
    char backend[32] = "cpu";
    const char *fallback = "";
    /* armed for an interrupt around each backend's call (no R error within) */
    int rc = 0;
    if (mode > 0) {
        gg_r_interrupt_arm();
        rc = gg_gpu_predict(ordinal, REAL(X), n, p, REAL(beta), REAL(V), chunk, REAL(fit),
                            REAL(se), &st);
        rc = gg_r_interrupt_disarm(rc, &st, "the prediction");
    }
    if (!gg_device_outcome(mode, rc, ordinal, "predict", &st, backend, sizeof backend,
                           &fallback)) {
        gg_status cst;
        gg_status_clear(&cst);
        const int prev = gg_threads_set_limit(threads);
        gg_r_interrupt_arm();
        int rc2 = gg_cpu_predict(REAL(X), n, p, REAL(beta), REAL(V), REAL(fit),
                                 REAL(se), threads, &cst);
        rc2 = gg_r_interrupt_disarm(rc2, &cst, "the prediction");
        gg_threads_set_limit(prev);
        if (rc2 != 0)
            gg_raise(&cst);
    }
    /* se.fit = sqrt(pmax(0, se2)) as predict.gam does (NaN stays NaN) */
    double *s = REAL(se);
    for (size_t i = 0; i < n; i++)
        s[i] = sqrt(s[i] < 0 ? 0.0 : s[i]);
    SET_VECTOR_ELT(out, 0, fit);
    SET_VECTOR_ELT(out, 1, se);
    SET_VECTOR_ELT(out, 2, gg_scalar_string(backend));
    SET_VECTOR_ELT(out, 3, gg_scalar_string(fallback));
    UNPROTECT(3);
    return out;
}
