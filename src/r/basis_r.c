/* basis_r.c -- R glue of the C basis evaluators (basis_cr.c,
 * basis_tprs.c): the model matrix recipe of R/model_matrix.R as C structs
 * (xplan.h), for the fit and for building a smooth's columns on the host. */
#include <R.h>
#include <Rinternals.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "basis.h"
#include "basis_r.h"
#include "device_r.h"
#include "errors_r.h"
#include "interrupt.h"
#include "interrupt_r.h"
#include "setup_r.h"
#include "setup_stats.h"
#include "sexp_r.h"
#include "threads.h"
#include "xplan.h"

#define BAD_IN "gamgpu_bad_input"
/* sizes of a basis (k, knots, dimensions): beyond this no basis is meant */
#define GG_MAX_K 1000000

/* The constraint/by map from R's description: drop (1-based column or 0),
 * shift (doubles or NULL), Z (matrix or NULL), by (doubles or NULL). */
static gg_basis_map map_from_r(int k, size_t n, SEXP drop, SEXP shift, SEXP Z, SEXP by)
{
    gg_basis_map map;
    map.k = k;
    /* drop: 0 for none, else a column that is there */
    map.drop = gg_as_int(drop, "basis: the dropped column", 0, k, BAD_IN) - 1;
    const int m = map.drop >= 0 ? k - 1 : k;
    map.shift = NULL;
    if (map.drop >= 0) {
        if (!Rf_isReal(shift) || XLENGTH(shift) != m)
            gg_abort("gamgpu_bad_input", "basis: the sweep shift must have k - 1 values");
        map.shift = REAL(shift);
    }
    map.Z = NULL;
    map.kc = m;
    if (Z != R_NilValue) {
        if (!Rf_isReal(Z) || !Rf_isMatrix(Z) || Rf_nrows(Z) != m)
            gg_abort("gamgpu_bad_input", "basis: Z must be a double matrix with a row per column");
        map.Z = REAL(Z);
        map.kc = Rf_ncols(Z);
    }
    map.col_of = NULL;
    map.by = NULL;
    map.by_code = NULL;
    map.by_level = 0;
    if (by != R_NilValue) {
        if (!Rf_isReal(by) || (size_t) XLENGTH(by) != n)
            gg_abort("gamgpu_bad_input", "basis: by must be doubles, one per row");
        map.by = REAL(by);
    }
    return map;
}

/* ---- the model matrix as a recipe (xplan.h) -----------------------------
 * R (model_matrix_plan() in R/model_matrix.R) describes X as a list of
 * blocks; each is checked here against n and p so that neither backend
 * reads past an array.  Pointers point into the R objects, which the
 * caller keeps alive (they are arguments of the .Call). */

GG_NORETURN static void plan_abort(const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gg_abort("gamgpu_bad_input", msg);
}

static const double *real_or_abort(SEXP v, R_xlen_t len, const char *what)
{
    if (TYPEOF(v) != REALSXP || (len >= 0 && XLENGTH(v) != len))
        plan_abort("model matrix plan: '%s' must be %ld doubles", what,
                 (long) len);
    return REAL(v);
}

/* A whole number in [lo, hi] that the plan must give (sexp_r.h). */
static int int_elt(SEXP b, const char *name, int lo, int hi)
{
    char what[96];
    snprintf(what, sizeof what, "model matrix plan: '%s'", name);
    SEXP v = gg_list_elt(b, name);
    if (v == R_NilValue)
        plan_abort("%s missing", what);
    return gg_as_int(v, what, lo, hi, BAD_IN);
}

/* A thin plate basis (a tp block's or margin's, d covariates, k columns):
 * penalty order m, null space dimension M, knots Xu (nXu x d), UZ
 * ((nXu + M) x k) and shift (d). */
static void tprs_from_r(SEXP b, int d, int k, int *m, int *M, int *nXu, const double **Xu,
                        const double **UZ, const double **shift)
{
    *m = int_elt(b, "m", 0, GG_MAX_K);
    *M = int_elt(b, "M", 1, GG_MAX_K);
    SEXP xu = gg_list_elt(b, "Xu");
    if (TYPEOF(xu) != REALSXP || !Rf_isMatrix(xu) || Rf_ncols(xu) != d)
        plan_abort("model matrix plan: Xu must be a nXu x d matrix");
    *nXu = Rf_nrows(xu);
    *Xu = REAL(xu);
    *UZ = real_or_abort(gg_list_elt(b, "UZ"), ((R_xlen_t) *nXu + *M) * k, "UZ");
    *shift = real_or_abort(gg_list_elt(b, "tshift"), d, "tshift");
}

