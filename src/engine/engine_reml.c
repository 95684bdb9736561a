/* engine_reml.c -- the fast REML criterion of a penalized working model and
 * its Newton optimizer (mgcv's Sl.fit / fast.REML.fit, on p x p summaries).
 *
 * For the working model (A = X'WX, b = X'Wz, zwz = z'Wz) and theta = (free
 * log smoothing parameters, log scale if estimated):
 *   V = [ (zwz - b'beta)/(phi gamma) + (n/gamma - Mp) log(2 pi phi)
 *         + Mp log(gamma) + log|A + S| - log|S|_+ ] / 2,
 *   beta = (A + S)^-1 b,  S = sum_k exp(rho_k) S_k,  rho = L theta + lsp0,
 * with exact gradient and Hessian.  The Newton iteration copies
 * fast.REML.fit: eigen-regularized Hessian, steps capped at 5, step halving,
 * and the same convergence tests, so the optimum and the reported score are
 * mgcv's. */
#define USE_FC_LEN_T
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#ifndef FCONE
#define FCONE
#endif

#include "engine_internal.h"
#include "threads.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GG_2PI 6.283185307179586476925286766559

/* Jobs spread over r->pool when there is one.  reml_value: the factor of
 * A + S with beta and the rss beside log|S|+.  reml_derivs: columns of P,
 * then each penalty's products, then each penalty's row of d2H and q.
 * Every job writes its own outputs only. */
enum reml_phase {
    JOB_P_COLUMNS,          /* reml_derivs: columns lo..hi-1 of P */
    JOB_PENALTY,            /* reml_derivs: penalties lo..hi-1's products */
    JOB_D2H,                /* reml_derivs: penalties lo..hi-1's rows of d2H, q */
    JOB_FACTOR,             /* reml_value: factor of A + S, beta, rss */
    JOB_LOGDET_S            /* reml_value: log|S|+ */
};

typedef struct reml_job {
    gg_reml *r;
    gg_reml_pt *out;
    int lo, hi;
    enum reml_phase phase;
    int rc;                 /* JOB_FACTOR, JOB_LOGDET_S: failure and why */
    gg_status st;
} reml_job;

static int pt_alloc(gg_reml_pt *q, int p, int m, int nth)
{
    memset(q, 0, sizeof *q);
    size_t n1 = nth > 0 ? (size_t) nth : 1, mm = m > 0 ? (size_t) m : 1;
    q->theta = calloc(n1, sizeof(double));
    q->grad = calloc(n1, sizeof(double));
    q->hess = calloc(n1 * n1, sizeof(double));
    q->beta = calloc((size_t) p, sizeof(double));
    q->P = calloc((size_t) p * p, sizeof(double));
    q->PSkb = calloc((size_t) p * mm, sizeof(double));
    return (q->theta && q->grad && q->hess && q->beta && q->P && q->PSkb) ? 0 : -1;
}

static void pt_free(gg_reml_pt *q)
{
    free(q->theta); free(q->grad); free(q->hess); free(q->beta); free(q->P); free(q->PSkb);
    memset(q, 0, sizeof *q);
}

void gg_reml_free(gg_reml *r)
{
    gg_pen_free(&r->pen);
    gg_pchol_free(&r->ch);
    free(r->H); free(r->lam); free(r->rho_full); free(r->Skb); free(r->PS);
    free(r->d1S); free(r->d2S); free(r->d1H); free(r->d2H); free(r->bSb1); free(r->q);
    free(r->gfull); free(r->hfull); free(r->PSoff); free(r->Skboff);
    free(r->N); free(r->PN); free(r->NPN); free(r->Pml);
    pt_free(&r->pt[0]);
    pt_free(&r->pt[1]);
    gg_pool_free(r->pool);
    free(r->jobs);
    memset(r, 0, sizeof *r);
}

