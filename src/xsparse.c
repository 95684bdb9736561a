/* xsparse.c -- the model matrix as sparse rows times a fixed map (see
 * xsparse.h): compiling a local recipe into M and the rows' entries, and
 * the CPU backend's products through them, over the thread budget in
 * fixed row ranges.  M's products go through R's BLAS block by block (M
 * is block diagonal in the recipe's blocks), on the caller's thread. */
#define USE_FC_LEN_T
#include "xsparse.h"
#include "gram_kernel.h"
#include "interrupt.h"
#include "threads.h"
#include "../inst/kernels/basis_math.h"

#include <R_ext/BLAS.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FCONE
#define FCONE
#endif

#define XS_JOBS 16              /* fixed row ranges */
#define XS_POLL 4096            /* rows between looks for an interrupt */
#define XS_MARG_NNZ 32          /* entries of a margin's row */
#define XS_CP_MAXK 256

/* ---- compiling ----------------------------------------------------------- */

/* The linear part of a margin's or block's map (drop, Z; no by, no col_of)
 * applied to raw (k values) into out (kc values); with shift = 1 the
 * sweep-and-drop constants are subtracted too (the affine map). */
static void map_apply(const gg_basis_map *map, const double *raw, int shift, double *out,
                      double *mid)
{
    int m = 0;
    if (map->drop >= 0) {
        for (int c = 0; c < map->k; c++)
            if (c != map->drop) {
                mid[m] = raw[c] - (shift ? map->shift[m] : 0.0);
                m++;
            }
    } else {
        memcpy(mid, raw, (size_t) map->k * sizeof(double));
        m = map->k;
    }
    for (int c = 0; c < map->kc; c++) {
        if (map->Z != NULL) {
            double s = 0;
            const double *zc = map->Z + (size_t) c * m;
            for (int r = 0; r < m; r++)
                s += mid[r] * zc[r];
            out[c] = s;
        } else {
            out[c] = mid[c];
        }
    }
}

static int map_shifts(const gg_basis_map *map)
{
    if (map->drop < 0 || map->shift == NULL)
        return 0;
    for (int c = 0; c < map->k - 1; c++)
        if (map->shift[c] != 0.0)
            return 1;
    return 0;
}

/* The raw k-vector that a margin's sparse index r stands for (r < its
 * q without the shift's entry) */
static void margin_basis_row(const gg_xmargin *g, int r, double *u)
{
    const int k = g->k;
    memset(u, 0, (size_t) k * sizeof(double));
    if (r < k) {
        u[r] = 1.0;
        return;
    }
    const int j = r - k;
    for (int c = 0; c < k; c++)
        switch (g->kind) {
        case GG_XM_CR: u[c] = g->F[(size_t) j * k + c]; break;
        case GG_XM_CC: u[c] = g->F[j + (size_t) k * c]; break;
        case GG_XM_BSPL: u[c] = g->F[j + 4 * (size_t) c]; break;
        default: break;
        }
}

/* Whether every margin of a margins block has sparse rows (margin_setup()
 * knows its kind), and the block's entries and dimension stay within
 * bounds */
static void margin_setup(gg_xs_margin *m);

static int marg_local(const gg_xblock *b)
{
    size_t q = 1, nnz = 1;
    for (int j = 0; j < b->nmarg; j++) {
        gg_xs_margin m = {.g = b->marg[j]};
        switch (m.g.kind) {
        case GG_XM_CR: case GG_XM_CC: case GG_XM_BSPL: case GG_XM_CODE: case GG_XM_LINEAR:
            break;
        case GG_XM_CP:
            if (m.g.k > XS_CP_MAXK) return 0;
            break;
        default:
            return 0;
        }
        margin_setup(&m);
        if (m.nnz > XS_MARG_NNZ) return 0;
        q *= (size_t) m.q;
        nnz *= (size_t) m.nnz;
        if (q > GG_XS_MAX_Q || nnz > GG_XS_MAX_NNZ) return 0;
    }
    return 1;
}

static void margin_setup(gg_xs_margin *m)
{
    const gg_xmargin *g = &m->g;
    int qraw = 1;
    switch (g->kind) {
    case GG_XM_CR: qraw = 2 * g->k; m->nnz = 4; break;
    case GG_XM_CC: qraw = 2 * g->k; m->nnz = 4; break;
    case GG_XM_BSPL: qraw = g->k + 4; m->nnz = g->ord > 2 ? g->ord : 2; break;
    case GG_XM_CP:
        qraw = g->k;
        m->nnz = 2 * g->ord < g->k ? 2 * g->ord : g->k;
        break;
    case GG_XM_CODE: qraw = g->k; m->nnz = 1; break;
    default: qraw = 1; m->nnz = 1; break;        /* LINEAR */
    }
    m->aug = map_shifts(&g->map);
    m->q = qraw + m->aug;
    m->nnz += m->aug;
}

/* H (q x kc, row-major): the margin's map applied to the vectors its
 * sparse indices stand for; the shift's row last */
static int margin_H(const gg_xs_margin *m, double *H)
{
    const gg_xmargin *g = &m->g;
    const int kc = g->map.kc, qraw = m->q - m->aug;
    double *u = malloc(2 * (size_t) g->k * sizeof(double));
    if (u == NULL)
        return -1;
    for (int r = 0; r < qraw; r++) {
        margin_basis_row(g, r, u);
        map_apply(&g->map, u, 0, H + (size_t) r * kc, u + g->k);
    }
    if (m->aug) {
        memset(u, 0, (size_t) g->k * sizeof(double));
        map_apply(&g->map, u, 1, H + (size_t) qraw * kc, u + g->k);
    }
    free(u);
    return 0;
}

/* The block's rows of M: H_T (the margins' H as a Kronecker product) times
 * the block's map, and its shift's row */
