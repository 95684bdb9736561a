/* vec2.h -- two doubles at a time where the compiler has vector types
 * (GCC and clang: SSE2 on x86-64, NEON on arm64), without -O3 or flags
 * R's CFLAGS may not have.  Elementwise: a loop over them gives the scalar
 * loop's numbers to the bit.  GG_VEC2 is defined where they exist; the
 * callers keep a scalar loop for the rest (and for other compilers). */
#ifndef GAMGPU_VEC2_H
#define GAMGPU_VEC2_H

#if defined(__GNUC__) || defined(__clang__)
#define GG_VEC2 1
typedef double gg_v2d __attribute__((vector_size(16)));
static inline gg_v2d gg_ld2(const double *p)
{
    gg_v2d v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
static inline void gg_st2(double *p, gg_v2d v) { __builtin_memcpy(p, &v, sizeof v); }
#endif

#endif
