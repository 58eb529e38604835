"""The histograms of given nodes' rows, called from Python: the histograms of a
batch of nodes at once (``level_histograms``: the rows in blocks of
``growing/row_blocks``), over the builders of _histogram.pyx."""
import numpy as np

from cython.parallel cimport parallel, prange, threadid
from libc.string cimport memset
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t

from ._typedefs cimport X_BINNED_C, G_H_C, IDX_C, hist_entry, acc_t
from ._binned_matrix cimport sparse_view
from ._histogram cimport (sparse_binned, hist_plan, make_plan, build_histogram,
                          subtract_histograms, unpack_histogram)


cdef const X_BINNED_C* _matrix_view(X_binned, sparse_binned* S) except? NULL:
    """A dense binned matrix's first value (NULL when it is empty); for a
    ``binning.SparseBinned``, NULL with ``S`` pointed at its arrays."""
    cdef const X_BINNED_C[:, ::1] X_v
    if not isinstance(X_binned, np.ndarray):
        sparse_view(X_binned, S)
        return NULL
    X_v = X_binned
    return &X_v[0, 0] if X_v.shape[0] > 0 and X_v.shape[1] > 0 else NULL


def level_histograms(X_binned, const IDX_C[::1] rows, const int64_t[:, ::1] bounds,
                     values, const int[::1] bin_offsets,
                     const X_BINNED_C[::1] default_bin, out,
                     const int64_t[::1] targets, int n_threads=1, int max_chunks=16):
    """The histograms of several nodes at once (a batch of splits' children):
    ``out[targets[i]]`` gets the sums of the rows' ``values`` over
    ``rows[bounds[i, 0]:bounds[i, 1]]`` (``rows=None``: every row in order, dense
    only), each built alone; returns each node's totals. ``values`` are (n_rows, 2) float32
    (gradient, hessian) pairs, ``out`` (m, n_entries, 2) float64, or (quantised
    gradients) the packed int32 values of ``quantize_into`` and ``out`` (m,
    n_entries) packed int64. With fewer nodes than twice the threads each node is
    built by all the threads, else the nodes are shared out, each built by one
    thread. ``default_bin`` (required for sparse input, else None): recover each
    feature's default bin from the totals."""
    cdef int n_features = bin_offsets.shape[0] - 1
    cdef Py_ssize_t n_entries = bin_offsets[n_features], m = bounds.shape[0], i
    cdef bint dense = isinstance(X_binned, np.ndarray)
    cdef bint packed = out.dtype == np.int64
    cdef Py_ssize_t n_listed = X_binned.shape[0] if rows is None else rows.shape[0]
    if rows is None and not (dense and np.all(np.asarray(bounds)[:, 0] == 0)):
        raise ValueError("rows=None takes a dense matrix and ranges from row 0")
    if ((out.shape[1] != n_entries if packed else
         (out.dtype != np.float64 or out.shape[1] != n_entries or out.shape[2] != 2))
            or targets.shape[0] != m or values.shape[0] != X_binned.shape[0]
            or out.ndim != (2 if packed else 3)
            or (values.shape != (values.shape[0],) if packed else values.shape[1:] != (2,))
            or bounds.shape[1] != 2):
        raise ValueError("out, targets, bounds, values and the binned matrix do not match")
    for i in range(m):
        if not 0 <= bounds[i, 0] <= bounds[i, 1] <= n_listed:
            raise ValueError(f"bounds[{i}] is not a range of rows")
        if not 0 <= targets[i] < out.shape[0]:
            raise ValueError(f"targets[{i}] is not a histogram of out")
    if not dense and default_bin is None:
        raise ValueError("sparse input needs default_bin")
    totals = np.zeros([m] if packed else [m, 2], dtype=out.dtype)
    if m == 0 or n_entries == 0:
        return totals
    cdef sparse_binned S
    cdef const sparse_binned* S_ptr = NULL
    cdef const X_BINNED_C* X = _matrix_view(X_binned, &S)
    if not dense:
        S_ptr = &S
    cdef const X_BINNED_C* default_ptr = &default_bin[0] if default_bin is not None else NULL
    cdef bint shared = m >= 2 * n_threads and n_threads > 1
    cdef int threads_each = 1 if shared else n_threads
    cdef int buffers = n_threads if shared else 1, most = 1
    cdef hist_plan plan
    for i in range(m):
        plan = make_plan(bounds[i, 1] - bounds[i, 0], n_features, n_entries, max_chunks,
                         threads_each)
        most = max(most, plan.scratch_chunks)
    cdef const IDX_C* rows_ptr = &rows[0] if rows is not None and n_listed > 0 else NULL
    cdef const G_H_C[:, ::1] pairs_v
    cdef const int32_t[::1] packed_v
    cdef int64_t[:, ::1] out_p, scratch_p
    cdef int64_t[::1] totals_p
    cdef double[:, :, ::1] out_f, scratch_f
    cdef double[:, ::1] totals_f
    if packed:
        packed_v = values
        out_p = out
        scratch_p = np.empty((buffers, most * n_entries), dtype=np.int64)
        totals_p = totals
        with nogil:
            _level(X, S_ptr, rows_ptr, bounds, targets,
                   &packed_v[0] if packed_v.shape[0] > 0 else NULL, &bin_offsets[0], n_features, n_entries, max_chunks, n_threads, shared,
                   default_ptr, &out_p[0, 0], &scratch_p[0, 0], most * n_entries,
                   &totals_p[0])
    else:
        pairs_v = values
        out_f = out
        scratch_f = np.empty((buffers, most * n_entries, 2))
        totals_f = totals
        with nogil:
            _level(X, S_ptr, rows_ptr, bounds, targets,
                   &pairs_v[0, 0] if pairs_v.shape[0] > 0 else NULL, &bin_offsets[0], n_features, n_entries, max_chunks, n_threads, shared,
                   default_ptr, <hist_entry*>&out_f[0, 0, 0], <hist_entry*>&scratch_f[0, 0, 0],
                   most * n_entries, <hist_entry*>&totals_f[0, 0])
    return totals


