/* dens_math.h -- the two pieces of Loader's saddle point method for log
 * densities (R's dpois_raw, dbinom_raw), written once for the host
 * (src/family/family_dens.c: the families' aic) and NVRTC's kernels
 * (efam_gfam.h: gfam()'s ls):
 *   stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n),  Stirling's error,
 *   bd0(x, np)  = x log(x/np) + np - x,                 the deviance term,
 * each without cancellation. */
#ifndef GAMGPU_DENS_MATH_H
#define GAMGPU_DENS_MATH_H

#include "family_math.h"

/* Stirling's error log(n!) - log(sqrt(2 pi n) (n/e)^n): exact values at
 * half integers up to 15 (to 25 digits, from 50-digit arithmetic), log
 * Gamma beyond them there (tgamma(): lgamma() writes the global signgam, a
 * data race between threads), the asymptotic series 1/(12n) - 1/(360n^3) +
 * 1/(1260n^5) - 1/(1680n^7) + 1/(1188n^9) above 15 with as few terms as
 * the accuracy needs */
GG_FM double gg_fm_stirlerr(double n)
{
    const double half[31] = {
        0.0, 0.1534264097200273452913839, 0.08106146679532725821967026,
        0.0548141210519176538961387, 0.04134069595540929409382208,
        0.03316287351993628748511051, 0.02767792568499833914878929,
        0.02374616365629749597133028, 0.02079067210376509311152277,
        0.01848845053267318523077936, 0.01664469118982119216319487,
        0.01513497322191737887351384, 0.01387612882307074799874573,
        0.01281046524292022692425066, 0.01189670994589177009505572,
        0.01110455975820691732663076, 0.01041126526197209649747857,
        0.009799416126158803298390373, 0.009255462182712732917728637,
        0.008768700134139385462955047, 0.008330563433362871256469319,
        0.007934114564314020547249562, 0.007573675487951840794972024,
        0.007244554301320383179546197, 0.006942840107209529865664153,
        0.006665247032707682442356181, 0.006408994188004207068439631,
        0.006171712263039457647534605, 0.005951370112758847735624416,
        0.005746216513010115682026102, 0.00555473355196280137103869};
    if (n <= 15.0) {
        const double twice = n + n;
        if (twice == (double) (int) twice) return half[(int) twice];
        return log(tgamma(n + 1.0)) - (n + 0.5) * log(n) + n - 0.918938533204672741780329736406;
    }
    const double n2 = n * n, s1 = 1.0 / 12.0, s3 = 1.0 / 360.0, s5 = 1.0 / 1260.0,
                 s7 = 1.0 / 1680.0, s9 = 1.0 / 1188.0;
    if (n > 500) return (s1 - s3 / n2) / n;
    if (n > 80) return (s1 - (s3 - s5 / n2) / n2) / n;
    if (n > 35) return (s1 - (s3 - (s5 - s7 / n2) / n2) / n2) / n;
    return (s1 - (s3 - (s5 - (s7 - s9 / n2) / n2) / n2) / n2) / n;
}

/* x log(x/np) + np - x.  Near x = np, with v = (x - np)/(x + np), it is
 * (x - np) v + 2x (v^3/3 + v^5/5 + ...): summed until a term no longer
 * changes the sum. */
GG_FM double gg_fm_bd0(double x, double np)
{
    if (!GG_FM_ISFINITE(x) || !GG_FM_ISFINITE(np) || np == 0.0) return GG_FM_NAN;
    const double dif = x - np;
    if (fabs(dif) < 0.1 * (x + np)) {
        const double v = dif / (x + np), v2 = v * v;
        double s = dif * v;
        if (fabs(s) < 2.2250738585072014e-308) return s;
        double term = 2 * x * v;
        for (int j = 1; j < 1000; j++) {
            term *= v2;
            const double sn = s + term / (2 * j + 1);
            if (sn == s) return sn;
            s = sn;
        }
    }
    return x * log(x / np) + np - x;
}

#endif
