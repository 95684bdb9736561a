/* engine.h -- the fitting engine's public face: penalized IRLS with
 * smoothing parameters chosen by fast REML on each working model (the
 * performance iteration of mgcv::bam(method = "fREML")).
 *
 * The engine is pure C: it talks to the data only through a backend
 * (backend.h) and to the user only through the callbacks in gg_fit_control.
 * The caller (the glue, fit_r.c) allocates every output array of
 * gg_fit_out beforehand, so the engine allocates only scratch that it frees
 * before returning, on success and on failure alike. */
#ifndef GAMGPU_ENGINE_H
#define GAMGPU_ENGINE_H

#include "backend.h"
#include "family.h"
#include "status.h"

/* Quadratic penalties, as mgcv's G$S, G$off, G$L, G$lsp0: penalty k is
 * exp(rho_full[k]) * S[k] on coefficients off[k] .. off[k]+dim[k]-1, with
 * rho_full = L rho + lsp0 and rho the nsp free log smoothing parameters. */
typedef struct gg_penalties {
    int                  m;      /* number of penalty matrices */
    const int           *off;    /* m: 0-based first coefficient */
    const int           *dim;    /* m: side of S[k] */
    const double *const *S;      /* m: column-major dim x dim, symmetric PSD */
    int                  nsp;    /* free log smoothing parameters */
    const double        *L;      /* m x nsp column-major; NULL = identity */
    const double        *lsp0;   /* m; NULL = zeros */
} gg_penalties;

typedef struct gg_fit_control {
    int    maxit;          /* IRLS iterations (mgcv: 200) */
    double epsilon;        /* IRLS deviance tolerance (mgcv: 1e-7) */
    int    newton_maxit;   /* REML Newton iterations per working model (200) */
    double newton_tol;     /* REML convergence tolerance (sqrt(DBL_EPSILON)) */
    int    trace;          /* call trace() once per iteration */
    int    nthreads;       /* host threads for the REML p x p products */
    /* trace line: iteration, REML score, deviance, total EDF, seconds */
    void (*trace_fn)(void *ctx, int iter, double reml, double dev, double edf,
                     double seconds);
    /* called once, when the iterations are done and before post-processing,
     * with the backend, the family (its final theta) and the final scale
     * estimate: the caller may fetch the
     * final vectors and work on them while the engine post-processes.
     * Nonzero (with *st filled) stops the fit.  May be NULL. */
    int  (*iterations_done)(void *ctx, gg_backend *be, const gg_family *fam, double sig2,
                            gg_status *st);
    void  *ctx;
} gg_fit_control;

typedef struct gg_fit_spec {
    gg_family family;
    double    nobs;        /* number of observations (rows of the model frame) */
    double    nobs_scale;  /* rows of the scale estimate rss / (nobs_scale -
                              sum(edf)) when it is estimated; 0: nobs (gam()'s
                              REML counts rows of positive weight in nobs,
                              every row here) */
    double    scale;       /* > 0: known scale; <= 0: estimate it */
    double    gamma;       /* REML gamma (1) */
    int       additive;    /* gaussian identity: one weighted least squares pass */
    double    yvar;        /* var(y), for the initial log scale */
    int       n_fixed_sp;  /* 1 when every smoothing parameter is fixed */
    /* >= 0: the penalty null space dimension Mp of the REML score, as bam()
     * counts it after dropping unidentifiable columns (R/rank_deficient.R);
     * -1: p - rank(S).  With an estimated scale it moves the optimum. */
    int       Mp;
    int       ml;          /* 1: the marginal likelihood (method "ML") instead of REML */
    /* NULL, or where the first REML optimization starts (gam()'s in.out):
     * nth values, the free log smoothing parameters then, when the scale is
     * estimated, its log; later working models start from mgcv's initial
     * smoothing parameters as always */
    const double *theta_start;
    /* NULL, or p coefficients the penalized IRLS starts from (eta = X
     * beta_start + offset in place of the family's starting mu): gam()'s
     * outer iteration's optimum, where the engine fits once more */
    const double *beta_start;
    /* an extended family (family.efam) whose theta is free (n.theta > 0):
     * estimate it between iterations, as bgam.fit's estimate.theta(), from
     * family.ef.th; with family.ef.scale_est (tw()) its scale too, and
     * `scale` (known to the REML fit) is where it starts */
    int           theta_estimated;
    /* which release's estimate.theta() (engine_pirls.c): mgcv 1.8-41's or
     * 1.9-x's, as R finds mgcv's own behaving (R/families.R) */
    int           theta_rule;
} gg_fit_spec;

enum { GG_THETA_RULE_1_8 = 0, GG_THETA_RULE_1_9 = 1 };

/* Outputs; every pointer is caller-allocated with the size shown
 * (p = columns, m = penalties, nsp = free smoothing parameters,
 * nth = nsp + (scale estimated), n = rows).  hat may be NULL. */
typedef struct gg_fit_out {
    double *coef;          /* p */
    double *Vp, *Ve, *Vc;  /* p x p */
    double *edf, *edf1, *edf2;  /* p */
    double *R;             /* p x p, R'R = X'WX at the final weights */
    double *f;             /* p: R'f = X'Wz there, zeros past the rank (bam's
                            * qrx$f, for the REML score of a rank-deficient
                            * fit in bam's convention: R's reml_bam_convention) */
    double *db_drho;       /* p x nsp */
    double *rho;           /* nth: free log sp, then log scale if estimated */
    double *rho_full;      /* m */
    double *grad;          /* nth */
    double *hess;          /* nth x nth */
    double *V_sp;          /* nsp x nsp */
    double *hat;           /* n or NULL */
    /* scalars */
    double reml;           /* REML score of the final working model */
    double sig2;           /* REML scale estimate (or the known scale) */
    double scale_vp;       /* scale used for Vp: rss / (nobs - sum(edf)) or known */
    double deviance;       /* sum of deviance residuals at the final eta */
    double rss;            /* working residual sum of squares */
    double rss_extra;      /* z'Wz - |f|^2 at the final weights (bam's rss.extra) */
    int    iter;           /* IRLS iterations */
    int    converged;      /* IRLS converged */
    int    newton_iter;    /* Newton iterations of the last REML fit */
    int    newton_status;  /* 0 full convergence, 1 step failed, 2 iteration limit */
    int    rank;           /* numerical rank of X'WX + S */
    int    Mp;             /* penalty null space dimension */
    int    reml_threads;   /* threads of the REML p x p products (1: no pool) */
    double theta;          /* the family's theta at the end (estimated for nb()) */
    gg_fm_efpar ef;        /* an extended family's theta and log scale at the end */
    int    theta_failed;   /* theta estimation's step failed (mgcv warns) */
    double t_iterations;   /* seconds in the IRLS loop */
    double t_postproc;     /* seconds in post-processing */
} gg_fit_out;

/* Runs the fit on a loaded backend.  0 = OK; -1 with *st filled. */
int gg_engine_fit(gg_backend *be, const gg_penalties *pen, const gg_fit_spec *spec,
                  const gg_fit_control *ctl, gg_fit_out *out, gg_status *st);

/* Number of free smoothing parameters + 1 if the scale is estimated. */
int gg_engine_ntheta(const gg_penalties *pen, const gg_fit_spec *spec);

#endif
