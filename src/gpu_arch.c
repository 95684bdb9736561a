/* gpu_arch.c -- which NVRTC virtual architecture a device compiles for.
 *
 * Pinned to the device's compute capability: NVRTC's own default is below
 * compute_60, where atomicAdd(double*, double) does not exist, and the PTX
 * must not use features the device lacks.  Pure logic, in every build, so
 * the mapping is tested without a GPU. */
#include "gpu.h"

#include <stdio.h>

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
