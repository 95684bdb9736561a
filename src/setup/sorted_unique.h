/* sorted_unique.h -- distinct values in order (sorted_unique.c). */
#ifndef GAMGPU_SORTED_UNIQUE_H
#define GAMGPU_SORTED_UNIQUE_H

#include <stddef.h>

/* The distinct values of x[0 .. n-1] (no NaN) in increasing order, as
 * sort(unique(x)) gives them, into out (n doubles); *nu their count.
 * Radix sort on the values' order-preserving keys, over the threads the
 * budget (threads.h) allows.  Returns 0, or -1 when
 * there was no memory. */
int gg_sorted_unique(const double *x, size_t n, double *out, size_t *nu);
/* gg_sorted_unique() of m vectors (x[j], n[j] values, into out[j]: n[j]
 * doubles, nu[j] their count), one job per vector side by side over the
 * thread budget: the same values as m calls one after another.  Returns
 * 0, or -1 when there was no memory. */
int gg_sorted_unique_many(int m, const double *const *x, const size_t *n, double *const *out,
                          size_t *nu);

#endif
