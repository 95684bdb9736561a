/* cuda_open.c -- the device backend put together: cuda_backend.c's
 * row-wise operations with cuda_outer.c's rows of gam()'s outer iteration,
 * cuda_ls.c's location-scale ll() and cuda_cox.c's cox.ph() ll(), which
 * are built on them.  Kept
 * apart so that no two of the files need each other's symbols both ways.
 * Compiled only with CUDA. */
#include "cuda_backend.h"

#include <pthread.h>

static gg_backend_ops device_ops;
static pthread_once_t device_ops_once = PTHREAD_ONCE_INIT;

static void assemble(void)
{
    device_ops = gg_cuda_row_ops;
    device_ops.outer = &gg_cuda_outer_ops;
    device_ops.ls_ll = gg_cuda_ls_ll;
    device_ops.cox_ll = gg_cuda_cox_ll;
}

int gg_backend_cuda_init(gg_backend *be, int ordinal, gg_status *st)
{
    pthread_once(&device_ops_once, assemble);
    if (gg_cuda_backend_open(be, ordinal, st) != 0)
        return -1;
    be->ops = &device_ops;
    return 0;
}
