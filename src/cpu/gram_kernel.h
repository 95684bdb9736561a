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

/* The kernel's steps, for other row sources (xsparse.c): A[j, j..p) (row j
 * of A at A + j lda) += sum over eight rows r of a_r x_r[j..p), a_r = w_r
 * x_r[j], the rows row-major, ldx apart; rows1 for one row. */
void gg_gram_rows8(int p, const double *x, size_t ldx, const double *w, double *A, size_t lda);
void gg_gram_rows1(int p, const double *x, double w, double *A, size_t lda);

#endif
