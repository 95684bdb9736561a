// basis.cu -- the model matrix built on the device from its recipe
// (src/basis/xplan.h): mgcv "cr" and "tp" bases, and any
// other smooth as a row tensor product of margins (cr, tp, cc, ps/bs, a
// factor's indicators, a linear column) evaluated row by row from the
// covariates, then mgcv's identifiability constraint, by-variable (numeric
// or a factor level) and gam.side deletions; dense (parametric) columns
// copied in.  The host twin is src/basis/xplan.c with src/basis/basis_*.c;
// the per-row arithmetic of both is inst/include/basis_math.h, so with
// --fmad=false the device X equals the host X (and mgcv's PredictMat) bit
// for bit wherever the math library (sqrt, log, pow) agrees -- but for
// thin plate sums on the tensor cores (tprs_mma, below), which agree to
// rounding.
//
// Steps per smooth: a raw basis kernel writes the k raw columns of a row
// chunk into scratch (leading dimension ldr), then basis_map writes the
// constrained columns into X (leading dimension ldx).  A margins block
// runs per margin a raw kernel and, unless the margin's map is the
// identity, basis_map into a second scratch region; basis_tensor combines
// the margins; then the block's basis_map writes X -- or, when the block's
// map is the identity, the last of those steps writes X itself
// (src/cuda/cuda_backend.c, layout_margins, lays out the scratch).  Rows
// r0 .. r0+rows-1 of the data become rows 0 .. rows-1 of the chunk.

#include "basis_math.h"

#define GRID_ROWS(i, rows)                                                     \
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;     \
         i < (rows); i += (long long) gridDim.x * blockDim.x)

// cr: x has the data's n rows; F is k x k as the smooth stores it.
extern "C" __global__ void basis_cr_raw(const double *__restrict__ x, long long r0,
                                        long long rows, const double *__restrict__ xk, int k,
                                        const double *__restrict__ F,
                                        double *__restrict__ raw, long long ldr)
{
    GRID_ROWS(r, rows) {
        const gg_bm_cr_row b = gg_bm_cr_locate(x[r0 + r], xk, k);
        for (int c = 0; c < k; c++)
            raw[(long long) c * ldr + r] = gg_bm_cr_value(&b, F, k, c);
    }
}

// tp in one variable from its piecewise polynomials (basis_math.h's
// gg_bm_tp1_*): the host's coefficients and Horner sums, so the host's bits.
extern "C" __global__ void basis_tp1_raw(const double *__restrict__ x, long long r0,
                                         long long rows, double shift,
                                         const double *__restrict__ knots, int K,
                                         const double *__restrict__ coef, int k, int D,
                                         double *__restrict__ raw, long long ldr)
{
    GRID_ROWS(r, rows) gg_bm_tp1_row(x[r0 + r] - shift, knots, K, coef, k, D, raw + r, ldr);
}

#define TPRS_MAX_D 4
#define TP_THREADS 256      /* threads per block (src/cuda/cuda_backend.c's launch_tprs) */
#define TP_WIDE_ROWS 128    /* rows per block tile of the wide kernels */
#define TP_WIDE_L 16        /* basis functions per shared tile, wide kernels */
#define TP_NARROW_L 32      /* rows of UZ per shared tile, narrow kernels */

// eta for one squared distance (or a gp margin's covariance: m = -type,
// eta0 = rho, eta1 = power); in one dimension sqrt(r2) is |z| (in binary
// floating point sqrt(fl(z * z)) == |z| whenever z * z is normal), the
// same bits without the square root.
__device__ __forceinline__ double tprs_radial(int m, int d, double r2, double z, double eta0,
                                              double eta1)
{
    if (d == 1 && m == 2 && r2 >= 2.2250738585072014e-308)
        return eta0 * r2 * fabs(z);
    return gg_bm_radial(m, d, r2, eta0, eta1);
}

