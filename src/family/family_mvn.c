/* family_mvn.c -- mgcv's mvn() log likelihood and its derivatives from
 * the rows' sufficient statistics (family_mvn.h).
 *
 * The algebra is mgcv's mvn_ll() (mgcv/src/mvn.c), term for term, with
 * each sum over the rows replaced by the statistic it is a sum of: with
 * r = y - mu the residuals, sum_rows R r (x) r' = R r'r, sum_rows x_i R r
 * = R r'X and sum_rows x_i r = r'X, so that nothing here is O(n).  It
 * runs on the expanded coefficients (each predictor's columns its own, as
 * mgcv's lpi.expand()) and sums the results back into the caller's
 * coefficients (mgcv's lpi.contract()). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family_mvn.h"

/* Scratch and the expanded inputs of one call. */
typedef struct mvn_work {
    int     m, nt, nc, nb;
    double *R, *dt, *RY, *yRX, *XX, *yX, *H, *lb, *db;
    int    *rri, *rci, *map;
} mvn_work;

static int mvn_work_alloc(const gg_mvn_in *in, mvn_work *w, gg_status *st)
{
    const size_t m = (size_t) in->m, nc = (size_t) in->nc;
    const size_t nt = m * (m + 1) / 2, nb = nc + nt;
    const size_t nd = 2 * m * m + nt + 2 * m * nc + nc * nc + nb * nb + 2 * nb;
    memset(w, 0, sizeof *w);
    double *d = malloc(nd * sizeof(double));
    int *ix = malloc((2 * nt + nb) * sizeof(int));
    if (d == NULL || ix == NULL) {
        free(d);
        free(ix);
        return gg_fail(st, "gamgpu_host_oom", "mvn()'s log likelihood: out of memory (%d coefficients)",
                       (int) nb);
    }
    w->m = (int) m;
    w->nt = (int) nt;
    w->nc = (int) nc;
    w->nb = (int) nb;
    w->R = d;
    w->RY = w->R + m * m;
    w->dt = w->RY + m * m;
    w->yRX = w->dt + nt;
    w->yX = w->yRX + m * nc;
    w->XX = w->yX + m * nc;
    w->H = w->XX + nc * nc;
    w->lb = w->H + nb * nb;
    w->db = w->lb + nb;
    memset(w->R, 0, m * m * sizeof(double));
    w->rri = ix;
    w->rci = ix + nt;
    w->map = ix + 2 * nt;
    return 0;
}

static void mvn_work_free(mvn_work *w)
{
    free(w->R);
    free(w->rri);
    w->R = NULL;
    w->rri = NULL;
}

/* R from theta, its derivative factors dt (exp(theta) on the diagonal, 1
 * off it), each theta's row and column of R, log|R|; the expanded X'X and
 * r'X, R r'r and R r'X; map: each expanded coefficient's own. */
static double mvn_setup(const gg_mvn_in *in, mvn_work *w)
{
    const int m = w->m, nc = w->nc, pm = in->pm;
    double ldet = 0.0;
    for (int k = 0, i = 0; i < m; i++) {
        w->dt[k] = exp(in->theta[k]);
        w->R[i + m * i] = w->dt[k];
        ldet += in->theta[k];
        w->rri[k] = w->rci[k] = i;
        k++;
        for (int j = i + 1; j < m; j++, k++) {
            w->R[i + m * j] = in->theta[k];
            w->dt[k] = 1.0;
            w->rri[k] = i;
            w->rci[k] = j;
        }
    }
    for (int a = 0; a < nc; a++) {
        for (int b = 0; b < nc; b++)
            w->XX[a + (size_t) nc * b] = in->XX[in->pos[a] + (size_t) pm * in->pos[b]];
        for (int q = 0; q < m; q++)
            w->yX[q + (size_t) m * a] = in->yX[q + (size_t) m * in->pos[a]];
        w->map[a] = in->pos[a];
    }
    for (int k = 0; k < w->nt; k++) w->map[nc + k] = pm + k;
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            double s = 0.0;
            for (int q = a; q < m; q++) s += w->R[a + m * q] * in->yty[q + m * b];
            w->RY[a + m * b] = s;
        }
    for (int i = 0; i < nc; i++)
        for (int a = 0; a < m; a++) {
            double s = 0.0;
            for (int q = a; q < m; q++) s += w->R[a + m * q] * w->yX[q + (size_t) m * i];
            w->yRX[a + (size_t) m * i] = s;
        }
    return ldet;
}

/* The log likelihood, its gradient and Hessian in the expanded
 * coefficients (w->lb, w->H). */