int gg_reml_alloc(gg_reml *r, const gg_penalties *pin, int p, int phi_fixed,
                  double phi_known, double nobs, double gamma, int nthreads,
                  gg_status *st)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->m = pin->m;
    r->nsp = pin->nsp;
    r->nth = pin->nsp + (phi_fixed ? 0 : 1);
    r->pin = pin;
    r->phi_fixed = phi_fixed;
    r->phi_known = phi_known;
    r->nobs = nobs;
    r->nobs_scale = nobs;
    r->gamma = gamma;
    if (pin->L == NULL && pin->nsp != pin->m)
        return gg_fail(st, "gamgpu_bad_input", "no L matrix but %d free smoothing "
                       "parameters for %d penalties", pin->nsp, pin->m);
    if (gg_pen_setup(&r->pen, pin, p, st)) return -1;
    r->Mp = p - r->pen.total_rank;
    const int m = r->m;
    size_t mm = m > 0 ? (size_t) m : 1, m1 = (size_t) m + 1;
    size_t sumdim = 0;
    for (int k = 0; k < m; k++) sumdim += (size_t) pin->dim[k];
    r->H = malloc((size_t) p * p * sizeof(double));
    r->lam = malloc(mm * sizeof(double));
    r->rho_full = malloc(mm * sizeof(double));
    r->Skb = malloc((sumdim ? sumdim : 1) * sizeof(double));
    r->PS = malloc((sumdim ? sumdim : 1) * (size_t) p * sizeof(double));
    r->PSoff = malloc(mm * sizeof(size_t));
    r->Skboff = malloc(mm * sizeof(size_t));
    r->d1S = malloc(mm * sizeof(double));
    r->d2S = malloc(mm * mm * sizeof(double));
    r->d1H = malloc(mm * sizeof(double));
    r->d2H = malloc(mm * mm * sizeof(double));
    r->bSb1 = malloc(mm * sizeof(double));
    r->q = malloc(mm * mm * sizeof(double));
    r->gfull = malloc(m1 * sizeof(double));
    r->hfull = malloc(m1 * m1 * sizeof(double));
    if (!r->H || !r->lam || !r->rho_full || !r->Skb || !r->PS || !r->PSoff ||
        !r->Skboff || !r->d1S || !r->d2S || !r->d1H || !r->d2H || !r->bSb1 || !r->q ||
        !r->gfull || !r->hfull)
        return gg_fail(st, "gamgpu_host_oom", "out of memory (REML workspace)");
    size_t o = 0;
    for (int k = 0; k < m; k++) {
        r->Skboff[k] = o;
        r->PSoff[k] = o * (size_t) p;
        o += (size_t) pin->dim[k];
    }
    if (gg_pchol_alloc(&r->ch, p, st)) return -1;
    if (pt_alloc(&r->pt[0], p, m, r->nth) || pt_alloc(&r->pt[1], p, m, r->nth))
        return gg_fail(st, "gamgpu_host_oom", "out of memory (REML points)");
    /* a pool only where it pays: below p = 128 (or 4 threads) the serial
     * dpotri inverse beats three times its flops spread over threads */
    int nt = nthreads < p / 32 ? nthreads : p / 32;
    if (nt >= 4) r->pool = gg_pool_new(nt);
    r->jobs = malloc((size_t) gg_pool_size(r->pool) * sizeof(reml_job));
    if (!r->jobs) return gg_fail(st, "gamgpu_host_oom", "out of memory (REML jobs)");
    return 0;
}

