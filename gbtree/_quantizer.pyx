"""Quantised gradients (LightGBM's quantised training): each tree's gradients and
hessians are rounded at random to ``levels`` integer steps (``_histogram.quantize_into``)
and packed into one int32 a row, so the histograms hold exact packed int64 sums,
unpacked to floats inside the split scan."""
import numpy as np

from libc.stdint cimport int64_t, uint64_t

from ._typedefs cimport G_H_C, hist_entry, splitmix64
from ._histogram cimport quantize_into


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
        quantize_into(pairs, n_rows, self.levels, splitmix64(seed ^ <uint64_t>0x71A27),
                      &self.packed[0], self.steps, n_threads)
        return &self.packed[0]
