/* efam_r.c -- mgcv's extended families for R, outside the fit: the
 * parameters of an extended family from R's list (gg_efpar_or_abort, also
 * used by fit_r.c), each row's quantities from inst/include/
 * efam_math.h (gg_efam_rows_r), for tests against the family objects'
 * own Dd(), ls() and dev.resids(), mgcv's dDeta() of the outer
 * iteration's rows (efam_outer.h: gg_efam_deta_r), and the row-wise parts of what bam()
 * does after a fit that mgcv runs in R (ziP's saturated likelihood, the
 * deviance rows a null deviance's search sums, tw()'s aic). */
#include <R.h>
#include <Rinternals.h>

#include <math.h>
#include <string.h>

#include "efam_math.h"
#include "efam_outer.h"
#include "efam_r.h"
#include "errors_r.h"
#include "family_r.h"
#include "sexp_r.h"
#include "threads.h"

_Static_assert(GG_FM_EF_MAXTH == 10, "the message of gg_efpar_or_abort");

static SEXP list_elt(SEXP list, const char *name)
{
    SEXP nm = Rf_getAttrib(list, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(list); i++)
        if (strcmp(CHAR(STRING_ELT(nm, i)), name) == 0) return VECTOR_ELT(list, i);
    return R_NilValue;
}

/* gfam()'s members (R/families.R's gfam_members()): list(family =
 * <character>, link = <character>, th0 = <integer>, nth = <integer>, isc =
 * <integer, -1: none>), 0-based indices into theta; family "nb" is nb()
 * (negbin's rows with its theta estimated), the others the exponential
 * families by gg_family_lookup()'s names. */
static void gfam_members(SEXP gm, gg_fm_efpar *par)
{
    SEXP fam = list_elt(gm, "family"), link = list_elt(gm, "link"), th0 = list_elt(gm, "th0"),
         nth = list_elt(gm, "nth"), isc = list_elt(gm, "isc");
    const R_xlen_t m = XLENGTH(fam);
    if (TYPEOF(fam) != STRSXP || TYPEOF(link) != STRSXP || TYPEOF(th0) != INTSXP ||
        TYPEOF(nth) != INTSXP || TYPEOF(isc) != INTSXP || XLENGTH(link) != m ||
        XLENGTH(th0) != m || XLENGTH(nth) != m || XLENGTH(isc) != m || m < 1 ||
        m > GG_FM_GF_MAXM)
        gg_abort("gamgpu_bad_family", "gfam()'s members must be a list of family, link, th0, "
                 "nth and isc of 1 to 8 members");
    for (int k = 0; k < (int) m; k++) {
        const char *fn = CHAR(STRING_ELT(fam, k));
        const int nb = strcmp(fn, "nb") == 0;
        gg_status st;
        gg_status_clear(&st);
        gg_family f;
        if (gg_family_lookup(nb ? "negbin" : fn, CHAR(STRING_ELT(link, k)), &f, &st)) gg_raise(&st);
        if (!nb && (f.fam == GG_FAM_NEGBIN || f.fam == GG_FAM_TWEEDIE || f.efam))
            gg_abort("gamgpu_bad_family", "gfam()'s members are gaussian, poisson, binomial, "
                     "Gamma, inverse.gaussian and nb()");
        gg_fm_gfmem *g = &par->gm[k];
        g->fam = (int) f.fam;
        g->efam = nb;
        g->link = (int) f.link;
        g->lpow = f.link_power;
        g->th0 = INTEGER(th0)[k];
        g->nth = INTEGER(nth)[k];
        g->isc = INTEGER(isc)[k];
        if (g->th0 < 0 || g->nth != nb || g->th0 + g->nth + (g->isc >= 0) > par->nth ||
            (g->isc >= 0 && g->isc != g->th0 + g->nth))
            gg_abort("gamgpu_bad_family", "gfam()'s members: their theta slots do not fit its theta");
    }
    par->ngm = (int) m;
}

/* list(theta = <numeric, <= GG_FM_EF_MAXTH>, aux = <numeric, <= 4>,
 *      log_scale = <number>, scale_est = <logical>, gfam = <gfam_members>) */
