/* xplan.c -- building rows of the model matrix on the host from its
 * recipe (xplan.h), over POSIX threads: the CPU backend's X, and the CPU
 * twin of the device build in basis.cu.  The cr/tp/te blocks call their
 * evaluators (basis_cr.c, basis_tprs.c); a margins block (any other
 * smooth) is evaluated here row by row from basis_math.h.  Pure C. */
#include "xplan.h"
#include "interrupt.h"
#include "threads.h"
#include "basis_math.h"

#include <stdlib.h>
#include <string.h>

typedef struct fill_job {
    const gg_xplan *plan;
    size_t          r0, rows;       /* this thread's rows of X */
    double         *out;            /* row r0 of the caller's block */
    size_t          ldo;
    int             failed, interrupted;
} fill_job;

/* The squared distance from knot l of margin g to the shifted row xx: a
 * tp margin's in double, as mgcv's C; a gp margin's as gpE's rowSums()
 * adds it, in long double (the device, without it, rounds each sum). */
static double knot_r2(const gg_xmargin *g, int l, const double *xx)
{
    if (g->kind == GG_XM_GP) {
        long double r2 = 0.0L;
        for (int j = 0; j < g->d; j++) {
            const double z = g->Xu[l + (size_t) g->nXu * j] - xx[j];
            r2 += z * z;
        }
        return (double) r2;
    }
    double r2 = 0.0;
    for (int j = 0; j < g->d; j++) {
        const double z = g->Xu[l + (size_t) g->nXu * j] - xx[j];
        r2 += z * z;
    }
    return r2;
}

/* Margin j's raw row for observation i into u (marg.k values). */
static void margin_raw(const gg_xmargin *g, size_t n, size_t i, double *u, const int *power,
                       int m, double eta0, double eta1)
{
    switch (g->kind) {
    case GG_XM_CR: {
        const gg_bm_cr_row r = gg_bm_cr_locate(g->x[i], g->xk, g->k);
        for (int c = 0; c < g->k; c++)
            u[c] = gg_bm_cr_value(&r, g->F, g->k, c);
        return;
    }
    case GG_XM_CC:
        gg_bm_cc_row(g->x[i], g->xk, g->k, g->F, u);
        return;
    case GG_XM_BSPL:
        gg_bm_bspl_row(g->x[i], g->xk, g->nk, g->ord, g->lo, g->hi, g->F, u);
        return;
    case GG_XM_CP:
        gg_bm_cp_row(g->x[i], g->xk, g->nk, g->ord, g->lo, g->hi, u);
        return;
    case GG_XM_CODE:
        gg_bm_code_row(g->code[i], g->k, u);
        return;
    case GG_XM_LINEAR:
        u[0] = g->x[i];
        return;
    case GG_XM_TPRS:
        if (g->pp_deg > 0) {
            gg_bm_tp1_row(g->x[i] - g->shift[0], g->pp_knots, g->nXu, g->pp_coef, g->k,
                          g->pp_deg, u, 1);
            return;
        }
        /* fall through */
    case GG_XM_GP: {
        /* b' UZ with the sum over b in order, as the TPRS block (and BLAS's
         * reference dgemv) takes it; gp's covariances for tp's eta, and its
         * null space through UZ's identity rows */
        double xx[GG_XMAX_TPRS_D];
        for (int j = 0; j < g->d; j++)
            xx[j] = g->x[(size_t) j * n + i] - g->shift[j];
        const int nb = g->nXu + g->M;
        for (int c = 0; c < g->k; c++)
            u[c] = 0.0;
        for (int l = 0; l < nb; l++) {
            double b;
            if (l < g->nXu) {
                b = gg_bm_radial(m, g->d, knot_r2(g, l, xx), eta0, eta1);
            } else {
                b = 1.0;
                for (int j = 0; j < g->d; j++)
                    for (int e = 0; e < power[(l - g->nXu) + g->M * j]; e++)
                        b *= xx[j];
            }
            for (int c = 0; c < g->k; c++)
                u[c] += g->UZ[(size_t) c * nb + l] * b;
        }
        return;
    }
    }
}

