from libc.stdint cimport int32_t, int64_t, uint8_t

cdef struct sym_tables:
    # pointers into ``symmetric_trees``' arrays (kept alive by their holder)
    Py_ssize_t n_used
    const int32_t* column
    const int32_t* depth
    const int64_t* level_ptr
    const int32_t* feat
    const double* thr64
    const float* thr32
    const uint8_t* nan_right
    const int64_t* leaf_ptr
    const double* leaves
    const int32_t* used
    const int32_t* tree_class


cdef sym_tables sym_tables_of(dict trees, const int32_t[::1] tree_class) except *

cdef int sym_walk(const void* X, bint f32, Py_ssize_t row_stride, Py_ssize_t col_stride,
                  Py_ssize_t n_rows, const sym_tables* T, Py_ssize_t start, Py_ssize_t stop,
                  double* out, Py_ssize_t n_outputs, int n_threads, int level) noexcept nogil

cdef void sym_rows(const void* X, bint f32, Py_ssize_t n_features, Py_ssize_t n_rows,
                   const sym_tables* T, Py_ssize_t start, Py_ssize_t stop, double* out,
                   Py_ssize_t n_outputs) noexcept nogil