int gg_reml_ml_setup(gg_reml *r, gg_status *st)
{
    const gg_penalties *pin = r->pin;
    const int p = r->p, Mp = r->Mp;
    r->ml = 1;
    if (Mp <= 0)
        return 0;           /* no null space: log|B'HB| = log|H| */
    /* the null space of sum_k S_k / ||S_k||_F (scaled so that no penalty's
     * size hides another's range) */
    double *St = calloc((size_t) p * p, sizeof(double));
    double *ev = malloc((size_t) p * sizeof(double));
    double *U = malloc((size_t) p * p * sizeof(double));
    r->N = malloc((size_t) p * Mp * sizeof(double));
    r->PN = malloc((size_t) p * Mp * sizeof(double));
    r->NPN = malloc((size_t) Mp * Mp * sizeof(double));
    r->Pml = malloc((size_t) p * p * sizeof(double));
    int rc = 0;
    if (!St || !ev || !U || !r->N || !r->PN || !r->NPN || !r->Pml) {
        rc = gg_fail(st, "gamgpu_host_oom", "out of memory (ML workspace)");
        goto done;
    }
    for (int k = 0; k < r->m; k++) {
        const int d = pin->dim[k], o = pin->off[k];
        double fro = 0;
        for (size_t i = 0; i < (size_t) d * d; i++) fro += pin->S[k][i] * pin->S[k][i];
        fro = sqrt(fro);
        if (fro == 0) continue;
        for (int j = 0; j < d; j++)
            for (int i = 0; i < d; i++)
                St[(o + i) + (size_t) (o + j) * p] += pin->S[k][i + (size_t) j * d] / fro;
    }
    if ((rc = gg_eigen_sym(p, St, ev, U, st))) goto done;
    /* decreasing eigenvalues: the last Mp vectors span the null space */
    memcpy(r->N, U + (size_t) (p - Mp) * p, (size_t) p * Mp * sizeof(double));
done:
    free(St); free(ev); free(U);
    return rc;
}

void gg_reml_rho_full(const gg_reml *r, const double *theta, double *rho_full)
{
    const gg_penalties *pin = r->pin;
    for (int k = 0; k < r->m; k++) {
        double v = pin->lsp0 ? pin->lsp0[k] : 0.0;
        if (pin->L) {
            for (int j = 0; j < r->nsp; j++) v += pin->L[k + (size_t) j * r->m] * theta[j];
        } else {
            v += theta[k];
        }
        rho_full[k] = v;
    }
}

int gg_reml_theta_from_full(const gg_reml *r, const double *rho_full, double *theta,
                            gg_status *st)
{
    const gg_penalties *pin = r->pin;
    const int m = r->m, ns = r->nsp;
    if (ns == 0) return 0;
    if (pin->L == NULL) {
        for (int k = 0; k < m; k++) theta[k] = rho_full[k] - (pin->lsp0 ? pin->lsp0[k] : 0.0);
        return 0;
    }
    /* normal equations (L'L) t = L'(rho - lsp0) */
    double *G = calloc((size_t) ns * ns, sizeof(double));
    double *h = calloc((size_t) ns, sizeof(double));
    gg_pchol c;
    int rc = 0;
    if (!G || !h) { free(G); free(h); return gg_fail(st, "gamgpu_host_oom", "out of memory"); }
    for (int i = 0; i < ns; i++) {
        for (int j = 0; j < ns; j++) {
            double s = 0;
            for (int k = 0; k < m; k++) s += pin->L[k + (size_t) i * m] * pin->L[k + (size_t) j * m];
            G[i + (size_t) j * ns] = s;
        }
        double s = 0;
        for (int k = 0; k < m; k++)
            s += pin->L[k + (size_t) i * m] * (rho_full[k] - (pin->lsp0 ? pin->lsp0[k] : 0.0));
        h[i] = s;
    }
    rc = gg_pchol_alloc(&c, ns, st);
    if (rc == 0) rc = gg_pchol_factor(&c, G, st);
    if (rc == 0) gg_pchol_solve(&c, h, theta);
    gg_pchol_free(&c);
    free(G); free(h);
    return rc;
}

/* reml_value's first half: H = A + S_lambda, its factor (left in r->ch),
 * beta and the residual sums of squares. */