static int block_M(gg_xsparse *xs, const gg_xs_block *B)
{
    const gg_xblock *b = B->b;
    const size_t Q = (size_t) xs->Q;
    if (B->dense) {                       /* its own columns */
        for (int c = 0; c < b->ncol; c++)
            xs->M[B->q0 + c + Q * (size_t) (b->col0 + c)] = 1.0;
        return 0;
    }
    if (B->nm == 0) {                     /* ones */
        for (int c = 0; c < b->ncol; c++)
            xs->M[B->q0 + Q * (size_t) (b->col0 + c)] = 1.0;
        return 0;
    }
    double *H[GG_XMAX_MARGINS] = {NULL};
    const double *u[GG_XMAX_MARGINS];
    int kp[GG_XMAX_MARGINS];
    const int kT = b->map.k;
    double *raw = malloc((3 * (size_t) kT + (size_t) b->map.kc) * sizeof(double));
    int failed = raw == NULL;
    for (int j = 0; j < B->nm && !failed; j++) {
        kp[j] = B->m[j].g.map.kc;
        H[j] = malloc((size_t) B->m[j].q * (size_t) kp[j] * sizeof(double));
        failed = H[j] == NULL || margin_H(&B->m[j], H[j]);
    }
    if (!failed) {
        double *mid = raw + kT, *out = mid + 2 * (size_t) kT;
        for (int t = 0; t < B->qT + B->aug; t++) {
            if (t < B->qT) {
                int rest = t;
                for (int j = B->nm - 1; j >= 0; j--) {
                    u[j] = H[j] + (size_t) (rest % B->m[j].q) * kp[j];
                    rest /= B->m[j].q;
                }
                if (B->nm == 1)
                    memcpy(raw, u[0], (size_t) kp[0] * sizeof(double));
                else
                    gg_bm_tensor_row(B->nm, u, kp, raw);
                map_apply(&b->map, raw, 0, out, mid);
            } else {
                memset(raw, 0, (size_t) kT * sizeof(double));
                map_apply(&b->map, raw, 1, out, mid);
            }
            for (int c = 0; c < b->map.kc; c++) {
                const int oc = b->map.col_of != NULL ? b->map.col_of[c] : c;
                if (oc >= 0)
                    xs->M[B->q0 + t + Q * (size_t) (b->col0 + oc)] = out[c];
            }
        }
    }
    for (int j = 0; j < B->nm; j++)
        free(H[j]);
    free(raw);
    return failed ? -1 : 0;
}

/* Whether block b is a thin plate basis in one variable with its
 * piecewise polynomials (generated row by row, not stored) */
static int tp1_generated(const gg_xblock *b)
{
    return b->kind == GG_XB_TPRS && b->d == 1 && b->pp_deg > 0 && b->pp_coef != NULL &&
           b->pp_knots != NULL;
}

/* B->T: the block's map (constraint, sweep-and-drop shift, deletions; not
 * its by) applied to each interval's polynomial coefficients, the shift
 * entering the constant term: a row is then sum_a t^a T[j, a, ] times by. */
static int tp1_fold(gg_xs_block *B)
{
    const gg_xblock *b = B->b;
    const int k = b->map.k, D = b->pp_deg, nc = b->ncol;
    const size_t nT = ((size_t) b->nXu + 1) * (size_t) (D + 1) * (size_t) nc;
    B->T = calloc(nT, sizeof(double));
    double *w = malloc((3 * (size_t) k + (size_t) b->map.kc) * sizeof(double));
    if (B->T == NULL || w == NULL) {
        free(w);
        return -1;
    }
    double *raw = w, *mid = w + k, *out = w + 2 * (size_t) k;
    for (int j = 0; j <= b->nXu; j++)
        for (int a = 0; a <= D; a++) {
            for (int c = 0; c < k; c++)
                raw[c] = b->pp_coef[((size_t) j * k + c) * (D + 1) + a];
            map_apply(&b->map, raw, a == 0, out, mid);
            double *Tja = B->T + ((size_t) j * (D + 1) + a) * nc;
            for (int c = 0; c < b->map.kc; c++) {
                const int oc = b->map.col_of != NULL ? b->map.col_of[c] : c;
                if (oc >= 0)
                    Tja[oc] = out[c];
            }
        }
    free(w);
    /* cells for the search of a row's interval: a start close to it */
    const int K = b->nXu;
    const double *kn = b->pp_knots;
    if (K >= 2 && kn[K - 1] > kn[0]) {
        B->nlut = 4 * K;
        B->lut = malloc((size_t) B->nlut * sizeof(int));
        if (B->lut == NULL)
            return -1;
        B->lut_lo = kn[0];
        B->lut_scale = B->nlut / (kn[K - 1] - kn[0]);
        int j = 0;
        for (int c = 0; c < B->nlut; c++) {
            const double edge = kn[0] + c / B->lut_scale;
            while (j < K && kn[j] <= edge)
                j++;
            B->lut[c] = j;
        }
    }
    return 0;
}

/* gg_bm_tp1_locate(x, knots, K) -- the number of knots <= x -- from the
 * cell's start, walked to the answer (either way: the cell only guides) */
static int tp1_locate(const gg_xs_block *B, double x)
{
    const gg_xblock *b = B->b;
    const double *kn = b->pp_knots;
    const int K = b->nXu;
    if (B->lut == NULL)
        return gg_bm_tp1_locate(x, kn, K);
    if (!(x >= kn[0]))
        return x < kn[0] ? 0 : gg_bm_tp1_locate(x, kn, K);
    if (x >= kn[K - 1])
        return K;
    const double c = (x - B->lut_lo) * B->lut_scale;
    int j = B->lut[c < B->nlut ? (int) c : B->nlut - 1];
    while (j < K && kn[j] <= x)
        j++;
    while (j > 0 && kn[j - 1] > x)
        j--;
    return j;
}

