/* cuda_runtime.c -- driver probe, devices, primary contexts, fork safety,
 * per-device arenas and teardown.  Compiled only with CUDA.
 *
 * State is process-wide and created lazily: nothing touches the driver until
 * something asks for a device (policy "off" never does).  A forked child of
 * a process that initialised CUDA must not use the inherited contexts: it
 * sees the device as unusable, with that reason, and never frees anything
 * (the memory belongs to the parent). */
#include "cuda_internal.h"
#include "build_config.h"
#include "interrupt.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GG_MAX_DEVICES 64

typedef struct device_slot {
    CUdevice  dev;
    CUcontext ctx;          /* retained primary context, or NULL */
    int       cc_major, cc_minor, sm_count;
    char      arch[16];
    gg_arena  arena;
    char      where[32];
} device_slot;

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static int       probed, usable, n_devices, driver_version;
static pid_t     owner_pid;              /* process that ran cuInit */
static gg_status probe_why;
static device_slot slots[GG_MAX_DEVICES];
static double    memory_budget;
/* what runs for each device, its context current, before the context is
 * released at shutdown: the module cache's unload (it registers itself, so
 * the runtime needs none of its symbols) */
static void (*before_release)(int ordinal);

int         gg_gpu_compiled(void)        { return 1; }
const char *gg_gpu_toolkit(void)         { return GAMGPU_CUDA_HOME; }
int         gg_gpu_toolkit_version(void) { return CUDA_VERSION; }

int gg_cu_check(CUresult r, const char *what, gg_status *st)
{
    if (r == CUDA_SUCCESS)
        return 0;
    char buf[256];
    gg_cu_errstr(r, buf, sizeof buf);
    return gg_fail(st, r == CUDA_ERROR_OUT_OF_MEMORY ? "gamgpu_device_oom" : "gamgpu_device_error",
                   "%s: %s", what, buf);
}

/* Until the work on stream (or, with stream NULL and event set, the work
 * before event) is done, polling for an interrupt between queries. */
static int wait_polled(CUstream stream, CUevent event, const char *what, gg_status *st)
{
    /* a sleep of 50 us between queries: latency well under the poll
     * interval, and a core not spun for the length of a pass */
    const struct timespec nap = {0, 50000};
    for (int first = 1;; first = 0) {
        /* a check before the first query too: every wait is a poll, work
         * that ended early included (the tests' injected interrupts count
         * these first polls; the rest, as many as the wait lasts, poll R
         * alone) */
        if (first ? gg_interrupt_check() : gg_interrupt_check_wait()) {
            if (event != NULL)
                gg_cu.cuEventSynchronize(event);
            else
                gg_cu.cuStreamSynchronize(stream);
            return gg_interrupt_fail(st, what);
        }
        const CUresult r = event != NULL ? gg_cu.cuEventQuery(event) : gg_cu.cuStreamQuery(stream);
        if (r == CUDA_SUCCESS)
            return 0;
        if (r != CUDA_ERROR_NOT_READY)
            return gg_cu_check(r, what, st);
        nanosleep(&nap, NULL);
    }
}

int gg_cuda_wait(CUstream stream, const char *what, gg_status *st)
{
    return wait_polled(stream, NULL, what, st);
}

int gg_cuda_wait_event(CUevent event, const char *what, gg_status *st)
{
    return wait_polled(NULL, event, what, st);
}

static int forked(void) { return owner_pid != 0 && owner_pid != getpid(); }

/* ---- the arena's allocator: cuMemAlloc in the device's primary context */

static int cuda_alloc(void *ctx, size_t bytes, uint64_t *out, char *err, size_t errlen)
{
    device_slot *s = ctx;
    if (gg_cu.cuCtxPushCurrent(s->ctx) != CUDA_SUCCESS) {
        snprintf(err, errlen, "could not make the context current");
        return GG_ALLOC_ERROR;
    }
    CUdeviceptr p = 0;
    CUresult r = gg_cu.cuMemAlloc(&p, bytes);
    CUcontext dummy;
    gg_cu.cuCtxPopCurrent(&dummy);
    if (r != CUDA_SUCCESS) {
        gg_cu_errstr(r, err, errlen);
        return r == CUDA_ERROR_OUT_OF_MEMORY ? GG_ALLOC_OOM : GG_ALLOC_ERROR;
    }
    *out = (uint64_t) p;
    return GG_ALLOC_OK;
}

static void cuda_free(void *ctx, uint64_t ptr)
{
    device_slot *s = ctx;
    if (forked() || s->ctx == NULL)
        return;
    CUcontext dummy;
    if (gg_cu.cuCtxPushCurrent(s->ctx) == CUDA_SUCCESS) {
        gg_cu.cuMemFree((CUdeviceptr) ptr);
        gg_cu.cuCtxPopCurrent(&dummy);
    }
}

