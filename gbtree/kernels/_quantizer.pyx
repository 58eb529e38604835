"""Quantised gradients (LightGBM's quantised training): each tree's gradients and
hessians are rounded at random to ``levels`` integer steps (``_histogram.quantize_into``)
and packed into one int32 a row, so the histograms hold exact packed int64 sums,
unpacked to floats inside the split scan."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint64_t

from ._typedefs cimport G_H_C, hist_entry, splitmix64
from ._histogram cimport quantize_into, gradient_extent, quant_steps, quantize_rows


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
        self.steps[0] = 0.0
        self.steps[1] = 0.0

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
    cdef double extent[2]
    extent[0] = 0.0
    extent[1] = 0.0
    cdef bint finite = True
    if pairs.shape[0] > 0:
        finite = gradient_extent(&pairs[0, 0], pairs.shape[0], extent, n_threads)
    return (extent[0], extent[1]) if finite else None


def steps_of(double max_g, double max_h, int levels):
    """The (gradient, hessian) steps of ``levels`` levels for those largest values."""
    cdef double extent[2]
    cdef double scales[2]
    extent[0] = max_g
    extent[1] = max_h
    quant_steps(extent, levels, scales)
    return scales[0], scales[1]


def quantize_places(const G_H_C[:, ::1] pairs, int levels, uint64_t tree_seed,
                    double g_step, double h_step, const int64_t[:, ::1] places,
                    int32_t[::1] out, int n_threads=1):
    """``out`` gets the packed values of the (n_rows, 2) ``pairs`` of the tree of
    ``tree_seed`` with the given steps; ``places``: the rows' places in the data,
    runs (first place, count) that cover the rows in order."""
    cdef double scales[2]
    scales[0] = g_step
    scales[1] = h_step
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
