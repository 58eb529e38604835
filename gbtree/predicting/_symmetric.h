/* The walk of symmetric (oblivious) trees, for _predictor.pyx: every node of a
   level tests the same feature and threshold, so a row's leaf is the bits of
   its d comparisons, the first level's the highest. A block of at most
   GBT_SYM_BLOCK rows is given by columns (``cols[u * GBT_SYM_BLOCK + r]``: row
   r's value of the u-th feature the trees use), so each level compares
   contiguous values against one threshold (the block buffer holds
   GBT_SYM_BLOCK values per feature: the vector walks may read past row n).
   Row r goes right at a level when x > threshold, or x is NaN and the level
   sends missing values right; the leaves' values are added tree by tree, in
   order, as every other walk adds them. */
#ifndef GBTREE_SYMMETRIC_H
#define GBTREE_SYMMETRIC_H

#include <stdint.h>

#define GBT_SYM_BLOCK 64

/* Any CPU: 8 rows go through the levels of a tree together (a fixed-size
   inner loop the compiler vectorises); rows past n are computed and dropped. */
#define GBT_SYM_WALK(NAME, T)                                                       \
static void NAME(const T* cols, Py_ssize_t n, Py_ssize_t n_trees,                   \
                 const int32_t* depth, const int64_t* level_ptr,                     \
                 const int32_t* feat, const T* thr, const uint8_t* nan_right,        \
                 const int64_t* leaf_ptr, const double* leaves,                      \
                 const int32_t* tree_class, double* out, Py_ssize_t n_outputs) {     \
    uint32_t idx[8];                                                                 \
    Py_ssize_t t, r0, k, m;                                                          \
    int l;                                                                           \
    for (t = 0; t < n_trees; t++) {                                                  \
        const int64_t at = level_ptr[t];                                             \
        const double* values = leaves + leaf_ptr[t];                                 \
        double* dst = out + tree_class[t];                                           \
        for (r0 = 0; r0 < n; r0 += 8) {                                              \
            for (k = 0; k < 8; k++) idx[k] = 0;                                      \
            for (l = 0; l < depth[t]; l++) {                                         \
                const T* col = cols + (Py_ssize_t)feat[at + l] * GBT_SYM_BLOCK + r0; \
                const T th = thr[at + l];                                            \
                const uint32_t nr = nan_right[at + l];                               \
                for (k = 0; k < 8; k++) {                                            \
                    const T x = col[k];                                              \
                    idx[k] = (idx[k] << 1) | (uint32_t)(x > th)                      \
                             | ((uint32_t)(x != x) & nr);                            \
                }                                                                    \
            }                                                                        \
            m = n - r0 < 8 ? n - r0 : 8;                                             \
            for (k = 0; k < m; k++) dst[(r0 + k) * n_outputs] += values[idx[k]];     \
        }                                                                            \
    }                                                                                \
}

GBT_SYM_WALK(gbt_sym_walk_f32, float)
GBT_SYM_WALK(gbt_sym_walk_f64, double)

/* One C-ordered row through trees 0..n_trees-1 (``column``: each level's
   feature in the row): for the calls of a few rows, without the block copy.
   Four trees of one depth go down together (four independent chains of
   comparisons); their values are added in tree order. */
#define GBT_SYM_BIT(T, x, th, nr) \
    ((uint32_t)((x) > (th)) | ((uint32_t)((x) != (x)) & (uint32_t)(nr)))
