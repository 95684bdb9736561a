/* cuda_xbuild.c -- the model matrix built on the device from its recipe
 * (xplan.h) by basis.cu's kernels: the recipe's arrays packed and sent up
 * once per distinct host array (covariates, factor codes, by-variables,
 * knots and maps: O(n x covariates), not O(n x p)), the raw-basis scratch,
 * and each block's columns -- a margins block through its margins' raw
 * columns, maps and row tensor product -- for a chunk of rows or the
 * whole resident X; and X alone built and copied back (gg_cuda_xplan_build)
 * or handed to another tail (gg_cuda_xplan_run; cuda_xstats.c).
 * The backend's operations that use it: cuda_backend.c.  Compiled only
 * with CUDA. */
#include "cuda_state.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *LABEL = GG_CUDA_ENGINE;

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
int gg_cuda_load_recipe(cuda_state *s, const gg_data *d, gg_status *st)
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

int gg_cuda_build_x(cuda_state *s, size_t r0, size_t rows, CUdeviceptr Xc, size_t ldx,
                   CUstream stream, gg_status *st);

/* All of X into the resident s->X, in pieces of about 2^20 rows (whole
 * sub-chunks of the scratch, so the same launches as one call) with a
 * polled wait after each: at 1e8 rows the build takes seconds, and an
 * interrupt is heard within a piece. */
int gg_cuda_build_x_resident(cuda_state *s, gg_status *st)
{
    const size_t n = s->n, piece = s->raw_rows * (s->raw_rows < (1u << 20) ?
                                                  (1u << 20) / s->raw_rows : 1);
    for (size_t r0 = 0; r0 < n; r0 += piece) {
        const size_t rows = n - r0 < piece ? n - r0 : piece;
        if (gg_cuda_build_x(s, r0, rows, s->X + r0 * sizeof(double), n, NULL, st) ||
            gg_cuda_wait(NULL, "the model matrix's build on the device", st))
            return -1;
    }
    return 0;
}

/* Rows r0 .. r0+rows-1 of X into Xc (leading dimension ldx), launched on
 * stream (asynchronous); in sub-chunks of raw_rows through the scratch. */
int gg_cuda_build_x(cuda_state *s, size_t r0, size_t rows, CUdeviceptr Xc, size_t ldx,
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

/* ---- X alone, built on the device ------------------------------------ */

/* X (n x p) from its recipe built resident on the device as load() builds
 * it, then tail(s, ctx) on it; the device's memory released after.  Fails
 * with a device class where X does not fit in device memory. */
int gg_cuda_xplan_run(int ordinal, const gg_xplan *xp, gg_xplan_tail tail, void *ctx,
                      gg_status *st)
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
    if (gg_cuda_load_recipe(s, &d, st) ||
        !(s->X = gg_buflist_alloc(&s->bufs, xp->n * (size_t) xp->p, LABEL, st)) ||
        gg_cuda_build_x_resident(s, st) || tail(s, ctx, st))
        goto done;
    rc = 0;
done:
    gg_buflist_release(&s->bufs);
    free(s->dblocks);
    free(s);
    gg_cuda_leave(ordinal);
    return rc;
}

static int copy_back(cuda_state *s, void *out, gg_status *st)
{
    const size_t bytes = s->n * (size_t) s->p * sizeof(double);
    if (gg_cu_check(gg_cu.cuMemcpyDtoH(out, s->X, bytes), "engine: copying the model matrix back",
                    st))
        return -1;
    gg_tel_d2h(LABEL, (double) bytes);
    return 0;
}

/* X (n x p) from its recipe, built on the device and copied to host
 * memory out (leading dimension n): the bases of a model set up on the
 * host (R/tprs_setup.R) evaluated where evaluation is fast. */
int gg_cuda_xplan_build(int ordinal, const gg_xplan *xp, double *out, gg_status *st)
{
    return gg_cuda_xplan_run(ordinal, xp, copy_back, out, st);
}
