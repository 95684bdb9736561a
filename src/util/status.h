/* status.h -- how pure-C layers report failure.
 *
 * The engine, the backends and the device runtime never see R: a call that
 * can fail takes a gg_status*, fills it (condition class + message) and
 * returns nonzero.  Only the glue (*_r.c) turns a failed status into a
 * classed R condition (errors_r.c), after every device buffer has been
 * released, so no longjmp ever crosses device-owning code. */
#ifndef GAMGPU_STATUS_H
#define GAMGPU_STATUS_H

#include <stddef.h>

typedef struct gg_status {
    int  failed;      /* 0 = ok */
    char cls[48];     /* R condition class, e.g. "gamgpu_device_oom" */
    char msg[2048];   /* human-readable message */
} gg_status;

void gg_status_clear(gg_status *st);
/* Sets the status (first failure wins) and returns -1 so callers can write
 * `return gg_fail(st, ...)`. */
int  gg_fail(gg_status *st, const char *cls, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* 1 when the failure is the device's (no usable device, out of device
 * memory, a kernel that failed to compile or run), 0 when it is the data's
 * or the model's -- which decides whether "auto" may retry on the CPU. */
int  gg_device_failure(const gg_status *st);

/* snprintf into a fixed buffer, never overflowing, always terminated. */
void gg_strlcpy(char *dst, const char *src, size_t size);

#endif