gg_fm_efpar gg_efpar_or_abort(SEXP ef)
{
    gg_fm_efpar par;
    memset(&par, 0, sizeof par);
    if (TYPEOF(ef) != VECSXP || Rf_getAttrib(ef, R_NamesSymbol) == R_NilValue)
        gg_abort("gamgpu_bad_family", "an extended family's parameters must be a named list");
    SEXP th = list_elt(ef, "theta"), aux = list_elt(ef, "aux");
    if (TYPEOF(th) != REALSXP || XLENGTH(th) > GG_FM_EF_MAXTH)
        gg_abort("gamgpu_bad_family", "an extended family's theta must be a double vector "
                 "of at most 10 values");
    par.nth = (int) XLENGTH(th);
    for (int i = 0; i < par.nth; i++) {
        par.th[i] = REAL(th)[i];
        if (!isfinite(par.th[i]))
            gg_abort("gamgpu_bad_family", "an extended family's theta must be finite");
    }
    if (aux != R_NilValue) {
        if (TYPEOF(aux) != REALSXP || XLENGTH(aux) > 4)
            gg_abort("gamgpu_bad_family", "aux must be a double vector of at most 4 values");
        for (int i = 0; i < (int) XLENGTH(aux); i++) par.aux[i] = REAL(aux)[i];
    }
    SEXP gm = list_elt(ef, "gfam");
    if (gm != R_NilValue) gfam_members(gm, &par);
    SEXP ls = list_elt(ef, "log_scale"), se = list_elt(ef, "scale_est");
    if (ls != R_NilValue) par.log_scale = gg_as_real(ls, "log_scale", -1e300, 1e300, "gamgpu_bad_family");
    if (se != R_NilValue) par.scale_est = gg_as_int(se, "scale_est", 0, 1, "gamgpu_bad_family");
    return par;
}

SEXP gg_efam_rows_r(SEXP family, SEXP link, SEXP eta, SEXP y, SEXP wt, SEXP ef, SEXP deriv)
{
    const gg_family f = gg_family_named_or_abort(family, link);
    const gg_fm_efpar par = gg_efpar_or_abort(ef);
    const int d = gg_as_int(deriv, "deriv", -1, 2, "gamgpu_bad_input");
    if (TYPEOF(eta) != REALSXP || TYPEOF(y) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "eta, y and wt must be double vectors");
    const R_xlen_t n = XLENGTH(eta);
    if (XLENGTH(y) != n || XLENGTH(wt) != n)
        gg_abort("gamgpu_bad_input", "eta, y and wt must have equal lengths");
    const int ns = par.nth + par.scale_est, nsum = GG_FM_EF_NSUM(par.nth, ns);
    const char *names[] = {"mu", "dev", "Dmu", "EDmu2", "mustart", "w", "z", "sums"};
    SEXP res = PROTECT(gg_named_list(8, names));
    for (int i = 0; i < 7; i++) SET_VECTOR_ELT(res, i, Rf_allocVector(REALSXP, n));
    SET_VECTOR_ELT(res, 7, Rf_allocMatrix(REALSXP, (int) n, nsum));
    double *o[8];
    for (int i = 0; i < 8; i++) o[i] = REAL(VECTOR_ELT(res, i));
    const double *e = REAL(eta), *yy = REAL(y), *ww = REAL(wt), *ya = gg_y_censor(y);
    double s[GG_FM_EF_MAXSUM];
    for (R_xlen_t i = 0; i < n; i++) {
        const double yat = ya ? ya[i] : yy[i];
        /* (gfam(): the row's member's link) */
        const double mu = gg_fm_linkinv(gg_fm_ef_link((int) f.fam, gg_family_link(&f), yat, &par),
                                        e[i]);
        o[0][i] = mu;
        o[1][i] = gg_fm_ef_dd0((int) f.fam, yy[i], yat, mu, ww[i], &par, &o[2][i], &o[3][i]);
        o[4][i] = gg_fm_ef_mustart((int) f.fam, yy[i], yat, ww[i], &par);
        double m2;
        gg_fm_ef_row((int) f.fam, gg_family_link(&f), yy[i], yat, ww[i], 0.0, e[i], &par, &m2,
                     &o[5][i], &o[6][i]);
        memset(s, 0, sizeof s);
        gg_fm_ef_theta_row((int) f.fam, yy[i], yat, mu, ww[i], &par, d, s);
        for (int k = 0; k < nsum; k++) o[7][i + (size_t) k * n] = s[k];
    }
    UNPROTECT(1);
    return res;
}

/* mgcv's dDeta(y, mu, wt, theta, family, deriv) by efam_outer.h, for a
 * family and link it has (gg_fm_ef_outer_ok), for tests against mgcv's:
 * its twelve parts by their names there, each n x (its columns: 1, nth or
 * theta's pairs). */