// Basis function l (of nXu + M) at a row whose shifted covariates are xr[j *
// xs]: the radial function against knot l, or a null-space monomial.
__device__ __forceinline__ double tprs_b(int l, const double *xr, int xs, int d, int m,
                                         double eta0, double eta1,
                                         const double *__restrict__ Xu, int nXu,
                                         const int *__restrict__ power, int M)
{
    if (l < nXu) {
        double r2 = 0.0, z = 0.0;
        for (int j = 0; j < d; j++) {
            z = Xu[l + (long long) nXu * j] - xr[j * xs];
            r2 += z * z;
        }
        return tprs_radial(m, d, r2, z, eta0, eta1);
    }
    double b = 1.0;
    for (int j = 0; j < d; j++)
        for (int e = 0; e < power[(l - nXu) + M * j]; e++)
            b *= xr[j * xs];
    return b;
}

// The same for a row held in registers (the loops over the covariates
// unrolled, so xr stays out of local memory), knot l's coordinate j at
// kn[j * ks] (Xu + l with stride nXu, or a copy in shared memory).
__device__ __forceinline__ double tprs_b_reg(int l, const double *xr, int d, int m, double eta0,
                                             double eta1, const double *kn, int ks,
                                             int nXu, const int *__restrict__ power, int M)
{
    if (l < nXu) {
        double r2 = 0.0, z = 0.0;
#pragma unroll
        for (int j = 0; j < TPRS_MAX_D; j++)
            if (j < d) {
                z = kn[j * ks] - xr[j];
                r2 += z * z;
            }
        return tprs_radial(m, d, r2, z, eta0, eta1);
    }
    double b = 1.0;
#pragma unroll
    for (int j = 0; j < TPRS_MAX_D; j++)
        if (j < d)
            for (int e = 0; e < power[(l - nXu) + M * j]; e++)
                b *= xr[j];
    return b;
}

