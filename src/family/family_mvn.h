/* family_mvn.h -- the log likelihood of mgcv's mvn() family (the
 * multivariate normal additive model) and its derivatives, as the family's
 * ll() returns them, from the rows' sufficient statistics (family_mvn.c).
 *
 * mvn()'s likelihood reads its n rows only through X'X of the mean
 * columns, the residuals' products with X (r' X, m x p) and with
 * themselves (r' r, m x m), and n: the caller forms those over the rows
 * (on a model session's X, on the device for a GPU fit: R/family_mvn.R),
 * and everything here is p x p and theta algebra, mgcv's mvn_ll()'s. */
#ifndef GAMGPU_FAMILY_MVN_H
#define GAMGPU_FAMILY_MVN_H

#include "status.h"

/* The coefficients are np: the mean coefficients (the first pm) then the
 * m (m + 1) / 2 parameters theta of the precision's Choleski factor R
 * (row by row of R's upper triangle: exp(theta) on its diagonal).  The
 * predictors may share mean coefficients (mgcv's lpi "overlap"): the
 * expanded coefficients are the m predictors' columns one after the
 * other, nc of them, pos[a] (0-based, < pm) the coefficient of expanded
 * one a and din[a] its predictor (non-decreasing, 0..m-1). */
typedef struct gg_mvn_in {
    int           m;      /* the response's dimension */
    double        n;      /* the rows */
    int           pm;     /* the mean coefficients */
    int           np;     /* all coefficients: pm + m (m + 1) / 2 */
    int           nc;     /* the expanded mean coefficients */
    const int    *pos;    /* nc */
    const int    *din;    /* nc */
    const double *XX;     /* pm x pm: X'X of the mean columns */
    const double *yX;     /* m x pm: r' X, r = y - mu the n x m residuals */
    const double *yty;    /* m x m: r' r */
    const double *theta;  /* m (m + 1) / 2 */
} gg_mvn_in;

/* ll, lb (np) and lbb (np x np) of mgcv's mvn ll(); with nsp > 0 also dH
 * (np x np x nsp): the Hessian's derivatives given the coefficients'
 * derivatives dbeta (np x nsp).  Results are in the caller's (contracted)
 * coefficients: an expanded coefficient's terms summed into the one it
 * copies, as mgcv's lpi.contract().  0, or -1 with st filled. */
int gg_mvn_ll(const gg_mvn_in *in, int nsp, const double *dbeta, double *ll, double *lb,
              double *lbb, double *dH, gg_status *st);

#endif
