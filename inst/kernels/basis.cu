// basis.cu -- the model matrix built on the device from its recipe
// (src/xplan.h): mgcv "cr" and "tp" bases, and any
// other smooth as a row tensor product of margins (cr, tp, cc, ps/bs, a
// factor's indicators, a linear column) evaluated row by row from the
// covariates, then mgcv's identifiability constraint, by-variable (numeric
// or a factor level) and gam.side deletions; dense (parametric) columns
// copied in.  The host twin is src/xplan.c with src/basis_*.c; the per-row
// arithmetic of both is basis_math.h, so with --fmad=false the device X
// equals the host X (and mgcv's PredictMat) bit for bit wherever the math
// library (sqrt, log, pow) agrees.
//
// Steps per smooth: a raw basis kernel writes the k raw columns of a row
// chunk into scratch (leading dimension ldr), then basis_map writes the
// constrained columns into X (leading dimension ldx).  A margins block
// runs per margin a raw kernel and, unless the margin's map is the
// identity, basis_map into a second scratch region; basis_tensor combines
// the margins; then the block's basis_map writes X -- or, when the block's
// map is the identity, the last of those steps writes X itself
// (src/cuda_backend.c, layout_margins, lays out the scratch).  Rows r0 ..
// r0+rows-1 of the data become rows 0 .. rows-1 of the chunk.

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

#define TPRS_MAX_D 4
#define TPRS_COLS 16

// tp: x is n x d (column-major, the data's n rows), shift d, Xu nXu x d,
// UZ (nXu + M) x k, power M x d null-space exponents, m the effective
// penalty order and eta0 its constant (basis_tprs.c computes both).  Each
// raw column is a sum over the nXu + M basis functions in their order,
// as on the host; columns go in register groups of TPRS_COLS, recomputing
// the radial functions per group.
extern "C" __global__ void basis_tprs_raw(const double *__restrict__ x, long long n, int d,
                                          long long r0, long long rows,
                                          const double *__restrict__ shift, int m, double eta0,
                                          const double *__restrict__ Xu, int nXu,
                                          const int *__restrict__ power, int M,
                                          const double *__restrict__ UZ, int k,
                                          double *__restrict__ raw, long long ldr)
{
    const int nb = nXu + M;
    GRID_ROWS(r, rows) {
        double xx[TPRS_MAX_D];
        for (int j = 0; j < d; j++)
            xx[j] = x[(long long) j * n + r0 + r] - shift[j];
        for (int c0 = 0; c0 < k; c0 += TPRS_COLS) {
            const int nc = k - c0 < TPRS_COLS ? k - c0 : TPRS_COLS;
            double acc[TPRS_COLS];
#pragma unroll
            for (int c = 0; c < TPRS_COLS; c++)
                acc[c] = 0.0;
            for (int l = 0; l < nb; l++) {
                double b;
                if (l < nXu) {
                    double r2 = 0.0;
                    for (int j = 0; j < d; j++) {
                        const double z = Xu[l + (long long) nXu * j] - xx[j];
                        r2 += z * z;
                    }
                    b = gg_bm_tprs_eta(m, d, r2, eta0);
                } else {
                    b = 1.0;
                    for (int j = 0; j < d; j++)
                        for (int e = 0; e < power[(l - nXu) + M * j]; e++)
                            b *= xx[j];
                }
#pragma unroll
                for (int c = 0; c < TPRS_COLS; c++)
                    if (c < nc)
                        acc[c] += UZ[(long long) (c0 + c) * nb + l] * b;
            }
            for (int c = 0; c < nc; c++)
                raw[(long long) (c0 + c) * ldr + r] = acc[c];
        }
    }
}

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

// Raw k columns -> X's columns, as src/basis_map.c: sweep-and-drop (drop
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
