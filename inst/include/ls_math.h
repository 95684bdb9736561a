/* ls_math.h -- mgcv's location-scale families row by row: each row's log
 * likelihood and its derivatives in the family's parameters (the family
 * ll()'s own expressions), and their chain rule to the linear predictors
 * through the links (mgcv's gamlss.etamu()), written once for the host
 * (src/family/family_ls.c) and, as family_math.h, in a form NVRTC
 * compiles too.  The expressions follow mgcv's R code term by term, so
 * the host's values equal R's to rounding.
 *
 * The derivatives of K predictors are packed as mgcv packs them (its
 * trind.generator()): second derivatives for i <= j in row order (K (K +
 * 1) / 2 of them), third for i <= j <= l, fourth for i <= j <= l <= m;
 * i2 (K^2) and i3 (K^3) map any order of indices to the packed column
 * (0-based, a + K b and a + K (b + K c)). */
#ifndef GAMGPU_LS_MATH_H
#define GAMGPU_LS_MATH_H

#include "outer_math.h"
#include "efam_math.h"           /* tw()'s log density (efam_tw.h), for twlss() */

/* the families (R/family_ls_rows.R: their R names) */
#define GG_LS_GAULSS  1
#define GG_LS_GUMBLS  2
#define GG_LS_GAMMALS 3
#define GG_LS_MULTINOM 4        /* K + 1 categories; its rows' derivatives are in eta */
#define GG_LS_ZIPLSS  5
#define GG_LS_GEVLSS  6
#define GG_LS_TWLSS   7        /* first and second derivatives only, as mgcv's */
#define GG_LS_SHASH   8

#define GG_LS_LOG_XMAX 709.782712893384        /* log(DBL_MAX) */

#define GG_LS_MAXK 4            /* predictors a row takes */
#define GG_LS_MAX2 10           /* packed derivatives at GG_LS_MAXK */
#define GG_LS_MAX3 20
#define GG_LS_MAX4 35

GG_FM int gg_ls_n2(int K) { return K * (K + 1) / 2; }
GG_FM int gg_ls_n3(int K) { return K * (K + 1) * (K + 2) / 6; }
GG_FM int gg_ls_n4(int K) { return K * (K + 1) * (K + 2) * (K + 3) / 24; }

/* gaulss(): m = (mu, tau), tau the inverse standard deviation; returns the
 * row's log likelihood l0, and (order >= 1) l1, l2, (>= 2) l3, (>= 4) l4 */
GG_FM double gg_ls_gaulss_row(double y, const double *m, int order, double *l1, double *l2,
                              double *l3, double *l4)
{
    const double mu = m[0], tau = m[1];
    const double ymu = y - mu, ymu2 = ymu * ymu, tau2 = tau * tau;
    const double l0 = -0.5 * ymu2 * tau2 - 0.5 * log(2.0 * GG_FM_PI) + log(tau);
    if (order >= 1) {
        l1[0] = tau2 * ymu;
        l1[1] = 1.0 / tau - tau * ymu2;
        l2[0] = -tau2;
        l2[1] = 2.0 * l1[0] / tau;
        l2[2] = -ymu2 - 1.0 / tau2;
    }
    if (order >= 2) {
        l3[0] = 0.0;
        l3[1] = -2.0 * tau;
        l3[2] = 2.0 * ymu;
        l3[3] = 2.0 / pow(tau, 3.0);
    }
    if (order >= 4) {
        l4[0] = 0.0;
        l4[1] = 0.0;
        l4[2] = -2.0;
        l4[3] = 0.0;
        l4[4] = -6.0 / (tau2 * tau2);
    }
    return l0;
}

/* gumbls(): m = (mu, beta), beta the log scale */
GG_FM double gg_ls_gumbls_row(double y, const double *m, int order, double *l1, double *l2,
                              double *l3, double *l4)
{
    const double mu = m[0], beta = m[1];
    const double eb = exp(-beta), z = (y - mu) * eb, ez = exp(-z);
    const double l0 = -beta - z - ez;
    const double lz = ez - 1.0, zm = -eb, zb = -z, lzz = -ez, zmb = eb, zbb = z;
    if (order >= 1) {
        l1[0] = lz * zm;
        l1[1] = lz * zb - 1.0;
        l2[0] = lzz * (zm * zm);
        l2[1] = lzz * zm * zb + lz * zmb;
        l2[2] = lzz * (zb * zb) + lz * zbb;
    }
    const double lzzz = ez, zbbb = -z, zmbb = -eb;
    if (order >= 2) {
        l3[0] = lzzz * pow(zm, 3.0);
        l3[1] = lzzz * (zm * zm) * zb + 2.0 * lzz * zm * zmb;
        l3[2] = lzzz * (zb * zb) * zm + 2.0 * lzz * zb * zmb + lzz * zbb * zm + lz * zmbb;
        l3[3] = lzzz * pow(zb, 3.0) + 3.0 * lzz * zb * zbb + lz * zbbb;
    }
    if (order >= 4) {
        const double lzzzz = -ez, zbbbb = z, zmbbb = eb;
        l4[0] = lzzzz * pow(zm, 4.0);
        l4[1] = lzzzz * pow(zm, 3.0) * zb + 3.0 * lzzz * (zm * zm) * zmb;
        l4[2] = lzzzz * (zm * zm) * (zb * zb) + 4.0 * lzzz * zm * zb * zmb +
                lzzz * (zm * zm) * zbb + 2.0 * lzz * (zmb * zmb) + 2.0 * lzz * zm * zmbb;
        l4[3] = lzzzz * pow(zb, 3.0) * zm + 3.0 * lzzz * (zb * zb) * zmb +
                3.0 * lzzz * zm * zb * zbb + 3.0 * lzz * zmb * zbb + 3.0 * lzz * zb * zmbb +
                lzz * zm * zbbb + lz * zmbbb;
        l4[4] = lzzzz * pow(zb, 4.0) + 6.0 * lzzz * (zb * zb) * zbb + 3.0 * lzz * (zbb * zbb) +
                4.0 * lzz * zb * zbbb + lz * zbbbb;
    }
    return l0;
}

/* gammals(): m = (mu, th), mu the log mean and th the log scale */
GG_FM double gg_ls_gammals_row(double y, const double *m, int order, double *l1, double *l2,
                               double *l3, double *l4)
{
    const double mu = m[0], th = m[1];
    const double eth = exp(-th), logy = log(y), ethmu = exp(-th - mu), ethmuy = ethmu * y;
    const double etlymt = eth * (logy - mu - th);
    const double l0 = etlymt - logy - ethmuy - GG_FM_LGAMMA(eth);
    if (order < 1) return l0;
    const double digeth = gg_fm_digamma(eth), eth2 = eth * eth, treth = gg_fm_trigamma(eth);
    l1[0] = ethmuy - eth;
    l1[1] = -etlymt + ethmuy + eth * digeth - eth;
    l2[0] = -ethmuy;
    l2[1] = eth - ethmuy;
    l2[2] = etlymt - ethmuy - treth * eth2 - eth * digeth + 2.0 * eth;
    if (order < 2) return l0;
    const double eth3 = eth2 * eth, g3eth = gg_fm_tetragamma(eth);
    l3[0] = ethmuy;
    l3[1] = ethmuy;
    l3[2] = ethmuy - eth;
    l3[3] = -etlymt + ethmuy + g3eth * eth3 + 3.0 * treth * eth2 + eth * digeth - 3.0 * eth;
    if (order < 4) return l0;
    const double eth4 = eth3 * eth;
    l4[0] = -ethmuy;
    l4[1] = -ethmuy;
    l4[2] = -ethmuy;
    l4[3] = eth - ethmuy;
    l4[4] = etlymt - ethmuy - gg_fm_pentagamma(eth) * eth4 - 6.0 * g3eth * eth3 -
            7.0 * treth * eth2 - eth * digeth + 4.0 * eth;
    return l0;
}

