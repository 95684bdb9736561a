/* family_dens.h -- the log densities behind the families' aic (family$aic:
 * dpois, dbinom, dgamma with log = TRUE), in pure C so that they may run
 * on any thread (family_stats.c runs them on helper threads, where no R
 * API may be called).  They follow Loader's saddle point method (C. Loader,
 * "Fast and accurate computation of binomial probabilities", 2000), the
 * method of R's own densities, and agree with R's values to rounding
 * (tests/testthat/test-family-densities.R).
 *
 * Where R's density warns ("non-integer x = %f") and gives 0, these give
 * -Inf and count the row in *nonint (when nonint is not NULL); the caller
 * raises R's warning on R's thread (fit_r.c). */
#ifndef GAMGPU_FAMILY_DENS_H
#define GAMGPU_FAMILY_DENS_H

/* R's test for "not a whole number": |x - round(x)| > 1e-7 max(1, |x|). */
int gg_dens_nonint(double x);

/* log dpois(x, lambda). */
double gg_ldpois(double x, double lambda, int *nonint);

/* log dbinom(x, size, prob); size must be a whole number (else NaN, as R). */
double gg_ldbinom(double x, double size, double prob, int *nonint);

/* log dgamma(x, shape, scale = scale). */
double gg_ldgamma(double x, double shape, double scale);

#endif