#define GBT_SYM_ROW(NAME, T)                                                        \
static void NAME(const T* row, Py_ssize_t n_trees,                                  \
                 const int32_t* depth, const int64_t* level_ptr,                     \
                 const int32_t* column, const T* thr, const uint8_t* nan_right,        \
                 const int64_t* leaf_ptr, const double* leaves,                      \
                 const int32_t* tree_class, double* out) {                           \
    Py_ssize_t t = 0;                                                                \
    int l;                                                                           \
    for (; t + 4 <= n_trees; t += 4) {                                               \
        const int d = depth[t];                                                      \
        uint32_t i0 = 0, i1 = 0, i2 = 0, i3 = 0;                                     \
        int64_t a0, a1, a2, a3;                                                      \
        if (depth[t + 1] != d || depth[t + 2] != d || depth[t + 3] != d) break;      \
        a0 = level_ptr[t]; a1 = level_ptr[t + 1];                                    \
        a2 = level_ptr[t + 2]; a3 = level_ptr[t + 3];                                \
        for (l = 0; l < d; l++) {                                                    \
            const T x0 = row[column[a0 + l]], x1 = row[column[a1 + l]];              \
            const T x2 = row[column[a2 + l]], x3 = row[column[a3 + l]];              \
            i0 = (i0 << 1) | GBT_SYM_BIT(T, x0, thr[a0 + l], nan_right[a0 + l]);     \
            i1 = (i1 << 1) | GBT_SYM_BIT(T, x1, thr[a1 + l], nan_right[a1 + l]);     \
            i2 = (i2 << 1) | GBT_SYM_BIT(T, x2, thr[a2 + l], nan_right[a2 + l]);     \
            i3 = (i3 << 1) | GBT_SYM_BIT(T, x3, thr[a3 + l], nan_right[a3 + l]);     \
        }                                                                            \
        out[tree_class[t]] += leaves[leaf_ptr[t] + i0];                              \
        out[tree_class[t + 1]] += leaves[leaf_ptr[t + 1] + i1];                      \
        out[tree_class[t + 2]] += leaves[leaf_ptr[t + 2] + i2];                      \
        out[tree_class[t + 3]] += leaves[leaf_ptr[t + 3] + i3];                      \
    }                                                                                \
    for (; t < n_trees; t++) {                                                       \
        const int64_t at = level_ptr[t];                                             \
        uint32_t idx = 0;                                                            \
        for (l = 0; l < depth[t]; l++) {                                             \
            const T x = row[column[at + l]];                                         \
            idx = (idx << 1) | GBT_SYM_BIT(T, x, thr[at + l], nan_right[at + l]);     \
        }                                                                            \
        out[tree_class[t]] += leaves[leaf_ptr[t] + idx];                             \
    }                                                                                \
}

GBT_SYM_ROW(gbt_sym_row_f32, float)
GBT_SYM_ROW(gbt_sym_row_f64, double)

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>

/* AVX2: 16 float32 rows (two vectors of 8) or 8 float64 rows (two of 4) go
   through the levels of a tree together, their leaf indices kept in registers;
   with one output their leaves' values are gathered and added as vectors.
   Lanes past the block's last row compare the buffer's other values and are
   dropped. */
__attribute__((target("avx2")))
static void gbt_sym_walk_avx2_f32(const float* cols, Py_ssize_t n, Py_ssize_t n_trees,
                                  const int32_t* depth, const int64_t* level_ptr,
                                  const int32_t* feat, const float* thr,
                                  const uint8_t* nan_right, const int64_t* leaf_ptr,
                                  const double* leaves, const int32_t* tree_class,
                                  double* out, Py_ssize_t n_outputs) {
    const __m256i one = _mm256_set1_epi32(1);
    int32_t tmp[16];
    Py_ssize_t t, r0, k, m;
    int l;
    for (t = 0; t < n_trees; t++) {
        const int64_t at = level_ptr[t];
        const double* values = leaves + leaf_ptr[t];
        double* dst = out + tree_class[t];
        for (r0 = 0; r0 < n; r0 += 16) {
            __m256i i0 = _mm256_setzero_si256(), i1 = _mm256_setzero_si256();
            for (l = 0; l < depth[t]; l++) {
                const float* col = cols + (Py_ssize_t)feat[at + l] * GBT_SYM_BLOCK + r0;
                const __m256 th = _mm256_set1_ps(thr[at + l]);
                const __m256 x0 = _mm256_loadu_ps(col), x1 = _mm256_loadu_ps(col + 8);
                __m256 g0 = _mm256_cmp_ps(x0, th, _CMP_GT_OQ), g1 = _mm256_cmp_ps(x1, th, _CMP_GT_OQ);
                if (nan_right[at + l]) {
                    g0 = _mm256_or_ps(g0, _mm256_cmp_ps(x0, x0, _CMP_UNORD_Q));
                    g1 = _mm256_or_ps(g1, _mm256_cmp_ps(x1, x1, _CMP_UNORD_Q));
                }
                i0 = _mm256_or_si256(_mm256_slli_epi32(i0, 1),
                                     _mm256_and_si256(_mm256_castps_si256(g0), one));
                i1 = _mm256_or_si256(_mm256_slli_epi32(i1, 1),
                                     _mm256_and_si256(_mm256_castps_si256(g1), one));
            }
            m = n - r0 < 16 ? n - r0 : 16;
            if (n_outputs == 1 && m == 16) {
                __m256i idx[2];
                int h;
                idx[0] = i0;
                idx[1] = i1;
                for (h = 0; h < 2; h++) {
                    double* d = dst + r0 + 8 * h;
                    __m256d lo = _mm256_i32gather_pd(values, _mm256_castsi256_si128(idx[h]), 8);
                    __m256d hi = _mm256_i32gather_pd(values, _mm256_extracti128_si256(idx[h], 1), 8);
                    _mm256_storeu_pd(d, _mm256_add_pd(_mm256_loadu_pd(d), lo));
                    _mm256_storeu_pd(d + 4, _mm256_add_pd(_mm256_loadu_pd(d + 4), hi));
                }
            } else {
                _mm256_storeu_si256((__m256i*)tmp, i0);
                _mm256_storeu_si256((__m256i*)(tmp + 8), i1);
                for (k = 0; k < m; k++) dst[(r0 + k) * n_outputs] += values[tmp[k]];
            }
        }
    }
}