/* ---- probe */

static int probe_locked(void)
{
    gg_status_clear(&probe_why);
    if (gg_cuda_load(&probe_why) != 0)
        return -1;
    CUresult r = gg_cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        char buf[256];
        gg_cu_errstr(r, buf, sizeof buf);
        return gg_fail(&probe_why, "gamgpu_device_unavailable",
                       "cuInit failed: %s", buf);
    }
    owner_pid = getpid();
    gg_cu.cuDriverGetVersion(&driver_version);
    int count = 0;
    r = gg_cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count <= 0)
        return gg_fail(&probe_why, "gamgpu_device_unavailable",
                       "the NVIDIA driver reports no CUDA device");
    if (count > GG_MAX_DEVICES)
        count = GG_MAX_DEVICES;
    for (int i = 0; i < count; i++) {
        device_slot *s = &slots[i];
        memset(s, 0, sizeof *s);
        if (gg_cu_check(gg_cu.cuDeviceGet(&s->dev, i), "cuDeviceGet", &probe_why))
            return -1;
        gg_cu.cuDeviceGetAttribute(&s->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s->dev);
        gg_cu.cuDeviceGetAttribute(&s->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s->dev);
        gg_cu.cuDeviceGetAttribute(&s->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s->dev);
        gg_nvrtc_arch(s->cc_major, s->cc_minor, s->arch, sizeof s->arch);
        snprintf(s->where, sizeof s->where, "cuda:%d", i);
        gg_allocator a = {.ctx = s, .alloc = cuda_alloc, .free = cuda_free};
        gg_strlcpy(a.where, s->where, sizeof a.where);
        gg_arena_init(&s->arena, a);
        gg_arena_set_budget(&s->arena, (size_t) memory_budget);
    }
    n_devices = count;
    if (slots[0].cc_major < 6)
        return gg_fail(&probe_why, "gamgpu_device_unavailable",
                       "device 0 has compute capability %d.%d; gamgpu needs 6.0 or newer "
                       "(double-precision atomics)", slots[0].cc_major, slots[0].cc_minor);
    if (gg_nvrtc_load(&probe_why) != 0)
        return -1;
    int archs[GG_MAX_NVRTC_ARCHS];
    const int na = gg_nvrtc_supported_archs(archs, GG_MAX_NVRTC_ARCHS);
    if (!gg_nvrtc_arch_listed(slots[0].arch, archs, na))
        return gg_fail(&probe_why, "gamgpu_device_unavailable",
                       "device 0 has compute capability %d.%d (%s), which this NVRTC "
                       "(%s) does not compile for: it takes compute_%d to compute_%d. "
                       "A CUDA toolkit that still supports the device is needed",
                       slots[0].cc_major, slots[0].cc_minor, slots[0].arch,
                       gg_nvrtc_path(), archs[0], archs[na - 1]);
    return 0;
}

int gg_gpu_probe(gg_status *why)
{
    pthread_mutex_lock(&rt_lock);
    if (!probed) {
        usable = probe_locked() == 0;
        probed = 1;
    }
    int ok = usable && !forked();
    pthread_mutex_unlock(&rt_lock);
    if (ok)
        return 0;
    if (forked())
        return gg_fail(why, "gamgpu_device_unavailable",
                       "this R process is a fork (e.g. parallel::mclapply) of one that "
                       "initialised CUDA; a forked child cannot use its parent's CUDA context");
    if (why != NULL && !why->failed)
        *why = probe_why;
    return -1;
}

int gg_gpu_probed(void)
{
    pthread_mutex_lock(&rt_lock);
    int p = probed;
    pthread_mutex_unlock(&rt_lock);
    return p;
}

int gg_gpu_device_count(void)
{
    return gg_gpu_probe(NULL) == 0 ? n_devices : 0;
}

int gg_gpu_driver_version(void) { return driver_version; }

int gg_gpu_nvrtc_version(int *major, int *minor, gg_status *st)
{
    *major = *minor = 0;
    if (gg_nvrtc_load(st) != 0)
        return -1;
    nvrtcResult r = gg_nv.nvrtcVersion(major, minor);
    if (r != NVRTC_SUCCESS)
        return gg_fail(st, "gamgpu_nvrtc_unavailable", "nvrtcVersion failed: %s",
                       gg_nv.nvrtcGetErrorString(r));
    return 0;
}

const char *gg_gpu_nvrtc_path(void) { return gg_nvrtc_path(); }

int gg_gpu_nvrtc_archs(int *archs, int max, gg_status *st)
{
    if (gg_nvrtc_load(st) != 0)
        return -1;
    return gg_nvrtc_supported_archs(archs, max);
}