/* A 1-d thin plate basis's piecewise polynomials, when the plan has them
 * (R/model_matrix.R's tp1_table(): pp_knots, pp_coef, pp_deg from
 * gg_tprs_pp_r below); checked against its d, k, m and nXu.  Without them
 * *deg is 0 and the rows are b' UZ. */
static void tp1_from_r(SEXP b, int d, int k, int m, int nXu, const double **knots,
                       const double **coef, int *deg)
{
    *knots = *coef = NULL;
    *deg = 0;
    SEXP dv = gg_list_elt(b, "pp_deg");
    if (dv == R_NilValue)
        return;
    *deg = gg_as_int(dv, "model matrix plan: 'pp_deg'", 1, 31, BAD_IN);
    if (d != 1 || *deg != gg_tp1_degree(m))
        plan_abort("model matrix plan: piecewise polynomials of degree %d for a thin plate "
                   "basis of %d variables and order %d", *deg, d, m);
    *knots = real_or_abort(gg_list_elt(b, "pp_knots"), nXu, "pp_knots");
    for (int i = 1; i < nXu; i++)
        if (!((*knots)[i - 1] <= (*knots)[i]))
            plan_abort("model matrix plan: 'pp_knots' must be sorted");
    *coef = real_or_abort(gg_list_elt(b, "pp_coef"), ((R_xlen_t) nXu + 1) * k * (*deg + 1),
                          "pp_coef");
}

/* The margins of a GG_XB_MARG block (xplan.h): a list of lists, each with
 * type (gg_xmargin_kind), k, its arrays, and its own drop/shift/Z map. */
