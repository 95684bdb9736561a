/* gpu.h -- the device runtime as the rest of the package sees it.
 *
 * Implemented by the cuda_*.c files when configure found a CUDA toolkit and
 * by nocuda_runtime.c otherwise, so glue and engine code never carries
 * #ifdefs: on a CPU-only build every query answers "built without CUDA".
 * Devices are addressed by ordinal; each has one primary context, one
 * arena and one module cache, created on first use. */
#ifndef GAMGPU_GPU_H
#define GAMGPU_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_arena.h"
#include "status.h"

typedef struct gg_device_info {
    int    ordinal;
    char   name[256];
    int    cc_major, cc_minor;
    int    multiprocessors;
    double total_bytes, free_bytes;
    char   arch[16];             /* NVRTC --gpu-architecture, "compute_90" */
} gg_device_info;

typedef struct gg_module_info {
    int      device;
    char     name[64];
    char     arch[16];
    double   compile_seconds;
    uint64_t requests, compiles;
    int      ok;                 /* 0 when compile or load failed */
} gg_module_info;

/* What was built. */
int         gg_gpu_compiled(void);          /* 1 with CUDA glue */
const char *gg_gpu_toolkit(void);           /* toolkit configure found, or "" */
int         gg_gpu_toolkit_version(void);   /* CUDA_VERSION of its cuda.h, or 0 */

/* Is a device usable?  Loads libcuda and NVRTC, runs cuInit and counts
 * devices, once per process; 0 when usable, else -1 with the reason. */
int  gg_gpu_probe(gg_status *why);
int  gg_gpu_probed(void);   /* has this process probed (loaded libcuda) since the last shutdown? */
int  gg_gpu_device_count(void);
int  gg_gpu_device_info(int ordinal, gg_device_info *out, gg_status *st);
int  gg_gpu_driver_version(void);           /* 13000 = 13.0; 0 if unknown */
int  gg_gpu_nvrtc_version(int *major, int *minor, gg_status *st);
const char *gg_gpu_nvrtc_path(void);

/* The device's arena (NULL + st when the device is not usable). */
gg_arena *gg_gpu_arena(int ordinal, gg_status *st);
/* Applies to every device's arena, present and future (0 = no cap). */
void gg_gpu_set_memory_budget(double bytes);

/* Injected device faults, for tests (cuda_fault.c): from the arm on, the
 * at-th allocation (device or pinned), kernel launch, NVRTC compile or
 * copy fails as the driver fails it, or every driver call from the at-th
 * on finds no device (frees and pops excepted).  GG_FAULT_NONE disarms.
 * *injected_before: the faults injected since the previous arm.  A
 * compile fault first unloads the compiled modules, and an injected
 * compile failure is not cached.  Without CUDA: an error. */
enum { GG_FAULT_NONE = 0, GG_FAULT_ALLOC, GG_FAULT_LAUNCH, GG_FAULT_COMPILE, GG_FAULT_COPY,
       GG_FAULT_NODEVICE };
int gg_gpu_fault_arm(int kind, long at, long *injected_before, gg_status *st);

/* Where kernel sources (<name>.cu) live, and the per-row maths headers
 * they include (inst/include, shared with the host C); set once at load. */
void gg_gpu_set_kernel_dir(const char *dir);
const char *gg_gpu_kernel_dir(void);
void gg_gpu_set_include_dir(const char *dir);
const char *gg_gpu_include_dir(void);
int  gg_gpu_module_list(gg_module_info *out, int max);
/* Fetch kernel `fn` of module `module` on a device through the cache
 * (compiling on first request): 0 when it is there, else -1 with why. */
int  gg_gpu_module_request(int ordinal, const char *module, const char *fn, gg_status *st);
/* Compile one kernel source with the module cache's options for `arch`
 * (no device needed).  0 = OK.  *log receives the NVRTC log (malloc'd, may
 * be NULL); the caller frees it. */
int  gg_gpu_compile_source(const char *name, const char *source, const char *arch,
                           char **log, gg_status *st);

/* Weighted Gram on the device: A = X'WX (p x p), and when z != NULL,
 * b = X'Wz and *zwz = z'Wz.  X is n x p column-major; w may be NULL (1). */
int  gg_gpu_gram(int ordinal, const double *X, size_t n, int p, const double *w,
                 const double *z, double *A, double *b, double *zwz, gg_status *st);

/* Prediction rows on the device (cuda_predict.c): fit[i] = x_i' beta and
 * se2[i] = x_i' V x_i for the n rows of X (n x p column-major host array;
 * V p x p).  X goes over in row chunks of at most max_chunk_rows rows
 * (0 = the default, ~128 MiB of X per chunk).  The CPU twin is
 * gg_cpu_predict() (predict_cpu.h), with the same per-row arithmetic. */
int  gg_gpu_predict(int ordinal, const double *X, size_t n, int p, const double *beta,
                    const double *V, size_t max_chunk_rows, double *fit, double *se2,
                    gg_status *st);

/* Free every device resource of this process (arena, modules, contexts).
 * Safe to call twice and in a forked child (where it touches nothing). */
void gg_gpu_shutdown(void);

/* NVRTC virtual architecture for a compute capability (gpu_arch.c). */
void gg_nvrtc_arch(int major, int minor, char *buf, size_t size);
/* Whether arch ("compute_90") is among the n architectures NVRTC lists
 * (archs, as 90); 1 when n == 0 (NVRTC cannot say: the compile will). */
int  gg_nvrtc_arch_listed(const char *arch, const int *archs, int n);

/* The virtual architectures the loaded NVRTC compiles for, ascending, into
 * archs (at most max): their count (0 when NVRTC cannot list them, before
 * 11.2), or -1 with st when NVRTC is not there. */
#define GG_MAX_NVRTC_ARCHS 64
int  gg_gpu_nvrtc_archs(int *archs, int max, gg_status *st);

#endif
