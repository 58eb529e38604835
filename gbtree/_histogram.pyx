"""Histogram builders: per-bin sums of gradients and hessians over a node's rows.

A histogram is a flat array of (sum_g, sum_h) entries; feature f owns entries
``bin_offsets[f]:bin_offsets[f + 1]``. The work is cut into tasks (row chunk x
feature block, see ``make_plan``) run with ``prange``; the grower builds the
smaller child and derives its sibling with ``subtract_histograms``.

Gradients and hessians are read as interleaved float32 pairs ``gh[2 r]``,
``gh[2 r + 1]`` (one cache line per row instead of two); the rows of a node
are read ahead with software prefetches, since they are a gather.
"""
import numpy as np

from cython.parallel cimport prange
from libc.string cimport memset

from ._typedefs cimport X_BINNED_C, G_H_C, SUM_C, IDX_C, hist_entry

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define GBT_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #else
    #define GBT_PREFETCH(p) ((void)0)
    #endif
    """
    void GBT_PREFETCH(const void* p) noexcept nogil

cdef enum:
    # Rows per chunk below which splitting rows across buffers does not pay.
    MIN_CHUNK_ROWS = 16384
    # Memory cap for the per-chunk private histograms, in entries.
    MAX_SCRATCH_ENTRIES = 4 * 1024 * 1024
    # Below this many (row, feature) pairs a build runs on one thread.
    MIN_PARALLEL_WORK = 65536
    # How many rows ahead the gather is prefetched.
    PREFETCH_ROWS = 16


cdef hist_plan make_plan(Py_ssize_t n_rows, int n_features, Py_ssize_t n_entries,
                         int max_chunks, int n_threads) noexcept nogil:
    cdef hist_plan plan
    cdef Py_ssize_t n_chunks = n_rows // MIN_CHUNK_ROWS
    if n_chunks > max_chunks:
        n_chunks = max_chunks
    if n_chunks * n_entries > MAX_SCRATCH_ENTRIES:
        n_chunks = MAX_SCRATCH_ENTRIES // n_entries
    if n_chunks < 2:
        n_chunks = 1
    plan.n_chunks = <int>n_chunks
    plan.chunk_rows = (n_rows + n_chunks - 1) // n_chunks
    # Feature blocks never change the order in which a bin's sums are
    # accumulated, so their number may follow the thread count.
    plan.n_fblocks = (n_threads + plan.n_chunks - 1) // plan.n_chunks
    if plan.n_fblocks > n_features:
        plan.n_fblocks = n_features
    if plan.n_fblocks < 1:
        plan.n_fblocks = 1
    return plan


cdef inline void _accumulate(const X_BINNED_C* X, Py_ssize_t stride,
                             const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                             const G_H_C* gh,
                             const int* bin_offsets, int f_lo, int f_hi,
                             hist_entry* hist) noexcept nogil:
    cdef Py_ssize_t i, r, pf_end = hi - PREFETCH_ROWS
    cdef int f
    cdef SUM_C g, h
    cdef const X_BINNED_C* row
    cdef hist_entry* e
    if pf_end < lo:
        pf_end = lo
    for i in range(lo, hi):
        if i < pf_end:
            r = rows[i + PREFETCH_ROWS]
            GBT_PREFETCH(X + r * stride + f_lo)
            GBT_PREFETCH(gh + 2 * r)
        r = rows[i]
        g = gh[2 * r]
        h = gh[2 * r + 1]
        row = X + r * stride
        for f in range(f_lo, f_hi):
            e = &hist[bin_offsets[f] + row[f]]
            e.sum_g += g
            e.sum_h += h


cdef void build_histogram(const X_BINNED_C[:, ::1] X_binned,
                          const IDX_C* rows, Py_ssize_t n_rows,
                          const G_H_C* gh,
                          const int* bin_offsets, int n_features,
                          hist_entry* out, hist_entry* scratch,
                          hist_plan plan, int n_threads) noexcept nogil:
    """Histogram of ``rows[0:n_rows]`` into ``out`` (overwritten).

    ``gh`` holds the interleaved (gradient, hessian) pairs of all rows.
    ``scratch`` must hold ``plan.n_chunks * n_entries`` entries when
    ``plan.n_chunks > 1``.
    """
    cdef Py_ssize_t n_entries = bin_offsets[n_features]
    cdef int n_tasks = plan.n_chunks * plan.n_fblocks
    cdef int task, c, fb, f_lo, f_hi, k
    cdef Py_ssize_t lo, hi, b
    cdef hist_entry* dest
    cdef SUM_C sg, sh
    cdef const X_BINNED_C* X = &X_binned[0, 0]
    if n_rows * n_features < MIN_PARALLEL_WORK:
        n_threads = 1   # a thread team costs more than the work
    for task in prange(n_tasks, schedule='static', num_threads=n_threads, nogil=True):
        c = task // plan.n_fblocks
        fb = task % plan.n_fblocks
        f_lo = <int>((<Py_ssize_t>n_features * fb) // plan.n_fblocks)
        f_hi = <int>((<Py_ssize_t>n_features * (fb + 1)) // plan.n_fblocks)
        lo = c * plan.chunk_rows
        hi = lo + plan.chunk_rows
        if hi > n_rows:
            hi = n_rows
        if plan.n_chunks == 1:
            dest = out
        else:
            dest = scratch + c * n_entries
        memset(dest + bin_offsets[f_lo], 0,
               (bin_offsets[f_hi] - bin_offsets[f_lo]) * sizeof(hist_entry))
        if lo < hi:
            _accumulate(X, n_features, rows, lo, hi, gh, bin_offsets, f_lo, f_hi, dest)
    if plan.n_chunks > 1:
        for b in prange(n_entries, schedule='static', num_threads=n_threads, nogil=True):
            sg = 0.0
            sh = 0.0
            for k in range(plan.n_chunks):
                sg = sg + scratch[k * n_entries + b].sum_g
                sh = sh + scratch[k * n_entries + b].sum_h
            out[b].sum_g = sg
            out[b].sum_h = sh


cdef void subtract_histograms(hist_entry* parent, const hist_entry* child,
                              Py_ssize_t n_entries, int n_threads) noexcept nogil:
    """``parent -= child``: the parent's buffer becomes the sibling's histogram."""
    cdef Py_ssize_t b
    if n_entries < MIN_PARALLEL_WORK:
        n_threads = 1
    for b in prange(n_entries, schedule='static', num_threads=n_threads, nogil=True):
        parent[b].sum_g -= child[b].sum_g
        parent[b].sum_h -= child[b].sum_h


# ---------------------------------------------------------------- Python wrappers
# Used by the tests to compare the kernels with gbtree._reference.

def py_build_histogram(const X_BINNED_C[:, ::1] X_binned, const IDX_C[::1] rows,
                       const G_H_C[::1] grad, const G_H_C[::1] hess,
                       const int[::1] bin_offsets, int n_threads=1, int max_chunks=16):
    """Histogram of the given rows as an (n_entries, 2) float64 array [sum_g, sum_h]."""
    cdef int n_features = bin_offsets.shape[0] - 1
    cdef Py_ssize_t n_entries = bin_offsets[n_features]
    cdef hist_plan plan = make_plan(rows.shape[0], n_features, n_entries, max_chunks, n_threads)
    out = np.zeros((n_entries, 2), dtype=np.float64)
    scratch = np.zeros((max(plan.n_chunks, 1) * n_entries, 2), dtype=np.float64)
    gh = interleave(grad, hess)
    cdef double[:, ::1] out_v = out
    cdef double[:, ::1] scratch_v = scratch
    cdef const G_H_C[::1] gh_v = gh
    if n_entries == 0:
        return out
    with nogil:
        build_histogram(X_binned, &rows[0] if rows.shape[0] > 0 else NULL, rows.shape[0],
                        &gh_v[0] if gh_v.shape[0] > 0 else NULL, &bin_offsets[0], n_features,
                        <hist_entry*>&out_v[0, 0], <hist_entry*>&scratch_v[0, 0],
                        plan, n_threads)
    return out


def interleave(const G_H_C[::1] grad, const G_H_C[::1] hess, int n_threads=1):
    """The (gradient, hessian) pairs ``build_histogram`` reads: float32, length 2 n."""
    out = np.empty(2 * grad.shape[0], dtype=np.float32)
    cdef G_H_C[::1] o = out
    if grad.shape[0] > 0:
        interleave_into(&grad[0], &hess[0], grad.shape[0], &o[0], n_threads)
    return out


cdef void interleave_into(const G_H_C* grad, const G_H_C* hess, Py_ssize_t n,
                          G_H_C* gh, int n_threads) noexcept nogil:
    cdef Py_ssize_t i
    if n < 65536:
        n_threads = 1
    for i in prange(n, schedule='static', num_threads=n_threads, nogil=True):
        gh[2 * i] = grad[i]
        gh[2 * i + 1] = hess[i]


def py_plan(Py_ssize_t n_rows, int n_features, Py_ssize_t n_entries, int max_chunks=16,
            int n_threads=1):
    cdef hist_plan plan = make_plan(n_rows, n_features, n_entries, max_chunks, n_threads)
    return plan.n_chunks, plan.n_fblocks, plan.chunk_rows


def py_subtract_histograms(double[:, ::1] parent, const double[:, ::1] child, int n_threads=1):
    """In place ``parent -= child``; returns parent."""
    if parent.shape[0] > 0:
        subtract_histograms(<hist_entry*>&parent[0, 0], <const hist_entry*>&child[0, 0],
                            parent.shape[0], n_threads)
    return np.asarray(parent)
