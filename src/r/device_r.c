/* device_r.c -- R glue of the device runtime: gpu_info(), the probe behind
 * the device policy, arena statistics, the module list, telemetry, the
 * NVRTC compile check, and the runtime handle whose finalizer frees every
 * device resource at unload and at R exit.
 *
 * Also a host-memory arena (an external pointer) that runs the arena's
 * bookkeeping with malloc instead of cuMemAlloc, so hits, misses, budget
 * and trim-and-retry are tested on machines with no GPU. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_r.h"
#include "errors_r.h"
#include "gpu.h"
#include "gpu_telemetry.h"
#include "sexp_r.h"

/* ---- dispatch of the glue's device-or-CPU routines (gram_r.c, predict_r.c) */

int gg_device_outcome(int mode, int rc, int ordinal, const char *backend, gg_status *st,
                      char *device, size_t device_len, const char **fallback)
{
    if (mode > 0 && rc == 0) {
        snprintf(device, device_len, "cuda:%d", ordinal);
        return 1;
    }
    if (mode == 0)
        return 0;
    if (mode == 2 || !gg_device_failure(st))
        gg_raise(st);
    gg_tel_fallback(backend, st->msg);
    *fallback = st->msg;
    return 0;
}

/* ---- runtime handle ------------------------------------------------- */

static SEXP tag_runtime(void) { return Rf_install("gamgpu_runtime"); }

/* The handle's finalizer is an R closure (R/zzz.R), not a C function: a C
 * finalizer would be a pointer into this DLL, and a handle collected after
 * the DLL is unloaded (unloadNamespace, then gc) would jump into unmapped
 * memory.  The closure calls gg_runtime_detach only while the DLL is loaded. */

/* Called from .onLoad: remembers where kernels and the headers they include
 * live and returns the handle that owns the runtime. */
SEXP gg_runtime_attach(SEXP kernel_dir, SEXP include_dir)
{
    gg_gpu_set_kernel_dir(gg_as_utf8(kernel_dir, "kernel_dir", "gamgpu_bad_input"));
    gg_gpu_set_include_dir(gg_as_utf8(include_dir, "include_dir", "gamgpu_bad_input"));
    static int token;  /* any non-NULL address: the state itself is static */
    return R_MakeExternalPtr(&token, tag_runtime(), R_NilValue);
}

/* Free every device resource (arena buffers, modules, contexts).  Idempotent:
 * the handle is cleared, and a cleared handle is ignored. */
SEXP gg_runtime_detach(SEXP ptr)
{
    if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != tag_runtime())
        gg_abort("gamgpu_bad_input", "not a gamgpu runtime handle");
    if (R_ExternalPtrAddr(ptr) != NULL) {
        gg_gpu_shutdown();
        R_ClearExternalPtr(ptr);
    }
    return R_NilValue;
}

/* ---- probe and info ------------------------------------------------- */

SEXP gg_gpu_probe_r(void)
{
    gg_status why;
    gg_status_clear(&why);
    int ok = gg_gpu_probe(&why) == 0;
    const char *names[] = {"usable", "reason", "class"};
    SEXP out = PROTECT(gg_named_list(3, names));
    SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(ok));
    SET_VECTOR_ELT(out, 1, gg_scalar_string(ok ? "" : why.msg));
    SET_VECTOR_ELT(out, 2, gg_scalar_string(ok ? "" : why.cls));
    UNPROTECT(1);
    return out;
}

