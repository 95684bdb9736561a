/* ar1_math.h -- the per-row arithmetic of the AR1 residual model, as
 * mgcv's bam(rho =) applies it, written once and compiled twice: as C in
 * the package (src/cpu/gram_cpu.c, src/cpu/backend_cpu.c) and as CUDA C
 * by NVRTC (inst/kernels/gram.cu).
 *
 * bam() fits a Gaussian identity model with AR1 residuals by weighted least
 * squares on rows transformed by the Cholesky factor of the inverse AR1
 * correlation matrix (bam.fit's rwMatrix): with x'_r = sqrt(w_r) x_r,
 *     row r of a series' first row:  x'_r
 *     any other row r:               ld x'_r + sd x'_{r-1},
 * ld = 1 / sqrt(1 - rho^2), sd = -rho ld.  The same holds for the working
 * response.  gg_ar1_row() gives the two coefficients of row r on the raw
 * rows, x~_r = a x_r + c x_{r-1}: a = (ld or 1) sqrt(w_r), c = sd
 * sqrt(w_{r-1}) or 0 at a series' start.  Row 0 always starts a series;
 * start (n doubles, nonzero where bam's AR.start is TRUE) may be NULL for a
 * single series.  w NULL means unit weights.  Callers evaluate
 * a * x_r + c * x_{r-1} in that order (and skip x_{r-1} where c is 0), so
 * the host and the device round alike. */
#ifndef GAMGPU_AR1_MATH_H
#define GAMGPU_AR1_MATH_H

#ifdef __CUDACC_RTC__
#define GG_AR static __device__ __forceinline__
#else
#include <math.h>
#define GG_AR static inline
#endif

/* 1 when row r starts a series (its c is 0 and x_{r-1} is not read) */
GG_AR int gg_ar1_start(long long r, const double *start)
{
    return r == 0 || (start != 0 && start[r] != 0.0);
}

GG_AR void gg_ar1_row(long long r, double ld, double sd, const double *start,
                      const double *w, double *a, double *c)
{
    const double sw = w != 0 ? sqrt(w[r]) : 1.0;
    if (gg_ar1_start(r, start)) {
        *a = sw;
        *c = 0.0;
    } else {
        *a = ld * sw;
        *c = sd * (w != 0 ? sqrt(w[r - 1]) : 1.0);
    }
}

#endif