// tp: x is n x d (column-major, the data's n rows), shift d, Xu nXu x d,
// UZ (nXu + M) x k, power M x d null-space exponents, m the effective
// penalty order and eta0 its constant (basis_tprs.c computes both), eta1
// unused; a gp margin is the same with its knots for Xu, m = -type, eta0 =
// rho, eta1 = power, and UZ's last M rows the identity (its null space).  Raw
// columns c0 .. c0+kc-1 of the chunk's rows are B UZ, B the rows x (nXu +
// M) radial and polynomial values: each output is the sum over l = 0 ..
// nXu + M - 1 in order of UZ * b, multiplied then added (the module is
// compiled with --fmad=false), as on the host -- the same bits.  Two
// shapes, chosen per pass by launch_tprs():
//
// wide (17 .. 64 columns, JC = ceil(kc / 16)): a block takes 128 rows; per
// tile of 16 basis functions it computes that tile of B once into shared
// memory beside the matching rows of UZ, and each thread accumulates 8 rows
// (rg + 16 i) x JC columns (cg + 16 j) of the block's outputs from it.
template <int JC>
__device__ void tprs_wide(const double *__restrict__ x, long long n, int d, long long r0,
                          long long rows, const double *__restrict__ shift, int m, double eta0,
                          double eta1, const double *__restrict__ Xu, int nXu,
                          const int *__restrict__ power, int M,
                          const double *__restrict__ UZ, int c0, int kc,
                          double *__restrict__ raw, long long ldr)
{
    __shared__ double sB[TP_WIDE_L][TP_WIDE_ROWS];
    __shared__ double sU[TP_WIDE_L][16 * JC];
    __shared__ double sx[TPRS_MAX_D][TP_WIDE_ROWS];
    const int nb = nXu + M, t = threadIdx.x, cg = t % 16, rg = t / 16;
    for (long long a = (long long) blockIdx.x * TP_WIDE_ROWS; a < rows;
         a += (long long) gridDim.x * TP_WIDE_ROWS) {
        const int nr = rows - a < TP_WIDE_ROWS ? (int) (rows - a) : TP_WIDE_ROWS;
        __syncthreads();                        /* the last tile is done with sx */
        for (int i = t; i < TP_WIDE_ROWS * d; i += TP_THREADS) {
            const int rr = i % TP_WIDE_ROWS, j = i / TP_WIDE_ROWS;
            sx[j][rr] = rr < nr ? x[(long long) j * n + r0 + a + rr] - shift[j] : 0.0;
        }
        double acc[8][JC];
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int j = 0; j < JC; j++)
                acc[i][j] = 0.0;
        for (int l0 = 0; l0 < nb; l0 += TP_WIDE_L) {
            const int nl = nb - l0 < TP_WIDE_L ? nb - l0 : TP_WIDE_L;
            __syncthreads();                    /* the last tile is read; sx is written */
            for (int i = t; i < TP_WIDE_L * TP_WIDE_ROWS; i += TP_THREADS) {
                const int rr = i % TP_WIDE_ROWS, ll = i / TP_WIDE_ROWS;
                sB[ll][rr] = ll < nl && rr < nr
                    ? tprs_b(l0 + ll, &sx[0][rr], TP_WIDE_ROWS, d, m, eta0, eta1, Xu, nXu, power,
                             M)
                    : 0.0;
            }
            for (int i = t; i < TP_WIDE_L * 16 * JC; i += TP_THREADS) {
                const int ll = i % TP_WIDE_L, cc = i / TP_WIDE_L;
                sU[ll][cc] = ll < nl && cc < kc ? UZ[(long long) (c0 + cc) * nb + l0 + ll] : 0.0;
            }
            __syncthreads();
#pragma unroll 4
            for (int ll = 0; ll < nl; ll++) {
                double bv[8], uv[JC];
#pragma unroll
                for (int i = 0; i < 8; i++)
                    bv[i] = sB[ll][rg + 16 * i];
#pragma unroll
                for (int j = 0; j < JC; j++)
                    uv[j] = sU[ll][cg + 16 * j];
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < JC; j++)
                        acc[i][j] += uv[j] * bv[i];
            }
        }
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int j = 0; j < JC; j++) {
                const int rr = rg + 16 * i, cc = cg + 16 * j;
                if (rr < nr && cc < kc)
                    raw[(long long) (c0 + cc) * ldr + a + rr] = acc[i][j];
            }
    }
}

// narrow (KC = kc <= 16 columns, even; an odd kc runs as kc + 1 with a
// zero column not written): each thread owns IR rows (t + 256 i of a tile
// of 256 IR rows) and all KC columns, so each b is computed once, by the
// thread that uses it; UZ's rows come through shared memory in tiles.
template <int KC>
__device__ void tprs_narrow(const double *__restrict__ x, long long n, int d, long long r0,
                            long long rows, const double *__restrict__ shift, int m,
                            double eta0, double eta1, const double *__restrict__ Xu, int nXu,
                            const int *__restrict__ power, int M,
                            const double *__restrict__ UZ, int c0, int kc,
                            double *__restrict__ raw, long long ldr)
{
    constexpr int IR = KC <= 8 ? 4 : 2, TR = TP_THREADS * IR;
    __shared__ double sU[TP_NARROW_L][KC];
    const int nb = nXu + M, t = threadIdx.x;
    for (long long a = (long long) blockIdx.x * TR; a < rows; a += (long long) gridDim.x * TR) {
        double xr[IR][TPRS_MAX_D], acc[IR][KC];
#pragma unroll
        for (int i = 0; i < IR; i++) {
            const long long r = a + t + TP_THREADS * i;
#pragma unroll
            for (int j = 0; j < TPRS_MAX_D; j++)
                xr[i][j] = j < d && r < rows ? x[(long long) j * n + r0 + r] - shift[j] : 0.0;
#pragma unroll
            for (int c = 0; c < KC; c++)
                acc[i][c] = 0.0;
        }
        for (int l0 = 0; l0 < nb; l0 += TP_NARROW_L) {
            const int nl = nb - l0 < TP_NARROW_L ? nb - l0 : TP_NARROW_L;
            __syncthreads();                    /* the last tile is read */
            for (int i = t; i < TP_NARROW_L * KC; i += TP_THREADS) {
                const int ll = i % TP_NARROW_L, cc = i / TP_NARROW_L;
                sU[ll][cc] = ll < nl && cc < kc ? UZ[(long long) (c0 + cc) * nb + l0 + ll] : 0.0;
            }
            __syncthreads();
            for (int ll = 0; ll < nl; ll++) {
                double bv[IR];
#pragma unroll
                for (int i = 0; i < IR; i++)
                    bv[i] = tprs_b_reg(l0 + ll, xr[i], d, m, eta0, eta1,
                                       Xu + (l0 + ll < nXu ? l0 + ll : 0), nXu, nXu, power, M);
#pragma unroll
                for (int c = 0; c < KC; c++) {
                    const double u = sU[ll][c];
#pragma unroll
                    for (int i = 0; i < IR; i++)
                        acc[i][c] += u * bv[i];
                }
            }
        }
#pragma unroll
        for (int i = 0; i < IR; i++) {
            const long long r = a + t + TP_THREADS * i;
            if (r < rows)
#pragma unroll
                for (int c = 0; c < KC; c++)
                    if (c < kc)
                        raw[(long long) (c0 + c) * ldr + r] = acc[i][c];
        }
    }
}