static void margins_from_r(SEXP ms, size_t n, int kraw, gg_xblock *x)
{
    if (TYPEOF(ms) != VECSXP || XLENGTH(ms) < 1 || XLENGTH(ms) > GG_XMAX_MARGINS)
        plan_abort("model matrix plan: a margins block has 1 to %d margins", GG_XMAX_MARGINS);
    x->nmarg = (int) XLENGTH(ms);
    long long prod = 1;
    for (int j = 0; j < x->nmarg; j++) {
        SEXP m = VECTOR_ELT(ms, j);
        gg_xmargin *g = &x->marg[j];
        g->kind = (gg_xmargin_kind) int_elt(m, "type", GG_XM_CR, GG_XM_GP);
        g->k = int_elt(m, "k", 1, GG_MAX_K);
        g->d = 1;
        g->map = map_from_r(g->k, n, gg_list_elt(m, "drop"), gg_list_elt(m, "shift"),
                            gg_list_elt(m, "Z"), R_NilValue);
        prod *= g->map.kc;
        if (g->kind == GG_XM_CODE) {
            SEXP code = gg_list_elt(m, "code");
            if (TYPEOF(code) != INTSXP || (size_t) XLENGTH(code) != n)
                plan_abort("model matrix plan: a factor margin's code must be n ints");
            g->code = INTEGER(code);
            continue;
        }
        if (g->kind == GG_XM_TPRS || g->kind == GG_XM_GP)
            g->d = int_elt(m, "d", 1, GG_XMAX_TPRS_D);
        g->x = real_or_abort(gg_list_elt(m, "x"), (R_xlen_t) (n * (size_t) g->d), "x");
        switch (g->kind) {
        case GG_XM_CR:
            if (g->k < 3)
                plan_abort("model matrix plan: a cr margin has k >= 3");
            g->xk = real_or_abort(gg_list_elt(m, "xk"), g->k, "xk");
            g->F = real_or_abort(gg_list_elt(m, "F"), (R_xlen_t) g->k * g->k, "F");
            break;
        case GG_XM_CC:
            if (g->k < 2)
                plan_abort("model matrix plan: a cc margin has k >= 2");
            g->xk = real_or_abort(gg_list_elt(m, "xk"), (R_xlen_t) g->k + 1, "xk");
            g->F = real_or_abort(gg_list_elt(m, "F"), (R_xlen_t) g->k * g->k, "F");
            break;
        case GG_XM_BSPL:
            g->ord = int_elt(m, "ord", 2, GG_XMAX_ORD);
            g->nk = int_elt(m, "nk", g->ord + 1, GG_MAX_K);
            if (g->nk - g->ord != g->k)
                plan_abort("model matrix plan: a B-spline margin has k = nk - ord");
            g->xk = real_or_abort(gg_list_elt(m, "xk"), g->nk, "xk");
            g->F = real_or_abort(gg_list_elt(m, "F"), 4 * (R_xlen_t) g->k, "F");
            g->lo = gg_as_real(gg_list_elt(m, "lo"), "model matrix plan: lo", -HUGE_VAL, HUGE_VAL, BAD_IN);
            g->hi = gg_as_real(gg_list_elt(m, "hi"), "model matrix plan: hi", -HUGE_VAL, HUGE_VAL, BAD_IN);
            if (!(g->lo < g->hi))
                plan_abort("model matrix plan: a B-spline margin has lo < hi");
            break;
        case GG_XM_LINEAR:
            if (g->k != 1)
                plan_abort("model matrix plan: a linear margin has one column");
            break;
        case GG_XM_TPRS:
            tprs_from_r(m, g->d, g->k, &g->m, &g->M, &g->nXu, &g->Xu, &g->UZ, &g->shift);
            tp1_from_r(m, g->d, g->k, g->m, g->nXu, &g->pp_knots, &g->pp_coef, &g->pp_deg);
            break;
        case GG_XM_CP:
            g->ord = int_elt(m, "ord", 2, GG_XMAX_ORD);
            g->nk = int_elt(m, "nk", 3 * g->ord - 1, GG_MAX_K);
            if (g->nk != g->k + 3 * g->ord - 2)
                plan_abort("model matrix plan: a cp margin has nk = k + 3 ord - 2 knots");
            g->xk = real_or_abort(gg_list_elt(m, "xk"), g->nk, "xk");
            g->lo = g->xk[2 * g->ord - 2];
            g->hi = g->xk[g->nk - 1];
            for (int i = 1; i < g->nk; i++)
                if (!(g->xk[i - 1] <= g->xk[i]))
                    plan_abort("model matrix plan: a cp margin's knots must be sorted");
            if (!(g->lo < g->hi && g->xk[g->nk - g->ord - 1] < g->hi))
                plan_abort("model matrix plan: a cp margin's last two knots must differ");
            break;
        case GG_XM_GP:
            tprs_from_r(m, g->d, g->k, &g->m, &g->M, &g->nXu, &g->Xu, &g->UZ, &g->shift);
            if (g->M != 1 && g->M != g->d + 1)
                plan_abort("model matrix plan: a gp margin's null space has 1 or d + 1 columns");
            g->gp_type = int_elt(m, "gp_type", 1, 5);
            g->gp_rho = gg_as_real(gg_list_elt(m, "gp_rho"), "model matrix plan: gp_rho",
                                   0, HUGE_VAL, BAD_IN);
            g->gp_kp = gg_as_real(gg_list_elt(m, "gp_kp"), "model matrix plan: gp_kp", 0, 2,
                                  BAD_IN);
            if (!(g->gp_rho > 0 && g->gp_kp > 0))
                plan_abort("model matrix plan: a gp margin has rho > 0 and 0 < power <= 2");
            break;
        default:
            break;
        }
    }
    if (prod != kraw)
        plan_abort("model matrix plan: a margins block's k is not its margins' product");
}