/* A GG_XB_MARG block's rows: each margin's raw row and map, their row
 * tensor product (basis_math.h), then the block's map. */
static int fill_marg(const gg_xblock *b, size_t n, size_t r0, size_t rows, double *dst,
                     size_t ldo)
{
    const int nm = b->nmarg;
    size_t need = 2 * (size_t) b->map.k;
    int *power[GG_XMAX_MARGINS] = {NULL};
    int order[GG_XMAX_MARGINS] = {0};
    double eta0[GG_XMAX_MARGINS] = {0}, eta1[GG_XMAX_MARGINS] = {0};
    for (int j = 0; j < nm; j++)
        need += 2 * (size_t) b->marg[j].k + (size_t) b->marg[j].map.kc;
    double *work = malloc(need * sizeof(double));
    int failed = work == NULL;
    for (int j = 0; j < nm && !failed; j++) {
        const gg_xmargin *g = &b->marg[j];
        if (g->kind != GG_XM_TPRS && g->kind != GG_XM_GP)
            continue;
        power[j] = malloc((size_t) g->M * (size_t) g->d * sizeof(int));
        if (power[j] == NULL) {
            failed = 1;
            continue;
        }
        if (g->kind == GG_XM_GP) {
            order[j] = -g->gp_type;
            eta0[j] = g->gp_rho;
            eta1[j] = g->gp_kp;
            gg_gp_null_space_powers(power[j], g->M, g->d);
        } else {
            order[j] = gg_tprs_order(g->m, g->d);
            eta0[j] = gg_tprs_eta_constant(order[j], g->d);
            gg_tprs_null_space_powers(power[j], g->M, order[j], g->d);
        }
    }
    if (!failed) {
        double *raw = work, *mid = raw + b->map.k, *p = mid + b->map.k;
        double *u[GG_XMAX_MARGINS], *v[GG_XMAX_MARGINS], *gmid[GG_XMAX_MARGINS];
        int kp[GG_XMAX_MARGINS];
        for (int j = 0; j < nm; j++) {
            u[j] = p;
            gmid[j] = p + b->marg[j].k;
            v[j] = gmid[j] + b->marg[j].k;
            p = v[j] + b->marg[j].map.kc;
            kp[j] = b->marg[j].map.kc;
        }
        for (size_t r = 0; r < rows; r++) {
            const size_t i = r0 + r;
            for (int j = 0; j < nm; j++) {
                const gg_xmargin *g = &b->marg[j];
                margin_raw(g, n, i, u[j], power[j], order[j], eta0[j], eta1[j]);
                gg_basis_map_row(&g->map, u[j], i, v[j], 1, 0, gmid[j]);
            }
            if (nm == 1)
                memcpy(raw, v[0], (size_t) kp[0] * sizeof(double));
            else
                gg_bm_tensor_row(nm, (const double *const *) v, kp, raw);
            gg_basis_map_row(&b->map, raw, i, dst, ldo, r, mid);
        }
    }
    for (int j = 0; j < nm; j++)
        free(power[j]);
    free(work);
    return failed ? -1 : 0;
}

static int fill_block(const gg_xblock *b, size_t n, size_t r0, size_t rows, double *out,
                      size_t ldo)
{
    double *dst = out + (size_t) b->col0 * ldo;
    switch (b->kind) {
    case GG_XB_DENSE:
        for (int c = 0; c < b->ncol; c++)
            memcpy(dst + (size_t) c * ldo, b->D + (size_t) c * n + r0, rows * sizeof(double));
        return 0;
    case GG_XB_ONES:
        for (int c = 0; c < b->ncol; c++)
            for (size_t i = 0; i < rows; i++)
                dst[(size_t) c * ldo + i] = 1.0;
        return 0;
    case GG_XB_CR: {
        double *work = malloc(2 * (size_t) b->map.k * sizeof(double));
        if (work == NULL)
            return -1;
        gg_cr_basis(b->x, r0, rows, b->xk, b->F, &b->map, dst, ldo, work);
        free(work);
        return 0;
    }
    case GG_XB_MARG:
        return fill_marg(b, n, r0, rows, dst, ldo);
    case GG_XB_TPRS:
        if (b->pp_deg > 0) {
            double *work = malloc(2 * (size_t) b->map.k * sizeof(double));
            if (work == NULL)
                return -1;
            gg_tp1_basis(b->x, b->shift[0], b->pp_knots, b->nXu, b->pp_coef, b->pp_deg,
                         &b->map, r0, rows, dst, ldo, work);
            free(work);
            return 0;
        }
        return gg_tprs_basis(b->x, n, b->d, b->shift, b->m, b->M, b->Xu, b->nXu, b->UZ,
                             &b->map, r0, rows, dst, ldo, 1);
    }
    return -1;
}

