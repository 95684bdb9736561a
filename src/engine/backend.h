/* backend.h -- the contract between the fitting engine and whatever holds
 * the data: the CPU backend (host memory) or the CUDA one (device memory).
 *
 * The engine owns every p x p quantity (penalties, REML, coefficients,
 * covariances); a backend owns every n-length one: the model matrix X, the
 * response, prior weights and offset it was loaded with, and the row state
 * it derives from them (eta, the eta of the last accepted step, mu, working
 * weights w and working response z).  The engine never sees an n-length
 * array until it asks for one with fetch() at the end of a fit, so a GPU
 * backend can keep all of them resident on the device and return only p x p
 * summaries per iteration.
 *
 * Every operation returns 0 on success or -1 with *st filled (class and
 * message); after a failure the engine calls release() and stops.  An
 * implementation must not call exit/abort or print, and must free all it
 * allocated in release(), whatever state it is in.
 *
 * One IRLS iteration, as the engine drives it:
 *     xbeta(beta)            eta = X beta + offset
 *     row_state(fam, &dev)   mu, w, z from eta; returns sum of deviance residuals
 *     gram(A, b, &zwz)       A = X'WX, b = X'Wz, zwz = z'Wz
 * plus keep_eta()/halve_eta() for step halving, init_eta() for the start,
 * leverage() for the hat values and fetch() for the final vectors. */
#ifndef GAMGPU_BACKEND_H
#define GAMGPU_BACKEND_H

#include <stddef.h>

#include "family.h"
#include "family_stats.h"
#include "status.h"
#include "xplan.h"

/* The data a backend is loaded with.  All arrays are the caller's and stay
 * valid (and unchanged) until release(); a CPU backend may use them in
 * place, a GPU backend copies them to the device in load().  X comes as
 * numbers or as a recipe (xplan), never both. */
typedef struct gg_data {
    size_t        n;        /* rows */
    int           p;        /* columns of X */
    const double *X;        /* n x p, column-major, leading dimension n */
    const double *y;        /* n: response (binomial: proportion) */
    const double *yat;      /* n: a censored family's second response column
                               (attr(y, "censor"), efam_cens.h), or NULL */
    const double *pw;       /* n: prior weights (binomial: trials x weight); NULL
                               (all 1) only with pw_ones on a device */
    const double *offset;   /* n, or NULL for none */
    const gg_xplan *xplan;  /* when X is NULL: how to build X (xplan.h);
                               the backend builds it where it computes */
    double        ar_rho;   /* AR1 residual correlation (bam's rho); 0: none */
    const double *ar_start; /* n, nonzero where a new AR1 series starts
                               (bam's AR.start); NULL: one series */
    int           pw_ones;  /* every prior weight is 1 (the caller checked): a
                               GPU backend keeps no vector of them */
    int           lean_rows; /* keep the least row state a device fit needs
                               (a shards node's fREML, whose leverages are
                               the leader's): the leverages' (and X B's)
                               n-vector made at its first use; no previous
                               eta -- a halving step makes eta from the
                               halved coefficients, X b + offset, where the
                               others average the two etas (the same to
                               rounding); mu kept for an extended family
                               alone, else made from eta when fetched; no
                               outer rows (gam()'s methods) */
} gg_data;

typedef enum {
    GG_VEC_ETA = 0,         /* linear predictor, offset included */
    GG_VEC_MU,              /* fitted mean (after row_state) */
    GG_VEC_W,               /* IRLS working weights (after row_state) */
    GG_VEC_Z                /* IRLS working response, offset removed */
} gg_vec;

typedef struct gg_backend gg_backend;
/* gam()'s outer iteration's rows kept where the backend computes
 * (outer_rows.h) */
typedef struct gg_outer_ops gg_outer_ops;
/* a location-scale family's model (family_ls.h); cox.ph()'s call and
 * results (family_cox.h) */
struct gg_ls_model;
struct gg_cox_call;
struct gg_cox_out;


