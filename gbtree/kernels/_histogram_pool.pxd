from libcpp.vector cimport vector

from ._typedefs cimport hist_entry


cdef class HistogramPool:
    cdef vector[hist_entry*] slots     # one histogram each (packed int64 entries when quantised)
    cdef vector[int] free_slots
    cdef readonly Py_ssize_t n_entries, entry_bytes
    cdef readonly int max_slots        # the memory budget, in histograms

    cdef int acquire(self) noexcept nogil
    cdef void release(self, int s) noexcept nogil
    cdef int held(self) noexcept nogil
    cdef Py_ssize_t room(self) noexcept nogil
    cdef void make_room(self, Py_ssize_t n) noexcept nogil
