/* double_keys.h -- doubles as unsigned keys whose order is numeric order,
 * for the radix passes of setup_stats.c (order statistics) and
 * sorted_unique.c (distinct values in order). */
#ifndef GAMGPU_DOUBLE_KEYS_H
#define GAMGPU_DOUBLE_KEYS_H

#include <stdint.h>
#include <string.h>

/* The bits of a double, turned so that unsigned order is numeric order
 * (for everything but NaN): positive values get the sign bit set, negative
 * ones all bits flipped. */
static inline uint64_t key_of(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return (u >> 63) ? ~u : (u | ((uint64_t) 1 << 63));
}

static inline double value_of(uint64_t key)
{
    uint64_t u = (key >> 63) ? (key & ~((uint64_t) 1 << 63)) : ~key;
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

#endif
