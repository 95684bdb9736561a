/* gpu_arena.c -- the bucketed buffer pool (see gpu_arena.h).
 *
 * Accounting invariants, per bucket: every buffer is either on the free
 * list (cached) or counted in n_in_use; bytes are derived from counts and
 * the bucket size, so they cannot drift from the lists. */
#include "gpu_arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Size classes: 2^c doubles for c <= GG_ARENA_POW2_MAX; beyond, each
 * octave 2^k < n <= 2^(k+1) in GG_ARENA_STEPS steps of 2^k /
 * GG_ARENA_STEPS (a large buffer is at most 1/8 larger than asked: a
 * power of two alone wasted up to half of the device at unlucky n). */
size_t gg_arena_class_elements(int c)
{
    if (c <= GG_ARENA_POW2_MAX)
        return (size_t) 1 << c;
    int j = c - GG_ARENA_POW2_MAX - 1;
    int k = GG_ARENA_POW2_MAX + j / GG_ARENA_STEPS;
    size_t m = (size_t) (GG_ARENA_STEPS + 1 + j % GG_ARENA_STEPS);
    return m << (k - GG_ARENA_STEP_BITS);
}

static size_t bucket_bytes(int b) { return gg_arena_class_elements(b) * sizeof(double); }

int gg_arena_bucket_of(size_t n)
{
    if (n <= 1)
        return 0;
    if (n <= (size_t) 1 << GG_ARENA_POW2_MAX) {
        int b = 0;
        while (((size_t) 1 << b) < n)
            b++;
        return b;
    }
    int k = 0;                      /* 2^k < n <= 2^(k+1) */
    while ((((size_t) 1) << (k + 1)) < n) {
        k++;
        if (k + 1 > GG_ARENA_POW2_MAX + GG_ARENA_OCTAVES)
            return -1;
    }
    size_t step = (size_t) 1 << (k - GG_ARENA_STEP_BITS);
    size_t m = (n + step - 1) / step;           /* GG_ARENA_STEPS + 1 .. 2 GG_ARENA_STEPS */
    return GG_ARENA_POW2_MAX + 1 + (k - GG_ARENA_POW2_MAX) * GG_ARENA_STEPS +
           (int) (m - GG_ARENA_STEPS - 1);
}

void gg_arena_init(gg_arena *a, gg_allocator allocator)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->lock, NULL);
    a->allocator = allocator;
    a->initialised = 1;
}

static double trim_locked(gg_arena *a)
{
    double freed = 0;
    for (int b = 0; b < GG_ARENA_NBUCKETS; b++) {
        gg_arena_bucket *k = &a->bucket[b];
        for (size_t i = 0; i < k->n_free; i++) {
            a->allocator.free(a->allocator.ctx, k->free_list[i]);
            freed += (double) bucket_bytes(b);
        }
        k->n_free = 0;
    }
    return freed;
}

static double bytes_held_locked(const gg_arena *a)
{
    double s = 0;
    for (int b = 0; b < GG_ARENA_NBUCKETS; b++)
        s += (double) (a->bucket[b].n_free + a->bucket[b].n_in_use) * (double) bucket_bytes(b);
    return s;
}

void gg_arena_destroy(gg_arena *a)
{
    if (!a->initialised)
        return;
    pthread_mutex_lock(&a->lock);
    trim_locked(a);
    for (int b = 0; b < GG_ARENA_NBUCKETS; b++) {
        free(a->bucket[b].free_list);
        a->bucket[b].free_list = NULL;
        a->bucket[b].cap = 0;
        a->bucket[b].n_in_use = 0;
    }
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_destroy(&a->lock);
    a->initialised = 0;
}

/* A budget below what the arena holds frees its cached buffers at once: a
 * cached block is handed out without a look at the budget, so otherwise a
 * cap set after a large fit would not bind on the next one. */
void gg_arena_set_budget(gg_arena *a, size_t bytes)
{
    pthread_mutex_lock(&a->lock);
    a->budget_bytes = bytes;
    if (bytes > 0 && bytes_held_locked(a) > (double) bytes)
        trim_locked(a);
    pthread_mutex_unlock(&a->lock);
}

static void format_bytes(double bytes, char *buf, size_t size)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024 && u < 6) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

/* One attempt at a fresh allocation within the budget. */
static int fresh_locked(gg_arena *a, int b, uint64_t *out, char *err, size_t errlen)
{
    size_t bytes = bucket_bytes(b);
    if (a->budget_bytes > 0 && bytes_held_locked(a) + (double) bytes > (double) a->budget_bytes) {
        char cap[32];
        format_bytes((double) a->budget_bytes, cap, sizeof cap);
        snprintf(err, errlen, "over the arena's budget of %s (option gamgpu.device_memory)", cap);
        return GG_ALLOC_OOM;
    }
    return a->allocator.alloc(a->allocator.ctx, bytes, out, err, errlen);
}

