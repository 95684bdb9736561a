/* family_dens.c -- log densities for the families' aic (family_dens.h),
 * pure C and thread-safe: no R API, no global state.
 *
 * Loader's saddle point method: a density is written through
 *   stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n),  Stirling's error,
 *   bd0(x, np)  = x log(x/np) + np - x,                 the deviance term,
 * each computed without cancellation (the series of bd0 near x = np,
 * exact values of stirlerr at half integers up to 15 and its asymptotic
 * series beyond), so that e.g. log dpois(x, lambda) keeps full relative
 * accuracy where x log(lambda) - lambda - lgamma(x + 1) would lose it.
 * stirlerr and bd0 are dens_math.h's, shared with the device's rows. */
#include "family_dens.h"

#include "dens_math.h"

#include <float.h>
#include <math.h>

#define GG_2PI        6.283185307179586476925286766559
#define GG_LN_2PI     1.837877066409345483560659472811
#define GG_LN_SQRT2PI 0.918938533204672741780329736406

int gg_dens_nonint(double x)
{
    const double ax = fabs(x);
    return fabs(x - nearbyint(x)) > 1e-7 * (ax > 1 ? ax : 1);
}

/* log Gamma(x + 1) for 0 <= x <= 15, where Gamma(x + 1) <= 15! is far from
 * overflow.  tgamma() rather than lgamma(): lgamma() writes the global
 * signgam, a data race between threads. */
static double lfact_small(double x)
{
    return log(tgamma(x + 1.0));
}

/* log of lambda^x e^-lambda / Gamma(x + 1) for real x >= 0 (whole x for
 * the Poisson; dgamma uses any x). */
static double ldpois_raw(double x, double lambda)
{
    if (lambda == 0)
        return x == 0 ? 0.0 : -INFINITY;
    if (!isfinite(lambda) || x < 0)
        return -INFINITY;
    if (x <= lambda * DBL_MIN)
        return -lambda;
    if (lambda < x * DBL_MIN) {
        if (!isfinite(x))
            return -INFINITY;
        /* log Gamma(x + 1) by Stirling's error, its definition */
        const double lfact = x <= 15 ? lfact_small(x)
                                     : gg_fm_stirlerr(x) + (x + 0.5) * log(x) - x + GG_LN_SQRT2PI;
        return -lambda + x * log(lambda) - lfact;
    }
    return -0.5 * log(GG_2PI * x) + (-gg_fm_stirlerr(x) - gg_fm_bd0(x, lambda));
}

/* 1 when x is a count a discrete density takes (whole, finite, >= 0); a
 * density is -Inf otherwise, and R warns where x is not whole: such rows
 * are counted in *nonint (when nonint is not NULL). */
static int whole_count(double x, int *nonint)
{
    if (gg_dens_nonint(x)) {
        if (nonint) ++*nonint;
        return 0;
    }
    return x >= 0 && isfinite(x);
}

double gg_ldpois(double x, double lambda, int *nonint)
{
    if (isnan(x) || isnan(lambda))
        return x + lambda;
    if (lambda < 0)
        return NAN;
    if (!whole_count(x, nonint))
        return -INFINITY;
    return ldpois_raw(nearbyint(x), lambda);
}

/* log dbinom for whole 0 <= x, n, q = 1 - p. */
static double ldbinom_raw(double x, double n, double p, double q)
{
    if (p == 0)
        return x == 0 ? 0.0 : -INFINITY;
    if (q == 0)
        return x == n ? 0.0 : -INFINITY;
    if (x == 0) {
        if (n == 0)
            return 0.0;
        return p < 0.1 ? -gg_fm_bd0(n, n * q) - n * p : n * log(q);
    }
    if (x == n)
        return q < 0.1 ? -gg_fm_bd0(n, n * p) - n * q : n * log(p);
    if (x < 0 || x > n)
        return -INFINITY;
    const double lc = gg_fm_stirlerr(n) - gg_fm_stirlerr(x) - gg_fm_stirlerr(n - x) -
                      gg_fm_bd0(x, n * p) - gg_fm_bd0(n - x, n * q);
    /* log(2 pi x (n - x) / n), without forming the product */
    const double lf = GG_LN_2PI + log(x) + log1p(-x / n);
    return lc - 0.5 * lf;
}

double gg_ldbinom(double x, double size, double prob, int *nonint)
{
    if (isnan(x) || isnan(size) || isnan(prob))
        return x + size + prob;
    if (prob < 0 || prob > 1 || size < 0 || gg_dens_nonint(size))
        return NAN;
    if (!whole_count(x, nonint))
        return -INFINITY;
    return ldbinom_raw(nearbyint(x), nearbyint(size), prob, 1 - prob);
}

double gg_ldgamma(double x, double shape, double scale)
{
    if (isnan(x) || isnan(shape) || isnan(scale))
        return x + shape + scale;
    if (shape < 0 || scale <= 0)
        return NAN;
    if (x < 0)
        return -INFINITY;
    if (shape == 0)
        return x == 0 ? INFINITY : -INFINITY;
    if (x == 0) {
        if (shape < 1) return INFINITY;
        if (shape > 1) return -INFINITY;
        return -log(scale);
    }
    if (shape < 1) {
        const double pr = ldpois_raw(shape, x / scale);
        const double r = shape / x;
        return pr + (isfinite(r) ? log(r) : log(shape) - log(x));
    }
    return ldpois_raw(shape - 1, x / scale) - log(scale);
}