static int check_ordinal(int ordinal, gg_status *st)
{
    if (gg_gpu_probe(st) != 0)
        return -1;
    if (ordinal < 0 || ordinal >= n_devices)
        return gg_fail(st, "gamgpu_device_unavailable",
                       "no CUDA device with ordinal %d (%d present)", ordinal, n_devices);
    return 0;
}

int gg_cuda_enter(int ordinal, gg_status *st)
{
    if (check_ordinal(ordinal, st) != 0)
        return -1;
    device_slot *s = &slots[ordinal];
    pthread_mutex_lock(&rt_lock);
    if (s->ctx == NULL) {
        CUresult r = gg_cu.cuDevicePrimaryCtxRetain(&s->ctx, s->dev);
        if (r != CUDA_SUCCESS) {
            s->ctx = NULL;
            pthread_mutex_unlock(&rt_lock);
            return gg_cu_check(r, "cuDevicePrimaryCtxRetain", st);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return gg_cu_check(gg_cu.cuCtxPushCurrent(s->ctx), "cuCtxPushCurrent", st);
}

void gg_cuda_leave(int ordinal)
{
    (void) ordinal;
    CUcontext dummy;
    gg_cu.cuCtxPopCurrent(&dummy);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int gg_cuda_run(int ordinal, gg_cuda_op op, void *ctx, long *count, double *timer,
                gg_status *st)
{
    const double t0 = now(), before = timer ? *timer : 0;
    if (gg_cuda_enter(ordinal, st) != 0)
        return -1;
    const int rc = op(ctx, st);
    gg_cuda_leave(ordinal);
    if (count)
        (*count)++;
    if (timer)
        *timer = before + (now() - t0);
    return rc;
}

int gg_cuda_sm_count(int ordinal)       { return slots[ordinal].sm_count; }
const char *gg_cuda_arch(int ordinal)   { return slots[ordinal].arch; }

int gg_gpu_device_info(int ordinal, gg_device_info *out, gg_status *st)
{
    memset(out, 0, sizeof *out);
    if (check_ordinal(ordinal, st) != 0)
        return -1;
    device_slot *s = &slots[ordinal];
    out->ordinal = ordinal;
    gg_cu.cuDeviceGetName(out->name, (int) sizeof out->name, s->dev);
    out->cc_major = s->cc_major;
    out->cc_minor = s->cc_minor;
    out->multiprocessors = s->sm_count;
    gg_strlcpy(out->arch, s->arch, sizeof out->arch);
    size_t total = 0, free_b = 0;
    gg_cu.cuDeviceTotalMem(&total, s->dev);
    out->total_bytes = (double) total;
    out->free_bytes = -1;
    if (gg_cuda_enter(ordinal, st) != 0)
        return -1;
    if (gg_cu.cuMemGetInfo(&free_b, &total) == CUDA_SUCCESS)
        out->free_bytes = (double) free_b;
    gg_cuda_leave(ordinal);
    return 0;
}

gg_arena *gg_gpu_arena(int ordinal, gg_status *st)
{
    if (check_ordinal(ordinal, st) != 0)
        return NULL;
    return &slots[ordinal].arena;
}

void gg_gpu_set_memory_budget(double bytes)
{
    pthread_mutex_lock(&rt_lock);
    memory_budget = bytes > 0 ? bytes : 0;
    int n = probed && usable ? n_devices : 0;
    pthread_mutex_unlock(&rt_lock);
    for (int i = 0; i < n; i++)
        gg_arena_set_budget(&slots[i].arena, (size_t) memory_budget);
}

void gg_cuda_on_release(void (*fn)(int ordinal))
{
    __atomic_store_n(&before_release, fn, __ATOMIC_RELEASE);
}

void gg_gpu_shutdown(void)
{
    void (*unload)(int) = __atomic_load_n(&before_release, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&rt_lock);
    if (probed && !forked()) {
        for (int i = 0; i < n_devices; i++) {
            device_slot *s = &slots[i];
            if (s->ctx != NULL && gg_cu.cuCtxPushCurrent(s->ctx) == CUDA_SUCCESS) {
                if (unload != NULL)
                    unload(i);
                gg_arena_destroy(&s->arena);
                CUcontext dummy;
                gg_cu.cuCtxPopCurrent(&dummy);
                gg_cu.cuDevicePrimaryCtxRelease(s->dev);
            } else {
                gg_arena_destroy(&s->arena);
            }
            s->ctx = NULL;
        }
        n_devices = 0;
        usable = 0;
        probed = 0;   /* a later request (package reloaded) probes again */
    }
    pthread_mutex_unlock(&rt_lock);
}