/* multinom(): category y (0 .. K; mgcv rounds it) of K + 1, eta (K) the
 * predictors of categories 1 .. K; the log likelihood (with mgcv's eta of
 * 1 for category 0) and (order >= 1) l1, l2, (>= 2) l3, (>= 4) l4, already
 * derivatives in eta (no links) */
GG_FM double gg_ls_multinom_row(int K, double y, const double *eta, int order, const int *i2,
                                const int *i3, double *l1, double *l2, double *l3, double *l4)
{
    double ee[GG_LS_MAXK];
#ifdef __CUDACC_RTC__
    double rs = 0.0;
#else
    long double rs = 0.0;                          /* (rowSums(): a long double sum) */
#endif
    for (int k = 0; k < K; k++) {
        ee[k] = exp(eta[k]);
        rs += ee[k];
    }
    const double beta = 1.0 + (double) rs, alpha = log(beta);
    const int yc = (int) nearbyint(y);
    if (!(y > -0.5 && y < K + 0.5)) return GG_FM_NAN;   /* (R refuses such rows first) */
    const double l0 = (yc == 0 ? 1.0 : eta[yc - 1]) - alpha;
    if (order < 1) return l0;
    for (int i = 0; i < K; i++) l1[i] = ee[i] / beta;
    const double b2 = beta * beta;
    int ii = 0;
    for (int i = 0; i < K; i++)
        for (int j = i; j < K; j++, ii++)
            l2[ii] = i == j ? -l1[i] + (ee[i] * ee[i]) / b2 : (ee[i] * ee[j]) / b2;
    for (int i = 0; i < K; i++) l1[i] = (yc == i + 1 ? 1.0 : 0.0) - l1[i];
    if (order < 2) return l0;
    const double b3 = b2 * beta;
    ii = 0;
    for (int i = 0; i < K; i++)
        for (int j = i; j < K; j++)
            for (int k = j; k < K; k++, ii++) {
                if (i == j && j == k)
                    l3[ii] = l2[i2[i + K * i]] + 2.0 * (ee[i] * ee[i]) / b2 -
                             2.0 * pow(ee[i], 3.0) / b3;
                else if (i != j && j != k && i != k)
                    l3[ii] = -2.0 * (ee[i] * ee[j] * ee[k]) / b3;
                else {
                    const int kk = i == j ? k : j;
                    l3[ii] = l2[i2[i + K * kk]] - 2.0 * (ee[i] * ee[j] * ee[k]) / b3;
                }
            }
    if (order < 4) return l0;
    const double b4 = b3 * beta;
    ii = 0;
    for (int i = 0; i < K; i++)
        for (int j = i; j < K; j++)
            for (int k = j; k < K; k++)
                for (int l = k; l < K; l++, ii++) {
                    const int idx[4] = {i, j, k, l};
                    int uni[4], nun = 0;
                    for (int s = 0; s < 4; s++) {
                        int seen = 0;
                        for (int t = 0; t < nun; t++) seen |= uni[t] == idx[s];
                        if (!seen) uni[nun++] = idx[s];
                    }
                    const double prod = 6.0 * ee[i] * ee[j] * ee[k] * ee[l] / b4;
                    if (nun == 1) {
                        l4[ii] = l3[i3[i + K * (i + K * i)]] + 4.0 * (ee[i] * ee[i]) / b2 -
                                 10.0 * pow(ee[i], 3.0) / b3 + 6.0 * pow(ee[i], 4.0) / b4;
                    } else if (nun == 4) {
                        l4[ii] = prod;
                    } else if (nun == 3) {
                        l4[ii] = l3[i3[uni[0] + K * (uni[1] + K * uni[2])]] + prod;
                    } else {
                        int c0 = 0;
                        for (int s = 0; s < 4; s++) c0 += idx[s] == uni[0];
                        int u1 = uni[0], u2 = uni[1];
                        if (c0 == 2) {
                            l4[ii] = l3[i3[u1 + K * (u2 + K * u2)]] -
                                     2.0 * (ee[u1] * ee[u1]) * ee[u2] / b3 + prod;
                        } else {
                            if (c0 == 1) { u1 = uni[1]; u2 = uni[0]; }
                            l4[ii] = l3[i3[u1 + K * (u1 + K * u2)]] -
                                     4.0 * (ee[u1] * ee[u1]) * ee[u2] / b3 + prod;
                        }
                    }
                }
    return l0;
}

/* ziplss(): mgcv's zipll() and its helpers l1ee(), lee1(), lde(), ldg()
 * for one row, their branches as mgcv takes them; m = (g, eta), g the log
 * Poisson mean and eta the zero-inflation predictor (both identity links) */
GG_FM double gg_ls_l1ee(double x)
{
    if (x < -GG_LS_LOG_XMAX) return x;
    const double ex = exp(x);
    if (x < GG_FM_LOG_EPS / 3.0) return log(ex - (ex * ex) / 2.0 + pow(ex, 3.0) / 6.0);
    return log(1.0 - exp(-ex));
}

GG_FM double gg_ls_lee1(double x)
{
    const double ex = exp(x);
    if (x > log(GG_LS_LOG_XMAX)) return ex;
    if (x < -GG_LS_LOG_XMAX) return x;
    if (x < GG_FM_LOG_EPS / 3.0) return log(ex + (ex * ex) / 2.0 + pow(ex, 3.0) / 6.0);
    return log(exp(ex) - 1.0);
}

/* lde(): the derivatives of l1ee(eta) (order >= 2: l3, >= 4: l4) */
GG_FM void gg_ls_lde(double eta, int order, double *d)
{
    const int ind = eta < GG_FM_LOG_EPS / 3.0;
    const double et = exp(eta);
    double l1, l2, b = 0.0;
    if (ind) {
        b = -et * (1.0 + et / 6.0) / 2.0;
        l1 = 1.0 + b;
    } else l1 = et / (exp(et) - 1.0);
    if (eta > GG_LS_LOG_XMAX) l1 = 0.0;
    l2 = ind ? -b * (1.0 + et + b) - et : l1 * ((1.0 - et) - l1);
    if (eta > GG_LS_LOG_XMAX) l2 = 0.0;
    d[0] = l1;
    d[1] = l2;
    if (order >= 2) {
        const double a = 1.0 - et;
        double l3 = ind ? l1 * (-3.0 * et + et * et - 3.0 * (-et + b - et * b) + 2.0 * b * (2.0 + b))
                        : l1 * (a * a - et - 3.0 * a * l1 + 2.0 * (l1 * l1));
        if (eta > GG_LS_LOG_XMAX / 2.0) l3 = 0.0;
        d[2] = l3;
    }
    if (order >= 4) {
        const double a = 1.0 - et;
        double l4 = l1 * ((3.0 * et - 4.0) * et + 4.0 * et * l1 + pow(a, 3.0) -
                          7.0 * (a * a) * l1 + 12.0 * a * (l1 * l1) - 6.0 * pow(l1, 3.0));
        if (eta > GG_LS_LOG_XMAX / 3.0) l4 = 0.0;
        if (ind)
            l4 = l1 * (4.0 * l1 * et - pow(et, 3.0) - b - 7.0 * b * (et * et) - et * et -
                       5.0 * et - 10.0 * b * et - 12.0 * et * (b * b) - 6.0 * (b * b) -
                       6.0 * pow(b, 3.0));
        d[3] = l4;
    }
}

