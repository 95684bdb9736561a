/* threads.h -- the ways the package's pure C spreads work over POSIX
 * threads: gg_run_jobs() for one-off row work (basis_tprs.c, xplan.c,
 * predict_cpu.c, family_stats.c, setup_stats.c), gg_task for one job beside
 * the caller (fit_rows.c, engine_pirls.c, engine_postproc.c) and a gg_pool
 * of parked workers for many short fan-outs in a row (the REML Newton's
 * p x p products).  No R API in any job.
 *
 * Every helper thread takes a slot of one process-wide budget first: while
 * a limit is set (gg_threads_set_limit, by the glue around its threaded
 * work), at most `limit` threads work at once, the calling thread included
 * (R CMD check allows 2 cores); a job that gets no slot runs on the
 * caller's thread instead.  Which thread runs a job never changes a result:
 * the callers split their work the same way whatever threads they get.
 * While the caller waits for helpers it polls for a user interrupt
 * (interrupt.h), which the helpers' loops see and stop at. */
#ifndef GAMGPU_THREADS_H
#define GAMGPU_THREADS_H

#include <pthread.h>
#include <stddef.h>

/* More host threads than this is a mistake, not a machine (the glue's
 * checks of nthreads). */
#define GG_MAX_THREADS 4096

/* Sets the most threads that may work at once, the caller's included (< 1:
 * no limit); returns the previous setting.  Called by the glue on R's
 * thread while no helper runs. */
int  gg_threads_set_limit(int nthreads);
/* The most threads that worked at once (the caller's included) since the
 * last reset; reset = 1 starts counting again.  For tests. */
int  gg_threads_peak(int reset);

/* Run fn on each of n jobs (job k at (char *) jobs + k * size): jobs 1 ..
 * n-1 on threads of their own while slots last, job 0 on the caller's
 * thread; a job that gets no thread runs on the caller's thread afterwards.
 * Returns when all are done. */
void gg_run_jobs(int n, void *(*fn)(void *), void *jobs, size_t size);

/* One job on a thread of its own while the caller goes on (run on the
 * caller's thread at gg_task_start when no slot or thread can be had);
 * gg_task_join waits for it and may be called more than once. */
typedef struct gg_task {
    pthread_t tid;
    int started, joined;
    void *(*fn)(void *);
    void *arg;
    struct done_count *done;    /* threads.c's: the join waits on it, hearing interrupts */
} gg_task;
void gg_task_start(gg_task *task, void *(*fn)(void *), void *arg);
void gg_task_join(gg_task *task);

/* A pool for nthreads threads: up to nthreads - 1 parked workers (as many
 * as slots allow; gg_pool_run tries again for the missing ones) and the
 * caller.  gg_pool_new() returns NULL when nthreads < 2 or out of memory;
 * otherwise a pool whose size (gg_pool_size: nthreads) does not depend on
 * how many workers it got, so callers that split work by it split it the
 * same way every time. */
typedef struct gg_pool gg_pool;
gg_pool *gg_pool_new(int nthreads);
int      gg_pool_size(const gg_pool *pool);       /* threads, the caller's included */
/* Run fn on each of n jobs (as gg_run_jobs) over the pool's workers and
 * the caller; returns when all are done.  A NULL pool runs them in order on
 * the caller's thread. */
void     gg_pool_run(gg_pool *pool, int n, void *(*fn)(void *), void *jobs, size_t size);
/* Joins the workers and gives their slots back. */
void     gg_pool_free(gg_pool *pool);

#endif