static int value_factor(gg_reml *r, gg_reml_pt *out, gg_status *st)
{
    const gg_penalties *pin = r->pin;
    const int p = r->p, m = r->m, one = 1;
    const double done = 1.0, dzero = 0.0;
    memcpy(r->H, r->A, (size_t) p * p * sizeof(double));
    for (int k = 0; k < m; k++) {
        int d = pin->dim[k], o = pin->off[k];
        for (int j = 0; j < d; j++)
            for (int i = 0; i < d; i++)
                r->H[(o + i) + (size_t) (o + j) * p] += r->lam[k] * pin->S[k][i + (size_t) j * d];
    }
    if (gg_pchol_factor(&r->ch, r->H, st)) return -1;
    out->rank = r->ch.rank;
    out->ldetH = r->ch.ldet;
    gg_pchol_solve(&r->ch, r->b, out->beta);

    double bb = 0, bAb = 0;
    for (int i = 0; i < p; i++) bb += r->b[i] * out->beta[i];
    {
        double *Ab = r->ch.work;   /* 2p scratch; solve is done */
        F77_CALL(dsymv)("U", &p, &done, r->A, &p, out->beta, &one, &dzero, Ab, &one FCONE);
        for (int i = 0; i < p; i++) bAb += out->beta[i] * Ab[i];
    }
    out->rss_bSb = r->zwz - bb;
    out->rss = r->zwz - 2 * bb + bAb;
    if (out->rss < 0) out->rss = 0;
    return 0;
}

/* reml_value's second half: log|S|+ and its derivatives (r->d1S, r->d2S). */
static int value_pen(gg_reml *r, gg_reml_pt *out, gg_status *st)
{
    double ldetS = 0;
    if (gg_pen_ldet(&r->pen, r->lam, &ldetS, r->d1S, r->d2S, st)) return -1;
    out->ldetS = ldetS;
    return 0;
}

/* ML: log|B'HB| = log|H| + log|N'H^-1 N| for [B N] orthogonal (the
 * Schur complement of the null block), left in out->ldetH; PN = H^-1 N and
 * the Cholesky factor of N'PN stay for reml_derivs. */
static int ml_ldet(gg_reml *r, gg_reml_pt *out, gg_status *st)
{
    const int p = r->p, Mp = r->Mp;
    const double done = 1.0, dzero = 0.0;
    if (r->ch.rank < p)
        return gg_fail(st, "gamgpu_unsupported_method",
                       "method = \"ML\" needs a model of full rank (rank %d of %d): "
                       "use method = \"REML\"", r->ch.rank, p);
    for (int j = 0; j < Mp; j++)
        gg_pchol_solve(&r->ch, r->N + (size_t) j * p, r->PN + (size_t) j * p);
    F77_CALL(dgemm)("T", "N", &Mp, &Mp, &p, &done, r->N, &p, r->PN, &p, &dzero, r->NPN, &Mp
                    FCONE FCONE);
    int info = 0;
    F77_CALL(dpotrf)("L", &Mp, r->NPN, &Mp, &info FCONE);
    if (info != 0)
        return gg_fail(st, "gamgpu_numerical", "ML: N'H^-1 N is not positive definite");
    double ld = 0;
    for (int j = 0; j < Mp; j++) ld += 2 * log(r->NPN[j + (size_t) j * Mp]);
    out->ldetH += ld;
    return 0;
}

static void *reml_job_run(void *arg);

/* The score at theta: factor A + S, beta, rss, log|S|+ (and its
 * derivatives, which are cheap) -- the two at once on the pool.  Leaves
 * the factorization in r->ch for reml_derivs. */
static int reml_value(gg_reml *r, const double *theta, gg_reml_pt *out, gg_status *st)
{
    const int m = r->m, nsp = r->nsp, nth = r->nth;
    for (int i = 0; i < nth; i++) out->theta[i] = theta[i];
    gg_reml_rho_full(r, theta, r->rho_full);
    for (int k = 0; k < m; k++) {
        r->lam[k] = exp(r->rho_full[k]);
        if (!isfinite(r->lam[k]) || r->lam[k] <= 0)
            r->lam[k] = r->rho_full[k] > 0 ? DBL_MAX / 1e10 : DBL_MIN * 1e10;
    }
    double phi = r->phi_fixed ? r->phi_known : exp(theta[nsp]);
    out->phi = phi;
    const double pg = phi * r->gamma;

    if (r->pool != NULL) {
        for (int t = 0; t < 2; t++) {
            reml_job *jb = &r->jobs[t];
            jb->r = r;
            jb->out = out;
            jb->phase = t == 0 ? JOB_FACTOR : JOB_LOGDET_S;
            jb->rc = 0;
            gg_status_clear(&jb->st);
        }
        gg_pool_run(r->pool, 2, reml_job_run, r->jobs, sizeof(reml_job));
        for (int t = 0; t < 2; t++)
            if (r->jobs[t].rc) {
                *st = r->jobs[t].st;
                return -1;
            }
    } else if (value_factor(r, out, st) || value_pen(r, out, st)) {
        return -1;
    }

    if (r->N != NULL && ml_ldet(r, out, st))
        return -1;
    /* ML: no Mp term (gam.fit3's remlInd = 0) */
    const double n = r->nobs, g = r->gamma, Mp = r->ml ? 0.0 : (double) r->Mp;
    out->V = (out->rss_bSb / pg + (n / g - Mp) * log(GG_2PI * phi) + Mp * log(g) +
              out->ldetH - out->ldetS) / 2;
    if (!isfinite(out->V))
        return gg_fail(st, "gamgpu_numerical", "non-finite REML score");
    return 0;
}

