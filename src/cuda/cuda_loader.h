/* cuda_loader.h -- the CUDA driver API and NVRTC, loaded at run time.
 *
 * gamgpu never links libcuda or libnvrtc: a build made where the toolkit
 * exists must still load on a machine with no driver (CI) or no CUDA at all.
 * Both libraries are dlopen()ed on first use and every entry point is
 * resolved with a checked dlsym into the tables below.  The types come from
 * the toolkit's cuda.h / nvrtc.h; the symbol names are the versioned ones
 * those headers map to (cuMemAlloc -> cuMemAlloc_v2), taken from the same
 * macros so they cannot drift.
 *
 * Files named cuda_*.c are compiled only when configure found a toolkit. */
#ifndef GAMGPU_CUDA_LOADER_H
#define GAMGPU_CUDA_LOADER_H

#include <cuda.h>
#include <nvrtc.h>

#include "status.h"

#define GG_CU_FN(name) __typeof__(&name) name
typedef struct gg_cuda_api {
    GG_CU_FN(cuInit);
    GG_CU_FN(cuDriverGetVersion);
    GG_CU_FN(cuGetErrorName);
    GG_CU_FN(cuGetErrorString);
    GG_CU_FN(cuDeviceGetCount);
    GG_CU_FN(cuDeviceGet);
    GG_CU_FN(cuDeviceGetName);
    GG_CU_FN(cuDeviceGetAttribute);
    GG_CU_FN(cuDeviceTotalMem);
    GG_CU_FN(cuDevicePrimaryCtxRetain);
    GG_CU_FN(cuDevicePrimaryCtxRelease);
    GG_CU_FN(cuCtxPushCurrent);
    GG_CU_FN(cuCtxPopCurrent);
    GG_CU_FN(cuCtxSynchronize);
    GG_CU_FN(cuMemGetInfo);
    GG_CU_FN(cuMemAlloc);
    GG_CU_FN(cuMemFree);
    GG_CU_FN(cuMemcpyHtoD);
    GG_CU_FN(cuMemcpyDtoH);
    GG_CU_FN(cuModuleLoadData);
    GG_CU_FN(cuModuleUnload);
    GG_CU_FN(cuModuleGetFunction);
    GG_CU_FN(cuLaunchKernel);
    GG_CU_FN(cuMemHostAlloc);
    GG_CU_FN(cuMemFreeHost);
    GG_CU_FN(cuMemcpyHtoDAsync);
    GG_CU_FN(cuStreamCreate);
    GG_CU_FN(cuStreamDestroy);
    GG_CU_FN(cuStreamSynchronize);
    GG_CU_FN(cuStreamQuery);
    GG_CU_FN(cuStreamWaitEvent);
    GG_CU_FN(cuEventCreate);
    GG_CU_FN(cuEventRecord);
    GG_CU_FN(cuEventSynchronize);
    GG_CU_FN(cuEventQuery);
    GG_CU_FN(cuEventDestroy);
} gg_cuda_api;

typedef struct gg_nvrtc_api {
    GG_CU_FN(nvrtcVersion);
    GG_CU_FN(nvrtcGetErrorString);
    GG_CU_FN(nvrtcCreateProgram);
    GG_CU_FN(nvrtcCompileProgram);
    GG_CU_FN(nvrtcGetProgramLogSize);
    GG_CU_FN(nvrtcGetProgramLog);
    GG_CU_FN(nvrtcGetPTXSize);
    GG_CU_FN(nvrtcGetPTX);
    GG_CU_FN(nvrtcDestroyProgram);
    /* optional (NVRTC 11.2+): NULL where this NVRTC lacks them */
    GG_CU_FN(nvrtcGetNumSupportedArchs);
    GG_CU_FN(nvrtcGetSupportedArchs);
} gg_nvrtc_api;
#undef GG_CU_FN

extern gg_cuda_api  gg_cu;
extern gg_nvrtc_api gg_nv;

/* Load libcuda.so.1 / NVRTC once per process.  Return 0 when the table is
 * usable; otherwise -1 with the reason (dlerror text, missing symbol) in st.
 * The outcome is cached: later calls return the same answer cheaply. */
int gg_cuda_load(gg_status *st);
int gg_nvrtc_load(gg_status *st);

/* Path NVRTC was loaded from ("" when not loaded). */
const char *gg_nvrtc_path(void);

/* The virtual architectures this NVRTC compiles for (e.g. 75 for
 * compute_75), ascending, into archs (at most max); their count, 0 when
 * NVRTC is not loaded or cannot say (before 11.2). */
int gg_nvrtc_supported_archs(int *archs, int max);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result. */
const char *gg_cu_errstr(CUresult r, char *buf, size_t size);

#endif
