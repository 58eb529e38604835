"""The prange kernel that maps raw feature values to bin indices."""
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport isnan
from libc.stdint cimport int32_t, int64_t

from ._typedefs cimport X_BINNED_C


cdef inline X_BINNED_C _bin_one(double x, const double* cuts, int n_cuts) noexcept nogil:
    # Bin b holds cuts[b-1] < x <= cuts[b]; the result is the number of cuts < x,
    # found by a binary search without branches (the compiler emits conditional
    # moves: the comparisons are unpredictable, the loop count is not).
    cdef const double* first = cuts
    cdef int length = n_cuts, half
    if isnan(x):
        return <X_BINNED_C>(n_cuts + 1)          # the missing bin, right after the last value bin
    while length > 0:
        half = length >> 1
        first = first + (length - half) if first[half] < x else first
        length = half
    return <X_BINNED_C>(first - cuts)


def map_to_bins(const floating[:, :] X, const double[::1] cuts, const int[::1] cut_ptr,
                X_BINNED_C[:, ::1] binned, int n_threads):
    """Fill ``binned[i, f]`` with the bin of ``X[i, f]``.

    ``cuts[cut_ptr[f]:cut_ptr[f + 1]]`` are the sorted upper edges of feature
    f's value bins; NaN goes to the missing bin ``n_cuts_f + 1``.
    """
    cdef Py_ssize_t n_rows = X.shape[0], n_features = X.shape[1]
    cdef Py_ssize_t i, f
    cdef int start, n_cuts
    if n_rows == 0:
        return
    if X.strides[0] < X.strides[1]:
        # Fortran-ordered input: walk each column contiguously.
        for f in prange(n_features, schedule='static', num_threads=n_threads, nogil=True):
            start = cut_ptr[f]
            n_cuts = cut_ptr[f + 1] - start
            for i in range(n_rows):
                binned[i, f] = _bin_one(X[i, f], &cuts[start], n_cuts)
    else:
        for i in prange(n_rows, schedule='static', num_threads=n_threads, nogil=True):
            for f in range(n_features):
                binned[i, f] = _bin_one(X[i, f], &cuts[cut_ptr[f]], cut_ptr[f + 1] - cut_ptr[f])


def map_csr_to_bins(const floating[::1] data, const int32_t[::1] indices, const int64_t[::1] indptr,
                    const double[::1] cuts, const int[::1] cut_ptr, X_BINNED_C[::1] bins,
                    int n_threads):
    """``bins[k]`` = bin of the stored entry ``data[k]`` of a CSR matrix (its
    feature is ``indices[k]``); the same mapping as ``map_to_bins``."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, i, k
    cdef int f
    if data.shape[0] == 0:
        return
    for i in prange(n_rows, schedule='static', num_threads=n_threads, nogil=True):
        for k in range(indptr[i], indptr[i + 1]):
            f = indices[k]
            bins[k] = _bin_one(data[k], &cuts[cut_ptr[f]], cut_ptr[f + 1] - cut_ptr[f])
