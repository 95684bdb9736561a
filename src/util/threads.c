/* threads.c -- the package's POSIX threads (threads.h): the process-wide
 * budget of helper threads, gg_run_jobs(), a one-off fan-out; gg_task, one
 * job beside the caller; gg_pool, parked workers for many short fan-outs.
 * A job that cannot have a thread (no slot left, or pthread_create failed)
 * runs on the caller's thread, so every path gives the same results. */
#include "threads.h"
#include "interrupt.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* ---- the budget: slots for helper threads -------------------------------- */

static pthread_mutex_t budget_mu = PTHREAD_MUTEX_INITIALIZER;
static int budget_limit;        /* most threads at once, the caller's included; < 1: none */
static int budget_helpers;      /* helper threads holding a slot */
static int budget_peak = 1;     /* most threads at once since the last reset */

int gg_threads_set_limit(int nthreads)
{
    pthread_mutex_lock(&budget_mu);
    const int prev = budget_limit;
    budget_limit = nthreads < 1 ? 0 : nthreads;
    pthread_mutex_unlock(&budget_mu);
    return prev;
}

int gg_threads_peak(int reset)
{
    pthread_mutex_lock(&budget_mu);
    const int peak = budget_peak;
    if (reset)
        budget_peak = 1 + budget_helpers;
    pthread_mutex_unlock(&budget_mu);
    return peak;
}

static int slot_take(void)
{
    pthread_mutex_lock(&budget_mu);
    const int ok = budget_limit < 1 || 1 + budget_helpers < budget_limit;
    if (ok && 1 + ++budget_helpers > budget_peak)
        budget_peak = 1 + budget_helpers;
    pthread_mutex_unlock(&budget_mu);
    return ok;
}

static void slot_give(void)
{
    pthread_mutex_lock(&budget_mu);
    budget_helpers--;
    pthread_mutex_unlock(&budget_mu);
}

/* A thread for body(arg) if a slot can be had; 1 when it started.  body
 * gives the slot back (slot_give) when its work is done. */
static int helper_start(pthread_t *tid, void *(*body)(void *), void *arg)
{
    if (!slot_take())
        return 0;
    if (pthread_create(tid, NULL, body, arg) != 0) {
        slot_give();
        return 0;
    }
    return 1;
}

/* ---- waiting for helpers, hearing interrupts meanwhile ------------------ */

/* Helpers count themselves done under mu; the waiting thread wakes at
 * least every GG_INTERRUPT_POLL_MS to poll for a user interrupt (the
 * helpers' loops see it and stop early). */
typedef struct done_count {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int left;
} done_count;

static void done_init(done_count *d, int left)
{
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    d->left = left;
}

static void done_one(done_count *d)
{
    pthread_mutex_lock(&d->mu);
    if (--d->left == 0)
        pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

static void done_wait(done_count *d)
{
    pthread_mutex_lock(&d->mu);
    while (d->left > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000L * GG_INTERRUPT_POLL_MS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&d->cv, &d->mu, &ts);
        if (d->left > 0) {
            pthread_mutex_unlock(&d->mu);
            gg_interrupt_check_wait();
            pthread_mutex_lock(&d->mu);
        }
    }
    pthread_mutex_unlock(&d->mu);
}

/* After the helpers are joined (none touches d any more). */
static void done_destroy(done_count *d)
{
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
}

/* ---- gg_run_jobs: a one-off fan-out -------------------------------------- */

typedef struct job_helper {
    void *(*fn)(void *);
    void *arg;
    done_count *done;
} job_helper;

static void *job_helper_run(void *arg)
{
    job_helper *h = arg;
    h->fn(h->arg);
    slot_give();
    done_one(h->done);
    return NULL;
}

