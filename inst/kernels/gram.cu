// gram.cu -- weighted Gram matrix G = X' diag(w) X of an n x q column-major
// matrix (leading dimension ldx), in two launches:
//   gram_partial: block (tile pair, slab) accumulates one 64 x 64 tile of G
//                 over one slab of rows, in registers, and writes it to its
//                 own slot of `partial` (no atomics: results are
//                 reproducible bit for bit from run to run);
//   gram_reduce:  sums the slabs in a fixed order and writes G symmetric.
// Only tile pairs (ti <= tj) are computed.  With z non-null, the matrix is
// [X z] (q = p + 1): X'Wz and z'Wz come from the same pass over the rows.
// Compiled by NVRTC with
// --fmad=false (see cuda_modules.c).  w == NULL means unit weights.
// With ar nonzero (bam's AR1 residuals, ar1_math.h) the rows are first
// transformed, x~_r = a_r x_r + c_r x_{r-1} with the weights inside a and c,
// and G = [X~ z~]'[X~ z~]: row r - 1 is read from the same matrix, so X
// must hold every row from 0 (resident).
//
// On compute capability 8.0 and later (Ampere, Hopper) the tile products
// run on the fp64 tensor cores (DMMA, mma.sync m8n8k4): each of the 8
// warps owns a 16 x 32 piece of the 64 x 64 tile, 2 x 4 DMMA tiles, and a
// row block of KROWS rows is KROWS / 4 DMMA steps.  A DMMA rounds each
// multiply-add once (fused), where the FMA-free fallback below rounds twice:
// the results differ from the CPU's in the last bits (well inside the
// 1e-12 the tests ask), and are still fixed-order and reproducible.

#include "ar1_math.h"

#define TILE 64
#define KROWS 16
#define NTHREADS 256
#define PAD 1                            // shared rows of TILE + PAD doubles

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GG_DMMA 1
#endif

#ifdef GG_DMMA
// D = A B + D for one 8 x 8 x 4 fp64 tile, fragments as PTX defines them.
static __device__ __forceinline__ void dmma_8x8x4(double &d0, double &d1, double a, double b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                 "{%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
}
#endif

// What both kernels do with a loaded pair of shared blocks: a 64 x 64 tile
// of As' Bs over the block's KROWS rows, added to the thread's part of it
// (acc).  On the tensor cores each of the 8 warps owns a 16 x 32 piece --
// rows mb .. mb+15, columns nb .. nb+31, 2 x 4 DMMA tiles -- and a lane
// holds elements (gid, 2 tig + c) of each (tile_part); without them a
// thread owns rows ty + 16 a and columns tx + 16 b.
struct tile_part {
#ifdef GG_DMMA
    int gid, tig, mb, nb;
#else
    int tx, ty;
#endif
};

static __device__ __forceinline__ tile_part tile_part_of(int t)
{
    tile_part q;
#ifdef GG_DMMA
    const int lane = t % 32, wi = t / 32;
    q.gid = lane / 4;
    q.tig = lane % 4;
    q.mb = 16 * (wi % 4);
    q.nb = 32 * (wi / 4);
#else
    q.tx = t % 16;
    q.ty = t / 16;
#endif
    return q;
}

#ifdef GG_DMMA
#define TILE_ACC(acc) double acc[2][4][2]
#else
#define TILE_ACC(acc) double acc[4][4]
#endif

static __device__ __forceinline__ void tile_zero(TILE_ACC(acc))
{
#ifdef GG_DMMA
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 4; b++)
            acc[a][b][0] = acc[a][b][1] = 0.0;
#else
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            acc[a][b] = 0.0;
#endif
}

static __device__ __forceinline__ void tile_step(const double (*As)[TILE + PAD],
                                                 const double (*Bs)[TILE + PAD],
                                                 const tile_part &q, TILE_ACC(acc))
{
#ifdef GG_DMMA
#pragma unroll
    for (int k0 = 0; k0 < KROWS; k0 += 4) {
        // A (8 x 4, row-major): element (gid, tig) = As[k0 + tig][row];
        // B (4 x 8, col-major): element (tig, gid) = Bs[k0 + tig][column]
        double av[2], bv[4];
#pragma unroll
        for (int a = 0; a < 2; a++)
            av[a] = As[k0 + q.tig][q.mb + 8 * a + q.gid];
#pragma unroll
        for (int b = 0; b < 4; b++)
            bv[b] = Bs[k0 + q.tig][q.nb + 8 * b + q.gid];
#pragma unroll
        for (int a = 0; a < 2; a++)
#pragma unroll
            for (int b = 0; b < 4; b++)
                dmma_8x8x4(acc[a][b][0], acc[a][b][1], av[a], bv[b]);
    }
#else
#pragma unroll
    for (int k = 0; k < KROWS; k++) {
        double av[4], bv[4];
        for (int a = 0; a < 4; a++)
            av[a] = As[k][q.ty + 16 * a];
        for (int b = 0; b < 4; b++)
            bv[b] = Bs[k][q.tx + 16 * b];
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                acc[a][b] += av[a] * bv[b];
    }
#endif
}