// tensor cores (compute capability 8.0 on; chosen by launch_tprs() unless
// the plan says otherwise): B UZ as fp64 MMAs, m8n8k4 -- a warp's A
// fragment is 8 rows x 4 basis functions of B, one value per lane (row
// lane / 4, function lane % 4, computed by that lane), its B fragment 4
// functions x 8 columns of UZ (function lane % 4, column lane / 4), its
// accumulator 8 rows x 8 columns (row lane / 4, columns 2 (lane % 4) +
// {0, 1}).  A warp takes TP_MMA_RG groups of 8 rows and NT tiles of 8
// columns (up to 64 a pass); UZ's rows and the knots come through shared
// memory in stages of TP_MMA_L functions, UZ already in fragment order.
// Each output is the same sum over l = 0 .. nXu + M - 1 of UZ * b, taken
// four terms at a time by the tensor core: it equals the host's
// one-by-one sum to rounding (tests/testthat/test-basis-recipe.R;
// bench/tprs_basis.R prints the difference), not bit for bit.
#define TP_MMA_RG 2
#define TP_MMA_ROWS (TP_THREADS / 32 * 8 * TP_MMA_RG)   /* 128 rows per block tile */
#define TP_MMA_L 32

__device__ __forceinline__ void tprs_dmma(double &d0, double &d1, double a, double b)
{
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
        : "+d"(d0), "+d"(d1)
        : "d"(a), "d"(b));
#endif
}

