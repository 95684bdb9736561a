/* cuda_modules.c -- NVRTC compilation and the compile-once module cache.
 *
 * Kernel sources are CUDA C files shipped in inst/kernels (<name>.cu),
 * compiled at run time against the per-row maths headers of inst/include
 * and never shipped as binaries.  Each (device, module) is compiled at
 * most once per process: the first request compiles and loads, later
 * requests are counted and served from the cache.  A failed compile or
 * load is cached too (with its NVRTC log) so it is reported, not retried,
 * on every request.  Compiled only with CUDA.
 *
 * Options, and why:
 *   --fmad=false              no fused multiply-add contraction, so device
 *                             arithmetic rounds like the CPU twin's and the
 *                             two agree to the last bits we test (1e-9..1e-12)
 *   --gpu-architecture=compute_NN   pinned to the device (gpu_arch.c); NVRTC's
 *                             default lacks double atomicAdd
 *   -I<include dir>           the per-row maths headers (family_math.h, ...)
 *                             the host C includes too (inst/include)
 *   -I<toolkit>/include       the toolkit configure found */
#include "cuda_internal.h"
#include "build_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GG_MAX_MODULES 128

typedef struct module_slot {
    int       device;
    char      name[64];
    char      arch[16];
    CUmodule  mod;
    int       ok;
    gg_status failure;        /* why, when !ok */
    double    compile_seconds;
    uint64_t  requests, compiles;
} module_slot;

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static module_slot modules[GG_MAX_MODULES];
static int n_modules;
static int cache_failures = 1;      /* off while compile faults are injected */
static char kernel_dir[1024];
static char include_dir[1024];

void gg_gpu_set_kernel_dir(const char *dir)  { gg_strlcpy(kernel_dir, dir, sizeof kernel_dir); }
const char *gg_gpu_kernel_dir(void)          { return kernel_dir; }
void gg_gpu_set_include_dir(const char *dir) { gg_strlcpy(include_dir, dir, sizeof include_dir); }
const char *gg_gpu_include_dir(void)         { return include_dir; }

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Compile to PTX.  On success *ptx is malloc'd; *log (when log != NULL) is
 * the NVRTC log, malloc'd, possibly empty. */
static int compile_ptx(const char *name, const char *source, const char *arch,
                       char **ptx, char **log, gg_status *st)
{
    *ptx = NULL;
    if (log)
        *log = NULL;
    if (gg_nvrtc_load(st) != 0)
        return -1;
    char opt_arch[64], opt_maths[1100], opt_inc[1100];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    snprintf(opt_maths, sizeof opt_maths, "-I%s", include_dir);
    snprintf(opt_inc, sizeof opt_inc, "-I%s/include", GAMGPU_CUDA_HOME);
    const char *opts[] = {"--fmad=false", opt_arch, opt_maths, opt_inc};
    int n_opts = GAMGPU_CUDA_HOME[0] ? 4 : 3;

    char file[80];
    snprintf(file, sizeof file, "%s.cu", name);
    nvrtcProgram prog;
    nvrtcResult r = gg_nv.nvrtcCreateProgram(&prog, source, file, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return gg_fail(st, "gamgpu_kernel_compile", "kernel '%s': nvrtcCreateProgram: %s",
                       name, gg_nv.nvrtcGetErrorString(r));
    nvrtcResult rc = gg_nv.nvrtcCompileProgram(prog, n_opts, opts);

    size_t log_size = 0;
    char *text = NULL;
    if (gg_nv.nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 0) {
        text = malloc(log_size + 1);
        if (text != NULL && gg_nv.nvrtcGetProgramLog(prog, text) != NVRTC_SUCCESS)
            text[0] = '\0';
        if (text != NULL)
            text[log_size] = '\0';
    }
    int ret = 0;
    if (rc != NVRTC_SUCCESS) {
        ret = gg_fail(st, "gamgpu_kernel_compile", "kernel '%s' failed to compile for %s (%s): %s",
                      name, arch, gg_nv.nvrtcGetErrorString(rc), text ? text : "(no log)");
    } else {
        size_t ptx_size = 0;
        if (gg_nv.nvrtcGetPTXSize(prog, &ptx_size) != NVRTC_SUCCESS ||
            (*ptx = malloc(ptx_size + 1)) == NULL ||
            gg_nv.nvrtcGetPTX(prog, *ptx) != NVRTC_SUCCESS) {
            free(*ptx);
            *ptx = NULL;
            ret = gg_fail(st, "gamgpu_kernel_compile", "kernel '%s': could not fetch its PTX", name);
        }
    }
    gg_nv.nvrtcDestroyProgram(&prog);
    if (log)
        *log = text;
    else
        free(text);
    return ret;
}

int gg_gpu_compile_source(const char *name, const char *source, const char *arch,
                          char **log, gg_status *st)
{
    char *ptx = NULL;
    int rc = compile_ptx(name, source, arch, &ptx, log, st);
    free(ptx);
    return rc;
}

static char *read_source(const char *name, gg_status *st)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.cu", kernel_dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        gg_fail(st, "gamgpu_kernel_compile", "kernel source %s cannot be read", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *src = size >= 0 ? malloc((size_t) size + 1) : NULL;
    if (src == NULL || fread(src, 1, (size_t) size, f) != (size_t) size) {
        free(src);
        fclose(f);
        gg_fail(st, "gamgpu_kernel_compile", "kernel source %s could not be read", path);
        return NULL;
    }
    src[size] = '\0';
    fclose(f);
    return src;
}