// a_r v_r + c_r v_{r-1}, as the host computes it (gram_cpu.c)
static __device__ __forceinline__ double ar1_value(const double *v, long long r, double ca,
                                                   double cc)
{
    return cc != 0.0 ? ca * v[r] + cc * v[r - 1] : ca * v[r];
}

extern "C" __global__ void __launch_bounds__(NTHREADS)
gram_partial(const double *__restrict__ X, long long ldx, const double *__restrict__ z,
             const double *__restrict__ w, long long n, int p, long long rows_per_slab,
             double *__restrict__ partial, int ar, double ar_ld, double ar_sd,
             const double *__restrict__ ar_start)
{
    const int q = z != nullptr ? p + 1 : p;
    const int nt = (q + TILE - 1) / TILE;
    int t = blockIdx.x, ti = 0;
    while (t >= nt - ti) {
        t -= nt - ti;
        ti++;
    }
    const int tj = ti + t;

    __shared__ double As[KROWS][TILE + PAD];   // w_r * X[r, tile ti]
    __shared__ double Bs[KROWS][TILE + PAD];   //       X[r, tile tj]

    const tile_part tp = tile_part_of(threadIdx.x);
    TILE_ACC(acc);
    tile_zero(acc);

    const long long r0 = (long long) blockIdx.y * rows_per_slab;
    long long r1 = r0 + rows_per_slab;
    if (r1 > n)
        r1 = n;

    for (long long rb = r0; rb < r1; rb += KROWS) {
        for (int e = threadIdx.x; e < KROWS * TILE; e += NTHREADS) {
            const int rr = e % KROWS, cc = e / KROWS;
            const long long r = rb + rr;
            const int ci = ti * TILE + cc, cj = tj * TILE + cc;
            double a = 0.0, b = 0.0;
            if (r < r1 && ar) {
                double fa, fc;
                gg_ar1_row(r, ar_ld, ar_sd, ar_start, w, &fa, &fc);
                if (ci < p)
                    a = ar1_value(X + (size_t) ci * ldx, r, fa, fc);
                else if (ci < q)
                    a = ar1_value(z, r, fa, fc);
                if (cj < p)
                    b = ar1_value(X + (size_t) cj * ldx, r, fa, fc);
                else if (cj < q)
                    b = ar1_value(z, r, fa, fc);
            } else if (r < r1) {
                const double wr = w != nullptr ? w[r] : 1.0;
                if (ci < p)
                    a = X[(size_t) ci * ldx + r] * wr;
                else if (ci < q)
                    a = z[r] * wr;
                if (cj < p)
                    b = X[(size_t) cj * ldx + r];
                else if (cj < q)
                    b = z[r];
            }
            As[rr][cc] = a;
            Bs[rr][cc] = b;
        }
        __syncthreads();
        tile_step(As, Bs, tp, acc);
        __syncthreads();
    }

    double *out = partial + (size_t) blockIdx.y * q * q;
#ifdef GG_DMMA
    // C fragment: element (gid, 2 tig + c) of each 8 x 8 tile
    for (int a = 0; a < 2; a++) {
        const int i = ti * TILE + tp.mb + 8 * a + tp.gid;
        if (i >= q)
            continue;
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 2; c++) {
                const int j = tj * TILE + tp.nb + 8 * b + 2 * tp.tig + c;
                if (j < q)
                    out[(size_t) j * q + i] = acc[a][b][c];
            }
    }
#else
    for (int a = 0; a < 4; a++) {
        const int i = ti * TILE + tp.ty + 16 * a;
        if (i >= q)
            continue;
        for (int b = 0; b < 4; b++) {
            const int j = tj * TILE + tp.tx + 16 * b;
            if (j < q)
                out[(size_t) j * q + i] = acc[a][b];
        }
    }
#endif
}

