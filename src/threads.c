/* threads.c -- the package's POSIX threads (threads.h): gg_run_jobs(), a
 * one-off fan-out with a fallback to the caller's thread; gg_task, one job
 * beside the caller; gg_pool, parked workers for many short fan-outs. */
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>

void gg_run_jobs(int n, void *(*fn)(void *), void *jobs, size_t size)
{
    char *job = jobs;
    if (n < 1)
        return;
    pthread_t *tid = n > 1 ? malloc((size_t) n * sizeof *tid) : NULL;
    int *started = n > 1 ? calloc((size_t) n, sizeof *started) : NULL;
    if (tid == NULL || started == NULL) {     /* one job, or no memory: in turn here */
        free(tid);
        free(started);
        for (int t = 0; t < n; t++)
            fn(job + (size_t) t * size);
        return;
    }
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
}

/* ---- gg_task: one job beside the caller ---------------------------------- */

void gg_task_start(gg_task *task, void *(*fn)(void *), void *arg)
{
    task->joined = 0;
    task->started = pthread_create(&task->tid, NULL, fn, arg) == 0;
    if (!task->started)
        fn(arg);
}

void gg_task_join(gg_task *task)
{
    if (task->started && !task->joined)
        pthread_join(task->tid, NULL);
    task->joined = 1;
}

/* ---- gg_pool: parked workers woken once per fan-out ---------------------- */

struct gg_pool {
    int nworkers, started;
    pthread_t *tid;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation;   /* bumped once per gg_pool_run */
    int quit, busy;             /* workers still inside the current fan-out */
    void *(*fn)(void *);
    char *jobs;
    size_t size;
    int njobs, next;
};

/* hand out jobs until none is left (called with the mutex held) */
static void pool_drain(gg_pool *pool)
{
    while (pool->next < pool->njobs) {
        char *job = pool->jobs + (size_t) pool->next++ * pool->size;
        void *(*fn)(void *) = pool->fn;
        pthread_mutex_unlock(&pool->mu);
        fn(job);
        pthread_mutex_lock(&pool->mu);
    }
}

static void *pool_worker(void *arg)
{
    gg_pool *pool = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->quit && pool->generation == seen)
            pthread_cond_wait(&pool->wake, &pool->mu);
        if (pool->quit)
            break;
        seen = pool->generation;
        pool_drain(pool);
        if (--pool->busy == 0)
            pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

gg_pool *gg_pool_new(int nthreads)
{
    if (nthreads < 2)
        return NULL;
    gg_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return NULL;
    pool->tid = malloc((size_t) (nthreads - 1) * sizeof *pool->tid);
    if (pool->tid == NULL || pthread_mutex_init(&pool->mu, NULL) != 0) {
        free(pool->tid);
        free(pool);
        return NULL;
    }
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    for (int t = 0; t < nthreads - 1; t++) {
        if (pthread_create(&pool->tid[t], NULL, pool_worker, pool) != 0)
            break;
        pool->started++;
    }
    pool->nworkers = pool->started;
    if (pool->nworkers == 0) {
        gg_pool_free(pool);
        return NULL;
    }
    return pool;
}

int gg_pool_size(const gg_pool *pool)
{
    return pool != NULL ? pool->nworkers + 1 : 1;
}

void gg_pool_run(gg_pool *pool, int n, void *(*fn)(void *), void *jobs, size_t size)
{
    if (pool == NULL || n < 2) {
        for (int k = 0; k < n; k++)
            fn((char *) jobs + (size_t) k * size);
        return;
    }
    pthread_mutex_lock(&pool->mu);
    pool->fn = fn;
    pool->jobs = jobs;
    pool->size = size;
    pool->njobs = n;
    pool->next = 0;
    pool->busy = pool->nworkers;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pool_drain(pool);
    while (pool->busy > 0)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

void gg_pool_free(gg_pool *pool)
{
    if (pool == NULL)
        return;
    pthread_mutex_lock(&pool->mu);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (int t = 0; t < pool->started; t++)
        pthread_join(pool->tid[t], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    pthread_mutex_destroy(&pool->mu);
    free(pool->tid);
    free(pool);
}