void gg_xplan_from_r(SEXP plan, size_t n, int p, gg_xplan *out)
{
    SEXP blocks = gg_list_elt(plan, "blocks");
    if (TYPEOF(blocks) != VECSXP)
        plan_abort("model matrix plan: no blocks");
    const int nb = (int) XLENGTH(blocks);
    gg_xblock *B = (gg_xblock *) R_alloc(nb > 0 ? nb : 1, sizeof(gg_xblock));
    memset(B, 0, (size_t) (nb > 0 ? nb : 1) * sizeof(gg_xblock));
    int covered = 0;
    for (int k = 0; k < nb; k++) {
        SEXP b = VECTOR_ELT(blocks, k);
        gg_xblock *x = &B[k];
        x->kind = (gg_xblock_kind) int_elt(b, "kind", 0, INT_MAX);
        x->col0 = int_elt(b, "col0", 1, p) - 1;
        x->ncol = int_elt(b, "ncol", 1, p);
        if (x->ncol > p - x->col0)
            plan_abort("model matrix plan: block %d has bad columns", k + 1);
        covered += x->ncol;
        if (x->kind == GG_XB_DENSE) {
            x->D = real_or_abort(gg_list_elt(b, "D"), (R_xlen_t) (n * (size_t) x->ncol), "D");
            continue;
        }
        if (x->kind == GG_XB_ONES)
            continue;
        if (x->kind != GG_XB_CR && x->kind != GG_XB_TPRS &&
            x->kind != GG_XB_MARG)
            plan_abort("model matrix plan: unknown block kind");
        const int kraw = int_elt(b, "k", 1, GG_MAX_K);
        x->map = map_from_r(kraw, n, gg_list_elt(b, "drop"), gg_list_elt(b, "shift"),
                            gg_list_elt(b, "Z"), gg_list_elt(b, "by"));
        SEXP by_code = gg_list_elt(b, "by_code");
        if (by_code != R_NilValue) {
            if (x->map.by != NULL || TYPEOF(by_code) != INTSXP || (size_t) XLENGTH(by_code) != n)
                plan_abort("model matrix plan: by_code must be n ints, without by");
            x->map.by_code = INTEGER(by_code);
            x->map.by_level = int_elt(b, "by_level", 1, INT_MAX);
        }
        SEXP col_of = gg_list_elt(b, "col_of");
        if (col_of != R_NilValue) {
            if (TYPEOF(col_of) != INTSXP || XLENGTH(col_of) != x->map.kc)
                plan_abort("model matrix plan: col_of must have kc ints");
            int *co = (int *) R_alloc(x->map.kc, sizeof(int));
            int written = 0;
            for (int c = 0; c < x->map.kc; c++) {
                int v = INTEGER(col_of)[c];
                if (v != NA_INTEGER && v > x->ncol)
                    plan_abort("model matrix plan: col_of out of range");
                co[c] = (v == NA_INTEGER || v < 1) ? -1 : v - 1;
                written += co[c] >= 0;
            }
            if (written != x->ncol)
                plan_abort("model matrix plan: col_of writes %d columns, not %d",
                         written, x->ncol);
            x->map.col_of = co;
        } else if (x->map.kc != x->ncol) {
            plan_abort("model matrix plan: block %d maps %d columns, not %d",
                     k + 1, x->map.kc, x->ncol);
        }
        if (x->kind == GG_XB_MARG) {
            margins_from_r(gg_list_elt(b, "margins"), n, kraw, x);
            continue;
        }
        x->d = int_elt(b, "d", 1, GG_MAX_K);
        x->x = real_or_abort(gg_list_elt(b, "x"), (R_xlen_t) (n * (size_t) x->d), "x");
        if (x->kind == GG_XB_CR) {
            if (x->d != 1 || kraw < 3)
                plan_abort("model matrix plan: a cr block is 1-d with k >= 3");
            x->xk = real_or_abort(gg_list_elt(b, "xk"), kraw, "xk");
            x->F = real_or_abort(gg_list_elt(b, "F"), (R_xlen_t) kraw * kraw, "F");
        } else {
            tprs_from_r(b, x->d, kraw, &x->m, &x->M, &x->nXu, &x->Xu, &x->UZ, &x->shift);
            tp1_from_r(b, x->d, kraw, x->m, x->nXu, &x->pp_knots, &x->pp_coef, &x->pp_deg);
        }
    }
    if (covered != p)
        plan_abort("model matrix plan: blocks cover %d of %d columns", covered, p);
    out->n = n;
    out->p = p;
    out->nblocks = nb;
    out->blocks = B;
    out->threads = int_elt(plan, "threads", 1, GG_MAX_THREADS);
    out->tensor_cores = gg_list_int(plan, "tensor_cores", 1, 0, 1, BAD_IN);
    out->tables = NULL;
    out->ntables = 0;
}

