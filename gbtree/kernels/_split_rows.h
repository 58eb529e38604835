/* The stable split of a node's rows by one feature's bins, 16 rows a step with
   AVX-512 (_partition.pyx's _split_chunk and _split_chunk_back, which these
   must equal row for row): the rows' bins gathered from the feature's column,
   their sides compared at once, each side's row ids compressed into place with
   masked stores. x86-64 with GCC or Clang; elsewhere the level is 0 and the
   functions are never called. */
#ifndef GBTREE_SPLIT_ROWS_H
#define GBTREE_SPLIT_ROWS_H

#include <stdint.h>
#include <stddef.h>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>

/* GCC's intrinsics start some vectors undefined (maybe-uninitialized): not a bug */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* 2 when the CPU and the OS run AVX-512 (F and VL), else 0. */
static int gbt_split_rows_level(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") ? 2 : 0;
}

/* The lanes of ``live`` whose row goes left: bin <= ``bin`` and not the missing
   bin, or the missing bin when ``default_left``. A row's bin is the top byte of
   the 4 bytes that end at it (``X[r - 3 .. r]``: never before the column), so
   the caller keeps rows 0..2, and ids of 2**31 or more, out of ``live``. */
__attribute__((target("avx512f,avx512vl")))
static inline __mmask16 gbt_left_lanes(const uint8_t* X, __m512i id, __mmask16 live, int bin,
                                       int missing_bin, int default_left) {
    __m512i b = _mm512_srli_epi32(
        _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, id,
                                    (const void*)(X - 3), 1), 24);
    __mmask16 miss = _mm512_cmpeq_epi32_mask(b, _mm512_set1_epi32(missing_bin));
    __mmask16 le = _mm512_cmple_epi32_mask(b, _mm512_set1_epi32(bin));
    return (__mmask16)(((le & ~miss) | (default_left ? miss : 0)) & live);
}

/* Whether lanes of ``live`` hold a row the gather may not read (see above). */
__attribute__((target("avx512f,avx512vl")))
static inline int gbt_unsafe_lanes(__m512i id, __mmask16 live) {
    return (_mm512_cmplt_epi32_mask(id, _mm512_set1_epi32(3)) & live) != 0;
}

/* The first ``n`` lanes reversed (lane k takes lane n - 1 - k). */
__attribute__((target("avx512f,avx512vl")))
static inline __m512i gbt_reverse_lanes(__m512i v, int n) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm512_permutexvar_epi32(_mm512_sub_epi32(_mm512_set1_epi32(n - 1), lane), v);
}

#define GBT_LOW_LANES(n) ((__mmask16)((1u << (n)) - 1))

/* How many rows ahead the bins are prefetched (_partition.pxd's PREFETCH_ROWS): a
   deep node's rows each have their bin on a cache line of its own. */
#define GBT_SPLIT_PREFETCH 64

/* _split_chunk: rows[lo:hi] in order; the left rows go to left_out[lo], ...
   (left_out may be rows), the right rows to right_out[0], right_out[step], ...
   (step 1 or -1). A step with rows it cannot gather takes them one at a time
   through ``goes_left`` (_split_chunk's table). Returns the number of left rows. */
