/* threads_r.h -- R glue of the thread budget (threads_r.c). */
#ifndef GAMGPU_THREADS_R_H
#define GAMGPU_THREADS_R_H

#include <Rinternals.h>

SEXP gg_threads_peak_r(SEXP reset);

#endif