static void *reml_job_run(void *arg)
{
    const reml_job *jb = arg;
    gg_reml *r = jb->r;
    gg_reml_pt *out = jb->out;
    const gg_penalties *pin = r->pin;
    const int p = r->p, m = r->m, one = 1;
    const double done = 1.0, dzero = 0.0;
    if (jb->phase == JOB_P_COLUMNS) {
        gg_pchol_inverse_cols(&r->ch, jb->lo, jb->hi, out->P);
        return NULL;
    }
    if (jb->phase == JOB_FACTOR || jb->phase == JOB_LOGDET_S) {
        reml_job *w = arg;
        w->rc = jb->phase == JOB_FACTOR ? value_factor(r, out, &w->st)
                                        : value_pen(r, out, &w->st);
        return NULL;
    }
    for (int k = jb->lo; k < jb->hi; k++) {
        if (jb->phase == JOB_PENALTY) {
            int d = pin->dim[k], o = pin->off[k];
            double *Skb = r->Skb + r->Skboff[k];
            double *PS = r->PS + r->PSoff[k];
            double lk = r->lam[k];
            F77_CALL(dgemv)("N", &d, &d, &lk, pin->S[k], &d, out->beta + o, &one, &dzero,
                            Skb, &one FCONE);
            double s = 0;
            for (int i = 0; i < d; i++) s += out->beta[o + i] * Skb[i];
            r->bSb1[k] = s;
            /* the log determinant's derivatives: P, or for ML Pml */
            const double *Pd = r->N != NULL ? r->Pml : out->P;
            F77_CALL(dgemm)("N", "N", &p, &d, &d, &lk, Pd + (size_t) o * p, &p, pin->S[k],
                            &d, &dzero, PS, &p FCONE FCONE);
            double tr = 0;
            for (int i = 0; i < d; i++) tr += PS[(o + i) + (size_t) i * p];
            r->d1H[k] = tr;
            /* PSkb_k = P[:, Ik] Skb_k */
            F77_CALL(dgemv)("N", &p, &d, &done, out->P + (size_t) o * p, &p, Skb, &one, &dzero,
                            out->PSkb + (size_t) k * p, &one FCONE);
            continue;
        }
        /* JOB_D2H: d2H[j, k] = -tr(P S_j P S_k) (+ d1H_k on the diagonal) and
         * q[j, k] = beta'S_j P S_k beta, for j <= k */
        for (int j = 0; j <= k; j++) {
            int dk = pin->dim[k], dj = pin->dim[j], ok = pin->off[k], oj = pin->off[j];
            const double *PSj = r->PS + r->PSoff[j], *PSk = r->PS + r->PSoff[k];
            double t = 0;
            for (int a = 0; a < dk; a++)
                for (int c = 0; c < dj; c++)
                    t += PSj[(ok + a) + (size_t) c * p] * PSk[(oj + c) + (size_t) a * p];
            double v = -t + (j == k ? r->d1H[k] : 0.0);
            r->d2H[j + (size_t) k * m] = r->d2H[k + (size_t) j * m] = v;
            const double *Skbj = r->Skb + r->Skboff[j], *PSkbk = out->PSkb + (size_t) k * p;
            double qq = 0;
            for (int c = 0; c < dj; c++) qq += Skbj[c] * PSkbk[oj + c];
            r->q[j + (size_t) k * m] = r->q[k + (size_t) j * m] = qq;
        }
    }
    return NULL;
}