void gg_model_data_from_r(SEXP X, SEXP y, SEXP w, SEXP offset, gg_xplan *buf, gg_data *d)
{
    int n, p;
    memset(d, 0, sizeof *d);
    if (X == R_NilValue) {                 /* a cluster's session: the rows' data alone */
        if (XLENGTH(y) > INT_MAX)
            gg_abort(BAD_IN, "y has more rows than a session takes");
        n = (int) XLENGTH(y);
        p = 0;
    } else if (TYPEOF(X) == VECSXP) {
        n = gg_list_int(X, "n", GG_REQUIRED, 1, INT_MAX, BAD_IN);
        p = gg_list_int(X, "p", GG_REQUIRED, 1, INT_MAX, BAD_IN);
        gg_xplan_from_r(X, (size_t) n, p, buf);
        d->xplan = buf;
    } else {
        if (!Rf_isMatrix(X) || TYPEOF(X) != REALSXP)
            gg_abort(BAD_IN, "X must be a double matrix or the recipe to build it");
        n = Rf_nrows(X);
        p = Rf_ncols(X);
        d->X = REAL(X);
    }
    if (TYPEOF(y) != REALSXP || XLENGTH(y) != n ||
        (w != R_NilValue && (TYPEOF(w) != REALSXP || XLENGTH(w) != n)))
        gg_abort(BAD_IN, "y and weights must be double vectors with one entry per row of X");
    if (offset != R_NilValue && (TYPEOF(offset) != REALSXP || XLENGTH(offset) != n))
        gg_abort(BAD_IN, "offset must be NULL or a double vector with one entry per row");
    d->n = (size_t) n;
    d->p = p;
    d->y = REAL(y);
    d->yat = gg_y_censor(y);
    d->pw = w == R_NilValue ? NULL : REAL(w);     /* (NULL: all 1, the caller checks) */
    d->offset = offset == R_NilValue ? NULL : REAL(offset);
}

/* X built on the host from its recipe (the CPU backend's build), for tests
 * and for callers that want the matrix itself. */
SEXP gg_xplan_build_r(SEXP plan)
{
    const int n = gg_list_int(plan, "n", GG_REQUIRED, 1, INT_MAX, BAD_IN);
    const int p = gg_list_int(plan, "p", GG_REQUIRED, 1, INT_MAX, BAD_IN);
    gg_xplan xp;
    gg_xplan_from_r(plan, (size_t) n, p, &xp);
    SEXP X = PROTECT(Rf_allocMatrix(REALSXP, n, p));
    gg_status st;
    gg_status_clear(&st);
    const int prev = gg_threads_set_limit(xp.threads);
    gg_r_interrupt_arm();
    int rc = gg_xplan_fill(&xp, 0, (size_t) n, REAL(X), (size_t) n, &st);
    rc = gg_r_interrupt_disarm(rc, &st, "the model matrix's build");
    gg_threads_set_limit(prev);
    if (rc)
        gg_raise(&st);
    UNPROTECT(1);
    return X;
}

/* X built from its recipe on the device when mode asks (1: with a counted
 * build on the host after a device failure, 2: or a classed error), else
 * on the host; attributes "device" ("cuda:<ordinal>" or "cpu") and
 * "fallback" (why the host built it when the device was asked, else "")
 * say where.  For the bases of a model set up on the host
 * (R/tprs_setup.R). */
