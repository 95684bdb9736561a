/* basis_map.c -- the step every C basis evaluator shares: mgcv's
 * identifiability constraint and by-variable, applied to a raw basis row in
 * PredictMat's order (see basis.h). */
#include "basis.h"

#include <string.h>

void gg_basis_map_row(const gg_basis_map *map, const double *raw, size_t i, double *out,
                      size_t ldo, size_t orow, double *mid)
{
    const int k = map->k;
    int m = 0;
    if (map->drop >= 0) {
        for (int c = 0; c < k; c++)
            if (c != map->drop) {
                mid[m] = raw[c] - map->shift[m];
                m++;
            }
    } else {
        memcpy(mid, raw, (size_t) k * sizeof(double));
        m = k;
    }
    if (map->by != NULL)
        for (int c = 0; c < m; c++)
            mid[c] *= map->by[i];
    else if (map->by_code != NULL) {
        const double b = map->by_code[i] == map->by_level ? 1.0 : 0.0;
        for (int c = 0; c < m; c++)
            mid[c] *= b;
    }
    for (int c = 0; c < map->kc; c++) {
        const int oc = map->col_of != NULL ? map->col_of[c] : c;
        if (oc < 0)
            continue;                   /* deleted by gam.side */
        double s;
        if (map->Z != NULL) {
            s = 0;
            const double *zc = map->Z + (size_t) c * m;
            for (int r = 0; r < m; r++)
                s += mid[r] * zc[r];
        } else {
            s = mid[c];
        }
        out[(size_t) oc * ldo + orow] = s;
    }
}
