/* interrupt.c -- the user interrupt as the pure C sees it (interrupt.h):
 * one process-wide flag, set by polls on the armed thread and read by every
 * thread.  No R API here: the glue hands in the poll function. */
#include "interrupt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int seen;            /* an interrupt since the outermost arm */
static int depth;                  /* arms not yet disarmed (armed thread only) */
static pthread_t owner;            /* the armed thread */
static int (*poll_fn)(void *, int);
static void *poll_ctx;
static double last_poll;           /* seconds, monotonic (armed thread only) */
static double poll_every;          /* seconds */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

void gg_interrupt_arm(int (*poll)(void *ctx, int waiting), void *ctx, int poll_ms)
{
    if (depth++ > 0)
        return;
    poll_every = 1e-3 * (poll_ms < 0 ? 0 : poll_ms);
    owner = pthread_self();
    poll_fn = poll;
    poll_ctx = ctx;
    last_poll = now();
    atomic_store(&seen, 0);
}

int gg_interrupt_disarm(void)
{
    const int was = atomic_load(&seen) != 0;
    if (depth > 0 && --depth == 0) {
        poll_fn = NULL;
        atomic_store(&seen, 0);
    }
    return was;
}

static int check(int waiting)
{
    if (atomic_load_explicit(&seen, memory_order_relaxed))
        return 1;
    if (depth > 0 && poll_fn != NULL && pthread_equal(pthread_self(), owner)) {
        const double t = now();
        if (t - last_poll >= poll_every) {
            last_poll = t;
            if (poll_fn(poll_ctx, waiting)) {
                atomic_store(&seen, 1);
                return 1;
            }
        }
    }
    return 0;
}

int gg_interrupt_check(void)
{
    return check(0);
}

int gg_interrupt_check_wait(void)
{
    return check(1);
}

int gg_interrupt_seen(void)
{
    return atomic_load(&seen) != 0;
}

int gg_interrupt_fail(gg_status *st, const char *what)
{
    return gg_fail(st, "gamgpu_interrupted", "interrupted by the user during %s", what);
}
