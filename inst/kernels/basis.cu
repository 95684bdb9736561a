// basis.cu -- the model matrix built on the device from its recipe
// (src/xplan.h): mgcv "cr" and "tp" bases evaluated row by row from the
// covariates, then mgcv's identifiability constraint, by-variable and
// gam.side deletions; dense (parametric) columns copied in.  The host twin
// is src/xplan.c with src/basis_*.c; the per-row arithmetic of both is
// basis_math.h, so with --fmad=false the device X equals the host X (and
// mgcv's PredictMat) bit for bit wherever sqrt/log agree.
//
// Two steps per smooth: a raw basis kernel writes the k raw columns of a
// row chunk into scratch (leading dimension ldr), then basis_map writes the
// constrained columns into X (leading dimension ldx).  Rows r0 .. r0+rows-1
// of the data become rows 0 .. rows-1 of the chunk.

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

// te() of two cr margins: raw column i k2 + j = u1[i] u2[j] (the second
// margin's index fastest, as mgcv's tensor.prod.model.matrix); x is n x 2.
extern "C" __global__ void basis_te2_raw(const double *__restrict__ x, long long n,
                                         long long r0, long long rows,
                                         const double *__restrict__ xk1, int k1,
                                         const double *__restrict__ F1,
                                         const double *__restrict__ xk2, int k2,
                                         const double *__restrict__ F2,
                                         double *__restrict__ raw, long long ldr)
{
    GRID_ROWS(r, rows) {
        const gg_bm_cr_row b1 = gg_bm_cr_locate(x[r0 + r], xk1, k1);
        const gg_bm_cr_row b2 = gg_bm_cr_locate(x[n + r0 + r], xk2, k2);
        for (int i = 0; i < k1; i++) {
            const double u1 = gg_bm_cr_value(&b1, F1, k1, i);
            for (int j = 0; j < k2; j++)
                raw[(long long) (i * k2 + j) * ldr + r] = u1 * gg_bm_cr_value(&b2, F2, k2, j);
        }
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

// Raw k columns -> X's columns, as src/basis_map.c: sweep-and-drop (drop
// < 0: none), by-variable (by null: none; the data's n rows, offset r0),
// the qr map Z ((k or k-1) x kc, null: none), deletions col_of (kc
// entries, -1 = deleted; null: identity).  X points at the block's first
// column.
extern "C" __global__ void basis_map(const double *__restrict__ raw, long long ldr, int k,
                                     long long r0, long long rows, int drop,
                                     const double *__restrict__ shift,
                                     const double *__restrict__ by,
                                     const double *__restrict__ Z, int kc,
                                     const int *__restrict__ col_of,
                                     double *__restrict__ X, long long ldx)
{
    const int m = drop >= 0 ? k - 1 : k;
    GRID_ROWS(r, rows) {
        const double byi = by != nullptr ? by[r0 + r] : 1.0;
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
                    if (by != nullptr)
                        v *= byi;
                    s += v * Z[(long long) c * m + q];
                }
            } else {
                const int src = drop >= 0 && c >= drop ? c + 1 : c;
                s = raw[(long long) src * ldr + r];
                if (drop >= 0)
                    s = s - shift[c];
                if (by != nullptr)
                    s *= byi;
            }
            X[(long long) oc * ldx + r] = s;
        }
    }
}

// Dense columns: D is n x ncol (the data's n rows).
extern "C" __global__ void basis_dense(const double *__restrict__ D, long long n, int ncol,
                                       long long r0, long long rows,
                                       double *__restrict__ X, long long ldx)
{
    GRID_ROWS(r, rows) {
        for (int c = 0; c < ncol; c++)
            X[(long long) c * ldx + r] = D[(long long) c * n + r0 + r];
    }
}
