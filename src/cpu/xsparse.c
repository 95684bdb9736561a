/* xsparse.c -- the model matrix as sparse rows times a fixed map (see
 * xsparse.h): compiling a recipe into M, the generated blocks' folded
 * tables and the rows' layout; a row's entries; when the CPU backend takes
 * them.  The products through the rows: xsparse_pass.c. */
#include "xsparse.h"
#include "vec2.h"
#include "basis_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    double *w = malloc((2 * (size_t) k + (size_t) b->map.kc) * sizeof(double));
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
    if (B->lut == NULL || isnan(x))
        return gg_bm_tp1_locate(x, kn, K);
    if (x < kn[0])
        return 0;
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

int gg_xs_tp1_point(const gg_xs_block *B, size_t i, double *t, double *by)
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
        /* gg_bm_cc_row's row as four entries, ascending */
        const gg_bm_cc_pos c = gg_bm_cc_locate(g->x[i], g->xk, k);
        const double cl = c.a3 / c.h6 - c.s3, cr = c.b3 / c.h6 - c.s4;
        const int lo = c.l < c.r ? c.l : c.r, hi = c.l < c.r ? c.r : c.l;
        idx[0] = lo;     val[0] = c.l < c.r ? c.s5 : c.s6;
        idx[1] = hi;     val[1] = c.l < c.r ? c.s6 : c.s5;
        idx[2] = k + lo; val[2] = c.l < c.r ? cl : cr;
        idx[3] = k + hi; val[3] = c.l < c.r ? cr : cl;
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

/* out[c] = by sum_a t^a Tj[a nc + c] (c < nc), by Horner's rule */
static void tp1_horner(const double *Tj, int D, int nc, double t, double by, double *out)
{
    int c = 0;
#ifdef GG_VEC2
    const gg_v2d tv = {t, t}, bv = {by, by};
    for (; c + 2 <= nc; c += 2) {
        gg_v2d v = gg_ld2(Tj + (size_t) D * nc + c);
        for (int a = D - 1; a >= 0; a--)
            v = v * tv + gg_ld2(Tj + (size_t) a * nc + c);
        gg_st2(out + c, v * bv);
    }
#endif
    for (; c < nc; c++) {
        double v = Tj[(size_t) D * nc + c];
        for (int a = D - 1; a >= 0; a--)
            v = v * t + Tj[(size_t) a * nc + c];
        out[c] = v * by;
    }
}

/* Row i's dense entries, Q indices qd0 .. Q - 1, into d (nd values) */
void gg_xs_row_dense(const gg_xsparse *xs, size_t i, double *d)
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
        const int j = gg_xs_tp1_point(B, i, &t, &by), D = b->pp_deg;
        tp1_horner(B->T + (size_t) j * (D + 1) * nc, D, nc, t, by, out);
    }
}

/* Row i's entries of the local blocks (indices below qd0, ascending) */
int gg_xs_row_local(const gg_xsparse *xs, size_t i, int *idx, double *val)
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
    int n = gg_xs_row_local(xs, i, idx, val);
    if (xs->nd > 0) {
        gg_xs_row_dense(xs, i, val + n);
        for (int c = 0; c < xs->nd; c++)
            idx[n + c] = xs->qd0 + c;
        n += xs->nd;
    }
    return n;
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