static SEXP devices_frame(int n)
{
    const char *names[] = {"ordinal", "name", "compute_capability", "multiprocessors",
                           "total_memory", "free_memory", "nvrtc_arch"};
    SEXP df = PROTECT(gg_named_list(7, names));
    SEXP ord = PROTECT(Rf_allocVector(INTSXP, n)), nm = PROTECT(Rf_allocVector(STRSXP, n)),
         cc = PROTECT(Rf_allocVector(STRSXP, n)), sm = PROTECT(Rf_allocVector(INTSXP, n)),
         tot = PROTECT(Rf_allocVector(REALSXP, n)), fre = PROTECT(Rf_allocVector(REALSXP, n)),
         arch = PROTECT(Rf_allocVector(STRSXP, n));
    for (int i = 0; i < n; i++) {
        gg_device_info info;
        gg_status st;
        gg_status_clear(&st);
        if (gg_gpu_device_info(i, &info, &st) != 0)
            gg_raise(&st);
        char buf[32];
        snprintf(buf, sizeof buf, "%d.%d", info.cc_major, info.cc_minor);
        INTEGER(ord)[i] = info.ordinal;
        SET_STRING_ELT(nm, i, Rf_mkChar(info.name));
        SET_STRING_ELT(cc, i, Rf_mkChar(buf));
        INTEGER(sm)[i] = info.multiprocessors;
        REAL(tot)[i] = info.total_bytes;
        REAL(fre)[i] = info.free_bytes < 0 ? NA_REAL : info.free_bytes;
        SET_STRING_ELT(arch, i, Rf_mkChar(info.arch));
    }
    SEXP cols[] = {ord, nm, cc, sm, tot, fre, arch};
    for (int j = 0; j < 7; j++)
        SET_VECTOR_ELT(df, j, cols[j]);
    gg_as_data_frame(df, n);
    UNPROTECT(8);
    return df;
}

SEXP gg_gpu_info_r(SEXP probe)
{
    int do_probe = Rf_asLogical(probe) == TRUE;
    gg_status why;
    gg_status_clear(&why);
    int usable = do_probe && gg_gpu_probe(&why) == 0;
    int n = usable ? gg_gpu_device_count() : 0;

    char driver[32] = "", nvrtc[32] = "";
    int major = 0, minor = 0;
    if (do_probe && gg_gpu_driver_version() > 0)
        snprintf(driver, sizeof driver, "%d.%d", gg_gpu_driver_version() / 1000,
                 (gg_gpu_driver_version() % 1000) / 10);
    gg_status nv;
    gg_status_clear(&nv);
    if (do_probe && gg_gpu_nvrtc_version(&major, &minor, &nv) == 0)
        snprintf(nvrtc, sizeof nvrtc, "%d.%d", major, minor);
    char toolkit_version[32] = "";
    if (gg_gpu_toolkit_version() > 0)
        snprintf(toolkit_version, sizeof toolkit_version, "%d.%d",
                 gg_gpu_toolkit_version() / 1000, (gg_gpu_toolkit_version() % 1000) / 10);

    int archs[GG_MAX_NVRTC_ARCHS];
    gg_status na_st;
    gg_status_clear(&na_st);
    int na = do_probe ? gg_gpu_nvrtc_archs(archs, GG_MAX_NVRTC_ARCHS, &na_st) : 0;
    if (na < 0)
        na = 0;

    const char *names[] = {"built_with_cuda", "toolkit", "toolkit_version", "probed", "usable",
                           "reason", "reason_class", "driver_version", "nvrtc_version",
                           "nvrtc_library", "nvrtc_problem", "devices", "kernel_dir",
                           "nvrtc_archs"};
    SEXP out = PROTECT(gg_named_list(14, names));
    SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(gg_gpu_compiled()));
    SET_VECTOR_ELT(out, 1, gg_scalar_string(gg_gpu_toolkit()));
    SET_VECTOR_ELT(out, 2, gg_scalar_string(toolkit_version));
    SET_VECTOR_ELT(out, 3, Rf_ScalarLogical(gg_gpu_probed()));
    SET_VECTOR_ELT(out, 4, Rf_ScalarLogical(usable));
    SET_VECTOR_ELT(out, 5, gg_scalar_string(usable ? "" : why.msg));
    SET_VECTOR_ELT(out, 6, gg_scalar_string(usable ? "" : why.cls));
    SET_VECTOR_ELT(out, 7, gg_scalar_string(driver));
    SET_VECTOR_ELT(out, 8, gg_scalar_string(nvrtc));
    SET_VECTOR_ELT(out, 9, gg_scalar_string(gg_gpu_nvrtc_path()));
    SET_VECTOR_ELT(out, 10, gg_scalar_string(nv.failed ? nv.msg : ""));
    SET_VECTOR_ELT(out, 11, devices_frame(n));
    SET_VECTOR_ELT(out, 12, gg_scalar_string(gg_gpu_kernel_dir()));
    SEXP a = Rf_allocVector(INTSXP, na);
    SET_VECTOR_ELT(out, 13, a);
    for (int i = 0; i < na; i++)
        INTEGER(a)[i] = archs[i];
    UNPROTECT(1);
    return out;
}