/* Split [0, total) into at most `parts` jobs of one phase. */
static int reml_jobs(gg_reml *r, gg_reml_pt *out, enum reml_phase phase, int total, int parts)
{
    if (parts > total) parts = total;
    if (parts < 1) parts = 1;
    for (int t = 0; t < parts; t++) {
        reml_job *jb = &r->jobs[t];
        jb->r = r;
        jb->out = out;
        jb->phase = phase;
        jb->lo = (int) ((long) total * t / parts);
        jb->hi = (int) ((long) total * (t + 1) / parts);
    }
    return parts;
}

/* Columns of P in at most `parts` jobs of about equal work: column j of a
 * rank-r factor costs about (r - j)^2 + r^2 (its two triangular solves). */
static int inverse_jobs(gg_reml *r, gg_reml_pt *out, int parts)
{
    const int rank = r->ch.rank;
    if (parts > rank) parts = rank;
    if (parts < 1) parts = 1;
    double total = 0;
    for (int j = 0; j < rank; j++)
        total += (double) (rank - j) * (rank - j) + (double) rank * rank;
    double acc = 0;
    int t = 0, lo = 0;
    for (int j = 0; j < rank && t < parts - 1; j++) {
        acc += (double) (rank - j) * (rank - j) + (double) rank * rank;
        if (acc >= total * (t + 1) / parts) {
            r->jobs[t] = (reml_job) {.r = r, .out = out, .lo = lo, .hi = j + 1,
                                     .phase = JOB_P_COLUMNS};
            lo = j + 1;
            t++;
        }
    }
    r->jobs[t] = (reml_job) {.r = r, .out = out, .lo = lo, .hi = rank, .phase = JOB_P_COLUMNS};
    return t + 1;
}

/* P = (A + S)^+ and the exact gradient and Hessian at the point reml_value
 * just evaluated (its factorization is still in r->ch).  Newton needs them
 * only at accepted points, so rejected trial steps never pay for them. */
