/* family_dens.c -- log densities for the families' aic (family_dens.h),
 * pure C and thread-safe: no R API, no global state.
 *
 * Loader's saddle point method: a density is written through
 *   stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n),  Stirling's error,
 *   bd0(x, np)  = x log(x/np) + np - x,                 the deviance term,
 * each computed without cancellation (the series of bd0 near x = np,
 * exact values of stirlerr at half integers up to 15 and its asymptotic
 * series beyond), so that e.g. log dpois(x, lambda) keeps full relative
 * accuracy where x log(lambda) - lambda - lgamma(x + 1) would lose it. */
#include "family_dens.h"

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

/* stirlerr(n) at n = k/2, k = 0 .. 30 (k = 0 is never used), to 25
 * digits (computed with 50-digit arithmetic). */
static const double stirl_half[31] = {
    0.0,
    0.1534264097200273452913839,   /* 0.5 */
    0.08106146679532725821967026,  /* 1.0 */
    0.0548141210519176538961387,   /* 1.5 */
    0.04134069595540929409382208,  /* 2.0 */
    0.03316287351993628748511051,  /* 2.5 */
    0.02767792568499833914878929,  /* 3.0 */
    0.02374616365629749597133028,  /* 3.5 */
    0.02079067210376509311152277,  /* 4.0 */
    0.01848845053267318523077936,  /* 4.5 */
    0.01664469118982119216319487,  /* 5.0 */
    0.01513497322191737887351384,  /* 5.5 */
    0.01387612882307074799874573,  /* 6.0 */
    0.01281046524292022692425066,  /* 6.5 */
    0.01189670994589177009505572,  /* 7.0 */
    0.01110455975820691732663076,  /* 7.5 */
    0.01041126526197209649747857,  /* 8.0 */
    0.009799416126158803298390373, /* 8.5 */
    0.009255462182712732917728637, /* 9.0 */
    0.008768700134139385462955047, /* 9.5 */
    0.008330563433362871256469319, /* 10.0 */
    0.007934114564314020547249562, /* 10.5 */
    0.007573675487951840794972024, /* 11.0 */
    0.007244554301320383179546197, /* 11.5 */
    0.006942840107209529865664153, /* 12.0 */
    0.006665247032707682442356181, /* 12.5 */
    0.006408994188004207068439631, /* 13.0 */
    0.006171712263039457647534605, /* 13.5 */
    0.005951370112758847735624416, /* 14.0 */
    0.005746216513010115682026102, /* 14.5 */
    0.00555473355196280137103869   /* 15.0 */
};

/* Stirling's series 1/(12n) - 1/(360n^3) + 1/(1260n^5) - 1/(1680n^7) +
 * 1/(1188n^9): the coefficients B_2k / (2k (2k - 1)). */
#define ST1 (1.0 / 12.0)
#define ST3 (1.0 / 360.0)
#define ST5 (1.0 / 1260.0)
#define ST7 (1.0 / 1680.0)
#define ST9 (1.0 / 1188.0)

/* log Gamma(x + 1) for 0 <= x <= 15, where Gamma(x + 1) <= 15! is far from
 * overflow.  tgamma() rather than lgamma(): lgamma() writes the global
 * signgam, a data race between threads. */
static double lfact_small(double x)
{
    return log(tgamma(x + 1.0));
}

static double stirlerr(double n)
{
    if (n <= 15.0) {
        const double twice = n + n;
        if (twice == (double) (int) twice)
            return stirl_half[(int) twice];
        return lfact_small(n) - (n + 0.5) * log(n) + n - GG_LN_SQRT2PI;
    }
    const double n2 = n * n;
    /* as few terms as the accuracy needs: the series' terms fall fast */
    if (n > 500) return (ST1 - ST3 / n2) / n;
    if (n > 80) return (ST1 - (ST3 - ST5 / n2) / n2) / n;
    if (n > 35) return (ST1 - (ST3 - (ST5 - ST7 / n2) / n2) / n2) / n;
    return (ST1 - (ST3 - (ST5 - (ST7 - ST9 / n2) / n2) / n2) / n2) / n;
}

/* x log(x/np) + np - x.  Near x = np, with v = (x - np)/(x + np), it is
 * (x - np) v + 2x (v^3/3 + v^5/5 + ...): summed until a term no longer
 * changes the sum. */
static double bd0(double x, double np)
{
    if (!isfinite(x) || !isfinite(np) || np == 0.0)
        return NAN;
    const double dif = x - np;
    if (fabs(dif) < 0.1 * (x + np)) {
        double v = dif / (x + np);
        double s = dif * v;
        if (fabs(s) < DBL_MIN)
            return s;
        double term = 2 * x * v;
        const double v2 = v * v;
        for (int j = 1; j < 1000; j++) {
            term *= v2;
            const double s_next = s + term / (2 * j + 1);
            if (s_next == s)
                return s_next;
            s = s_next;
        }
    }
    return x * log(x / np) + np - x;
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
                                     : stirlerr(x) + (x + 0.5) * log(x) - x + GG_LN_SQRT2PI;
        return -lambda + x * log(lambda) - lfact;
    }
    return -0.5 * log(GG_2PI * x) + (-stirlerr(x) - bd0(x, lambda));
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
        return p < 0.1 ? -bd0(n, n * q) - n * p : n * log(q);
    }
    if (x == n)
        return q < 0.1 ? -bd0(n, n * p) - n * q : n * log(p);
    if (x < 0 || x > n)
        return -INFINITY;
    const double lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, n * p) -
                      bd0(n - x, n * q);
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
