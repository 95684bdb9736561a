/* cuda_backend.c -- the engine's backend (backend.h) on an NVIDIA device.
 *
 * load() puts y, prior weights, offset and the row state (eta, eta_old, mu,
 * w, z) in device memory for the whole fit, and X too when it fits.  X
 * given as a recipe (xplan.h) is built on the device by basis.cu from the
 * covariates -- once when resident, chunk by chunk on every pass when
 * streamed -- so it never crosses the bus; X given as numbers is copied.
 * The recipe's covariates, factor codes and by-variables go up once per
 * distinct host array, however many blocks share them.  With X resident
 * each IRLS iteration moves only p doubles in (beta) and (p+1)^2 plus a few
 * hundred out (the Gram matrix, deviance partial sums).  When X does not fit
 * in what the arena may use (the device, or option gamgpu.device_memory),
 * it stays on the host and every pass over it streams row chunks through
 * two pinned host buffers and two device buffers, copies on one stream
 * overlapping kernels on another (cuda_stream.c, which predict shares), or
 * builds each chunk on the device from the recipe.  Each chunk's Gram
 * product fills the device with slabs of its own (gram_chunk), so a
 * streamed fit equals the resident one to rounding.
 *
 * Every buffer comes from the device's arena and goes back in release(), on
 * every path.  With bam's AR1 residuals (rho) the Gram and leverage
 * kernels transform the rows as they read them (ar1_math.h), which needs
 * row r - 1 of every row: X resident (a streamed X is a device failure,
 * so "auto" falls back to the CPU, counted).
 * gam()'s outer iteration's rows and products are cuda_outer.c's, on the
 * row state and passes over X this file lends it (cuda_backend.h).
 * Kernels: inst/kernels/rows.cu, gram.cu and basis.cu.  Reductions are
 * fixed-order, so fits are reproducible.  Compiled only with CUDA. */
#include "backend.h"
#include "cuda_backend.h"
#include "cuda_internal.h"
#include "gpu_telemetry.h"
#include "outer_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
static const char *LABEL = "engine";

typedef struct cuda_state {
    int          ordinal;
    gg_buflist   bufs;
    size_t       n;
    int          p;
    CUdeviceptr  X, y, yat, pw, off, eta, eta_old, mu, w, z, beta, gP, G, partial, M, h;
    gg_gram_plan plan;            /* resident plan: its slab height rules chunks */
    unsigned     row_blocks;      /* grid of the row kernels */
    double      *partial_host;    /* MAX_SUMS x row_blocks doubles, as partial */
    CUfunction   f_init, f_xbeta, f_step, f_state, f_lev, f_ef;
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
    void        *outer;
} cuda_state;

