/* gram_cpu.h -- weighted Gram product on the CPU (see gram_cpu.c). */
#ifndef GAMGPU_GRAM_CPU_H
#define GAMGPU_GRAM_CPU_H

#include <stddef.h>

#include "status.h"

/* The AR1 residual model of bam(rho =) (inst/include/ar1_math.h): ld =
 * 1 / sqrt(1 - rho^2), sd = -rho ld, start: n doubles, nonzero where a
 * series starts (NULL: one series). */
typedef struct gg_ar1 {
    double        ld, sd;
    const double *start;
} gg_ar1;

/* ld and sd of rho (|rho| < 1) */
gg_ar1 gg_ar1_of(double rho, const double *start);

/* A = X'WX (p x p, both triangles); when z != NULL also b = X'Wz and
 * *zwz = z'Wz.  X is n x p column-major; w == NULL means unit weights; n
 * must fit an int; chunk_rows 0 = the default chunk.  With ar non-NULL the
 * rows are AR1-transformed first (X~ = T W^1/2 X, z~ likewise) and A =
 * X~'X~, b = X~'z~, *zwz = z~'z~; w must then be non-negative. */
int gg_cpu_gram(const double *X, size_t n, int p, const double *w, const double *z,
                double *A, double *b, double *zwz, size_t chunk_rows, const gg_ar1 *ar,
                gg_status *st);

/* Which product gg_cpu_gram() takes without AR1 rows: "auto" (the faster
 * here, timed once per size class of p), gamgpu's own kernel
 * (gram_kernel.c) or the BLAS's.  Setting the mode forgets the timings. */
#define GG_CPU_GRAM_AUTO 0
#define GG_CPU_GRAM_OWN  1
#define GG_CPU_GRAM_BLAS 2
void gg_cpu_gram_set_mode(int mode);
int  gg_cpu_gram_mode(void);
/* For p's size class: 1 own, 2 BLAS, 0 not decided yet (under "auto");
 * the probe's seconds of each (0 where none ran). */
int  gg_cpu_gram_choice(int p, double *own_secs, double *blas_secs);
/* Whether gamgpu's own kernels are to take products of X's shape (n x p)
 * rather than the BLAS: the mode's answer, or under "auto" the size
 * class's choice, timed on X now if it is undecided and X is large enough
 * (small: own); -1 on failure (st set).  For other products over the rows
 * that have both routes (family_gamlss.c). */
int  gg_cpu_gram_prefers_own(const double *X, size_t n, int p, gg_status *st);
/* p's size class: 0 (p < 32), 1 (< 128), 2 (< 512), 3 (larger) */
int  gg_cpu_gram_class(int p);

#endif
