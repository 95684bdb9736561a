/* family_cox.h -- the log partial likelihood of mgcv's cox.ph() family and
 * its derivatives, for the general-family route (R/general_family.R):
 * what the family's ll() returns, computed over the rows of its strata
 * (family_cox.c). */
#ifndef GAMGPU_FAMILY_COX_H
#define GAMGPU_FAMILY_COX_H

#include <stddef.h>

#include "status.h"

/* The rows, in decreasing order of time within each stratum, the strata
 * one after another.  grp[i] in 1..nt is the row's time group (nt of
 * them, non-decreasing along the rows: ties of a stratum share one, each
 * stratum has its own); event[i] == 1 marks an event, anything else
 * censoring (as mgcv's integer weights).  gstr (nt, or NULL for one
 * stratum): each time group's stratum, non-decreasing; the risk sets of a
 * stratum's event times hold that stratum's rows only.  X is n x p,
 * column-major. */
typedef struct gg_cox_rows {
    const double *eta;
    const double *X;
    size_t        n;
    int           p;
    const int    *grp;
    const int    *event;
    int           nt;
    const int    *gstr;
} gg_cox_rows;

/* Levels of the derivatives, as mgcv's coxlpl():
 *   -1  lp only;
 *    0  lp, g = dlp/dbeta and H = d2lp/dbeta dbeta';
 *    2  and d1H (p x p x M): dH/drho_m for beta's derivatives d1b (p x M);
 *    3  lp, g, H and trd2H (M (M + 1) / 2): tr(W d2H/drho_m drho_k) for
 *       m <= k (in that order, m the outer index), given d1b, d2b (p x
 *       M (M + 1) / 2) and the symmetric p x p W; not d1H, which
 *       gam.fit5() does not read from this call. */
typedef struct gg_cox_out {
    double  lp;
    double *g;        /* p */
    double *H;        /* p x p */
    double *d1H;      /* p x p x M (level 2) */
    double *trd2H;    /* M (M + 1) / 2 (level 3) */
} gg_cox_out;

int gg_cox_ll(const gg_cox_rows *r, int level, const double *d1b, int M,
              const double *d2b, const double *W, gg_cox_out *out, gg_status *st);

/* The event times of the rows (grp, event, nt, gstr as gg_cox_rows'):
 * returns ne, the times with an event (-1 on failure, st filled), with
 * dr[e] their events (dr: nt + 1 doubles), rowe[i] the event time row i
 * closes (the last row of its time; -1 where none), rowf[i] its first
 * event time at or after its own in its stratum (ne where none) and,
 * where estr is not NULL (nt + 1 ints), estr[e] the event time's stratum
 * (0 without strata), e counting the event times in the rows' order. */
int gg_cox_event_times(const int *grp, const int *event, size_t n, int nt, const int *gstr,
                       double *dr, int *rowe, int *rowf, int *estr, gg_status *st);

/* Whether grp (n) and gstr (nt, or NULL) are as gg_cox_rows' asks: 0, or
 * -1 with st filled. */
int gg_cox_check_groups(const int *grp, size_t n, int nt, const int *gstr, gg_status *st);

/* cox.ph()'s ll() over a model session's X (backend.h: ops->cox_ll): the
 * rows as gg_cox_rows' without X and eta, which the backend
 * makes from coef (p) and off (n, or NULL); level, d1b, M, d2b and W as
 * gg_cox_ll()'s. */
typedef struct gg_cox_call {
    const double *coef, *off;
    const int    *grp, *event, *gstr;
    size_t        n;
    int           p, nt, level, M;
    const double *d1b, *d2b, *W;
} gg_cox_call;

/* mgcv's cox.ph() hazard() on one stratum's rows (gg_cox_rows', eta =
 * X beta + offset; event: as.integer(wt)), prior weights wt: the
 * cumulative baseline hazard h, its variance q and the Kaplan-Meier
 * hazard km (nt each), coxpp()'s a vectors (p x nt) and, where Rs is not
 * NULL, the residual matrices Rs and Rc (n x p), their rows at order[i] - 1
 * where order (1-based, n) is given.  Rs's rows of zero weight are left
 * for the caller to mark missing.  Columns spread over nthreads. */
typedef struct gg_cox_hazard_out {
    double *h, *q, *km;   /* nt */
    double *a;            /* p x nt */
    double *Rs, *Rc;      /* n x p, or NULL */
} gg_cox_hazard_out;

int gg_cox_hazard(const gg_cox_rows *r, const double *wt, const int *order, int nthreads,
                  gg_cox_hazard_out *o, gg_status *st);

#endif
