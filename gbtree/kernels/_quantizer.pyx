"""Quantised gradients (LightGBM's quantised training): each tree's gradients and
hessians are rounded at random to ``levels`` integer steps (``quantize_into``)
and packed into one int32 a row, so the histograms hold exact packed int64 sums,
unpacked to floats inside the split scan."""
import numpy as np

from cython.parallel cimport prange
from libc.math cimport NAN
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from ._typedefs cimport G_H_C, hist_entry, splitmix64

cdef extern from *:
    """
    #include <math.h>
    #include <string.h>
    #include "_clones.h"
    /* The largest |gradient| and |hessian| bits of n (gradient, hessian) float32
       pairs: the bits of a float without its sign are ordered as its magnitude,
       inf above every finite value and NaN above inf (an integer maximum: the
       compiler vectorises it). */
    GBT_CLONES
    static void gbt_extent_bits(const float* __restrict pairs, Py_ssize_t n,
                                uint32_t* __restrict out) {
        uint32_t mg = 0, mh = 0;
        for (Py_ssize_t i = 0; i < n; ++i) {
            uint32_t g, h;
            memcpy(&g, pairs + 2 * i, 4);
            memcpy(&h, pairs + 2 * i + 1, 4);
            g &= 0x7fffffffu;
            h &= 0x7fffffffu;
            mg = g > mg ? g : mg;
            mh = h > mh ? h : mh;
        }
        out[0] = mg;
        out[1] = mh;
    }
    /* quantize_rows' rounding of rows first .. first + n - 1: floor(x + u) with u
       uniform in [0, 1) from the row's draw; |x| <= levels, so int32 holds it. */
    GBT_CLONES
    static void gbt_quantize_rows(const float* __restrict pairs, Py_ssize_t n, uint64_t seed,
                                  int64_t first, double inv_g, double inv_h,
                                  int32_t* __restrict out) {
        for (Py_ssize_t i = 0; i < n; ++i) {
            uint64_t m = gbt_splitmix64(seed ^ (uint64_t)(first + i));
            double ug = (double)(uint32_t)(m >> 32) * (1.0 / 4294967296.0);
            double uh = (double)(uint32_t)m * (1.0 / 4294967296.0);
            int32_t g = (int32_t)floor((double)pairs[2 * i] * inv_g + ug);
            int32_t h = (int32_t)floor((double)pairs[2 * i + 1] * inv_h + uh);
            out[i] = g * 65536 + h;
        }
    }
    """
    void gbt_extent_bits(const G_H_C* pairs, Py_ssize_t n, uint32_t* out) noexcept nogil
    void gbt_quantize_rows(const G_H_C* pairs, Py_ssize_t n, uint64_t seed, int64_t first,
                           double inv_g, double inv_h, int32_t* out) noexcept nogil


cdef void quantize_into(const G_H_C* pairs, Py_ssize_t n, int levels,
                        uint64_t seed, int32_t* out, double* scales,
                        int n_threads) noexcept nogil:
    """LightGBM's quantised training: every row's gradient (``pairs[2 r]``) becomes
    an integer in [-levels / 2, levels / 2] (step ``scales[0]`` = max |g| / (levels / 2))
    and its hessian (``pairs[2 r + 1]``) one in [0, levels] (step ``scales[1]`` =
    max |h| / levels), each rounded up or down at random with the probabilities that keep it unbiased; the draw
    of row r depends only on (seed, r). ``out[r]`` packs them as
    ``g_int * 2**16 + h_int`` (both fit 16 bits: levels <= 32766); the histogram
    kernels widen that to ``g_int * 2**32 + h_int``, so that adding packed values
    adds both parts (``unpack_histogram`` recovers them while each sum stays
    within int32)."""
    cdef double extent[2]
    if not gradient_extent(pairs, n, extent, n_threads):
        # no finite steps: the sums are NaN, which the grower reports; every row 0
        scales[:2] = [NAN, NAN]
        memset(out, 0, n * sizeof(int32_t))
        return
    quant_steps(extent, levels, scales)
    quantize_rows(pairs, n, levels, seed, 0, scales, out, n_threads)


cdef bint gradient_extent(const G_H_C* pairs, Py_ssize_t n, double* extent,
                          int n_threads) noexcept nogil:
    """The largest |gradient| and |hessian| of the n (gradient, hessian) ``pairs`` into
    ``extent``; False when one of them is NaN or inf."""
    cdef uint32_t chunk_bits[64][2]
    cdef uint32_t most[2]
    cdef float g, h
    cdef Py_ssize_t c, lo, hi, per = (n + 63) // 64
    if n < 65536:
        n_threads = 1
    for c in prange(64, schedule='static', num_threads=n_threads, nogil=True):
        lo = c * per
        hi = lo + per
        if hi > n:
            hi = n
        chunk_bits[c][0] = 0
        chunk_bits[c][1] = 0
        if lo < hi:
            gbt_extent_bits(pairs + 2 * lo, hi - lo, chunk_bits[c])
    most[:2] = [0, 0]
    for c in range(64):
        most[0] = max(most[0], chunk_bits[c][0])
        most[1] = max(most[1], chunk_bits[c][1])
    # above the bits of FLT_MAX: an inf or a NaN
    if most[0] > 0x7F7FFFFF or most[1] > 0x7F7FFFFF:
        return False
    memcpy(&g, &most[0], sizeof(float))
    memcpy(&h, &most[1], sizeof(float))
    extent[:2] = [g, h]
    return True


