/* gram_cpu.h -- weighted Gram product on the CPU (see gram_cpu.c). */
#ifndef GAMGPU_GRAM_CPU_H
#define GAMGPU_GRAM_CPU_H

#include <stddef.h>

#include "status.h"

/* A = X'WX (p x p, both triangles); when z != NULL also b = X'Wz and
 * *zwz = z'Wz.  X is n x p column-major; w == NULL means unit weights; n
 * must fit an int; chunk_rows 0 = the default chunk. */
int gg_cpu_gram(const double *X, size_t n, int p, const double *w, const double *z,
                double *A, double *b, double *zwz, size_t chunk_rows, gg_status *st);

#endif
