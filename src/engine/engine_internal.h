/* engine_internal.h -- declarations shared by the engine_*.c files only
 * (dense helpers, penalty blocks, the REML working-model criterion, the
 * post-processing); the public API is engine.h. */
#ifndef GAMGPU_ENGINE_INTERNAL_H
#define GAMGPU_ENGINE_INTERNAL_H

#include "engine.h"

/* ---- engine_linalg.c ---------------------------------------------------- */

double gg_now(void);                      /* monotonic-ish seconds */

/* Eigen-decomposition of a symmetric n x n matrix (column-major, not
 * modified): values in decreasing order, vectors as columns (may be NULL). */
int gg_eigen_sym(int n, const double *A, double *values, double *vectors,
                 gg_status *st);

/* Pivoted Cholesky of a symmetric positive semi-definite matrix after
 * Jacobi scaling (H -> D^-1 H D^-1, D = sqrt(diag H)), as mgcv's
 * Sl.fitChol: robust to badly scaled penalties; rank-deficient directions
 * are dropped (their solution entries are 0). */
typedef struct gg_pchol {
    int     n, rank;
    double *R;      /* n x n; upper triangle of the first rank rows used */
    int    *piv;    /* 0-based pivot */
    double *d;      /* scaling */
    double *work;   /* 2n */
    int    *ipiv;   /* n, LAPACK 1-based pivot */
    double *Ri;     /* n x n scratch of the inverse */
    double  ldet;   /* log det over the rank (unscaled) */
} gg_pchol;

int  gg_pchol_alloc(gg_pchol *f, int n, gg_status *st);
void gg_pchol_free(gg_pchol *f);
int  gg_pchol_factor(gg_pchol *f, const double *H, gg_status *st);
void gg_pchol_solve(const gg_pchol *f, const double *b, double *x); /* x = H^+ b */
void gg_pchol_inverse(const gg_pchol *f, double *Hinv);            /* n x n */
/* Columns c0..c1-1 (pivoted order) of the same inverse, by triangular
 * solves, written with their mirror images into a zeroed Hinv; disjoint
 * column ranges may run on different threads (they share only f->Ri,
 * each its own columns). */
void gg_pchol_inverse_cols(const gg_pchol *f, int c0, int c1, double *Hinv);

/* ---- engine_penalty.c --------------------------------------------------- */

typedef struct gg_pblock {
    int     start, size;    /* coefficient range of the block */
    int     nterm, rank;
    int    *term;           /* penalties in the block */
    double  ldet0;          /* one term: log pseudo-determinant of S */
    double *U;              /* several: size x rank basis of the range */
    double **Sr;            /* several: U' S_k U, rank x rank each */
    double *M, *Minv, *MS;  /* scratch: rank^2, rank^2, nterm*rank^2 */
    gg_pchol ch;
} gg_pblock;

typedef struct gg_pen {
    const gg_penalties *in;
    int        p, m, nblk, total_rank;
    gg_pblock *blk;
    int       *lo, *hi;     /* per penalty: first/last nonzero row (relative) */
} gg_pen;

int  gg_pen_setup(gg_pen *pen, const gg_penalties *in, int p, gg_status *st);
void gg_pen_free(gg_pen *pen);
/* log|sum_k lam_k S_k|_+ and its derivatives with respect to log lam
 * (d1: m, d2: m x m, column-major). */
int  gg_pen_ldet(gg_pen *pen, const double *lam, double *ldet, double *d1,
                 double *d2, gg_status *st);
/* mgcv's initial.sp(): a starting value for each smoothing parameter from
 * the diagonal of X'WX and of the penalties. */
int  gg_pen_initial_sp(const gg_pen *pen, const double *A, double *sp,
                       gg_status *st);

/* ---- engine_reml.c ------------------------------------------------------ */

/* One evaluated point of the REML criterion of a working model. */
typedef struct gg_reml_pt {
    double *theta;          /* nth */
    double  V;              /* score */
    double *grad, *hess;    /* nth, nth x nth */
    double *beta, *P;       /* p, p x p = (A + S)^+ */
    double *PSkb;           /* p x m: P lam_k S_k beta (= -dbeta/drho_k) */
    double  rss, rss_bSb, phi, ldetH, ldetS;
    int     rank;
} gg_reml_pt;

typedef struct gg_reml {
    int p, m, nsp, nth, Mp;
    const gg_penalties *pin;
    gg_pen  pen;
    /* the working model */
    const double *A, *b;
    double zwz, nobs, gamma;
    double nobs_scale;      /* the post-processing's scale estimate (gg_fit_spec) */
    int    phi_fixed;
    double phi_known;
    /* scratch */
    gg_pchol ch;
    double *H, *lam, *rho_full, *Skb, *PS, *d1S, *d2S, *d1H, *d2H, *bSb1, *q;
    double *gfull, *hfull;
    size_t *PSoff, *Skboff;
    gg_reml_pt pt[2];
    /* threads for the p x p products (NULL: the caller's thread only) */
    struct gg_pool *pool;
    struct reml_job *jobs;
    /* ML instead of REML (gg_reml_ml_setup): N, p x Mp, an orthonormal
     * basis of the total penalty's null space (NULL without one: then ML's
     * log determinant is REML's); per point PN = H^-1 N and
     * the Cholesky factor of N'H^-1 N (Mp x Mp); Pml = B (B'HB)^-1 B' for
     * B an orthonormal basis of the range space */
    int     ml;
    double *N, *PN, *NPN, *Pml;
} gg_reml;

/* nthreads: threads the derivative products may use (a pool is started
 * only where it pays: p >= 128 and at least 4 threads) */
int  gg_reml_alloc(gg_reml *r, const gg_penalties *pin, int p, int phi_fixed,
                   double phi_known, double nobs, double gamma, int nthreads,
                   gg_status *st);
void gg_reml_free(gg_reml *r);
/* Switches r to the marginal likelihood (method "ML", gam.fit3's scoreType
 * "ML" for a gaussian additive model): log|B'HB| over the penalty range
 * space for log|H|, and no Mp log(2 pi phi) term.  After gg_reml_alloc. */
int  gg_reml_ml_setup(gg_reml *r, gg_status *st);
int  gg_reml_eval(gg_reml *r, const double *theta, gg_reml_pt *out, gg_status *st);
/* Newton on theta from theta0 (fast.REML.fit); returns the best point. */
int  gg_reml_newton(gg_reml *r, const double *theta0, int maxit, double tol,
                    gg_reml_pt **best, int *iter, int *status, gg_status *st);
/* rho_full = L theta[0:nsp] + lsp0 */
void gg_reml_rho_full(const gg_reml *r, const double *theta, double *rho_full);
/* least squares theta[0:nsp] from a full log sp vector (lm(rho ~ L - 1 + offset(lsp0))) */
int  gg_reml_theta_from_full(const gg_reml *r, const double *rho_full,
                             double *theta, gg_status *st);

/* ---- engine_postproc.c -------------------------------------------------- */

/* Vp, Ve, Vc, EDFs, V.sp, R, leverages (Sl.postproc), from the best REML
 * point of the last working model and X'WX at the final weights. */
int gg_postproc(gg_reml *r, const gg_reml_pt *best, const double *A_final,
                const double *b_final, double zwz_final,
                gg_backend *be, int scale_known, double scale, gg_fit_out *out,
                gg_status *st);

#endif
