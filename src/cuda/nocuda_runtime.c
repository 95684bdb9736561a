/* nocuda_runtime.c -- the device runtime of a CPU-only build.
 *
 * configure compiles this file instead of the cuda_*.c files when it found
 * no CUDA toolkit or was given --without-cuda.  Every query answers "built
 * without CUDA", so the same glue, policy and tests run unchanged. */
#include <string.h>

#include "backend.h"
#include "gpu.h"
#include "build_config.h"

static const char *WHY =
    "gamgpu was built without CUDA (" GAMGPU_BUILD_REASON "); reinstall with a CUDA toolkit "
    "(configure looks at --with-cuda=DIR, CUDA_HOME, CUDA_PATH, nvcc on PATH, /usr/local/cuda)";

static int unavailable(gg_status *st)
{
    return gg_fail(st, "gamgpu_device_unavailable", "%s", WHY);
}

int         gg_gpu_compiled(void)        { return 0; }
const char *gg_gpu_toolkit(void)         { return ""; }
int         gg_gpu_toolkit_version(void) { return 0; }
int         gg_gpu_probe(gg_status *why) { return unavailable(why); }
int         gg_gpu_probed(void)          { return 0; }
int         gg_gpu_device_count(void)    { return 0; }
int         gg_gpu_driver_version(void)  { return 0; }
const char *gg_gpu_nvrtc_path(void)      { return ""; }
const char *gg_gpu_kernel_dir(void)      { return ""; }
void        gg_gpu_set_kernel_dir(const char *dir) { (void) dir; }
const char *gg_gpu_include_dir(void)     { return ""; }
void        gg_gpu_set_include_dir(const char *dir) { (void) dir; }
void        gg_gpu_set_memory_budget(double bytes) { (void) bytes; }
int         gg_gpu_module_list(gg_module_info *out, int max) { (void) out; (void) max; return 0; }
void        gg_gpu_shutdown(void) {}

int gg_gpu_fault_arm(int kind, long at, long *injected_before, gg_status *st)
{
    (void) kind;
    (void) at;
    if (injected_before) *injected_before = 0;
    return unavailable(st);
}

int gg_gpu_module_request(int ordinal, const char *module, const char *fn, gg_status *st)
{
    (void) ordinal;
    (void) module;
    (void) fn;
    return unavailable(st);
}

int gg_gpu_device_info(int ordinal, gg_device_info *out, gg_status *st)
{
    (void) ordinal;
    (void) out;
    return unavailable(st);
}

int gg_gpu_nvrtc_version(int *major, int *minor, gg_status *st)
{
    *major = *minor = 0;
    return gg_fail(st, "gamgpu_nvrtc_unavailable", "%s", WHY);
}

int gg_gpu_nvrtc_archs(int *archs, int max, gg_status *st)
{
    (void) archs;
    (void) max;
    return gg_fail(st, "gamgpu_nvrtc_unavailable", "%s", WHY);
}

gg_arena *gg_gpu_arena(int ordinal, gg_status *st)
{
    (void) ordinal;
    unavailable(st);
    return 0;
}

int gg_gpu_compile_source(const char *name, const char *source, const char *arch,
                          char **log, gg_status *st)
{
    (void) name;
    (void) source;
    (void) arch;
    if (log)
        *log = 0;
    return gg_fail(st, "gamgpu_nvrtc_unavailable", "%s", WHY);
}

int gg_gpu_gram(int ordinal, const double *X, size_t n, int p, const double *w,
                const double *z, double *A, double *b, double *zwz, gg_status *st)
{
    (void) ordinal; (void) X; (void) n; (void) p; (void) w; (void) z;
    (void) A; (void) b; (void) zwz;
    return unavailable(st);
}

int gg_gpu_predict(int ordinal, const double *X, size_t n, int p, const double *beta,
                   const double *V, size_t max_chunk_rows, double *fit, double *se2,
                   gg_status *st)
{
    (void) ordinal; (void) X; (void) n; (void) p; (void) beta; (void) V;
    (void) max_chunk_rows; (void) fit; (void) se2;
    return unavailable(st);
}

/* Fails, leaving *be a defined empty backend (no ops, zero counters and
 * timings, placement ""): the caller reads those after any attempt. */
int gg_backend_cuda_init(gg_backend *be, int ordinal, gg_status *st)
{
    (void) ordinal;
    memset(be, 0, sizeof *be);
    return unavailable(st);
}

int gg_cuda_xplan_build(int ordinal, const gg_xplan *xp, double *out, gg_status *st)
{
    (void) ordinal; (void) xp; (void) out;
    return unavailable(st);
}

int gg_cuda_xplan_stats(int ordinal, const gg_xplan *xp, int rms_scale, double *scale,
                        double *mean, double *rowmax, size_t *imax, gg_status *st)
{
    (void) ordinal; (void) xp; (void) rms_scale; (void) scale; (void) mean; (void) rowmax;
    (void) imax;
    return unavailable(st);
}
