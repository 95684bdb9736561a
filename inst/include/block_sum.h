// block_sum.h -- the row kernels' block-level sum (rows.cu, outer.cu):
// each block's NTHREADS values added in a fixed tree order into
// partial[blockIdx.x], which the host sums in block order, so a result is
// reproducible bit for bit.  NVRTC only; the includer defines NTHREADS
// (a power of two) and launches NTHREADS threads per block.
#ifndef GAMGPU_BLOCK_SUM_H
#define GAMGPU_BLOCK_SUM_H

static __device__ void block_sum(double v, double *partial)
{
    __shared__ double s[NTHREADS];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = NTHREADS / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k)
            s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
}

#endif
