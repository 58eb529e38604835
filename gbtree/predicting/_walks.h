/* The tree walks of _predictor.pyx in C: the portable walks (any CPU), the
   one-row walk over several trees, the partition walk for blocks of many rows
   (its nodes' rows handed on by a portable loop or, with AVX-512, 16 at a time),
   and the AVX2 / AVX-512 vector walks (x86-64 with GCC or Clang, chosen at run
   time). Every walk gives every row the same
   leaf, NaN included. */
#ifndef GBTREE_WALKS_H
#define GBTREE_WALKS_H

#include <stdint.h>
#include <string.h>
#include <math.h>

/* Portable walks (any CPU): GBT_LANES rows go down one tree side by side, so
   their loads overlap; a lane whose row reached its leaf takes the next row
   of the block. Rows lo..hi-1 of a C-ordered matrix; ``leaf[i - lo]`` gets
   the leaf of row i, the same as every other walk's. STEP sets ``left``
   (0: cur[k] is a leaf) and ``go_right`` for lane k. */
#ifndef GBT_LANES
#define GBT_LANES 8
#endif
#define GBT_SCALAR_WALK(NAME, T, STEP)                                              \
static void NAME(const void* tree, const T* base, Py_ssize_t lo, Py_ssize_t hi,     \
                 Py_ssize_t row_stride, int32_t* leaf) {                             \
    const T* row[GBT_LANES];                                                         \
    int32_t cur[GBT_LANES];                                                          \
    Py_ssize_t who[GBT_LANES], next = lo;                                            \
    int k, live = 0;                                                                 \
    for (k = 0; k < GBT_LANES; k++) {   /* a lane without a row idles on row lo */   \
        who[k] = next < hi ? next - lo : -1;                                         \
        row[k] = base + (next < hi ? next : lo) * row_stride;                        \
        cur[k] = 0;                                                                  \
        if (next < hi) { next++; live++; }                                           \
    }                                                                                \
    while (live) {                                                                   \
        for (k = 0; k < GBT_LANES; k++) {                                            \
            int32_t left;                                                            \
            int go_right;                                                            \
            STEP                                                                     \
            if (left) {                                                              \
                cur[k] = left + go_right;                                            \
            } else if (who[k] >= 0) {                                                \
                leaf[who[k]] = cur[k];                                               \
                cur[k] = 0;                                                          \
                if (next < hi) {                                                     \
                    who[k] = next - lo;                                              \
                    row[k] = base + next * row_stride;                               \
                    next++;                                                          \
                } else {                                                             \
                    who[k] = -1;                                                     \
                    live--;                                                          \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }                                                                                \
}

/* float32 rows over the 8-byte records (a leaf's record is 0) */
GBT_SCALAR_WALK(gbt_walk_portable_f32, float, {
    uint64_t rec = ((const uint64_t*)tree)[cur[k]];
    uint32_t meta = (uint32_t)(rec >> 32);
    uint32_t bits = (uint32_t)rec;
    float x = row[k][(meta >> 16) & 0x7FFF];
    float thr;
    memcpy(&thr, &bits, 4);
    left = (int32_t)(meta & 0xFFFF);
    go_right = !(x <= thr) & ((x == x) | !(meta >> 31));
})

/* float64 rows over the 16-byte records (a leaf's left is -1, its feature 0);
   the root is never a child, so left + 1 is 0 only at a leaf */
GBT_SCALAR_WALK(gbt_walk_portable_f64, double, {
    const char* rec = (const char*)tree + 16 * (Py_ssize_t)cur[k];
    double thr;
    double x;
    int32_t feat;
    memcpy(&thr, rec, 8);
    memcpy(&feat, rec + 8, 4);
    memcpy(&left, rec + 12, 4);
    left += 1;
    x = row[k][feat & 0x7FFFFFFF];
    go_right = !(x <= thr) & ((x == x) | (feat >= 0));
    go_right -= 1;
})


/* One row through trees t0..t1-1 of the 16-byte records, GBT_LANES trees side
   by side (a single row has no other work to overlap); ``out[tree_class[t]]``
   gets tree t's leaf value, added in tree order. */
#define GBT_ROW_WALK(NAME, T)                                                      \
static void NAME(const void* nodes, const int64_t* tree_ptr,                        \
                 const int32_t* tree_class, Py_ssize_t t0, Py_ssize_t t1,           \
                 const T* row, double* out) {                                        \
    Py_ssize_t g, m;                                                                 \
    int k, inner_any;                                                                \
    for (g = t0; g < t1; g += GBT_LANES) {                                           \
        const char* tree[GBT_LANES];                                                 \
        int32_t cur[GBT_LANES];                                                      \
        double value;                                                                \
        m = t1 - g < GBT_LANES ? t1 - g : GBT_LANES;                                 \
        for (k = 0; k < GBT_LANES; k++) {  /* spare lanes walk tree g again */       \
            tree[k] = (const char*)nodes + 16 * tree_ptr[g + (k < m ? k : 0)];       \
            cur[k] = 0;                                                              \
        }                                                                            \
        do {                                                                         \
            inner_any = 0;                                                           \
            for (k = 0; k < GBT_LANES; k++) {                                        \
                const char* rec = tree[k] + 16 * (Py_ssize_t)cur[k];                 \
                double thr;                                                          \
                double x;                                                            \
                int32_t feat;                                                        \
                int32_t left;                                                        \
                int go_right;                                                        \
                memcpy(&thr, rec, 8);                                                \
                memcpy(&feat, rec + 8, 4);                                           \
                memcpy(&left, rec + 12, 4);                                          \
                x = row[feat & 0x7FFFFFFF];                                          \
                go_right = !(x <= thr) & ((x == x) | (feat >= 0));                   \
                cur[k] = left >= 0 ? left + go_right : cur[k];                       \
                inner_any |= left >= 0;                                              \
            }                                                                        \
        } while (inner_any);                                                         \
        for (k = 0; k < m; k++) {                                                    \
            memcpy(&value, tree[k] + 16 * (Py_ssize_t)cur[k], 8);                    \
            out[tree_class[g + k]] += value;                                         \
        }                                                                            \
    }                                                                                \
}
GBT_ROW_WALK(gbt_row_walk_f32, float)
GBT_ROW_WALK(gbt_row_walk_f64, double)

/* The largest float32 <= v: for a float32 x, x <= v exactly when x <= it (the
   float32 vector walks compare with it). */
static inline float gbt_floor_f32(double v) {
    float f = (float)v;
    return (double)f > v ? nextafterf(f, -INFINITY) : f;
}

/* The partition walk, for blocks of many rows: rather than each row going down
   a tree on its own, each node hands the rows that reach it on to its children,
   so a node reads one column of the block for all its rows in a tight loop
   without a chain of dependent loads from node to node. The block is held by
   columns: ``col[s * S + i]`` is row i's value of the feature in column ``s``
   (S >= R: columns padded apart so that they do not share cache sets),
   ``slot[f]`` the column of feature f (only the features the trees split on
   have one). Nodes are visited in the compact copy's breadth-first order, so a
   node's rows are in ids buffer ``side[node]`` at ``range[2 node], range[2 node
   + 1]`` and its children's go to the other buffer at the same positions (the
   left child's first; ``SPLIT`` hands them on, the order within a child does
   not matter). Trees t0..t1-1 of the 16-byte records, in order:
   ``out[i * out_stride + tree_class[t]]`` gets tree t's leaf value of row i,
   the same leaves and additions as the other walks. Scratch: ``ids`` 2 R
   entries, ``range`` two and ``side`` one per node of the largest tree. */
#define GBT_PARTITION_WALK(NAME, T, ATTR, SPLIT)                                     \
ATTR                                                                                 \
static void NAME(const void* nodes, const int64_t* tree_ptr,                         \
                 const int32_t* tree_class, Py_ssize_t t0, Py_ssize_t t1,            \
                 const int32_t* slot, const T* col, Py_ssize_t S, Py_ssize_t R,      \
                 Py_ssize_t n, double* out, Py_ssize_t out_stride, int32_t* ids,     \
                 int32_t* range, uint8_t* side) {                                    \
    Py_ssize_t t, k, n_nodes;                                                        \
    int32_t i, j;                                                                    \
    for (t = t0; t < t1; t++) {                                                      \
        const char* tree = (const char*)nodes + 16 * tree_ptr[t];                    \
        double* o = out + tree_class[t];                                             \
        n_nodes = tree_ptr[t + 1] - tree_ptr[t];                                     \
        for (i = 0; i < (int32_t)n; i++) ids[i] = i;                                 \
        range[0] = 0;                                                                \
        range[1] = (int32_t)n;                                                       \
        side[0] = 0;                                                                 \
        for (k = 0; k < n_nodes; k++) {                                              \
            const char* rec = tree + 16 * k;                                         \
            int32_t b = range[2 * k], e = range[2 * k + 1], feat, left, mid;         \
            const int32_t* src = ids + side[k] * R;                                  \
            double v;                                                                \
            memcpy(&v, rec, 8);                                                      \
            memcpy(&feat, rec + 8, 4);                                               \
            memcpy(&left, rec + 12, 4);                                              \
            if (left < 0) {                                                          \
                for (j = b; j < e; j++) o[src[j] * out_stride] += v;                 \
                continue;                                                            \
            }                                                                        \
            mid = b + SPLIT(src + b, e - b, col + slot[feat & 0x7FFFFFFF] * S, v,    \
                            feat < 0, ids + (1 - side[k]) * R + b);                  \
            range[2 * left] = b;                                                     \
            range[2 * left + 1] = range[2 * left + 2] = mid;                         \
            range[2 * left + 3] = e;                                                 \
            side[left] = side[left + 1] = (uint8_t)(1 - side[k]);                    \
        }                                                                            \
    }                                                                                \
}

/* A node's n rows ``src`` into ``dst``: those that go left (value <= v; a
   missing value goes left when ``missing_left``, as NaN > v is false) from the
   start, the others from the end; returns how many go left. Each row is written
   at both ends, at the next left place and at the next right one (after j rows
   of which nl went left: n - 1 - (j - nl)), and only the left count moves.
   ``THR(v)`` is the threshold in the values' type that compares alike. */
#define GBT_SPLIT_ROWS(NAME, T, THR)                                                 \
static inline int32_t NAME(const int32_t* src, int32_t n, const T* c, double v,      \
                           int missing_left, int32_t* dst) {                         \
    const T t = THR(v);                                                              \
    int32_t* q = dst + n - 1;   /* minus j: row j's right place, less nl */          \
    int32_t nl = 0;                                                                  \
    int32_t j;                                                                       \
    if (missing_left) {                                                              \
        for (j = 0; j < n; j++, q--) {                                               \
            int32_t id = src[j];                                                     \
            dst[nl] = id;                                                            \
            q[nl] = id;                                                              \
            nl += !(c[id] > t);                                                      \
        }                                                                            \
    } else {                                                                         \
        for (j = 0; j < n; j++, q--) {                                               \
            int32_t id = src[j];                                                     \
            dst[nl] = id;                                                            \
            q[nl] = id;                                                              \
            nl += c[id] <= t;                                                        \
        }                                                                            \
    }                                                                                \
    return nl;                                                                       \
}
#define GBT_SAME(v) (v)
GBT_SPLIT_ROWS(gbt_split_rows_f32, float, gbt_floor_f32)
GBT_SPLIT_ROWS(gbt_split_rows_f64, double, GBT_SAME)
GBT_PARTITION_WALK(gbt_partition_walk_f32, float, , gbt_split_rows_f32)
GBT_PARTITION_WALK(gbt_partition_walk_f64, double, , gbt_split_rows_f64)

/* Rows lo..lo+n-1 of a matrix of any strides into the block's columns. */
#define GBT_PARTITION_LOAD(NAME, T)                                                  \
static void NAME(const T* X, Py_ssize_t lo, Py_ssize_t n, Py_ssize_t row_stride,     \
                 Py_ssize_t col_stride, const int32_t* used, Py_ssize_t n_used,      \
                 T* col, Py_ssize_t S) {                                             \
    Py_ssize_t i, s;                                                                 \
    for (i = 0; i < n; i++) {                                                        \
        const T* row = X + (lo + i) * row_stride;                                    \
        for (s = 0; s < n_used; s++) col[s * S + i] = row[used[s] * col_stride];     \
    }                                                                                \
}
GBT_PARTITION_LOAD(gbt_partition_walk_f32_load, float)
GBT_PARTITION_LOAD(gbt_partition_walk_f64_load, double)

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>

/* The best vector walk the CPU and the OS support: 2 = AVX-512 (F and VL),
   1 = AVX2, 0 = none. */
static int gbt_simd_level(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
        return 2;
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}

/* Vector walks: eight rows go down one tree per vector, GBT_WALK_VECTORS vectors side
   by side (their gathers overlap); a lane stops at its leaf, the vector when all its
   lanes have. */
#define GBT_WALK_VECTORS 4

/* GCC's own _mm512_cvtepi64_epi32 starts from an undefined vector: not a bug */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* The skeleton of a walk: rows lo..hi-1 of a C-ordered matrix, 32 at a time;
   ``leaf[i - lo]`` gets the leaf (index within the tree) of row i. Values are
   addressed with 32-bit offsets from ``base + lo * row_stride``: the caller
   keeps ``(hi - lo) * row_stride`` below 2**31. STEP advances cur[g] for the
   lanes in act[g] and leaves in ``inner`` those not yet at a leaf. */
#define GBT_WALK(NAME, T, STEP)                                                   \
__attribute__((target("avx512f,avx512vl")))                                      \
static void NAME(const void* tree, const T* base, Py_ssize_t lo, Py_ssize_t hi,  \
                 Py_ssize_t row_stride, int32_t* leaf) {                          \
    const T* block = base + lo * row_stride;                                     \
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);     \
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);              \
    Py_ssize_t n = hi - lo, g0, first, m, k;                                      \
    int g;                                                                        \
    for (g0 = 0; g0 < n; g0 += 8 * GBT_WALK_VECTORS) {                           \
        __m256i cur[GBT_WALK_VECTORS], rowoff[GBT_WALK_VECTORS];                 \
        __mmask8 act[GBT_WALK_VECTORS], inner;                                    \
        int32_t tmp[8];                                                           \
        int any = 0;                                                              \
        for (g = 0; g < GBT_WALK_VECTORS; g++) {                                  \
            first = g0 + 8 * g;                                                   \
            m = n - first;                                                        \
            cur[g] = zero;                                                        \
            act[g] = m <= 0 ? 0 : (m >= 8 ? 0xFF : (__mmask8)((1u << m) - 1));    \
            rowoff[g] = _mm256_mullo_epi32(                                       \
                _mm256_add_epi32(lane, _mm256_set1_epi32((int)first)),            \
                _mm256_set1_epi32((int)row_stride));                              \
            any |= act[g];                                                        \
        }                                                                         \
        while (any) {                                                             \
            any = 0;                                                              \
            for (g = 0; g < GBT_WALK_VECTORS; g++) {                              \
                if (!act[g]) continue;                                            \
                STEP                                                              \
                act[g] = inner;                                                   \
                any |= inner;                                                     \
            }                                                                     \
        }                                                                         \
        for (g = 0; g < GBT_WALK_VECTORS; g++) {                                  \
            first = g0 + 8 * g;                                                   \
            m = n - first;                                                        \
            if (m <= 0) break;                                                    \
            _mm256_storeu_si256((__m256i*)tmp, cur[g]);                           \
            for (k = 0; k < (m < 8 ? m : 8); k++) leaf[first + k] = tmp[k];      \
        }                                                                         \
    }                                                                             \
}

/* float32 rows on 8-byte records (the packed section of compact_nodes):
   low half the threshold rounded down to float32 (for a float32 x,
   x <= t32 exactly when x <= the double threshold), high half
   left | feature << 16 | missing-goes-left << 31; left == 0 marks a leaf. */
GBT_WALK(gbt_walk_avx512_f32, float, {
    __m512i rec = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), act[g],
                                              cur[g], tree, 8);
    __m256 thr = _mm256_castsi256_ps(_mm512_cvtepi64_epi32(rec));
    __m256i meta = _mm512_cvtepi64_epi32(_mm512_srli_epi64(rec, 32));
    __m256i left = _mm256_and_si256(meta, _mm256_set1_epi32(0xFFFF));
    __m256i feat = _mm256_and_si256(_mm256_srli_epi32(meta, 16),
                                    _mm256_set1_epi32(0x7FFF));
    __m256 x;
    __mmask8 stay_left;
    inner = _mm256_mask_cmpneq_epi32_mask(act[g], left, zero);
    x = _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), inner,
                                  _mm256_add_epi32(rowoff[g], feat), block, 4);
    stay_left = _mm256_cmp_ps_mask(x, thr, _CMP_LE_OQ)
                | (_mm256_cmp_ps_mask(x, x, _CMP_UNORD_Q)
                   & _mm256_cmplt_epi32_mask(meta, zero));
    cur[g] = _mm256_mask_mov_epi32(cur[g], inner,
                 _mm256_mask_add_epi32(left, (__mmask8)~stay_left, left, one));
})

