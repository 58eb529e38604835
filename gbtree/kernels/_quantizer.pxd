from libc.stdint cimport int32_t, uint64_t

from ._typedefs cimport G_H_C


cdef class GradientQuantizer:
    cdef readonly int levels           # 0: float gradients
    cdef int32_t[::1] packed           # the current tree's packed row values
    cdef double steps[2]               # the current tree's gradient and hessian steps

    cdef const void* values(self, const G_H_C* pairs, Py_ssize_t n_rows, uint64_t seed,
                            int n_threads) noexcept nogil
