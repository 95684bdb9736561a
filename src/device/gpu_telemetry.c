/* gpu_telemetry.c -- counters behind gpu_telemetry() (see gpu_telemetry.h). */
#include "gpu_telemetry.h"
#include "status.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static gg_tel_entry    table[GG_TEL_MAX_BACKENDS];
static int             n_entries;

/* Entry for a backend, created on first use; the last slot collects any
 * overflow so counts are never dropped.  Caller holds the lock. */
static gg_tel_entry *entry_locked(const char *backend)
{
    for (int i = 0; i < n_entries; i++)
        if (strcmp(table[i].backend, backend) == 0)
            return &table[i];
    if (n_entries == GG_TEL_MAX_BACKENDS)
        return &table[GG_TEL_MAX_BACKENDS - 1];
    gg_tel_entry *e = &table[n_entries++];
    memset(e, 0, sizeof *e);
    gg_strlcpy(e->backend, backend, sizeof e->backend);
    return e;
}

void gg_tel_dispatch(const char *backend)
{
    pthread_mutex_lock(&tel_lock);
    entry_locked(backend)->dispatches++;
    pthread_mutex_unlock(&tel_lock);
}

void gg_tel_launch(const char *backend, uint64_t n)
{
    pthread_mutex_lock(&tel_lock);
    entry_locked(backend)->launches += n;
    pthread_mutex_unlock(&tel_lock);
}

void gg_tel_h2d(const char *backend, double bytes)
{
    pthread_mutex_lock(&tel_lock);
    entry_locked(backend)->h2d_bytes += bytes;
    pthread_mutex_unlock(&tel_lock);
}

void gg_tel_d2h(const char *backend, double bytes)
{
    pthread_mutex_lock(&tel_lock);
    entry_locked(backend)->d2h_bytes += bytes;
    pthread_mutex_unlock(&tel_lock);
}

void gg_tel_fallback(const char *backend, const char *reason)
{
    pthread_mutex_lock(&tel_lock);
    gg_tel_entry *e = entry_locked(backend);
    e->fallbacks++;
    int i;
    for (i = 0; i < e->n_reasons; i++)
        if (strncmp(e->reason[i].text, reason, GG_TEL_REASON - 1) == 0)
            break;
    if (i == e->n_reasons) {
        if (e->n_reasons < GG_TEL_MAX_REASONS)
            e->n_reasons++;
        else /* keep the newest distinct reasons: drop the oldest */
            memmove(&e->reason[0], &e->reason[1], (GG_TEL_MAX_REASONS - 1) * sizeof e->reason[0]);
        i = e->n_reasons - 1;
        gg_strlcpy(e->reason[i].text, reason, GG_TEL_REASON);
        e->reason[i].count = 0;
    }
    e->reason[i].count++;
    pthread_mutex_unlock(&tel_lock);
}

int gg_tel_snapshot(gg_tel_entry *out, int max)
{
    pthread_mutex_lock(&tel_lock);
    int n = n_entries < max ? n_entries : max;
    memcpy(out, table, (size_t) n * sizeof *out);
    pthread_mutex_unlock(&tel_lock);
    return n;
}

void gg_tel_reset(void)
{
    pthread_mutex_lock(&tel_lock);
    n_entries = 0;
    pthread_mutex_unlock(&tel_lock);
}