SEXP gg_xplan_build_device_r(SEXP plan, SEXP mode_, SEXP ordinal_)
{
    const int n = gg_list_int(plan, "n", GG_REQUIRED, 1, INT_MAX, BAD_IN);
    const int p = gg_list_int(plan, "p", GG_REQUIRED, 1, INT_MAX, BAD_IN);
    const int mode = gg_as_int(mode_, "the mode", 0, 2, BAD_IN);
    const int ordinal = gg_as_int(ordinal_, "the device ordinal", 0, INT_MAX, BAD_IN);
    gg_xplan xp;
    gg_xplan_from_r(plan, (size_t) n, p, &xp);
    SEXP X = PROTECT(Rf_allocMatrix(REALSXP, n, p));
    gg_status st;
    gg_status_clear(&st);
    char device[32] = "cpu";
    const char *fallback = "";
    int rc = 0;
    if (mode > 0) {
        gg_r_interrupt_arm();
        rc = gg_cuda_xplan_build(ordinal, &xp, REAL(X), &st);
        rc = gg_r_interrupt_disarm(rc, &st, "the model matrix's build on the device");
    }
    if (!gg_device_outcome(mode, rc, ordinal, "basis", &st, device, sizeof device, &fallback)) {
        gg_status hst;
        gg_status_clear(&hst);
        const int prev = gg_threads_set_limit(xp.threads);
        gg_r_interrupt_arm();
        int rc2 = gg_xplan_fill(&xp, 0, (size_t) n, REAL(X), (size_t) n, &hst);
        rc2 = gg_r_interrupt_disarm(rc2, &hst, "the model matrix's build");
        gg_threads_set_limit(prev);
        if (rc2)
            gg_raise(&hst);
    }
    Rf_setAttrib(X, Rf_install("device"), gg_scalar_string(device));
    Rf_setAttrib(X, Rf_install("fallback"), gg_scalar_string(fallback));
    UNPROTECT(1);
    return X;
}

/* gg_basis_stats() of X built from its recipe: on the device when mode asks
 * (X built and reduced there; only the statistics come back), as
 * gg_xplan_build_device_r() decides, else X built on the host and reduced
 * there.  list(scale, mean, rowmax, imax (1-based)) as gg_basis_stats_r(),
 * with attributes "device" and "fallback".  For R/basis_facts.R. */
SEXP gg_xplan_stats_device_r(SEXP plan, SEXP rms_scale, SEXP mode_, SEXP ordinal_)
{
    const int n = gg_list_int(plan, "n", GG_REQUIRED, 1, INT_MAX, BAD_IN);
    const int p = gg_list_int(plan, "p", GG_REQUIRED, 1, INT_MAX, BAD_IN);
    const int mode = gg_as_int(mode_, "the mode", 0, 2, BAD_IN);
    const int ordinal = gg_as_int(ordinal_, "the device ordinal", 0, INT_MAX, BAD_IN);
    const int rms = Rf_asLogical(rms_scale) == TRUE;
    gg_xplan xp;
    gg_xplan_from_r(plan, (size_t) n, p, &xp);
    SEXP scale = PROTECT(Rf_allocVector(REALSXP, p));
    SEXP mean = PROTECT(Rf_allocVector(REALSXP, p));
    double rowmax = -1;
    size_t imax = 0;
    gg_status st;
    gg_status_clear(&st);
    char device[32] = "cpu";
    const char *fallback = "";
    int rc = 0;
    if (mode > 0) {
        gg_r_interrupt_arm();
        rc = gg_cuda_xplan_stats(ordinal, &xp, rms, REAL(scale), REAL(mean), &rowmax, &imax,
                                 &st);
        rc = gg_r_interrupt_disarm(rc, &st, "a basis's statistics on the device");
    }
    if (!gg_device_outcome(mode, rc, ordinal, "basis", &st, device, sizeof device, &fallback)) {
        SEXP X = PROTECT(Rf_allocMatrix(REALSXP, n, p));
        gg_status hst;
        gg_status_clear(&hst);
        const int prev = gg_threads_set_limit(xp.threads);
        gg_r_interrupt_arm();
        int rc2 = gg_xplan_fill(&xp, 0, (size_t) n, REAL(X), (size_t) n, &hst);
        rc2 = gg_r_interrupt_disarm(rc2, &hst, "the model matrix's build");
        if (rc2 == 0 && gg_basis_stats(REAL(X), (size_t) n, p, rms, REAL(scale), REAL(mean),
                                       &rowmax, &imax) != 0)
            rc2 = gg_fail(&hst, "gamgpu_host_oom", "no memory for the basis statistics");
        gg_threads_set_limit(prev);
        if (rc2)
            gg_raise(&hst);
        UNPROTECT(1);
    }
    SEXP out = PROTECT(gg_basis_stats_list(scale, mean, rowmax, imax));
    Rf_setAttrib(out, Rf_install("device"), gg_scalar_string(device));
    Rf_setAttrib(out, Rf_install("fallback"), gg_scalar_string(fallback));
    UNPROTECT(3);
    return out;
}

/* A 1-d thin plate basis (knots Xu, nXu x 1; UZ, (nXu + M) x k; penalty
 * order m as stored) as piecewise polynomials for the plan
 * (basis.h's gg_tp1_table), computed over `threads` threads: a list of
 * pp_knots, pp_coef and pp_deg. */