template <int NT>
__device__ void tprs_mma(const double *__restrict__ x, long long n, int d, long long r0,
                         long long rows, const double *__restrict__ shift, int m, double eta0,
                         double eta1, const double *__restrict__ Xu, int nXu,
                         const int *__restrict__ power, int M, const double *__restrict__ UZ,
                         int c0, int kc, double *__restrict__ raw, long long ldr)
{
    __shared__ double sU[TP_MMA_L / 4][NT][32];
    __shared__ double sK[TPRS_MAX_D][TP_MMA_L];
    const int nb = nXu + M, t = threadIdx.x, lane = t & 31, kq = lane & 3, rq = lane >> 2;
    const int w0 = (t >> 5) * 8 * TP_MMA_RG;          /* the warp's first row in the tile */
    for (long long a = (long long) blockIdx.x * TP_MMA_ROWS; a < rows;
         a += (long long) gridDim.x * TP_MMA_ROWS) {
        double xr[TP_MMA_RG][TPRS_MAX_D], acc[TP_MMA_RG][NT][2];
#pragma unroll
        for (int g = 0; g < TP_MMA_RG; g++) {
            const long long r = a + w0 + 8 * g + rq;
#pragma unroll
            for (int j = 0; j < TPRS_MAX_D; j++)
                xr[g][j] = j < d && r < rows ? x[(long long) j * n + r0 + r] - shift[j] : 0.0;
#pragma unroll
            for (int c = 0; c < NT; c++)
                acc[g][c][0] = acc[g][c][1] = 0.0;
        }
        for (int l0 = 0; l0 < nb; l0 += TP_MMA_L) {
            const int nl = nb - l0 < TP_MMA_L ? nb - l0 : TP_MMA_L;
            __syncthreads();                    /* the last stage is read */
            for (int i = t; i < TP_MMA_L / 4 * NT * 32; i += TP_THREADS) {
                const int ln = i % 32, c = (i / 32) % NT, ks = i / (32 * NT);
                const int ll = 4 * ks + (ln & 3), cc = 8 * c + (ln >> 2);
                sU[ks][c][ln] = ll < nl && cc < kc ? UZ[(long long) (c0 + cc) * nb + l0 + ll] : 0.0;
            }
            for (int i = t; i < TP_MMA_L * d; i += TP_THREADS) {
                const int ll = i % TP_MMA_L, j = i / TP_MMA_L;
                sK[j][ll] = l0 + ll < nXu ? Xu[l0 + ll + (long long) nXu * j] : 0.0;
            }
            __syncthreads();
            const int steps = (nl + 3) / 4;
            for (int ks = 0; ks < steps; ks++) {
                const int ll = 4 * ks + kq;
                double av[TP_MMA_RG];
#pragma unroll
                for (int g = 0; g < TP_MMA_RG; g++)
                    av[g] = l0 + ll < nb ? tprs_b_reg(l0 + ll, xr[g], d, m, eta0, eta1, &sK[0][ll],
                                                      TP_MMA_L, nXu, power, M)
                                         : 0.0;
#pragma unroll
                for (int c = 0; c < NT; c++) {
                    const double u = sU[ks][c][lane];
#pragma unroll
                    for (int g = 0; g < TP_MMA_RG; g++)
                        tprs_dmma(acc[g][c][0], acc[g][c][1], av[g], u);
                }
            }
        }
#pragma unroll
        for (int g = 0; g < TP_MMA_RG; g++) {
            const long long r = a + w0 + 8 * g + rq;
            if (r < rows)
#pragma unroll
                for (int c = 0; c < NT; c++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int cc = 8 * c + 2 * kq + e;
                        if (cc < kc)
                            raw[(long long) (c0 + cc) * ldr + r] = acc[g][c][e];
                    }
        }
    }
}

#define TPRS_ARGS                                                                      \
    const double *__restrict__ x, long long n, int d, long long r0, long long rows,    \
        const double *__restrict__ shift, int m, double eta0, double eta1,             \
        const double *__restrict__ Xu, int nXu, const int *__restrict__ power, int M,  \
        const double *__restrict__ UZ, int c0, int kc, double *__restrict__ raw,       \
        long long ldr
#define TPRS_PASS                                                                      \
    x, n, d, r0, rows, shift, m, eta0, eta1, Xu, nXu, power, M, UZ, c0, kc, raw, ldr
#define TPRS_KERNEL(name, shape, K)                                                    \
    extern "C" __global__ void __launch_bounds__(TP_THREADS) name(TPRS_ARGS)          \
    {                                                                                  \
        shape<K>(TPRS_PASS);                                                           \
    }