/* gg_nvrtc_arch_listed() for tests: arch ("compute_90") among archs. */
SEXP gg_nvrtc_arch_listed_r(SEXP arch, SEXP archs)
{
    if (TYPEOF(archs) != INTSXP)
        gg_abort("gamgpu_bad_input", "archs must be integers");
    const char *a = gg_as_utf8(arch, "arch", "gamgpu_bad_input");
    return Rf_ScalarLogical(gg_nvrtc_arch_listed(a, INTEGER(archs), (int) XLENGTH(archs)));
}

SEXP gg_nvrtc_arch_r(SEXP major, SEXP minor)
{
    char buf[16];
    gg_nvrtc_arch(gg_as_int(major, "major", 0, INT_MAX, "gamgpu_bad_input"),
                  gg_as_int(minor, "minor", 0, INT_MAX, "gamgpu_bad_input"), buf, sizeof buf);
    return gg_scalar_string(buf);
}

/* ---- arena ---------------------------------------------------------- */

static int ordinal_arg(SEXP ordinal)
{
    return gg_as_int(ordinal, "the device ordinal", 0, INT_MAX, "gamgpu_bad_input");
}

/* A count of doubles: a whole number that a size_t holds in bytes. */
static size_t count_arg(SEXP n)
{
    return gg_as_size(n, "n", (double) (SIZE_MAX / sizeof(double)), "gamgpu_bad_input");
}

static SEXP arena_frame(gg_arena *a)
{
    gg_arena_bucket_stats rows[GG_ARENA_NBUCKETS];
    double cached = 0, in_use = 0;
    int n = gg_arena_stats(a, rows, &cached, &in_use);
    const char *names[] = {"bucket", "elements", "cached", "in_use", "bytes_cached",
                           "bytes_in_use", "hits", "misses"};
    SEXP df = PROTECT(gg_named_list(8, names));
    for (int j = 0; j < 8; j++)
        SET_VECTOR_ELT(df, j, Rf_allocVector(j == 0 ? INTSXP : REALSXP, n));
    for (int i = 0; i < n; i++) {
        INTEGER(VECTOR_ELT(df, 0))[i] = rows[i].bucket;
        REAL(VECTOR_ELT(df, 1))[i] = (double) rows[i].elements;
        REAL(VECTOR_ELT(df, 2))[i] = (double) rows[i].n_cached;
        REAL(VECTOR_ELT(df, 3))[i] = (double) rows[i].n_in_use;
        REAL(VECTOR_ELT(df, 4))[i] = rows[i].bytes_cached;
        REAL(VECTOR_ELT(df, 5))[i] = rows[i].bytes_in_use;
        REAL(VECTOR_ELT(df, 6))[i] = (double) rows[i].hits;
        REAL(VECTOR_ELT(df, 7))[i] = (double) rows[i].misses;
    }
    gg_as_data_frame(df, n);
    UNPROTECT(1);
    return df;
}

/* Stats of one device's arena, or NULL when no device is usable (the
 * caller decides whether that is worth probing). */
SEXP gg_arena_stats_r(SEXP ordinal)
{
    gg_status st;
    gg_status_clear(&st);
    gg_arena *a = gg_gpu_arena(ordinal_arg(ordinal), &st);
    return a == NULL ? R_NilValue : arena_frame(a);
}

SEXP gg_arena_release_r(SEXP ordinal)
{
    gg_status st;
    gg_status_clear(&st);
    gg_arena *a = gg_gpu_arena(ordinal_arg(ordinal), &st);
    return Rf_ScalarReal(a == NULL ? 0 : gg_arena_trim(a));
}

/* Take n doubles from the device arena for `label` and give them back:
 * exercises allocation failure paths from R. */
SEXP gg_arena_try_alloc_r(SEXP ordinal, SEXP n, SEXP label)
{
    gg_status st;
    gg_status_clear(&st);
    const int ord = ordinal_arg(ordinal);
    const size_t nd = count_arg(n);
    const char *lab = gg_as_utf8(label, "label", "gamgpu_bad_input");
    gg_arena *a = gg_gpu_arena(ord, &st);
    if (a == NULL)
        gg_raise(&st);
    gg_dbuf buf;
    if (gg_arena_alloc(a, nd, lab, &buf, &st) != 0)
        gg_raise(&st);
    gg_arena_release(a, &buf);
    return Rf_ScalarLogical(TRUE);
}

