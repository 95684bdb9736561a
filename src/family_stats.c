/* family_stats.c -- the fit's summaries over all rows (family_stats.h):
 * deviance residuals, null deviance and aic, as R's stats families compute
 * them but in single passes without n-length temporaries.  No R API beyond
 * the nmath densities (Rmath.h), so these run off R's thread. */
#include <Rmath.h>
#include <math.h>

#include "family_stats.h"

double gg_deviance_residuals(gg_family_id f, size_t n, const double *y, const double *mu,
                             const double *wt, double *r)
{
    long double ss = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = gg_dev_resid(f, y[i], mu[i], wt[i]);
        const double a = d > 0 ? sqrt(d) : 0;
        r[i] = y[i] > mu[i] ? a : (y[i] < mu[i] ? -a : 0);
        const double sq = r[i] * r[i];
        ss += sq;
    }
    return (double) ss;
}

double gg_null_deviance(gg_family_id f, size_t n, const double *y, const double *wt)
{
    long double syw = 0, sw = 0, dev = 0;
    for (size_t i = 0; i < n; i++) {
        if (wt[i] != 0) syw += y[i] * wt[i];
        sw += wt[i];
    }
    const double ybar = (double) syw / (double) sw;
    for (size_t i = 0; i < n; i++) dev += gg_dev_resid(f, y[i], ybar, wt[i]);
    return (double) dev;
}

int gg_family_aic(gg_family_id f, size_t n, const double *y, const double *mu,
                  const double *wt, double dev, double *aic)
{
    long double s = 0, sw = 0;
    switch (f) {
    case GG_FAM_GAUSSIAN: {
        /* nobs (log(dev/nobs 2 pi) + 1) + 2 - sum(log(wt)) */
        for (size_t i = 0; i < n; i++)
            if (wt[i] != 1) s += log(wt[i]);      /* log(1) adds +0 */
        const double nobs = (double) n;
        *aic = nobs * (log(dev / nobs * 2 * M_PI) + 1) + 2 - (double) s;
        return 0;
    }
    case GG_FAM_BINOMIAL:
        /* -2 sum(ifelse(m > 0, wt/m, 0) dbinom(round(m y), round(m), mu, log)), m = wt */
        for (size_t i = 0; i < n; i++) {
            const double mi = wt[i], fac = mi > 0 ? wt[i] / mi : 0;
            s += fac * dbinom(nearbyint(mi * y[i]), nearbyint(mi), mu[i], 1);
        }
        *aic = -2 * (double) s;
        return 0;
    case GG_FAM_POISSON:
        /* -2 sum(dpois(y, mu, log) wt) */
        for (size_t i = 0; i < n; i++) s += dpois(y[i], mu[i], 1) * wt[i];
        *aic = -2 * (double) s;
        return 0;
    case GG_FAM_GAMMA: {
        /* n = sum(wt); disp = dev/n; -2 sum(dgamma(y, 1/disp, scale = mu disp, log) wt) + 2 */
        for (size_t i = 0; i < n; i++) sw += wt[i];
        const double disp = dev / (double) sw, shape = 1 / disp;
        for (size_t i = 0; i < n; i++) s += dgamma(y[i], shape, mu[i] * disp, 1) * wt[i];
        *aic = -2 * (double) s + 2;
        return 0;
    }
    case GG_FAM_INVGAUSS: {
        /* sum(wt) (1 + log(dev/sum(wt) 2 pi)) + 3 sum(log(y) wt) + 2 */
        for (size_t i = 0; i < n; i++) {
            sw += wt[i];
            s += log(y[i]) * wt[i];
        }
        const double W = (double) sw;
        *aic = W * (1 + log(dev / W * 2 * M_PI)) + 3 * (double) s + 2;
        return 0;
    }
    default:
        return 1;
    }
}
