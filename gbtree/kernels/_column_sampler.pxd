from libc.stdint cimport uint64_t
from libcpp.vector cimport vector


cdef class ColumnSampler:
    cdef int n_features
    cdef double bytree, bylevel, bynode
    cdef const double* weights              # per feature, or NULL
    cdef object _weights_ref
    cdef readonly bint active               # some sampling is asked for
    cdef uint64_t seed                      # the current tree's
    cdef vector[unsigned char] all_mask
    cdef vector[unsigned char] tree_mask
    cdef vector[vector[unsigned char]] level_masks
    cdef vector[unsigned char] node_masks   # one per task

    cdef void start_tree(self, uint64_t seed) noexcept nogil
    cdef void ensure_level(self, int depth) noexcept nogil
    cdef const unsigned char* features(self, int node, int depth, int task) noexcept nogil