static void reml_derivs(gg_reml *r, gg_reml_pt *out)
{
    const gg_penalties *pin = r->pin;
    const int p = r->p, m = r->m, nsp = r->nsp, nth = r->nth;
    const double phi = out->phi, pg = phi * r->gamma;
    const int nt = gg_pool_size(r->pool);
    int nj;
    if (r->pool != NULL) {
        /* P by column blocks of triangular solves (about three times
         * dpotri's flops, spread over the pool) */
        memset(out->P, 0, (size_t) p * p * sizeof(double));
        nj = inverse_jobs(r, out, nt);
        gg_pool_run(r->pool, nj, reml_job_run, r->jobs, sizeof(reml_job));
    } else {
        gg_pchol_inverse(&r->ch, out->P);
    }
    if (r->N != NULL) {
        /* Pml = P - PN (N'PN)^-1 PN' = P - Y Y', Y = PN L^-T (L L' = N'PN) */
        const int Mp = r->Mp;
        const double done = 1.0, dmone = -1.0;
        memcpy(r->Pml, out->P, (size_t) p * p * sizeof(double));
        F77_CALL(dtrsm)("R", "L", "T", "N", &p, &Mp, &done, r->NPN, &Mp, r->PN, &p
                        FCONE FCONE FCONE FCONE);
        F77_CALL(dsyrk)("U", "N", &p, &Mp, &dmone, r->PN, &p, &done, r->Pml, &p FCONE FCONE);
        for (int j = 0; j < p; j++)
            for (int i = j + 1; i < p; i++)
                r->Pml[i + (size_t) j * p] = r->Pml[j + (size_t) i * p];
    }
    nj = reml_jobs(r, out, JOB_PENALTY, m, nt);
    gg_pool_run(r->pool, nj, reml_job_run, r->jobs, sizeof(reml_job));
    nj = reml_jobs(r, out, JOB_D2H, m, nt);
    gg_pool_run(r->pool, nj, reml_job_run, r->jobs, sizeof(reml_job));

    const double n = r->nobs, g = r->gamma, Mp = r->ml ? 0.0 : (double) r->Mp;

    /* full gradient/Hessian in (rho_full, log phi) */
    const int mf = m + (r->phi_fixed ? 0 : 1);
    for (int k = 0; k < m; k++) {
        r->gfull[k] = (r->d1H[k] - r->d1S[k] + r->bSb1[k] / pg) / 2;
        for (int j = 0; j < m; j++)
            r->hfull[j + (size_t) k * mf] =
                (r->d2H[j + (size_t) k * m] - r->d2S[j + (size_t) k * m] +
                 ((j == k ? r->bSb1[k] : 0.0) - 2 * r->q[j + (size_t) k * m]) / pg) / 2;
    }
    if (!r->phi_fixed) {
        r->gfull[m] = (-out->rss_bSb / pg + n / g - Mp) / 2;
        for (int k = 0; k < m; k++)
            r->hfull[k + (size_t) m * mf] = r->hfull[m + (size_t) k * mf] =
                -r->bSb1[k] / (2 * pg);
        r->hfull[m + (size_t) m * mf] = out->rss_bSb / (2 * pg);
    }
    /* chain rule through L: theta = (t_1..t_nsp [, log phi]) */
    for (int a = 0; a < nth; a++) {
        int afull = a < nsp ? -1 : m;
        double s = 0;
        if (afull >= 0) s = r->gfull[m];
        else for (int k = 0; k < m; k++)
            s += (pin->L ? pin->L[k + (size_t) a * m] : (k == a)) * r->gfull[k];
        out->grad[a] = s;
    }
    for (int a = 0; a < nth; a++)
        for (int c = 0; c <= a; c++) {
            double s = 0;
            for (int k = 0; k < mf; k++) {
                double la = a < nsp ? (k < m ? (pin->L ? pin->L[k + (size_t) a * m] : (k == a)) : 0.0)
                                    : (k == m);
                if (la == 0) continue;
                for (int j = 0; j < mf; j++) {
                    double lc = c < nsp ? (j < m ? (pin->L ? pin->L[j + (size_t) c * m] : (j == c)) : 0.0)
                                        : (j == m);
                    if (lc == 0) continue;
                    s += la * r->hfull[k + (size_t) j * mf] * lc;
                }
            }
            out->hess[a + (size_t) c * nth] = out->hess[c + (size_t) a * nth] = s;
        }
}

int gg_reml_eval(gg_reml *r, const double *theta, gg_reml_pt *out, gg_status *st)
{
    if (reml_value(r, theta, out, st)) return -1;
    reml_derivs(r, out);
    return 0;
}

/* Newton step restricted to the components flagged in `use`:
 * eigen-regularized as fast.REML.fit (|ev|, floored at max|ev| sqrt(eps)). */
static int newton_step(int nth, const double *grad, const double *hess, const int *use,
                       double *step, gg_status *st)
{
    int nu = 0;
    for (int i = 0; i < nth; i++) if (use[i]) nu++;
    for (int i = 0; i < nth; i++) step[i] = 0;
    if (nu == 0) return 0;
    int *idx = malloc((size_t) nu * sizeof(int));
    double *h = malloc((size_t) nu * nu * sizeof(double));
    double *ev = malloc((size_t) nu * sizeof(double));
    double *U = malloc((size_t) nu * nu * sizeof(double));
    double *t = malloc((size_t) nu * sizeof(double));
    int rc = 0;
    if (!idx || !h || !ev || !U || !t) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory"); goto done; }
    nu = 0;
    for (int i = 0; i < nth; i++) if (use[i]) idx[nu++] = i;
    for (int j = 0; j < nu; j++)
        for (int i = 0; i < nu; i++) h[i + (size_t) j * nu] = hess[idx[i] + (size_t) idx[j] * nth];
    if ((rc = gg_eigen_sym(nu, h, ev, U, st))) goto done;
    double mx = 0;
    for (int i = 0; i < nu; i++) { ev[i] = fabs(ev[i]); if (ev[i] > mx) mx = ev[i]; }
    double thr = mx * sqrt(DBL_EPSILON);
    for (int i = 0; i < nu; i++) if (ev[i] < thr) ev[i] = thr;
    for (int i = 0; i < nu; i++) {
        double s = 0;
        for (int j = 0; j < nu; j++) s += U[j + (size_t) i * nu] * grad[idx[j]];
        t[i] = ev[i] > 0 ? s / ev[i] : 0;
    }
    double ms = 0;
    for (int j = 0; j < nu; j++) {
        double s = 0;
        for (int i = 0; i < nu; i++) s += U[j + (size_t) i * nu] * t[i];
        step[idx[j]] = -s;
        if (fabs(s) > ms) ms = fabs(s);
    }
    if (ms > 5) for (int i = 0; i < nth; i++) step[i] *= 5 / ms;
done:
    free(idx); free(h); free(ev); free(U); free(t);
    return rc;
}