SEXP gg_tprs_pp_r(SEXP Xu, SEXP UZ, SEXP m_, SEXP M_, SEXP threads_)
{
    const int m = gg_as_int(m_, "tp1 table: m", 0, GG_MAX_K, BAD_IN);
    const int M = gg_as_int(M_, "tp1 table: M", 1, GG_MAX_K, BAD_IN);
    const int threads = gg_as_int(threads_, "tp1 table: threads", 1, GG_MAX_THREADS, BAD_IN);
    if (TYPEOF(Xu) != REALSXP || !Rf_isMatrix(Xu) || Rf_ncols(Xu) != 1 || Rf_nrows(Xu) < 1)
        gg_abort(BAD_IN, "tp1 table: Xu must be a one-column double matrix");
    const int K = Rf_nrows(Xu);
    for (int l = 0; l < K; l++)
        if (!R_FINITE(REAL(Xu)[l]))
            gg_abort(BAD_IN, "tp1 table: the knots must be finite");
    if (TYPEOF(UZ) != REALSXP || !Rf_isMatrix(UZ) || Rf_nrows(UZ) != K + M || Rf_ncols(UZ) < 1)
        gg_abort(BAD_IN, "tp1 table: UZ must be a (nXu + M) x k double matrix");
    const int k = Rf_ncols(UZ), D = gg_tp1_degree(m);
    if (D > 31)
        plan_abort("tp1 table: penalty order %d is beyond the 16 a polynomial table takes", m);
    if (M != gg_tprs_order(m, 1))
        plan_abort("tp1 table: a 1-d thin plate basis of order %d has M = %d, not %d",
                   gg_tprs_order(m, 1), gg_tprs_order(m, 1), M);
    SEXP knots = PROTECT(Rf_allocVector(REALSXP, K));
    SEXP coef = PROTECT(Rf_allocVector(REALSXP, ((R_xlen_t) K + 1) * k * (D + 1)));
    gg_status st;
    gg_status_clear(&st);
    const int prev = gg_threads_set_limit(threads);
    gg_r_interrupt_arm();
    int rc = gg_tp1_table(REAL(Xu), K, REAL(UZ), k, m, M, REAL(knots), REAL(coef), threads);
    if (rc == -2)
        rc = gg_interrupt_fail(&st, "a thin plate basis's polynomials");
    else if (rc != 0)
        rc = gg_fail(&st, "gamgpu_host_oom", "tp1 table: out of host memory");
    rc = gg_r_interrupt_disarm(rc, &st, "a thin plate basis's polynomials");
    gg_threads_set_limit(prev);
    if (rc)
        gg_raise(&st);
    const char *names[] = {"pp_knots", "pp_coef", "pp_deg", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, knots);
    SET_VECTOR_ELT(out, 1, coef);
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(D));
    UNPROTECT(3);
    return out;
}

/* mgcv's thin plate construction from knots (basis.h's gg_tprs_construct):
 * Xu the nk x d knots (shifted, in mgcv's order), m the penalty order as
 * stored, k the basis dimension; the Lanczos products over `threads`
 * threads.  A list of UZ ((nk + M) x k), S (k x k, unsymmetrized and
 * unscaled) and ev (the k eigenvalues kept). */
SEXP gg_tprs_construct_r(SEXP Xu, SEXP m_, SEXP k_, SEXP threads_)
{
    const int m = gg_as_int(m_, "tp construction: m", 0, GG_MAX_K, BAD_IN);
    const int k = gg_as_int(k_, "tp construction: k", 2, GG_MAX_K, BAD_IN);
    SEXP Xus = PROTECT(Rf_allocVector(VECSXP, 1));
    SET_VECTOR_ELT(Xus, 0, Xu);
    SEXP ms = PROTECT(Rf_ScalarInteger(m)), ks = PROTECT(Rf_ScalarInteger(k));
    SEXP out = gg_tprs_construct_all_r(Xus, ms, ks, threads_);
    UNPROTECT(3);
    return VECTOR_ELT(out, 0);
}