cdef void quant_steps(const double* extent, int levels, double* scales) noexcept nogil:
    """The gradient and hessian steps of ``levels`` levels for the largest |gradient|
    and |hessian| ``extent``."""
    scales[0] = extent[0] / (levels // 2) if extent[0] > 0.0 else 1.0
    scales[1] = extent[1] / levels if extent[1] > 0.0 else 1.0


cdef void quantize_rows(const G_H_C* pairs, Py_ssize_t n, int levels, uint64_t seed,
                        int64_t first, const double* scales, int32_t* out,
                        int n_threads) noexcept nogil:
    """``quantize_into``'s rounding of n rows with the steps ``scales``, row r drawing
    as row ``first + r`` of the data."""
    cdef double inv_g = 1.0 / scales[0], inv_h = 1.0 / scales[1]
    cdef Py_ssize_t lo, hi
    cdef int t
    if n < 65536:
        n_threads = 1
    for t in prange(n_threads, schedule='static', num_threads=n_threads, nogil=True):
        lo = n * t // n_threads
        hi = n * (t + 1) // n_threads
        gbt_quantize_rows(pairs + 2 * lo, hi - lo, seed, first + lo, inv_g, inv_h, out + lo)


cdef inline uint64_t _rounding_seed(uint64_t tree_seed) noexcept nogil:
    # the seed of a tree's rounding draws
    return splitmix64(tree_seed ^ <uint64_t>0x71A27)


cdef class GradientQuantizer:
    """What the histograms of a tree read: the float (gradient, hessian) pairs, or
    with ``levels`` > 0 their quantised packed values."""

    def __cinit__(self, int levels, Py_ssize_t n_rows):
        if levels < 0 or levels == 1 or levels > 32766:
            raise ValueError(f"quant_levels must be 0 or in 2..32766, got {levels}")
        self.levels = levels
        if levels > 0:
            self.packed = np.empty(max(n_rows, 1), dtype=np.int32)

    @property
    def entry_bytes(self):
        """Bytes of a histogram entry: packed int64 sums, or two float64 sums."""
        return sizeof(int64_t) if self.levels > 0 else sizeof(hist_entry)

    cdef const void* values(self, const G_H_C* pairs, Py_ssize_t n_rows, uint64_t seed,
                            int n_threads) noexcept nogil:
        """The tree's values for the histograms (``seed``: the tree's)."""
        if self.levels == 0:
            return pairs
        quantize_into(pairs, n_rows, self.levels, _rounding_seed(seed), &self.packed[0],
                      self.steps, n_threads)
        return &self.packed[0]


# Quantisation of rows spread over shards (``levelwise``): the steps come from the
# largest |gradient| and |hessian| over all of them, and each row draws as its
# place in the data, so the packed values are those of ``GradientQuantizer.values``.

def gradient_extent_of(const G_H_C[:, ::1] pairs, int n_threads=1):
    """(largest |gradient|, largest |hessian|) of the (n_rows, 2) ``pairs``, or None
    when one of them is NaN or inf."""
    cdef double[2] extent = [0.0, 0.0]
    cdef bint finite = True
    if pairs.shape[0] > 0:
        finite = gradient_extent(&pairs[0, 0], pairs.shape[0], extent, n_threads)
    return (extent[0], extent[1]) if finite else None


def steps_of(double max_g, double max_h, int levels):
    """The (gradient, hessian) steps of ``levels`` levels for those largest values."""
    cdef double[2] extent = [max_g, max_h]
    cdef double scales[2]
    quant_steps(extent, levels, scales)
    return scales[0], scales[1]


def quantize_places(const G_H_C[:, ::1] pairs, int levels, uint64_t tree_seed,
                    double g_step, double h_step, const int64_t[:, ::1] places,
                    int32_t[::1] out, int n_threads=1):
    """``out`` gets the packed values of the (n_rows, 2) ``pairs`` of the tree of
    ``tree_seed`` with the given steps; ``places``: the rows' places in the data,
    runs (first place, count) that cover the rows in order."""
    cdef double[2] scales = [g_step, h_step]
    cdef Py_ssize_t at = 0, k
    if out.shape[0] != pairs.shape[0]:
        raise ValueError("out and pairs do not match")
    for k in range(places.shape[0]):
        if places[k, 1] < 0 or at + places[k, 1] > pairs.shape[0]:
            raise ValueError("places do not cover the rows")
        if places[k, 1] > 0:
            quantize_rows(&pairs[at, 0], places[k, 1], levels, _rounding_seed(tree_seed),
                          places[k, 0], scales, &out[at], n_threads)
        at += places[k, 1]
    if at != pairs.shape[0]:
        raise ValueError("places do not cover the rows")


# ---------------------------------------------------------------- for the tests only

def py_quantize(const G_H_C[::1] grad, const G_H_C[::1] hess, int levels, uint64_t seed,
                int n_threads=1):
    """``quantize_into``: (packed int32 row values, (gradient step, hessian step))."""
    out = np.empty(grad.shape[0], dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef const G_H_C[:, ::1] pairs = np.stack([grad, hess], axis=1)
    cdef double[2] scales = [1.0, 1.0]
    if grad.shape[0] > 0:
        quantize_into(&pairs[0, 0], grad.shape[0], levels, seed, &o[0], scales, n_threads)
    return out, (scales[0], scales[1])