/* A job's rows in pieces of FILL_PIECE, every block of a piece in turn,
 * with a look for a user interrupt between pieces (a piece of a costly
 * thin-plate block is a tenth of a second of one core). */
#define FILL_PIECE 1024

static void *fill_rows(void *arg)
{
    fill_job *J = arg;
    for (size_t a = 0; a < J->rows && !J->failed; a += FILL_PIECE) {
        if (gg_interrupt_check()) {
            J->interrupted = 1;
            break;
        }
        const size_t m = J->rows - a < FILL_PIECE ? J->rows - a : FILL_PIECE;
        for (int k = 0; k < J->plan->nblocks && !J->failed; k++) {
            const int rc = fill_block(&J->plan->blocks[k], J->plan->n, J->r0 + a, m,
                                      J->out + a, J->ldo);
            if (rc == -2)
                J->interrupted = 1;
            if (rc)
                J->failed = 1;
        }
    }
    return NULL;
}

/* A row's work, in multiply-adds, where it is more than a few per column:
 * a thin plate or gp basis summed over its knots (no table) costs (knots
 * + M) x k; every other column, 1. */
static double row_work(const gg_xplan *plan)
{
    double w = 0;
    for (int b = 0; b < plan->nblocks; b++) {
        const gg_xblock *B = &plan->blocks[b];
        if (B->kind == GG_XB_TPRS && B->pp_deg == 0) {
            w += (double) (B->nXu + B->M) * B->ncol;
            continue;
        }
        if (B->kind == GG_XB_MARG) {
            double prod = 1;
            for (int j = 0; j < B->nmarg; j++) {
                const gg_xmargin *g = &B->marg[j];
                const int summed = (g->kind == GG_XM_TPRS && g->pp_deg == 0) ||
                                   g->kind == GG_XM_GP;
                prod *= summed ? (double) (g->nXu + g->M) * g->k : (double) g->k;
            }
            w += prod > B->ncol ? prod : B->ncol;
            continue;
        }
        w += B->ncol;
    }
    return w;
}

int gg_xplan_fill(const gg_xplan *plan, size_t r0, size_t rows, double *out, size_t ldo,
                  gg_status *st)
{
    int threads = plan->threads < 1 ? 1 : plan->threads;
    /* a thread gets at least a few thousand rows, or as many rows as make
     * 2^18 multiply-adds where each row sums over a basis's knots: below
     * that, starting it costs more than it saves */
    const double per = (double) rows * row_work(plan) / 262144.0;
    const size_t cap = rows / 4096 + 1 > per + 1 ? rows / 4096 + 1 : (size_t) (per + 1);
    if ((size_t) threads > cap)
        threads = (int) cap;
    fill_job *jobs = calloc((size_t) threads, sizeof *jobs);
    int failed = jobs == NULL;
    if (!failed) {
        for (int t = 0; t < threads; t++) {
            const size_t a = rows * (size_t) t / (size_t) threads;
            const size_t e = rows * (size_t) (t + 1) / (size_t) threads;
            jobs[t] = (fill_job) {plan, r0 + a, e - a, out + a, ldo, 0, 0};
        }
        gg_run_jobs(threads, fill_rows, jobs, sizeof *jobs);
        int interrupted = 0;
        for (int t = 0; t < threads; t++) {
            interrupted |= jobs[t].interrupted;
            failed |= jobs[t].failed && !jobs[t].interrupted;
        }
        if (interrupted && !failed) {
            free(jobs);
            return gg_interrupt_fail(st, "the model matrix's build");
        }
    }
    free(jobs);
    if (failed)
        return gg_fail(st, "gamgpu_host_oom",
                       "out of host memory building rows of the model matrix");
    return 0;
}

