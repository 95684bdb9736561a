// rows.cu -- the row-wise steps of penalized IRLS on resident device data:
// starting values, X beta, step halving, the family/link row state
// (mu, working weights, working response, deviance).  (The row quadratic
// forms behind leverages and prediction standard errors are gram.cu's
// gram_leverage, a tiled product.)  The family and
// link arithmetic is family_math.h, shared with the CPU backend.
// All reductions are per-block partial sums in a fixed grid, summed on the
// host in block order: results are reproducible bit for bit.

#include "efam_math.h"

#define NTHREADS 256
#include "block_sum.h"

// row i's prior weight: no vector is kept when every weight is 1 (pw null)
#define PW(i) (pw != nullptr ? pw[(i)] : 1.0)

// eta[i] = linkfun(mustart(y[i], pw[i])) (an extended family, efam != 0:
// efam_math.h's mustart with its parameters par, yat its second response
// column or null: gfam()'s member index); partial[b] = number of
// rows of block b without a valid start (the host then finds which; a
// censored family's start is taken as it is, family.c's gg_start_valid).
extern "C" __global__ void __launch_bounds__(NTHREADS)
rows_init_eta(int fam, gg_fm_link link, int efam, gg_fm_efpar par, const double *__restrict__ y,
              const double *__restrict__ yat, const double *__restrict__ pw, long long n,
              double *__restrict__ eta,
              double *__restrict__ eta_old, double *__restrict__ partial)
{
    double bad = 0.0;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        const double ya = yat != nullptr ? yat[i] : y[i];
        const gg_fm_link l = efam ? gg_fm_ef_link(fam, link, ya, &par) : link;
        double e = gg_fm_linkfun(l, efam ? gg_fm_ef_mustart(fam, y[i], ya, PW(i), &par)
                                         : gg_fm_mustart(fam, y[i], PW(i)));
        if (efam ? !gg_fm_ef_start_valid(fam, l, ya, e, &par) : !gg_fm_start_valid(fam, link, e))
            bad += 1.0;
        eta[i] = e;
        if (eta_old != nullptr) eta_old[i] = e;     // (none in a lean session)
    }
    block_sum(bad, partial);
}

// eta = X beta + offset; beta lives in device memory (p doubles).  X has
// leading dimension ldx (n when resident, the chunk's rows when streamed).
extern "C" __global__ void rows_xbeta(const double *__restrict__ X, long long ldx,
                                      long long n, int p,
                                      const double *__restrict__ beta,
                                      const double *__restrict__ offset,
                                      double *__restrict__ eta)
{
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int j = 0; j < p; j++)
            s += X[(size_t) j * ldx + i] * beta[j];
        eta[i] = offset != nullptr ? s + offset[i] : s;
    }
}

// mode 0: eta_old = eta (keep);  mode 1: eta = (eta + eta_old) / 2 (halve)
extern "C" __global__ void rows_eta_step(int mode, long long n, double *__restrict__ eta,
                                         double *__restrict__ eta_old)
{
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        if (mode == 0)
            eta_old[i] = eta[i];
        else
            eta[i] = (eta[i] + eta_old[i]) / 2;
    }
}

// mu, w, z from eta for every row; partial[b] = block b's deviance sum.
// off may be null (no offset); th: the family's parameter (negbin's
// theta, Tweedie's p); an extended family (efam != 0): bgam.fit's rows
// from its derivatives (efam_math.h) with parameters par (yat: a censored
// family's second response column, or null).  Launched with
// NTHREADS threads per block.
extern "C" __global__ void __launch_bounds__(NTHREADS)
rows_state(int fam, gg_fm_link link, double th, int efam, gg_fm_efpar par, const double *__restrict__ y,
           const double *__restrict__ yat, const double *__restrict__ pw,
           const double *__restrict__ off, const double *__restrict__ eta, long long n,
           double *__restrict__ mu, double *__restrict__ w, double *__restrict__ z,
           double *__restrict__ partial)
{
    double dev = 0.0;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        double m, wi, zi;
        const double o = off != nullptr ? off[i] : 0.0;
        dev += efam ? gg_fm_ef_row(fam, link, y[i], yat != nullptr ? yat[i] : y[i], PW(i), o,
                                   eta[i], &par, &m, &wi, &zi)
                    : gg_fm_irls_row(fam, link, y[i], PW(i), o, eta[i], th, &m, &wi, &zi);
        if (mu != nullptr) mu[i] = m;     // (a lean session's: made when asked, rows_mu)
        w[i] = wi;
        z[i] = zi;
    }
    block_sum(dev, partial);
}

// mu = linkinv(eta) for every row: a lean session's fitted values, made
// when asked (its row state keeps none for a family that is not extended;
// rows_state's mu is this, bit for bit).
extern "C" __global__ void __launch_bounds__(NTHREADS)
rows_mu(gg_fm_link link, const double *__restrict__ eta, long long n, double *__restrict__ mu)
{
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x)
        mu[i] = gg_fm_linkinv(link, eta[i]);
}

// An extended family: the sums mgcv's estimate.theta() takes at the
// parameters par, from the current mu (efam_math.h, its layout; nsum of
// them, derivatives up to deriv): partial[k * gridDim.x + b] = block b's
// sum k; summed on the host in block order.
extern "C" __global__ void __launch_bounds__(NTHREADS)
rows_ef_sums(int fam, gg_fm_efpar par, int deriv, int nsum, const double *__restrict__ y,
             const double *__restrict__ yat, const double *__restrict__ pw, const double *__restrict__ mu, long long n,
             double *__restrict__ partial)
{
    double s[GG_FM_EF_MAXSUM];
    for (int k = 0; k < nsum; k++) s[k] = 0.0;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x)
        gg_fm_ef_theta_row(fam, y[i], yat != nullptr ? yat[i] : y[i], mu[i], PW(i), &par, deriv,
                           s);
    for (int k = 0; k < nsum; k++) {
        block_sum(s[k], partial + (size_t) k * gridDim.x);
        __syncthreads();
    }
}