static double mvn_value(const gg_mvn_in *in, mvn_work *w, double ldet)
{
    const int m = w->m, nc = w->nc, nt = w->nt, nb = w->nb;
    const double *R = w->R, *dt = w->dt, *RY = w->RY, *yRX = w->yRX, *yX = w->yX;
    const int *din = in->din, *rri = w->rri, *rci = w->rci;
    double *H = w->H, ss = 0.0;
    for (int a = 0; a < m * m; a++) ss += RY[a] * R[a];   /* tr(R r'r R') */
    const double ll = -ss / 2 + ldet * in->n;
    /* the mean coefficients' gradient, then theta's */
    for (int i = 0; i < nc; i++) {
        const int l = din[i];
        double s = 0.0;
        for (int q = 0; q <= l; q++) s += R[q + m * l] * yRX[q + (size_t) m * i];
        w->lb[i] = s;
    }
    for (int k = 0; k < nt; k++)
        w->lb[nc + k] = rri[k] == rci[k] ? in->n - dt[k] * RY[rri[k] + m * rri[k]]
                                         : -RY[rri[k] + m * rci[k]];
    /* the Hessian's mean block, mixed blocks and theta block */
    for (int i = 0; i < nc; i++)
        for (int j = 0; j <= i; j++) {
            const int l = din[i], k = din[j];
            double rip = 0.0;
            for (int q = 0; q <= k; q++) rip += R[q + m * l] * R[q + m * k];
            H[i + (size_t) nb * j] = H[j + (size_t) nb * i] = -w->XX[i + (size_t) nc * j] * rip;
        }
    for (int i = 0; i < nc; i++)
        for (int j = 0; j < nt; j++) {
            const int ri = rri[j], rj = rci[j], l = din[i];
            const double zz = dt[j];
            double xx = l == rj ? yRX[ri + (size_t) m * i] : 0.0;
            xx *= zz;
            if (ri <= l) xx += yX[rj + (size_t) m * i] * R[ri + m * l] * zz;
            H[i + (size_t) nb * (j + nc)] = H[j + nc + (size_t) nb * i] = xx;
        }
    for (int k = 0; k < nt; k++)
        for (int l = 0; l <= k; l++) {
            double xx = 0.0;
            if (k == l && rri[k] == rci[k]) xx -= RY[rri[k] + m * rri[k]] * dt[k];
            if (rri[l] == rri[k]) {
                double yy = in->yty[rci[l] + m * rci[k]] * dt[k];
                if (rri[l] == rci[l]) yy *= dt[l];
                xx -= yy;
            }
            H[k + nc + (size_t) nb * (l + nc)] = H[l + nc + (size_t) nb * (k + nc)] = xx;
        }
    return ll;
}

/* The Hessian's derivative (expanded, into w->H) for the expanded
 * coefficients' derivatives db (nb). */
