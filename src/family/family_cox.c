/* family_cox.c -- the Cox proportional hazards log partial likelihood
 * (mgcv's cox.ph(), Breslow's ties) and its derivatives in beta and in the
 * log smoothing parameters, over the rows of its strata (family_cox.h).
 *
 * With the rows in decreasing order of time, the risk set of event time j
 * is every row up to the end of j's group: Gamma_j = sum gamma_i and b_j =
 * sum gamma_i x_i over it (gamma = exp(eta)), prefix sums down the rows.
 * With dr_j events at time j,
 *   lp = sum_j (sum of the events' eta - dr_j log Gamma_j),
 *   g  = X'(d - gamma C),            C_i = sum over j >= row i's time of dr_j / Gamma_j,
 *   H  = -X' diag(gamma C) X + B' diag(dr / Gamma^2) B,
 * B holding b_j for the times with events.  So the risk sets' sums of
 * x x' are one weighted Gram product over the rows (gram_cpu.c) instead of
 * a running p x p sum per row, and the same holds for H's derivatives in
 * the log smoothing parameters (d1H, and the traces tr(W d2H) that REML's
 * Hessian needs).  With strata the sums down the rows start again at each
 * stratum's first row, and C's sums over the event times end at its last
 * event time: every other step is per row or per event time as it is.
 * No R API: the glue is cox_r.c. */
#define USE_FC_LEN_T
#include "family_cox.h"
#include "gram_cpu.h"
#include "matprod_cpu.h"

#include <R_ext/BLAS.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef FCONE
#define FCONE
#endif

typedef struct cox_work {
    const gg_cox_rows *r;
    int     ne;        /* times with at least one event */
    int    *rowe;      /* n: the event time a row closes (0..ne-1), else -1 */
    int    *rowf;      /* n: the first event time at or after the row's (ne: none) */
    int    *estr;      /* ne: the event times' strata */
    double *gam;       /* n: exp(eta) */
    double *G;         /* ne: Gamma at the event times */
    double *dr;        /* ne: events at each */
} cox_work;

/* Whether row i (> 0) begins a stratum */
static inline int new_stratum(const gg_cox_rows *r, size_t i)
{
    return r->gstr != NULL && r->grp[i] != r->grp[i - 1] &&
           r->gstr[r->grp[i] - 1] != r->gstr[r->grp[i - 1] - 1];
}

/* out[e] = the running sum of v down the stratum's rows at the end of
 * event time e */
static void prefix_at_events(const cox_work *w, const double *v, const double *v2,
                             double *out)
{
    double s = 0.0;
    const size_t n = w->r->n;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && new_stratum(w->r, i)) s = 0.0;
        s += v2 == NULL ? v[i] : v[i] * v2[i];
        if (w->rowe[i] >= 0) out[w->rowe[i]] = s;
    }
}

/* row weights: out[i] = scale_i * sum over the event times e >= row i's
 * of its stratum of c[e] */
static void suffix_to_rows(const cox_work *w, const double *c, const double *scale,
                           double *sfx, double *out)
{
    double s = 0.0;
    for (int e = w->ne - 1; e >= 0; e--) {
        if (e + 1 < w->ne && w->estr[e] != w->estr[e + 1]) s = 0.0;
        s += c[e];
        sfx[e] = s;
    }
    const size_t n = w->r->n;
    for (size_t i = 0; i < n; i++) {
        const double C = w->rowf[i] < w->ne ? sfx[w->rowf[i]] : 0.0;
        out[i] = scale == NULL ? C : scale[i] * C;
    }
}

/* Bv (ne x p): the risk sets' sums of v x at the event times */
static void risk_sums(const cox_work *w, const double *v, double *Bv)
{
    const size_t n = w->r->n;
    const int p = w->r->p, ne = w->ne;
    for (int k = 0; k < p; k++)
        prefix_at_events(w, v, w->r->X + (size_t) k * n, Bv + (size_t) k * ne);
}

/* out[e] = row e of A . row e of B (ne x p each), by columns */
static void rowdots(const double *A, const double *B, int ne, int p, double *out)
{
    for (int e = 0; e < ne; e++) out[e] = 0.0;
    for (int k = 0; k < p; k++) {
        const double *a = A + (size_t) k * ne, *b = B + (size_t) k * ne;
        for (int e = 0; e < ne; e++) out[e] += a[e] * b[e];
    }
}

/* C (p x q) = A' B, A m x p, B m x q: gamgpu's kernel over threads (own),
 * else the BLAS */