static cuda_state *S(gg_backend *be) { return (cuda_state *) be->impl; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void cuda_release(gg_backend *be)
{
    cuda_state *s = S(be);
    if (s == NULL)
        return;
    gg_status ignore;
    gg_status_clear(&ignore);
    int entered = gg_cuda_enter(s->ordinal, &ignore) == 0;
    if (entered) {
        gg_xstream_close(&s->xs);
        gg_cuda_leave(s->ordinal);
    }
    gg_cuda_outer_free(s->outer);
    s->outer = NULL;
    gg_buflist_release(&s->bufs);
    free(s->partial_host);
    free(s->dblocks);
    free(s);
    be->impl = NULL;
}

/* The stream row-wise work runs on: the compute stream when streaming (so
 * it orders with the chunk copies), else the default stream. */
static CUstream work_stream(const cuda_state *s) { return s->streamed ? s->xs.s_comp : NULL; }

/* The row kernels' grid over n rows: a block per ROW_THREADS rows, at
 * most eight per multiprocessor (the kernels stride over the rest). */
static unsigned row_blocks_for(int ordinal, size_t n)
{
    long long blocks = ((long long) n + ROW_THREADS - 1) / ROW_THREADS;
    int sm = gg_cuda_sm_count(ordinal);
    long long cap = 8LL * (sm > 0 ? sm : 80);
    return (unsigned) (blocks < cap ? blocks : cap);
}

/* Run one kernel over n rows; counts the launch. */
static int launch_rows(cuda_state *s, CUfunction f, void **args, CUstream stream,
                       const char *what, gg_status *st)
{
    if (gg_cu_check(gg_cu.cuLaunchKernel(f, s->row_blocks, 1, 1, ROW_THREADS, 1, 1, 0, stream,
                                         args, NULL), what, st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

/* The thin-plate raw basis (basis.cu): columns in passes, each pass one
 * launch -- with tensor cores (s->tp_mma) up to 64 columns at a time (NT
 * = the columns in 8ths); else up to 64 by the wide kernels (JC = the
 * columns per thread in 16ths), the last 16 or fewer by a narrow kernel
 * (KC = that count, rounded up to even).  args is the kernel's argument
 * list with c0 and kc pointing at *c0 and *kc; rows the chunk's rows. */
#define TPRS_THREADS 256      /* basis.cu's TP_THREADS */
#define TPRS_WIDE_ROWS 128    /* TP_WIDE_ROWS */
#define TPRS_MMA_ROWS 128     /* TP_MMA_ROWS */
static int launch_tprs(cuda_state *s, void **args, int *c0, int *kc, int k, long long rows,
                       CUstream stream, gg_status *st)
{
    for (*c0 = 0; *c0 < k; *c0 += *kc) {
        const int left = k - *c0;
        CUfunction f;
        long long tile;
        if (s->tp_mma) {
            *kc = left < 64 ? left : 64;
            f = s->f_tprs_m[(*kc + 7) / 8 - 1];
            tile = TPRS_MMA_ROWS;
        } else if (left > 16) {
            *kc = left < 64 ? left : 64;
            f = s->f_tprs_w[(*kc + 15) / 16 - 2];
            tile = TPRS_WIDE_ROWS;
        } else {
            *kc = left;
            f = s->f_tprs_n[(*kc + 1) / 2 - 1];
            tile = (long long) TPRS_THREADS * (*kc <= 8 ? 4 : 2);
        }
        const long long tiles = (rows + tile - 1) / tile;
        const unsigned blocks = (unsigned) (tiles < 1 ? 1 : tiles < (1LL << 30) ? tiles : (1LL << 30));
        if (gg_cu_check(gg_cu.cuLaunchKernel(f, blocks, 1, 1, TPRS_THREADS, 1, 1, 0, stream,
                                             args, NULL),
                        "engine: launching the thin-plate basis", st))
            return -1;
        gg_tel_launch(LABEL, 1);
    }
    return 0;
}

/* A 1-d thin plate basis's k raw columns of rows a .. a+nr-1 from its
 * piecewise polynomials (basis.cu's basis_tp1_raw). */
static int launch_tp1(cuda_state *s, CUdeviceptr x, long long a, long long nr, double shift,
                      CUdeviceptr knots, int K, CUdeviceptr coef, int k, int D, CUdeviceptr out,
                      long long ldo, CUstream stream, gg_status *st)
{
    void *args[] = {&x, &a, &nr, &shift, &knots, &K, &coef, &k, &D, &out, &ldo};
    return launch_rows(s, s->f_tp1, args, stream, "engine: launching basis_tp1_raw", st);
}

/* Sum the per-block partials (in block order) into *out.  The synchronous
 * copy on the default stream waits for the blocking work stream too. */
/* The row kernels' block sums: partial[j * row_blocks + b] is block b's
 * part of sum j; out[j] = their sum in block order, for j < k. */
static int sum_partials(cuda_state *s, int k, double *out, gg_status *st)
{
    const size_t m = (size_t) k * s->row_blocks;
    if (gg_cuda_wait(NULL, "the row kernels on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(s->partial_host, s->partial, m * sizeof(double)),
                    "engine: running the row kernels", st))
        return -1;
    gg_tel_d2h(LABEL, (double) (m * sizeof(double)));
    for (int j = 0; j < k; j++) {
        long double t = 0;           /* as R's sum(): see backend_cpu.c's ef sums */
        for (unsigned b = 0; b < s->row_blocks; b++)
            t += s->partial_host[(size_t) j * s->row_blocks + b];
        out[j] = (double) t;
    }
    return 0;
}

/* ---- passes over X: resident, or streamed in chunks ------------------ */

/* fn sees rows r0 .. r0+rows-1 of X at Xc (leading dimension ldx). */
typedef int (*x_pass_fn)(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                         CUstream stream, void *ctx, gg_status *st);

static int build_x(cuda_state *s, size_t r0, size_t rows, CUdeviceptr Xc, size_t ldx,
                   CUstream stream, gg_status *st);

/* a pass's chunk callback, seen through gg_xstream's */
typedef struct x_pass {
    cuda_state *s;
    x_pass_fn   fn;
    void       *ctx;
} x_pass;

static int x_pass_chunk(void *arg, CUdeviceptr Xc, size_t r0, size_t rows, CUstream stream,
                        gg_status *st)
{
    x_pass *xp = arg;
    return xp->fn(xp->s, Xc, rows, r0, rows, stream, xp->ctx, st);
}

static int for_each_x_chunk(cuda_state *s, x_pass_fn fn, void *ctx, gg_status *st)
{
    if (!s->streamed)
        return fn(s, s->X, s->n, 0, s->n, NULL, ctx, st);
    gg_xstream *xs = &s->xs;
    if (s->xplan != NULL) {
        /* build each chunk on the device, in order on one stream, its two
         * buffers in turn; after queuing chunk k a polled wait for chunk
         * k - 1, so the device always has the next chunk queued and an
         * interrupt is heard within two */
        const size_t n = s->n, C = xs->chunk_rows;
        for (size_t k = 0, r0 = 0; r0 < n; k++, r0 += C) {
            const size_t rows = n - r0 < C ? n - r0 : C;
            if (build_x(s, r0, rows, xs->xbuf[k % 2], rows, xs->s_comp, st) ||
                fn(s, xs->xbuf[k % 2], rows, r0, rows, xs->s_comp, ctx, st) ||
                gg_cu_check(gg_cu.cuEventRecord(xs->comp_done[k % 2], xs->s_comp),
                            "engine: recording a chunk's end", st) ||
                (k > 0 && gg_cuda_wait_event(xs->comp_done[(k + 1) % 2],
                                             "a streamed pass over X", st))) {
                gg_cu.cuStreamSynchronize(xs->s_comp);   /* what was queued ends first */
                return -1;
            }
        }
        return gg_cuda_wait(xs->s_comp, "a streamed pass over X", st);
    }
    x_pass xp = {s, fn, ctx};
    return gg_xstream_pass(xs, x_pass_chunk, &xp, st);
}

static CUdeviceptr rows_at(CUdeviceptr base, size_t r0)
{
    return base ? base + r0 * sizeof(double) : 0;
}

/* ---- X from its recipe (xplan.h, basis.cu) --------------------------- */

#define NONE ((size_t) -1)

static int upload_bytes(CUdeviceptr *dst, gg_buflist *b, const void *src, size_t bytes,
                        gg_status *st)
{
    if (!(*dst = gg_buflist_alloc(b, (bytes + sizeof(double) - 1) / sizeof(double), LABEL, st)))
        return -1;
    if (gg_cu_check(gg_cu.cuMemcpyHtoD(*dst, src, bytes), "engine: copying the X recipe", st))
        return -1;
    gg_tel_h2d(LABEL, (double) bytes);
    return 0;
}

/* The small arrays of every block (knots, maps, constraints) travel in one
 * buffer: pack() appends one, 8-byte aligned, and notes its offset. */
typedef struct packer {
    char   *host;          /* NULL: only measuring */
    size_t  used;
} packer;

static size_t pack(packer *pk, const void *src, size_t bytes)
{
    const size_t at = pk->used;
    if (src == NULL || bytes == 0)
        return NONE;
    if (pk->host != NULL)
        memcpy(pk->host + at, src, bytes);
    pk->used += (bytes + 7) / 8 * 8;
    return at;
}

typedef struct margin_offsets {
    size_t shift, Z, xk, F, tshift, Xu, UZ, power, ppk, ppc;
} margin_offsets;

typedef struct block_offsets {
    size_t         shift, Z, col_of, xk, F, tshift, Xu, UZ, power, ppk, ppc;
    margin_offsets mg[GG_XMAX_MARGINS];
} block_offsets;

/* A thin plate basis's arrays (a tp block's or margin's, or a gp margin's
 * when gp is not NULL), with what the kernel takes precomputed: the
 * effective order and eta's constant (gp: minus its type, rho and the
 * power) and the null-space exponents (basis_tprs.c's, as the host uses
 * them). */
static int pack_tprs(packer *pk, int m, int d, int M, int nXu, int k, const double *shift,
                     const double *Xu, const double *UZ, const gg_xmargin *gp, int *m_eff,
                     double *eta0, double *eta1, size_t *o_power, size_t *o_shift,
                     size_t *o_Xu, size_t *o_UZ, gg_status *st)
{
    if (d > TPRS_MAX_D)
        return gg_fail(st, "gamgpu_device_unsupported",
                       "engine: thin plate smooths of more than %d variables are "
                       "built on the host", TPRS_MAX_D);
    const size_t np = (size_t) M * d;
    int *power = malloc(np > 0 ? np * sizeof(int) : 1);
    if (power == NULL)
        return gg_fail(st, "gamgpu_host_oom", "engine: out of host memory");
    if (gp != NULL) {
        *m_eff = -gp->gp_type;
        *eta0 = gp->gp_rho;
        *eta1 = gp->gp_kp;
        gg_gp_null_space_powers(power, M, d);
    } else {
        *m_eff = gg_tprs_order(m, d);
        *eta0 = gg_tprs_eta_constant(*m_eff, d);
        *eta1 = 0.0;
        gg_tprs_null_space_powers(power, M, *m_eff, d);
    }
    *o_power = pack(pk, power, np * sizeof(int));
    free(power);
    *o_shift = pack(pk, shift, (size_t) d * sizeof(double));
    *o_Xu = pack(pk, Xu, (size_t) nXu * d * sizeof(double));
    *o_UZ = pack(pk, UZ, (size_t) (nXu + M) * k * sizeof(double));
    return 0;
}

/* A 1-d thin plate basis's sorted knots and piecewise polynomials (basis.h's
 * gg_tp1_table), from which basis_tp1_raw builds its rows. */
static void pack_tp1(packer *pk, int K, int k, int D, const double *knots, const double *coef,
                     size_t *o_knots, size_t *o_coef)
{
    *o_knots = pack(pk, knots, (size_t) K * sizeof(double));
    *o_coef = pack(pk, coef, ((size_t) K + 1) * k * (D + 1) * sizeof(double));
}

/* The margins of a GG_XB_MARG block: each one's basis arrays and its own
 * map (sweep shift, Z).  Checks what the kernels rely on (basis_r.c has
 * checked the rest against R's objects). */
static int pack_margins(packer *pk, const gg_xblock *hb, dev_block *db, block_offsets *o,
                        gg_status *st)
{
    if (hb->nmarg < 1 || hb->nmarg > GG_XMAX_MARGINS)
        return gg_fail(st, "gamgpu_internal_error", "engine: a margins block has %d margins",
                       hb->nmarg);
    long long prod = 1;
    for (int j = 0; j < hb->nmarg; j++) {
        const gg_xmargin *g = &hb->marg[j];
        const gg_basis_map *mp = &g->map;
        margin_offsets *mo = &o->mg[j];
        if (mp->k != g->k || mp->by != NULL || mp->by_code != NULL || mp->col_of != NULL)
            return gg_fail(st, "gamgpu_internal_error",
                           "engine: a margin's map must take its k columns, without by "
                           "or deletions");
        prod *= mp->kc;
        const size_t k = (size_t) g->k, m = mp->drop >= 0 ? k - 1 : k;
        if (mp->drop >= 0)
            mo->shift = pack(pk, mp->shift, m * sizeof(double));
        mo->Z = pack(pk, mp->Z, m * (size_t) mp->kc * sizeof(double));
        switch (g->kind) {
        case GG_XM_CR:
            mo->xk = pack(pk, g->xk, k * sizeof(double));
            mo->F = pack(pk, g->F, k * k * sizeof(double));
            break;
        case GG_XM_CC:
            mo->xk = pack(pk, g->xk, (k + 1) * sizeof(double));
            mo->F = pack(pk, g->F, k * k * sizeof(double));
            break;
        case GG_XM_BSPL:
            if (g->ord < 1 || g->ord > GG_XMAX_ORD || g->nk - g->ord != g->k)
                return gg_fail(st, "gamgpu_internal_error",
                               "engine: a B-spline margin needs order 1..%d and k = nk - ord",
                               GG_XMAX_ORD);
            mo->xk = pack(pk, g->xk, (size_t) g->nk * sizeof(double));
            mo->F = pack(pk, g->F, 4 * k * sizeof(double));
            break;
        case GG_XM_CP:
            if (g->ord < 2 || g->ord > GG_XMAX_ORD || g->nk != g->k + 3 * g->ord - 2)
                return gg_fail(st, "gamgpu_internal_error",
                               "engine: a cp margin needs order 2..%d and k + 3 ord - 2 knots",
                               GG_XMAX_ORD);
            mo->xk = pack(pk, g->xk, (size_t) g->nk * sizeof(double));
            break;
        case GG_XM_TPRS:
        case GG_XM_GP:
            if (g->kind == GG_XM_TPRS && g->pp_deg > 0)       /* knots, UZ unused */
                pack_tp1(pk, g->nXu, g->k, g->pp_deg, g->pp_knots, g->pp_coef, &mo->ppk,
                         &mo->ppc);
            else if (pack_tprs(pk, g->m, g->d, g->M, g->nXu, g->k, g->shift, g->Xu, g->UZ,
                               g->kind == GG_XM_GP ? g : NULL, &db->mg[j].m, &db->mg[j].eta0,
                               &db->mg[j].eta1, &mo->power, &mo->tshift, &mo->Xu, &mo->UZ, st))
                return -1;
            break;
        case GG_XM_LINEAR:
            if (g->k != 1)
                return gg_fail(st, "gamgpu_internal_error", "engine: a linear margin has k = 1");
            break;
        case GG_XM_CODE:
            break;
        default:
            return gg_fail(st, "gamgpu_internal_error", "engine: unknown margin kind %d",
                           (int) g->kind);
        }
    }
    if (prod != hb->map.k)
        return gg_fail(st, "gamgpu_internal_error",
                       "engine: a margins block's k is not its margins' product");
    return 0;
}

/* The n prior weights as ones, written on the device (gg_data.pw_ones):
 * no copy over the bus. */
static int fill_ones(cuda_state *s, CUdeviceptr dst, gg_status *st)
{
    if (s->f_ones == NULL &&
        gg_cuda_function(s->ordinal, "basis", "basis_ones", &s->f_ones, st))
        return -1;
    long long rows = (long long) s->n, ld = rows;
    int one = 1;
    void *args[] = {&rows, &one, &dst, &ld};
    if (launch_rows(s, s->f_ones, args, NULL, "engine: launching basis_ones", st))
        return -1;
    return gg_cuda_wait(NULL, "the prior weights' fill on the device", st);
}

/* Pack (or measure, with pk->host NULL) the small arrays of block hb. */
static int pack_block(packer *pk, const gg_xblock *hb, dev_block *db, block_offsets *o,
                      gg_status *st)
{
    memset(o, 0xff, sizeof *o);               /* every offset NONE */
    if (hb->kind == GG_XB_DENSE || hb->kind == GG_XB_ONES)
        return 0;
    const gg_basis_map *mp = &hb->map;
    const int m = mp->drop >= 0 ? mp->k - 1 : mp->k;
    if (mp->drop >= 0) o->shift = pack(pk, mp->shift, (size_t) m * sizeof(double));
    o->Z = pack(pk, mp->Z, (size_t) m * mp->kc * sizeof(double));
    o->col_of = pack(pk, mp->col_of, (size_t) mp->kc * sizeof(int));
    switch (hb->kind) {
    case GG_XB_CR:
        o->xk = pack(pk, hb->xk, (size_t) mp->k * sizeof(double));
        o->F = pack(pk, hb->F, (size_t) mp->k * mp->k * sizeof(double));
        return 0;
    case GG_XB_TPRS:
        if (hb->pp_deg > 0) {                                /* knots, UZ unused */
            pack_tp1(pk, hb->nXu, mp->k, hb->pp_deg, hb->pp_knots, hb->pp_coef, &o->ppk,
                     &o->ppc);
            return 0;
        }
        return pack_tprs(pk, hb->m, hb->d, hb->M, hb->nXu, mp->k, hb->shift, hb->Xu, hb->UZ,
                         NULL, &db->m, &db->eta0, &db->eta1, &o->power, &o->tshift, &o->Xu,
                         &o->UZ, st);
    case GG_XB_MARG:
        return pack_margins(pk, hb, db, o, st);
    default:
        return gg_fail(st, "gamgpu_internal_error", "engine: unknown block kind %d",
                       (int) hb->kind);
    }
}

static CUdeviceptr at(CUdeviceptr base, size_t off)
{
    return off == NONE ? 0 : base + off;
}

/* Where a margins block's steps write in the raw scratch, in columns of
 * the sub-chunk (each as many doubles as its rows): per margin its raw
 * columns, then its mapped columns unless its map is the identity; the
 * tensor product when there are several margins; and tmp, the row-major
 * rows of the widest cc, cp or B-spline margin (basis_cc_raw).  When the
 * block's own map is the identity (no constraint, by or deletions: a
 * "re" smooth), its last step writes X instead, with no scratch.  Returns
 * the columns the block needs. */
static size_t layout_margins(const gg_xblock *hb, dev_block *db)
{
    const int nm = hb->nmarg;
    const gg_basis_map *bm = &hb->map;
    db->map_id = bm->drop < 0 && bm->Z == NULL && bm->by == NULL && bm->by_code == NULL &&
                 bm->col_of == NULL && bm->kc == bm->k;
    size_t cols = 0, tmpk = 0;
    for (int j = 0; j < nm; j++) {
        const gg_xmargin *g = &hb->marg[j];
        dev_margin *dm = &db->mg[j];
        const int last = nm == 1 && db->map_id;     /* this margin's output is X */
        dm->map_id = g->map.drop < 0 && g->map.Z == NULL;
        dm->raw_at = dm->map_at = NONE;
        if (!(last && dm->map_id)) {
            dm->raw_at = cols;
            cols += (size_t) g->k;
        }
        if (!dm->map_id && !last) {
            dm->map_at = cols;
            cols += (size_t) g->map.kc;
        }
        if ((g->kind == GG_XM_CC || g->kind == GG_XM_BSPL || g->kind == GG_XM_CP) &&
            (size_t) g->k > tmpk)
            tmpk = (size_t) g->k;
    }
    db->tensor_at = db->tmp_at = NONE;
    if (nm > 1 && !db->map_id) {
        db->tensor_at = cols;
        cols += (size_t) bm->k;
    }
    if (tmpk > 0) {
        db->tmp_at = cols;
        cols += tmpk;
    }
    return cols;
}

/* The recipe's n-row arrays (covariates, factor codes, by-variables,
 * dense columns) go to the device once per distinct host array: blocks
 * share them (s(x, by = fac) has a block per level, all with the same x
 * and the same codes), and a routine's buffer list is short
 * (GG_BUFLIST_MAX).  Host arrays that overlap share the buffer of their
 * union, each block's pointer landing at its offset in it. */
typedef struct nrow_array {
    const void  *host;
    size_t       bytes;
    CUdeviceptr *dev;        /* where the block keeps its device address */
} nrow_array;

#define MAX_BLOCK_ARRAYS (3 + GG_XMAX_MARGINS)

/* Block hb's n-row arrays and where each one's device address goes. */
static int block_arrays(const gg_xblock *hb, dev_block *db, size_t n, nrow_array *a)
{
    int k = 0;
    if (hb->kind == GG_XB_DENSE) {
        a[k++] = (nrow_array) {hb->D, n * (size_t) hb->ncol * sizeof(double), &db->D};
        return k;
    }
    if (hb->kind == GG_XB_ONES)
        return 0;
    if (hb->map.by != NULL)
        a[k++] = (nrow_array) {hb->map.by, n * sizeof(double), &db->by};
    if (hb->map.by_code != NULL)
        a[k++] = (nrow_array) {hb->map.by_code, n * sizeof(int), &db->by_code};
    if (hb->kind != GG_XB_MARG) {
        a[k++] = (nrow_array) {hb->x, n * (size_t) hb->d * sizeof(double), &db->x};
        return k;
    }
    for (int j = 0; j < hb->nmarg; j++) {
        const gg_xmargin *g = &hb->marg[j];
        if (g->kind == GG_XM_CODE)
            a[k++] = (nrow_array) {g->code, n * sizeof(int), &db->mg[j].code};
        else
            a[k++] = (nrow_array) {g->x, n * (size_t) g->d * sizeof(double), &db->mg[j].x};
    }
    return k;
}

typedef struct host_range {
    uintptr_t   lo, hi;      /* host bytes [lo, hi) */
    CUdeviceptr dev;         /* their copy */
} host_range;

static int range_cmp(const void *a, const void *b)
{
    const uintptr_t x = ((const host_range *) a)->lo, y = ((const host_range *) b)->lo;
    return x < y ? -1 : x > y;
}

/* Buffers taken after the recipe's arrays: load()'s raw scratch, and X or
 * streaming's two chunk buffers; xtmul()'s three while it runs. */
#define BUFS_AFTER_ARRAYS 6

static int upload_arrays(cuda_state *s, const gg_xplan *xp, gg_status *st)
{
    nrow_array a[MAX_BLOCK_ARRAYS];
    size_t cap = 1;
    for (int b = 0; b < xp->nblocks; b++)
        cap += (size_t) block_arrays(&xp->blocks[b], &s->dblocks[b], xp->n, a);
    host_range *r = malloc(cap * sizeof *r);
    if (r == NULL)
        return gg_fail(st, "gamgpu_host_oom", "engine: out of host memory");
    int nr = 0, rc = -1;
    for (int b = 0; b < xp->nblocks; b++) {
        const int na = block_arrays(&xp->blocks[b], &s->dblocks[b], xp->n, a);
        for (int i = 0; i < na; i++) {
            if (a[i].host == NULL) {
                gg_fail(st, "gamgpu_internal_error", "engine: block %d lacks its covariates",
                        b + 1);
                goto done;
            }
            r[nr++] = (host_range) {(uintptr_t) a[i].host, (uintptr_t) a[i].host + a[i].bytes, 0};
        }
    }
    qsort(r, (size_t) nr, sizeof *r, range_cmp);
    int m = 0;                               /* merge overlapping ranges */
    for (int i = 0; i < nr; i++) {
        if (m > 0 && r[i].lo < r[m - 1].hi) {
            if (r[i].hi > r[m - 1].hi)
                r[m - 1].hi = r[i].hi;
        } else {
            r[m++] = r[i];
        }
    }
    if (s->bufs.n + m + BUFS_AFTER_ARRAYS > GG_BUFLIST_MAX) {
        gg_fail(st, "gamgpu_device_unsupported",
                "engine: the model matrix recipe has %d distinct covariate, factor and "
                "by-variable arrays; the device build takes at most %d", m,
                GG_BUFLIST_MAX - s->bufs.n - BUFS_AFTER_ARRAYS);
        goto done;
    }
    for (int i = 0; i < m; i++)
        if (upload_bytes(&r[i].dev, &s->bufs, (const void *) r[i].lo, r[i].hi - r[i].lo, st))
            goto done;
    for (int b = 0; b < xp->nblocks; b++) {
        const int na = block_arrays(&xp->blocks[b], &s->dblocks[b], xp->n, a);
        for (int i = 0; i < na; i++) {
            const uintptr_t p = (uintptr_t) a[i].host;
            int lo = 0, hi = m - 1;          /* the last range starting at or below p */
            while (lo < hi) {
                const int mid = (lo + hi + 1) / 2;
                if (r[mid].lo <= p)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            *a[i].dev = r[lo].dev + (CUdeviceptr) (p - r[lo].lo);
        }
    }
    rc = 0;
done:
    free(r);
    return rc;
}

/* The recipe to the device: the n-row arrays (covariates, codes,
 * by-variables, dense columns: O(n x covariates), not O(n x p)) each in a
 * buffer, the small ones packed in one; then the kernels and the raw-basis
 * scratch, as wide as the widest block needs. */
static int load_recipe(cuda_state *s, const gg_data *d, gg_status *st)
{
    const gg_xplan *xp = d->xplan;
    if (xp == NULL || xp->n != d->n || xp->p != d->p)
        return gg_fail(st, "gamgpu_internal_error", "engine: no model matrix");
    if (gg_cuda_function(s->ordinal, "basis", "basis_cr_raw", &s->f_cr, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_tp1_raw", &s->f_tp1, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_cc_raw", &s->f_cc, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_bspl_raw", &s->f_bspl, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_cp_raw", &s->f_cp, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_code_raw", &s->f_code, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_tensor", &s->f_tensor, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_map", &s->f_map, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_dense", &s->f_dense, st) ||
        gg_cuda_function(s->ordinal, "basis", "basis_ones", &s->f_ones, st))
        return -1;
    for (int j = 0; j < 3; j++) {
        char name[32];
        snprintf(name, sizeof name, "basis_tprs_w%d", j + 2);
        if (gg_cuda_function(s->ordinal, "basis", name, &s->f_tprs_w[j], st))
            return -1;
    }
    for (int j = 0; j < 8; j++) {
        char name[32];
        snprintf(name, sizeof name, "basis_tprs_n%d", 2 * (j + 1));
        if (gg_cuda_function(s->ordinal, "basis", name, &s->f_tprs_n[j], st))
            return -1;
        snprintf(name, sizeof name, "basis_tprs_m%d", j + 1);
        if (gg_cuda_function(s->ordinal, "basis", name, &s->f_tprs_m[j], st))
            return -1;
    }
    /* fp64 tensor cores: compute capability 8.0 on (compiled for compute_80
     * or later), unless the plan asks for the host's sums bit for bit */
    const char *arch = gg_cuda_arch(s->ordinal);
    s->tp_mma = xp->tensor_cores && arch != NULL && strncmp(arch, "compute_", 8) == 0 &&
                atoi(arch + 8) >= 80;
    s->xplan = xp;
    const int nb = xp->nblocks > 0 ? xp->nblocks : 1;
    s->dblocks = calloc((size_t) nb, sizeof(dev_block));
    block_offsets *off = calloc((size_t) nb, sizeof(block_offsets));
    packer pk = {NULL, 0};
    int rc = -1;
    if (s->dblocks == NULL || off == NULL) {
        gg_fail(st, "gamgpu_host_oom", "engine: out of host memory");
        goto done;
    }
    for (int k = 0; k < xp->nblocks; k++)       /* measure (and check) */
        if (pack_block(&pk, &xp->blocks[k], &s->dblocks[k], &off[k], st))
            goto done;
    CUdeviceptr small = 0;
    if (pk.used > 0) {
        const size_t bytes = pk.used;
        pk.host = malloc(bytes);
        pk.used = 0;
        if (pk.host == NULL) {
            gg_fail(st, "gamgpu_host_oom", "engine: out of host memory");
            goto done;
        }
        for (int k = 0; k < xp->nblocks; k++)   /* pack */
            if (pack_block(&pk, &xp->blocks[k], &s->dblocks[k], &off[k], st))
                goto done;
        if (upload_bytes(&small, &s->bufs, pk.host, bytes, st))
            goto done;
    }
    size_t need = 1;                            /* scratch columns per row */
    for (int k = 0; k < xp->nblocks; k++) {
        const gg_xblock *hb = &xp->blocks[k];
        dev_block *db = &s->dblocks[k];
        const block_offsets *o = &off[k];
        db->hb = hb;
        if (hb->kind == GG_XB_DENSE || hb->kind == GG_XB_ONES)
            continue;
        db->shift = at(small, o->shift);
        db->Z = at(small, o->Z);
        db->col_of = at(small, o->col_of);
        db->xk = at(small, o->xk);
        db->F = at(small, o->F);
        db->tshift = at(small, o->tshift);
        db->Xu = at(small, o->Xu);
        db->UZ = at(small, o->UZ);
        db->power = at(small, o->power);
        db->ppk = at(small, o->ppk);
        db->ppc = at(small, o->ppc);
        size_t cols = (size_t) hb->map.k;
        if (hb->kind == GG_XB_MARG) {
            for (int j = 0; j < hb->nmarg; j++) {
                dev_margin *dm = &db->mg[j];
                const margin_offsets *mo = &o->mg[j];
                dm->shift = at(small, mo->shift);
                dm->Z = at(small, mo->Z);
                dm->xk = at(small, mo->xk);
                dm->F = at(small, mo->F);
                dm->tshift = at(small, mo->tshift);
                dm->Xu = at(small, mo->Xu);
                dm->UZ = at(small, mo->UZ);
                dm->power = at(small, mo->power);
                dm->ppk = at(small, mo->ppk);
                dm->ppc = at(small, mo->ppc);
            }
            cols = layout_margins(hb, db);
        }
        if (cols > need)
            need = cols;
    }
    if (upload_arrays(s, xp, st))
        goto done;
    const size_t n = d->n;
    s->raw_rows = RAW_TARGET_DOUBLES / need;
    if (s->raw_rows < 1)
        s->raw_rows = 1;
    if (s->raw_rows > n)
        s->raw_rows = n;
    if (!(s->raw = gg_buflist_alloc(&s->bufs, s->raw_rows * need, LABEL, st)))
        goto done;
    rc = 0;
done:
    free(pk.host);
    free(off);
    return rc;
}

/* Rows a .. a+nr-1 of the scratch's column `col` (leading dimension nr). */
static CUdeviceptr scratch(const cuda_state *s, size_t col, long long nr)
{
    return s->raw + col * (size_t) nr * sizeof(double);
}

/* basis_map from raw (leading dimension ldr) into out (ldo): a block's map
 * with its by-variable and deletions, or a margin's (by, col_of 0). */
static int launch_map(cuda_state *s, const gg_basis_map *mp, CUdeviceptr raw, long long ldr,
                      long long a, long long nr, CUdeviceptr shift, CUdeviceptr by,
                      CUdeviceptr by_code, CUdeviceptr Z, CUdeviceptr col_of, CUdeviceptr out,
                      long long ldo, CUstream stream, gg_status *st)
{
    int k = mp->k, drop = mp->drop, kc = mp->kc, level = mp->by_level;
    void *args[] = {&raw, &ldr, &k, &a, &nr, &drop, &shift, &by, &by_code, &level, &Z, &kc,
                    &col_of, &out, &ldo};
    return launch_rows(s, s->f_map, args, stream, "engine: launching basis_map", st);
}

/* Margin g's k raw columns of rows a .. a+nr-1 into out (leading dimension
 * ldo); tmp: the block's row-major scratch for cc and B-splines. */
static int margin_raw(cuda_state *s, const gg_xmargin *g, dev_margin *dm, long long a,
                      long long nr, CUdeviceptr tmp, CUdeviceptr out, long long ldo,
                      CUstream stream, gg_status *st)
{
    long long n = (long long) s->n;
    int k = g->k;
    switch (g->kind) {
    case GG_XM_CR: {
        void *args[] = {&dm->x, &a, &nr, &dm->xk, &k, &dm->F, &out, &ldo};
        return launch_rows(s, s->f_cr, args, stream, "engine: launching basis_cr_raw", st);
    }
    case GG_XM_TPRS:
        if (g->pp_deg > 0)
            return launch_tp1(s, dm->x, a, nr, g->shift[0], dm->ppk, g->nXu, dm->ppc, k,
                              g->pp_deg, out, ldo, stream, st);
        /* fall through */
    case GG_XM_GP: {
        int d = g->d, M = g->M, nXu = g->nXu;
        int c0 = 0, kc = 0;
        void *args[] = {&dm->x, &n, &d, &a, &nr, &dm->tshift, &dm->m, &dm->eta0, &dm->eta1,
                        &dm->Xu, &nXu, &dm->power, &M, &dm->UZ, &c0, &kc, &out, &ldo};
        return launch_tprs(s, args, &c0, &kc, k, nr, stream, st);
    }
    case GG_XM_CC: {
        void *args[] = {&dm->x, &a, &nr, &dm->xk, &k, &dm->F, &tmp, &out, &ldo};
        return launch_rows(s, s->f_cc, args, stream, "engine: launching basis_cc_raw", st);
    }
    case GG_XM_BSPL: {
        int nk = g->nk, ord = g->ord;
        double lo = g->lo, hi = g->hi;
        void *args[] = {&dm->x, &a, &nr, &dm->xk, &nk, &ord, &lo, &hi, &dm->F, &tmp, &out,
                        &ldo};
        return launch_rows(s, s->f_bspl, args, stream, "engine: launching basis_bspl_raw", st);
    }
    case GG_XM_CP: {
        int nk = g->nk, ord = g->ord;
        double lo = g->lo, hi = g->hi;
        void *args[] = {&dm->x, &a, &nr, &dm->xk, &nk, &ord, &lo, &hi, &tmp, &out, &ldo};
        return launch_rows(s, s->f_cp, args, stream, "engine: launching basis_cp_raw", st);
    }
    case GG_XM_CODE: {
        void *args[] = {&dm->code, &a, &nr, &k, &out, &ldo};
        return launch_rows(s, s->f_code, args, stream, "engine: launching basis_code_raw", st);
    }
    case GG_XM_LINEAR: {
        int one = 1;
        void *args[] = {&dm->x, &n, &one, &a, &nr, &out, &ldo};
        return launch_rows(s, s->f_dense, args, stream, "engine: launching basis_dense", st);
    }
    }
    return gg_fail(st, "gamgpu_internal_error", "engine: unknown margin kind %d", (int) g->kind);
}

/* A margins block's rows a .. a+nr-1 into dst (X's block, leading
 * dimension ld), through the scratch as layout_margins() laid it out:
 * per margin its raw kernel and map, the tensor product, the block's map. */
static int build_margins(cuda_state *s, dev_block *db, long long a, long long nr,
                         CUdeviceptr dst, long long ld, CUstream stream, gg_status *st)
{
    const gg_xblock *hb = db->hb;
    const int nm = hb->nmarg;
    long long ldr = nr;
    const CUdeviceptr tmp = db->tmp_at == NONE ? 0 : scratch(s, db->tmp_at, nr);
    CUdeviceptr u[GG_XMAX_MARGINS] = {0};
    int kp[GG_XMAX_MARGINS] = {0};
    for (int j = 0; j < nm; j++) {
        const gg_xmargin *g = &hb->marg[j];
        dev_margin *dm = &db->mg[j];
        const int last = nm == 1 && db->map_id;     /* this margin's output is X */
        if (dm->map_id) {
            u[j] = last ? dst : scratch(s, dm->raw_at, nr);
            if (margin_raw(s, g, dm, a, nr, tmp, u[j], last ? ld : ldr, stream, st))
                return -1;
        } else {
            const CUdeviceptr raw = scratch(s, dm->raw_at, nr);
            u[j] = last ? dst : scratch(s, dm->map_at, nr);
            if (margin_raw(s, g, dm, a, nr, tmp, raw, ldr, stream, st) ||
                launch_map(s, &g->map, raw, ldr, a, nr, dm->shift, 0, 0, dm->Z, 0, u[j],
                           last ? ld : ldr, stream, st))
                return -1;
        }
        kp[j] = g->map.kc;
    }
    CUdeviceptr braw = u[0];                        /* the block's raw columns */
    if (nm > 1) {
        braw = db->map_id ? dst : scratch(s, db->tensor_at, nr);
        long long ldo = db->map_id ? ld : ldr;
        int nmi = nm;
        void *args[] = {&u[0], &u[1], &u[2], &u[3], &kp[0], &kp[1], &kp[2], &kp[3], &nmi,
                        &ldr, &nr, &braw, &ldo};
        if (launch_rows(s, s->f_tensor, args, stream, "engine: launching basis_tensor", st))
            return -1;
    }
    if (db->map_id)
        return 0;
    return launch_map(s, &hb->map, braw, ldr, a, nr, db->shift, db->by, db->by_code, db->Z,
                      db->col_of, dst, ld, stream, st);
}

static int build_x(cuda_state *s, size_t r0, size_t rows, CUdeviceptr Xc, size_t ldx,
                   CUstream stream, gg_status *st);

/* All of X into the resident s->X, in pieces of about 2^20 rows (whole
 * sub-chunks of the scratch, so the same launches as one call) with a
 * polled wait after each: at 1e8 rows the build takes seconds, and an
 * interrupt is heard within a piece. */
static int build_x_resident(cuda_state *s, gg_status *st)
{
    const size_t n = s->n, piece = s->raw_rows * (s->raw_rows < (1u << 20) ?
                                                  (1u << 20) / s->raw_rows : 1);
    for (size_t r0 = 0; r0 < n; r0 += piece) {
        const size_t rows = n - r0 < piece ? n - r0 : piece;
        if (build_x(s, r0, rows, s->X + r0 * sizeof(double), n, NULL, st) ||
            gg_cuda_wait(NULL, "the model matrix's build on the device", st))
            return -1;
    }
    return 0;
}

/* Rows r0 .. r0+rows-1 of X into Xc (leading dimension ldx), launched on
 * stream (asynchronous); in sub-chunks of raw_rows through the scratch. */
static int build_x(cuda_state *s, size_t r0, size_t rows, CUdeviceptr Xc, size_t ldx,
                   CUstream stream, gg_status *st)
{
    long long n = (long long) s->n, ld = (long long) ldx;
    for (size_t sub = 0; sub < rows; sub += s->raw_rows) {
        long long a = (long long) (r0 + sub);
        long long nr = (long long) (rows - sub < s->raw_rows ? rows - sub : s->raw_rows);
        for (int k = 0; k < s->xplan->nblocks; k++) {
            dev_block *db = &s->dblocks[k];
            const gg_xblock *hb = db->hb;
            CUdeviceptr dst = Xc + ((size_t) hb->col0 * ldx + sub) * sizeof(double);
            if (hb->kind == GG_XB_DENSE) {
                int nc = hb->ncol;
                void *args[] = {&db->D, &n, &nc, &a, &nr, &dst, &ld};
                if (launch_rows(s, s->f_dense, args, stream, "engine: launching basis_dense", st))
                    return -1;
                continue;
            }
            if (hb->kind == GG_XB_ONES) {
                int nc = hb->ncol;
                void *args[] = {&nr, &nc, &dst, &ld};
                if (launch_rows(s, s->f_ones, args, stream, "engine: launching basis_ones", st))
                    return -1;
                continue;
            }
            if (hb->kind == GG_XB_MARG) {
                if (build_margins(s, db, a, nr, dst, ld, stream, st))
                    return -1;
                continue;
            }
            int k_raw = hb->map.k;
            long long ldr = nr;
            if (hb->kind == GG_XB_CR) {
                void *args[] = {&db->x, &a, &nr, &db->xk, &k_raw, &db->F, &s->raw, &ldr};
                if (launch_rows(s, s->f_cr, args, stream, "engine: launching basis_cr_raw", st))
                    return -1;
            } else if (hb->pp_deg > 0) {
                if (launch_tp1(s, db->x, a, nr, hb->shift[0], db->ppk, hb->nXu, db->ppc, k_raw,
                               hb->pp_deg, s->raw, ldr, stream, st))
                    return -1;
            } else {
                int dd = hb->d, M = hb->M, nXu = hb->nXu;
                int c0 = 0, kc = 0;
                void *args[] = {&db->x, &n, &dd, &a, &nr, &db->tshift, &db->m, &db->eta0,
                                &db->eta1, &db->Xu, &nXu, &db->power, &M, &db->UZ, &c0, &kc,
                                &s->raw, &ldr};
                if (launch_tprs(s, args, &c0, &kc, k_raw, nr, stream, st))
                    return -1;
            }
            if (launch_map(s, &hb->map, s->raw, ldr, a, nr, db->shift, db->by, db->by_code,
                           db->Z, db->col_of, dst, ld, stream, st))
                return -1;
        }
    }
    return 0;
}

/* ---- load ------------------------------------------------------------ */

/* Set up streaming: chunks of about CHUNK_TARGET_DOUBLES (a multiple of
 * 1024 rows), two device and two pinned buffers, two streams.  Halves the
 * chunk until the buffers fit. */
static int setup_streaming(cuda_state *s, const gg_data *d, gg_status *st)
{
    const size_t unit = 1024;
    size_t units = CHUNK_TARGET_DOUBLES / ((size_t) d->p * unit);
    if (units < 1)
        units = 1;
    const size_t max_units = (d->n + unit - 1) / unit;
    if (units > max_units)
        units = max_units;
    size_t C = 0;
    CUdeviceptr a = 0, b = 0;
    for (;;) {
        gg_status try;
        gg_status_clear(&try);
        C = units * unit;
        int mark = s->bufs.n;
        a = gg_buflist_alloc(&s->bufs, C * (size_t) d->p, LABEL, &try);
        b = a ? gg_buflist_alloc(&s->bufs, C * (size_t) d->p, LABEL, &try) : 0;
        if (b)
            break;
        gg_buflist_truncate(&s->bufs, mark);   /* give back what this attempt took */
        if (units == 1 || !gg_device_failure(&try)) {
            *st = try;
            return -1;
        }
        units /= 2;
    }
    /* a recipe (d->X NULL): chunks are built on the device */
    s->streamed = 1;
    return gg_xstream_open(&s->xs, LABEL, d->X, d->n, d->p, C, a, b, st);
}

static int cuda_load(gg_backend *be, const gg_data *d, gg_status *st)
{
    cuda_state *s = S(be);
    if (d->n == 0 || d->p <= 0)
        return gg_fail(st, "gamgpu_bad_input", "no data to fit (n = %lu, p = %d)",
                       (unsigned long) d->n, d->p);
    if (d->ar_rho != 0 && !(fabs(d->ar_rho) < 1))
        return gg_fail(st, "gamgpu_bad_input", "the AR1 parameter rho must lie in (-1, 1)");
    s->n = d->n;
    s->p = d->p;
    be->n = d->n;
    be->p = d->p;
    const size_t n = d->n;
    const int p = d->p;
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = -1;
    if (gg_cuda_function(s->ordinal, "rows", "rows_init_eta", &s->f_init, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_xbeta", &s->f_xbeta, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_eta_step", &s->f_step, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_state", &s->f_state, st) ||
        gg_cuda_function(s->ordinal, "gram", "gram_leverage", &s->f_lev, st) ||
        gg_cuda_function(s->ordinal, "rows", "rows_ef_sums", &s->f_ef, st))
        goto done;
    gg_tel_dispatch(LABEL);

    s->row_blocks = row_blocks_for(s->ordinal, n);
    s->partial_host = malloc(MAX_SUMS * (size_t) s->row_blocks * sizeof(double));
    if (s->partial_host == NULL) {
        gg_fail(st, "gamgpu_host_oom", "engine: out of host memory");
        goto done;
    }
    gg_cuda_gram_plan(s->ordinal, n, p + 1, &s->plan);

    /* the row state first: it must be resident */
    gg_buflist *b = &s->bufs;
    if (!(s->y = gg_buflist_alloc(b, n, LABEL, st)) ||
        (d->yat && !(s->yat = gg_buflist_alloc(b, n, LABEL, st))) ||
        !(s->pw = gg_buflist_alloc(b, n, LABEL, st)) ||
        (d->offset && !(s->off = gg_buflist_alloc(b, n, LABEL, st))) ||
        !(s->eta = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->eta_old = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->mu = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->w = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->z = gg_buflist_alloc(b, n, LABEL, st)) ||
        !(s->beta = gg_buflist_alloc(b, (size_t) p, LABEL, st)) ||
        !(s->G = gg_buflist_alloc(b, (size_t) (p + 1) * (p + 1), LABEL, st)) ||
        !(s->partial = gg_buflist_alloc(b, MAX_SUMS * (size_t) s->row_blocks, LABEL, st)) ||
        !(s->gP = gg_buflist_alloc(b, s->plan.partial_elements, LABEL, st)) ||
        /* the leverage pass's M and h too: streaming below takes what is left */
        !(s->M = gg_buflist_alloc(b, (size_t) p * p, LABEL, st)) ||
        !(s->h = gg_buflist_alloc(b, n, LABEL, st)) ||
        (d->ar_rho != 0 && d->ar_start &&
         !(s->ar.start = gg_buflist_alloc(b, n, LABEL, st))))
        goto done;
    if (d->ar_rho != 0) {
        s->ar_on = 1;
        s->ar.ld = 1.0 / sqrt(1.0 - d->ar_rho * d->ar_rho);
        s->ar.sd = -d->ar_rho * s->ar.ld;
    }

    /* then X: resident if it fits, else streamed */
    gg_status x_st;
    gg_status_clear(&x_st);
    if (d->X == NULL && load_recipe(s, d, st))
        goto done;
    s->X = gg_buflist_alloc(b, n * (size_t) p, LABEL, &x_st);
    if (s->X) {
        if (d->X == NULL) {
            double tb = now();
            if (build_x_resident(s, st))
                goto done;
            be->t_build += now() - tb;
            snprintf(be->placement, sizeof be->placement, "device (X built and resident)");
        } else {
            if (gg_cuda_upload(LABEL, s->X, d->X, n * (size_t) p, st))
                goto done;
            snprintf(be->placement, sizeof be->placement, "device (X resident)");
        }
    } else {
        if (!gg_device_failure(&x_st)) {
            *st = x_st;
            goto done;
        }
        if (s->ar_on) {
            gg_fail(st, "gamgpu_device_unsupported",
                    "AR1 residuals (rho) need the model matrix resident in device memory, "
                    "and its %lu x %d doubles do not fit", (unsigned long) n, p);
            goto done;
        }
        if (setup_streaming(s, d, st))
            goto done;
        snprintf(be->placement, sizeof be->placement,
                 d->X == NULL ? "device (X built on the device in streamed chunks of %lu rows)"
                              : "device (X streamed from the host in chunks of %lu rows)",
                 (unsigned long) s->xs.chunk_rows);
    }
    if (gg_cuda_upload(LABEL, s->y, d->y, n, st) ||
        (d->yat && gg_cuda_upload(LABEL, s->yat, d->yat, n, st)) ||
        (d->pw_ones ? fill_ones(s, s->pw, st) : gg_cuda_upload(LABEL, s->pw, d->pw, n, st)) ||
        (d->offset && gg_cuda_upload(LABEL, s->off, d->offset, n, st)) ||
        (s->ar.start && gg_cuda_upload(LABEL, s->ar.start, d->ar_start, n, st)))
        goto done;
    rc = 0;
done:
    gg_cuda_leave(s->ordinal);
    be->t_transfer += now() - t0 - be->t_build;
    return rc;
}

/* ---- the row-wise steps ---------------------------------------------- */

static int cuda_init_eta(gg_backend *be, const gg_family *fam, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int f = (int) fam->fam, efam = fam->efam, rc = -1;
    gg_fm_link l = gg_family_link(fam);
    gg_fm_efpar par = fam->ef;
    long long n = (long long) s->n;
    void *args[] = {&f, &l, &efam, &par, &s->y, &s->pw, &n, &s->eta, &s->eta_old, &s->partial};
    double bad = 0;
    if (launch_rows(s, s->f_init, args, work_stream(s), "engine: launching rows_init_eta", st) ||
        sum_partials(s, 1, &bad, st))
        goto done;
    if (bad > 0) {
        /* Rare: find the first offending row for the message, on the host. */
        double *y = malloc(s->n * sizeof(double)), *pw = malloc(s->n * sizeof(double));
        size_t row = s->n;
        if (y != NULL && pw != NULL &&
            gg_cu.cuMemcpyDtoH(y, s->y, s->n * sizeof(double)) == CUDA_SUCCESS &&
            gg_cu.cuMemcpyDtoH(pw, s->pw, s->n * sizeof(double)) == CUDA_SUCCESS)
            for (row = 0; row < s->n; row++)
                if (!gg_start_valid(fam, gg_linkfun(gg_family_link(fam), gg_family_mustart(fam, y[row], pw[row]))))
                    break;
        gg_fail(st, "gamgpu_bad_start",
                "cannot find valid starting values for the %s family with %s link "
                "(%.0f rows; the first is row %lu, y = %g)",
                gg_family_name(fam->fam), gg_link_name(fam->link), bad,
                (unsigned long) row + 1, row < s->n ? y[row] : NAN);
        free(pw);
        free(y);
        goto done;
    }
    rc = 0;
done:
    gg_cuda_leave(s->ordinal);
    be->t_rows += now() - t0;
    return rc;
}

/* eta = X beta + off, beta p doubles on the device */
typedef struct xbeta_ctx { CUdeviceptr off, eta, beta; } xbeta_ctx;

static int xbeta_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                       CUstream stream, void *ctx_, gg_status *st)
{
    xbeta_ctx *c = ctx_;
    long long ld = (long long) ldx, nr = (long long) rows;
    int p = s->p;
    CUdeviceptr off = rows_at(c->off, r0), eta = rows_at(c->eta, r0);
    void *args[] = {&Xc, &ld, &nr, &p, &c->beta, &off, &eta};
    return launch_rows(s, s->f_xbeta, args, stream, "engine: launching rows_xbeta", st);
}

static int cuda_xbeta(gg_backend *be, const double *beta, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    xbeta_ctx c = {s->off, s->eta, s->beta};
    int rc = gg_cuda_upload(LABEL, s->beta, beta, (size_t) s->p, st) ||
             for_each_x_chunk(s, xbeta_chunk, &c, st) ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->n_xbeta++;
    be->t_rows += now() - t0;
    return rc;
}

static int eta_step(gg_backend *be, int mode, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    long long n = (long long) s->n;
    void *args[] = {&mode, &n, &s->eta, &s->eta_old};
    int rc = launch_rows(s, s->f_step, args, work_stream(s), "engine: launching rows_eta_step", st);
    gg_cuda_leave(s->ordinal);
    be->t_rows += now() - t0;
    return rc;
}

static int cuda_keep_eta(gg_backend *be, gg_status *st)  { return eta_step(be, 0, st); }
static int cuda_halve_eta(gg_backend *be, gg_status *st)
{
    be->n_halve++;
    return eta_step(be, 1, st);
}

static int cuda_row_state(gg_backend *be, const gg_family *fam, double *dev, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int f = (int) fam->fam, efam = fam->efam;
    gg_fm_link l = gg_family_link(fam);
    double th = fam->theta;
    gg_fm_efpar par = fam->ef;
    long long n = (long long) s->n;
    void *args[] = {&f, &l, &th, &efam, &par, &s->y, &s->yat, &s->pw, &s->off, &s->eta, &n,
                    &s->mu, &s->w, &s->z, &s->partial};
    int rc = launch_rows(s, s->f_state, args, work_stream(s), "engine: launching rows_state", st) ||
             sum_partials(s, 1, dev, st) ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->n_row_state++;
    be->t_rows += now() - t0;
    if (rc == 0 && !isfinite(*dev))
        return gg_fail(st, "gamgpu_nonfinite", "non-finite deviance");
    return rc;
}

/* The slabs of a pass's products over rows of X: the resident plan for
 * all of X, else a chunk's own, as many as the device takes (a chunk holds
 * few of the resident plan's slabs, which ran on as few multiprocessors),
 * never more than the resident plan's partial buffers hold.  The chunks'
 * sums are added in order: deterministic, and a streamed fit equals the
 * resident one to rounding, not bit for bit. */
static void chunk_plan(const cuda_state *s, size_t rows, gg_gram_plan *plan)
{
    if (rows == s->n) {
        *plan = s->plan;
        return;
    }
    gg_cuda_gram_plan(s->ordinal, rows, s->p + 1, plan);
    if (plan->n_slabs > s->plan.n_slabs) {     /* slab heights rounded to 16 */
        long long h = ((long long) rows + s->plan.n_slabs - 1) / s->plan.n_slabs;
        gg_cuda_gram_plan_rows(rows, s->p + 1, (h + 15) / 16 * 16, plan);
    }
}

static int gram_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                      CUstream stream, void *ctx, gg_status *st)
{
    (void) ctx;
    gg_gram_plan plan;
    chunk_plan(s, rows, &plan);
    return gg_cuda_gram_run(s->ordinal, LABEL, Xc, ldx, rows_at(s->z, r0), rows_at(s->w, r0),
                            rows, s->p, &plan, s->gP, s->G, r0 > 0,
                            s->ar_on ? &s->ar : NULL, stream, st);
}

static int cuda_gram(gg_backend *be, double *A, double *b, double *zwz, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = for_each_x_chunk(s, gram_chunk, NULL, st) ||
             gg_cuda_gram_fetch(LABEL, s->G, s->p, 1, A, b, zwz, st) ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->n_gram++;
    be->t_rows += now() - t0;
    return rc;
}

/* Leverages of a chunk: gram.cu's gram_leverage, one block per 64 rows
 * (a matrix product X M on the tensor cores, then row sums). */
static int quad_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                      CUstream stream, void *ctx, gg_status *st)
{
    const CUdeviceptr *wbase = ctx;       /* the row weights, or 0: none */
    long long ld = (long long) ldx, nr = (long long) rows;
    int p = s->p;
    CUdeviceptr w = rows_at(*wbase, r0), h = rows_at(s->h, r0);
    void *args[] = {&Xc, &ld, &nr, &p, &s->M, &w, &h, &s->ar_on, &s->ar.ld, &s->ar.sd,
                    &s->ar.start};
    const unsigned blocks = (unsigned) ((rows + 63) / 64);
    if (gg_cu_check(gg_cu.cuLaunchKernel(s->f_lev, blocks, 1, 1, ROW_THREADS, 1, 1, 0, stream,
                                         args, NULL), "engine: launching gram_leverage", st))
        return -1;
    gg_tel_launch(LABEL, 1);
    return 0;
}

int gg_cuda_leverage_device(gg_backend *be, const double *M, CUdeviceptr w, gg_status *st)
{
    cuda_state *s = S(be);
    return gg_cuda_upload(LABEL, s->M, M, (size_t) s->p * s->p, st) ||
           for_each_x_chunk(s, quad_chunk, &w, st) ? -1 : 0;
}

static int cuda_leverage(gg_backend *be, const double *M, double *h, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = -1;
    if (gg_cuda_leverage_device(be, M, s->w, st) ||
        gg_cuda_wait(NULL, "the leverages on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(h, s->h, s->n * sizeof(double)),
                    "engine: copying leverages back", st))
        goto done;
    gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    rc = 0;
done:
    gg_cuda_leave(s->ordinal);
    be->t_rows += now() - t0;
    return rc;
}

static int cuda_ef_sums(gg_backend *be, const gg_family *fam, int deriv, double *out,
                        gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int f = (int) fam->fam, nsum = GG_FM_EF_NSUM(fam->ef.nth, fam->ef.nth + fam->ef.scale_est);
    gg_fm_efpar par = fam->ef;
    long long n = (long long) s->n;
    void *args[] = {&f, &par, &deriv, &nsum, &s->y, &s->yat, &s->pw, &s->mu, &n, &s->partial};
    int rc = launch_rows(s, s->f_ef, args, work_stream(s), "engine: launching rows_ef_sums",
                         st) ||
             sum_partials(s, nsum, out, st) ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->t_rows += now() - t0;
    if (rc == 0 && (!isfinite(out[GG_FM_EF_DEV]) || !isfinite(out[GG_FM_EF_LS])))
        return gg_fail(st, "gamgpu_nonfinite", "non-finite deviance in the theta estimation");
    return rc;
}

static int cuda_fetch(gg_backend *be, gg_vec which, double *out, gg_status *st)
{
    cuda_state *s = S(be);
    CUdeviceptr src = 0;
    switch (which) {
    case GG_VEC_ETA: src = s->eta; break;
    case GG_VEC_MU: src = s->mu; break;
    case GG_VEC_W: src = s->w; break;
    case GG_VEC_Z: src = s->z; break;
    }
    if (src == 0)
        return gg_fail(st, "gamgpu_internal_error", "fetch: unknown vector");
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = gg_cu_check(gg_cu.cuMemcpyDtoH(out, src, s->n * sizeof(double)),
                         "engine: copying a result vector back", st);
    if (rc == 0)
        gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    gg_cuda_leave(s->ordinal);
    be->t_transfer += now() - t0;
    return rc;
}

/* ---- X alone, built on the device ------------------------------------ */

/* X (n x p) from its recipe, built on the device as load() builds it and
 * copied to host memory out (leading dimension n): the bases of a model
 * set up on the host (R/tprs_setup.R) evaluated where evaluation is fast.
 * Fails with a device class where X does not fit in device memory. */
int gg_cuda_xplan_build(int ordinal, const gg_xplan *xp, double *out, gg_status *st)
{
    gg_arena *arena = gg_gpu_arena(ordinal, st);
    if (arena == NULL)
        return -1;
    cuda_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (device basis build)");
    s->ordinal = ordinal;
    gg_buflist_init(&s->bufs, arena);
    s->n = xp->n;
    s->p = xp->p;
    gg_data d;
    memset(&d, 0, sizeof d);
    d.n = xp->n;
    d.p = xp->p;
    d.xplan = xp;
    int rc = -1;
    if (gg_cuda_enter(ordinal, st) != 0) {
        free(s);
        return -1;
    }
    gg_tel_dispatch(LABEL);
    s->row_blocks = row_blocks_for(ordinal, xp->n);
    if (load_recipe(s, &d, st) ||
        !(s->X = gg_buflist_alloc(&s->bufs, xp->n * (size_t) xp->p, LABEL, st)) ||
        build_x_resident(s, st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(out, s->X, xp->n * (size_t) xp->p * sizeof(double)),
                    "engine: copying the model matrix back", st))
        goto done;
    gg_tel_d2h(LABEL, (double) (xp->n * (size_t) xp->p * sizeof(double)));
    rc = 0;
done:
    gg_buflist_release(&s->bufs);
    free(s->dblocks);
    free(s);
    gg_cuda_leave(ordinal);
    return rc;
}

/* ---- products for the outer smoothing parameter iteration ------------ */

static int cuda_set_rows(gg_backend *be, const double *w, const double *z, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = gg_cuda_upload(LABEL, s->w, w, s->n, st) || gg_cuda_upload(LABEL, s->z, z, s->n, st)
                 ? -1 : 0;
    gg_cuda_leave(s->ordinal);
    be->t_transfer += now() - t0;
    return rc;
}

/* X B one column at a time: rows_xbeta without an offset into the
 * leverage buffer h, copied back. */
static int cuda_xmul(gg_backend *be, const double *B, int k, double *out, gg_status *st)
{
    cuda_state *s = S(be);
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    int rc = -1;
    xbeta_ctx c = {0, s->h, s->beta};
    for (int j = 0; j < k; j++) {
        if (gg_cuda_upload(LABEL, s->beta, B + (size_t) j * s->p, (size_t) s->p, st) ||
            for_each_x_chunk(s, xbeta_chunk, &c, st) ||
            gg_cuda_wait(NULL, "the product X B on the device", st) ||
            gg_cu_check(gg_cu.cuMemcpyDtoH(out + (size_t) j * s->n, s->h, s->n * sizeof(double)),
                        "engine: copying X B back", st))
            goto done;
        gg_tel_d2h(LABEL, (double) (s->n * sizeof(double)));
    }
    rc = 0;
done:
    gg_cuda_leave(s->ordinal);
    be->t_rows += now() - t0;
    return rc;
}

int gg_cuda_xmul_device(gg_backend *be, CUdeviceptr B, int k, CUdeviceptr out, gg_status *st)
{
    cuda_state *s = S(be);
    for (int j = 0; j < k; j++) {
        xbeta_ctx c = {0, out + (size_t) j * s->n * sizeof(double),
                       B + (size_t) j * s->p * sizeof(double)};
        if (for_each_x_chunk(s, xbeta_chunk, &c, st)) return -1;
    }
    return 0;
}

typedef struct xtv_ctx {
    CUfunction f, f_reduce;
    CUdeviceptr V, partial, out;
    int k;
} xtv_ctx;

/* One chunk's X' V: gram.cu's gram_xtv over the chunk's slabs, then the
 * slabs summed in order into out (added to the earlier chunks'). */
static int xtv_chunk(cuda_state *s, CUdeviceptr Xc, size_t ldx, size_t r0, size_t rows,
                     CUstream stream, void *ctx_, gg_status *st)
{
    xtv_ctx *c = ctx_;
    gg_gram_plan plan;
    chunk_plan(s, rows, &plan);
    long long ld = (long long) ldx, ldv = (long long) s->n, nr = (long long) rows,
              rps = plan.rows_per_slab, m = (long long) s->p * c->k;
    int p = s->p, k = c->k, n_slabs = plan.n_slabs, acc = r0 > 0;
    CUdeviceptr V = rows_at(c->V, r0);
    const unsigned tiles = (unsigned) (((p + 63) / 64) * ((k + 63) / 64));
    void *args[] = {&Xc, &ld, &V, &ldv, &nr, &p, &k, &rps, &c->partial};
    if (gg_cu_check(gg_cu.cuLaunchKernel(c->f, tiles, (unsigned) n_slabs, 1, 256, 1, 1, 0,
                                         stream, args, NULL),
                    "engine: launching gram_xtv", st))
        return -1;
    void *rargs[] = {&c->partial, &n_slabs, &m, &acc, &c->out};
    if (gg_cu_check(gg_cu.cuLaunchKernel(c->f_reduce, (unsigned) ((m + 255) / 256), 1, 1, 256, 1,
                                         1, 0, stream, rargs, NULL),
                    "engine: launching gram_xtv_reduce", st))
        return -1;
    gg_tel_launch(LABEL, 2);
    return 0;
}

static int cuda_xtmul(gg_backend *be, const double *V, int k, double *out, gg_status *st)
{
    cuda_state *s = S(be);
    if (k <= 0)
        return 0;
    double t0 = now();
    if (gg_cuda_enter(s->ordinal, st) != 0)
        return -1;
    const int mark = s->bufs.n;
    CUdeviceptr dV = gg_buflist_alloc(&s->bufs, s->n * (size_t) k, LABEL, st);
    int rc = !dV || gg_cuda_upload(LABEL, dV, V, s->n * (size_t) k, st) ||
             gg_cuda_xtmul_device(be, dV, k, out, st) ? -1 : 0;
    gg_buflist_truncate(&s->bufs, mark);
    gg_cuda_leave(s->ordinal);
    be->t_rows += now() - t0;
    return rc;
}

int gg_cuda_xtmul_device(gg_backend *be, CUdeviceptr V, int k, double *out, gg_status *st)
{
    cuda_state *s = S(be);
    if (k <= 0)
        return 0;
    int rc = -1;
    const int mark = s->bufs.n;
    const size_t pk = (size_t) s->p * (size_t) k;
    xtv_ctx c = {0};
    c.k = k;
    c.V = V;
    if (gg_cuda_function(s->ordinal, "gram", "gram_xtv", &c.f, st) ||
        gg_cuda_function(s->ordinal, "gram", "gram_xtv_reduce", &c.f_reduce, st) ||
        !(c.partial = gg_buflist_alloc(&s->bufs, (size_t) s->plan.n_slabs * pk, LABEL, st)) ||
        !(c.out = gg_buflist_alloc(&s->bufs, pk, LABEL, st)) ||
        for_each_x_chunk(s, xtv_chunk, &c, st) ||
        gg_cuda_wait(NULL, "the product X' V on the device", st) ||
        gg_cu_check(gg_cu.cuMemcpyDtoH(out, c.out, pk * sizeof(double)),
                    "engine: copying X' V back", st))
        goto done;
    gg_tel_d2h(LABEL, (double) (pk * sizeof(double)));
    rc = 0;
done:
    gg_buflist_truncate(&s->bufs, mark);
    return rc;
}

/* ---- the row state, for cuda_outer.c ----------------------------------- */

void gg_cuda_rows_of(gg_backend *be, gg_cuda_rows *out)
{
    cuda_state *s = S(be);
    out->ordinal = s->ordinal;
    out->n = s->n;
    out->p = s->p;
    out->row_blocks = s->row_blocks;
    out->y = s->y;
    out->yat = s->yat;
    out->pw = s->pw;
    out->off = s->off;
    out->eta = s->eta;
    out->mu = s->mu;
    out->w = s->w;
    out->z = s->z;
    out->h = s->h;
    out->partial = s->partial;
    out->stream = work_stream(s);
    out->ar_on = s->ar_on;
    out->outer = &s->outer;
}

int gg_cuda_partial_sums(gg_backend *be, int k, double *out, gg_status *st)
{
    return sum_partials(S(be), k, out, st);
}

static const gg_backend_ops cuda_ops = {
    "cuda", cuda_load, cuda_init_eta, cuda_xbeta, cuda_keep_eta, cuda_halve_eta,
    cuda_row_state, cuda_gram, cuda_leverage, cuda_ef_sums, cuda_fetch,
    cuda_set_rows, cuda_xmul, cuda_xtmul, cuda_release, &gg_cuda_outer_ops};

int gg_backend_cuda_init(gg_backend *be, int ordinal, gg_status *st)
{
    memset(be, 0, sizeof *be);
    gg_arena *arena = gg_gpu_arena(ordinal, st);
    if (arena == NULL)
        return -1;
    cuda_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (cuda backend)");
    s->ordinal = ordinal;
    gg_buflist_init(&s->bufs, arena);
    be->ops = &cuda_ops;
    be->impl = s;
    return 0;
}
