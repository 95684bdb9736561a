/* errors_r.h -- classed R conditions from glue code (see errors_r.c). */
#ifndef GAMGPU_ERRORS_R_H
#define GAMGPU_ERRORS_R_H

#include "status.h"

#if defined(__GNUC__)
#define GG_NORETURN __attribute__((noreturn))
#else
#define GG_NORETURN
#endif

GG_NORETURN void gg_raise(const gg_status *st);
void gg_raise_if(const gg_status *st);
GG_NORETURN void gg_abort(const char *cls, const char *msg);

#endif
