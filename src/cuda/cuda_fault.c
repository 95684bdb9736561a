/* cuda_fault.c -- injected device faults, for the tests (issue 15): the
 * k-th device allocation, kernel launch, NVRTC compile or copy fails as
 * the driver would fail it, or from the k-th driver call on the device is
 * gone.  Arming swaps the entry points of gg_cu / gg_nv (cuda_loader.c) for
 * wrappers that count their calls; disarming puts the driver's own back, so
 * with nothing armed there is no cost.  Frees, pops and unloads are never
 * wrapped: cleanup after an injected fault runs as after a real one.
 * Compiled only with CUDA; the R entry is gg_gpu_fault_r (device_r.c). */
#include "cuda_internal.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t fault_mu = PTHREAD_MUTEX_INITIALIZER;
static gg_cuda_api real_cu;
static gg_nvrtc_api real_nv;
static int have_real;           /* real_cu / real_nv hold the driver's functions */
static int kind = GG_FAULT_NONE;
static long at, calls, injected;

/* Whether this call of an entry point of kind k is to fail: 0, or the
 * kind armed (GG_FAULT_NODEVICE: the device is gone, whatever k). */
static int hit(int k)
{
    pthread_mutex_lock(&fault_mu);
    int fail = 0;
    if (kind == GG_FAULT_NODEVICE || kind == k) {
        calls++;
        if (kind == GG_FAULT_NODEVICE ? calls >= at : calls == at) {
            fail = kind;
            injected++;
        }
    }
    pthread_mutex_unlock(&fault_mu);
    return fail;
}

#define GONE CUDA_ERROR_NO_DEVICE

static CUresult CUDAAPI w_cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
    const int f = hit(GG_FAULT_ALLOC);
    if (f)
        return f == GG_FAULT_NODEVICE ? GONE : CUDA_ERROR_OUT_OF_MEMORY;
    return real_cu.cuMemAlloc(p, bytes);
}

static CUresult CUDAAPI w_cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    const int f = hit(GG_FAULT_ALLOC);
    if (f)
        return f == GG_FAULT_NODEVICE ? GONE : CUDA_ERROR_OUT_OF_MEMORY;
    return real_cu.cuMemHostAlloc(pp, bytes, flags);
}

static CUresult CUDAAPI w_cuLaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy,
                                         unsigned int gz, unsigned int bx, unsigned int by,
                                         unsigned int bz, unsigned int shmem, CUstream s,
                                         void **params, void **extra)
{
    const int f = hit(GG_FAULT_LAUNCH);
    if (f)
        return f == GG_FAULT_NODEVICE ? GONE : CUDA_ERROR_LAUNCH_FAILED;
    return real_cu.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

static CUresult CUDAAPI w_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes)
{
    const int f = hit(GG_FAULT_COPY);
    if (f)
        return f == GG_FAULT_NODEVICE ? GONE : CUDA_ERROR_ILLEGAL_ADDRESS;
    return real_cu.cuMemcpyHtoD(dst, src, bytes);
}

static CUresult CUDAAPI w_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes)
{
    const int f = hit(GG_FAULT_COPY);
    if (f)
        return f == GG_FAULT_NODEVICE ? GONE : CUDA_ERROR_ILLEGAL_ADDRESS;
    return real_cu.cuMemcpyDtoH(dst, src, bytes);
}

static CUresult CUDAAPI w_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes,
                                            CUstream s)
{
    const int f = hit(GG_FAULT_COPY);
    if (f)
        return f == GG_FAULT_NODEVICE ? GONE : CUDA_ERROR_ILLEGAL_ADDRESS;
    return real_cu.cuMemcpyHtoDAsync(dst, src, bytes, s);
}

/* only a lost device: pushing the context and waiting on it */
static CUresult CUDAAPI w_cuCtxPushCurrent(CUcontext ctx)
{
    if (hit(GG_FAULT_NODEVICE))
        return GONE;
    return real_cu.cuCtxPushCurrent(ctx);
}