/* float64 rows on the 16-byte records {double threshold or leaf value;
   int32 feature | missing-goes-left << 31; int32 left (-1: a leaf)}. */
GBT_WALK(gbt_walk_avx512_f64, double, {
    __m256i idx2 = _mm256_add_epi32(cur[g], cur[g]);
    __m512i rec = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), act[g],
                                              _mm256_add_epi32(idx2, one), tree, 8);
    __m512d thr = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), act[g], idx2, tree, 8);
    __m256i feat = _mm512_cvtepi64_epi32(rec);
    __m256i left = _mm512_cvtepi64_epi32(_mm512_srli_epi64(rec, 32));
    __m512d x;
    __mmask8 stay_left;
    inner = _mm256_mask_cmpge_epi32_mask(act[g], left, zero);
    x = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), inner,
            _mm256_add_epi32(rowoff[g],
                             _mm256_and_si256(feat, _mm256_set1_epi32(0x7FFFFFFF))),
            block, 8);
    stay_left = _mm512_cmp_pd_mask(x, thr, _CMP_LE_OQ)
                | (_mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q)
                   & _mm256_cmplt_epi32_mask(feat, zero));
    cur[g] = _mm256_mask_mov_epi32(cur[g], inner,
                 _mm256_mask_add_epi32(left, (__mmask8)~stay_left, left, one));
})
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* gbt_walk_avx512_f32 for CPUs with AVX2 only: masks are vectors, and a
   record's two halves are gathered apart (8 lanes of 32 bits each). */
