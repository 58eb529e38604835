"""The values of a tree's leaves and the rows of each leaf: a leaf's rows are a
range of the partition (the rows grouped by node), so a tree's values are added
to them (``add_leaf_values``) and its leaves' (gradient, hessian) sums summed
over them (``leaf_sums``) one range at a time, the ranges in parallel."""
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint32_t


def add_leaf_values(const uint32_t[::1] rows, const int64_t[:, ::1] bounds,
                    const double[::1] values, double[:, ::1] out, int output, int n_threads):
    """``out[rows[j], output] += values[i]`` for j in ``bounds[i, 0]:bounds[i, 1]``: a
    tree's values added to the rows of its leaves (each leaf's rows a range of the
    partition), ranges in parallel. Each row is listed once."""
    cdef Py_ssize_t m = bounds.shape[0], i, j
    if values.shape[0] != m or bounds.shape[1] != 2 or not 0 <= output < out.shape[1]:
        raise ValueError("bounds, values and out do not match")
    for i in range(m):
        if not 0 <= bounds[i, 0] <= bounds[i, 1] <= rows.shape[0]:
            raise ValueError(f"bounds[{i}] is not a range of rows")
    for j in range(rows.shape[0]):
        if rows[j] >= out.shape[0]:
            raise ValueError(f"row {rows[j]} is not a row of out")
    if rows.shape[0] < 4096:
        n_threads = 1
    for i in prange(m, schedule='dynamic', num_threads=n_threads, nogil=True):
        for j in range(bounds[i, 0], bounds[i, 1]):
            out[rows[j], output] += values[i]


def leaf_sums(const uint32_t[::1] rows, const int64_t[:, ::1] bounds,
              const float[:, ::1] pairs, double[:, ::1] out, int n_threads):
    """``out[i]`` = the sums of the (gradient, hessian) ``pairs[rows[j]]`` for j in
    ``bounds[i, 0]:bounds[i, 1]``, added in that order (``add_leaf_values``' twin:
    each leaf's sums over its range of the partition), ranges in parallel."""
    cdef Py_ssize_t m = bounds.shape[0], i, j
    cdef double g, h
    if out.shape[0] != m or out.shape[1] != 2 or bounds.shape[1] != 2 or pairs.shape[1] != 2:
        raise ValueError("bounds, pairs and out do not match")
    for i in range(m):
        if not 0 <= bounds[i, 0] <= bounds[i, 1] <= rows.shape[0]:
            raise ValueError(f"bounds[{i}] is not a range of rows")
        for j in range(bounds[i, 0], bounds[i, 1]):
            if rows[j] >= pairs.shape[0]:
                raise ValueError(f"row {rows[j]} is not a row of pairs")
    if rows.shape[0] < 4096:
        n_threads = 1
    for i in prange(m, schedule='dynamic', num_threads=n_threads, nogil=True):
        g = 0.0
        h = 0.0
        for j in range(bounds[i, 0], bounds[i, 1]):
            g = g + pairs[rows[j], 0]
            h = h + pairs[rows[j], 1]
        out[i, 0] = g
        out[i, 1] = h