SEXP gg_efam_deta_r(SEXP family, SEXP link, SEXP mu, SEXP y, SEXP wt, SEXP ef, SEXP deriv)
{
    const gg_family f = gg_family_named_or_abort(family, link);
    const gg_fm_efpar par = gg_efpar_or_abort(ef);
    if (!gg_fm_ef_outer_ok((int) f.fam, gg_family_link(&f), &par) || par.nth > GG_FM_EFO_MAXTH)
        gg_abort("gamgpu_bad_family", "the outer iteration's extended-family rows are nb()'s, "
                 "tw()'s, cnorm()'s and clog()'s (links log, identity, sqrt) and betar()'s "
                 "(logit, probit, cloglog, cauchit) with one theta, scat()'s (identity, log, "
                 "inverse) and ziP()'s (identity) with two, ocat()'s (identity) with one to "
                 "four and cpois()'s (log, identity, sqrt) with none");
    const int d = gg_as_int(deriv, "deriv", 0, 2, "gamgpu_bad_input");
    if (TYPEOF(mu) != REALSXP || TYPEOF(y) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "mu, y and wt must be double vectors");
    const R_xlen_t n = XLENGTH(mu);
    if (XLENGTH(y) != n || XLENGTH(wt) != n)
        gg_abort("gamgpu_bad_input", "mu, y and wt must have equal lengths");
    const int nth = par.nth, npk = GG_FM_EFO_NPK(nth);
    const char *names[] = {"Deta", "Deta2", "EDeta2", "Dth", "Detath", "Deta3", "Deta2th",
                           "Deta4", "Dth2", "Detath2", "Deta2th2", "Deta3th"};
    const int cols[] = {1, 1, 1, nth, nth, 1, nth, 1, npk, npk, npk, nth};
    SEXP res = PROTECT(gg_named_list(12, names));
    double *o[12];
    for (int i = 0; i < 12; i++) {
        SET_VECTOR_ELT(res, i, Rf_allocMatrix(REALSXP, (int) n, cols[i]));
        o[i] = REAL(VECTOR_ELT(res, i));
    }
    const double *m = REAL(mu), *yy = REAL(y), *ww = REAL(wt), *ya = gg_y_censor(y);
    for (R_xlen_t i = 0; i < n; i++) {
        gg_fm_efdd r = {0};
        gg_fm_efdeta e = {0};
        const double yat = ya ? ya[i] : yy[i];
        gg_fm_ef_dd((int) f.fam, yy[i], yat, m[i], ww[i], &par, d, &r);
        gg_fm_ef_deta(gg_fm_ef_link((int) f.fam, gg_family_link(&f), yat, &par), m[i], nth, d, &r,
                      &e);
        const double *v[] = {&e.Deta, &e.Deta2, &e.EDeta2, e.Dth, e.Detath, &e.Deta3,
                             e.Deta2th, &e.Deta4, e.Dth2, e.Detath2, e.Deta2th2, e.Deta3th};
        for (int k = 0; k < 12; k++)
            for (int j = 0; j < cols[k]; j++) o[k][i + (size_t) j * n] = v[k][j];
    }
    UNPROTECT(1);
    return res;
}

/* ---- the parts of a fit's finish that mgcv does row by row in R -------- */

#define SAT_BLOCK 4096
#define SAT_JOBS 64

typedef struct sat_job {
    const double *y, *wt;
    const gg_fm_efpar *par;
    double lmax, *out;
    size_t i0, i1;
    int pass;               /* 0: out[job] = max |dev| at gamma = log y; 1: rows */
    double part;
} sat_job;

static void *sat_run(void *arg)
{
    sat_job *j = arg;
    if (j->pass == 0) {
        double m = 0;
        for (size_t i = j->i0; i < j->i1; i++)
            if (j->y[i] > 0) {
                const double l = fabs(gg_fm_zip_dev(j->y[i], log(j->y[i]), j->wt[i], j->par));
                if (l > m) m = l;
            }
        j->part = m;
    } else {
        for (size_t i = j->i0; i < j->i1; i++)
            j->out[i] = gg_fm_zip_saturated_row(j->y[i], j->wt[i], j->par, j->lmax);
    }
    return NULL;
}

/* ziP()$saturated.ll(y, family, wt): each row's deviance at its saturated
 * fit (efam_zip.h), over the thread budget (threads.h) in fixed jobs. */
