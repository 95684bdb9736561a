/* gpu_telemetry.h -- what ran where, per backend.
 *
 * Every device dispatch, kernel launch and host<->device copy is counted
 * against the backend that asked for it ("gram", later "pirls", ...), and
 * every CPU fallback is counted with its reason, so "the device ran" is a
 * measurable claim (tests assert launches > 0 and fallbacks == 0) and no
 * fallback is ever silent.  Thread-safe; compiled in every build. */
#ifndef GAMGPU_GPU_TELEMETRY_H
#define GAMGPU_GPU_TELEMETRY_H

#include <stdint.h>

#define GG_TEL_MAX_BACKENDS 32
#define GG_TEL_MAX_REASONS  16
#define GG_TEL_LABEL        32
#define GG_TEL_REASON       512

typedef struct gg_tel_reason {
    char     text[GG_TEL_REASON];
    uint64_t count;
} gg_tel_reason;

typedef struct gg_tel_entry {
    char          backend[GG_TEL_LABEL];
    uint64_t      dispatches;      /* device calls started */
    uint64_t      launches;        /* kernels launched */
    double        h2d_bytes, d2h_bytes;
    uint64_t      fallbacks;       /* CPU runs where the device was wanted */
    gg_tel_reason reason[GG_TEL_MAX_REASONS]; /* distinct reasons, oldest first */
    int           n_reasons;
} gg_tel_entry;

void gg_tel_dispatch(const char *backend);
void gg_tel_launch(const char *backend, uint64_t n);
void gg_tel_h2d(const char *backend, double bytes);
void gg_tel_d2h(const char *backend, double bytes);
void gg_tel_fallback(const char *backend, const char *reason);

/* Copy out the table (up to max entries); returns the number of entries. */
int  gg_tel_snapshot(gg_tel_entry *out, int max);
void gg_tel_reset(void);

#endif
