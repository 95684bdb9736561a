/* family_r.c -- the family arithmetic for R, outside the fit: the family
 * and link of two strings (gg_family_or_abort, also used by fit_r.c), each
 * row's family quantities (gg_family_rows, tests), and what building the
 * gam object needs over all rows -- signed deviance residuals with their sum
 * of squares, the null deviance and the family's aic -- in single passes
 * without R's n-length temporaries, with the numbers R's own functions give
 * (family_math.h as in the fit; R's nmath densities and long double sums). */
#include <R.h>
#include <Rinternals.h>

#include <Rmath.h>
#include <math.h>

#include "errors_r.h"
#include "family.h"
#include "family_r.h"
#include "sexp_r.h"

/* The family and link named by two strings, or a classed R error. */
gg_family gg_family_or_abort(SEXP family, SEXP link)
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

SEXP gg_family_rows(SEXP family, SEXP link, SEXP eta, SEXP y, SEXP wt)
{
    const gg_family f = gg_family_or_abort(family, link);
    if (TYPEOF(eta) != REALSXP || TYPEOF(y) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "eta, y and wt must be double vectors");
    R_xlen_t n = XLENGTH(eta);
    if (XLENGTH(y) != n || XLENGTH(wt) != n) gg_abort("gamgpu_bad_input", "eta, y and wt must have equal lengths");
    const char *names[] = {"mu", "mu.eta", "variance", "dev.resids", "linkfun", "mustart",
                           "w", "z"};
    SEXP res = PROTECT(Rf_allocVector(VECSXP, 8));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, 8));
    for (int i = 0; i < 8; i++) {
        SET_VECTOR_ELT(res, i, Rf_allocVector(REALSXP, n));
        SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
    }
    Rf_setAttrib(res, R_NamesSymbol, nm);
    double *o[8];
    for (int i = 0; i < 8; i++) o[i] = REAL(VECTOR_ELT(res, i));
    const double *e = REAL(eta), *yy = REAL(y), *ww = REAL(wt);
    for (R_xlen_t i = 0; i < n; i++) {
        double mu = gg_linkinv(f.link, e[i]);
        o[0][i] = mu;
        o[1][i] = gg_mu_eta(f.link, e[i]);
        o[2][i] = gg_variance(f.fam, mu);
        o[3][i] = gg_dev_resid(f.fam, yy[i], mu, ww[i]);
        o[4][i] = gg_linkfun(f.link, mu);
        o[5][i] = gg_mustart(f.fam, yy[i], ww[i]);
        double m2;
        gg_irls_row(&f, yy[i], ww[i], 0.0, e[i], &m2, &o[6][i], &o[7][i]);
    }
    UNPROTECT(2);
    return res;
}

/* Signed deviance residuals sign(y - mu) sqrt(max(d_i, 0)) for every row,
 * d_i the family's deviance contribution (family_math.h, as in the fit):
 * R's family$dev.resids without its per-call vector temporaries.  mu may
 * have length 1 (the null model's mean). */
SEXP gg_dev_resid_r(SEXP family, SEXP link, SEXP y, SEXP mu, SEXP wt)
{
    const gg_family f = gg_family_or_abort(family, link);
    if (TYPEOF(y) != REALSXP || TYPEOF(mu) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "y, mu and wt must be double vectors");
    const R_xlen_t n = XLENGTH(y), nm = XLENGTH(mu);
    if (XLENGTH(wt) != n || (nm != n && nm != 1))
        gg_abort("gamgpu_bad_input", "y, mu and wt must have equal lengths");
    const char *names[] = {"residuals", "deviance"};
    SEXP out = PROTECT(gg_named_list(2, names));
    SEXP res = PROTECT(Rf_allocVector(REALSXP, n));
    double *r = REAL(res);
    const double *yy = REAL(y), *m = REAL(mu), *ww = REAL(wt);
    long double ss = 0;
    for (R_xlen_t i = 0; i < n; i++) {
        const double mi = m[nm == 1 ? 0 : i];
        const double d = gg_dev_resid(f.fam, yy[i], mi, ww[i]);
        const double a = d > 0 ? sqrt(d) : 0;
        r[i] = yy[i] > mi ? a : (yy[i] < mi ? -a : 0);
        const double sq = r[i] * r[i];   /* sum(residuals^2), R's long double sum */
        ss += sq;
    }
    SET_VECTOR_ELT(out, 0, res);
    SET_VECTOR_ELT(out, 1, Rf_ScalarReal((double) ss));
    UNPROTECT(2);
    return out;
}