/* ldg(): the derivatives of -lee1(g) + y g's g part (l1 .. l4) */
GG_FM void gg_ls_ldg(double g, int order, double *d)
{
    const double eg = exp(g);
    const double a = g > GG_FM_LOG_EPS / 3.0 ? eg / (1.0 - exp(-eg))
                                              : 1.0 + eg / 2.0 + (eg * eg) / 12.0;
    const int ind = g < GG_FM_LOG_EPS / 3.0, ii = g > log(GG_LS_LOG_XMAX) + 1.0;
    const double b = ind ? eg * (1.0 + eg / 6.0) / 2.0 : 0.0;
    double l2 = ind ? a * (b - eg) : a * (a - eg - 1.0);
    if (ii) l2 = -exp(g);
    double l3 = 0.0, l4 = 0.0;
    if (order >= 2) {
        l3 = ind ? a * (-b - 2.0 * (b * b) + 3.0 * b * eg - eg * eg)
                 : a * (a * (-2.0 * a + 3.0 * (eg + 1.0)) - 3.0 * eg - eg * eg - 1.0);
        if (ii) l3 = -exp(g);
    }
    if (order >= 4) {
        l4 = ind ? a * (6.0 * b * (3.0 + 3.0 * b + b * b) - 12.0 * eg * (1.0 + 2.0 * b + b * b) -
                        12.0 * b * (2.0 - b) + 4.0 * eg * (1.0 + b) +
                        7.0 * (eg * eg + 2.0 * eg + b * (eg * eg) + 2.0 * b * eg + b) -
                        (4.0 + 3.0 * eg) * eg - eg * (3.0 + 3.0 * eg + eg * eg))
                 : a * (6.0 * pow(a, 3.0) - 12.0 * (eg + 1.0) * (a * a) + 4.0 * eg * a +
                        7.0 * ((eg + 1.0) * (eg + 1.0)) * a - (4.0 + 3.0 * eg) * eg -
                        pow(eg + 1.0, 3.0));
        if (ii) l4 = -exp(g);
    }
    double l1 = -a;
    const double ghi = GG_LS_LOG_XMAX / 5.0;
    if (g > ghi) l1 = l2 = l3 = l4 = -exp(ghi);
    d[0] = l1;
    d[1] = l2;
    d[2] = l3;
    d[3] = l4;
}

GG_FM double gg_ls_ziplss_row(double y, const double *m, int order, double *l1, double *l2,
                              double *l3, double *l4)
{
    const double g = m[0], eta = m[1], et = exp(eta);
    const int zero = y == 0.0;
    const double l0 = zero ? -et : gg_ls_l1ee(eta) + y * g - gg_ls_lee1(g) - GG_FM_LGAMMA(y + 1.0);
    if (order < 1) return l0;
    double le[4] = {0, 0, 0, 0}, lg[4] = {0, 0, 0, 0};
    if (!zero) {
        gg_ls_lde(eta, order, le);
        gg_ls_ldg(g, order, lg);
    }
    l1[0] = zero ? 0.0 : y + lg[0];
    l1[1] = zero ? l0 : le[0];
    l2[0] = zero ? 0.0 : lg[1];
    l2[1] = 0.0;
    l2[2] = zero ? l0 : le[1];
    if (order >= 2) {
        l3[0] = zero ? 0.0 : lg[2];
        l3[1] = l3[2] = 0.0;
        l3[3] = zero ? l0 : le[2];
    }
    if (order >= 4) {
        l4[0] = zero ? 0.0 : lg[3];
        l4[1] = l4[2] = l4[3] = 0.0;
        l4[4] = zero ? l0 : le[3];
    }
    return l0;
}

/* mgcv's gamlss.etamu() for one row: the derivatives in the linear
 * predictors (d1 .. d4) from those in the parameters (l1 .. l4) and the
 * links' ig1 = dmu/deta, g2, g3, g4 (d^k eta / dmu^k); deriv 0: d1, d2;
 * 1 or 2: and d3; 3: and d4 */
GG_FM void gg_ls_etamu_row(int K, const double *l1, const double *l2, const double *l3,
                           const double *l4, const double *ig1, const double *g2,
                           const double *g3, const double *g4, const int *i2, const int *i3,
                           int deriv, double *d1, double *d2, double *d3, double *d4)
{
    for (int i = 0; i < K; i++) d1[i] = l1[i] * ig1[i];
    int k = 0;
    for (int i = 0; i < K; i++)
        for (int j = i; j < K; j++, k++) {
            if (i == j) d2[k] = (l2[k] - l1[i] * g2[i] * ig1[i]) * (ig1[i] * ig1[i]);
            else d2[k] = l2[k] * ig1[i] * ig1[j];
        }
    if (deriv > 0) {
        k = 0;
        for (int i = 0; i < K; i++)
            for (int j = i; j < K; j++)
                for (int l = j; l < K; l++, k++) {
                    int ord[3] = {1, 1, 1};
                    const int ii[3] = {i, j, l};
                    if (i == j) { ord[0]++; ord[1] = 0; }
                    if (i == l) { ord[0]++; ord[2] = 0; }
                    if (ord[1] && j == l) { ord[1]++; ord[2] = 0; }
                    const int mo = ord[0] > ord[1] ? (ord[0] > ord[2] ? ord[0] : ord[2])
                                                   : (ord[1] > ord[2] ? ord[1] : ord[2]);
                    if (mo == 3) {
                        const int mind = i2[i + K * i];
                        const double g = ig1[i];
                        d3[k] = (l3[k] - 3.0 * l2[mind] * g2[i] * g +
                                 l1[i] * (3.0 * (g2[i] * g2[i]) * (g * g) - g3[i] * g)) *
                                pow(g, 3.0);
                    } else if (mo == 1) {
                        d3[k] = l3[k] * ig1[i] * ig1[j] * ig1[l];
                    } else {
                        int k1 = 0, k2 = 0;
                        for (int s = 0; s < 3; s++) {
                            if (ord[s] == 1) k1 = ii[s];
                            if (ord[s] == 2) k2 = ii[s];
                        }
                        const int mind = i2[k2 + K * k1];
                        d3[k] = (l3[k] - l2[mind] * g2[k2] * ig1[k2]) * ig1[k1] *
                                (ig1[k2] * ig1[k2]);
                    }
                }
    }
    if (deriv > 2) {
        k = 0;
        for (int i = 0; i < K; i++)
            for (int j = i; j < K; j++)
                for (int l = j; l < K; l++)
                    for (int m = l; m < K; m++, k++) {
                        int ord[4] = {1, 1, 1, 1};
                        const int ii[4] = {i, j, l, m};
                        if (i == j) { ord[0]++; ord[1] = 0; }
                        if (i == l) { ord[0]++; ord[2] = 0; }
                        if (i == m) { ord[0]++; ord[3] = 0; }
                        if (ord[1]) {
                            if (j == l) { ord[1]++; ord[2] = 0; }
                            if (j == m) { ord[1]++; ord[3] = 0; }
                        }
                        if (ord[2] && l == m) { ord[2]++; ord[3] = 0; }
                        int mo = 0, n2 = 0;
                        for (int s = 0; s < 4; s++) {
                            if (ord[s] > mo) mo = ord[s];
                            if (ord[s] == 2) n2++;
                        }
                        if (mo == 4) {
                            const int mi2 = i2[i + K * i], mi3 = i3[i + K * (i + K * i)];
                            const double g = ig1[i], a2 = g2[i];
                            d4[k] = (l4[k] - 6.0 * l3[mi3] * a2 * g +
                                     l2[mi2] * (15.0 * (a2 * a2) * (g * g) - 4.0 * g3[i] * g) -
                                     l1[i] * (15.0 * pow(a2, 3.0) * pow(g, 3.0) -
                                              10.0 * a2 * g3[i] * (g * g) + g4[i] * g)) *
                                    pow(g, 4.0);
                        } else if (mo == 1) {
                            d4[k] = l4[k] * ig1[i] * ig1[j] * ig1[l] * ig1[m];
                        } else if (mo == 3) {
                            int k1 = 0, k3 = 0;
                            for (int s = 0; s < 4; s++) {
                                if (ord[s] == 1) k1 = ii[s];
                                if (ord[s] == 3) k3 = ii[s];
                            }
                            const int mi2 = i2[k3 + K * k1], mi3 = i3[k3 + K * (k3 + K * k1)];
                            const double g = ig1[k3], a2 = g2[k3];
                            d4[k] = (l4[k] - 3.0 * l3[mi3] * a2 * g +
                                     l2[mi2] * (3.0 * (a2 * a2) * (g * g) - g3[k3] * g)) *
                                    ig1[k1] * pow(g, 3.0);
                        } else if (n2 == 2) {
                            int ka = -1, kb = -1;
                            for (int s = 0; s < 4; s++)
                                if (ord[s] == 2) { if (ka < 0) ka = ii[s]; else kb = ii[s]; }
                            const int mi2 = i2[ka + K * kb], mi3 = i3[ka + K * (kb + K * kb)],
                                      mi3a = i3[ka + K * (ka + K * kb)];
                            d4[k] = (l4[k] - l3[mi3] * g2[ka] * ig1[ka] -
                                     l3[mi3a] * g2[kb] * ig1[kb] +
                                     l2[mi2] * g2[ka] * g2[kb] * ig1[ka] * ig1[kb]) *
                                    (ig1[ka] * ig1[ka]) * (ig1[kb] * ig1[kb]);
                        } else {
                            int k2 = 0, ka = -1, kb = -1;
                            for (int s = 0; s < 4; s++) {
                                if (ord[s] == 2) k2 = ii[s];
                                if (ord[s] == 1) { if (ka < 0) ka = ii[s]; else kb = ii[s]; }
                            }
                            const int mi3 = i3[k2 + K * (ka + K * kb)];
                            d4[k] = (l4[k] - l3[mi3] * g2[k2] * ig1[k2]) * ig1[ka] * ig1[kb] *
                                    (ig1[k2] * ig1[k2]);
                        }
                    }
    }
}

