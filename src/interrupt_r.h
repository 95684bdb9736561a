/* interrupt_r.h -- arming interrupt.h from the glue (interrupt_r.c). */
#ifndef GAMGPU_INTERRUPT_R_H
#define GAMGPU_INTERRUPT_R_H

#include <Rinternals.h>

/* Around a long .Call: arm before the C work, disarm after it and before
 * any R error is raised; disarm returns whether an interrupt was seen,
 * which the caller raises (gamgpu_interrupted) even when its work ended. */
void gg_r_interrupt_arm(void);
int  gg_r_interrupt_disarm(void);

/* .Call: the polls the last armed call made (for tests that place an
 * injected interrupt at a chosen poll). */
SEXP gg_interrupt_polls_r(void);

#endif