TPRS_KERNEL(basis_tprs_w2, tprs_wide, 2)
TPRS_KERNEL(basis_tprs_w3, tprs_wide, 3)
TPRS_KERNEL(basis_tprs_w4, tprs_wide, 4)
TPRS_KERNEL(basis_tprs_n2, tprs_narrow, 2)
TPRS_KERNEL(basis_tprs_n4, tprs_narrow, 4)
TPRS_KERNEL(basis_tprs_n6, tprs_narrow, 6)
TPRS_KERNEL(basis_tprs_n8, tprs_narrow, 8)
TPRS_KERNEL(basis_tprs_n10, tprs_narrow, 10)
TPRS_KERNEL(basis_tprs_n12, tprs_narrow, 12)
TPRS_KERNEL(basis_tprs_n14, tprs_narrow, 14)
TPRS_KERNEL(basis_tprs_n16, tprs_narrow, 16)
TPRS_KERNEL(basis_tprs_m1, tprs_mma, 1)
TPRS_KERNEL(basis_tprs_m2, tprs_mma, 2)
TPRS_KERNEL(basis_tprs_m3, tprs_mma, 3)
TPRS_KERNEL(basis_tprs_m4, tprs_mma, 4)
TPRS_KERNEL(basis_tprs_m5, tprs_mma, 5)
TPRS_KERNEL(basis_tprs_m6, tprs_mma, 6)
TPRS_KERNEL(basis_tprs_m7, tprs_mma, 7)
TPRS_KERNEL(basis_tprs_m8, tprs_mma, 8)

// cc: xk has k + 1 knots, BD is k x k.  gg_bm_cc_row fills a contiguous
// row of any k (too long for registers), so each thread fills its own row
// of tmp (row-major, rows x k) and copies it to the column-major raw.
extern "C" __global__ void basis_cc_raw(const double *__restrict__ x, long long r0,
                                        long long rows, const double *__restrict__ xk, int k,
                                        const double *__restrict__ BD,
                                        double *__restrict__ tmp,
                                        double *__restrict__ raw, long long ldr)
{
    GRID_ROWS(r, rows) {
        double *row = tmp + r * k;
        gg_bm_cc_row(x[r0 + r], xk, k, BD, row);
        for (int c = 0; c < k; c++)
            raw[(long long) c * ldr + r] = row[c];
    }
}

// ps/bs: nk knots xk, order ord (<= GG_XMAX_ORD), k = nk - ord columns,
// the B-spline basis on [lo, hi] and linear from D (4 x k) outside; the
// row goes through tmp as basis_cc_raw's.
extern "C" __global__ void basis_bspl_raw(const double *__restrict__ x, long long r0,
                                          long long rows, const double *__restrict__ xk,
                                          int nk, int ord, double lo, double hi,
                                          const double *__restrict__ D,
                                          double *__restrict__ tmp,
                                          double *__restrict__ raw, long long ldr)
{
    const int k = nk - ord;
    GRID_ROWS(r, rows) {
        double *row = tmp + r * k;
        gg_bm_bspl_row(x[r0 + r], xk, nk, ord, lo, hi, D, row);
        for (int c = 0; c < k; c++)
            raw[(long long) c * ldr + r] = row[c];
    }
}

// cp: k = nk - 3 ord + 2 columns from cSplineDes's knots with their ends
// repeated (basis_math.h's gg_bm_cp_row); the row goes through tmp as
// basis_cc_raw's.
extern "C" __global__ void basis_cp_raw(const double *__restrict__ x, long long r0,
                                        long long rows, const double *__restrict__ xk, int nk,
                                        int ord, double lo, double hi,
                                        double *__restrict__ tmp,
                                        double *__restrict__ raw, long long ldr)
{
    const int k = nk - 3 * ord + 2;
    GRID_ROWS(r, rows) {
        double *row = tmp + r * k;
        gg_bm_cp_row(x[r0 + r], xk, nk, ord, lo, hi, row);
        for (int c = 0; c < k; c++)
            raw[(long long) c * ldr + r] = row[c];
    }
}