/* gevlss(): m = (mu, rho, xi), rho the log scale, xi the shape (kept off
 * 0 by 1e-7, as mgcv's).  The expressions are mgcv's ll(), statement by
 * statement (its R translated mechanically: x^y as R's, gg_fm_rpow). */
GG_FM double gg_ls_gevlss_row(double y, const double *m, int order, double *l1, double *l2,
                              double *l3, double *l4)
{
    const double mu = m[0], rho = m[1];
    double xi = m[2];
    double eps, exp1, ymu, aa0, log_aa1, aa1, aa2, l0, bb1, bb2, cc2, cc0, log_cc3, cc3, dd3,
           dd6, dd7, dd8, ee1, ee3, ff7, gg7, hh4, jj08, jj12, jj13, kk1, kk2, ll5, ll8, mm10,
           mm11, mm12, oo10, oo13, pp07, pp08, qq05, rr17, tt08, tt16, tt18, uu1, uu2, vv09,
           ww11, ww12, ww15, yy18, ad17, ad19, ad20, ad21, ad22, ae16, af05, ag23, ah24, ah27,
           aj08, aj20, aj23;
    eps = 1e-07;
    if (xi >= 0 && xi < eps) xi = eps;
    if (xi < 0 && xi > -eps) xi = -eps;
    exp1 = exp(1.0);
    ymu = y - mu;
    aa0 = (xi * ymu) / gg_fm_rpow(exp1, rho);
    log_aa1 = log1p(aa0);
    aa1 = aa0 + 1.0;
    aa2 = 1.0 / xi;
    l0 = (-aa2 * (1.0 + xi) * log_aa1) - 1.0 / gg_fm_rpow(aa1, aa2) - rho;
    if (order >= 1) {
        bb1 = 1.0 / gg_fm_rpow(exp1, rho);
        bb2 = bb1 * xi * ymu + 1.0;
        l1[0] = (bb1 * (xi + 1.0)) / bb2 - bb1 * gg_fm_rpow(bb2, ((-1.0 / xi) - 1.0));
        cc2 = ymu;
        cc0 = bb1 * xi * cc2;
        log_cc3 = log1p(cc0);
        cc3 = cc0 + 1.0;
        l1[1] = (-bb1 * cc2 * gg_fm_rpow(cc3, ((-1.0 / xi) - 1.0))) + (bb1 * (xi + 1.0)
                * cc2) / cc3 - 1.0;
        dd3 = xi + 1.0;
        dd6 = 1.0 / cc3;
        dd7 = log_cc3;
        dd8 = 1.0 / gg_fm_rpow(xi, 2.0);
        l1[2] = (-(dd8 * dd7 - bb1 * aa2 * cc2 * dd6) / gg_fm_rpow(cc3, aa2)) + dd8 * dd3
                * dd7 - aa2 * dd7 - bb1 * aa2 * dd3 * cc2 * dd6;
        ee1 = 1.0 / gg_fm_rpow(exp1, (2.0 * rho));
        ee3 = -1.0 / xi;
        l2[0] = ee1 * (ee3 - 1.0) * xi * gg_fm_rpow(aa1, (ee3 - 2.0)) + (ee1 * xi * (xi
                + 1.0)) / gg_fm_rpow(aa1, 2.0);
        ff7 = ee3 - 1.0;
        l2[1] = bb1 * gg_fm_rpow(cc3, ff7) + ee1 * ff7 * xi * cc2 * gg_fm_rpow(cc3, (ee3
                - 2.0)) - (bb1 * dd3) / cc3 + (ee1 * xi * dd3 * cc2) / gg_fm_rpow(cc3, 2.0);
        gg7 = -aa2;
        l2[2] = (-bb1 * gg_fm_rpow(cc3, (gg7 - 1.0)) * (log_cc3 / gg_fm_rpow(xi, 2.0) - bb1
                * aa2 * cc2 * dd6)) + ee1 * cc2 * gg_fm_rpow(cc3, (gg7 - 2.0)) + bb1 * dd6
                - (ee1 * (xi + 1.0) * cc2) / gg_fm_rpow(cc3, 2.0);
        hh4 = gg_fm_rpow(cc2, 2.0);
        l2[3] = bb1 * cc2 * gg_fm_rpow(cc3, ff7) + ee1 * ff7 * xi * hh4
                * gg_fm_rpow(cc3, (ee3 - 2.0)) - (bb1 * dd3 * cc2) / cc3 + (ee1 * xi * dd3
                * hh4) / gg_fm_rpow(cc3, 2.0);
        l2[4] = (-bb1 * cc2 * gg_fm_rpow(cc3, (gg7 - 1.0)) * (log_cc3 / gg_fm_rpow(xi, 2.0)
                - bb1 * aa2 * cc2 * dd6)) + ee1 * hh4 * gg_fm_rpow(cc3, (gg7 - 2.0)) + bb1
                * cc2 * dd6 - (ee1 * (xi + 1.0) * hh4) / gg_fm_rpow(cc3, 2.0);
        jj08 = 1.0 / gg_fm_rpow(cc3, 2.0);
        jj12 = 1.0 / gg_fm_rpow(xi, 3.0);
        jj13 = 1.0 / gg_fm_rpow(cc3, aa2);
        l2[5] = (-jj13 * gg_fm_rpow((dd8 * dd7 - bb1 * aa2 * cc2 * dd6), 2.0)) - jj13
                * (ee1 * aa2 * hh4 * jj08 + 2.0 * bb1 * dd8 * cc2 * dd6 - 2.0 * jj12 * dd7)
                - 2.0 * jj12 * dd3 * dd7 + 2.0 * dd8 * dd7 + 2.0 * bb1 * dd8 * dd3 * cc2
                * dd6 - 2.0 * bb1 * aa2 * cc2 * dd6 + ee1 * aa2 * dd3 * hh4 * jj08;
    }
    if (order >= 2) {
        kk1 = 1.0 / gg_fm_rpow(exp1, (3.0 * rho));
        kk2 = gg_fm_rpow(xi, 2.0);
        l3[0] = (2.0 * kk1 * kk2 * (xi + 1.0)) / gg_fm_rpow(aa1, 3.0) - kk1 * (ee3 - 2.0)
                * (ee3 - 1.0) * kk2 * gg_fm_rpow(aa1, (ee3 - 3.0));
        ll5 = (xi * cc2) / gg_fm_rpow(exp1, rho) + 1.0;
        ll8 = ee3 - 2.0;
        l3[1] = (-2.0 * ee1 * ff7 * xi * gg_fm_rpow(ll5, ll8)) - kk1 * ll8 * ff7 * kk2
                * cc2 * gg_fm_rpow(ll5, (ee3 - 3.0)) - (2.0 * ee1 * xi * dd3)
                / gg_fm_rpow(ll5, 2.0) + (2.0 * kk1 * kk2 * dd3 * cc2) / gg_fm_rpow(ll5, 3.0);
        mm10 = gg_fm_rpow(cc3, (gg7 - 3.0));
        mm11 = gg7 - 2.0;
        mm12 = gg_fm_rpow(cc3, mm11);
        l3[2] = ee1 * (gg7 - 1.0) * xi * mm12 * (log_cc3 / gg_fm_rpow(xi, 2.0) - (bb1 * aa2
                * cc2) / cc3) - ee1 * mm12 - kk1 * mm11 * xi * cc2 * mm10 + kk1 * cc2
                * mm10 + ee1 * dd3 * jj08 + ee1 * xi * jj08 - (2.0 * kk1 * xi * dd3 * cc2)
                / gg_fm_rpow(cc3, 3.0);
        l3[3] = (-bb1 * gg_fm_rpow(cc3, ff7)) - 3.0 * ee1 * ff7 * xi * cc2
                * gg_fm_rpow(cc3, ll8) - kk1 * ll8 * ff7 * kk2 * hh4 * gg_fm_rpow(cc3, (ee3
                - 3.0)) + (bb1 * dd3) / cc3 - (3.0 * ee1 * xi * dd3 * cc2)
                / gg_fm_rpow(cc3, 2.0) + (2.0 * kk1 * kk2 * dd3 * hh4) / gg_fm_rpow(cc3, 3.0);
        oo10 = gg7 - 1.0;
        oo13 = log_cc3 / gg_fm_rpow(xi, 2.0);
        l3[4] = bb1 * gg_fm_rpow(cc3, oo10) * (bb1 * oo10 * cc2 * dd6 + oo13) + ee1 * oo10
                * xi * cc2 * mm12 * (bb1 * mm11 * cc2 * dd6 + oo13) + ee1 * aa2 * cc2
                * mm12 + ee1 * oo10 * cc2 * mm12 - bb1 * dd6 + 2.0 * ee1 * dd3 * cc2 * jj08
                + ee1 * xi * cc2 * jj08 - (2.0 * xi * dd3 * gg_fm_rpow(cc2, 2.0))
                / (gg_fm_rpow(exp1, (3.0 * rho)) * gg_fm_rpow(cc3, 3.0));
        pp07 = (-1.0 / xi) - 1.0;
        pp08 = gg_fm_rpow(cc3, pp07);
        l3[5] = (-bb1 * pp08 * gg_fm_rpow((bb1 * pp07 * cc2 * dd6 + dd8 * dd7), 2.0)) - bb1
                * pp08 * ((-ee1 * pp07 * hh4 * jj08) + 2.0 * bb1 * dd8 * cc2 * dd6 - (2.0
                * dd7) / gg_fm_rpow(xi, 3.0)) - 2.0 * ee1 * cc2 * jj08 + (2.0 * (xi + 1.0)
                * hh4) / (gg_fm_rpow(exp1, (3.0 * rho)) * gg_fm_rpow(cc3, 3.0));
        qq05 = gg_fm_rpow(cc2, 3.0);
        l3[6] = (-bb1 * cc2 * gg_fm_rpow(cc3, ff7)) - 3.0 * ee1 * ff7 * xi * hh4
                * gg_fm_rpow(cc3, ll8) - kk1 * ll8 * ff7 * kk2 * qq05
                * gg_fm_rpow(cc3, (ee3 - 3.0)) + (bb1 * dd3 * cc2) / cc3 - (3.0 * ee1 * xi
                * dd3 * hh4) / gg_fm_rpow(cc3, 2.0) + (2.0 * kk1 * kk2 * dd3 * qq05)
                / gg_fm_rpow(cc3, 3.0);
        rr17 = log_cc3 / gg_fm_rpow(xi, 2.0) - bb1 * aa2 * cc2 * dd6;
        l3[7] = bb1 * cc2 * gg_fm_rpow(cc3, oo10) * rr17 + ee1 * oo10 * xi * hh4 * mm12
                * rr17 - 2.0 * ee1 * hh4 * mm12 - kk1 * mm11 * xi * qq05 * mm10 + kk1
                * qq05 * mm10 - bb1 * cc2 * dd6 + 2.0 * ee1 * dd3 * hh4 * jj08 + ee1 * xi
                * hh4 * jj08 - (2.0 * kk1 * xi * dd3 * qq05) / gg_fm_rpow(cc3, 3.0);
        l3[8] = (-bb1 * cc2 * pp08 * gg_fm_rpow((bb1 * pp07 * cc2 * dd6 + dd8 * dd7), 2.0))
                - bb1 * cc2 * pp08 * ((-ee1 * pp07 * hh4 * jj08) + 2.0 * bb1 * dd8 * cc2
                * dd6 - (2.0 * dd7) / gg_fm_rpow(xi, 3.0)) - 2.0 * ee1 * hh4 * jj08 + (2.0
                * (xi + 1.0) * gg_fm_rpow(cc2, 3.0)) / (gg_fm_rpow(exp1, (3.0 * rho))
                * gg_fm_rpow(cc3, 3.0));
        tt08 = 1.0 / gg_fm_rpow(cc3, 3.0);
        tt16 = 1.0 / gg_fm_rpow(xi, 4.0);
        tt18 = dd8 * dd7 - bb1 * aa2 * cc2 * dd6;
        l3[9] = (-jj13 * gg_fm_rpow(tt18, 3.0)) - 3.0 * jj13 * (ee1 * aa2 * hh4 * jj08
                + 2.0 * bb1 * dd8 * cc2 * dd6 - 2.0 * jj12 * dd7) * tt18 - jj13 * ((-2.0
                * kk1 * aa2 * qq05 * tt08) - 3.0 * ee1 * dd8 * hh4 * jj08 - 6.0 * bb1
                * jj12 * cc2 * dd6 + 6.0 * tt16 * dd7) + 6.0 * tt16 * dd3 * dd7 - 6.0
                * jj12 * dd7 - 6.0 * bb1 * jj12 * dd3 * cc2 * dd6 + 6.0 * bb1 * dd8 * cc2
                * dd6 - 3.0 * ee1 * dd8 * dd3 * hh4 * jj08 + 3.0 * ee1 * aa2 * hh4 * jj08
                - 2.0 * kk1 * aa2 * dd3 * qq05 * tt08;
    }
    if (order >= 4) {
        uu1 = 1.0 / gg_fm_rpow(exp1, (4.0 * rho));
        uu2 = gg_fm_rpow(xi, 3.0);
        l4[0] = uu1 * (ee3 - 3.0) * (ee3 - 2.0) * (ee3 - 1.0) * uu2 * gg_fm_rpow(aa1, (ee3
                - 4.0)) + (6.0 * uu1 * uu2 * (xi + 1.0)) / gg_fm_rpow(aa1, 4.0);
        vv09 = ee3 - 3.0;
        l4[1] = 3.0 * kk1 * ll8 * ff7 * kk2 * gg_fm_rpow(ll5, vv09) + uu1 * vv09 * ll8
                * ff7 * uu2 * cc2 * gg_fm_rpow(ll5, (ee3 - 4.0)) - (6.0 * kk1 * kk2 * dd3)
                / gg_fm_rpow(ll5, 3.0) + (6.0 * uu1 * uu2 * dd3 * cc2) / gg_fm_rpow(ll5, 4.0);
        ww11 = gg7 - 3.0;
        ww12 = gg_fm_rpow(cc3, (gg7 - 4.0));
        ww15 = gg_fm_rpow(cc3, ww11);
        l4[2] = (-kk1 * mm11 * oo10 * kk2 * ww15 * (log_cc3 / kk2 - (bb1 * aa2 * cc2)
                / cc3)) + 2.0 * kk1 * mm11 * xi * ww15 - kk1 * ww15 + uu1 * ww11 * mm11
                * kk2 * cc2 * ww12 - uu1 * oo10 * xi * cc2 * ww12 - uu1 * ww11 * xi * cc2
                * ww12 + 2.0 * kk1 * kk2 * tt08 + 4.0 * kk1 * xi * dd3 * tt08 - (6.0 * uu1
                * kk2 * dd3 * cc2) / gg_fm_rpow(cc3, 4.0);
        l4[3] = 4.0 * ee1 * ff7 * xi * gg_fm_rpow(ll5, ll8) + 5.0 * kk1 * ll8 * ff7 * kk2
                * cc2 * gg_fm_rpow(ll5, vv09) + uu1 * vv09 * ll8 * ff7 * uu2 * hh4
                * gg_fm_rpow(ll5, (ee3 - 4.0)) + (4.0 * ee1 * xi * dd3)
                / gg_fm_rpow(ll5, 2.0) - (10.0 * kk1 * kk2 * dd3 * cc2)
                / gg_fm_rpow(ll5, 3.0) + (6.0 * uu1 * uu2 * dd3 * hh4) / gg_fm_rpow(ll5, 4.0);
        yy18 = log_cc3 / kk2;
        l4[4] = (-2.0 * ee1 * oo10 * xi * mm12 * (bb1 * mm11 * cc2 * dd6 + yy18)) - kk1
                * mm11 * oo10 * kk2 * cc2 * ww15 * (bb1 * ww11 * cc2 * dd6 + yy18) - 2.0
                * ee1 * aa2 * mm12 - 2.0 * ee1 * oo10 * mm12 - 2.0 * kk1 * mm11 * oo10 * xi
                * cc2 * ww15 - kk1 * oo10 * cc2 * ww15 - kk1 * mm11 * cc2 * ww15 - 2.0
                * ee1 * dd3 * jj08 - 2.0 * ee1 * xi * jj08 + 2.0 * kk1 * kk2 * cc2 * tt08
                + 8.0 * kk1 * xi * dd3 * cc2 * tt08 - (6.0 * kk2 * dd3
                * gg_fm_rpow(cc2, 2.0)) / (gg_fm_rpow(exp1, (4.0 * rho))
                * gg_fm_rpow(cc3, 4.0));
        l4[5] = ee1 * oo10 * xi * mm12 * gg_fm_rpow(tt18, 2.0) - 2.0 * ee1 * mm12 * tt18
                - 2.0 * kk1 * mm11 * xi * cc2 * ww15 * tt18 + 2.0 * kk1 * cc2 * ww15 * tt18
                + ee1 * oo10 * xi * mm12 * (ee1 * aa2 * hh4 * jj08 + 2.0 * bb1 * dd8 * cc2
                * dd6 - (2.0 * dd7) / gg_fm_rpow(xi, 3.0)) + 4.0 * kk1 * cc2 * ww15 + 2.0
                * uu1 * ww11 * xi * hh4 * ww12 - 4.0 * uu1 * hh4 * ww12 + 2.0 * ee1 * jj08
                - 4.0 * kk1 * dd3 * cc2 * tt08 - 4.0 * kk1 * xi * cc2 * tt08 + (6.0 * uu1
                * xi * dd3 * hh4) / gg_fm_rpow(cc3, 4.0);
        l4[6] = bb1 * gg_fm_rpow(cc3, ff7) + 7.0 * ee1 * ff7 * xi * cc2
                * gg_fm_rpow(cc3, ll8) + 6.0 * kk1 * ll8 * ff7 * kk2 * hh4
                * gg_fm_rpow(cc3, vv09) + uu1 * vv09 * ll8 * ff7 * uu2 * qq05
                * gg_fm_rpow(cc3, (ee3 - 4.0)) - (bb1 * dd3) / cc3 + (7.0 * ee1 * xi * dd3
                * cc2) / gg_fm_rpow(cc3, 2.0) - (12.0 * kk1 * kk2 * dd3 * hh4)
                / gg_fm_rpow(cc3, 3.0) + (6.0 * uu1 * uu2 * dd3 * qq05) / gg_fm_rpow(cc3, 4.0);
        l4[7] = (-bb1 * gg_fm_rpow(cc3, oo10) * (bb1 * oo10 * cc2 * dd6 + yy18)) - 3.0
                * ee1 * oo10 * xi * cc2 * mm12 * (bb1 * mm11 * cc2 * dd6 + yy18) - kk1
                * mm11 * oo10 * kk2 * hh4 * ww15 * (bb1 * ww11 * cc2 * dd6 + yy18) - 3.0
                * ee1 * aa2 * cc2 * mm12 - 3.0 * ee1 * oo10 * cc2 * mm12 - 2.0 * kk1 * mm11
                * oo10 * xi * hh4 * ww15 - kk1 * oo10 * hh4 * ww15 - kk1 * mm11 * hh4
                * ww15 + bb1 * dd6 - 4.0 * ee1 * dd3 * cc2 * jj08 - 3.0 * ee1 * xi * cc2
                * jj08 + 2.0 * kk1 * kk2 * hh4 * tt08 + 10.0 * kk1 * xi * dd3 * hh4 * tt08
                - (6.0 * kk2 * dd3 * gg_fm_rpow(cc2, 3.0)) / (gg_fm_rpow(exp1, (4.0 * rho))
                * gg_fm_rpow(cc3, 4.0));
        ad17 = 2.0 * bb1 * dd8 * cc2 * dd6;
        ad19 = -(2.0 * dd7) / gg_fm_rpow(xi, 3.0);
        ad20 = gg_fm_rpow(cc3, oo10);
        ad21 = dd8 * dd7;
        ad22 = ad21 + bb1 * mm11 * cc2 * dd6;
        l4[8] = bb1 * ad20 * gg_fm_rpow((bb1 * oo10 * cc2 * dd6 + ad21), 2.0) + ee1 * oo10
                * xi * cc2 * mm12 * gg_fm_rpow(ad22, 2.0) + 2.0 * ee1 * aa2 * cc2 * mm12
                * ad22 + 2.0 * ee1 * oo10 * cc2 * mm12 * ad22 + bb1 * ad20 * ((-ee1 * oo10
                * hh4 * jj08) + ad17 + ad19) + ee1 * oo10 * xi * cc2 * mm12 * ((-ee1 * mm11
                * hh4 * jj08) + ad17 + ad19) + 4.0 * ee1 * cc2 * jj08 - 6.0 * kk1 * dd3
                * hh4 * tt08 - 4.0 * kk1 * xi * hh4 * tt08 + (6.0 * xi * dd3
                * gg_fm_rpow(cc2, 3.0)) / (gg_fm_rpow(exp1, (4.0 * rho))
                * gg_fm_rpow(cc3, 4.0));
        ae16 = dd8 * dd7 + bb1 * pp07 * cc2 * dd6;
        l4[9] = (-bb1 * pp08 * gg_fm_rpow(ae16, 3.0)) - 3.0 * bb1 * pp08 * ((-ee1 * pp07
                * hh4 * jj08) + 2.0 * bb1 * dd8 * cc2 * dd6 - 2.0 * jj12 * dd7) * ae16
                - bb1 * pp08 * (2.0 * kk1 * pp07 * qq05 * tt08 - 3.0 * ee1 * dd8 * hh4
                * jj08 - 6.0 * bb1 * jj12 * cc2 * dd6 + (6.0 * dd7) / gg_fm_rpow(xi, 4.0))
                + 6.0 * kk1 * hh4 * tt08 - (6.0 * (xi + 1.0) * qq05)
                / (gg_fm_rpow(exp1, (4.0 * rho)) * gg_fm_rpow(cc3, 4.0));
        af05 = gg_fm_rpow(cc2, 4.0);
        l4[10] = bb1 * cc2 * gg_fm_rpow(cc3, ff7) + 7.0 * ee1 * ff7 * xi * hh4
                * gg_fm_rpow(cc3, ll8) + 6.0 * kk1 * ll8 * ff7 * kk2 * qq05
                * gg_fm_rpow(cc3, vv09) + uu1 * vv09 * ll8 * ff7 * uu2 * af05
                * gg_fm_rpow(cc3, (ee3 - 4.0)) - (bb1 * dd3 * cc2) / cc3 + (7.0 * ee1 * xi
                * dd3 * hh4) / gg_fm_rpow(cc3, 2.0) - (12.0 * kk1 * kk2 * dd3 * qq05)
                / gg_fm_rpow(cc3, 3.0) + (6.0 * uu1 * uu2 * dd3 * af05) / gg_fm_rpow(cc3, 4.0);
        ag23 = log_cc3 / kk2 - bb1 * aa2 * cc2 * dd6;
        l4[11] = (-bb1 * cc2 * gg_fm_rpow(cc3, oo10) * ag23) - 3.0 * ee1 * oo10 * xi * hh4
                * mm12 * ag23 - kk1 * mm11 * oo10 * kk2 * qq05 * ww15 * ag23 + 4.0 * ee1
                * hh4 * mm12 + 5.0 * kk1 * mm11 * xi * qq05 * ww15 - 4.0 * kk1 * qq05
                * ww15 + uu1 * ww11 * mm11 * kk2 * af05 * ww12 - uu1 * oo10 * xi * af05
                * ww12 - uu1 * ww11 * xi * af05 * ww12 + bb1 * cc2 * dd6 - 4.0 * ee1 * dd3
                * hh4 * jj08 - 3.0 * ee1 * xi * hh4 * jj08 + 2.0 * kk1 * kk2 * qq05 * tt08
                + 10.0 * kk1 * xi * dd3 * qq05 * tt08 - (6.0 * uu1 * kk2 * dd3 * af05)
                / gg_fm_rpow(cc3, 4.0);
        ah24 = (-(2.0 * dd7) / gg_fm_rpow(xi, 3.0)) + 2.0 * bb1 * dd8 * cc2 * dd6 + ee1
                * aa2 * hh4 * jj08;
        ah27 = gg_fm_rpow(tt18, 2.0);
        l4[12] = bb1 * cc2 * ad20 * ah27 + ee1 * oo10 * xi * hh4 * mm12 * ah27 - 4.0 * ee1
                * hh4 * mm12 * tt18 - 2.0 * kk1 * mm11 * xi * qq05 * ww15 * tt18 + 2.0
                * kk1 * qq05 * ww15 * tt18 + bb1 * cc2 * ad20 * ah24 + ee1 * oo10 * xi
                * hh4 * mm12 * ah24 + 6.0 * kk1 * qq05 * ww15 + 2.0 * uu1 * ww11 * xi
                * af05 * ww12 - 4.0 * uu1 * af05 * ww12 + 4.0 * ee1 * hh4 * jj08 - 6.0
                * kk1 * dd3 * qq05 * tt08 - 4.0 * kk1 * xi * qq05 * tt08 + (6.0 * uu1 * xi
                * dd3 * af05) / gg_fm_rpow(cc3, 4.0);
        l4[13] = (-bb1 * cc2 * pp08 * gg_fm_rpow(ae16, 3.0)) - 3.0 * bb1 * cc2 * pp08
                * ((-ee1 * pp07 * hh4 * jj08) + 2.0 * bb1 * dd8 * cc2 * dd6 - 2.0 * jj12
                * dd7) * ae16 - bb1 * cc2 * pp08 * (2.0 * kk1 * pp07 * qq05 * tt08 - 3.0
                * ee1 * dd8 * hh4 * jj08 - 6.0 * bb1 * jj12 * cc2 * dd6 + (6.0 * dd7)
                / gg_fm_rpow(xi, 4.0)) + 6.0 * kk1 * qq05 * tt08 - (6.0 * (xi + 1.0)
                * gg_fm_rpow(cc2, 4.0)) / (gg_fm_rpow(exp1, (4.0 * rho))
                * gg_fm_rpow(cc3, 4.0));
        aj08 = 1.0 / gg_fm_rpow(cc3, 4.0);
        aj20 = 1.0 / gg_fm_rpow(xi, 5.0);
        aj23 = (-2.0 * jj12 * dd7) + 2.0 * bb1 * dd8 * cc2 * dd6 + ee1 * aa2 * hh4 * jj08;
        l4[14] = (-jj13 * gg_fm_rpow(tt18, 4.0)) - 6.0 * jj13 * aj23
                * gg_fm_rpow(tt18, 2.0) - 3.0 * jj13 * gg_fm_rpow(aj23, 2.0) - 4.0 * jj13
                * ((-2.0 * kk1 * aa2 * qq05 * tt08) - 3.0 * ee1 * dd8 * hh4 * jj08 - 6.0
                * bb1 * jj12 * cc2 * dd6 + 6.0 * tt16 * dd7) * tt18 - jj13 * (6.0 * uu1
                * aa2 * af05 * aj08 + 8.0 * kk1 * dd8 * qq05 * tt08 + 12.0 * ee1 * jj12
                * hh4 * jj08 + 24.0 * bb1 * tt16 * cc2 * dd6 - 24.0 * aj20 * dd7) - 24.0
                * aj20 * dd3 * dd7 + 24.0 * tt16 * dd7 + 24.0 * bb1 * tt16 * dd3 * cc2
                * dd6 - 24.0 * bb1 * jj12 * cc2 * dd6 + 12.0 * ee1 * jj12 * dd3 * hh4
                * jj08 - 12.0 * ee1 * dd8 * hh4 * jj08 + 8.0 * kk1 * dd8 * dd3 * qq05
                * tt08 - 8.0 * kk1 * aa2 * qq05 * tt08 + 6.0 * uu1 * aa2 * dd3 * af05 * aj08;
    }
    return l0;
}

