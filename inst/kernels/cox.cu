// cox.cu -- the row-wise work of cox.ph()'s log partial likelihood on the
// device backend (src/cuda/cuda_cox.c drives it; the host's twin is
// src/family/family_cox.c): the risk sets' sums as prefix sums down the
// rows (time decreasing) read at the rows that close an event time
// (segmented by the rows' strata where there are strata), the
// rows' weights of the Hessian's Gram products, the event times' bilinear
// forms b' W b and the terms of REML's traces.
// X's columns, its Gram products and X B are the backend's own passes
// (cuda_backend.c, cuda_gram.c).  Reductions are per-block partial sums
// in a fixed grid, summed on the host in block order.

#define NTHREADS 256
#include "block_sum.h"

#define SCAN_ROWS 8                       // rows a thread scans in a tile
#define TILE (NTHREADS * SCAN_ROWS)       // rows of a tile

#define FOR_ROWS(i, n)                                                              \
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long) gridDim.x * blockDim.x)

// element i of column k of the scanned matrix: V[i, k] times s[i] where s
// is given; rev: the elements in reverse order (a suffix scan)
static __device__ double scan_val(const double *V, long long ldv, const double *s, long long n,
                                  int rev, long long i, int k)
{
    const long long j = rev ? n - 1 - i : i;
    const double v = V[j + k * ldv];
    return s != nullptr ? v * s[j] : v;
}

// the exclusive prefix sums of the block's NTHREADS values (x: this
// thread's), in a fixed order
static __device__ double block_exclusive(double x)
{
    __shared__ double a[NTHREADS], b[NTHREADS];
    a[threadIdx.x] = x;
    __syncthreads();
    double *src = a, *dst = b;
    for (int d = 1; d < NTHREADS; d <<= 1) {
        dst[threadIdx.x] = threadIdx.x >= d ? src[threadIdx.x] + src[threadIdx.x - d]
                                            : src[threadIdx.x];
        __syncthreads();
        double *t = src; src = dst; dst = t;
    }
    const double incl = src[threadIdx.x];
    __syncthreads();
    return incl - x;
}

// Segmented scans (key not null: key[j] the segment of element j, the
// segments one run of elements each; first > 0: key[-1] is the segment of
// the element before these).  Whether element i (in scan order) begins a
// segment: its key differs from the one before it.
static __device__ int seg_start(const int *key, long long n, int rev, long long first,
                                long long i)
{
    if (rev) return i > 0 && key[n - 1 - i] != key[n - i];
    return (i > 0 || first > 0) && key[i] != key[i - 1];
}

// A thread's SCAN_ROWS elements from r0 as a segmented pair: f, whether
// one of them begins a segment; the sum from the last that does (or all)
static __device__ double thread_seg(const double *V, long long ldv, const double *s,
                                    long long n, int rev, const int *key, long long first,
                                    long long r0, int k, int *f)
{
    double x = 0.0;
    *f = 0;
    for (int r = 0; r < SCAN_ROWS && r0 + r < n; r++) {
        if (seg_start(key, n, rev, first, r0 + r)) { x = 0.0; *f = 1; }
        x += scan_val(V, ldv, s, n, rev, r0 + r, k);
    }
    return x;
}

// The block's segmented exclusive scan of the threads' pairs (f, x), in a
// fixed order: returns the sum since the last segment start before this
// thread (*F: whether there was one in the block); *tail and *open: the
// whole block's (its last segment's sum; no start in it), for every thread
static __device__ double block_exclusive_seg(double x, int f, int *F, double *tail, int *open)
{
    __shared__ double a[NTHREADS], b[NTHREADS];
    __shared__ int fa[NTHREADS], fb[NTHREADS];
    a[threadIdx.x] = x;
    fa[threadIdx.x] = f;
    __syncthreads();
    double *src = a, *dst = b;
    int *fs = fa, *fd = fb;
    for (int d = 1; d < NTHREADS; d <<= 1) {
        if (threadIdx.x >= d) {
            const int fr = fs[threadIdx.x];
            dst[threadIdx.x] = fr ? src[threadIdx.x] : src[threadIdx.x - d] + src[threadIdx.x];
            fd[threadIdx.x] = fr | fs[threadIdx.x - d];
        } else {
            dst[threadIdx.x] = src[threadIdx.x];
            fd[threadIdx.x] = fs[threadIdx.x];
        }
        __syncthreads();
        double *t = src; src = dst; dst = t;
        int *u = fs; fs = fd; fd = u;
    }
    const double excl = threadIdx.x > 0 ? src[threadIdx.x - 1] : 0.0;
    *F = threadIdx.x > 0 ? fs[threadIdx.x - 1] : 0;
    *tail = src[NTHREADS - 1];
    *open = !fs[NTHREADS - 1];
    __syncthreads();
    return excl;
}