/* Compile and load module slot m (context current).  Fills m->failure. */
static void build_module(module_slot *m)
{
    gg_status_clear(&m->failure);
    double t0 = now_seconds();
    char *src = read_source(m->name, &m->failure), *ptx = NULL;
    if (src != NULL && compile_ptx(m->name, src, m->arch, &ptx, NULL, &m->failure) == 0) {
        CUresult r = gg_cu.cuModuleLoadData(&m->mod, ptx);
        if (r != CUDA_SUCCESS) {
            char buf[256];
            gg_fail(&m->failure, "gamgpu_kernel_compile", "kernel '%s' (%s) failed to load: %s",
                    m->name, m->arch, gg_cu_errstr(r, buf, sizeof buf));
            m->mod = NULL;
        }
    }
    free(src);
    free(ptx);
    m->compiles++;
    m->compile_seconds = now_seconds() - t0;
    m->ok = !m->failure.failed;
}

int gg_cuda_function(int ordinal, const char *module, const char *fn, CUfunction *out,
                     gg_status *st)
{
    gg_cuda_on_release(gg_cuda_modules_unload);    /* unloaded before shutdown */
    pthread_mutex_lock(&mod_lock);
    module_slot *m = NULL;
    for (int i = 0; i < n_modules; i++)
        if (modules[i].device == ordinal && strcmp(modules[i].name, module) == 0)
            m = &modules[i];
    if (m == NULL) {
        if (n_modules == GG_MAX_MODULES) {
            pthread_mutex_unlock(&mod_lock);
            return gg_fail(st, "gamgpu_internal_error", "module cache is full");
        }
        m = &modules[n_modules++];
        memset(m, 0, sizeof *m);
        m->device = ordinal;
        gg_strlcpy(m->name, module, sizeof m->name);
        gg_strlcpy(m->arch, gg_cuda_arch(ordinal), sizeof m->arch);
        build_module(m);
        if (!m->ok && !cache_failures) {
            /* while compile faults are injected (tests): reported, not cached */
            gg_status failure = m->failure;
            n_modules--;
            pthread_mutex_unlock(&mod_lock);
            if (st != NULL && !st->failed)
                *st = failure;
            return -1;
        }
    }
    m->requests++;
    int ok = m->ok;
    CUmodule mod = m->mod;
    gg_status failure = m->failure;
    pthread_mutex_unlock(&mod_lock);
    if (!ok) {
        if (st != NULL && !st->failed)
            *st = failure;
        return -1;
    }
    CUresult r = gg_cu.cuModuleGetFunction(out, mod, fn);
    if (r != CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "kernel '%s' has no function '%s'", module, fn);
        return gg_cu_check(r, what, st);
    }
    return 0;
}

int gg_gpu_module_request(int ordinal, const char *module, const char *fn, gg_status *st)
{
    if (gg_cuda_enter(ordinal, st) != 0)
        return -1;
    CUfunction f;
    int rc = gg_cuda_function(ordinal, module, fn, &f, st);
    gg_cuda_leave(ordinal);
    return rc;
}

int gg_gpu_module_list(gg_module_info *out, int max)
{
    pthread_mutex_lock(&mod_lock);
    int n = n_modules < max ? n_modules : max;
    for (int i = 0; i < n; i++) {
        out[i].device = modules[i].device;
        gg_strlcpy(out[i].name, modules[i].name, sizeof out[i].name);
        gg_strlcpy(out[i].arch, modules[i].arch, sizeof out[i].arch);
        out[i].compile_seconds = modules[i].compile_seconds;
        out[i].requests = modules[i].requests;
        out[i].compiles = modules[i].compiles;
        out[i].ok = modules[i].ok;
    }
    pthread_mutex_unlock(&mod_lock);
    return n;
}

void gg_cuda_modules_cache_failures(int on)
{
    pthread_mutex_lock(&mod_lock);
    cache_failures = on != 0;
    pthread_mutex_unlock(&mod_lock);
}

void gg_cuda_modules_unload(int ordinal)
{
    pthread_mutex_lock(&mod_lock);
    int keep = 0;
    for (int i = 0; i < n_modules; i++) {
        if (modules[i].device == ordinal) {
            if (modules[i].mod != NULL)
                gg_cu.cuModuleUnload(modules[i].mod);
            continue;
        }
        modules[keep++] = modules[i];
    }
    n_modules = keep;
    pthread_mutex_unlock(&mod_lock);
}
