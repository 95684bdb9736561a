/* interrupt.h -- a user interrupt seen from the package's pure C, on any
 * thread.  The glue arms it around a long call with a poll function that
 * asks R (R's thread only); long loops call gg_interrupt_check() at block
 * boundaries: on the armed (R's) thread it polls R, at most every
 * GG_INTERRUPT_POLL_MS, and on every thread it returns whether an interrupt
 * was seen.  A loop that sees one stops at its next block; its caller
 * returns the status "gamgpu_interrupted" (gg_interrupt_fail()).  Waits for
 * helper threads poll too (threads.c), so R hears the interrupt while its
 * thread only waits. */
#ifndef GAMGPU_INTERRUPT_H
#define GAMGPU_INTERRUPT_H

#include "status.h"

#define GG_INTERRUPT_POLL_MS 20

/* Arm on the calling thread (R's) with poll(ctx, waiting): nonzero when
 * the user interrupted; polled at most every poll_ms (GG_INTERRUPT_POLL_MS;
 * 0: at every check, for the tests' injected interrupts).  waiting is 1 for
 * the polls of a wait (gg_interrupt_check_wait), whose number depends on
 * how long the wait takes, 0 for a loop's block boundaries, whose number a
 * given fit fixes.  Clears an earlier interrupt.  Calls nest: the
 * outermost arm's poll and thread hold until the matching disarm. */
void gg_interrupt_arm(int (*poll)(void *ctx, int waiting), void *ctx, int poll_ms);
/* Returns whether an interrupt was seen since the arm (the outermost
 * disarm clears it): a poll may have taken R's interrupt while no loop was
 * left to stop, and the caller must not lose it. */
int gg_interrupt_disarm(void);

/* Any thread: nonzero once an interrupt has been seen since the arm; on
 * the armed thread, polls first when GG_INTERRUPT_POLL_MS have passed. */
int gg_interrupt_check(void);

/* As gg_interrupt_check, for a wait's repeated polls (waiting = 1). */
int gg_interrupt_check_wait(void);

/* Whether an interrupt has been seen, without polling. */
int gg_interrupt_seen(void);

/* The status of work stopped by an interrupt, during `what`; returns -1. */
int gg_interrupt_fail(gg_status *st, const char *what);

#endif
