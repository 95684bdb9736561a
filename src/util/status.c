/* status.c -- gg_status helpers (see status.h). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gg_status_clear(gg_status *st)
{
    st->failed = 0;
    st->cls[0] = '\0';
    st->msg[0] = '\0';
}

int gg_fail(gg_status *st, const char *cls, const char *fmt, ...)
{
    if (st == NULL || st->failed)
        return -1;
    st->failed = 1;
    gg_strlcpy(st->cls, cls, sizeof st->cls);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int gg_device_failure(const gg_status *st)
{
    return strncmp(st->cls, "gamgpu_device_", 14) == 0 ||
           strcmp(st->cls, "gamgpu_kernel_compile") == 0 ||
           strcmp(st->cls, "gamgpu_nvrtc_unavailable") == 0;
}

void gg_strlcpy(char *dst, const char *src, size_t size)
{
    if (size == 0)
        return;
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}