// Scan, step 1: tsum[t + k ntiles] = the sum of tile t of column k (grid
// ntiles x q); segmented (key): the sum of the tile's last segment, and
// topen[t] whether the tile begins none
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_scan_tiles(const double *__restrict__ V, long long ldv, const double *__restrict__ s,
               long long n, int rev, const int *__restrict__ key, long long first,
               double *__restrict__ tsum, int *__restrict__ topen)
{
    const int k = blockIdx.y;
    const long long r0 = (long long) blockIdx.x * TILE + (long long) threadIdx.x * SCAN_ROWS;
    if (key != nullptr) {
        int f, F, open;
        double tail;
        const double x = thread_seg(V, ldv, s, n, rev, key, first, r0, k, &f);
        block_exclusive_seg(x, f, &F, &tail, &open);
        if (threadIdx.x == 0) {
            tsum[blockIdx.x + (long long) k * gridDim.x] = tail;
            if (k == 0) topen[blockIdx.x] = open;
        }
        return;
    }
    double x = 0.0;
    for (int r = 0; r < SCAN_ROWS; r++)
        if (r0 + r < n) x += scan_val(V, ldv, s, n, rev, r0 + r, k);
    block_sum(x, tsum + (long long) k * gridDim.x);
}

// Scan, step 2: each column's tile sums into exclusive prefixes, from
// carry[k] (the earlier chunks' total, updated; null: 0) -- one thread a
// column, tiles in order; segmented (topen): the running sum of the
// segment that reaches each tile
extern "C" __global__ void
cox_scan_carry(double *__restrict__ tsum, const int *__restrict__ topen, int ntiles, int q,
               double *__restrict__ carry)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= q) return;
    double acc = carry != nullptr ? carry[k] : 0.0;
    for (int t = 0; t < ntiles; t++) {
        const double v = tsum[t + (long long) k * ntiles];
        tsum[t + (long long) k * ntiles] = acc;
        acc = topen == nullptr || topen[t] ? acc + v : v;
    }
    if (carry != nullptr) carry[k] = acc;
}

// Scan, step 3: the inclusive prefix sums of column k (of each segment,
// with key), written at row i's event time rowe[i] (rows that close none:
// -1) of out (ldo rows a column), or with rowe null at every element; grid
// ntiles x q
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_scan_write(const double *__restrict__ V, long long ldv, const double *__restrict__ s,
               long long n, int rev, const int *__restrict__ key, long long first,
               const int *__restrict__ rowe, const double *__restrict__ tsum,
               double *__restrict__ out, long long ldo)
{
    const int k = blockIdx.y;
    const long long r0 = (long long) blockIdx.x * TILE + (long long) threadIdx.x * SCAN_ROWS;
    double run;
    if (key != nullptr) {
        int f, F, open;
        double tail;
        const double x = thread_seg(V, ldv, s, n, rev, key, first, r0, k, &f);
        const double excl = block_exclusive_seg(x, f, &F, &tail, &open);
        run = F ? excl : tsum[blockIdx.x + (long long) k * gridDim.x] + excl;
    } else {
        double x = 0.0;
        for (int r = 0; r < SCAN_ROWS; r++)
            if (r0 + r < n) x += scan_val(V, ldv, s, n, rev, r0 + r, k);
        run = tsum[blockIdx.x + (long long) k * gridDim.x] + block_exclusive(x);
    }
    for (int r = 0; r < SCAN_ROWS && r0 + r < n; r++) {
        const long long i = r0 + r;
        if (key != nullptr && seg_start(key, n, rev, first, i)) run = 0.0;
        run += scan_val(V, ldv, s, n, rev, i, k);
        const long long j = rev ? n - 1 - i : i;
        if (rowe == nullptr) out[j + k * ldo] = run;
        else if (rowe[j] >= 0) out[rowe[j] + k * ldo] = run;
    }
}

// gamma = exp(eta + off) (off null: none); partial[b] = block b's sum of
// eta + off over the event rows
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_gamma(const double *__restrict__ eta, const double *__restrict__ off,
          const int *__restrict__ event, long long n, double *__restrict__ gam,
          double *__restrict__ partial)
{
    double x = 0.0;
    FOR_ROWS(i, n) {
        const double e = off != nullptr ? eta[i] + off[i] : eta[i];
        gam[i] = exp(e);
        if (event[i] == 1) x += e;
    }
    block_sum(x, partial);
}

// the event times' sums: what 0: c = dr / G, partial: sum of dr log G;
// 1: c = dr / G^2; 2: c = dr Gm / G^2
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_events(int what, const double *__restrict__ G, const double *__restrict__ dr,
           const double *__restrict__ Gm, long long ne, double *__restrict__ c,
           double *__restrict__ partial)
{
    double x = 0.0;
    FOR_ROWS(e, ne) {
        if (what == 0) {
            c[e] = dr[e] / G[e];
            x += dr[e] * log(G[e]);
        } else if (what == 1) {
            c[e] = dr[e] / (G[e] * G[e]);
        } else {
            c[e] = dr[e] * Gm[e] / (G[e] * G[e]);
        }
    }
    if (what == 0) block_sum(x, partial);
}

