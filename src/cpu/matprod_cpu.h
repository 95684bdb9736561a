/* matprod_cpu.h -- dense products over the rows on the CPU, by gamgpu's
 * own kernels over the thread budget (matprod_cpu.c): for the general
 * families' row passes (family_cox.c, family_gamlss.c, gamlss_blocks.c),
 * where R's BLAS, one thread without blocking, would take most of a fit. */
#ifndef GAMGPU_MATPROD_CPU_H
#define GAMGPU_MATPROD_CPU_H

#include <stddef.h>

#include "status.h"

/* C (m x q) = A B: A m x p (leading dimension lda >= m), B p x q, C with
 * leading dimension ldc >= m, all column-major.  Each entry is one sum
 * over p in order: the numbers do not depend on the threads. */
int gg_matprod(const double *A, size_t lda, size_t m, int p, const double *B, int q,
               double *C, size_t ldc, gg_status *st);

/* C (p x q) = A' diag(w) B over m rows (A m x p, B m x q, column-major;
 * w NULL: unit weights), in fixed row ranges whose sums are added in
 * order: the numbers do not depend on the threads. */
int gg_crossprod_rows(const double *A, const double *B, size_t m, int p, int q,
                      const double *w, double *C, gg_status *st);

/* A (na x nb, row-major) += sum over m rows r of wa_r' xb_r, wa (m x na)
 * and xb (m x nb) row-major; sym: only A's upper triangle is wanted (tiles
 * wholly below the diagonal are skipped).  The kernel of the products
 * over rows (also gamlss_blocks.c's). */
void gg_tiles_accumulate(int m, int na, const double *wa, int nb, const double *xb,
                         double *A, int sym);

#endif