__attribute__((target("avx2")))
static void gbt_walk_avx2_f32(const void* packed, const float* base, Py_ssize_t lo,
                              Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) {
    const float* block = base + lo * row_stride;
    const float* words = (const float*)packed;   /* record k: words 2k, 2k + 1 */
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    Py_ssize_t n = hi - lo, g0, first, m, k;
    int g;
    for (g0 = 0; g0 < n; g0 += 8 * GBT_WALK_VECTORS) {
        __m256i cur[GBT_WALK_VECTORS], rowoff[GBT_WALK_VECTORS], act[GBT_WALK_VECTORS];
        int32_t tmp[8];
        int any = 0;
        for (g = 0; g < GBT_WALK_VECTORS; g++) {
            first = g0 + 8 * g;
            m = n - first;
            m = m < 0 ? 0 : (m > 8 ? 8 : m);
            cur[g] = zero;
            act[g] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)m), lane);
            rowoff[g] = _mm256_mullo_epi32(
                _mm256_add_epi32(lane, _mm256_set1_epi32((int)first)),
                _mm256_set1_epi32((int)row_stride));
            any |= _mm256_movemask_epi8(act[g]);
        }
        while (any) {
            any = 0;
            for (g = 0; g < GBT_WALK_VECTORS; g++) {
                __m256i idx2, meta, left, feat, inner, stay_left;
                __m256 thr, x;
                if (!_mm256_movemask_epi8(act[g])) continue;
                idx2 = _mm256_add_epi32(cur[g], cur[g]);
                thr = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), words, idx2,
                                               _mm256_castsi256_ps(act[g]), 4);
                meta = _mm256_mask_i32gather_epi32(zero, (const int*)words + 1, idx2,
                                                   act[g], 4);
                left = _mm256_and_si256(meta, _mm256_set1_epi32(0xFFFF));
                feat = _mm256_and_si256(_mm256_srli_epi32(meta, 16),
                                        _mm256_set1_epi32(0x7FFF));
                inner = _mm256_andnot_si256(_mm256_cmpeq_epi32(left, zero), act[g]);
                x = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), block,
                                             _mm256_add_epi32(rowoff[g], feat),
                                             _mm256_castsi256_ps(inner), 4);
                stay_left = _mm256_or_si256(
                    _mm256_castps_si256(_mm256_cmp_ps(x, thr, _CMP_LE_OQ)),
                    _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)),
                                     _mm256_srai_epi32(meta, 31)));
                cur[g] = _mm256_blendv_epi8(cur[g],
                    _mm256_add_epi32(left, _mm256_andnot_si256(stay_left, one)), inner);
                act[g] = inner;
                any |= _mm256_movemask_epi8(inner);
            }
        }
        for (g = 0; g < GBT_WALK_VECTORS; g++) {
            first = g0 + 8 * g;
            m = n - first;
            if (m <= 0) break;
            _mm256_storeu_si256((__m256i*)tmp, cur[g]);
            for (k = 0; k < (m < 8 ? m : 8); k++) leaf[first + k] = tmp[k];
        }
    }
}
/* GCC's intrinsics start some vectors undefined (maybe-uninitialized): not a bug */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* GBT_SPLIT_ROWS with AVX-512, 16 rows a step: their values gathered from the
   column and compared with v (float32 values with v rounded down to float32,
   which orders every float32 as v does), the rows that go left compressed to
   the front of ``dst``, the others to its back, with masked stores; the same
   split. A missing value goes left when ``missing_left`` (NaN > v is false). */
