/* cuda_internal.h -- what the cuda_*.c files share and nothing else sees:
 * entering a device's primary context, its module cache slot, and the
 * driver-error helper.  Compiled only with CUDA. */
#ifndef GAMGPU_CUDA_INTERNAL_H
#define GAMGPU_CUDA_INTERNAL_H

#include "cuda_loader.h"
#include "gpu.h"

/* Make the device's primary context current (retaining it on first use).
 * Every successful enter must be paired with gg_cuda_leave(). */
int  gg_cuda_enter(int ordinal, gg_status *st);
void gg_cuda_leave(int ordinal);

/* Multiprocessor count and NVRTC arch of a usable device. */
int         gg_cuda_sm_count(int ordinal);
const char *gg_cuda_arch(int ordinal);

/* Check a driver call; on failure fill st with "what: CUDA_ERROR_..." */
int gg_cu_check(CUresult r, const char *what, gg_status *st);

/* The module cache (cuda_modules.c).  Returns the kernel `fn` of module
 * `name`, compiling it on first request on this device.  Context must be
 * current. */
int  gg_cuda_function(int ordinal, const char *module, const char *fn,
                      CUfunction *out, gg_status *st);
/* Unload every module of a device (context current) / of all devices. */
void gg_cuda_modules_unload(int ordinal);

#endif