static int crossprod(const double *A, const double *B, int m, int p, int q, double *C, int own,
                     gg_status *st)
{
    const double one = 1.0, zero = 0.0;
    if (m == 0) { memset(C, 0, (size_t) p * q * sizeof(double)); return 0; }
    if (own) return gg_crossprod_rows(A, B, (size_t) m, p, q, NULL, C, st);
    F77_CALL(dgemm)("T", "N", &p, &q, &m, &one, A, &m, B, &m, &zero, C, &p FCONE FCONE);
    return 0;
}

/* C (n x q) = X B, X n x p, B p x q: likewise */
static int matprod(const double *X, const double *B, int n, int p, int q, double *C, int own,
                   gg_status *st)
{
    const double one = 1.0, zero = 0.0;
    if (n == 0) return 0;
    if (own) return gg_matprod(X, (size_t) n, (size_t) n, p, B, q, C, (size_t) n, st);
    F77_CALL(dgemm)("N", "N", &n, &q, &p, &one, X, &n, B, &p, &zero, C, &n FCONE FCONE);
    return 0;
}

static int wgram(const double *X, size_t n, int p, const double *wt, double *A, gg_status *st)
{
    if (n == 0) { memset(A, 0, (size_t) p * p * sizeof(double)); return 0; }
    return gg_cpu_gram(X, n, p, wt, NULL, A, NULL, NULL, 0, NULL, st);
}

#define NEED(ptr) do { if ((ptr) == NULL) { rc = gg_fail(st, "gamgpu_host_oom", \
    "out of memory for cox.ph()'s derivatives (n = %zu, p = %d)", n, p); goto done; } } while (0)

int gg_cox_check_groups(const int *grp, size_t n, int nt, const int *gstr, gg_status *st)
{
    for (size_t i = 0; i < n; i++)
        if (grp[i] < 1 || grp[i] > nt || (i > 0 && grp[i] < grp[i - 1]))
            return gg_fail(st, "gamgpu_bad_input",
                           "cox.ph()'s rows must be in decreasing order of time");
    if (gstr != NULL)
        for (int j = 0; j < nt; j++)
            if (gstr[j] < 0 || (j > 0 && gstr[j] < gstr[j - 1]))
                return gg_fail(st, "gamgpu_bad_input",
                               "cox.ph()'s strata must be non-negative and follow each other along the rows");
    return 0;
}

int gg_cox_event_times(const int *grp, const int *event, size_t n, int nt, const int *gstr,
                       double *dr, int *rowe, int *rowf, int *estr, gg_status *st)
{
    double *grpdr = calloc((size_t) nt + 1, sizeof(double));
    int *gfirst = malloc(((size_t) nt + 1) * sizeof(int));
    if (grpdr == NULL || gfirst == NULL) {
        free(grpdr);
        free(gfirst);
        return gg_fail(st, "gamgpu_host_oom", "out of memory for cox.ph()'s event times");
    }
    for (size_t i = 0; i < n; i++)
        if (event[i] == 1) grpdr[grp[i] - 1] += 1.0;
    int ne = 0;
    for (int j = 0; j < nt; j++) ne += grpdr[j] > 0;
    /* (backwards over the time groups: each group's first event time at or
     * after it in its stratum; none, ne, past a stratum's last) */
    int e = ne, next = ne;
    for (int j = nt - 1; j >= 0; j--) {
        if (j + 1 < nt && gstr != NULL && gstr[j] != gstr[j + 1]) next = ne;
        if (grpdr[j] > 0) {
            next = --e;
            dr[e] = grpdr[j];
            if (estr != NULL) estr[e] = gstr != NULL ? gstr[j] : 0;
        }
        gfirst[j] = next;
    }
    for (size_t i = 0; i < n; i++) {
        const int j = grp[i] - 1;
        rowf[i] = gfirst[j];
        const int last = i + 1 == n || grp[i + 1] != grp[i];
        rowe[i] = last && grpdr[j] > 0 ? gfirst[j] : -1;
    }
    free(grpdr);
    free(gfirst);
    return ne;
}