static int tp1_point(const gg_xs_block *B, size_t i, double *t, double *by)
{
    const gg_xblock *b = B->b;
    *by = 1.0;
    if (b->map.by != NULL)
        *by = b->map.by[i];
    else if (b->map.by_code != NULL && b->map.by_code[i] != b->map.by_level)
        *by = 0.0;
    const double x = b->x[i] - b->shift[0];
    const int j = tp1_locate(B, x);
    *t = x - b->pp_knots[j > 0 ? j - 1 : 0];
    return j;
}

void gg_xsparse_free(gg_xsparse *xs)
{
    for (int k = 0; k < xs->nblocks && xs->blocks != NULL; k++) {
        free(xs->blocks[k].T);
        free(xs->blocks[k].lut);
    }
    free(xs->blocks);
    free(xs->M);
    free(xs->D);
    memset(xs, 0, sizeof *xs);
}

int gg_xsparse_compile(const gg_xplan *plan, gg_xsparse *xs, char *why, size_t nwhy,
                       gg_status *st)
{
    memset(xs, 0, sizeof *xs);
    why[0] = '\0';
    gg_xs_block *BL = calloc((size_t) (plan->nblocks > 0 ? plan->nblocks : 1), sizeof *BL);
    if (BL == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (sparse model matrix)");
    int Q = 0, nnz = 0, pd = 0, nlocal = 0, nd = 0, ngen = 0;
    for (int k = 0; k < plan->nblocks; k++) {
        const gg_xblock *b = &plan->blocks[k];
        gg_xs_block *B = &BL[k];
        B->b = b;
        if (b->kind == GG_XB_ONES) {
            B->nm = 0;
            B->qT = 1;
            B->nnz = 1;
        } else if (b->kind == GG_XB_CR || (b->kind == GG_XB_MARG && marg_local(b))) {
            if (b->kind == GG_XB_CR) {
                gg_xmargin *g = &B->m[0].g;
                memset(g, 0, sizeof *g);
                g->kind = GG_XM_CR;
                g->x = b->x;
                g->d = 1;
                g->k = b->map.k;
                g->xk = b->xk;
                g->F = b->F;
                g->map.k = g->map.kc = b->map.k;
                g->map.drop = -1;
                B->nm = 1;
            } else {
                B->nm = b->nmarg;
                for (int j = 0; j < b->nmarg; j++)
                    B->m[j].g = b->marg[j];
            }
            B->qT = 1;
            B->nnz = 1;
            for (int j = 0; j < B->nm; j++) {
                margin_setup(&B->m[j]);
                B->qT *= B->m[j].q;
                B->nnz *= B->m[j].nnz;
            }
            B->aug = map_shifts(&b->map);
            B->nnz += B->aug;
            nlocal++;
        } else {
            /* its own columns, mapped by the identity */
            B->dense = 1;
            B->nm = 0;
            B->qT = b->ncol;
            B->nnz = b->ncol;
            if (b->kind == GG_XB_DENSE) {
                B->cols = b->D;
            } else if (tp1_generated(b)) {
                B->gen = 1;
                ngen += b->ncol;
            } else {
                B->dcol = pd;
                pd += b->ncol;
            }
            nd += b->ncol;
        }
        B->q = B->qT + B->aug;
        Q += B->q;
        nnz += B->nnz;
        if (Q > GG_XS_MAX_Q || nnz > GG_XS_MAX_NNZ) {
            snprintf(why, nwhy, "%s beyond the sparse rows' limit (block %d)",
                     Q > GG_XS_MAX_Q ? "the bases' dimensions" : "the entries of a row", k + 1);
            free(BL);
            return 1;
        }
    }
    if (nlocal + ngen == 0) {
        snprintf(why, nwhy, "no basis is local");
        free(BL);
        return 1;
    }
    /* the local blocks' entries first, the dense ones after them */
    int q = 0, qd = Q - nd;
    for (int k = 0; k < plan->nblocks; k++)
        if (BL[k].dense) {
            BL[k].q0 = qd;
            qd += BL[k].q;
        } else {
            BL[k].q0 = q;
            q += BL[k].q;
        }
    size_t nR = 0;
    for (int k = 0; k < plan->nblocks; k++)
        if (BL[k].gen) {
            BL[k].roff = nR;
            nR += ((size_t) BL[k].b->nXu + 1) * (size_t) (BL[k].b->pp_deg + 1);
        }
    xs->nR = nR;
    xs->qd0 = Q - nd;
    xs->nd = nd;
    xs->ngen = ngen;
    xs->n = plan->n;
    xs->p = plan->p;
    xs->Q = Q;
    xs->nnz = nnz;
    xs->nblocks = plan->nblocks;
    xs->blocks = BL;
    xs->threads = plan->threads < 1 ? 1 : plan->threads;
    xs->pd = pd;
    xs->plan = plan;
    xs->M = calloc((size_t) Q * (size_t) plan->p, sizeof(double));
    int failed = xs->M == NULL;
    for (int k = 0; k < plan->nblocks && !failed; k++)
        failed = block_M(xs, &BL[k]) != 0 || (BL[k].gen && tp1_fold(&BL[k]) != 0);
    if (failed) {
        gg_xsparse_free(xs);
        return gg_fail(st, "gamgpu_host_oom", "out of memory (sparse model matrix)");
    }
    return 0;
}

int gg_xsparse_fill_dense(gg_xsparse *xs, gg_status *st)
{
    const size_t n = xs->n;
    if (xs->pd == 0)
        return 0;
    gg_xblock *sub = calloc((size_t) xs->nblocks, sizeof *sub);
    xs->D = malloc(n * (size_t) xs->pd * sizeof(double));
    if (sub == NULL || xs->D == NULL) {
        free(sub);
        return gg_fail(st, "gamgpu_host_oom",
                       "out of memory storing %d columns of %lu rows", xs->pd,
                       (unsigned long) n);
    }
    int nb = 0;
    for (int k = 0; k < xs->nblocks; k++) {
        gg_xs_block *B = &xs->blocks[k];
        if (!B->dense || B->gen || B->b->kind == GG_XB_DENSE)
            continue;
        sub[nb] = *B->b;
        sub[nb].col0 = B->dcol;
        B->cols = xs->D + n * (size_t) B->dcol;
        nb++;
    }
    gg_xplan part = *xs->plan;
    part.p = xs->pd;
    part.nblocks = nb;
    part.blocks = sub;
    const int rc = gg_xplan_fill(&part, 0, n, xs->D, n, st);
    free(sub);
    return rc;
}

/* ---- a row's entries ------------------------------------------------------- */

static int margin_row(const gg_xs_margin *m, size_t i, int *idx, double *val)
{
    const gg_xmargin *g = &m->g;
    const int k = g->k;
    int n = 0;
    switch (g->kind) {
    case GG_XM_CR: {
        const gg_bm_cr_row r = gg_bm_cr_locate(g->x[i], g->xk, k);
        idx[0] = r.j;         val[0] = r.a0;
        idx[1] = r.j + 1;     val[1] = r.a1;
        idx[2] = k + r.j;     val[2] = r.cm;
        idx[3] = k + r.j + 1; val[3] = r.cp;
        n = 4;
        break;
    }
    case GG_XM_CC: {
        /* gg_bm_cc_row's row as four entries */
        const double *xk = g->xk;
        const int nk = k + 1;
        const double x = gg_bm_cwrap(xk[0], xk[nk - 1], g->x[i]);
        int ir = nk - 1;
        for (int t = nk - 1; t >= 1; t--)
            if (x <= xk[t])
                ir = t;
        const int l = ir - 1, rr = ir == nk - 1 ? 0 : ir;
        const double h = xk[ir] - xk[l], a = xk[l + 1] - x, bb = x - xk[l];
        const double a3 = pow(a, 3.0), b3 = pow(bb, 3.0), h6 = 6 * h;
        const double cl = a3 / h6 - h * a / 6, cr = b3 / h6 - h * bb / 6;
        const double sl = a / h, sr = bb / h;
        if (l < rr) {
            idx[0] = l;      val[0] = sl;
            idx[1] = rr;     val[1] = sr;
            idx[2] = k + l;  val[2] = cl;
            idx[3] = k + rr; val[3] = cr;
        } else {
            idx[0] = rr;     val[0] = sr;
            idx[1] = l;      val[1] = sl;
            idx[2] = k + rr; val[2] = cr;
            idx[3] = k + l;  val[3] = cl;
        }
        n = 4;
        break;
    }
    case GG_XM_BSPL: {
        const double x = g->x[i];
        if (x < g->lo || x > g->hi) {
            const int r0 = x < g->lo ? 0 : 2;
            idx[0] = k + r0;     val[0] = 1.0;
            idx[1] = k + r0 + 1; val[1] = x - (x < g->lo ? g->lo : g->hi);
            n = 2;
            break;
        }
        double bv[GG_XMAX_ORD];
        const int curs = gg_bm_bspl_vals(x, g->xk, g->nk, g->ord, bv);
        if (curs < 0) {
            idx[0] = 0;
            val[0] = NAN;
            n = 1;
            break;
        }
        for (int j = 0; j < g->ord; j++) {
            idx[j] = curs - g->ord + j;
            val[j] = bv[j];
        }
        n = g->ord;
        break;
    }
    case GG_XM_CP: {
        double u[XS_CP_MAXK];
        gg_bm_cp_row(g->x[i], g->xk, g->nk, g->ord, g->lo, g->hi, u);
        for (int c = 0; c < k && n < m->nnz - m->aug; c++)
            if (u[c] != 0.0) {
                idx[n] = c;
                val[n] = u[c];
                n++;
            }
        break;
    }
    case GG_XM_CODE: {
        const int code = g->code[i];
        if (code >= 1 && code <= k) {
            idx[0] = code - 1;
            val[0] = 1.0;
            n = 1;
        }
        break;
    }
    case GG_XM_LINEAR:
        idx[0] = 0;
        val[0] = g->x[i];
        n = 1;
        break;
    default:
        break;
    }
    if (m->aug) {
        idx[n] = m->q - 1;
        val[n] = 1.0;
        n++;
    }
    return n;
}

/* Two doubles at a time where the compiler has vector types, elementwise
 * (the scalar loop's numbers), as gram_kernel.c */
#if defined(__GNUC__) || defined(__clang__)
#define XS_VEC 1
typedef double xs_v2d __attribute__((vector_size(16)));
static inline xs_v2d xs_ld2(const double *p)
{
    xs_v2d v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
static inline void xs_st2(double *p, xs_v2d v) { __builtin_memcpy(p, &v, sizeof v); }
#endif

/* x'y over m values, two lanes summed at the end */
static double dot(const double *x, const double *y, int m)
{
    int c = 0;
    double s = 0.0;
#ifdef XS_VEC
    xs_v2d acc = {0.0, 0.0};
    for (; c + 2 <= m; c += 2)
        acc += xs_ld2(x + c) * xs_ld2(y + c);
    s = acc[0] + acc[1];
#endif
    for (; c < m; c++)
        s += x[c] * y[c];
    return s;
}

/* out[c] = by sum_a t^a Tj[a nc + c] (c < nc), by Horner's rule */
static void tp1_horner(const double *Tj, int D, int nc, double t, double by, double *out)
{
    int c = 0;
#ifdef XS_VEC
    const xs_v2d tv = {t, t}, bv = {by, by};
    for (; c + 2 <= nc; c += 2) {
        xs_v2d v = xs_ld2(Tj + (size_t) D * nc + c);
        for (int a = D - 1; a >= 0; a--)
            v = v * tv + xs_ld2(Tj + (size_t) a * nc + c);
        xs_st2(out + c, v * bv);
    }
#endif
    for (; c < nc; c++) {
        double v = Tj[(size_t) D * nc + c];
        for (int a = D - 1; a >= 0; a--)
            v = v * t + Tj[(size_t) a * nc + c];
        out[c] = v * by;
    }
}

/* A generated block's row: its interval's powers of t, and by */
static int tp1_point(const gg_xs_block *B, size_t i, double *t, double *by);

/* Row i's dense entries, Q indices qd0 .. Q - 1, into d (nd values) */
static void row_dense(const gg_xsparse *xs, size_t i, double *d)
{
    for (int k = 0; k < xs->nblocks; k++) {
        const gg_xs_block *B = &xs->blocks[k];
        const gg_xblock *b = B->b;
        if (!B->dense)
            continue;
        double *out = d + (B->q0 - xs->qd0);
        const int nc = b->ncol;
        if (!B->gen) {
            const double *col = B->cols + i;
            for (int c = 0; c < nc; c++)
                out[c] = col[xs->n * (size_t) c];
            continue;
        }
        double t, by;
        const int j = tp1_point(B, i, &t, &by), D = b->pp_deg;
        tp1_horner(B->T + (size_t) j * (D + 1) * nc, D, nc, t, by, out);
    }
}

/* Row i's entries of the local blocks (indices below qd0, ascending) */
static int row_local(const gg_xsparse *xs, size_t i, int *idx, double *val)
{
    int n = 0;
    for (int k = 0; k < xs->nblocks; k++) {
        const gg_xs_block *B = &xs->blocks[k];
        const gg_xblock *b = B->b;
        int *bi = idx + n;
        double *bv = val + n;
        if (B->dense)
            continue;
        if (B->nm == 0) {
            bi[0] = B->q0;
            bv[0] = 1.0;
            n++;
            continue;
        }
        double by = 1.0;
        if (b->map.by != NULL)
            by = b->map.by[i];
        else if (b->map.by_code != NULL && b->map.by_code[i] != b->map.by_level)
            continue;
        /* the tensor product from the last margin towards the first, as
         * gg_bm_tensor_row multiplies */
        int mi[XS_MARG_NNZ];
        double mv[XS_MARG_NNZ];
        const int j0 = B->nm - 1;
        int len = margin_row(&B->m[j0], i, bi, bv);
        int stride = B->m[j0].q;
        for (int j = j0 - 1; j >= 0 && len > 0; j--) {
            const int mn = margin_row(&B->m[j], i, mi, mv);
            /* new entries e * len + c, written from the end so that the
             * old ones are read before they are overwritten */
            for (int e = mn - 1; e >= 0; e--)
                for (int c = len - 1; c >= 0; c--) {
                    bi[e * len + c] = mi[e] * stride + bi[c];
                    bv[e * len + c] = bv[c] * mv[e];
                }
            len *= mn;
            stride *= B->m[j].q;
        }
        if (b->map.by != NULL)
            for (int c = 0; c < len; c++)
                bv[c] *= by;
        for (int c = 0; c < len; c++)
            bi[c] += B->q0;
        if (B->aug) {
            bi[len] = B->q0 + B->qT;
            bv[len] = by;
            len++;
        }
        n += len;
    }
    return n;
}

int gg_xsparse_row(const gg_xsparse *xs, size_t i, int *idx, double *val)
{
    int n = row_local(xs, i, idx, val);
    if (xs->nd > 0) {
        row_dense(xs, i, val + n);
        for (int c = 0; c < xs->nd; c++)
            idx[n + c] = xs->qd0 + c;
        n += xs->nd;
    }
    return n;
}

/* ---- products through M ------------------------------------------------------ */

/* C (Q x k, leading dimension ldc) = M B, B p x k (ldb) */
static void m_times(const gg_xsparse *xs, const double *B, int ldb, int k, double *C, int ldc)
{
    const double one = 1.0, zero = 0.0;
    const int Q = xs->Q;
    for (int j = 0; j < k; j++)
        memset(C + (size_t) j * ldc, 0, (size_t) Q * sizeof(double));
    for (int t = 0; t < xs->nblocks; t++) {
        const gg_xs_block *Bk = &xs->blocks[t];
        int q = Bk->q, nc = Bk->b->ncol;
        if (q == 0 || nc == 0 || k == 0)
            continue;
        F77_CALL(dgemm)("N", "N", &q, &k, &nc, &one, xs->M + Bk->q0 + (size_t) Q * Bk->b->col0,
                        &Q, B + Bk->b->col0, &ldb, &zero, C + Bk->q0, &ldc FCONE FCONE);
    }
}

/* out (p x k, leading dimension ldo) = M' P, P Q x k (ldp) */
static void mt_times(const gg_xsparse *xs, const double *P, int ldp, int k, double *out,
                     int ldo)
{
    const double one = 1.0, zero = 0.0;
    const int Q = xs->Q;
    for (int t = 0; t < xs->nblocks; t++) {
        const gg_xs_block *Bk = &xs->blocks[t];
        int q = Bk->q, nc = Bk->b->ncol;
        if (nc == 0 || k == 0)
            continue;
        F77_CALL(dgemm)("T", "N", &nc, &k, &q, &one, xs->M + Bk->q0 + (size_t) Q * Bk->b->col0,
                        &Q, P + Bk->q0, &ldp, &zero, out + Bk->b->col0, &ldo FCONE FCONE);
    }
}

/* ---- the row passes ------------------------------------------------------------ */

typedef enum { XS_GRAM, XS_XBETA, XS_LEV, XS_XMUL, XS_XTMUL } xs_op;

typedef struct xs_job {
    const gg_xsparse *xs;
    xs_op op;
    size_t r0, r1;
    const double *w, *z, *off, *V;   /* rows' inputs (V: n x k) */
    const double *G;                 /* Q-space input: gamma (Q), VQ (Q x Q), C (Q x k) */
    const double *R;                 /* G's reduced tables (tp1_reduce), nR x k */
    int k;
    double *acc;                     /* the job's Q x Q (gram) or Q x k (xtmul) sums */
    double *bq, zwz;                 /* gram: the job's Q sums of w z s, z'Wz */
    double *out;                     /* n-rows outputs: eta, h, X B (n x k) */
    int stopped;
} xs_job;

/* The Gram pass over a job's rows: the local entries' products scattered
 * into acc's upper triangle (idx_a <= idx_b at idx_a + Q idx_b); the dense
 * entries' products with the local ones, and among themselves eight rows
 * at a time (gram_kernel.c's steps), into its lower triangle (the dense
 * index the row). */
static void xs_gram_run(xs_job *J)
{
    const gg_xsparse *xs = J->xs;
    const size_t Q = (size_t) xs->Q;
    const int nd = xs->nd, qd0 = xs->qd0;
    int idx[GG_XS_MAX_NNZ];
    double val[GG_XS_MAX_NNZ];
    double buf[8 * GG_XS_MAX_NNZ], wb[8];
    double *A = J->acc, *Add = J->acc + (size_t) qd0 * (Q + 1);
    double zwz = 0.0;
    int held = 0;
    for (size_t i = J->r0; i < J->r1; i++) {
        if ((i - J->r0) % XS_POLL == 0 && gg_interrupt_check()) {
            J->stopped = 1;
            break;
        }
        const double wi = J->w != NULL ? J->w[i] : 1.0;
        const int nz = row_local(xs, i, idx, val);
        for (int b = 0; b < nz; b++) {
            const double t = wi * val[b];
            double *col = A + (size_t) idx[b] * Q;
            for (int a = 0; a <= b; a++)
                col[idx[a]] += t * val[a];
        }
        double *d = buf + (size_t) held * nd;
        if (nd > 0) {
            row_dense(xs, i, d);
            for (int b = 0; b < nz; b++) {
                const double t = wi * val[b];
                double *col = A + (size_t) idx[b] * Q + qd0;
                for (int c = 0; c < nd; c++)
                    col[c] += t * d[c];
            }
            wb[held++] = wi;
            if (held == 8) {
                gg_gram_rows8(nd, buf, (size_t) nd, wb, Add, Q);
                held = 0;
            }
        }
        if (J->z != NULL) {
            const double wz = wi * J->z[i];
            for (int b = 0; b < nz; b++)
                J->bq[idx[b]] += wz * val[b];
            for (int c = 0; c < nd; c++)
                J->bq[qd0 + c] += wz * d[c];
            zwz += wz * J->z[i];
        }
    }
    for (int r = 0; r < held && !J->stopped; r++)
        gg_gram_rows1(nd, buf + (size_t) r * nd, wb[r], Add, Q);
    J->zwz = zwz;
}

/* R (nR values): each generated block's T times its part of G (Q values):
 * a row's product with G is then one Horner sum of D + 1 terms */
static void tp1_reduce(const gg_xsparse *xs, const double *G, double *R)
{
    for (int k = 0; k < xs->nblocks; k++) {
        const gg_xs_block *B = &xs->blocks[k];
        if (!B->gen)
            continue;
        const int nc = B->b->ncol, D1 = B->b->pp_deg + 1;
        const size_t rows = ((size_t) B->b->nXu + 1) * (size_t) D1;
        for (size_t r = 0; r < rows; r++) {
            const double *Tr = B->T + r * nc;
            double s = 0.0;
            for (int c = 0; c < nc; c++)
                s += Tr[c] * G[B->q0 + c];
            R[B->roff + r] = s;
        }
    }
}

/* x_i' M g for the k vectors G (Q x k) and their tables R (nR x k) into
 * out[i + n c] */
static void row_dots(const gg_xsparse *xs, size_t i, const double *G, const double *R, int k,
                     const double *off, double *out)
{
    int idx[GG_XS_MAX_NNZ];
    double val[GG_XS_MAX_NNZ];
    const size_t Q = (size_t) xs->Q, n = xs->n;
    const int nz = row_local(xs, i, idx, val);
    for (int c = 0; c < k; c++)
        out[i + n * (size_t) c] = 0.0;
    for (int kb = 0; kb < xs->nblocks; kb++) {
        const gg_xs_block *B = &xs->blocks[kb];
        if (!B->dense)
            continue;
        const int nc = B->b->ncol;
        if (!B->gen) {
            for (int c = 0; c < k; c++) {
                const double *Gc = G + Q * (size_t) c + B->q0;
                double e = 0.0;
                for (int a = 0; a < nc; a++)
                    e += B->cols[i + n * (size_t) a] * Gc[a];
                out[i + n * (size_t) c] += e;
            }
            continue;
        }
        double t, by;
        const int j = tp1_point(B, i, &t, &by), D = B->b->pp_deg;
        for (int c = 0; c < k; c++) {
            const double *Rj = R + xs->nR * (size_t) c + B->roff + (size_t) j * (D + 1);
            double v = Rj[D];
            for (int a = D - 1; a >= 0; a--)
                v = v * t + Rj[a];
            out[i + n * (size_t) c] += by * v;
        }
    }
    for (int c = 0; c < k; c++) {
        const double *Gc = G + Q * (size_t) c;
        double e = 0.0;
        for (int a = 0; a < nz; a++)
            e += val[a] * Gc[idx[a]];
        out[i + n * (size_t) c] += e;
        if (off != NULL)
            out[i + n * (size_t) c] += off[i];
    }
}

static void *xs_run(void *arg)
{
    xs_job *J = arg;
    if (J->op == XS_GRAM) {
        xs_gram_run(J);
        return NULL;
    }
    const gg_xsparse *xs = J->xs;
    const size_t Q = (size_t) xs->Q, n = xs->n;
    int idx[GG_XS_MAX_NNZ];
    double val[GG_XS_MAX_NNZ];
    double zwz = 0.0;
    for (size_t i = J->r0; i < J->r1; i++) {
        if ((i - J->r0) % XS_POLL == 0 && gg_interrupt_check()) {
            J->stopped = 1;
            break;
        }
        if (J->op == XS_XBETA || J->op == XS_XMUL) {
            row_dots(xs, i, J->G, J->R, J->op == XS_XBETA ? 1 : J->k, J->off, J->out);
            continue;
        }
        const int nz = gg_xsparse_row(xs, i, idx, val);
        switch (J->op) {
        case XS_GRAM: case XS_XBETA: case XS_XMUL:
            break;
        case XS_LEV: {
            /* the dense entries last, at qd0 onwards: their sums contiguous */
            const int nl = nz - xs->nd;
            const double *vd = val + nl;
            double s = 0.0;
            for (int b = 0; b < nz; b++) {
                const double *col = J->G + (size_t) idx[b] * Q;
                double t = 0.0;
                for (int a = 0; a < b && a < nl; a++)
                    t += val[a] * col[idx[a]];
                if (b > nl)
                    t += dot(vd, col + xs->qd0, b - nl);
                s += val[b] * (2 * t + val[b] * col[idx[b]]);
            }
            J->out[i] = J->w != NULL ? J->w[i] * s : s;
            break;
        }
        case XS_XTMUL:
            for (int c = 0; c < J->k; c++) {
                const double v = J->V[i + n * (size_t) c];
                double *P = J->acc + (size_t) c * Q;
                for (int a = 0; a < nz; a++)
                    P[idx[a]] += val[a] * v;
            }
            break;
        }
    }
    J->zwz = zwz;
    return NULL;
}

/* Runs op over fixed row ranges (the number of ranges depends on n only);
 * per-job sums of acc_len (and Q for bq) doubles each, added in job order
 * into the first job's. */
static int xs_pass(const gg_xsparse *xs, xs_job proto, size_t acc_len, const char *what,
                   double *acc_out, double *bq_out, double *zwz_out, gg_status *st)
{
    const size_t n = xs->n;
    int nj = (int) (n / 2048 + 1);
    if (nj > XS_JOBS)
        nj = XS_JOBS;
    xs_job *jobs = calloc((size_t) nj, sizeof *jobs);
    double *acc = NULL, *bq = NULL;
    if (jobs == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (%s)", what);
    const int with_bq = bq_out != NULL;
    if (acc_len > 0) {
        acc = calloc((size_t) nj * acc_len, sizeof(double));
        if (with_bq)
            bq = calloc((size_t) nj * (size_t) xs->Q, sizeof(double));
        if (acc == NULL || (with_bq && bq == NULL)) {
            free(jobs);
            free(acc);
            free(bq);
            return gg_fail(st, "gamgpu_host_oom", "out of memory (%s)", what);
        }
    }
    for (int j = 0; j < nj; j++) {
        jobs[j] = proto;
        jobs[j].r0 = n * (size_t) j / (size_t) nj;
        jobs[j].r1 = n * (size_t) (j + 1) / (size_t) nj;
        jobs[j].acc = acc != NULL ? acc + (size_t) j * acc_len : NULL;
        jobs[j].bq = bq != NULL ? bq + (size_t) j * xs->Q : NULL;
    }
    gg_run_jobs(nj, xs_run, jobs, sizeof *jobs);
    int stopped = 0;
    double zwz = 0.0;
    for (int j = 0; j < nj; j++) {
        stopped |= jobs[j].stopped;
        zwz += jobs[j].zwz;
    }
    if (!stopped && acc_len > 0) {
        for (int j = 1; j < nj; j++) {
            const double *a = acc + (size_t) j * acc_len;
            for (size_t e = 0; e < acc_len; e++)
                acc[e] += a[e];
            if (with_bq)
                for (int e = 0; e < xs->Q; e++)
                    bq[e] += bq[(size_t) j * xs->Q + e];
        }
        memcpy(acc_out, acc, acc_len * sizeof(double));
        if (with_bq)
            memcpy(bq_out, bq, (size_t) xs->Q * sizeof(double));
    }
    if (zwz_out != NULL)
        *zwz_out = zwz;
    free(jobs);
    free(acc);
    free(bq);
    if (stopped)
        return gg_interrupt_fail(st, what);
    return 0;
}

int gg_xsparse_gram(const gg_xsparse *xs, const double *w, const double *z, double *A,
                    double *b, double *zwz, gg_status *st)
{
    const size_t Q = (size_t) xs->Q;
    const int p = xs->p, q = xs->Q;
    double *AQ = malloc((Q * Q + Q + Q * (size_t) p) * sizeof(double));
    if (AQ == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the Gram product)");
    double *bq = AQ + Q * Q, *R = bq + Q;
    xs_job proto = {.xs = xs, .op = XS_GRAM, .w = w, .z = z};
    if (xs_pass(xs, proto, Q * Q, "the Gram product", AQ, z != NULL ? bq : NULL, zwz, st)) {
        free(AQ);
        return -1;
    }
    /* mirrored: the local entries' upper triangle, the dense rows' lower */
    for (size_t j = 0; j < Q; j++)
        for (size_t i = j + 1; i < Q; i++) {
            if (i < (size_t) xs->qd0)
                AQ[i + Q * j] = AQ[j + Q * i];
            else
                AQ[j + Q * i] = AQ[i + Q * j];
        }
    /* R = M' AQ (p x Q); A = M' R' = M' AQ M */
    double *Rt = malloc(Q * (size_t) p * sizeof(double));
    if (Rt == NULL) {
        free(AQ);
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the Gram product)");
    }
    mt_times(xs, AQ, q, q, R, p);
    for (int i = 0; i < p; i++)
        for (size_t j = 0; j < Q; j++)
            Rt[j + Q * (size_t) i] = R[i + (size_t) p * j];
    mt_times(xs, Rt, q, p, A, p);
    for (int j = 0; j < p; j++)              /* exactly symmetric, as the dense path's */
        for (int i = j + 1; i < p; i++)
            A[i + (size_t) p * j] = A[j + (size_t) p * i];
    if (z != NULL)
        mt_times(xs, bq, q, 1, b, p);
    free(Rt);
    free(AQ);
    return 0;
}

int gg_xsparse_xbeta(const gg_xsparse *xs, const double *beta, const double *offset,
                     double *eta, gg_status *st)
{
    double *g = malloc(((size_t) xs->Q + xs->nR) * sizeof(double));
    if (g == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (X beta)");
    m_times(xs, beta, xs->p, 1, g, xs->Q);
    tp1_reduce(xs, g, g + xs->Q);
    xs_job proto = {.xs = xs, .op = XS_XBETA, .off = offset, .G = g, .R = g + xs->Q,
                    .out = eta};
    const int rc = xs_pass(xs, proto, 0, "the linear predictor", NULL, NULL, NULL, st);
    free(g);
    return rc;
}

int gg_xsparse_leverage(const gg_xsparse *xs, const double *V, const double *w, double *h,
                        gg_status *st)
{
    const size_t Q = (size_t) xs->Q;
    const int p = xs->p, q = xs->Q;
    double *U = malloc((Q * (size_t) p * 2 + Q * Q) * sizeof(double));
    if (U == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the leverages)");
    double *Ut = U + Q * (size_t) p, *VQ = Ut + Q * (size_t) p;
    m_times(xs, V, p, p, U, q);              /* U = M V (Q x p) */
    for (size_t i = 0; i < Q; i++)
        for (int j = 0; j < p; j++)
            Ut[j + (size_t) p * i] = U[i + Q * (size_t) j];
    m_times(xs, Ut, p, q, VQ, q);            /* VQ = M (M V)' = M V M' */
    xs_job proto = {.xs = xs, .op = XS_LEV, .w = w, .G = VQ, .out = h};
    const int rc = xs_pass(xs, proto, 0, "the leverages", NULL, NULL, NULL, st);
    free(U);
    return rc;
}

int gg_xsparse_xmul(const gg_xsparse *xs, const double *B, int k, double *out, gg_status *st)
{
    if (k <= 0)
        return 0;
    double *C = malloc(((size_t) xs->Q + xs->nR) * (size_t) k * sizeof(double));
    if (C == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the product X B)");
    m_times(xs, B, xs->p, k, C, xs->Q);
    double *R = C + (size_t) xs->Q * k;
    for (int c = 0; c < k; c++)
        tp1_reduce(xs, C + (size_t) xs->Q * c, R + xs->nR * (size_t) c);
    xs_job proto = {.xs = xs, .op = XS_XMUL, .G = C, .R = R, .k = k, .out = out};
    const int rc = xs_pass(xs, proto, 0, "the product X B", NULL, NULL, NULL, st);
    free(C);
    return rc;
}

int gg_xsparse_xtmul(const gg_xsparse *xs, const double *V, int k, double *out,
                     gg_status *st)
{
    if (k <= 0)
        return 0;
    const size_t len = (size_t) xs->Q * (size_t) k;
    double *P = malloc(len * sizeof(double));
    if (P == NULL)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (the product X' V)");
    xs_job proto = {.xs = xs, .op = XS_XTMUL, .V = V, .k = k};
    if (xs_pass(xs, proto, len, "the product X' V", P, NULL, NULL, st)) {
        free(P);
        return -1;
    }
    mt_times(xs, P, xs->Q, k, out, xs->p);
    free(P);
    return 0;
}

/* ---- when to take it ------------------------------------------------------------ */

static int xs_mode = GG_XS_AUTO;

void gg_xsparse_set_mode(int mode) { xs_mode = mode; }
int  gg_xsparse_mode(void) { return xs_mode; }

int gg_xsparse_wanted(const gg_xsparse *xs)
{
    switch (xs_mode) {
    case GG_XS_ALWAYS:
        return 1;
    case GG_XS_NEVER:
        return 0;
    default:
        /* where thin plate columns are made per row, dense rows would store
         * them, n x p doubles, and fill them once: sparse rows are taken up
         * to a quarter more arithmetic (issue 40's three-tp model: cost
         * 1.03, 1e6 rows, reference BLAS: 6.6 s against 7.6 s, and no
         * 470 MB matrix) */
        return xs->n >= GG_XS_AUTO_ROWS &&
               gg_xsparse_cost(xs) <= (xs->ngen > 0 ? 1.25 : 1.0);
    }
}

double gg_xsparse_cost(const gg_xsparse *xs)
{
    /* a scattered multiply-add costs about four of the dense kernel's, an
     * AXPY between local and dense entries two */
    const double ns = xs->nnz - xs->nd, nd = xs->nd, p = xs->p;
    return (2 * ns * ns + 2 * ns * nd + nd * nd / 2) / (p * p / 2);
}
