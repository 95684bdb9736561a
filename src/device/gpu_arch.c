/* gpu_arch.c -- which NVRTC virtual architecture a device compiles for,
 * and whether the NVRTC at hand compiles for it (NVRTC 13 no longer takes
 * compute_70 or compute_60: a Volta or Pascal device is then unusable).
 *
 * Pinned to the device's compute capability: NVRTC's own default is below
 * compute_60, where atomicAdd(double*, double) does not exist, and the PTX
 * must not use features the device lacks.  Pure logic, in every build, so
 * the mapping is tested without a GPU. */
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gg_nvrtc_arch(int major, int minor, char *buf, size_t size)
{
    int arch;
    if (major >= 9)
        arch = 90;
    else if (major == 8)
        arch = minor == 9 ? 89 : minor == 6 ? 86 : 80;
    else if (major == 7)
        arch = minor == 5 ? 75 : 70;
    else
        arch = 60;
    snprintf(buf, size, "compute_%d", arch);
}

int gg_nvrtc_arch_listed(const char *arch, const int *archs, int n)
{
    if (n <= 0)
        return 1;
    if (strncmp(arch, "compute_", 8) != 0)
        return 0;
    const int want = atoi(arch + 8);
    for (int i = 0; i < n; i++)
        if (archs[i] == want)
            return 1;
    return 0;
}
