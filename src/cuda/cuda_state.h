/* cuda_state.h -- the CUDA backend's state and its row-kernel launches,
 * shared by its files: cuda_load.c (load), cuda_backend.c (the backend's
 * other operations: the row-wise steps, the passes over X) and
 * cuda_xbuild.c (X built on the device from its recipe).  Compiled only
 * with CUDA. */
#ifndef GAMGPU_CUDA_STATE_H
#define GAMGPU_CUDA_STATE_H

#include "backend.h"
#include "cuda_internal.h"
#include "gpu_telemetry.h"

#include <stddef.h>

#define ROW_THREADS 256
/* the most sums a row kernel returns per block: rows_ef_sums' */
#define MAX_SUMS GG_FM_EF_MAXSUM
/* Streamed chunks aim at this many doubles of X each (256 MiB). */
#define CHUNK_TARGET_DOUBLES ((size_t) 1 << 25)
/* The raw-basis scratch of the device build holds at most this many
 * doubles (16 MiB; more only when one row's scratch needs more): small
 * beside X, so a tight memory cap still streams. */
#define RAW_TARGET_DOUBLES ((size_t) 1 << 21)
/* basis.cu's thin plate kernel keeps a row's coordinates in registers. */
#define TPRS_MAX_D 4

/* what the backend's buffers and launches are counted under */
#define GG_CUDA_ENGINE "engine"

/* A margin of a GG_XB_MARG block with its arrays on the device, and the
 * scratch columns of its raw and mapped columns (layout_margins()). */
typedef struct dev_margin {
    CUdeviceptr x, code, xk, F, tshift, Xu, UZ, power, shift, Z;
    CUdeviceptr ppk, ppc;           /* 1-d thin plate: knots, polynomials */
    int         m;                  /* thin plate: effective penalty order;
                                       gp: minus its covariance type */
    double      eta0, eta1;         /* thin plate: eta's constant, 0; gp: rho,
                                       power (basis_math.h's gg_bm_radial) */
    int         map_id;             /* its map is the identity (no drop, no Z) */
    size_t      raw_at, map_at;
} dev_margin;

/* A block of the X recipe with its arrays on the device. */
typedef struct dev_block {
    const gg_xblock *hb;
    CUdeviceptr      D, x, by, by_code, shift, Z, col_of, xk, F, tshift, Xu, UZ,
                     power, ppk, ppc;
    int              m;             /* thin plate: effective penalty order */
    double           eta0, eta1;    /* thin plate: eta's constant, 0 */
    /* margins block: its margins, whether its own map is the identity,
     * the scratch columns of the tensor product and of the row-major tmp */
    dev_margin       mg[GG_XMAX_MARGINS];
    int              map_id;
    size_t           tensor_at, tmp_at;
} dev_block;
typedef struct cuda_state {
    int          ordinal;
    gg_buflist   bufs;
    size_t       n;
    int          p;
    CUdeviceptr  X, y, yat, pw, off, eta, eta_old, mu, w, z, beta, gP, G, partial, M, h;
    gg_gram_plan plan;            /* resident plan: its slab height rules chunks */
    unsigned     row_blocks;      /* grid of the row kernels */
    double      *partial_host;    /* MAX_SUMS x row_blocks doubles, as partial */
    /* a lean session's step halving (no eta_old): the coefficients of the
     * last X beta and the kept ones, p each, on the host */
    double      *beta_eta, *beta_kept;
    int          have_beta_eta, have_beta_kept;
    CUfunction   f_init, f_xbeta, f_step, f_state, f_lev, f_ef, f_mu;
    /* a lean session's mu (none kept for a family that is not extended)
     * is made from eta at the last row state's link when fetched */
    gg_fm_link   mu_link;
    int          have_mu_link;
    /* X from a recipe: built on the device (basis.cu) */
    const gg_xplan *xplan;
    dev_block    *dblocks;
    CUdeviceptr   raw;            /* raw basis scratch: raw_rows rows of the
                                     widest block's columns (load_recipe) */
    size_t        raw_rows;
    CUfunction    f_tprs_w[3], f_tprs_n[8];    /* basis.cu's wide (JC 2..4), narrow (KC 2..16) */
    CUfunction    f_tprs_m[8];                 /* and tensor-core (NT 1..8) thin-plate kernels */
    int           tp_mma;                      /* whether launch_tprs takes the tensor-core ones */
    CUfunction    f_cr, f_tp1, f_cc, f_bspl, f_cp, f_code, f_tensor, f_map, f_dense, f_ones;
    /* streaming: X in chunks (from the host, or built on the device) */
    int          streamed;
    gg_xstream   xs;
    /* AR1 residuals (bam's rho), when ar_on */
    int          ar_on;
    gg_cuda_ar1  ar;
    /* gam()'s outer iteration's rows (cuda_outer.c), or NULL */
    gg_cuda_ext *outer;
} cuda_state;

/* The row kernels' grid over n rows: a block per ROW_THREADS rows, at
 * most eight per multiprocessor (the kernels stride over the rest). */
static inline unsigned row_blocks_for(int ordinal, size_t n)
{
    long long blocks = ((long long) n + ROW_THREADS - 1) / ROW_THREADS;
    int sm = gg_cuda_sm_count(ordinal);
    long long cap = 8LL * (sm > 0 ? sm : 80);
    return (unsigned) (blocks < cap ? blocks : cap);
}

/* Run one kernel over n rows; counts the launch. */
static inline int launch_rows(cuda_state *s, CUfunction f, void **args, CUstream stream,
                       const char *what, gg_status *st)
{
    if (gg_cu_check(gg_cu.cuLaunchKernel(f, s->row_blocks, 1, 1, ROW_THREADS, 1, 1, 0, stream,
                                         args, NULL), what, st))
        return -1;
    gg_tel_launch(GG_CUDA_ENGINE, 1);
    return 0;
}

/* The backend's load() (cuda_load.c). */
int gg_cuda_backend_load(gg_backend *be, const gg_data *d, gg_status *st);

/* cuda_xbuild.c: the recipe's arrays to the device and its scratch
 * (s->dblocks, s->raw); rows r0 .. r0+rows-1 of X into Xc (leading
 * dimension ldx), launched on stream; all of X into the resident s->X */
int gg_cuda_load_recipe(cuda_state *s, const gg_data *d, gg_status *st);
int gg_cuda_build_x(cuda_state *s, size_t r0, size_t rows, CUdeviceptr Xc, size_t ldx,
                    CUstream stream, gg_status *st);
int gg_cuda_build_x_resident(cuda_state *s, gg_status *st);
/* X alone (a recipe's plan) built resident on device `ordinal` in a state
 * of its own, then tail(s, ctx); the state and its memory released after */
typedef int (*gg_xplan_tail)(cuda_state *s, void *ctx, gg_status *st);
int gg_cuda_xplan_run(int ordinal, const gg_xplan *xp, gg_xplan_tail tail, void *ctx,
                      gg_status *st);

#endif
