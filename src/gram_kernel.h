/* gram_kernel.h -- gamgpu's own weighted Gram product on the CPU
 * (gram_kernel.c), beside the BLAS one of gram_cpu.c. */
#ifndef GAMGPU_GRAM_KERNEL_H
#define GAMGPU_GRAM_KERNEL_H

#include <stddef.h>

#include "status.h"

/* A = X'WX (p x p, both triangles), and when z != NULL b = X'Wz, *zwz =
 * z'Wz; X n x p column-major with leading dimension ldx >= n, w and z
 * (n each) of any sign, w NULL for unit weights.  Over
 * the thread budget (threads.h), in fixed row ranges: the result does not
 * depend on the number of threads. */
int gg_gram_kernel(const double *X, size_t ldx, size_t n, int p, const double *w,
                   const double *z, double *A, double *b, double *zwz, gg_status *st);

#endif