SEXP gg_set_memory_budget_r(SEXP bytes)
{
    double b = Rf_asReal(bytes);
    gg_gpu_set_memory_budget(R_FINITE(b) && b > 0 ? b : 0);
    return R_NilValue;
}

/* ---- host arena: the arena over malloc, for bookkeeping tests -------- */

#define HOST_SLOTS 256
typedef struct host_arena {
    gg_arena arena;
    gg_dbuf  slot[HOST_SLOTS];   /* buffers handed to R, by index */
    double   device_bytes;       /* simulated "device" capacity (0 = none) */
    double   allocated;          /* bytes malloc'd and not freed */
} host_arena;

static SEXP tag_host_arena(void) { return Rf_install("gamgpu_host_arena"); }

/* Buffers carry their size in a 16-byte header so frees (also those the
 * arena makes while trimming inside an allocation) keep `allocated` exact. */
static int host_alloc(void *ctx, size_t bytes, uint64_t *out, char *err, size_t errlen)
{
    host_arena *h = ctx;
    if (h->device_bytes > 0 && h->allocated + (double) bytes > h->device_bytes) {
        snprintf(err, errlen, "simulated out of memory");
        return GG_ALLOC_OOM;
    }
    char *p = malloc(bytes + 16);
    if (p == NULL) {
        snprintf(err, errlen, "malloc failed");
        return GG_ALLOC_OOM;
    }
    memcpy(p, &bytes, sizeof bytes);
    h->allocated += (double) bytes;
    *out = (uint64_t) (uintptr_t) (p + 16);
    return GG_ALLOC_OK;
}

static void host_free(void *ctx, uint64_t ptr)
{
    host_arena *h = ctx;
    char *p = (char *) (uintptr_t) ptr - 16;
    size_t bytes;
    memcpy(&bytes, p, sizeof bytes);
    h->allocated -= (double) bytes;
    free(p);
}

static host_arena *host_arena_get(SEXP ptr)
{
    if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != tag_host_arena())
        gg_abort("gamgpu_bad_input", "not a host arena");
    host_arena *h = R_ExternalPtrAddr(ptr);
    if (h == NULL)
        gg_abort("gamgpu_stale_pointer",
                 "this host arena has been freed or was saved and reloaded");
    return h;
}

static void host_arena_finalizer(SEXP ptr)
{
    host_arena *h = R_ExternalPtrAddr(ptr);
    if (h == NULL)
        return;
    for (int i = 0; i < HOST_SLOTS; i++)
        gg_arena_release(&h->arena, &h->slot[i]);
    gg_arena_destroy(&h->arena);
    free(h);
    R_ClearExternalPtr(ptr);
}

SEXP gg_host_arena_new(SEXP device_bytes, SEXP budget_bytes)
{
    /* every R call (which may fail and longjmp) before the calloc, and the
     * handle with its finalizer in place before there is anything to own */
    const double dev_bytes = Rf_asReal(device_bytes);
    double budget = Rf_asReal(budget_bytes);
    SEXP ptr = PROTECT(R_MakeExternalPtr(NULL, tag_host_arena(), R_NilValue));
    R_RegisterCFinalizerEx(ptr, host_arena_finalizer, TRUE);
    host_arena *h = calloc(1, sizeof *h);
    if (h == NULL)
        gg_abort("gamgpu_host_oom", "out of memory");
    R_SetExternalPtrAddr(ptr, h);
    h->device_bytes = dev_bytes;
    gg_allocator a = {.ctx = h, .alloc = host_alloc, .free = host_free};
    gg_strlcpy(a.where, "host", sizeof a.where);
    gg_arena_init(&h->arena, a);
    /* no budget: NA, <= 0 or Inf; beyond 2^53 bytes it could never bind */
    if (R_FINITE(budget) && budget > 0)
        gg_arena_set_budget(&h->arena, (size_t) (budget < 0x1p53 ? budget : 0x1p53));
    for (int i = 0; i < HOST_SLOTS; i++)
        h->slot[i].bucket = -1;
    UNPROTECT(1);
    return ptr;
}