static CUresult CUDAAPI w_cuStreamSynchronize(CUstream s)
{
    if (hit(GG_FAULT_NODEVICE))
        return GONE;
    return real_cu.cuStreamSynchronize(s);
}

static CUresult CUDAAPI w_cuStreamQuery(CUstream s)
{
    if (hit(GG_FAULT_NODEVICE))
        return GONE;
    return real_cu.cuStreamQuery(s);
}

static CUresult CUDAAPI w_cuEventQuery(CUevent e)
{
    if (hit(GG_FAULT_NODEVICE))
        return GONE;
    return real_cu.cuEventQuery(e);
}

static CUresult CUDAAPI w_cuCtxSynchronize(void)
{
    if (hit(GG_FAULT_NODEVICE))
        return GONE;
    return real_cu.cuCtxSynchronize();
}

static nvrtcResult w_nvrtcCompileProgram(nvrtcProgram prog, int nopt, const char *const *opts)
{
    if (hit(GG_FAULT_COMPILE))
        return NVRTC_ERROR_COMPILATION;
    return real_nv.nvrtcCompileProgram(prog, nopt, opts);
}

int gg_gpu_fault_arm(int k, long k_at, long *injected_before, gg_status *st)
{
    if (k < GG_FAULT_NONE || k > GG_FAULT_NODEVICE || (k != GG_FAULT_NONE && k_at < 1))
        return gg_fail(st, "gamgpu_bad_input", "fault injection: a kind and a count >= 1");
    /* the driver and NVRTC loaded, so that there are entry points to wrap */
    if (k != GG_FAULT_NONE && (gg_cuda_load(st) != 0 || gg_nvrtc_load(st) != 0))
        return -1;
    /* a compile fault needs a compile: the compiled modules go first (with
     * the driver's own entry points: nothing armed yet) */
    if (k == GG_FAULT_COMPILE) {
        gg_gpu_fault_arm(GG_FAULT_NONE, 0, NULL, st);
        for (int o = 0; o < 64; o++) {
            gg_status ignore;
            gg_status_clear(&ignore);
            if (gg_cuda_enter(o, &ignore) != 0)
                break;
            gg_cuda_modules_unload(o);
            gg_cuda_leave(o);
        }
    }
    pthread_mutex_lock(&fault_mu);
    if (injected_before) *injected_before = injected;
    if (!have_real && k != GG_FAULT_NONE) {
        real_cu = gg_cu;
        real_nv = gg_nv;
        have_real = 1;
    }
    if (have_real) {            /* the driver's own entry points back */
        gg_cu = real_cu;
        gg_nv = real_nv;
    }
    kind = k;
    at = k_at;
    calls = injected = 0;
    if (k != GG_FAULT_NONE) {
        gg_cu.cuMemAlloc = w_cuMemAlloc;
        gg_cu.cuMemHostAlloc = w_cuMemHostAlloc;
        gg_cu.cuLaunchKernel = w_cuLaunchKernel;
        gg_cu.cuMemcpyHtoD = w_cuMemcpyHtoD;
        gg_cu.cuMemcpyDtoH = w_cuMemcpyDtoH;
        gg_cu.cuMemcpyHtoDAsync = w_cuMemcpyHtoDAsync;
        gg_cu.cuCtxPushCurrent = w_cuCtxPushCurrent;
        gg_cu.cuStreamSynchronize = w_cuStreamSynchronize;
        gg_cu.cuStreamQuery = w_cuStreamQuery;
        gg_cu.cuEventQuery = w_cuEventQuery;
        gg_cu.cuCtxSynchronize = w_cuCtxSynchronize;
        gg_nv.nvrtcCompileProgram = w_nvrtcCompileProgram;
    }
    pthread_mutex_unlock(&fault_mu);
    /* an injected compile failure is reported, not cached */
    gg_cuda_modules_cache_failures(k != GG_FAULT_COMPILE && k != GG_FAULT_NODEVICE);
    return 0;
}