/* ---- a plan that outlives the .Call that read it ------------------------ */

int gg_xplan_clone(const gg_xplan *src, gg_xplan *dst)
{
    *dst = *src;
    dst->tables = NULL;
    dst->ntables = 0;
    const int nb = src->nblocks > 0 ? src->nblocks : 1;
    gg_xblock *B = calloc((size_t) nb, sizeof(gg_xblock));
    if (B == NULL) {
        dst->blocks = NULL;
        return -1;
    }
    memcpy(B, src->blocks, (size_t) src->nblocks * sizeof(gg_xblock));
    dst->blocks = B;
    for (int b = 0; b < src->nblocks; b++) {
        const int *co = src->blocks[b].map.col_of;
        B[b].map.col_of = NULL;
        if (co == NULL) continue;
        int *copy = malloc((size_t) (B[b].map.kc > 0 ? B[b].map.kc : 1) * sizeof(int));
        if (copy == NULL) {
            gg_xplan_clone_free(dst);
            return -1;
        }
        memcpy(copy, co, (size_t) B[b].map.kc * sizeof(int));
        B[b].map.col_of = copy;
    }
    return 0;
}

void gg_xplan_clone_free(gg_xplan *x)
{
    gg_xblock *B = (gg_xblock *) x->blocks;
    if (B != NULL)
        for (int b = 0; b < x->nblocks; b++) free((void *) B[b].map.col_of);
    free(B);
    x->blocks = NULL;
    x->nblocks = 0;
    for (int t = 0; t < x->ntables; t++) free(x->tables[t]);
    free(x->tables);
    x->tables = NULL;
    x->ntables = 0;
}

/* One basis's table into *knots, *coef, *deg (left as they are where it
 * has one, more than one variable or an order beyond the table's), its
 * two arrays owned by x. */
static int tp1_table_for(gg_xplan *x, int d, const double *Xu, int nXu, const double *UZ, int k,
                         int m, int M, const double **knots, const double **coef, int *deg,
                         int threads)
{
    const int D = gg_tp1_degree(m);
    if (d != 1 || *deg > 0 || D > 31 || nXu < 1)
        return 0;
    double **tab = realloc(x->tables, (size_t) (x->ntables + 2) * sizeof(double *));
    if (tab == NULL)
        return -1;
    x->tables = tab;
    double *kn = malloc((size_t) nXu * sizeof(double));
    double *co = malloc(((size_t) nXu + 1) * (size_t) k * (size_t) (D + 1) * sizeof(double));
    if (kn == NULL || co == NULL) {
        free(kn);
        free(co);
        return -1;
    }
    tab[x->ntables++] = kn;
    tab[x->ntables++] = co;
    const int rc = gg_tp1_table(Xu, nXu, UZ, k, m, M, kn, co, threads);
    if (rc != 0)
        return rc;
    *knots = kn;
    *coef = co;
    *deg = D;
    return 0;
}

int gg_xplan_tp1_tables(gg_xplan *x, int threads)
{
    gg_xblock *B = (gg_xblock *) x->blocks;
    for (int b = 0; b < x->nblocks; b++) {
        gg_xblock *xb = &B[b];
        int rc = 0;
        if (xb->kind == GG_XB_TPRS)
            rc = tp1_table_for(x, xb->d, xb->Xu, xb->nXu, xb->UZ, xb->map.k, xb->m, xb->M,
                               &xb->pp_knots, &xb->pp_coef, &xb->pp_deg, threads);
        for (int j = 0; rc == 0 && xb->kind == GG_XB_MARG && j < xb->nmarg; j++) {
            gg_xmargin *g = &xb->marg[j];
            if (g->kind == GG_XM_TPRS)
                rc = tp1_table_for(x, g->d, g->Xu, g->nXu, g->UZ, g->k, g->m, g->M,
                                   &g->pp_knots, &g->pp_coef, &g->pp_deg, threads);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}