int gg_cox_ll(const gg_cox_rows *r, int level, const double *d1b, int M,
              const double *d2b, const double *W, gg_cox_out *o, gg_status *st)
{
    const size_t n = r->n;
    const int p = r->p, nt = r->nt;
    const size_t pp = (size_t) p * p;
    int rc = 0;
    if (n > 2147483647u)
        return gg_fail(st, "gamgpu_bad_input", "cox.ph() takes fewer than 2^31 rows");
    if (level >= 2 && (M < 0 || d1b == NULL))
        return gg_fail(st, "gamgpu_internal_error", "cox.ph()'s d1H needs beta's derivatives");
    if (level >= 3 && (d2b == NULL || W == NULL))
        return gg_fail(st, "gamgpu_internal_error", "cox.ph()'s traces need d2b and W");
    if (gg_cox_check_groups(r->grp, n, nt, r->gstr, st) != 0) return -1;

    /* (gamgpu's products over threads where they are the faster here) */
    const int own = level >= 2 ? gg_cpu_gram_prefers_own(r->X, n, p, st) : 0;
    if (own < 0) return -1;
    cox_work w = {r, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    double *grpG = NULL, *grpdr = NULL, *grpeta = NULL, *c = NULL, *sfx = NULL,
           *C = NULL, *v = NULL, *B = NULL, *A = NULL, *Bm = NULL, *d1eta = NULL,
           *d1g = NULL, *G1 = NULL, *T = NULL, *XW = NULL, *q = NULL, *d2eta = NULL,
           *d2g = NULL, *U = NULL, *BmW = NULL, *Bmk = NULL, *tA = NULL, *tA1 = NULL,
           *tA2 = NULL, *G2 = NULL, *eB = NULL, *bq = NULL;
    w.gam = malloc(n * sizeof(double));
    grpG = calloc((size_t) nt, sizeof(double));
    grpdr = calloc((size_t) nt, sizeof(double));
    grpeta = calloc((size_t) nt, sizeof(double));
    NEED(w.gam); NEED(grpG); NEED(grpdr); NEED(grpeta);

    /* Gamma, the events and their eta by time; lp */
    double run = 0.0;
    for (size_t i = 0; i < n; i++) {
        const int j = r->grp[i] - 1;
        if (i > 0 && new_stratum(r, i)) run = 0.0;
        w.gam[i] = exp(r->eta[i]);
        run += w.gam[i];
        grpG[j] = run;
        if (r->event[i] == 1) { grpdr[j] += 1.0; grpeta[j] += r->eta[i]; }
    }
    double lp = 0.0;
    for (int j = 0; j < nt; j++)
        if (grpdr[j] > 0) { lp += grpeta[j] - grpdr[j] * log(grpG[j]); w.ne++; }
    o->lp = lp;
    if (level < 0) goto done;

    /* the event times: their Gamma and counts, the rows that close them,
     * and each row's first event time at or after its own */
    const int ne = w.ne;
    w.G = malloc(((size_t) ne + 1) * sizeof(double));
    w.dr = malloc(((size_t) nt + 1) * sizeof(double));
    w.rowe = malloc(n * sizeof(int));
    w.rowf = malloc(n * sizeof(int));
    w.estr = malloc(((size_t) nt + 1) * sizeof(int));
    NEED(w.G); NEED(w.dr); NEED(w.rowe); NEED(w.rowf); NEED(w.estr);
    if (gg_cox_event_times(r->grp, r->event, n, nt, r->gstr, w.dr, w.rowe, w.rowf, w.estr, st) !=
        ne) {
        rc = -1;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (w.rowe[i] >= 0) w.G[w.rowe[i]] = grpG[r->grp[i] - 1];

    /* g and H */
    c = malloc(((size_t) ne + 1) * sizeof(double));
    sfx = malloc(((size_t) ne + 1) * sizeof(double));
    C = malloc(n * sizeof(double));
    v = malloc(n * sizeof(double));
    B = malloc((size_t) ne * p * sizeof(double) + 1);
    A = malloc(pp * sizeof(double));
    NEED(c); NEED(sfx); NEED(C); NEED(v); NEED(B); NEED(A);
    for (int e = 0; e < ne; e++) c[e] = w.dr[e] / w.G[e];
    suffix_to_rows(&w, c, NULL, sfx, C);
    for (size_t i = 0; i < n; i++) v[i] = (r->event[i] == 1 ? 1.0 : 0.0) - w.gam[i] * C[i];
    for (int k = 0; k < p; k++) {
        const double *xk = r->X + (size_t) k * n;
        double s = 0.0;
        for (size_t i = 0; i < n; i++) s += xk[i] * v[i];
        o->g[k] = s;
    }
    risk_sums(&w, w.gam, B);
    for (size_t i = 0; i < n; i++) v[i] = w.gam[i] * C[i];
    if ((rc = wgram(r->X, n, p, v, A, st)) != 0) goto done;
    for (int e = 0; e < ne; e++) c[e] = w.dr[e] / (w.G[e] * w.G[e]);      /* e_j */
    if ((rc = wgram(B, (size_t) ne, p, c, o->H, st)) != 0) goto done;
    for (size_t k = 0; k < pp; k++) o->H[k] -= A[k];
    if (level < 2) goto done;

    /* d1H_m = X' diag(gamma C2_m - d1gamma_m C) X + B' diag(e) B_m + B_m' diag(e) B
     *         - B' diag(2 dr Gamma_m / Gamma^3) B,
     * the last three as (e B)' C_m + C_m' (e B), C_m = B_m - (Gamma_m / Gamma) B.
     * (Level 3 needs the event times' G1 and B_m but not d1H: gam.fit5()
     * reads only the traces of that call.) */
    d1eta = malloc(n * (size_t) (M > 0 ? M : 1) * sizeof(double));
    d1g = malloc(n * (size_t) (M > 0 ? M : 1) * sizeof(double));
    G1 = malloc(((size_t) ne * M + 1) * sizeof(double));
    Bm = malloc((size_t) ne * p * M * sizeof(double) + 1);
    T = malloc(pp * sizeof(double));
    eB = malloc((size_t) ne * p * sizeof(double) + 1);
    Bmk = malloc((size_t) ne * p * sizeof(double) + 1);
    NEED(d1eta); NEED(d1g); NEED(G1); NEED(Bm); NEED(T); NEED(eB); NEED(Bmk);
    for (int k = 0; k < p; k++)
        for (int e = 0; e < ne; e++)
            eB[e + (size_t) k * ne] = B[e + (size_t) k * ne] * w.dr[e] / (w.G[e] * w.G[e]);
    if (M > 0 && (rc = matprod(r->X, d1b, (int) n, p, M, d1eta, own, st)) != 0) goto done;
    for (size_t k = 0; k < n * (size_t) M; k++) d1g[k] = w.gam[k % n] * d1eta[k];
    for (int m = 0; m < M; m++) {
        const double *dg = d1g + (size_t) m * n;
        double *Gm = G1 + (size_t) m * ne, *Bmm = Bm + (size_t) m * ne * p;
        prefix_at_events(&w, dg, NULL, Gm);
        risk_sums(&w, dg, Bmm);
        if (level >= 3) continue;
        double *dH = o->d1H + (size_t) m * pp;
        for (int e = 0; e < ne; e++) c[e] = w.dr[e] * Gm[e] / (w.G[e] * w.G[e]);
        suffix_to_rows(&w, c, w.gam, sfx, v);                 /* gamma C2_m */
        for (size_t i = 0; i < n; i++) v[i] -= dg[i] * C[i];
        if ((rc = wgram(r->X, n, p, v, dH, st)) != 0) goto done;
        double *Cm = Bmk;
        for (int k = 0; k < p; k++)
            for (int e = 0; e < ne; e++)
                Cm[e + (size_t) k * ne] = Bmm[e + (size_t) k * ne] -
                    Gm[e] / w.G[e] * B[e + (size_t) k * ne];
        if ((rc = crossprod(eB, Cm, ne, p, p, T, own, st)) != 0) goto done;
        for (int k = 0; k < p; k++)
            for (int l = 0; l < p; l++)
                dH[k + (size_t) l * p] += T[k + (size_t) l * p] + T[l + (size_t) k * p];
    }
    if (level < 3) goto done;

    /* tr(W d2H_mk): each term of d2H/drho_m drho_k is a risk-set sum of
     * x x' (whose trace with W is the prefix sum of the rows' weights times
     * q_i = x_i' W x_i) or an outer product of the event times' b vectors
     * (u' W v) */
    const int nhh = M * (M + 1) / 2;
    XW = malloc(n * (size_t) p * sizeof(double));
    q = malloc(n * sizeof(double));
    d2eta = malloc(n * (size_t) (nhh > 0 ? nhh : 1) * sizeof(double));
    d2g = malloc(n * sizeof(double));
    U = malloc((size_t) ne * p * sizeof(double) + 1);
    BmW = malloc((size_t) ne * p * M * sizeof(double) + 1);
    tA = malloc(((size_t) ne + 1) * sizeof(double));
    tA1 = malloc(((size_t) ne * M + 1) * sizeof(double));
    tA2 = malloc(((size_t) ne + 1) * sizeof(double));
    G2 = malloc(((size_t) ne + 1) * sizeof(double));
    NEED(XW); NEED(q); NEED(d2eta); NEED(d2g); NEED(U); NEED(BmW); NEED(tA); NEED(tA1);
    NEED(tA2); NEED(G2);
    if ((rc = matprod(r->X, W, (int) n, p, p, XW, own, st)) != 0) goto done;
    for (size_t i = 0; i < n; i++) q[i] = 0.0;
    for (int k = 0; k < p; k++)
        for (size_t i = 0; i < n; i++) q[i] += XW[i + (size_t) k * n] * r->X[i + (size_t) k * n];
    if (nhh > 0 && (rc = matprod(r->X, d2b, (int) n, p, nhh, d2eta, own, st)) != 0) goto done;
    prefix_at_events(&w, w.gam, q, tA);
    for (int m = 0; m < M; m++)
        prefix_at_events(&w, d1g + (size_t) m * n, q, tA1 + (size_t) m * ne);
    if (ne > 0) {
        if ((rc = matprod(B, W, ne, p, p, U, own, st)) != 0) goto done;
        for (int m = 0; m < M; m++)
            if ((rc = matprod(Bm + (size_t) m * ne * p, W, ne, p, p, BmW + (size_t) m * ne * p,
                              own, st)) != 0)
                goto done;
    }
    /* b'Wb and b_m'Wb at the event times, then per pair b_m'Wb_k, b_mk'Wb */
    bq = malloc((size_t) ne * (M + 1) * sizeof(double) + 1);
    NEED(bq);
    double *bWb = bq, *bmkWb = c, *bmWbk = sfx;
    rowdots(B, U, ne, p, bWb);
    for (int m = 0; m < M; m++)
        rowdots(Bm + (size_t) m * ne * p, U, ne, p, bq + (size_t) (m + 1) * ne);
    int off = 0;
    for (int m = 0; m < M; m++)
        for (int k = m; k < M; k++, off++) {
            const double *e1 = d1eta + (size_t) m * n, *e2 = d1eta + (size_t) k * n,
                         *e12 = d2eta + (size_t) off * n;
            for (size_t i = 0; i < n; i++) d2g[i] = w.gam[i] * (e12[i] + e1[i] * e2[i]);
            prefix_at_events(&w, d2g, NULL, G2);
            prefix_at_events(&w, d2g, q, tA2);
            risk_sums(&w, d2g, Bmk);
            rowdots(Bmk, U, ne, p, bmkWb);
            rowdots(BmW + (size_t) m * ne * p, Bm + (size_t) k * ne * p, ne, p, bmWbk);
            const double *Gm = G1 + (size_t) m * ne, *Gk = G1 + (size_t) k * ne,
                         *tAm = tA1 + (size_t) m * ne, *tAk = tA1 + (size_t) k * ne,
                         *bmWb = bq + (size_t) (m + 1) * ne, *bkWb = bq + (size_t) (k + 1) * ne;
            double t = 0.0;
            for (int e = 0; e < ne; e++) {
                const double G = w.G[e], dr = w.dr[e];
                const double a1 = dr / G, a2 = a1 / G, a3 = a2 / G, a4 = a3 / G;
                t += -a1 * tA2[e] + a2 * (Gk[e] * tAm[e] + Gm[e] * tAk[e] + G2[e] * tA[e])
                     - 2.0 * a3 * Gm[e] * Gk[e] * tA[e]
                     + 2.0 * a2 * (bmkWb[e] + bmWbk[e])
                     - 4.0 * a3 * (Gk[e] * bmWb[e] + Gm[e] * bkWb[e])
                     - 2.0 * a3 * G2[e] * bWb[e] + 6.0 * a4 * Gm[e] * Gk[e] * bWb[e];
            }
            o->trd2H[off] = t;
        }

done:
    free(w.gam); free(w.G); free(w.dr); free(w.rowe); free(w.rowf); free(w.estr);
    free(grpG); free(grpdr); free(grpeta); free(c); free(sfx); free(C); free(v); free(B);
    free(A); free(Bm); free(d1eta); free(d1g); free(G1); free(T); free(XW); free(q);
    free(d2eta); free(d2g); free(U); free(BmW); free(Bmk); free(tA); free(tA1); free(tA2);
    free(G2); free(eB); free(bq);
    return rc;
}