// G[i, j] = G[j, i] = sum over slabs of partial[s][j][i], for i <= j; with
// accumulate, added to what G holds (rows streamed through in chunks).
extern "C" __global__ void
gram_reduce(const double *__restrict__ partial, int n_slabs, int q, int accumulate,
            double *__restrict__ G)
{
    const long long idx = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long) q * q)
        return;
    const int i = (int) (idx % q), j = (int) (idx / q);
    if (i > j)
        return;
    double s = accumulate ? G[(size_t) j * q + i] : 0.0;
    for (int k = 0; k < n_slabs; k++)
        s += partial[(size_t) k * q * q + (size_t) j * q + i];
    G[(size_t) j * q + i] = s;
    G[(size_t) i * q + j] = s;
}

// Leverages h[i] = (w ? w[i] : 1) x_i' M x_i (M p x p symmetric, device
// memory; with ar nonzero, x~_i' M x~_i of the AR1-transformed rows)
// memory) as a matrix product: a block takes 64 rows, forms T = X_rows M one
// 64-column tile at a time (on the tensor cores where there are some, as
// gram_partial does), and sums T[i, j] X[i, j] over the tile's columns; the
// per-row partial sums are combined in a fixed order, so the result does
// not depend on the launch (the streamed and resident fits agree bit for
// bit).  Grid: one block per 64 rows.
#ifdef GG_DMMA
#define LEV_SLOTS 8                      // contributors per row: 2 warps x 4 lanes
#else
#define LEV_SLOTS 16                     // contributors per row: 16 threads
#endif
extern "C" __global__ void __launch_bounds__(NTHREADS)
gram_leverage(const double *__restrict__ X, long long ldx, long long n, int p,
              const double *__restrict__ M, const double *__restrict__ w,
              double *__restrict__ h, int ar, double ar_ld, double ar_sd,
              const double *__restrict__ ar_start)
{
    __shared__ double As[KROWS][TILE + PAD];   // X[r0 + i, k0 + kk] at [kk][i]
    __shared__ double Bs[KROWS][TILE + PAD];   // M[k0 + kk, j0 + j] at [kk][j]
    __shared__ double red[TILE][LEV_SLOTS + 1];
    const long long r0 = (long long) blockIdx.x * TILE;
    double hsum = 0.0;                         // thread t < 64: row r0 + t
    const tile_part tp = tile_part_of(threadIdx.x);
    // AR1: the block's rows' coefficients a, c
    __shared__ double arc[2][TILE];
    if (ar && threadIdx.x < TILE) {
        const long long r = r0 + threadIdx.x;
        double ca = 0.0, cc = 0.0;
        if (r < n)
            gg_ar1_row(r, ar_ld, ar_sd, ar_start, w, &ca, &cc);
        arc[0][threadIdx.x] = ca;
        arc[1][threadIdx.x] = cc;
    }
    __syncthreads();
    for (int j0 = 0; j0 < p; j0 += TILE) {
        TILE_ACC(acc);
        tile_zero(acc);
        for (int k0 = 0; k0 < p; k0 += KROWS) {
            for (int e = threadIdx.x; e < KROWS * TILE; e += NTHREADS) {
                const int kk = e % KROWS, cc = e / KROWS;
                const int k = k0 + kk;
                const long long r = r0 + cc;
                As[kk][cc] = (k < p && r < n)
                                 ? (ar ? ar1_value(X + (size_t) k * ldx, r, arc[0][cc], arc[1][cc])
                                       : X[(size_t) k * ldx + r])
                                 : 0.0;
                const int j = j0 + cc;
                Bs[kk][cc] = (k < p && j < p) ? M[(size_t) j * p + k] : 0.0;
            }
            __syncthreads();
            tile_step(As, Bs, tp, acc);
            __syncthreads();
        }
        // this tile's T[i, j] X[i, j], summed per row over the thread's columns
#ifdef GG_DMMA
        for (int a = 0; a < 2; a++) {
            const int i = tp.mb + 8 * a + tp.gid;
            const long long r = r0 + i;
            double ps = 0.0;
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 2; c++) {
                    const int j = j0 + tp.nb + 8 * b + 2 * tp.tig + c;
                    if (r < n && j < p)
                        ps += acc[a][b][c] * (ar ? ar1_value(X + (size_t) j * ldx, r, arc[0][i], arc[1][i])
                                                 : X[(size_t) j * ldx + r]);
                }
            red[i][(tp.nb / 32) * 4 + tp.tig] = ps;
        }
#else
        for (int a = 0; a < 4; a++) {
            const int i = tp.ty + 16 * a;
            const long long r = r0 + i;
            double ps = 0.0;
            for (int b = 0; b < 4; b++) {
                const int j = j0 + tp.tx + 16 * b;
                if (r < n && j < p)
                    ps += acc[a][b] * (ar ? ar1_value(X + (size_t) j * ldx, r, arc[0][i], arc[1][i])
                                          : X[(size_t) j * ldx + r]);
            }
            red[i][tp.tx] = ps;
        }
#endif
        __syncthreads();
        if (threadIdx.x < TILE)
            for (int c = 0; c < LEV_SLOTS; c++)
                hsum += red[threadIdx.x][c];
        __syncthreads();
    }
    if (threadIdx.x < TILE) {
        const long long r = r0 + threadIdx.x;
        if (r < n)
            h[r] = (w != nullptr && !ar) ? w[r] * hsum : hsum;
    }
}

