/* interrupt_r.c -- R's side of interrupt.h: the poll that asks R whether
 * the user pressed Ctrl-C (R_CheckUserInterrupt under R_ToplevelExec, so
 * R's longjmp stays inside), and the glue's arm/disarm around a long
 * .Call.  For tests, options(gamgpu.inject_interrupt = k) makes the k-th
 * poll since the option took that value report an interrupt (and polls at
 * every check): the count runs on over the armed calls of one gam_gpu()
 * -- the recipe's self-check, then the fit -- so that a test can reach
 * the fit's last polls.  Only the polls at loops' block boundaries count:
 * a wait's repeated polls (their number varies with the machine's load)
 * ask R alone.  (A count can still move by a block where a helper
 * thread's slot is taken by work running beside and R's thread does that
 * block itself.) */
#include "interrupt_r.h"
#include "interrupt.h"

#include <Rinternals.h>

static int inject_at, polls;
static double inject_opt;          /* the option's value the count is for */

static void check_fn(void *unused)
{
    (void) unused;
    R_CheckUserInterrupt();
}

static int poll_r(void *ctx, int waiting)
{
    (void) ctx;
    if (!waiting && inject_at > 0 && ++polls >= inject_at)
        return 1;
    return R_ToplevelExec(check_fn, NULL) == FALSE;
}

void gg_r_interrupt_arm(void)
{
    SEXP v = Rf_GetOption1(Rf_install("gamgpu.inject_interrupt"));
    double k = 0;
    if ((Rf_isInteger(v) || Rf_isReal(v)) && Rf_length(v) == 1) {
        k = Rf_asReal(v);
        if (!(k >= 1 && k < 2e9))
            k = 0;
    }
    if (k == 0 || k != inject_opt)
        polls = 0;
    inject_opt = k;
    inject_at = (int) k;
    gg_interrupt_arm(poll_r, NULL, inject_at > 0 ? 0 : GG_INTERRUPT_POLL_MS);
}

SEXP gg_interrupt_polls_r(void)
{
    return Rf_ScalarReal((double) polls);
}

int gg_r_interrupt_disarm(int rc, gg_status *st, const char *what)
{
    if (gg_interrupt_disarm() && rc == 0)
        return gg_interrupt_fail(st, what);
    return rc;
}
