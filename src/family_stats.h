/* family_stats.h -- what the gam object needs over all rows once a fit is
 * done, by the family arithmetic of the fit (family.h), in pure C: signed
 * deviance residuals with their sum of squares, the null deviance and the
 * family's aic.  Each is one pass without temporaries, with the numbers R's
 * own family functions give (R's nmath densities, long double sums in R's
 * order), so the fit's glue can run them on a thread of their own. */
#ifndef GAMGPU_FAMILY_STATS_H
#define GAMGPU_FAMILY_STATS_H

#include <stddef.h>

#include "family.h"

/* r_i = sign(y_i - mu_i) sqrt(max(d_i, 0)), d_i the deviance contribution
 * (family$dev.resids); returns sum(r^2) as R's sum() gives it. */
double gg_deviance_residuals(gg_family_id f, size_t n, const double *y, const double *mu,
                             const double *wt, double *r);

/* sum(dev.resids(y, weighted.mean(y, wt), wt)), with weighted.mean's
 * exclusion of zero weights. */
double gg_null_deviance(gg_family_id f, size_t n, const double *y, const double *wt);

/* family$aic(y, 1, mu, wt, dev) for the families of stats (R 4.x): 0 with
 * *aic set, or 1 for the quasi families, whose aic is NA. */
int gg_family_aic(gg_family_id f, size_t n, const double *y, const double *mu,
                  const double *wt, double dev, double *aic);

#endif
