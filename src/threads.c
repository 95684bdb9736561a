/* threads.c -- gg_run_jobs(): a fan-out over POSIX threads with a
 * fallback to the caller's thread (threads.h). */
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>

int gg_run_jobs(int n, void *(*fn)(void *), void *jobs, size_t size)
{
    if (n < 1)
        return 0;
    pthread_t *tid = malloc((size_t) n * sizeof *tid);
    int *started = calloc((size_t) n, sizeof *started);
    if (tid == NULL || started == NULL) {
        free(tid);
        free(started);
        return -1;
    }
    char *job = jobs;
    for (int t = 1; t < n; t++)
        started[t] = pthread_create(&tid[t], NULL, fn, job + (size_t) t * size) == 0;
    fn(job);
    for (int t = 1; t < n; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            fn(job + (size_t) t * size);
    }
    free(tid);
    free(started);
    return 0;
}
