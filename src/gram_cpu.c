/* gram_cpu.c -- the CPU twin of cuda_gram.c: A = X'WX, b = X'Wz, z'Wz with
 * BLAS over row chunks, so the memory beyond the data is O(chunk * p + p^2).
 * It is the oracle the device result is tested against, and the engine's
 * CPU path. */
#define USE_FC_LEN_T
#include "gram_cpu.h"

#include <R_ext/BLAS.h>
#include <stdlib.h>
#include <string.h>

#ifndef FCONE
#define FCONE
#endif

#define CHUNK_ROWS 4096

int gg_cpu_gram(const double *X, size_t n, int p, const double *w, const double *z,
                double *A, double *b, double *zwz, gg_status *st)
{
    memset(A, 0, (size_t) p * p * sizeof(double));
    if (z != NULL) {
        memset(b, 0, (size_t) p * sizeof(double));
        *zwz = 0;
    }
    if (n == 0 || p == 0)
        return 0;
    size_t chunk = n < CHUNK_ROWS ? n : CHUNK_ROWS;
    double *WX = malloc(chunk * (size_t) p * sizeof(double));
    double *wz = malloc(chunk * sizeof(double));
    if (WX == NULL || wz == NULL) {
        free(WX);
        free(wz);
        return gg_fail(st, "gamgpu_host_oom", "gram: out of host memory for a %zu x %d chunk",
                       chunk, p);
    }
    const double one = 1.0;
    const int inc = 1, ldx = (int) n;
    double s = 0;
    for (size_t r0 = 0; r0 < n; r0 += chunk) {
        const int m = (int) (n - r0 < chunk ? n - r0 : chunk);
        for (int j = 0; j < p; j++) {
            const double *xj = X + (size_t) j * n + r0;
            double *wxj = WX + (size_t) j * m;
            for (int i = 0; i < m; i++)
                wxj[i] = w != NULL ? xj[i] * w[r0 + i] : xj[i];
        }
        /* A += X_chunk' (W X_chunk) */
        F77_CALL(dgemm)("T", "N", &p, &p, &m, &one, X + r0, &ldx, WX, &m, &one, A, &p
                        FCONE FCONE);
        if (z != NULL) {
            for (int i = 0; i < m; i++) {
                const double wi = w != NULL ? w[r0 + i] : 1.0;
                wz[i] = z[r0 + i] * wi;
                s += wz[i] * z[r0 + i];
            }
            F77_CALL(dgemv)("T", &m, &p, &one, X + r0, &ldx, wz, &inc, &one, b, &inc FCONE);
        }
    }
    if (z != NULL)
        *zwz = s;
    free(WX);
    free(wz);
    return 0;
}
