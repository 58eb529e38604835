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

from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t

from ._typedefs cimport X_BINNED_C, G_H_C, SUM_C, IDX_C, hist_entry, entry_t

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
    # At most this many row chunks (private buffers) per build.
    MAX_HIST_CHUNKS = 64
    # Rows per chunk below which splitting rows across buffers does not pay.
    MIN_CHUNK_ROWS = 16384
    # Memory cap for the per-chunk private histograms, in entries.
    MAX_SCRATCH_ENTRIES = 4 * 1024 * 1024
    # Below this many (row, feature) pairs a build runs on one thread.
    MIN_PARALLEL_WORK = 65536
    # How many rows ahead the gather is prefetched.
    PREFETCH_ROWS = 16
    # the same for the stored entries of sparse rows (their offsets twice as far)
    SPARSE_PREFETCH_ROWS = 12


cdef hist_plan make_plan(Py_ssize_t n_rows, int n_features, Py_ssize_t n_entries,
                         int max_chunks, int n_threads) noexcept nogil:
    cdef hist_plan plan
    cdef Py_ssize_t n_chunks = n_rows // MIN_CHUNK_ROWS
    if n_chunks > max_chunks:
        n_chunks = max_chunks
    if n_chunks > MAX_HIST_CHUNKS:
        n_chunks = MAX_HIST_CHUNKS
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


cdef inline void _prefetch_row(const X_BINNED_C* row, int f_lo, int f_hi,
                               const G_H_C* gh_pair) noexcept nogil:
    # first, middle and last byte: a row of up to 3 cache lines; and its (g, h)
    GBT_PREFETCH(row + f_lo)
    GBT_PREFETCH(row + ((f_lo + f_hi) >> 1))
    GBT_PREFETCH(row + f_hi - 1)
    GBT_PREFETCH(gh_pair)


cdef inline void _accumulate(const X_BINNED_C* X, Py_ssize_t stride,
                             const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                             const G_H_C* gh,
                             const int* bin_offsets, int f_lo, int f_hi,
                             hist_entry* hist, SUM_C* total) noexcept nogil:
    """Rows two at a time: each feature's offset is loaded once for both, and a
    bin still receives its rows' values in row order (the same sums)."""
    cdef Py_ssize_t i, r, r2, pf_end = hi - PREFETCH_ROWS
    cdef int f
    cdef SUM_C g, h, g2, h2, tg = 0.0, th = 0.0
    cdef const X_BINNED_C* row
    cdef const X_BINNED_C* row2
    cdef hist_entry* e
    cdef hist_entry* hf
    if pf_end < lo:
        pf_end = lo
    i = lo
    while i < hi:
        if i < pf_end:
            _prefetch_row(X + rows[i + PREFETCH_ROWS] * stride, f_lo, f_hi,
                          gh + 2 * rows[i + PREFETCH_ROWS])
            if i + 1 < pf_end:
                _prefetch_row(X + rows[i + 1 + PREFETCH_ROWS] * stride, f_lo, f_hi,
                              gh + 2 * rows[i + 1 + PREFETCH_ROWS])
        r = rows[i]
        g = gh[2 * r]
        h = gh[2 * r + 1]
        tg += g
        th += h
        row = X + r * stride
        if i + 1 < hi:
            r2 = rows[i + 1]
            g2 = gh[2 * r2]
            h2 = gh[2 * r2 + 1]
            tg += g2
            th += h2
            row2 = X + r2 * stride
            for f in range(f_lo, f_hi):
                hf = hist + bin_offsets[f]
                e = hf + row[f]
                e.sum_g += g
                e.sum_h += h
                e = hf + row2[f]
                e.sum_g += g2
                e.sum_h += h2
            i += 2
        else:
            for f in range(f_lo, f_hi):
                e = &hist[bin_offsets[f] + row[f]]
                e.sum_g += g
                e.sum_h += h
            i += 1
    if total != NULL:
        total[0] = tg
        total[1] = th


