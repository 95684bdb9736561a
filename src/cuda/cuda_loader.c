/* cuda_loader.c -- dlopen() of libcuda and NVRTC with checked dlsym.
 *
 * See cuda_loader.h for why nothing is linked.  The driver is always the
 * soname libcuda.so.1 (the driver package installs it; the toolkit's stub
 * must never be used).  NVRTC is first the library configure found in the
 * toolkit (GAMGPU_NVRTC_LIB in build_config.h), then the sonames of recent
 * major versions, so a binary package also works against a system NVRTC. */
#include "cuda_loader.h"
#include "build_config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

gg_cuda_api  gg_cu;
gg_nvrtc_api gg_nv;

#define GG_STR2(x) #x
#define GG_STR(x)  GG_STR2(x)

typedef struct lib_state {
    int       tried;
    int       ok;
    void     *handle;
    char      path[512];
    gg_status why;
} lib_state;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static lib_state cuda_state, nvrtc_state;

/* Resolve one symbol; on failure record which and return -1. */
static int resolve(lib_state *ls, const char *what, void **slot, const char *sym)
{
    dlerror();
    *slot = dlsym(ls->handle, sym);
    if (*slot == NULL) {
        const char *e = dlerror();
        return gg_fail(&ls->why, "gamgpu_device_unavailable",
                       "%s (%s) lacks symbol %s: %s", what, ls->path, sym,
                       e ? e : "not found");
    }
    return 0;
}

#define RESOLVE(ls, what, table, fn) \
    resolve(ls, what, (void **) &(table).fn, GG_STR(fn))

static int load_cuda_locked(void)
{
    lib_state *ls = &cuda_state;
    gg_status_clear(&ls->why);
    gg_strlcpy(ls->path, "libcuda.so.1", sizeof ls->path);
    ls->handle = dlopen(ls->path, RTLD_NOW | RTLD_LOCAL);
    if (ls->handle == NULL) {
        const char *e = dlerror();
        return gg_fail(&ls->why, "gamgpu_device_unavailable",
                       "the NVIDIA driver library libcuda.so.1 could not be loaded: %s",
                       e ? e : "unknown dlopen error");
    }
    const char *w = "the NVIDIA driver library";
    if (RESOLVE(ls, w, gg_cu, cuInit) || RESOLVE(ls, w, gg_cu, cuDriverGetVersion) ||
        RESOLVE(ls, w, gg_cu, cuGetErrorName) || RESOLVE(ls, w, gg_cu, cuGetErrorString) ||
        RESOLVE(ls, w, gg_cu, cuDeviceGetCount) || RESOLVE(ls, w, gg_cu, cuDeviceGet) ||
        RESOLVE(ls, w, gg_cu, cuDeviceGetName) || RESOLVE(ls, w, gg_cu, cuDeviceGetAttribute) ||
        RESOLVE(ls, w, gg_cu, cuDeviceTotalMem) ||
        RESOLVE(ls, w, gg_cu, cuDevicePrimaryCtxRetain) ||
        RESOLVE(ls, w, gg_cu, cuDevicePrimaryCtxRelease) ||
        RESOLVE(ls, w, gg_cu, cuCtxPushCurrent) || RESOLVE(ls, w, gg_cu, cuCtxPopCurrent) ||
        RESOLVE(ls, w, gg_cu, cuCtxSynchronize) || RESOLVE(ls, w, gg_cu, cuMemGetInfo) ||
        RESOLVE(ls, w, gg_cu, cuMemAlloc) || RESOLVE(ls, w, gg_cu, cuMemFree) ||
        RESOLVE(ls, w, gg_cu, cuMemcpyHtoD) || RESOLVE(ls, w, gg_cu, cuMemcpyDtoH) ||
        RESOLVE(ls, w, gg_cu, cuModuleLoadData) || RESOLVE(ls, w, gg_cu, cuModuleUnload) ||
        RESOLVE(ls, w, gg_cu, cuModuleGetFunction) || RESOLVE(ls, w, gg_cu, cuLaunchKernel) ||
        RESOLVE(ls, w, gg_cu, cuMemHostAlloc) || RESOLVE(ls, w, gg_cu, cuMemFreeHost) ||
        RESOLVE(ls, w, gg_cu, cuMemcpyHtoDAsync) || RESOLVE(ls, w, gg_cu, cuStreamCreate) ||
        RESOLVE(ls, w, gg_cu, cuStreamDestroy) || RESOLVE(ls, w, gg_cu, cuStreamSynchronize) ||
        RESOLVE(ls, w, gg_cu, cuStreamQuery) ||
        RESOLVE(ls, w, gg_cu, cuStreamWaitEvent) || RESOLVE(ls, w, gg_cu, cuEventCreate) ||
        RESOLVE(ls, w, gg_cu, cuEventRecord) || RESOLVE(ls, w, gg_cu, cuEventSynchronize) ||
        RESOLVE(ls, w, gg_cu, cuEventQuery) ||
        RESOLVE(ls, w, gg_cu, cuEventDestroy)) {
        dlclose(ls->handle);
        ls->handle = NULL;
        return -1;
    }
    return 0;
}