#define GBT_SPLIT_ROWS_AVX512(NAME, T, SETUP, GATHER_CMP)                            \
__attribute__((target("avx512f,avx512vl")))                                          \
static inline int32_t NAME(const int32_t* src, int32_t n, const T* c, double v,      \
                           int missing_left, int32_t* dst) {                         \
    int32_t nl = 0, nr = 0, j;                                                       \
    SETUP                                                                            \
    for (j = 0; j < n; j += 16) {                                                    \
        int32_t m = n - j;                                                           \
        __mmask16 live = m >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1);   \
        __m512i id = _mm512_maskz_loadu_epi32(live, src + j);                        \
        __mmask16 right, go_left;                                                    \
        int cl, cr;                                                                  \
        GATHER_CMP                                                                   \
        right &= live;                                                               \
        go_left = live & (__mmask16)~right;                                          \
        cl = __builtin_popcount((unsigned)go_left);                                  \
        cr = __builtin_popcount((unsigned)right);                                    \
        _mm512_mask_storeu_epi32(dst + nl, (__mmask16)((1u << cl) - 1),              \
                                 _mm512_maskz_compress_epi32(go_left, id));          \
        nr += cr;                                                                    \
        _mm512_mask_storeu_epi32(dst + n - nr, (__mmask16)((1u << cr) - 1),          \
                                 _mm512_maskz_compress_epi32(right, id));            \
        nl += cl;                                                                    \
    }                                                                                \
    return nl;                                                                       \
}
GBT_SPLIT_ROWS_AVX512(gbt_split_rows_avx512_f32, float,
    const __m512 vv = _mm512_set1_ps(gbt_floor_f32(v));, {
    __m512 x = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, id, c, 4);
    right = missing_left ? _mm512_cmp_ps_mask(x, vv, _CMP_GT_OQ)
                         : _mm512_cmp_ps_mask(x, vv, _CMP_NLE_UQ);
})
GBT_SPLIT_ROWS_AVX512(gbt_split_rows_avx512_f64, double,
    const __m512d vv = _mm512_set1_pd(v);, {
    __m512d x0 = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), (__mmask8)live,
                                          _mm512_castsi512_si256(id), c, 8);
    __m512d x1 = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), (__mmask8)(live >> 8),
                                          _mm512_extracti64x4_epi64(id, 1), c, 8);
    right = missing_left
        ? (__mmask16)(_mm512_cmp_pd_mask(x0, vv, _CMP_GT_OQ)
                      | ((unsigned)_mm512_cmp_pd_mask(x1, vv, _CMP_GT_OQ) << 8))
        : (__mmask16)(_mm512_cmp_pd_mask(x0, vv, _CMP_NLE_UQ)
                      | ((unsigned)_mm512_cmp_pd_mask(x1, vv, _CMP_NLE_UQ) << 8));
})
GBT_PARTITION_WALK(gbt_partition_walk_avx512_f32, float,
                   __attribute__((target("avx512f,avx512vl"))), gbt_split_rows_avx512_f32)