/* twlss(): m = (mu, theta, rho): the Tweedie power p from theta on (a, b)
 * as tw()'s (efam_tw.h), rho the log scale.  The log density and its
 * theta and rho derivatives are gg_fm_tw_ld()'s series (tw()'s, the
 * columns 1-6 of mgcv's ldTweedie()), those in mu closed-form (its
 * columns 7-10: l_mu = (y - mu) mu^-p / phi, ...).  mgcv's twlss() has
 * no third or fourth derivatives (its available.derivs is 0): l3, l4 are
 * not set. */
GG_FM double gg_ls_twlss_row(double y, const double *m, double a, double b, int order,
                             double *l1, double *l2)
{
    const double mu = m[0], th = m[1], rho = m[2];
    double ld[6];
    gg_fm_tw_ld(y, mu, rho, th, a, b, order >= 1 ? 2 : 0, ld);
    if (order >= 1) {
        const double p = gg_fm_tw_p(th, a, b), phi = exp(rho);
        double d1, d2;
        gg_fm_tw_dpth(th, a, b, &d1, &d2);
        const double mp = gg_fm_rpow(mu, -p), lmu = (y - mu) * mp / phi;
        l1[0] = lmu;
        l1[1] = ld[3];
        l1[2] = ld[1];
        l2[0] = (-p * y * gg_fm_rpow(mu, -p - 1.0) - (1.0 - p) * mp) / phi;
        l2[1] = -d1 * (y - mu) * mp * log(mu) / phi;
        l2[2] = -lmu;
        l2[3] = ld[4];
        l2[4] = ld[5];
        l2[5] = ld[2];
    }
    return ld[0];
}