/* Several thin plate constructions side by side (a model's "tp" smooths
 * under gam()'s methods: R/tprs_setup.R, tprs_stand_ins()): Xus a list
 * of knot matrices, m and k their penalty orders and basis dimensions;
 * `threads` split between them, each construction's E products over its
 * share (one thread: mgcv's arithmetic to the bit).  A list of
 * gg_tprs_construct_r()'s results. */
typedef struct construct_job {
    const double *xu;
    int nk, d, m, k, threads, rc;
    double *UZ, *S, *ev;
} construct_job;

static void *construct_one(void *arg)
{
    construct_job *J = arg;
    J->rc = gg_tprs_construct(J->xu, J->nk, J->d, J->m, J->k, J->threads, J->UZ, J->S, J->ev);
    return NULL;
}

SEXP gg_tprs_construct_all_r(SEXP Xus, SEXP m_, SEXP k_, SEXP threads_)
{
    if (TYPEOF(Xus) != VECSXP || TYPEOF(m_) != INTSXP || TYPEOF(k_) != INTSXP ||
        XLENGTH(m_) != XLENGTH(Xus) || XLENGTH(k_) != XLENGTH(Xus) || XLENGTH(Xus) < 1)
        gg_abort(BAD_IN, "tp construction: a list of knot matrices, with an integer m and k each");
    const int nb = (int) XLENGTH(Xus);
    const int threads = gg_as_int(threads_, "tp construction: threads", 1, GG_MAX_THREADS, BAD_IN);
    construct_job *J = (construct_job *) R_alloc(nb, sizeof(construct_job));
    SEXP out = PROTECT(Rf_allocVector(VECSXP, nb));
    const char *names[] = {"UZ", "S", "ev", ""};
    for (int b = 0; b < nb; b++) {
        SEXP Xu = VECTOR_ELT(Xus, b);
        const int m = INTEGER(m_)[b], k = INTEGER(k_)[b];
        if (TYPEOF(Xu) != REALSXP || !Rf_isMatrix(Xu) || Rf_ncols(Xu) < 1 || Rf_nrows(Xu) < 2)
            gg_abort(BAD_IN, "tp construction: Xu must be a double matrix of knots");
        const int nk = Rf_nrows(Xu), d = Rf_ncols(Xu);
        for (R_xlen_t l = 0; l < XLENGTH(Xu); l++)
            if (!R_FINITE(REAL(Xu)[l]))
                gg_abort(BAD_IN, "tp construction: the knots must be finite");
        if (m == NA_INTEGER || m < 0 || m > GG_MAX_K || k == NA_INTEGER)
            gg_abort(BAD_IN, "tp construction: m and k must be counts");
        const int M = gg_tprs_null_space_dim(m, d);
        if (k <= M || k >= nk) {
            char msg[160];
            snprintf(msg, sizeof msg, "tp construction: k = %d must lie between the null "
                     "space's %d and the %d knots", k, M, nk);
            gg_abort(BAD_IN, msg);
        }
        SEXP r = Rf_mkNamed(VECSXP, names);
        SET_VECTOR_ELT(out, b, r);
        SET_VECTOR_ELT(r, 0, Rf_allocMatrix(REALSXP, nk + M, k));
        SET_VECTOR_ELT(r, 1, Rf_allocMatrix(REALSXP, k, k));
        SET_VECTOR_ELT(r, 2, Rf_allocVector(REALSXP, k));
        /* (the first threads % nb constructions take one thread more) */
        const int share = threads / nb + (b < threads % nb);
        J[b] = (construct_job) {REAL(Xu), nk, d, m, k, share > 0 ? share : 1, 0,
                                REAL(VECTOR_ELT(r, 0)), REAL(VECTOR_ELT(r, 1)),
                                REAL(VECTOR_ELT(r, 2))};
    }
    const int prev = gg_threads_set_limit(threads);
    gg_run_jobs(nb, construct_one, J, sizeof(construct_job));
    gg_threads_set_limit(prev);
    for (int b = 0; b < nb; b++) {
        if (J[b].rc == -1)
            gg_abort("gamgpu_host_oom", "tp construction: out of host memory");
        if (J[b].rc != 0)
            gg_abort("gamgpu_numerical",
                     "tp construction: LAPACK's dstedc failed on the Lanczos matrix");
    }
    UNPROTECT(1);
    return out;
}
