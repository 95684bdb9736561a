/* order_stats.h -- a numeric column's counts around pivots and its values
 * in an open interval, one pass each: the steps of the exact selection of
 * an order statistic over row shards that several processes hold
 * (R/shards.R: shard_median(), mgcv's variable.summary() median over
 * every row).  NaNs (R's NA and NaN) compare false: counted nowhere. */
#ifndef GAMGPU_ORDER_STATS_H
#define GAMGPU_ORDER_STATS_H

#include <stddef.h>

/* For each of the m pivots p[j]: lt[j] = #{i: x[i] < p[j]}, le[j] =
 * #{i: x[i] <= p[j]}. */
void gg_count_pivots(const double *x, size_t n, const double *p, int m, double *lt,
                     double *le);

/* The values of x strictly between lo and hi, in row order, into out (when
 * not NULL); returns their count. */
size_t gg_values_between(const double *x, size_t n, double lo, double hi, double *out);

#endif