/* The null deviance: sum of the deviance contributions at the weighted mean
 * of y (as sum(dev.resids(y, weighted.mean(y, wt), wt)), with R's long
 * double sums and weighted.mean's exclusion of zero weights), in one pass
 * and without n-length temporaries. */
SEXP gg_null_deviance_r(SEXP family, SEXP link, SEXP y, SEXP wt)
{
    const gg_family f = gg_family_or_abort(family, link);
    if (TYPEOF(y) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "y and wt must be double vectors");
    const R_xlen_t n = XLENGTH(y);
    if (XLENGTH(wt) != n)
        gg_abort("gamgpu_bad_input", "y and wt must have equal lengths");
    const double *yy = REAL(y), *ww = REAL(wt);
    long double syw = 0, sw = 0, dev = 0;
    for (R_xlen_t i = 0; i < n; i++) {
        if (ww[i] != 0) syw += yy[i] * ww[i];
        sw += ww[i];
    }
    const double ybar = (double) syw / (double) sw;
    for (R_xlen_t i = 0; i < n; i++) dev += gg_dev_resid(f.fam, yy[i], ybar, ww[i]);
    return Rf_ScalarReal((double) dev);
}

/* family$aic(y, 1, mu, wt, dev) in one pass, for the families of stats
 * (their aic functions, R 4.x): the same nmath densities, R's rounding
 * (rint) and long double sums, in the same order of operations, without
 * the n-length temporaries.  NA for the quasi families (whose aic is NA;
 * the caller then asks family$aic). */
SEXP gg_aic_r(SEXP family, SEXP link, SEXP y, SEXP mu, SEXP wt, SEXP dev_)
{
    const gg_family f = gg_family_or_abort(family, link);
    if (TYPEOF(y) != REALSXP || TYPEOF(mu) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "y, mu and wt must be double vectors");
    const R_xlen_t n = XLENGTH(y);
    if (XLENGTH(mu) != n || XLENGTH(wt) != n)
        gg_abort("gamgpu_bad_input", "y, mu and wt must have equal lengths");
    const double *yy = REAL(y), *m = REAL(mu), *ww = REAL(wt), dev = Rf_asReal(dev_);
    long double s = 0, sw = 0;
    switch (f.fam) {
    case GG_FAM_GAUSSIAN: {
        /* nobs (log(dev/nobs 2 pi) + 1) + 2 - sum(log(wt)) */
        for (R_xlen_t i = 0; i < n; i++)
            if (ww[i] != 1) s += log(ww[i]);      /* log(1) adds +0 */
        const double nobs = (double) n;
        return Rf_ScalarReal(nobs * (log(dev / nobs * 2 * M_PI) + 1) + 2 - (double) s);
    }
    case GG_FAM_BINOMIAL:
        /* -2 sum(ifelse(m > 0, wt/m, 0) dbinom(round(m y), round(m), mu, log)), m = wt */
        for (R_xlen_t i = 0; i < n; i++) {
            const double mi = ww[i], fac = mi > 0 ? ww[i] / mi : 0;
            s += fac * dbinom(nearbyint(mi * yy[i]), nearbyint(mi), m[i], 1);
        }
        return Rf_ScalarReal(-2 * (double) s);
    case GG_FAM_POISSON:
        /* -2 sum(dpois(y, mu, log) wt) */
        for (R_xlen_t i = 0; i < n; i++) s += dpois(yy[i], m[i], 1) * ww[i];
        return Rf_ScalarReal(-2 * (double) s);
    case GG_FAM_GAMMA: {
        /* n = sum(wt); disp = dev/n; -2 sum(dgamma(y, 1/disp, scale = mu disp, log) wt) + 2 */
        for (R_xlen_t i = 0; i < n; i++) sw += ww[i];
        const double disp = dev / (double) sw, shape = 1 / disp;
        for (R_xlen_t i = 0; i < n; i++) s += dgamma(yy[i], shape, m[i] * disp, 1) * ww[i];
        return Rf_ScalarReal(-2 * (double) s + 2);
    }
    case GG_FAM_INVGAUSS: {
        /* sum(wt) (1 + log(dev/sum(wt) 2 pi)) + 3 sum(log(y) wt) + 2 */
        for (R_xlen_t i = 0; i < n; i++) {
            sw += ww[i];
            s += log(yy[i]) * ww[i];
        }
        const double W = (double) sw;
        return Rf_ScalarReal(W * (1 + log(dev / W * 2 * M_PI)) + 3 * (double) s + 2);
    }
    default:
        return Rf_ScalarReal(NA_REAL);
    }
}