/* A new budget for a host arena (bytes; <= 0, NA or Inf: none). */
SEXP gg_host_arena_budget(SEXP ptr, SEXP budget_bytes)
{
    host_arena *h = host_arena_get(ptr);
    const double budget = Rf_asReal(budget_bytes);
    gg_arena_set_budget(&h->arena, R_FINITE(budget) && budget > 0
                                       ? (size_t) (budget < 0x1p53 ? budget : 0x1p53) : 0);
    return R_NilValue;
}

SEXP gg_host_arena_alloc(SEXP ptr, SEXP n, SEXP label)
{
    host_arena *h = host_arena_get(ptr);
    const size_t nd = count_arg(n);
    const char *lab = gg_as_utf8(label, "label", "gamgpu_bad_input");
    int i = 0;
    while (i < HOST_SLOTS && h->slot[i].ptr != 0)
        i++;
    if (i == HOST_SLOTS)
        gg_abort("gamgpu_bad_input", "host arena: too many live buffers");
    gg_status st;
    gg_status_clear(&st);
    int rc = gg_arena_alloc(&h->arena, nd, lab, &h->slot[i], &st);
    if (rc != 0)
        gg_raise(&st);
    return Rf_ScalarInteger(i + 1);
}

SEXP gg_host_arena_release(SEXP ptr, SEXP id)
{
    host_arena *h = host_arena_get(ptr);
    const int i = gg_as_int(id, "id", 1, HOST_SLOTS, "gamgpu_bad_input") - 1;
    if (h->slot[i].ptr == 0)
        gg_abort("gamgpu_bad_input", "host arena: no such live buffer");
    gg_arena_release(&h->arena, &h->slot[i]);
    return R_NilValue;
}

SEXP gg_host_arena_trim(SEXP ptr)
{
    host_arena *h = host_arena_get(ptr);
    double freed = gg_arena_trim(&h->arena);
    return Rf_ScalarReal(freed);
}

SEXP gg_host_arena_stats(SEXP ptr)
{
    host_arena *h = host_arena_get(ptr);
    SEXP df = PROTECT(arena_frame(&h->arena));
    SEXP sym = Rf_install("oom_retries");
    SEXP val = PROTECT(Rf_ScalarReal((double) h->arena.oom_retries));
    Rf_setAttrib(df, sym, val);
    UNPROTECT(2);
    return df;
}

SEXP gg_host_arena_free(SEXP ptr)
{
    host_arena_get(ptr);
    host_arena_finalizer(ptr);
    return R_NilValue;
}

/* Each size's class in the arena and the doubles a buffer of that class
 * holds (NA for a size with no class: negative, not finite, or too large). */
SEXP gg_arena_size_class_r(SEXP n)
{
    if (TYPEOF(n) != REALSXP)
        gg_abort("gamgpu_bad_input", "n must be a double vector");
    R_xlen_t len = XLENGTH(n);
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
    SEXP nms = PROTECT(Rf_allocVector(STRSXP, 2));
    SET_STRING_ELT(nms, 0, Rf_mkChar("bucket"));
    SET_STRING_ELT(nms, 1, Rf_mkChar("elements"));
    Rf_setAttrib(out, R_NamesSymbol, nms);
    SEXP bucket = Rf_allocVector(INTSXP, len);
    SET_VECTOR_ELT(out, 0, bucket);
    SEXP elements = Rf_allocVector(REALSXP, len);
    SET_VECTOR_ELT(out, 1, elements);
    for (R_xlen_t i = 0; i < len; i++) {
        double v = REAL(n)[i];
        /* a size beyond what a size_t holds has no bucket either (SIZE_MAX) */
        int b = (!R_FINITE(v) || v < 0) ? -1
            : gg_arena_bucket_of(v < 0x1p63 ? (size_t) v : SIZE_MAX);
        INTEGER(bucket)[i] = b < 0 ? NA_INTEGER : b;
        REAL(elements)[i] = b < 0 ? NA_REAL : (double) gg_arena_class_elements(b);
    }
    UNPROTECT(2);
    return out;
}

/* ---- modules, telemetry, compile check ------------------------------ */

/* Point the module cache at another kernel directory; returns the old one.
 * For tests of compile failures (a broken source in a temporary folder). */
SEXP gg_set_kernel_dir_r(SEXP dir)
{
    const char *d = gg_as_utf8(dir, "dir", "gamgpu_bad_input");
    SEXP old = PROTECT(gg_scalar_string(gg_gpu_kernel_dir()));
    gg_gpu_set_kernel_dir(d);
    UNPROTECT(1);
    return old;
}