cdef void _level(const X_BINNED_C* X, const sparse_binned* S, const IDX_C* rows,
                 const int64_t[:, ::1] bounds, const int64_t[::1] targets, const void* values,
                 const int* bin_offsets, int n_features, Py_ssize_t n_entries,
                 int max_chunks, int n_threads, bint shared, const X_BINNED_C* default_bin,
                 acc_t* out, acc_t* scratch, Py_ssize_t scratch_size,
                 acc_t* totals) noexcept nogil:
    """``level_histograms``' builds: node i's histogram into ``out + targets[i] *
    n_entries``, its totals into ``totals + i``."""
    cdef Py_ssize_t i, m = bounds.shape[0]
    cdef int t
    if not shared:
        for i in range(m):
            _node_histogram(X, S, rows, bounds[i, 0], bounds[i, 1], values, bin_offsets,
                            n_features, n_entries, max_chunks, n_threads, default_bin,
                            out + targets[i] * n_entries, scratch, totals + i)
        return
    with parallel(num_threads=n_threads):
        t = threadid()
        for i in prange(m, schedule='dynamic'):
            _node_histogram(X, S, rows, bounds[i, 0], bounds[i, 1], values, bin_offsets,
                            n_features, n_entries, max_chunks, 1, default_bin,
                            out + targets[i] * n_entries, scratch + t * scratch_size,
                            totals + i)


cdef void _node_histogram(const X_BINNED_C* X, const sparse_binned* S, const IDX_C* rows,
                          Py_ssize_t lo, Py_ssize_t hi, const void* values,
                          const int* bin_offsets, int n_features, Py_ssize_t n_entries,
                          int max_chunks, int n_threads, const X_BINNED_C* default_bin,
                          acc_t* out, acc_t* scratch, acc_t* totals) noexcept nogil:
    """The histogram of ``rows[lo:hi]`` into ``out`` (zeros for no rows)."""
    cdef hist_plan plan
    if hi <= lo:
        memset(out, 0, n_entries * sizeof(acc_t))
        memset(totals, 0, sizeof(acc_t))
        return
    plan = make_plan(hi - lo, n_features, n_entries, max_chunks, n_threads)
    build_histogram(X, S, rows + lo if rows != NULL else rows, hi - lo, NULL, 0, values,
                    bin_offsets, n_features,
                    out, scratch, plan, n_threads, default_bin, totals)