#include "ls_shash.h"

/* One row of a family: the parameters from the linear predictors eta (K)
 * through the links, the row's log likelihood (returned) and, for ll()'s
 * deriv >= 1, the derivatives in the predictors d1 .. d4 (deriv 1: d1, d2;
 * 3: and d3; 4: and d4; multinom's own, the others' through the links).
 * NaN for a family code it does not know. */
GG_FM double gg_ls_row(int fam, int K, const gg_fm_link *links, double y, const double *eta,
                       int deriv, const int *i2, const int *i3, double *d1, double *d2,
                       double *d3, double *d4)
{
    double m[GG_LS_MAXK], l1[GG_LS_MAXK], l2[GG_LS_MAX2], l3[GG_LS_MAX3], l4[GG_LS_MAX4];
    double ig1[GG_LS_MAXK], g2[GG_LS_MAXK], g3[GG_LS_MAXK], g4[GG_LS_MAXK];
    /* the family's ll(): l3 where deriv > 1, l4 where deriv > 3 */
    const int order = deriv >= 4 ? 4 : deriv >= 2 ? 2 : deriv;
    if (fam == GG_LS_MULTINOM)
        return gg_ls_multinom_row(K, y, eta, order, i2, i3, d1, d2, d3, d4);
    for (int k = 0; k < K; k++) m[k] = gg_fm_linkinv(links[k], eta[k]);
    /* (gevlss's shape off 0, for its row and its link's derivatives alike) */
    if (fam == GG_LS_GEVLSS) {
        if (m[2] >= 0 && m[2] < 1e-7) m[2] = 1e-7;
        if (m[2] < 0 && m[2] > -1e-7) m[2] = -1e-7;
    }
    double l0;
    switch (fam) {
    case GG_LS_GAULSS: l0 = gg_ls_gaulss_row(y, m, order, l1, l2, l3, l4); break;
    case GG_LS_GUMBLS: l0 = gg_ls_gumbls_row(y, m, order, l1, l2, l3, l4); break;
    case GG_LS_GAMMALS: l0 = gg_ls_gammals_row(y, m, order, l1, l2, l3, l4); break;
    case GG_LS_ZIPLSS: l0 = gg_ls_ziplss_row(y, m, order, l1, l2, l3, l4); break;
    case GG_LS_GEVLSS: l0 = gg_ls_gevlss_row(y, m, order, l1, l2, l3, l4); break;
    /* (shash()'s phiPen in the power slot of phi's identity link) */
    case GG_LS_SHASH:
        l0 = gg_ls_shash_row(y, m, links[3].power, order, l1, l2, l3, l4);
        break;
    case GG_LS_TWLSS: {
        /* (tw()'s a and b in the power slots of theta's and rho's identity
         * links: R/family_ls_rows.R; only l1, l2, as mgcv's twlss()) */
        l0 = gg_ls_twlss_row(y, m, links[1].power, links[2].power, order, l1, l2);
        if (deriv < 1) return l0;
        for (int k = 0; k < K; k++) {
            ig1[k] = gg_fm_mu_eta(links[k], eta[k]);
            g2[k] = gg_fm_d2link(links[k], m[k]);
            g3[k] = g4[k] = 0.0;
        }
        gg_ls_etamu_row(K, l1, l2, l3, l4, ig1, g2, g3, g4, i2, i3, 0, d1, d2, d3, d4);
        for (int k = 0; deriv >= 3 && k < gg_ls_n3(K); k++) d3[k] = 0.0;
        for (int k = 0; deriv >= 4 && k < gg_ls_n4(K); k++) d4[k] = 0.0;
        return l0;
    }
    default: return GG_FM_NAN;
    }
    if (deriv < 1) return l0;
    for (int k = 0; k < K; k++) {
        ig1[k] = gg_fm_mu_eta(links[k], eta[k]);
        g2[k] = gg_fm_d2link(links[k], m[k]);
        g3[k] = deriv > 1 ? gg_fm_d3link(links[k], m[k]) : 0.0;
        g4[k] = deriv > 3 ? gg_fm_d4link(links[k], m[k]) : 0.0;
    }
    gg_ls_etamu_row(K, l1, l2, l3, l4, ig1, g2, g3, g4, i2, i3, deriv - 1, d1, d2, d3, d4);
    return l0;
}

#endif
