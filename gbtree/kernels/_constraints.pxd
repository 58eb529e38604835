from libcpp.vector cimport vector


cdef class InteractionConstraints:
    cdef int n_features
    cdef readonly int n_groups              # 0: no constraint
    cdef vector[unsigned char] membership   # n_features x n_groups
    cdef vector[unsigned char] listed       # the feature is in some group
    cdef vector[unsigned char] node_groups  # per node: the groups its path is compatible with
    cdef vector[int] node_solo              # per node: the unlisted feature on its path, or -1
    cdef vector[unsigned char] masks        # one per task

    cdef void start_tree(self) noexcept nogil
    cdef const unsigned char* allowed(self, int node, const unsigned char* base,
                                      int task) noexcept nogil
    cdef void add_children(self, int parent, int f, int left, int right) noexcept nogil


cdef class MonotoneConstraints:
    cdef vector[signed char] direction      # per feature -1 / 0 / +1; empty: none

    cdef const signed char* directions(self) noexcept nogil
    cdef void bound_children(self, int f, double lower, double upper, double w_left,
                             double w_right, double* bounds) noexcept nogil
