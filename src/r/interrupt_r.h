/* interrupt_r.h -- arming interrupt.h from the glue (interrupt_r.c). */
#ifndef GAMGPU_INTERRUPT_R_H
#define GAMGPU_INTERRUPT_R_H

#include <Rinternals.h>

#include "status.h"

/* Around a long .Call: arm before the C work, disarm after it and before
 * any R error is raised.  Disarm takes the work's status rc and returns it,
 * or -1 with *st set to gamgpu_interrupted during `what` when an interrupt
 * was seen and the work still ended well (a poll took R's interrupt, which
 * must not be lost). */
void gg_r_interrupt_arm(void);
int  gg_r_interrupt_disarm(int rc, gg_status *st, const char *what);

/* .Call: the polls the last armed call made (for tests that place an
 * injected interrupt at a chosen poll). */
SEXP gg_interrupt_polls_r(void);

#endif