typedef struct gg_backend_ops {
    const char *name;       /* "cpu", "cuda", ... (recorded in fit$device) */

    /* Take the data; allocate the row state (eta, eta_old, mu, w, z). */
    int (*load)(gg_backend *self, const gg_data *data, gg_status *st);

    /* eta = linkfun(mustart(y, pw)) for every row, R's family$initialize
     * (an extended family's: efam_math.h's gg_fm_ef_mustart);
     * fails with "gamgpu_bad_start" if some row has no valid start. */
    int (*init_eta)(gg_backend *self, const gg_family *fam, gg_status *st);

    /* eta = X beta + offset (beta has p entries, host memory). */
    int (*xbeta)(gg_backend *self, const double *beta, gg_status *st);

    /* eta_old = eta (the last accepted step). */
    int (*keep_eta)(gg_backend *self, gg_status *st);

    /* eta = (eta + eta_old) / 2 (one step halving). */
    int (*halve_eta)(gg_backend *self, gg_status *st);

    /* From eta: mu, w, z for every row (family.h: gg_irls_row; an extended
     * family: efam_math.h's gg_fm_ef_row, bgam.fit's rows); *dev = sum
     * of the deviance residuals.  Fails with "gamgpu_nonfinite" if the
     * deviance is not finite. */
    int (*row_state)(gg_backend *self, const gg_family *fam, double *dev,
                     gg_status *st);

    /* A = X'WX (p x p, both triangles), b = X'Wz (p), *zwz = z'Wz, from the
     * current row state.  Host memory, overwritten.  With AR1 residuals
     * (ar_rho != 0) the rows are bam's transformed ones (ar1_math.h):
     * A = X~'X~, b = X~'z~, *zwz = z~'z~ with X~ = T W^1/2 X, z~ = T W^1/2 z. */
    int (*gram)(gg_backend *self, double *A, double *b, double *zwz,
                gg_status *st);

    /* h[i] = w[i] * x_i' M x_i for every row (M: p x p symmetric, host);
     * with M = (X'WX + S)^-1 these are the leverages.  h: n, host.  With
     * AR1 residuals, h[i] = x~_i' M x~_i of the transformed rows. */
    int (*leverage)(gg_backend *self, const double *M, double *h,
                    gg_status *st);

    /* An extended family (fam->efam): the sums mgcv's estimate.theta()
     * takes, over every row from the current mu, at the theta and log
     * scale in fam->ef (inst/include/efam_math.h: GG_FM_EF_NSUM(nth, nth +
     * scale_est) of them in its layout; derivatives up to order deriv, -1:
     * the deviance only; the sums not computed are 0).  Fails with
     * "gamgpu_nonfinite" if the deviance or ls is not finite. */
    int (*ef_sums)(gg_backend *self, const gg_family *fam, int deriv, double *s,
                   gg_status *st);

    /* Copy one n-length vector of the row state to host memory out[n]. */
    int (*fetch)(gg_backend *self, gg_vec which, double *out, gg_status *st);

    /* w and z of the row state set from host memory (n each), weights of
     * any sign: the next gram() and leverage() use them.  For gam()'s
     * outer smoothing parameter iteration (session_r.c), whose products
     * X' diag(v) X take the derivatives of the working weights. */
    int (*set_rows)(gg_backend *self, const double *w, const double *z, gg_status *st);

    /* out = X B (n x k, host, column-major) for B p x k (host); no offset,
     * and the rows as they are (AR1 residuals not applied). */
    int (*xmul)(gg_backend *self, const double *B, int k, double *out, gg_status *st);

    /* out = X' V (p x k, host) for V n x k (host, column-major); the rows
     * as they are. */
    int (*xtmul)(gg_backend *self, const double *V, int k, double *out, gg_status *st);

    /* One of family_stats.h's passes over every row, from the current
     * row state (mu), at the family fam: the sums out[0..2] as
     * gg_stats_rows() gives them.  For a backend whose rows stay where it
     * holds them (a cluster's shards), whose n-vectors are never fetched;
     * NULL for the others. */
    int (*row_sums)(gg_backend *self, const gg_family *fam, const gg_stats_par *par,
                    double out[3], gg_status *st);

    /* Free everything; safe to call more than once and after any failure. */
    void (*release)(gg_backend *self);

    /* gam()'s outer smoothing parameter iteration's rows and products in
     * the backend's own memory (outer_rows.h: gg_outer_ops; the device's
     * for a GPU backend), or NULL: the engine computes the rows on the
     * host from fetch()ed eta and mu and hands the products' weights over
     * with set_rows(), xmul() and xtmul() (the CPU backend, whose memory
     * is the host's). */
    const gg_outer_ops *outer;

    /* A location-scale family's ll() (family_ls.h: gg_ls_ll()'s meaning,
     * without the rows' l0) over the backend's X and y, m's X and y not
     * read: where the backend keeps its rows (the device's), or NULL: the
     * caller runs gg_ls_ll() on the host's X. */
    int (*ls_ll)(gg_backend *self, const struct gg_ls_model *m, int deriv, const double *d1b,
                 int M, const double *d2b, const double *Hm, double *l, double *lb,
                 double *lbb, double *d1H, double *trd2H, gg_status *st);

    /* cox.ph()'s ll() (family_cox.h: gg_cox_ll()'s meaning) over the
     * backend's X, eta made from c's coefficients: where the backend keeps
     * X (the device's), or NULL: the caller runs gg_cox_ll() on the host's. */
    int (*cox_ll)(gg_backend *self, const struct gg_cox_call *c, struct gg_cox_out *o,
                  gg_status *st);

    /* The backend's X in host memory (n x p, column-major) where it built
     * X there from its recipe, else NULL (or no such op): the host ll()s
     * above (ls_ll, cox_ll NULL) take it where the session holds no X of
     * its own -- a device session moved to the CPU. */
    const double *(*host_x)(gg_backend *self);
} gg_backend_ops;

