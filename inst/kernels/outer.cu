// outer.cu -- the row-wise work of gam()'s outer smoothing parameter
// iteration (mgcv's gam.fit3; src/cuda/cuda_outer.c drives it) on the device
// backend's resident row state: Newton's and Fisher's working weights
// and their derivatives in eta, the deviance's and the Pearson
// statistic's, Newton's penalized IRLS rows, an extended family's rows
// (gam.fit4's, efam_outer.h) and its Newton rows, and the elementwise
// products that weight the derivative products' Gram passes.  The per-row
// arithmetic is outer_math.h and efam_outer.h, which the host's rows
// (src/engine/outer_rows.c) evaluate too.  Reductions are per-block partial sums in a fixed grid,
// summed on the host in block order.

#include "outer_math.h"
#include "efam_outer.h"

#define NTHREADS 256
#include "block_sum.h"

// row i's prior weight: no vector is kept when every weight is 1 (pw null)
#define PW(i) (pw != nullptr ? pw[(i)] : 1.0)

// The rows at mu: Newton's weights w and their derivatives w1, w2 (with
// fisher 0 -- a link that is not canonical -- Fisher's derivatives wF1,
// wF2 too), dev1, and with pearson pe1, pe2, partial[b] = block b's part
// of the Pearson statistic and partial[nb + b] its part of s.bar's sum (nb
// = the grid).  th: negbin's theta, Tweedie's p.
extern "C" __global__ void __launch_bounds__(NTHREADS)
outer_rows(int f, gg_fm_link l, int fisher, int pearson, double th, const double *__restrict__ y,
           const double *__restrict__ pw, const double *__restrict__ mu, long long n,
           double *__restrict__ w, double *__restrict__ w1, double *__restrict__ w2,
           double *__restrict__ wF1, double *__restrict__ wF2, double *__restrict__ dev1,
           double *__restrict__ pe1, double *__restrict__ pe2, double *__restrict__ partial)
{
    double s = 0.0, sb = 0.0;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        const double yi = y[i], pi = PW(i), mi = mu[i];
        const gg_fm_orow o = gg_fm_outer_row(f, l, fisher, yi, pi, mi, th);
        w[i] = o.w;
        w1[i] = o.w1;
        w2[i] = o.w2;
        dev1[i] = o.dev1;
        if (!fisher) {
            const gg_fm_orow F = gg_fm_outer_row(f, l, 1, yi, pi, mi, th);
            wF1[i] = F.w1;
            wF2[i] = F.w2;
        }
        if (pearson) {
            double a, b;
            s += gg_fm_pearson_row(f, l, yi, pi, mi, o.g1, th, &a, &b);
            sb += gg_fm_sbar_row(f, yi, mi, th);
            pe1[i] = a;
            pe2[i] = b;
        }
    }
    block_sum(s, partial);
    block_sum(sb, partial + gridDim.x);
}

// Newton's penalized IRLS rows at eta (offset off, may be null) and mu:
// weights w and working response z (gg_fm_newton_row); partial[b] = the
// rows of block b whose Newton weight is not positive.
extern "C" __global__ void __launch_bounds__(NTHREADS)
outer_newton(int f, gg_fm_link l, double th, const double *__restrict__ y,
             const double *__restrict__ pw, const double *__restrict__ off,
             const double *__restrict__ eta, const double *__restrict__ mu, long long n,
             double *__restrict__ w, double *__restrict__ z, double *__restrict__ partial)
{
    double bad = 0.0;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        double wi = 0.0, zi = 0.0;
        const double o = off != nullptr ? off[i] : 0.0;
        if (!gg_fm_newton_row(f, l, y[i], PW(i), o, eta[i], mu[i], th, &wi, &zi))
            bad += 1.0;
        w[i] = wi;
        z[i] = zi;
    }
    block_sum(bad, partial);
}

// An extended family's rows at mu (efam_outer.h's gg_fm_ef_outer_row,
// level 0 or 2, parameters par with nth theta values; yat: a censored
// family's second response column, or null): w, w1, w2, dev1,
// Fisher's weight wf and theta's block th (n x GG_FM_EFO_NCOL(nth));
// partial[k nb + b] = block b's sum k of GG_FM_EFO_NSUM(nth): rows not
// finite, Dth, Dth2 (nb = the grid).
extern "C" __global__ void __launch_bounds__(NTHREADS)
outer_ef_rows(int f, gg_fm_link l, int level, gg_fm_efpar par, const double *__restrict__ y,
              const double *__restrict__ yat, const double *__restrict__ pw, const double *__restrict__ mu, long long n,
              double *__restrict__ w, double *__restrict__ w1, double *__restrict__ w2,
              double *__restrict__ dev1, double *__restrict__ wf, double *__restrict__ th,
              double *__restrict__ partial)
{
    const int nth = par.nth, npk = GG_FM_EFO_NPK(nth), ncol = GG_FM_EFO_NCOL(nth);
    const int ns = GG_FM_EFO_NSUM(nth);
    double s[GG_FM_EFO_NSUM(GG_FM_EFO_MAXTH)];
    for (int k = 0; k < ns; k++)
        s[k] = 0.0;
    gg_fm_eforow o;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        gg_fm_ef_outer_row(f, l, y[i], yat != nullptr ? yat[i] : y[i], PW(i), mu[i], &par, level,
                           &o);
        w[i] = o.w;
        w1[i] = o.w1;
        w2[i] = o.w2;
        dev1[i] = o.dev1;
        wf[i] = o.wf;
        for (int k = 0; k < ncol; k++)
            th[i + k * n] = o.th[k];
        s[0] += o.good ? 0.0 : 1.0;
        for (int k = 0; k < nth; k++)
            s[1 + k] += o.dth[k];
        for (int k = 0; k < npk; k++)
            s[1 + nth + k] += o.dth2[k];
    }
    for (int k = 0; k < ns; k++)
        block_sum(s[k], partial + k * gridDim.x);
}

// gam.fit4's Newton rows at an extended family's rows: weights wout = w,
// working response zout = eta - off and hdev = dev1 / 2, with mask the
// rows whose w is not positive set to 0 in wout and hdev.
extern "C" __global__ void
outer_ef_newton(long long n, int mask, const double *__restrict__ w,
                const double *__restrict__ dev1, const double *__restrict__ eta,
                const double *__restrict__ off, double *__restrict__ wout,
                double *__restrict__ zout, double *__restrict__ hdev)
{
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        const double wi = w[i], e = eta[i] - (off != nullptr ? off[i] : 0.0);
        // (gam.fit4's good rows: w and w (eta - offset) - Deta / 2 finite)
        const int good = isfinite(wi) && isfinite(wi * e - dev1[i] / 2);
        const int keep = good && (!mask || wi > 0);
        wout[i] = keep ? wi : 0.0;
        zout[i] = good ? e : 0.0;
        hdev[i] = keep ? dev1[i] / 2 : 0.0;
    }
}

// out[i] = scale a[i] b[i] c[i] + add[i], a null factor taken as 1 and a
// null add as 0: the weights of the derivative products (w' eta_k, h w',
// w' eta_k + a, a_k eta_j + b_jk, ...), a copy, or zeros.
extern "C" __global__ void
outer_prod(long long n, double scale, const double *__restrict__ a,
           const double *__restrict__ b, const double *__restrict__ c,
           const double *__restrict__ add, double *__restrict__ out)
{
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        double v = scale;
        if (a != nullptr) v *= a[i];
        if (b != nullptr) v *= b[i];
        if (c != nullptr) v *= c[i];
        if (add != nullptr) v += add[i];
        out[i] = v;
    }
}
