/* family_r.c -- the family arithmetic for R, outside the fit: the family
 * and link of two strings (gg_family_or_abort, also used by fit_r.c), each
 * row's family quantities (gg_family_rows) and the aic's log densities
 * (gg_log_density_r), for tests against R's family objects and densities,
 * the sums over rows of per-value terms of R/family_ls.R's family$ls()
 * (gg_sum_spread_r), and the aic of an outer fit at its scale
 * (gg_family_aic_r).
 * The summaries over all rows that the gam object needs are
 * family_stats.c's, run by the fit itself (fit_r.c). */
#include <R.h>
#include <Rinternals.h>

#include <float.h>
#include <string.h>

#include "errors_r.h"
#include "family.h"
#include "family_dens.h"
#include "family_stats.h"
#include "family_r.h"
#include "sexp_r.h"
#include "threads.h"

/* The family and link named by two strings, its theta unset, or a
 * classed R error. */
gg_family gg_family_named_or_abort(SEXP family, SEXP link)
{
    if (!Rf_isString(family) || !Rf_isString(link) || XLENGTH(family) < 1 || XLENGTH(link) < 1)
        gg_abort("gamgpu_bad_family", "family and link must be strings");
    gg_status st;
    gg_status_clear(&st);
    gg_family f;
    if (gg_family_lookup(CHAR(STRING_ELT(family, 0)), CHAR(STRING_ELT(link, 0)), &f, &st))
        gg_raise(&st);
    return f;
}

/* The family and link named by two strings (and negbin's theta: NULL for
 * the families without one), or a classed R error. */
gg_family gg_family_or_abort(SEXP family, SEXP link, SEXP theta)
{
    gg_family f = gg_family_named_or_abort(family, link);
    if (f.fam == GG_FAM_NEGBIN) {
        if (theta == R_NilValue)
            gg_abort("gamgpu_bad_family", "the negbin family needs its theta");
        f.theta = gg_as_real(theta, "theta", DBL_MIN, DBL_MAX, "gamgpu_bad_family");
    } else if (f.fam == GG_FAM_TWEEDIE) {
        if (theta == R_NilValue)
            gg_abort("gamgpu_bad_family", "the tweedie family needs its power p");
        f.theta = gg_as_real(theta, "p", 1, 2, "gamgpu_bad_family");
        if (!(f.theta > 1))
            gg_abort("gamgpu_bad_family", "the Tweedie power p must lie in (1, 2]");
    }
    return f;
}

SEXP gg_family_rows(SEXP family, SEXP link, SEXP eta, SEXP y, SEXP wt, SEXP theta)
{
    const gg_family f = gg_family_or_abort(family, link, theta);
    if (TYPEOF(eta) != REALSXP || TYPEOF(y) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "eta, y and wt must be double vectors");
    R_xlen_t n = XLENGTH(eta);
    if (XLENGTH(y) != n || XLENGTH(wt) != n) gg_abort("gamgpu_bad_input", "eta, y and wt must have equal lengths");
    const char *names[] = {"mu", "mu.eta", "variance", "dev.resids", "linkfun", "mustart",
                           "w", "z"};
    SEXP res = PROTECT(gg_named_list(8, names));
    for (int i = 0; i < 8; i++) SET_VECTOR_ELT(res, i, Rf_allocVector(REALSXP, n));
    double *o[8];
    for (int i = 0; i < 8; i++) o[i] = REAL(VECTOR_ELT(res, i));
    const double *e = REAL(eta), *yy = REAL(y), *ww = REAL(wt);
    for (R_xlen_t i = 0; i < n; i++) {
        double mu = gg_linkinv(gg_family_link(&f), e[i]);
        o[0][i] = mu;
        o[1][i] = gg_mu_eta(gg_family_link(&f), e[i]);
        o[2][i] = gg_variance(&f, mu);
        o[3][i] = gg_dev_resid(&f, yy[i], mu, ww[i]);
        o[4][i] = gg_linkfun(gg_family_link(&f), mu);
        o[5][i] = gg_mustart(f.fam, yy[i], ww[i]);
        double m2;
        gg_irls_row(&f, yy[i], ww[i], 0.0, e[i], &m2, &o[6][i], &o[7][i]);
    }
    UNPROTECT(1);
    return res;
}

/* log dpois(x, a), log dbinom(x, a, b) or log dgamma(x, a, scale = b), by
 * the C densities of the fit's aic (family_dens.c), for tests against R's:
 * list(value, nonint = rows R would warn about). */
