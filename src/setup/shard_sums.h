/* shard_sums.h -- sums over a cluster node's rows that the leader combines
 * (R/shards.R: the response's moments when a shard opens, r.sq's sums at
 * the end), in one pass each and with no temporary the rows' size:
 * accumulated in long double, as R's sum() and mean() accumulate, so
 * that they equal R's own expressions for them to the bit.  w NULL: every
 * prior weight is 1 (a lean node keeps no n-vector of ones). */
#ifndef GAMGPU_SHARD_SUMS_H
#define GAMGPU_SHARD_SUMS_H

#include <stddef.h>

/* out = c(n, sum(y), sum((y - mean(y))^2), sum(w * y), sum(w),
 * sum(w != 0)), mean() with R's second, correcting pass. */
void gg_response_sums(const double *y, const double *w, size_t n, double out[6]);

/* out = c(n, sum(v1), sum(v1^2), sum(v2), sum(v2^2)) for v1 = sqrt(w) *
 * (y - mu) and v2 = sqrt(w) * (y - mean_y). */
void gg_rsq_sums(const double *y, const double *mu, const double *w, double mean_y, size_t n,
                 double out[5]);

#endif