struct gg_backend {
    const gg_backend_ops *ops;
    void   *impl;           /* the backend's private state */
    size_t  n;              /* set by load() */
    int     p;
    /* work counters, for telemetry and tests */
    long    n_gram, n_xbeta, n_row_state, n_halve;
    /* where the time went (seconds, host clock): copies of the data and
     * results between host and device, and the row-wise work itself */
    double  t_transfer, t_rows;
    /* building X on the device from its recipe (within load()) */
    double  t_build;
    /* where X lives: "host", "device (resident)", "device (streamed ...)" */
    char    placement[160];
};

/* The device backend (cuda_backend.c; on a CPU-only build nocuda_runtime.c,
 * which fails with class gamgpu_device_unavailable): X, the response and
 * the row state resident in device `ordinal`'s memory. */
int gg_backend_cuda_init(gg_backend *be, int ordinal, gg_status *st);

/* X (n x p, column-major) built from its recipe on device `ordinal` and
 * copied to out (cuda_backend.c; a CPU-only build fails with class
 * gamgpu_device_unavailable). */
int gg_cuda_xplan_build(int ordinal, const gg_xplan *xp, double *out, gg_status *st);

/* gg_basis_stats() (setup_stats.h) of that X, built and reduced on device
 * `ordinal`: scale and mean (p each), the largest absolute scaled row sum
 * and its row (0-based).  Sums in another order than the host's: equal to
 * rounding.  A CPU-only build fails as above. */
int gg_cuda_xplan_stats(int ordinal, const gg_xplan *xp, int rms_scale, double *scale,
                        double *mean, double *rowmax, size_t *imax, gg_status *st);

/* The CPU backend: BLAS on row chunks of `chunk_rows` rows (0 = default),
 * extra memory O(chunk_rows * p) besides the 5 n-vectors of row state. */
int gg_backend_cpu_init(gg_backend *be, size_t chunk_rows, gg_status *st);

#endif