SEXP gg_zip_saturated_r(SEXP y, SEXP wt, SEXP ef, SEXP nthreads)
{
    const gg_fm_efpar par = gg_efpar_or_abort(ef);
    if (TYPEOF(y) != REALSXP || TYPEOF(wt) != REALSXP || XLENGTH(y) != XLENGTH(wt))
        gg_abort("gamgpu_bad_input", "y and wt must be double vectors of one length");
    if (par.nth != 2) gg_abort("gamgpu_bad_family", "ziP has two theta values");
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    const size_t n = (size_t) XLENGTH(y);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    sat_job jobs[SAT_JOBS];
    const size_t nb = (n + SAT_BLOCK - 1) / SAT_BLOCK;
    const int nj = nb == 0 ? 0 : (nb < SAT_JOBS ? (int) nb : SAT_JOBS);
    double lmax = 0;
    const int prev = gg_threads_set_limit(nt);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < nj; k++) {
            const size_t b0 = nb * k / nj, b1 = nb * (k + 1) / nj;
            jobs[k] = (sat_job) {REAL(y), REAL(wt), &par, lmax, REAL(out), b0 * SAT_BLOCK,
                                 b1 * SAT_BLOCK < n ? b1 * SAT_BLOCK : n, pass, 0};
        }
        if (nj > 0) gg_run_jobs(nj, sat_run, jobs, sizeof(sat_job));
        if (pass == 0)
            for (int k = 0; k < nj; k++) if (jobs[k].part > lmax) lmax = jobs[k].part;
    }
    gg_threads_set_limit(prev);
    UNPROTECT(1);
    return out;
}

/* tw()'s aic: -2 sum(wt ldTweedie(y, mu, p, phi)) + 2 with phi = dev /
 * sum(wt) and p from the working theta (efam_tw.h's gg_fm_tw_ld, the
 * series of its density; mgcv's aic calls ldTweedie in R), over the
 * thread budget in fixed jobs whose sums are added in job order in long
 * double. */
typedef struct twaic_job {
    const double *y, *mu, *wt;
    double rho, th, a, b;
    size_t i0, i1;
    long double sum;
} twaic_job;

static void *twaic_run(void *arg)
{
    twaic_job *j = arg;
    long double t = 0;
    double ld[6];
    for (size_t i = j->i0; i < j->i1; i++) {
        gg_fm_tw_ld(j->y[i], j->mu[i], j->rho, j->th, j->a, j->b, 0, ld);
        t += ld[0] * j->wt[i];
    }
    j->sum = t;
    return NULL;
}

SEXP gg_tw_aic_r(SEXP y, SEXP mu, SEXP wt, SEXP ef, SEXP dev, SEXP nthreads)
{
    const gg_fm_efpar par = gg_efpar_or_abort(ef);
    if (par.nth != 1) gg_abort("gamgpu_bad_family", "tw has one theta value");
    if (TYPEOF(y) != REALSXP || TYPEOF(mu) != REALSXP || TYPEOF(wt) != REALSXP ||
        XLENGTH(mu) != XLENGTH(y) || XLENGTH(wt) != XLENGTH(y))
        gg_abort("gamgpu_bad_input", "y, mu and wt must be double vectors of one length");
    const double d = gg_as_real(dev, "dev", 0, 1e300, "gamgpu_bad_input");
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    const size_t n = (size_t) XLENGTH(y);
    long double sw = 0;
    for (size_t i = 0; i < n; i++) sw += REAL(wt)[i];
    const double rho = log(d / (double) sw);
    twaic_job jobs[SAT_JOBS];
    const size_t nb = (n + SAT_BLOCK - 1) / SAT_BLOCK;
    const int nj = nb == 0 ? 0 : (nb < SAT_JOBS ? (int) nb : SAT_JOBS);
    for (int k = 0; k < nj; k++) {
        const size_t b0 = nb * k / nj, b1 = nb * (k + 1) / nj;
        jobs[k] = (twaic_job) {REAL(y), REAL(mu), REAL(wt), rho, par.th[0], par.aux[0],
                               par.aux[1], b0 * SAT_BLOCK,
                               b1 * SAT_BLOCK < n ? b1 * SAT_BLOCK : n, 0};
    }
    const int prev = gg_threads_set_limit(nt);
    if (nj > 0) gg_run_jobs(nj, twaic_run, jobs, sizeof(twaic_job));
    gg_threads_set_limit(prev);
    long double t = 0;
    for (int k = 0; k < nj; k++) t += jobs[k].sum;
    return Rf_ScalarReal(-2 * (double) t + 2);
}

/* dev.resids(y, mu, wt) of an extended family at its parameters, row by
 * row over the thread budget (gg_efam_dev_resids_r), or their sum at one
 * mu for every row (gg_efam_dev_sum_r): what find.null.dev()'s search
 * evaluates some twenty times over all rows (for nb, tw, scat, ocat), in
 * R. */
