/* predict_cpu.h -- fit = X beta and se2 = diag(X V X') on the CPU, the twin
 * of the device routine gg_gpu_predict() (see predict_cpu.c). */
#ifndef GAMGPU_PREDICT_CPU_H
#define GAMGPU_PREDICT_CPU_H

#include <stddef.h>

#include "status.h"

/* X is n x p column-major, beta p, V p x p column-major.  fit[i] = x_i'beta
 * and se2[i] = x_i' V x_i (no square root, no offset), for every row, with
 * fit in the arithmetic of the rows_xbeta kernel, se2 equal to the device's
 * tiled product to rounding.  threads >= 1 splits the rows (results do not
 * depend on it). */
int gg_cpu_predict(const double *X, size_t n, int p, const double *beta, const double *V,
                   double *fit, double *se2, int threads, gg_status *st);

#endif