static int load_nvrtc_locked(void)
{
    lib_state *ls = &nvrtc_state;
    gg_status_clear(&ls->why);
    const char *candidates[] = {
        GAMGPU_NVRTC_LIB, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
        "libnvrtc.so"
    };
    char tried[1024] = "";
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (candidates[i][0] == '\0')
            continue;
        ls->handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (ls->handle != NULL) {
            gg_strlcpy(ls->path, candidates[i], sizeof ls->path);
            break;
        }
        const char *e = dlerror();
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "",
                 e ? e : candidates[i]);
    }
    if (ls->handle == NULL)
        return gg_fail(&ls->why, "gamgpu_nvrtc_unavailable",
                       "NVRTC could not be loaded: %s", tried);
    const char *w = "NVRTC";
    if (RESOLVE(ls, w, gg_nv, nvrtcVersion) || RESOLVE(ls, w, gg_nv, nvrtcGetErrorString) ||
        RESOLVE(ls, w, gg_nv, nvrtcCreateProgram) || RESOLVE(ls, w, gg_nv, nvrtcCompileProgram) ||
        RESOLVE(ls, w, gg_nv, nvrtcGetProgramLogSize) ||
        RESOLVE(ls, w, gg_nv, nvrtcGetProgramLog) || RESOLVE(ls, w, gg_nv, nvrtcGetPTXSize) ||
        RESOLVE(ls, w, gg_nv, nvrtcGetPTX) || RESOLVE(ls, w, gg_nv, nvrtcDestroyProgram)) {
        gg_strlcpy(ls->why.cls, "gamgpu_nvrtc_unavailable", sizeof ls->why.cls);
        dlclose(ls->handle);
        ls->handle = NULL;
        return -1;
    }
    /* optional: an NVRTC before 11.2 cannot list its architectures */
    *(void **) &gg_nv.nvrtcGetNumSupportedArchs = dlsym(ls->handle, "nvrtcGetNumSupportedArchs");
    *(void **) &gg_nv.nvrtcGetSupportedArchs = dlsym(ls->handle, "nvrtcGetSupportedArchs");
    if (gg_nv.nvrtcGetNumSupportedArchs == NULL || gg_nv.nvrtcGetSupportedArchs == NULL)
        gg_nv.nvrtcGetNumSupportedArchs = NULL;
    return 0;
}

static int load_once(lib_state *ls, int (*loader)(void), gg_status *st)
{
    pthread_mutex_lock(&load_lock);
    if (!ls->tried) {
        ls->ok = loader() == 0;
        ls->tried = 1;
    }
    int ok = ls->ok;
    pthread_mutex_unlock(&load_lock);
    if (ok)
        return 0;
    if (st != NULL && !st->failed)
        *st = ls->why;
    return -1;
}

int gg_cuda_load(gg_status *st)  { return load_once(&cuda_state, load_cuda_locked, st); }
int gg_nvrtc_load(gg_status *st) { return load_once(&nvrtc_state, load_nvrtc_locked, st); }

const char *gg_nvrtc_path(void)
{
    return nvrtc_state.ok ? nvrtc_state.path : "";
}

int gg_nvrtc_supported_archs(int *archs, int max)
{
    if (!nvrtc_state.ok || gg_nv.nvrtcGetNumSupportedArchs == NULL || max < 1)
        return 0;
    int n = 0;
    if (gg_nv.nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n < 1)
        return 0;
    int *all = malloc((size_t) n * sizeof(int));
    if (all == NULL)
        return 0;
    if (gg_nv.nvrtcGetSupportedArchs(all) != NVRTC_SUCCESS) {
        free(all);
        return 0;
    }
    const int k = n < max ? n : max;
    for (int i = 0; i < k; i++)
        archs[i] = all[i];
    free(all);
    return k;
}

const char *gg_cu_errstr(CUresult r, char *buf, size_t size)
{
    const char *name = NULL, *text = NULL;
    if (cuda_state.ok) {
        if (gg_cu.cuGetErrorName(r, &name) != CUDA_SUCCESS)
            name = NULL;
        if (gg_cu.cuGetErrorString(r, &text) != CUDA_SUCCESS)
            text = NULL;
    }
    if (name != NULL)
        snprintf(buf, size, "%s (%s)", name, text ? text : "no description");
    else
        snprintf(buf, size, "CUDA error %d", (int) r);
    return buf;
}