int gg_reml_newton(gg_reml *r, const double *theta0, int maxit, double tol,
                   gg_reml_pt **best_out, int *iter_out, int *status, gg_status *st)
{
    const int nth = r->nth;
    gg_reml_pt *best = &r->pt[0], *trial = &r->pt[1];
    size_t n1 = nth > 0 ? (size_t) nth : 1;
    double *step = calloc(n1, sizeof(double)), *th = calloc(n1, sizeof(double));
    int *use = calloc(n1, sizeof(int));
    int rc = 0, iter = 0, step_failed = 0;
    *status = 0;
    if (!step || !th || !use) { rc = gg_fail(st, "gamgpu_host_oom", "out of memory"); goto done; }
    if ((rc = gg_reml_eval(r, theta0, best, st))) goto done;
    if (nth == 0) goto done;
    double reml_scale = fabs(best->V) + best->rss / r->nobs;
    int any = 0;
    for (int i = 0; i < nth; i++) {
        use[i] = fabs(best->grad[i]) > reml_scale * tol * 0.1 ||
                 fabs(best->hess[i + (size_t) i * nth]) > reml_scale * tol * 0.1;
        any |= use[i];
    }
    if (!any) for (int i = 0; i < nth; i++) use[i] = 1;
    for (iter = 1; iter <= maxit; iter++) {
        if ((rc = newton_step(nth, best->grad, best->hess, use, step, st))) goto done;
        for (int i = 0; i < nth; i++) th[i] = best->theta[i] + step[i];
        if ((rc = reml_value(r, th, trial, st))) goto done;
        int k = 0, not_moved = 0;
        while (trial->V > best->V) {
            if (trial->V - best->V < tol * reml_scale) not_moved++;
            else not_moved = 0;
            int moved = 0;
            for (int i = 0; i < nth; i++) if (best->theta[i] + step[i] != best->theta[i]) moved = 1;
            if (k == 25 || !moved || not_moved > 3) { step_failed = 1; break; }
            for (int i = 0; i < nth; i++) step[i] /= 2;
            k++;
            for (int i = 0; i < nth; i++) th[i] = best->theta[i] + step[i];
            if ((rc = reml_value(r, th, trial, st))) goto done;
        }
        if (step_failed) break;
        reml_derivs(r, trial);
        int converged = 1;
        for (int i = 0; i < nth; i++) {
            use[i] = fabs(trial->grad[i]) > reml_scale * tol * 0.1 ||
                     fabs(trial->hess[i + (size_t) i * nth]) > reml_scale * tol * 0.1;
            if (fabs(trial->grad[i]) > reml_scale * tol) converged = 0;
        }
        if (fabs(best->V - trial->V) > reml_scale * tol) {
            if (converged) for (int i = 0; i < nth; i++) use[i] = 1;
            converged = 0;
        }
        gg_reml_pt *tmp = best; best = trial; trial = tmp;
        if (converged) break;
        reml_scale = fabs(best->V) + best->rss / r->nobs;
    }
    if (step_failed) *status = 1;
    else if (iter > maxit) { *status = 2; iter = maxit; }
done:
    free(step); free(th); free(use);
    *best_out = best;
    *iter_out = iter;
    return rc;
}
