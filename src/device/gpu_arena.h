/* gpu_arena.h -- a pool of f64 device buffers in size classes.
 *
 * One arena per device (cuda_runtime.c owns them).  A request for n doubles
 * is served from its size class -- next_pow2(max(n, 1)) up to 2^20
 * doubles, beyond that the next eighth of an octave -- a cached buffer of
 * that class when one is free (a hit), else a fresh allocation (a miss).
 * Released buffers go back to their bucket's free list, so a repeated fit
 * allocates nothing new.  The lock is held only inside alloc/release.
 *
 * The arena knows nothing of CUDA: memory comes from a gg_allocator, so the
 * same bookkeeping runs on the CPU-only build with a host allocator (tests
 * of hits, misses, trim-and-retry and the budget need no device). */
#ifndef GAMGPU_GPU_ARENA_H
#define GAMGPU_GPU_ARENA_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* classes 0..GG_ARENA_POW2_MAX: 2^c doubles; then GG_ARENA_STEPS a
 * octave (2^GG_ARENA_STEP_BITS) for GG_ARENA_OCTAVES octaves (up to 2^60
 * doubles: beyond, a size has no class) */
#define GG_ARENA_POW2_MAX  20
#define GG_ARENA_STEP_BITS 3
#define GG_ARENA_STEPS     (1 << GG_ARENA_STEP_BITS)
#define GG_ARENA_OCTAVES   40
#define GG_ARENA_NBUCKETS  (GG_ARENA_POW2_MAX + 1 + GG_ARENA_OCTAVES * GG_ARENA_STEPS)

/* Allocation result codes of a gg_allocator. */
enum { GG_ALLOC_OK = 0, GG_ALLOC_OOM = 1, GG_ALLOC_ERROR = 2 };

typedef struct gg_allocator {
    void *ctx;
    /* Allocate `bytes`; store the address in *out.  Returns a GG_ALLOC_*
     * code and, when not OK, a description of the failure in err. */
    int  (*alloc)(void *ctx, size_t bytes, uint64_t *out, char *err, size_t errlen);
    void (*free)(void *ctx, uint64_t ptr);
    char where[32];  /* "cuda:0", "host" -- for messages */
} gg_allocator;

typedef struct gg_arena_bucket {
    uint64_t *free_list;     /* cached buffers, ready for reuse */
    size_t    n_free, cap;
    size_t    n_in_use;      /* handed out, not yet released */
    uint64_t  hits, misses;
} gg_arena_bucket;

typedef struct gg_arena {
    pthread_mutex_t  lock;
    gg_allocator     allocator;
    gg_arena_bucket  bucket[GG_ARENA_NBUCKETS];
    size_t           budget_bytes;  /* 0 = no cap beyond the device's own */
    uint64_t         oom_retries;   /* trims forced by an out-of-memory */
    int              initialised;
} gg_arena;

/* A buffer handed out by the arena.  ptr == 0 means "none". */
typedef struct gg_dbuf {
    uint64_t ptr;
    int      bucket;    /* its size class (gg_arena_class_elements()) */
    size_t   elements;  /* what was asked for */
} gg_dbuf;

typedef struct gg_arena_bucket_stats {
    int      bucket;          /* the size class */
    size_t   elements;        /* capacity of each buffer, in doubles */
    size_t   n_cached, n_in_use;
    double   bytes_cached, bytes_in_use;
    uint64_t hits, misses;
} gg_arena_bucket_stats;

/* The size class of a request for n doubles; -1 when n is too large. */
int    gg_arena_bucket_of(size_t n_doubles);
/* The doubles a buffer of size class c holds. */
size_t gg_arena_class_elements(int c);

void   gg_arena_init(gg_arena *a, gg_allocator allocator);
/* Frees every cached buffer and the bookkeeping; in-use buffers are the
 * caller's to release first (the context teardown reclaims them anyway). */
void   gg_arena_destroy(gg_arena *a);

/* Allocate at least n doubles for `label` (the requesting backend, used in
 * messages).  On out-of-memory the arena frees its cached buffers and tries
 * once more.  Failure: class gamgpu_device_oom (or gamgpu_device_error). */
int    gg_arena_alloc(gg_arena *a, size_t n, const char *label, gg_dbuf *out,
                      gg_status *st);
/* Return a buffer to its bucket; a no-op for ptr == 0.  Clears *buf. */
void   gg_arena_release(gg_arena *a, gg_dbuf *buf);
/* Free all cached (not in-use) buffers; returns the bytes freed. */
double gg_arena_trim(gg_arena *a);

void   gg_arena_set_budget(gg_arena *a, size_t bytes);
/* Fill up to GG_ARENA_NBUCKETS rows for buckets that were ever used;
 * returns how many.  Totals go to *cached and *in_use when non-NULL. */
int    gg_arena_stats(gg_arena *a, gg_arena_bucket_stats *rows,
                      double *cached, double *in_use);

/* A small owner of arena buffers: every buffer a routine takes goes in its
 * list and one gg_buflist_release() on every exit path returns them all. */
#define GG_BUFLIST_MAX 64
typedef struct gg_buflist {
    gg_arena *arena;
    gg_dbuf   buf[GG_BUFLIST_MAX];
    int       n;
} gg_buflist;

void gg_buflist_init(gg_buflist *l, gg_arena *a);
/* Allocate into the list; returns the device address or 0 on failure. */
uint64_t gg_buflist_alloc(gg_buflist *l, size_t n, const char *label, gg_status *st);
void gg_buflist_release(gg_buflist *l);
/* Release the buffers taken after the first `keep` (an abandoned attempt). */
void gg_buflist_truncate(gg_buflist *l, int keep);

#endif