def py_unpack_histogram(const int64_t[::1] packed, double g_step, double h_step):
    """``unpack_histogram``: a packed histogram as (n_entries, 2) float64 sums."""
    out = np.zeros((packed.shape[0], 2), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef double scales[2]
    scales[0] = g_step
    scales[1] = h_step
    if packed.shape[0] > 0:
        unpack_histogram(&packed[0], packed.shape[0], scales, <hist_entry*>&o[0, 0])
    return out


# ---------------------------------------------------------------- for the tests only
# (the C-level functions above called from Python by tests/; gbtree itself does not)
def py_build_histogram(X_binned, const IDX_C[::1] rows, grad, hess,
                       const int[::1] bin_offsets, int n_threads=1, int max_chunks=16,
                       default_bin=None, bint return_totals=False, packed=None,
                       bint all_rows=False, Py_ssize_t split=-1, int scratch_chunks=0):
    """Histogram of the given rows as an (n_entries, 2) float64 array [sum_g, sum_h];
    with ``packed`` (the int32 row values of ``py_quantize``; grad and hess are then
    not read), the (n_entries,) int64 histogram of packed sums.

    ``X_binned``: a dense uint8 matrix or a ``binning.SparseBinned``; ``all_rows``
    (dense only; ``rows`` must then be 0..n-1): pass no row list to the kernel;
    ``default_bin``: recover every feature's default bin from the totals (required
    for sparse input); ``return_totals``: also return the rows' (sum_g, sum_h)
    (or their packed sum); ``split`` (0..len(rows)): give the kernel the list in
    two ranges, ``rows[:split]`` and a copy of ``rows[split:]`` elsewhere;
    ``scratch_chunks``: a scratch of that many chunk buffers (at least the plan's
    chunks), as the grower's, sized for its largest node.
    """
    cdef int n_features = bin_offsets.shape[0] - 1
    cdef Py_ssize_t n_entries = bin_offsets[n_features]
    cdef hist_plan plan = make_plan(rows.shape[0], n_features, n_entries, max_chunks, n_threads)
    cdef sparse_binned S
    if scratch_chunks > plan.scratch_chunks:
        plan.scratch_chunks = scratch_chunks
    cdef const X_BINNED_C[::1] defaults
    cdef const X_BINNED_C* X = NULL
    cdef const sparse_binned* S_ptr = NULL
    cdef const X_BINNED_C* default_ptr = NULL
    cdef const IDX_C* rows_ptr = &rows[0] if rows.shape[0] > 0 else NULL
    cdef const IDX_C* rows_hi = NULL
    cdef Py_ssize_t n_lo = 0
    cdef const IDX_C[::1] rows_hi_v
    if all_rows:
        if not isinstance(X_binned, np.ndarray) or rows.shape[0] != X_binned.shape[0]:
            raise ValueError("all_rows needs a dense X_binned and rows = 0..n-1")
        rows_ptr = NULL
    elif split >= 0:
        if split > rows.shape[0]:
            raise ValueError(f"split must be at most len(rows) = {rows.shape[0]}, got {split}")
        # (one spare entry: a pointer to the second range even when it is empty)
        rows_hi_v = np.concatenate([np.asarray(rows)[split:],
                                    np.zeros(1, dtype=np.asarray(rows).dtype)])
        rows_hi = &rows_hi_v[0]
        n_lo = split
    cdef hist_entry totals
    cdef int64_t packed_total = 0
    cdef const G_H_C[::1] gh_v
    cdef const int32_t[::1] packed_v
    cdef double[:, ::1] out_v
    cdef double[:, ::1] scratch_v
    cdef int64_t[::1] out_p
    cdef int64_t[::1] scratch_p
    X = _matrix_view(X_binned, &S)
    if not isinstance(X_binned, np.ndarray):
        S_ptr = &S
        if default_bin is None:
            raise ValueError("sparse input needs default_bin")
    if default_bin is not None:
        defaults = default_bin
        default_ptr = &defaults[0]
    totals.sum_g = 0.0
    totals.sum_h = 0.0
    if packed is not None:
        packed_v = packed
        out = np.zeros(n_entries, dtype=np.int64)
        out_p = out
        scratch_p = np.zeros(max(plan.scratch_chunks, 1) * n_entries, dtype=np.int64)
        if n_entries > 0:
            with nogil:
                build_histogram(X, S_ptr, rows_ptr, rows.shape[0], rows_hi, n_lo,
                                &packed_v[0] if packed_v.shape[0] > 0 else NULL,
                                &bin_offsets[0], n_features, &out_p[0], &scratch_p[0],
                                plan, n_threads, default_ptr, &packed_total)
        return (out, packed_total) if return_totals else out
    out = np.zeros((n_entries, 2), dtype=np.float64)
    out_v = out
    scratch_v = np.zeros((max(plan.scratch_chunks, 1) * n_entries, 2), dtype=np.float64)
    gh_v = np.stack([np.asarray(grad, dtype=np.float32), np.asarray(hess, dtype=np.float32)],
                    axis=1).ravel()
    if n_entries > 0:
        with nogil:
            build_histogram(X, S_ptr, rows_ptr, rows.shape[0], rows_hi, n_lo,
                            &gh_v[0] if gh_v.shape[0] > 0 else NULL, &bin_offsets[0],
                            n_features, <hist_entry*>&out_v[0, 0],
                            <hist_entry*>&scratch_v[0, 0], plan, n_threads,
                            default_ptr, &totals)
    if return_totals:
        return out, (totals.sum_g, totals.sum_h)
    return out


def py_plan(Py_ssize_t n_rows, int n_features, Py_ssize_t n_entries, int max_chunks=16,
            int n_threads=1):
    cdef hist_plan plan = make_plan(n_rows, n_features, n_entries, max_chunks, n_threads)
    return plan.n_chunks, plan.n_fblocks, plan.chunk_rows


def py_subtract_histograms(parent, child, int n_threads=1):
    """In place ``parent -= child`` (float64 (n, 2) or packed int64 (n,)); returns parent."""
    cdef double[:, ::1] pd
    cdef const double[:, ::1] cd
    cdef int64_t[::1] pp
    cdef const int64_t[::1] cp
    if parent.dtype == np.int64:
        pp = parent
        cp = child
        if pp.shape[0] > 0:
            subtract_histograms(&pp[0], &cp[0], pp.shape[0], n_threads)
        return parent
    pd = parent
    cd = child
    if pd.shape[0] > 0:
        subtract_histograms(<hist_entry*>&pd[0, 0], <const hist_entry*>&cd[0, 0],
                            pd.shape[0], n_threads)
    return parent
