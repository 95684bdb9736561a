/* device_r.h -- .Call entry points of the device glue (device_r.c, gram_r.c,
 * predict_r.c). */
#ifndef GAMGPU_DEVICE_R_H
#define GAMGPU_DEVICE_R_H

#include <Rinternals.h>
#include <stddef.h>

#include "status.h"

/* The outcome of a device attempt that returned rc, under the glue's
 * dispatch modes (0 = CPU, 1 = "auto": the device, with a counted CPU
 * fallback on a device failure, 2 = "required"): 1 when the device did the
 * work (device = "cuda:<ordinal>"), 0 when the CPU must do it (mode 0, or
 * "auto" after a device failure: counted under `backend`, the reason left
 * in *fallback, which points into st); raises the classed R error for
 * "required" and for failures that are not the device's. */
int gg_device_outcome(int mode, int rc, int ordinal, const char *backend, gg_status *st,
                      char *device, size_t device_len, const char **fallback);

SEXP gg_runtime_attach(SEXP kernel_dir, SEXP include_dir);
SEXP gg_runtime_detach(SEXP ptr);
SEXP gg_gpu_probe_r(void);
SEXP gg_gpu_info_r(SEXP probe);
SEXP gg_nvrtc_arch_r(SEXP major, SEXP minor);
SEXP gg_nvrtc_arch_listed_r(SEXP arch, SEXP archs);
SEXP gg_arena_stats_r(SEXP ordinal);
SEXP gg_arena_release_r(SEXP ordinal);
SEXP gg_arena_try_alloc_r(SEXP ordinal, SEXP n, SEXP label);
SEXP gg_arena_size_class_r(SEXP n);
SEXP gg_set_memory_budget_r(SEXP bytes);
SEXP gg_gpu_fault_r(SEXP kind, SEXP at);
SEXP gg_host_arena_new(SEXP device_bytes, SEXP budget_bytes);
SEXP gg_host_arena_budget(SEXP ptr, SEXP budget_bytes);
SEXP gg_host_arena_alloc(SEXP ptr, SEXP n, SEXP label);
SEXP gg_host_arena_release(SEXP ptr, SEXP id);
SEXP gg_host_arena_trim(SEXP ptr);
SEXP gg_host_arena_stats(SEXP ptr);
SEXP gg_host_arena_free(SEXP ptr);
SEXP gg_modules_r(void);
SEXP gg_set_kernel_dir_r(SEXP dir);
SEXP gg_module_request_r(SEXP ordinal, SEXP module, SEXP fn);
SEXP gg_telemetry_r(SEXP reset);
SEXP gg_record_fallback_r(SEXP backend, SEXP reason);
SEXP gg_compile_check_r(SEXP names, SEXP sources, SEXP arch);
SEXP gg_gram_r(SEXP X, SEXP w, SEXP z, SEXP mode, SEXP ordinal);
SEXP gg_cpu_gram_mode_r(SEXP mode, SEXP p);
SEXP gg_predict_r(SEXP X, SEXP beta, SEXP V, SEXP mode, SEXP ordinal, SEXP chunk_rows,
                  SEXP threads);

#endif