GBT_PARTITION_WALK(gbt_partition_walk_avx512_f64, double,
                   __attribute__((target("avx512f,avx512vl"))), gbt_split_rows_avx512_f64)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
static int gbt_simd_level(void) { return 0; }
static void gbt_walk_avx512_f32(const void* tree, const float* base, Py_ssize_t lo,
                                Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) {}
static void gbt_walk_avx512_f64(const void* tree, const double* base, Py_ssize_t lo,
                                Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) {}
static void gbt_walk_avx2_f32(const void* tree, const float* base, Py_ssize_t lo,
                              Py_ssize_t hi, Py_ssize_t row_stride, int32_t* leaf) {}
#define GBT_NO_PARTITION_WALK(NAME, T)                                               \
static void NAME(const void* nodes, const int64_t* tree_ptr,                         \
                 const int32_t* tree_class, Py_ssize_t t0, Py_ssize_t t1,            \
                 const int32_t* slot, const T* col, Py_ssize_t S, Py_ssize_t R,      \
                 Py_ssize_t n, double* out, Py_ssize_t out_stride, int32_t* ids,     \
                 int32_t* range, uint8_t* side) {}
GBT_NO_PARTITION_WALK(gbt_partition_walk_avx512_f32, float)
GBT_NO_PARTITION_WALK(gbt_partition_walk_avx512_f64, double)
#endif

#endif  /* GBTREE_WALKS_H */
