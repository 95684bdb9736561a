/* shard_sums.c -- a cluster node's response sums and r.sq's sums
 * (shard_sums.h), each term rounded to double as R's vector arithmetic
 * rounds it and summed in long double as R's sum() sums: a shard of 10^9
 * rows makes no n-vector for them (R's expressions made five). */
#include "shard_sums.h"

#include <math.h>

/* R's mean() of doubles: the long double mean, corrected by the mean of
 * the residuals when finite (summary.c's real_mean) */
static double r_mean(const double *x, size_t n)
{
    long double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    s /= (long double) n;
    if (isfinite((double) s)) {
        long double t = 0;
        for (size_t i = 0; i < n; i++) t += (x[i] - s);
        s += t / (long double) n;
    }
    return (double) s;
}

/* row i's prior weight; w NULL: all are 1 */
static inline double w_at(const double *w, size_t i) { return w != NULL ? w[i] : 1.0; }

void gg_response_sums(const double *y, const double *w, size_t n, double out[6])
{
    const double m = r_mean(y, n);
    long double sy = 0, syy = 0, swy = 0, sw = 0;
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        const double wi = w_at(w, i), d = y[i] - m, dd = d * d, wy = wi * y[i];
        sy += y[i];
        syy += dd;
        swy += wy;
        sw += wi;
        nonzero += wi != 0;
    }
    out[0] = (double) n;
    out[1] = (double) sy;
    out[2] = (double) syy;
    out[3] = (double) swy;
    out[4] = (double) sw;
    out[5] = (double) nonzero;
}

void gg_rsq_sums(const double *y, const double *mu, const double *w, double mean_y, size_t n,
                 double out[5])
{
    long double s1 = 0, s11 = 0, s2 = 0, s22 = 0;
    for (size_t i = 0; i < n; i++) {
        const double sw = sqrt(w_at(w, i));
        const double v1 = sw * (y[i] - mu[i]), v2 = sw * (y[i] - mean_y);
        const double q1 = v1 * v1, q2 = v2 * v2;
        s1 += v1;
        s11 += q1;
        s2 += v2;
        s22 += q2;
    }
    out[0] = (double) n;
    out[1] = (double) s1;
    out[2] = (double) s11;
    out[3] = (double) s2;
    out[4] = (double) s22;
}