SEXP gg_log_density_r(SEXP which, SEXP x, SEXP a, SEXP b)
{
    const char *w = gg_as_utf8(which, "which", "gamgpu_bad_input");
    const int kind = strcmp(w, "pois") == 0 ? 0 : strcmp(w, "binom") == 0 ? 1
                   : strcmp(w, "gamma") == 0 ? 2 : -1;
    if (kind < 0)
        gg_abort("gamgpu_bad_input", "which must be \"pois\", \"binom\" or \"gamma\"");
    const R_xlen_t n = Rf_isReal(x) ? XLENGTH(x) : -1;
    if (n < 0 || !Rf_isReal(a) || XLENGTH(a) != n || !Rf_isReal(b) || XLENGTH(b) != n)
        gg_abort("gamgpu_bad_input", "x, a and b must be double vectors of one length");
    const char *names[] = {"value", "nonint"};
    SEXP res = PROTECT(gg_named_list(2, names));
    SEXP v = Rf_allocVector(REALSXP, n);
    SET_VECTOR_ELT(res, 0, v);
    int bad = 0;
    const double *xx = REAL(x), *aa = REAL(a), *bb = REAL(b);
    double *o = REAL(v);
    for (R_xlen_t i = 0; i < n; i++)
        o[i] = kind == 0 ? gg_ldpois(xx[i], aa[i], &bad)
             : kind == 1 ? gg_ldbinom(xx[i], aa[i], bb[i], &bad)
                         : gg_ldgamma(xx[i], aa[i], bb[i]);
    SET_VECTOR_ELT(res, 1, Rf_ScalarInteger(bad));
    UNPROTECT(1);
    return res;
}

/* gg_sum_spread() for R: sum(t[idx] op v) without the n-vectors (op 0: *,
 * 1: -, 2: /, 3: t[idx] alone; R/family_ls.R). */
SEXP gg_sum_spread_r(SEXP t, SEXP idx, SEXP v, SEXP op)
{
    const int o = Rf_asInteger(op);
    if (!Rf_isReal(t) || !Rf_isInteger(idx) || o < 0 || o > 3 ||
        (o < 3 && (!Rf_isReal(v) || XLENGTH(v) != XLENGTH(idx))))
        gg_abort("gamgpu_bad_input",
                 "t must be double, idx integer, v double of idx's length, op 0 to 3");
    const R_xlen_t n = XLENGTH(idx), nt = XLENGTH(t);
    const int *ix = INTEGER(idx);
    for (R_xlen_t r = 0; r < n; r++)
        if (ix[r] < 1 || ix[r] > nt) gg_abort("gamgpu_bad_input", "idx must index t (1-based)");
    return Rf_ScalarReal(gg_sum_spread(REAL(t), ix, o < 3 ? REAL(v) : NULL, (size_t) n, o));
}

/* family$aic(y, 1, mu, wt, dev) of Gamma or inverse.gaussian at a given
 * dev, summed over threads (R/outer.R's outer_finish(): R's takes an
 * n-vector of dgamma()s, 0.1 s at 3e5 rows on the 2-core machine).  The
 * aic reads mu, not the link. */
SEXP gg_family_aic_r(SEXP family, SEXP y, SEXP mu, SEXP wt, SEXP dev, SEXP nthreads)
{
    SEXP identity = PROTECT(Rf_mkString("identity"));
    const gg_family f = gg_family_named_or_abort(family, identity);
    UNPROTECT(1);
    if (f.fam != GG_FAM_GAMMA && f.fam != GG_FAM_INVGAUSS)
        gg_abort("gamgpu_bad_family", "the aic here is Gamma's or inverse.gaussian's");
    if (TYPEOF(y) != REALSXP || TYPEOF(mu) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "y, mu and wt must be double vectors");
    const R_xlen_t n = XLENGTH(y);
    if (XLENGTH(mu) != n || XLENGTH(wt) != n)
        gg_abort("gamgpu_bad_input", "y, mu and wt must have equal lengths");
    const double d = gg_as_real(dev, "dev", 0, DBL_MAX, "gamgpu_bad_input");
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    double aic;
    gg_aic_nonint bad;
    gg_family_aic(&f, (size_t) n, REAL(y), REAL(mu), REAL(wt), d, nt, &aic, &bad);
    return Rf_ScalarReal(aic);
}

/* gam.fit3's working residuals (family_stats.h: gg_working_residuals()),
 * NA on the rows it leaves out, over threads: R/fit_report.R's
 * gam_working_residuals() without its n-vector temporaries. */
SEXP gg_working_residuals_r(SEXP family, SEXP link, SEXP theta, SEXP y, SEXP mu, SEXP eta,
                            SEXP wt, SEXP canonical, SEXP nthreads)
{
    const gg_family f = gg_family_or_abort(family, link, theta);
    if (TYPEOF(y) != REALSXP || TYPEOF(mu) != REALSXP || TYPEOF(eta) != REALSXP ||
        TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "y, mu, eta and wt must be double vectors");
    const R_xlen_t n = XLENGTH(y);
    if (XLENGTH(mu) != n || XLENGTH(eta) != n || XLENGTH(wt) != n)
        gg_abort("gamgpu_bad_input", "y, mu, eta and wt must have equal lengths");
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    SEXP r = PROTECT(Rf_allocVector(REALSXP, n));
    gg_working_residuals(&f, (size_t) n, REAL(y), REAL(mu), REAL(eta), REAL(wt),
                         Rf_asLogical(canonical) == TRUE, NA_REAL, nt, REAL(r));
    UNPROTECT(1);
    return r;
}