cdef inline void _accumulate_entries(const int64_t* indptr, const entry_t* entries,
                                     const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                                     const G_H_C* gh, Py_ssize_t e_lo, Py_ssize_t e_hi,
                                     bint all_features, hist_entry* hist,
                                     SUM_C* total) noexcept nogil:
    cdef Py_ssize_t i, r, k, b, pf_end = hi - 2 * SPARSE_PREFETCH_ROWS
    cdef SUM_C g, h, tg = 0.0, th = 0.0
    cdef hist_entry* e
    if pf_end < lo:
        pf_end = lo
    for i in range(lo, hi):
        if i < pf_end:
            # two stages: the row's offset first, its entries once that has arrived
            GBT_PREFETCH(indptr + rows[i + 2 * SPARSE_PREFETCH_ROWS])
            r = rows[i + SPARSE_PREFETCH_ROWS]
            # every cache line of the row's entries (rows are scattered in a node)
            GBT_PREFETCH(entries + indptr[r])
            GBT_PREFETCH(entries + ((indptr[r] + indptr[r + 1]) >> 1))
            GBT_PREFETCH(entries + indptr[r + 1] - 1)
            GBT_PREFETCH(gh + 2 * r)
        r = rows[i]
        g = gh[2 * r]
        h = gh[2 * r + 1]
        tg += g
        th += h
        if all_features:
            for k in range(indptr[r], indptr[r + 1]):
                e = &hist[entries[k]]
                e.sum_g += g
                e.sum_h += h
        else:
            for k in range(indptr[r], indptr[r + 1]):
                b = entries[k]
                if b >= e_lo and b < e_hi:
                    e = &hist[b]
                    e.sum_g += g
                    e.sum_h += h
    if total != NULL:
        total[0] = tg
        total[1] = th


cdef inline void _accumulate_csr(const sparse_binned* S,
                                 const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                                 const G_H_C* gh,
                                 const int* bin_offsets, int f_lo, int f_hi, bint all_features,
                                 hist_entry* hist, SUM_C* total) noexcept nogil:
    """``_accumulate`` over the stored entries of the rows only (the default bins
    get nothing here: ``_recover_default_bins`` fills them). Entries are uint16
    when the histogram has at most 65,536 entries (half the memory traffic)."""
    if S.entries16 != NULL:
        _accumulate_entries(S.indptr, S.entries16, rows, lo, hi, gh, bin_offsets[f_lo],
                            bin_offsets[f_hi], all_features, hist, total)
    else:
        _accumulate_entries(S.indptr, S.entries, rows, lo, hi, gh, bin_offsets[f_lo],
                            bin_offsets[f_hi], all_features, hist, total)


cdef void _recover_default_bins(hist_entry* hist, const int* bin_offsets, int n_features,
                                const X_BINNED_C* default_bin, SUM_C G, SUM_C H,
                                int n_threads) noexcept nogil:
    """Each feature's default-bin entry becomes the node totals minus its other
    entries (summed in bin order): the same arithmetic for a dense and a sparse
    matrix, whose default bins are never accumulated."""
    cdef int f
    cdef Py_ssize_t b, d
    cdef SUM_C sg, sh
    if bin_offsets[n_features] < MIN_PARALLEL_WORK:
        n_threads = 1
    for f in prange(n_features, schedule='static', num_threads=n_threads, nogil=True):
        d = bin_offsets[f] + default_bin[f]
        sg = 0.0
        sh = 0.0
        for b in range(bin_offsets[f], bin_offsets[f + 1]):
            if b != d:
                sg = sg + hist[b].sum_g
                sh = sh + hist[b].sum_h
        hist[d].sum_g = G - sg
        hist[d].sum_h = H - sh


cdef void build_histogram(const X_BINNED_C* X, const sparse_binned* S,
                          const IDX_C* rows, Py_ssize_t n_rows,
                          const G_H_C* gh,
                          const int* bin_offsets, int n_features,
                          hist_entry* out, hist_entry* scratch,
                          hist_plan plan, int n_threads,
                          const X_BINNED_C* default_bin, SUM_C* totals) noexcept nogil:
    """Histogram of ``rows[0:n_rows]`` into ``out`` (overwritten), from the dense
    binned matrix ``X`` (C order, n_features columns) or, when ``S`` is not NULL,
    from its stored entries.

    ``gh`` holds the interleaved (gradient, hessian) pairs of all rows.
    ``scratch`` must hold ``plan.n_chunks * n_entries`` entries when
    ``plan.n_chunks > 1``. ``totals`` (if not NULL) gets the rows' sums of g and h,
    summed chunk by chunk like the bins. With ``default_bin`` (then ``totals`` is
    required) every feature's default bin is recovered from the totals
    (``_recover_default_bins``): required for sparse input.
    """
    cdef Py_ssize_t n_entries = bin_offsets[n_features]
    cdef int n_tasks = plan.n_chunks * plan.n_fblocks
    cdef int task, c, fb, f_lo, f_hi, k
    cdef Py_ssize_t lo, hi, b
    cdef hist_entry* dest
    cdef SUM_C sg, sh
    cdef SUM_C chunk_totals[2 * MAX_HIST_CHUNKS]
    cdef SUM_C* chunk_total
    if (n_rows * (S.row_entries if S != NULL else n_features) < MIN_PARALLEL_WORK
            and plan.n_chunks == 1):
        n_threads = 1   # a thread team costs more than the work (the sums do not change)
    # dynamic: a thread that is descheduled (a busy machine) does not hold up the rest
    for task in prange(n_tasks, schedule='dynamic', num_threads=n_threads, nogil=True):
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
        chunk_total = NULL
        if fb == 0:
            chunk_total = &chunk_totals[2 * c]
            chunk_total[0] = 0.0
            chunk_total[1] = 0.0
        memset(dest + bin_offsets[f_lo], 0,
               (bin_offsets[f_hi] - bin_offsets[f_lo]) * sizeof(hist_entry))
        if lo < hi:
            if S != NULL:
                _accumulate_csr(S, rows, lo, hi, gh, bin_offsets, f_lo, f_hi,
                                plan.n_fblocks == 1, dest, chunk_total)
            else:
                _accumulate(X, n_features, rows, lo, hi, gh, bin_offsets, f_lo, f_hi, dest,
                            chunk_total)
    if plan.n_chunks > 1:
        for b in prange(n_entries, schedule='static', num_threads=n_threads, nogil=True):
            sg = 0.0
            sh = 0.0
            for k in range(plan.n_chunks):
                sg = sg + scratch[k * n_entries + b].sum_g
                sh = sh + scratch[k * n_entries + b].sum_h
            out[b].sum_g = sg
            out[b].sum_h = sh
    if totals != NULL:
        sg = 0.0
        sh = 0.0
        for k in range(plan.n_chunks):
            sg = sg + chunk_totals[2 * k]
            sh = sh + chunk_totals[2 * k + 1]
        totals[0] = sg
        totals[1] = sh
        if default_bin != NULL:
            _recover_default_bins(out, bin_offsets, n_features, default_bin, sg, sh, n_threads)


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