int gg_arena_alloc(gg_arena *a, size_t n, const char *label, gg_dbuf *out, gg_status *st)
{
    out->ptr = 0;
    out->bucket = -1;
    out->elements = n;
    int b = gg_arena_bucket_of(n);
    if (b < 0)
        return gg_fail(st, "gamgpu_device_oom",
                       "%s: cannot allocate %.0f doubles on %s: the size is not representable",
                       label, (double) n, a->allocator.where);

    pthread_mutex_lock(&a->lock);
    gg_arena_bucket *k = &a->bucket[b];
    if (k->n_free > 0) {
        out->ptr = k->free_list[--k->n_free];
        k->n_in_use++;
        k->hits++;
        pthread_mutex_unlock(&a->lock);
        out->bucket = b;
        return 0;
    }
    /* Make room on the free list now, so release() never needs to grow it
     * (and so never fails). */
    if (k->cap < k->n_in_use + 1) {
        size_t cap = k->cap ? 2 * k->cap : 4;
        uint64_t *fl = realloc(k->free_list, cap * sizeof *fl);
        if (fl == NULL) {
            pthread_mutex_unlock(&a->lock);
            return gg_fail(st, "gamgpu_host_oom", "%s: out of host memory for arena bookkeeping", label);
        }
        k->free_list = fl;
        k->cap = cap;
    }
    char err[512] = "";
    int rc = fresh_locked(a, b, &out->ptr, err, sizeof err);
    if (rc == GG_ALLOC_OOM) {
        /* Cached buffers of other sizes may be what stands in the way. */
        a->oom_retries++;
        trim_locked(a);
        err[0] = '\0';
        rc = fresh_locked(a, b, &out->ptr, err, sizeof err);
    }
    if (rc == GG_ALLOC_OK) {
        k->n_in_use++;
        k->misses++;
        pthread_mutex_unlock(&a->lock);
        out->bucket = b;
        return 0;
    }
    pthread_mutex_unlock(&a->lock);
    out->ptr = 0;
    char size[32];
    format_bytes((double) bucket_bytes(b), size, sizeof size);
    return gg_fail(st, rc == GG_ALLOC_OOM ? "gamgpu_device_oom" : "gamgpu_device_error",
                   "%s: could not allocate %s (%.0f doubles, a buffer of %.0f) on %s%s: %s",
                   label, size, (double) n, (double) gg_arena_class_elements(b),
                   a->allocator.where,
                   rc == GG_ALLOC_OOM ? " even after freeing the arena's cached buffers" : "",
                   err);
}

void gg_arena_release(gg_arena *a, gg_dbuf *buf)
{
    if (buf->ptr == 0 || buf->bucket < 0)
        return;
    pthread_mutex_lock(&a->lock);
    gg_arena_bucket *k = &a->bucket[buf->bucket];
    /* cap >= n_in_use was ensured at allocation, so this always fits. */
    k->free_list[k->n_free++] = buf->ptr;
    k->n_in_use--;
    pthread_mutex_unlock(&a->lock);
    buf->ptr = 0;
    buf->bucket = -1;
}

double gg_arena_trim(gg_arena *a)
{
    pthread_mutex_lock(&a->lock);
    double freed = trim_locked(a);
    pthread_mutex_unlock(&a->lock);
    return freed;
}

int gg_arena_stats(gg_arena *a, gg_arena_bucket_stats *rows, double *cached, double *in_use)
{
    int n = 0;
    double tc = 0, tu = 0;
    pthread_mutex_lock(&a->lock);
    for (int b = 0; b < GG_ARENA_NBUCKETS; b++) {
        const gg_arena_bucket *k = &a->bucket[b];
        double bc = (double) k->n_free * (double) bucket_bytes(b);
        double bu = (double) k->n_in_use * (double) bucket_bytes(b);
        tc += bc;
        tu += bu;
        if (k->hits + k->misses == 0 && k->n_free == 0 && k->n_in_use == 0)
            continue;
        if (rows != NULL) {
            gg_arena_bucket_stats *r = &rows[n];
            r->bucket = b;
            r->elements = gg_arena_class_elements(b);
            r->n_cached = k->n_free;
            r->n_in_use = k->n_in_use;
            r->bytes_cached = bc;
            r->bytes_in_use = bu;
            r->hits = k->hits;
            r->misses = k->misses;
        }
        n++;
    }
    pthread_mutex_unlock(&a->lock);
    if (cached)
        *cached = tc;
    if (in_use)
        *in_use = tu;
    return n;
}

void gg_buflist_init(gg_buflist *l, gg_arena *a)
{
    l->arena = a;
    l->n = 0;
}

uint64_t gg_buflist_alloc(gg_buflist *l, size_t n, const char *label, gg_status *st)
{
    if (l->n >= GG_BUFLIST_MAX) {
        gg_fail(st, "gamgpu_internal_error", "%s: too many buffers in one routine", label);
        return 0;
    }
    gg_dbuf *b = &l->buf[l->n];
    if (gg_arena_alloc(l->arena, n, label, b, st) != 0)
        return 0;
    l->n++;
    return b->ptr;
}

void gg_buflist_truncate(gg_buflist *l, int keep)
{
    while (l->n > keep)
        gg_arena_release(l->arena, &l->buf[--l->n]);
}

void gg_buflist_release(gg_buflist *l)
{
    gg_buflist_truncate(l, 0);
}