// the rows' weights from a suffix sum over the event times (sfx[e], e
// from rowf[i], the row's first event time at or after its own; ne: none):
//   what 0: out = sfx (C);  1: out = (event == 1) - gam C;  2: out = gam C;
//   3: out = gam sfx - dg C.
// zero: cleared where given (a Gram pass's weights into the backend's w,
// its z cleared)
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_rows(int what, const double *__restrict__ sfx, const int *__restrict__ rowf, long long ne,
         const int *__restrict__ event, const double *__restrict__ gam,
         const double *__restrict__ C, const double *__restrict__ dg, long long n,
         double *__restrict__ out, double *__restrict__ zero)
{
    FOR_ROWS(i, n) {
        const double f = rowf != nullptr ? (rowf[i] < ne ? sfx[rowf[i]] : 0.0) : 0.0;
        double v;
        if (what == 0) v = f;
        else if (what == 1) v = (event[i] == 1 ? 1.0 : 0.0) - gam[i] * C[i];
        else if (what == 2) v = gam[i] * C[i];
        else v = gam[i] * f - dg[i] * C[i];
        out[i] = v;
        if (zero != nullptr) zero[i] = 0.0;
    }
}

// out (n x q) = gam times each column of E (n x q); with E2 and E3
// (pair columns): gam (E + E2 E3), for one column
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_times_gamma(const double *__restrict__ gam, const double *__restrict__ E,
                const double *__restrict__ E2, const double *__restrict__ E3, long long n,
                int q, double *__restrict__ out)
{
    FOR_ROWS(i, n) {
        for (int k = 0; k < q; k++) {
            const long long at = i + k * n;
            out[at] = E2 != nullptr ? gam[i] * (E[at] + E2[i] * E3[i]) : gam[i] * E[at];
        }
    }
}

// Cm (ne x p) = Bm - (Gm / G) B: the event times' b_m less their share of b
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_bm_less(const double *__restrict__ Bm, const double *__restrict__ Gm,
            const double *__restrict__ G, const double *__restrict__ B, long long ne, int p,
            double *__restrict__ Cm)
{
    FOR_ROWS(e, ne) {
        const double r = Gm[e] / G[e];
        for (int k = 0; k < p; k++) Cm[e + k * ne] = Bm[e + k * ne] - r * B[e + k * ne];
    }
}

// out[e] = row e of A . (W row e of B)', A and B ne x p (leading
// dimension ne), W p x p symmetric: b_A' W b_B at each event time
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_bilinear(const double *__restrict__ A, const double *__restrict__ B,
             const double *__restrict__ W, long long ne, int p, double *__restrict__ out)
{
    FOR_ROWS(e, ne) {
        double t = 0.0;
        for (int k = 0; k < p; k++) {
            double u = 0.0;
            for (int l = 0; l < p; l++) u += B[e + l * ne] * W[l + k * p];
            t += A[e + k * ne] * u;
        }
        out[e] = t;
    }
}

// REML's trace tr(W d2H_mk) of one pair (m, k): its sum over the event
// times (family_cox.c's last loop); partial[b] = block b's part
extern "C" __global__ void __launch_bounds__(NTHREADS)
cox_trace(const double *__restrict__ G, const double *__restrict__ dr,
          const double *__restrict__ Gm, const double *__restrict__ Gk,
          const double *__restrict__ G2, const double *__restrict__ tA,
          const double *__restrict__ tAm, const double *__restrict__ tAk,
          const double *__restrict__ tA2, const double *__restrict__ bWb,
          const double *__restrict__ bmWb, const double *__restrict__ bkWb,
          const double *__restrict__ bmkWb, const double *__restrict__ bmWbk, long long ne,
          double *__restrict__ partial)
{
    double t = 0.0;
    FOR_ROWS(e, ne) {
        const double a1 = dr[e] / G[e], a2 = a1 / G[e], a3 = a2 / G[e], a4 = a3 / G[e];
        t += -a1 * tA2[e] + a2 * (Gk[e] * tAm[e] + Gm[e] * tAk[e] + G2[e] * tA[e])
             - 2.0 * a3 * Gm[e] * Gk[e] * tA[e]
             + 2.0 * a2 * (bmkWb[e] + bmWbk[e])
             - 4.0 * a3 * (Gk[e] * bmWb[e] + Gm[e] * bkWb[e])
             - 2.0 * a3 * G2[e] * bWb[e] + 6.0 * a4 * Gm[e] * Gk[e] * bWb[e];
    }
    block_sum(t, partial);
}