SEXP gg_module_request_r(SEXP ordinal, SEXP module, SEXP fn)
{
    gg_status st;
    gg_status_clear(&st);
    const int ord = ordinal_arg(ordinal);
    const char *mod = gg_as_utf8(module, "module", "gamgpu_bad_input");
    const char *f = gg_as_utf8(fn, "fn", "gamgpu_bad_input");
    if (gg_gpu_module_request(ord, mod, f, &st) != 0)
        gg_raise(&st);
    return Rf_ScalarLogical(TRUE);
}

SEXP gg_modules_r(void)
{
    gg_module_info m[128];
    int n = gg_gpu_module_list(m, 128);
    const char *names[] = {"device", "name", "arch", "ok", "compile_seconds", "requests",
                           "compiles"};
    SEXP df = PROTECT(gg_named_list(7, names));
    SET_VECTOR_ELT(df, 0, Rf_allocVector(INTSXP, n));
    SET_VECTOR_ELT(df, 1, Rf_allocVector(STRSXP, n));
    SET_VECTOR_ELT(df, 2, Rf_allocVector(STRSXP, n));
    SET_VECTOR_ELT(df, 3, Rf_allocVector(LGLSXP, n));
    SET_VECTOR_ELT(df, 4, Rf_allocVector(REALSXP, n));
    SET_VECTOR_ELT(df, 5, Rf_allocVector(REALSXP, n));
    SET_VECTOR_ELT(df, 6, Rf_allocVector(REALSXP, n));
    for (int i = 0; i < n; i++) {
        INTEGER(VECTOR_ELT(df, 0))[i] = m[i].device;
        SET_STRING_ELT(VECTOR_ELT(df, 1), i, Rf_mkChar(m[i].name));
        SET_STRING_ELT(VECTOR_ELT(df, 2), i, Rf_mkChar(m[i].arch));
        LOGICAL(VECTOR_ELT(df, 3))[i] = m[i].ok;
        REAL(VECTOR_ELT(df, 4))[i] = m[i].compile_seconds;
        REAL(VECTOR_ELT(df, 5))[i] = (double) m[i].requests;
        REAL(VECTOR_ELT(df, 6))[i] = (double) m[i].compiles;
    }
    gg_as_data_frame(df, n);
    UNPROTECT(1);
    return df;
}

SEXP gg_telemetry_r(SEXP reset)
{
    /* R memory: reclaimed by R also when an allocation below fails */
    gg_tel_entry *e = (gg_tel_entry *) R_alloc(GG_TEL_MAX_BACKENDS, sizeof *e);
    int n = gg_tel_snapshot(e, GG_TEL_MAX_BACKENDS);
    if (Rf_asLogical(reset) == TRUE)
        gg_tel_reset();
    const char *names[] = {"backend", "dispatches", "launches", "h2d_bytes", "d2h_bytes",
                           "fallbacks", "reasons"};
    SEXP out = PROTECT(gg_named_list(7, names));
    SET_VECTOR_ELT(out, 0, Rf_allocVector(STRSXP, n));
    for (int j = 1; j < 6; j++)
        SET_VECTOR_ELT(out, j, Rf_allocVector(REALSXP, n));
    SET_VECTOR_ELT(out, 6, Rf_allocVector(VECSXP, n));
    for (int i = 0; i < n; i++) {
        SET_STRING_ELT(VECTOR_ELT(out, 0), i, Rf_mkChar(e[i].backend));
        REAL(VECTOR_ELT(out, 1))[i] = (double) e[i].dispatches;
        REAL(VECTOR_ELT(out, 2))[i] = (double) e[i].launches;
        REAL(VECTOR_ELT(out, 3))[i] = e[i].h2d_bytes;
        REAL(VECTOR_ELT(out, 4))[i] = e[i].d2h_bytes;
        REAL(VECTOR_ELT(out, 5))[i] = (double) e[i].fallbacks;
        SEXP r = PROTECT(Rf_allocVector(REALSXP, e[i].n_reasons));
        SEXP rn = PROTECT(Rf_allocVector(STRSXP, e[i].n_reasons));
        for (int k = 0; k < e[i].n_reasons; k++) {
            REAL(r)[k] = (double) e[i].reason[k].count;
            SET_STRING_ELT(rn, k, Rf_mkCharCE(e[i].reason[k].text, CE_UTF8));
        }
        Rf_setAttrib(r, R_NamesSymbol, rn);
        SET_VECTOR_ELT(VECTOR_ELT(out, 6), i, r);
        UNPROTECT(2);
    }
    UNPROTECT(1);
    return out;
}