def py_build_histogram(X_binned, const IDX_C[::1] rows,
                       const G_H_C[::1] grad, const G_H_C[::1] hess,
                       const int[::1] bin_offsets, int n_threads=1, int max_chunks=16,
                       default_bin=None, bint return_totals=False):
    """Histogram of the given rows as an (n_entries, 2) float64 array [sum_g, sum_h].

    ``X_binned``: a dense uint8 matrix or a ``binning.SparseBinned``;
    ``default_bin``: recover every feature's default bin from the totals (required
    for sparse input); ``return_totals``: also return the rows' (sum_g, sum_h).
    """
    cdef int n_features = bin_offsets.shape[0] - 1
    cdef Py_ssize_t n_entries = bin_offsets[n_features]
    cdef hist_plan plan = make_plan(rows.shape[0], n_features, n_entries, max_chunks, n_threads)
    cdef sparse_binned S
    cdef const X_BINNED_C[:, ::1] dense
    cdef const int64_t[::1] indptr
    cdef const uint32_t[::1] entries
    cdef const uint16_t[::1] entries16
    cdef const X_BINNED_C[::1] defaults
    cdef const X_BINNED_C* X = NULL
    cdef const sparse_binned* S_ptr = NULL
    cdef const X_BINNED_C* default_ptr = NULL
    cdef SUM_C totals[2]
    if isinstance(X_binned, np.ndarray):
        dense = X_binned
        if dense.shape[0] > 0 and dense.shape[1] > 0:
            X = &dense[0, 0]
    else:
        indptr = X_binned.indptr
        S.indptr = &indptr[0]
        S.entries = NULL
        S.entries16 = NULL
        if X_binned.entries.dtype == np.uint16:
            entries16 = X_binned.entries
            if entries16.shape[0] > 0:
                S.entries16 = &entries16[0]
        else:
            entries = X_binned.entries
            if entries.shape[0] > 0:
                S.entries = &entries[0]
        S.row_entries = X_binned.entries.shape[0] / max(indptr.shape[0] - 1, 1)
        S_ptr = &S
        if default_bin is None:
            raise ValueError("sparse input needs default_bin")
    if default_bin is not None:
        defaults = default_bin
        default_ptr = &defaults[0]
    out = np.zeros((n_entries, 2), dtype=np.float64)
    scratch = np.zeros((max(plan.n_chunks, 1) * n_entries, 2), dtype=np.float64)
    gh = interleave(grad, hess)
    cdef double[:, ::1] out_v = out
    cdef double[:, ::1] scratch_v = scratch
    cdef const G_H_C[::1] gh_v = gh
    totals[0] = 0.0
    totals[1] = 0.0
    if n_entries > 0:
        with nogil:
            build_histogram(X, S_ptr, &rows[0] if rows.shape[0] > 0 else NULL, rows.shape[0],
                            &gh_v[0] if gh_v.shape[0] > 0 else NULL, &bin_offsets[0],
                            n_features, <hist_entry*>&out_v[0, 0],
                            <hist_entry*>&scratch_v[0, 0], plan, n_threads,
                            default_ptr, totals)
    if return_totals:
        return out, (totals[0], totals[1])
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