void gg_run_jobs(int n, void *(*fn)(void *), void *jobs, size_t size)
{
    char *job = jobs;
    if (n < 1)
        return;
    pthread_t *tid = n > 1 ? malloc((size_t) n * sizeof *tid) : NULL;
    job_helper *h = n > 1 ? malloc((size_t) n * sizeof *h) : NULL;
    int *started = n > 1 ? calloc((size_t) n, sizeof *started) : NULL;
    if (tid == NULL || h == NULL || started == NULL) {  /* one job, or no memory: in turn here */
        free(tid);
        free(h);
        free(started);
        for (int t = 0; t < n; t++)
            fn(job + (size_t) t * size);
        return;
    }
    done_count done;
    done_init(&done, 0);
    for (int t = 1; t < n; t++) {
        h[t] = (job_helper) {fn, job + (size_t) t * size, &done};
        pthread_mutex_lock(&done.mu);
        done.left++;
        pthread_mutex_unlock(&done.mu);
        started[t] = helper_start(&tid[t], job_helper_run, &h[t]);
        if (!started[t]) {
            pthread_mutex_lock(&done.mu);
            done.left--;
            pthread_mutex_unlock(&done.mu);
        }
    }
    fn(job);
    for (int t = 1; t < n; t++)
        if (!started[t])
            fn(job + (size_t) t * size);
    done_wait(&done);
    for (int t = 1; t < n; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
    done_destroy(&done);
    free(tid);
    free(h);
    free(started);
}

/* ---- gg_task: one job beside the caller ---------------------------------- */

static void *task_run(void *arg)
{
    gg_task *task = arg;
    task->fn(task->arg);
    slot_give();
    done_one(task->done);
    return NULL;
}

void gg_task_start(gg_task *task, void *(*fn)(void *), void *arg)
{
    task->joined = 0;
    task->fn = fn;
    task->arg = arg;
    task->done = malloc(sizeof(done_count));
    if (task->done != NULL) {
        done_init(task->done, 1);
        task->started = helper_start(&task->tid, task_run, task);
    } else {
        task->started = 0;
    }
    if (!task->started) {
        if (task->done != NULL) {
            done_destroy(task->done);
            free(task->done);
            task->done = NULL;
        }
        fn(arg);
    }
}

void gg_task_join(gg_task *task)
{
    if (task->started && !task->joined) {
        done_wait(task->done);
        pthread_join(task->tid, NULL);
        done_destroy(task->done);
        free(task->done);
        task->done = NULL;
    }
    task->joined = 1;
}

/* ---- gg_pool: parked workers woken once per fan-out ---------------------- */

typedef struct pool_worker_arg {
    struct gg_pool *pool;
    unsigned long born;         /* the generation when it was started */
} pool_worker_arg;

struct gg_pool {
    int size;                   /* threads the work is split for, the caller's included */
    int started;                /* workers running (at most size - 1) */
    pthread_t *tid;
    pool_worker_arg *warg;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation;   /* bumped once per gg_pool_run (by the caller only) */
    int quit, busy;             /* workers still inside the current fan-out */
    void *(*fn)(void *);
    char *jobs;
    size_t sz;
    int njobs, next;
};

/* hand out jobs until none is left (called with the mutex held) */
static void pool_drain(gg_pool *pool)
{
    while (pool->next < pool->njobs) {
        char *job = pool->jobs + (size_t) pool->next++ * pool->sz;
        void *(*fn)(void *) = pool->fn;
        pthread_mutex_unlock(&pool->mu);
        fn(job);
        pthread_mutex_lock(&pool->mu);
    }
}

static void *pool_worker(void *arg)
{
    pool_worker_arg *wa = arg;
    gg_pool *pool = wa->pool;
    unsigned long seen = wa->born;
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
    slot_give();
    return NULL;
}

/* Start the missing workers while slots last (on the caller's thread,
 * between fan-outs: generation does not change meanwhile). */
static void pool_grow(gg_pool *pool)
{
    while (pool->started < pool->size - 1) {
        pool_worker_arg *wa = &pool->warg[pool->started];
        wa->pool = pool;
        wa->born = pool->generation;
        if (!helper_start(&pool->tid[pool->started], pool_worker, wa))
            break;
        pool->started++;
    }
}

gg_pool *gg_pool_new(int nthreads)
{
    if (nthreads < 2)
        return NULL;
    gg_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return NULL;
    pool->tid = malloc((size_t) (nthreads - 1) * sizeof *pool->tid);
    pool->warg = malloc((size_t) (nthreads - 1) * sizeof *pool->warg);
    if (pool->tid == NULL || pool->warg == NULL || pthread_mutex_init(&pool->mu, NULL) != 0) {
        free(pool->tid);
        free(pool->warg);
        free(pool);
        return NULL;
    }
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->size = nthreads;
    pool_grow(pool);
    return pool;
}

int gg_pool_size(const gg_pool *pool)
{
    return pool != NULL ? pool->size : 1;
}

void gg_pool_run(gg_pool *pool, int n, void *(*fn)(void *), void *jobs, size_t size)
{
    if (pool != NULL && n > 1)
        pool_grow(pool);
    if (pool == NULL || n < 2 || pool->started == 0) {
        for (int k = 0; k < n; k++)
            fn((char *) jobs + (size_t) k * size);
        return;
    }
    pthread_mutex_lock(&pool->mu);
    pool->fn = fn;
    pool->jobs = jobs;
    pool->sz = size;
    pool->njobs = n;
    pool->next = 0;
    pool->busy = pool->started;
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
    free(pool->warg);
    free(pool);
}