// A factor's k indicator columns from its 1-based codes (the data's n
// rows); a code outside 1..k gives a row of zeros.  gg_bm_code_row's
// values, written column by column (k can be a random effect's levels).
extern "C" __global__ void basis_code_raw(const int *__restrict__ code, long long r0,
                                          long long rows, int k,
                                          double *__restrict__ raw, long long ldr)
{
    GRID_ROWS(r, rows) {
        const int ci = code[r0 + r];
        for (int c = 0; c < k; c++)
            raw[(long long) c * ldr + r] = c + 1 == ci ? 1.0 : 0.0;
    }
}

// The row tensor product of nm (1..4) margins' mapped columns: margin j's
// kj columns at uj (leading dimension ldu; unused margins null, 0).
// Column (i0, .., i_{nm-1}), the last index fastest, is
//   ((u_{nm-1}[i_{nm-1}] * u_{nm-2}[i_{nm-2}]) * ...) * u0[i0],
// the products in gg_bm_tensor_row's order, so it equals the host's.
extern "C" __global__ void basis_tensor(const double *__restrict__ u0,
                                        const double *__restrict__ u1,
                                        const double *__restrict__ u2,
                                        const double *__restrict__ u3, int k0, int k1, int k2,
                                        int k3, int nm, long long ldu, long long rows,
                                        double *__restrict__ out, long long ldo)
{
    const double *u[4] = {u0, u1, u2, u3};
    const int kp[4] = {k0, k1, k2, k3};
    long long K = 1;
    for (int j = 0; j < nm; j++)
        K *= kp[j];
    GRID_ROWS(r, rows) {
        int idx[4] = {0, 0, 0, 0};
        for (long long c = 0; c < K; c++) {
            double v = u[nm - 1][(long long) idx[nm - 1] * ldu + r];
            for (int j = nm - 2; j >= 0; j--)
                v = v * u[j][(long long) idx[j] * ldu + r];
            out[c * ldo + r] = v;
            for (int j = nm - 1; j >= 0; j--) {     // next column: odometer, last fastest
                if (++idx[j] < kp[j])
                    break;
                idx[j] = 0;
            }
        }
    }
}

// Raw k columns -> X's columns, as src/basis/basis_map.c: sweep-and-drop (drop
// < 0: none), by-variable (the data's n rows, offset r0: by's values, or
// 1 where by_code equals by_level and 0 elsewhere; both null: none), the
// qr map Z ((k or k-1) x kc, null: none), deletions col_of (kc entries,
// -1 = deleted; null: identity).  X points at the block's first column.
// A margin's own map is this with by, by_code and col_of null.
extern "C" __global__ void basis_map(const double *__restrict__ raw, long long ldr, int k,
                                     long long r0, long long rows, int drop,
                                     const double *__restrict__ shift,
                                     const double *__restrict__ by,
                                     const int *__restrict__ by_code, int by_level,
                                     const double *__restrict__ Z, int kc,
                                     const int *__restrict__ col_of,
                                     double *__restrict__ X, long long ldx)
{
    const int m = drop >= 0 ? k - 1 : k;
    const bool has_by = by != nullptr || by_code != nullptr;
    GRID_ROWS(r, rows) {
        const double byi = by_code != nullptr ? (by_code[r0 + r] == by_level ? 1.0 : 0.0)
                           : by != nullptr    ? by[r0 + r]
                                              : 1.0;
        for (int c = 0; c < kc; c++) {
            const int oc = col_of != nullptr ? col_of[c] : c;
            if (oc < 0)
                continue;
            double s;
            if (Z != nullptr) {
                s = 0.0;
                for (int q = 0; q < m; q++) {
                    const int src = drop >= 0 && q >= drop ? q + 1 : q;
                    double v = raw[(long long) src * ldr + r];
                    if (drop >= 0)
                        v = v - shift[q];
                    if (has_by)
                        v *= byi;
                    s += v * Z[(long long) c * m + q];
                }
            } else {
                const int src = drop >= 0 && c >= drop ? c + 1 : c;
                s = raw[(long long) src * ldr + r];
                if (drop >= 0)
                    s = s - shift[c];
                if (has_by)
                    s *= byi;
            }
            X[(long long) oc * ldx + r] = s;
        }
    }
}

