# C types shared by every kernel; their NumPy twins live in _typedefs.pyx.
from libc.stdint cimport uint8_t, uint16_t, int32_t, int64_t, uint32_t, uint64_t

ctypedef uint8_t X_BINNED_C      # one bin index per (row, feature); the missing bin is n_bins[f]
ctypedef float G_H_C             # gradients and hessians
ctypedef double SUM_C            # histogram sums and everything accumulated
ctypedef uint32_t IDX_C          # a row index inside the partition array

# A stored entry of a binned sparse matrix: its histogram entry bin_offsets[f] + bin,
# uint16 when the histogram has at most 65,536 entries (binning.SparseBinned).
ctypedef fused entry_t:
    uint16_t
    uint32_t

# A histogram is a flat array of hist_entry: feature f owns entries
# bin_offsets[f] .. bin_offsets[f + 1] - 1, its last entry being the missing bin.
cdef struct hist_entry:
    SUM_C sum_g
    SUM_C sum_h

# What a histogram kernel accumulates: sums of float gradients and hessians, or
# (quantised gradients) one int64 packing an integer gradient sum in its high
# 32 bits and an integer hessian sum in its low 32 bits (_quantizer.quantize_into).
ctypedef fused acc_t:
    hist_entry
    int64_t


# Software prefetches of the cache line at p (for reads); nothing on other compilers.
# GBT_PREFETCH brings the line into every cache level (for data used at once and
# small: a partition's bins). GBT_PREFETCH_L2 stops at L2 (prefetcht2): for the
# rows a histogram build gathers, which would otherwise evict from L1 the
# histogram lines that every row updates (x86-64, one thread, workload 1:
# gathered builds 25-30 % faster, the sequential root build unchanged).
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define GBT_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #define GBT_PREFETCH_L2(p) __builtin_prefetch((const void*)(p), 0, 1)
    #else
    #define GBT_PREFETCH(p) ((void)0)
    #define GBT_PREFETCH_L2(p) ((void)0)
    #endif
    """
    void GBT_PREFETCH(const void* p) noexcept nogil
    void GBT_PREFETCH_L2(const void* p) noexcept nogil


# ``counter[0] += 1``, atomically; returns the value before (a ticket both threads
# of a two-sided schedule draw from, see _histogram.build_histogram).
cdef extern from *:
    """
    #if defined(_MSC_VER) && !defined(__clang__)
    #include <intrin.h>
    static inline long long gbt_take(long long* counter) {
        return _InterlockedExchangeAdd64((volatile long long*)counter, 1);
    }
    #else
    static inline long long gbt_take(long long* counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    #endif
    """
    long long gbt_take(long long* counter) noexcept nogil


# A counter-based generator: the draw of key x depends on x only (C, so that the
# C loops of the kernels call the same one).
cdef extern from *:
    """
    #include <stdint.h>
    static inline uint64_t gbt_splitmix64(uint64_t x) {
        x += 0x9E3779B97F4A7C15ULL;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
        return x ^ (x >> 31);
    }
    """
    uint64_t splitmix64 "gbt_splitmix64"(uint64_t x) noexcept nogil


cdef inline Py_ssize_t first_at_least(const IDX_C* a, Py_ssize_t pos, Py_ssize_t n,
                                      IDX_C r) noexcept nogil:
    """First k >= pos with a[k] >= r (a increasing): galloping, then binary search."""
    cdef Py_ssize_t lo = pos, hi, mid, step = 1
    if lo >= n or a[lo] >= r:
        return lo
    while lo + step < n and a[lo + step] < r:
        lo += step
        step <<= 1
    hi = lo + step
    if hi > n:
        hi = n
    lo += 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < r:
            lo = mid + 1
        else:
            hi = mid
    return lo


# One node of a fitted tree. Trees are stored as flat arrays of these records
# (see tree.py). No padding anywhere (4 x 8 + 5 x 4 + 2 + 1 + 1 = 56 bytes):
# NumPy drops padding when it concatenates structured arrays.
cdef struct node_struct:
    double value          # learning_rate * leaf weight (also filled for inner nodes)
    double threshold      # raw-value threshold: x <= threshold goes left
    double gain           # split gain (0 for leaves)
    double cover          # sum of hessians of the training rows in the node
    int32_t feature       # split feature (-1 for leaves)
    int32_t left          # child indices, relative to the tree's first node
    int32_t right
    int32_t count         # number of training rows in the node
    int32_t depth         # root = 0
    uint16_t bin_threshold  # binned-value threshold: bin <= bin_threshold goes left
    uint8_t default_left  # where missing values go
    uint8_t is_leaf


# The dense kernels step through X by element counts (byte strides // item size): a
# stride that is not a whole number of items would read the wrong values. Callers
# copy such arrays first (binning.kernel_array); the kernels refuse them.
cdef inline int check_item_strides(Py_ssize_t n0, Py_ssize_t s0, Py_ssize_t n1,
                                   Py_ssize_t s1, Py_ssize_t itemsize) except -1:
    if (n0 > 1 and s0 % itemsize != 0) or (n1 > 1 and s1 % itemsize != 0):
        raise ValueError(f"X's strides ({s0}, {s1}) are not whole multiples of its item size "
                         f"{itemsize}: copy it first (binning.kernel_array)")
    return 0


cdef struct sparse_feature:
    # One feature of a binned sparse matrix (binning.SparseBinned): row r's stored
    # entries are entries[indptr[r]:indptr[r + 1]] (or entries16), increasing;
    # the feature's are those in [e_lo, e_hi) (its bin is entry - e_lo); a row
    # without one has default_bin.
    const int64_t* indptr
    const uint32_t* entries
    const uint16_t* entries16
    Py_ssize_t e_lo
    Py_ssize_t e_hi
    X_BINNED_C default_bin
    # with has_column: the feature's stored rows (increasing) and bins instead
    bint has_column
    const uint32_t* col_rows
    const X_BINNED_C* col_bins
    Py_ssize_t col_len
