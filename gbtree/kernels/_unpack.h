/* gbt_unpack_entries: n entries of a packed histogram (quantised gradients) as
   (gradient, hessian) sums, for the split scan and unpack_histogram. */
#ifndef GBT_UNPACK_H
#define GBT_UNPACK_H
#include <stddef.h>
#include <stdint.h>
#include "_clones.h"

/* A packed histogram's n entries as (gradient, hessian) sums (out: 2 n
   doubles): its integer halves times the steps, in int32 arithmetic that the
   compiler vectorises: the low half h sign-extended, and the high half
   g = (packed - h) >> 32, which is the upper 32 bits plus one when h < 0. */
GBT_CLONES
static void gbt_unpack_entries(const int64_t* __restrict packed, ptrdiff_t n, double g_step,
                               double h_step, double* __restrict out) {
    for (ptrdiff_t b = 0; b < n; ++b) {
        int32_t h = (int32_t)(uint32_t)packed[b];
        int32_t g = (int32_t)(packed[b] >> 32) + (h < 0);
        out[2 * b] = (double)g * g_step;
        out[2 * b + 1] = (double)h * h_step;
    }
}
#endif