SEXP gg_record_fallback_r(SEXP backend, SEXP reason)
{
    const char *b = gg_as_utf8(backend, "backend", "gamgpu_bad_input");
    const char *r = gg_as_utf8(reason, "reason", "gamgpu_bad_input");
    gg_tel_fallback(b, r);
    return R_NilValue;
}

/* Compile each (name, source) with NVRTC for `arch`; no device needed. */
SEXP gg_compile_check_r(SEXP names, SEXP sources, SEXP arch)
{
    if (TYPEOF(names) != STRSXP || TYPEOF(sources) != STRSXP ||
        XLENGTH(names) != XLENGTH(sources))
        gg_abort("gamgpu_bad_input", "names and sources must be character vectors of one length");
    R_xlen_t n = XLENGTH(names);
    const char *a = gg_as_utf8(arch, "arch", "gamgpu_bad_input");
    const char *cols[] = {"kernel", "arch", "ok", "log"};
    SEXP df = PROTECT(gg_named_list(4, cols));
    SET_VECTOR_ELT(df, 0, Rf_duplicate(names));
    SET_VECTOR_ELT(df, 1, Rf_allocVector(STRSXP, n));
    SET_VECTOR_ELT(df, 2, Rf_allocVector(LGLSXP, n));
    SET_VECTOR_ELT(df, 3, Rf_allocVector(STRSXP, n));
    /* the compiler's log is malloc'd: it goes into R through
     * gg_mkchar_free, whose continuation token exists before any log does */
    SEXP token = PROTECT(R_MakeUnwindCont());
    for (R_xlen_t i = 0; i < n; i++) {
        if (STRING_ELT(names, i) == NA_STRING || STRING_ELT(sources, i) == NA_STRING)
            gg_abort("gamgpu_bad_input", "kernel names and sources must not be NA");
        const char *nm = CHAR(STRING_ELT(names, i)), *src = CHAR(STRING_ELT(sources, i));
        SET_STRING_ELT(VECTOR_ELT(df, 1), i, Rf_mkChar(a));
        gg_status st;
        gg_status_clear(&st);
        char *log = NULL;
        int ok = gg_gpu_compile_source(nm, src, a, &log, &st) == 0;
        LOGICAL(VECTOR_ELT(df, 2))[i] = ok;
        if (!ok) {
            free(log);
            log = NULL;
        }
        SEXP text = ok ? gg_mkchar_free(log, token) : Rf_mkCharCE(st.msg, CE_UTF8);
        SET_STRING_ELT(VECTOR_ELT(df, 3), i, text);
        if (!ok && strcmp(st.cls, "gamgpu_nvrtc_unavailable") == 0) {
            UNPROTECT(2);
            gg_raise(&st);
        }
    }
    gg_as_data_frame(df, n);
    UNPROTECT(2);
    return df;
}

/* ---- injected device faults, for tests (cuda_fault.c) ----------------- */

/* Arm kind ("none", "alloc", "launch", "compile", "copy", "nodevice") at
 * the at-th call; returns the faults injected since the previous arm. */
SEXP gg_gpu_fault_r(SEXP kind, SEXP at)
{
    static const char *kinds[] = {"none", "alloc", "launch", "compile", "copy", "nodevice"};
    const char *k = gg_as_utf8(kind, "kind", "gamgpu_bad_input");
    int ki = -1;
    for (int i = 0; i < 6; i++)
        if (strcmp(k, kinds[i]) == 0) ki = i;
    if (ki < 0)
        gg_abort("gamgpu_bad_input",
                 "kind must be one of none, alloc, launch, compile, copy, nodevice");
    const double a = Rf_asReal(at);
    if (!R_FINITE(a) || a < 1 || a > 1e15)
        gg_abort("gamgpu_bad_input", "at must be a count >= 1");
    gg_status st;
    gg_status_clear(&st);
    long before = 0;
    if (gg_gpu_fault_arm(ki, (long) a, &before, &st) != 0)
        gg_raise(&st);
    return Rf_ScalarReal((double) before);
}