static void mvn_dhess(const gg_mvn_in *in, mvn_work *w, const double *db)
{
    const int m = w->m, nc = w->nc, nt = w->nt, nb = w->nb;
    const double *R = w->R, *dt = w->dt, *RY = w->RY, *yRX = w->yRX, *yX = w->yX,
                 *XX = w->XX, *yty = in->yty, *dtheta = db + nc;
    const int *din = in->din, *rri = w->rri, *rci = w->rci;
    double *dH = w->H;
    for (int i = 0; i < nc; i++)
        for (int j = 0; j <= i; j++) {
            const int l = din[i], k = din[j];
            double xx = 0.0;
            for (int q = 0; q < nt; q++) {
                if (rci[q] == l) xx += R[rri[q] + m * k] * dt[q] * dtheta[q];
                if (rci[q] == k) xx += R[rri[q] + m * l] * dt[q] * dtheta[q];
            }
            dH[i + (size_t) nb * j] = dH[j + (size_t) nb * i] = -xx * XX[i + (size_t) nc * j];
        }
    for (int i = 0; i < nc; i++)
        for (int j = 0; j < nt; j++) {
            const int l = din[i], rij = rri[j], rjj = rci[j];
            double xx = 0.0;
            for (int q = 0; q < nc; q++) {
                const int k = din[q];
                const double c = dt[j] * XX[i + (size_t) nc * q] * db[q];
                if (rjj == l) xx -= R[rij + m * k] * c;
                if (rjj == k) xx -= R[rij + m * l] * c;
            }
            for (int k = 0; k < nt; k++) {
                const int rik = rri[k], rjk = rci[k];
                if (rij == rik && (l == rjj || l == rjk)) {
                    double zz = 0.0;
                    if (l == rjj) zz += yX[rjk + (size_t) m * i] * dt[j] * dt[k];
                    if (l == rjk) zz += yX[rjj + (size_t) m * i] * dt[j] * dt[k];
                    if (k == j && rik == rjk) zz += dt[k] * yRX[rjj + (size_t) m * i];
                    xx += zz * dtheta[k];
                }
                if (k == j && rik == rjk)
                    xx += dtheta[k] * dt[k] * R[rjj + m * l] * yX[rjj + (size_t) m * i];
            }
            dH[i + (size_t) (j + nc) * nb] = dH[j + nc + (size_t) i * nb] = xx;
        }
    for (int j = 0; j < nt; j++)
        for (int k = j; k < nt; k++) {
            const int rij = rri[j], rjj = rci[j], rik = rri[k], rjk = rci[k];
            double xx = 0.0;
            for (int i = 0; i < nc; i++) {
                const int l = din[i];
                if (rij == rik && (l == rjj || l == rjk)) {
                    double zz = 0.0;
                    if (l == rjj) zz += yX[rjk + (size_t) m * i] * dt[j] * dt[k];
                    if (l == rjk) zz += yX[rjj + (size_t) m * i] * dt[j] * dt[k];
                    if (k == j && rik == rjk && l == rjj) zz += dt[k] * yRX[rjj + (size_t) m * i];
                    xx += zz * db[i];
                }
                if (k == j && rij == rjj)
                    xx += db[i] * dt[k] * R[rjj + m * l] * yX[rjj + (size_t) m * i];
            }
            for (int i = 0; i < nt; i++) {
                const int ri = rri[i], rj = rci[i];
                double zz = 0.0;
                if (j == k && ri == rij && rjk == rik) zz += dt[j] * dt[i] * yty[rj * m + rjj];
                if (i == k && rik == rij && rj == ri) zz += dt[j] * dt[i] * yty[rjk * m + rjj];
                if (i == j && rik == rij && rj == ri) zz += dt[k] * dt[i] * yty[rjk * m + rj];
                if (i == j && j == k && ri == rj) zz += dt[k] * RY[ri + m * ri];
                xx -= zz * dtheta[i];
            }
            dH[k + nc + (size_t) (j + nc) * nb] = dH[j + nc + (size_t) (k + nc) * nb] = xx;
        }
}

/* out (np x np) = the expanded H summed into the caller's coefficients */
static void mvn_contract(const mvn_work *w, int np, double *out)
{
    memset(out, 0, (size_t) np * np * sizeof(double));
    for (int b = 0; b < w->nb; b++)
        for (int a = 0; a < w->nb; a++)
            out[w->map[a] + (size_t) np * w->map[b]] += w->H[a + (size_t) w->nb * b];
}

static int mvn_check(const gg_mvn_in *in, int nsp, const double *dbeta, gg_status *st)
{
    const int m = in->m;
    if (m < 1 || m > 1000 || in->pm < 0 || in->nc < 0 || !(in->n >= 0))
        return gg_fail(st, "gamgpu_bad_input", "mvn()'s log likelihood: bad dimensions");
    if (in->np != in->pm + m * (m + 1) / 2)
        return gg_fail(st, "gamgpu_bad_input",
                       "mvn dimension error: %d coefficients, %d mean ones and %d of R",
                       in->np, in->pm, m * (m + 1) / 2);
    for (int a = 0; a < in->nc; a++) {
        if (in->pos[a] < 0 || in->pos[a] >= in->pm || in->din[a] < 0 || in->din[a] >= m ||
            (a > 0 && in->din[a] < in->din[a - 1]))
            return gg_fail(st, "gamgpu_bad_input",
                           "mvn()'s log likelihood: the predictors' columns must lie in 1..%d",
                           in->pm);
    }
    if (nsp < 0 || (nsp > 0 && dbeta == NULL))
        return gg_fail(st, "gamgpu_bad_input", "mvn()'s Hessian derivatives need dbeta");
    return 0;
}

int gg_mvn_ll(const gg_mvn_in *in, int nsp, const double *dbeta, double *ll, double *lb,
              double *lbb, double *dH, gg_status *st)
{
    if (mvn_check(in, nsp, dbeta, st) != 0) return -1;
    mvn_work w;
    if (mvn_work_alloc(in, &w, st) != 0) return -1;
    const int np = in->np;
    *ll = mvn_value(in, &w, mvn_setup(in, &w));
    memset(lb, 0, (size_t) np * sizeof(double));
    for (int a = 0; a < w.nb; a++) lb[w.map[a]] += w.lb[a];
    mvn_contract(&w, np, lbb);
    for (int r = 0; r < nsp; r++) {
        const double *d = dbeta + (size_t) np * r;
        for (int a = 0; a < w.nb; a++) w.db[a] = d[w.map[a]];
        mvn_dhess(in, &w, w.db);
        mvn_contract(&w, np, dH + (size_t) np * np * r);
    }
    mvn_work_free(&w);
    return 0;
}