__attribute__((target("avx2")))
static void gbt_sym_walk_avx2_f64(const double* cols, Py_ssize_t n, Py_ssize_t n_trees,
                                  const int32_t* depth, const int64_t* level_ptr,
                                  const int32_t* feat, const double* thr,
                                  const uint8_t* nan_right, const int64_t* leaf_ptr,
                                  const double* leaves, const int32_t* tree_class,
                                  double* out, Py_ssize_t n_outputs) {
    const __m256i one = _mm256_set1_epi64x(1);
    int64_t tmp[8];
    Py_ssize_t t, r0, k, m;
    int l;
    for (t = 0; t < n_trees; t++) {
        const int64_t at = level_ptr[t];
        const double* values = leaves + leaf_ptr[t];
        double* dst = out + tree_class[t];
        for (r0 = 0; r0 < n; r0 += 8) {
            __m256i i0 = _mm256_setzero_si256(), i1 = _mm256_setzero_si256();
            for (l = 0; l < depth[t]; l++) {
                const double* col = cols + (Py_ssize_t)feat[at + l] * GBT_SYM_BLOCK + r0;
                const __m256d th = _mm256_set1_pd(thr[at + l]);
                const __m256d x0 = _mm256_loadu_pd(col), x1 = _mm256_loadu_pd(col + 4);
                __m256d g0 = _mm256_cmp_pd(x0, th, _CMP_GT_OQ), g1 = _mm256_cmp_pd(x1, th, _CMP_GT_OQ);
                if (nan_right[at + l]) {
                    g0 = _mm256_or_pd(g0, _mm256_cmp_pd(x0, x0, _CMP_UNORD_Q));
                    g1 = _mm256_or_pd(g1, _mm256_cmp_pd(x1, x1, _CMP_UNORD_Q));
                }
                i0 = _mm256_or_si256(_mm256_slli_epi64(i0, 1),
                                     _mm256_and_si256(_mm256_castpd_si256(g0), one));
                i1 = _mm256_or_si256(_mm256_slli_epi64(i1, 1),
                                     _mm256_and_si256(_mm256_castpd_si256(g1), one));
            }
            m = n - r0 < 8 ? n - r0 : 8;
            if (n_outputs == 1 && m == 8) {
                double* d = dst + r0;
                _mm256_storeu_pd(d, _mm256_add_pd(_mm256_loadu_pd(d),
                                                  _mm256_i64gather_pd(values, i0, 8)));
                _mm256_storeu_pd(d + 4, _mm256_add_pd(_mm256_loadu_pd(d + 4),
                                                      _mm256_i64gather_pd(values, i1, 8)));
            } else {
                _mm256_storeu_si256((__m256i*)tmp, i0);
                _mm256_storeu_si256((__m256i*)(tmp + 4), i1);
                for (k = 0; k < m; k++) dst[(r0 + k) * n_outputs] += values[tmp[k]];
            }
        }
    }
}
#else
#define gbt_sym_walk_avx2_f32 gbt_sym_walk_f32
#define gbt_sym_walk_avx2_f64 gbt_sym_walk_f64
#endif

#endif  /* GBTREE_SYMMETRIC_H */
