// ls.cu -- the row-wise work of the location-scale families' ll() (mgcv's
// gaulss, gumbls, gammals, ziplss, gevlss, twlss, shash and multinom) on the
// device backend's resident rows (src/cuda/cuda_ls.c drives it): each
// row's log likelihood and its derivatives in the K linear predictors
// (ls_math.h, which the host's rows -- src/family/family_ls.c -- evaluate
// too), the weights of the Hessian's derivative products, and the rows'
// terms of REML's traces.
// The linear predictors, the Gram products and the rows' quadratic forms
// are the backend's own passes over X (cuda_backend.c).  Reductions are
// per-block partial sums in a fixed grid, summed on the host in block
// order.

#include "ls_math.h"

#define NTHREADS 256
#include "block_sum.h"

#define K2MAX (GG_LS_MAXK * GG_LS_MAXK)
#define K3MAX (K2MAX * GG_LS_MAXK)
#define K4MAX (K3MAX * GG_LS_MAXK)

// an index array (len entries, 0-based packed columns) into shared
// memory, where the rows read it at run-time indices
static __device__ void load_index(int len, const int *g, int *i)
{
    for (int t = threadIdx.x; t < len; t += blockDim.x) i[t] = g[t];
}

// Row i's log likelihood and, for deriv >= 1, its derivatives in the
// predictors (deriv 1: d1 n x K, d2 n x K(K+1)/2; 3: and d3; 4: and d4),
// at eta (n x K, X's part) plus off (n x K, or null); partial[b] = block
// b's sum of the log likelihood.
extern "C" __global__ void __launch_bounds__(NTHREADS)
ls_rows(int fam, int K, int deriv, gg_fm_link k0, gg_fm_link k1, gg_fm_link k2,
        gg_fm_link k3, const int *__restrict__ g2, const int *__restrict__ g3,
        const double *__restrict__ y, const double *__restrict__ eta,
        const double *__restrict__ off, long long n, double *__restrict__ d1,
        double *__restrict__ d2, double *__restrict__ d3, double *__restrict__ d4,
        double *__restrict__ partial)
{
    __shared__ int i2[K2MAX], i3[K3MAX];
    load_index(K * K, g2, i2);
    load_index(K * K * K, g3, i3);
    __syncthreads();
    const gg_fm_link links[GG_LS_MAXK] = {k0, k1, k2, k3};
    const int n2 = gg_ls_n2(K), n3 = gg_ls_n3(K), n4 = gg_ls_n4(K);
    double s = 0.0;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        double e[GG_LS_MAXK], r1[GG_LS_MAXK], r2[GG_LS_MAX2], r3[GG_LS_MAX3], r4[GG_LS_MAX4];
        for (int k = 0; k < K; k++) {
            e[k] = eta[i + k * n];
            if (off != nullptr) e[k] += off[i + k * n];
        }
        s += gg_ls_row(fam, K, links, y[i], e, deriv, i2, i3, r1, r2, r3, r4);
        if (deriv < 1) continue;
        for (int k = 0; k < K; k++) d1[i + k * n] = r1[k];
        for (int k = 0; k < n2; k++) d2[i + k * n] = r2[k];
        if (deriv >= 3) for (int k = 0; k < n3; k++) d3[i + k * n] = r3[k];
        if (deriv >= 4) for (int k = 0; k < n4; k++) d4[i + k * n] = r4[k];
    }
    block_sum(s, partial);
}

// The weights of one smoothing parameter's derivative of the Hessian's
// blocks: for each pair a <= b (in row order, column t of w, n x
// K(K+1)/2), w_t = sum_c l3[, i3(a, b, c)] e_c with e (n x K) that
// parameter's d eta / d rho -- family_gamlss.c's third_rows(), in its
// order of additions.
extern "C" __global__ void __launch_bounds__(NTHREADS)
ls_third(int K, const int *__restrict__ g3, const double *__restrict__ l3,
         const double *__restrict__ e, long long n, double *__restrict__ w)
{
    __shared__ int i3[K3MAX];
    load_index(K * K * K, g3, i3);
    __syncthreads();
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        int t = 0;
        for (int a = 0; a < K; a++)
            for (int b = a; b < K; b++, t++) {
                double v = 0.0;
                for (int c = 0; c < K; c++)
                    v = v + l3[i + i3[a + K * (b + K * c)] * n] * e[i + c * n];
                w[i + t * n] = v;
            }
    }
}

// dst = src over the rows, and zero = 0 where given: a Gram pass's
// weights into the backend's own w (and its z cleared), from which it
// forms X' diag(w) X; or the leverage pass's h kept
extern "C" __global__ void __launch_bounds__(NTHREADS)
ls_copy(const double *__restrict__ src, long long n, double *__restrict__ dst,
        double *__restrict__ zero)
{
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        dst[i] = src[i];
        if (zero != nullptr) zero[i] = 0.0;
    }
}

// REML's traces tr(Hm d2H_kk) for the pairs kk of smoothing parameters
// (m, l), m <= l (column by column of the upper triangle): per row, the
// sum over predictor pairs a <= b of v_ab h_ab, where h (n x K(K+1)/2)
// holds the rows' quadratic forms x' Hm x in the pair's blocks (both
// orders: q_ab + q_ba for a < b) and v_ab = sum_c (e2_c l3_abc + sum_s
// e1m_c e1l_s l4_abcs), e1 = d eta / d rho (n x K x M), e2 = d2 eta (n x K
// x M(M+1)/2) -- family_gamlss.c's sums over all (a, b).  partial[kk *
// gridDim + b] = block b's part of trace kk.
extern "C" __global__ void __launch_bounds__(NTHREADS)
ls_trace(int K, int M, const int *__restrict__ g3, const int *__restrict__ g4,
         const double *__restrict__ l3, const double *__restrict__ l4,
         const double *__restrict__ e1, const double *__restrict__ e2,
         const double *__restrict__ h, long long n, double *__restrict__ partial)
{
    __shared__ int i3[K3MAX], i4[K4MAX];
    load_index(K * K * K, g3, i3);
    load_index(K * K * K * K, g4, i4);
    __syncthreads();
    const long long nK = n * K;
    int kk = 0;
    for (int m = 0; m < M; m++)
        for (int l = m; l < M; l++, kk++) {
            double s = 0.0;
            for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
                 i += (long long) gridDim.x * blockDim.x) {
                int t = 0;
                for (int a = 0; a < K; a++)
                    for (int b = a; b < K; b++, t++) {
                        double v = 0.0;
                        for (int c = 0; c < K; c++) {
                            v = v + e2[i + c * n + kk * nK] * l3[i + i3[a + K * (b + K * c)] * n];
                            const double f = e1[i + c * n + m * nK];
                            for (int u = 0; u < K; u++)
                                v = v + f * e1[i + u * n + l * nK] *
                                            l4[i + i4[a + K * (b + K * (c + K * u))] * n];
                        }
                        s += v * h[i + t * n];
                    }
            }
            block_sum(s, partial + (long long) kk * gridDim.x);
        }
}
