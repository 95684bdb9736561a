/* threads.h -- the ways the package's pure C spreads work over POSIX
 * threads: gg_run_jobs() for one-off row work (basis_tprs.c, xplan.c,
 * predict_cpu.c) and a gg_pool of parked workers for many short fan-outs
 * in a row (the REML Newton's p x p products).  No R API in any job. */
#ifndef GAMGPU_THREADS_H
#define GAMGPU_THREADS_H

#include <pthread.h>
#include <stddef.h>

/* Run fn on each of n jobs (job k at (char *) jobs + k * size): jobs 1 ..
 * n-1 on threads of their own, job 0 on the caller's thread; a job whose
 * thread cannot be started runs on the caller's thread afterwards, and with
 * no memory for the thread handles all run there in turn.  Returns when
 * all are done. */
void gg_run_jobs(int n, void *(*fn)(void *), void *jobs, size_t size);

/* One job on a thread of its own while the caller goes on (run on the
 * caller's thread at gg_task_start when no thread can be had); gg_task_join
 * waits for it and may be called more than once. */
typedef struct gg_task {
    pthread_t tid;
    int started, joined;
} gg_task;
void gg_task_start(gg_task *task, void *(*fn)(void *), void *arg);
void gg_task_join(gg_task *task);

/* A pool of nthreads - 1 parked worker threads; the caller is the last one.
 * gg_pool_new() returns NULL when nthreads < 2 or threads cannot be had. */
typedef struct gg_pool gg_pool;
gg_pool *gg_pool_new(int nthreads);
int      gg_pool_size(const gg_pool *pool);       /* threads, the caller's included */
/* Run fn on each of n jobs (as gg_run_jobs) over the pool's threads and the
 * caller's; returns when all are done.  A NULL pool runs them in order on
 * the caller's thread. */
void     gg_pool_run(gg_pool *pool, int n, void *(*fn)(void *), void *jobs, size_t size);
void     gg_pool_free(gg_pool *pool);

#endif