// ncol columns of ones (the intercept; also unit prior weights): rows
// rows, leading dimension ldx.
extern "C" __global__ void basis_ones(long long rows, int ncol, double *__restrict__ X,
                                      long long ldx)
{
    GRID_ROWS(r, rows) {
        for (int c = 0; c < ncol; c++)
            X[(long long) c * ldx + r] = 1.0;
    }
}

// Dense columns: D is n x ncol (the data's n rows).  Also a linear
// margin's one column (ncol 1) into scratch.
extern "C" __global__ void basis_dense(const double *__restrict__ D, long long n, int ncol,
                                       long long r0, long long rows,
                                       double *__restrict__ X, long long ldx)
{
    GRID_ROWS(r, rows) {
        for (int c = 0; c < ncol; c++)
            X[(long long) c * ldx + r] = D[(long long) c * n + r0 + r];
    }
}

// ---- a basis's statistics over every row (R/basis_facts.R) ----------------
// gam()'s set-up takes three facts of a smooth's raw basis X (n x k) on every
// row: each column's root mean square (a thin plate basis's scaling), each
// column's mean after that scaling (the centring constraint) and the row of
// largest absolute scaled row sum (norm(X, "I"), the penalty's scaling).
// Here per block of block_rows rows, reduced in a fixed order (the same
// result on every run); the host sums the blocks.

#define STATS_THREADS 256

// partial[b * k + c]: the sum over block b's rows of column c's squares
// (pass 0) or of its values over scale[c] (pass 1).  Grid (blocks, k).
extern "C" __global__ void basis_stats_cols(const double *__restrict__ X, long long n,
                                            long long ldx, int k, long long block_rows, int pass,
                                            const double *__restrict__ scale,
                                            double *__restrict__ partial)
{
    __shared__ double sh[STATS_THREADS];
    const int c = blockIdx.y;
    const long long i0 = (long long) blockIdx.x * block_rows;
    const long long i1 = i0 + block_rows < n ? i0 + block_rows : n;
    const double *x = X + (long long) c * ldx;
    const double sc = pass ? scale[c] : 1.0;
    double s = 0;
    for (long long i = i0 + threadIdx.x; i < i1; i += blockDim.x) {
        const double v = x[i];
        s += pass ? v / sc : v * v;
    }
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[(long long) blockIdx.x * k + c] = sh[0];
}

// rmax[b], rat[b]: the largest sum over columns of |X[i, c] / scale[c]|
// among block b's rows, and the first row that attains it.  Grid (blocks).
extern "C" __global__ void basis_stats_rows(const double *__restrict__ X, long long n,
                                            long long ldx, int k, long long block_rows,
                                            const double *__restrict__ scale,
                                            double *__restrict__ rmax, long long *__restrict__ rat)
{
    __shared__ double sv[STATS_THREADS];
    __shared__ long long si[STATS_THREADS];
    const long long i0 = (long long) blockIdx.x * block_rows;
    const long long i1 = i0 + block_rows < n ? i0 + block_rows : n;
    double best = -1;
    long long at = i0;
    for (long long i = i0 + threadIdx.x; i < i1; i += blockDim.x) {
        double r = 0;
        for (int c = 0; c < k; c++) r += fabs(X[(long long) c * ldx + i] / scale[c]);
        if (r > best) {
            best = r;
            at = i;
        }
    }
    sv[threadIdx.x] = best;
    si[threadIdx.x] = at;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) {
            const double b = sv[threadIdx.x + h];
            const long long j = si[threadIdx.x + h];
            if (b > sv[threadIdx.x] || (b == sv[threadIdx.x] && j < si[threadIdx.x])) {
                sv[threadIdx.x] = b;
                si[threadIdx.x] = j;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        rmax[blockIdx.x] = sv[0];
        rat[blockIdx.x] = si[0];
    }
}
