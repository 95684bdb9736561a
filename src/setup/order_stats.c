/* order_stats.c -- a numeric column's counts around pivots and its values
 * in an open interval (order_stats.h), for the selection of an order
 * statistic over row shards held by several processes: one pass over the
 * column each, no temporary the column's size (R's x < p would make one
 * per comparison). */
#include "order_stats.h"

void gg_count_pivots(const double *x, size_t n, const double *p, int m, double *lt,
                     double *le)
{
    for (int j = 0; j < m; j++) {
        const double v = p[j];
        size_t a = 0, b = 0;
        for (size_t i = 0; i < n; i++) {
            a += x[i] < v;
            b += x[i] <= v;
        }
        lt[j] = (double) a;
        le[j] = (double) b;
    }
}

size_t gg_values_between(const double *x, size_t n, double lo, double hi, double *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i] > lo && x[i] < hi) {
            if (out != NULL) out[k] = x[i];
            k++;
        }
    return k;
}