// X' V of an n x p matrix X and an n x k matrix V (column-major, leading
// dimensions ldx, ldv), in the way gram_partial forms X'WX: block (tile
// pair, slab) accumulates one 64 x 64 tile -- X's columns ti, V's columns
// tj -- over one slab of rows and writes it to its own slot of partial
// (p x k per slab); gram_xtv_reduce then sums the slabs in a fixed order.
// The outer smoothing parameter iteration's products X' v (R/outer.R).
// Grid: (tiles of p) x (tiles of k) blocks by slabs.
extern "C" __global__ void __launch_bounds__(NTHREADS)
gram_xtv(const double *__restrict__ X, long long ldx, const double *__restrict__ V,
         long long ldv, long long n, int p, int k, long long rows_per_slab,
         double *__restrict__ partial)
{
    const int ntp = (p + TILE - 1) / TILE;
    const int ti = blockIdx.x % ntp, tj = blockIdx.x / ntp;

    __shared__ double As[KROWS][TILE + PAD];   // X[r, tile ti]
    __shared__ double Bs[KROWS][TILE + PAD];   // V[r, tile tj]

    const tile_part tp = tile_part_of(threadIdx.x);
    TILE_ACC(acc);
    tile_zero(acc);

    const long long r0 = (long long) blockIdx.y * rows_per_slab;
    long long r1 = r0 + rows_per_slab;
    if (r1 > n)
        r1 = n;

    for (long long rb = r0; rb < r1; rb += KROWS) {
        for (int e = threadIdx.x; e < KROWS * TILE; e += NTHREADS) {
            const int rr = e % KROWS, cc = e / KROWS;
            const long long r = rb + rr;
            const int ci = ti * TILE + cc, cj = tj * TILE + cc;
            As[rr][cc] = (r < r1 && ci < p) ? X[(size_t) ci * ldx + r] : 0.0;
            Bs[rr][cc] = (r < r1 && cj < k) ? V[(size_t) cj * ldv + r] : 0.0;
        }
        __syncthreads();
        tile_step(As, Bs, tp, acc);
        __syncthreads();
    }

    double *out = partial + (size_t) blockIdx.y * p * k;
#ifdef GG_DMMA
    for (int a = 0; a < 2; a++) {
        const int i = ti * TILE + tp.mb + 8 * a + tp.gid;
        if (i >= p)
            continue;
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 2; c++) {
                const int j = tj * TILE + tp.nb + 8 * b + 2 * tp.tig + c;
                if (j < k)
                    out[(size_t) j * p + i] = acc[a][b][c];
            }
    }
#else
    for (int a = 0; a < 4; a++) {
        const int i = ti * TILE + tp.ty + 16 * a;
        if (i >= p)
            continue;
        for (int b = 0; b < 4; b++) {
            const int j = tj * TILE + tp.tx + 16 * b;
            if (j < k)
                out[(size_t) j * p + i] = acc[a][b];
        }
    }
#endif
}

// out[i] = sum over slabs of partial[s][i], i < m, in slab order; with
// accumulate, added to what out holds (rows streamed through in chunks).
extern "C" __global__ void
gram_xtv_reduce(const double *__restrict__ partial, int n_slabs, long long m, int accumulate,
                double *__restrict__ out)
{
    const long long idx = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= m)
        return;
    double s = accumulate ? out[idx] : 0.0;
    for (int k = 0; k < n_slabs; k++)
        s += partial[(size_t) k * m + idx];
    out[idx] = s;
}