typedef struct devr_job {
    int fam;
    const double *y, *yat, *mu, *wt;
    double mu1;                 /* every row's mu where mu is NULL */
    const gg_fm_efpar *par;
    double *out;                /* the rows, or NULL: their sum alone */
    long double sum;
    size_t i0, i1;
} devr_job;

static void *devr_run(void *arg)
{
    devr_job *j = arg;
    double Dmu, EDmu2;
    long double s = 0;
    for (size_t i = j->i0; i < j->i1; i++) {
        const double d = gg_fm_ef_dd0(j->fam, j->y[i], j->yat ? j->yat[i] : j->y[i],
                                      j->mu ? j->mu[i] : j->mu1, j->wt[i], j->par, &Dmu,
                                      &EDmu2);
        if (j->out) j->out[i] = d; else s += d;
    }
    j->sum = s;
    return NULL;
}

/* The rows (out != NULL) or their sum over fixed jobs of whole blocks,
 * summed in job order: the same for any thread count. */
static double devr_pass(SEXP family, SEXP y, SEXP mu, SEXP wt, SEXP ef, SEXP nthreads,
                        double *out)
{
    if (!Rf_isString(family) || XLENGTH(family) < 1)
        gg_abort("gamgpu_bad_family", "family must be a string");
    gg_status st;
    gg_status_clear(&st);
    gg_family f;
    if (gg_family_lookup(CHAR(STRING_ELT(family, 0)), "identity", &f, &st)) gg_raise(&st);
    const gg_fm_efpar par = gg_efpar_or_abort(ef);
    if (TYPEOF(y) != REALSXP || TYPEOF(mu) != REALSXP || TYPEOF(wt) != REALSXP)
        gg_abort("gamgpu_bad_input", "y, mu and wt must be double vectors");
    const size_t n = (size_t) XLENGTH(y);
    const int mu1 = out == NULL && XLENGTH(mu) == 1 && n != 1;
    if (((size_t) XLENGTH(mu) != n && !mu1) || ((size_t) XLENGTH(wt) != n && XLENGTH(wt) != 1))
        gg_abort("gamgpu_bad_input", "mu and wt must have y's length");
    const int nt = gg_as_int(nthreads, "nthreads", 1, GG_MAX_THREADS, "gamgpu_bad_input");
    /* dev.resids recycles a single weight, as R does */
    SEXP w = wt;
    if (XLENGTH(wt) == 1 && n != 1) {
        w = Rf_allocVector(REALSXP, (R_xlen_t) n);
        for (size_t i = 0; i < n; i++) REAL(w)[i] = REAL(wt)[0];
    }
    PROTECT(w);
    devr_job jobs[SAT_JOBS];
    const size_t nb = (n + SAT_BLOCK - 1) / SAT_BLOCK;
    const int nj = nb == 0 ? 0 : (nb < SAT_JOBS ? (int) nb : SAT_JOBS);
    for (int k = 0; k < nj; k++) {
        const size_t b0 = nb * k / nj, b1 = nb * (k + 1) / nj;
        jobs[k] = (devr_job) {.fam = (int) f.fam, .y = REAL(y), .yat = gg_y_censor(y),
                              .mu = mu1 ? NULL : REAL(mu), .mu1 = REAL(mu)[0],
                              .wt = REAL(w), .par = &par, .out = out, .sum = 0,
                              .i0 = b0 * SAT_BLOCK,
                              .i1 = b1 * SAT_BLOCK < n ? b1 * SAT_BLOCK : n};
    }
    const int prev = gg_threads_set_limit(nt);
    if (nj > 0) gg_run_jobs(nj, devr_run, jobs, sizeof(devr_job));
    gg_threads_set_limit(prev);
    UNPROTECT(1);
    long double t = 0;
    for (int k = 0; k < nj; k++) t += jobs[k].sum;
    return (double) t;
}

SEXP gg_efam_dev_resids_r(SEXP family, SEXP y, SEXP mu, SEXP wt, SEXP ef, SEXP nthreads)
{
    if (TYPEOF(y) != REALSXP)
        gg_abort("gamgpu_bad_input", "y, mu and wt must be double vectors");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, XLENGTH(y)));
    devr_pass(family, y, mu, wt, ef, nthreads, REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP gg_efam_dev_sum_r(SEXP family, SEXP y, SEXP mu, SEXP wt, SEXP ef, SEXP nthreads)
{
    return Rf_ScalarReal(devr_pass(family, y, mu, wt, ef, nthreads, NULL));
}
