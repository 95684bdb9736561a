/* threads.h -- the one way the package's pure C spreads row work over POSIX
 * threads (basis_tprs.c, xplan.c, predict_cpu.c): no R API in any job. */
#ifndef GAMGPU_THREADS_H
#define GAMGPU_THREADS_H

#include <stddef.h>

/* Run fn on each of n jobs (job k at (char *) jobs + k * size): jobs 1 ..
 * n-1 on threads of their own, job 0 on the caller's thread; a job whose
 * thread cannot be started runs on the caller's thread afterwards.  Returns
 * when all are done: 0, or -1 when there was no memory for the thread
 * handles (then no job has run). */
int gg_run_jobs(int n, void *(*fn)(void *), void *jobs, size_t size);

#endif