__attribute__((target("avx512f,avx512vl")))
static ptrdiff_t gbt_split_forward_avx512(const uint8_t* X, const uint32_t* rows, ptrdiff_t lo,
                                          ptrdiff_t hi, int bin, int missing_bin,
                                          int default_left, const unsigned char* goes_left,
                                          uint32_t* left_out, uint32_t* right_out,
                                          ptrdiff_t step) {
    ptrdiff_t i, nl = lo, nr = 0;
    for (i = lo; i < hi; i += 16) {
        ptrdiff_t m = hi - i < 16 ? hi - i : 16;
        __mmask16 live = GBT_LOW_LANES(m), left, right;
        __m512i id = _mm512_maskz_loadu_epi32(live, rows + i), l, r;
        int cl, cr;
        if (i + GBT_SPLIT_PREFETCH + 16 <= hi) {
            ptrdiff_t k;
            for (k = 0; k < 16; k++)
                __builtin_prefetch(X + rows[i + GBT_SPLIT_PREFETCH + k], 0, 3);
        }
        if (gbt_unsafe_lanes(id, live)) {
            ptrdiff_t k;
            for (k = i; k < i + m; k++) {
                uint32_t row = rows[k];
                int go = goes_left[X[row]];
                left_out[nl] = row;
                right_out[nr] = row;
                nl += go;
                nr += (1 - go) * step;
            }
            continue;
        }
        left = gbt_left_lanes(X, id, live, bin, missing_bin, default_left);
        right = (__mmask16)(live & ~left);
        cl = __builtin_popcount((unsigned)left);
        cr = (int)m - cl;
        l = _mm512_maskz_compress_epi32(left, id);
        r = _mm512_maskz_compress_epi32(right, id);
        _mm512_mask_storeu_epi32(left_out + nl, GBT_LOW_LANES(cl), l);
        if (step > 0) {
            _mm512_mask_storeu_epi32(right_out + nr, GBT_LOW_LANES(cr), r);
        } else {
            _mm512_mask_storeu_epi32(right_out + nr - (cr - 1), GBT_LOW_LANES(cr),
                                     gbt_reverse_lanes(r, cr));
        }
        nl += cl;
        nr += cr * step;
    }
    return nl - lo;
}

/* _split_chunk_back: rows[lo:hi] from the last; the right rows end at
   right_end[0] and the left rows at left_end[0] in the rows' order (right_end
   may be rows + hi - 1). Returns the number of left rows. */
__attribute__((target("avx512f,avx512vl")))
static ptrdiff_t gbt_split_back_avx512(const uint8_t* X, const uint32_t* rows, ptrdiff_t lo,
                                       ptrdiff_t hi, int bin, int missing_bin,
                                       int default_left, const unsigned char* goes_left,
                                       uint32_t* left_end, uint32_t* right_end) {
    ptrdiff_t top = hi, nl = 0, nr = 0;
    while (top > lo) {
        ptrdiff_t m = top - lo < 16 ? top - lo : 16, first = top - m;
        __mmask16 live = GBT_LOW_LANES(m), left, right;
        __m512i id = _mm512_maskz_loadu_epi32(live, rows + first);
        int cl, cr;
        if (first - GBT_SPLIT_PREFETCH - 16 >= lo) {
            ptrdiff_t k;
            for (k = 0; k < 16; k++)
                __builtin_prefetch(X + rows[first - GBT_SPLIT_PREFETCH - 16 + k], 0, 3);
        }
        if (gbt_unsafe_lanes(id, live)) {
            ptrdiff_t k;
            for (k = top - 1; k >= first; k--) {
                uint32_t row = rows[k];
                int go = goes_left[X[row]];
                left_end[-nl] = row;
                right_end[-nr] = row;
                nl += go;
                nr += 1 - go;
            }
            top = first;
            continue;
        }
        left = gbt_left_lanes(X, id, live, bin, missing_bin, default_left);
        right = (__mmask16)(live & ~left);
        cl = __builtin_popcount((unsigned)left);
        cr = (int)m - cl;
        _mm512_mask_storeu_epi32(left_end - nl - (cl - 1), GBT_LOW_LANES(cl),
                                 _mm512_maskz_compress_epi32(left, id));
        _mm512_mask_storeu_epi32(right_end - nr - (cr - 1), GBT_LOW_LANES(cr),
                                 _mm512_maskz_compress_epi32(right, id));
        nl += cl;
        nr += cr;
        top = first;
    }
    return nl;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
static int gbt_split_rows_level(void) { return 0; }
static ptrdiff_t gbt_split_forward_avx512(const uint8_t* X, const uint32_t* rows, ptrdiff_t lo,
                                          ptrdiff_t hi, int bin, int missing_bin,
                                          int default_left, const unsigned char* goes_left,
                                          uint32_t* left_out, uint32_t* right_out,
                                          ptrdiff_t step) { return 0; }
static ptrdiff_t gbt_split_back_avx512(const uint8_t* X, const uint32_t* rows, ptrdiff_t lo,
                                       ptrdiff_t hi, int bin, int missing_bin,
                                       int default_left, const unsigned char* goes_left,
                                       uint32_t* left_end, uint32_t* right_end) { return 0; }
#endif

#endif  /* GBTREE_SPLIT_ROWS_H */
