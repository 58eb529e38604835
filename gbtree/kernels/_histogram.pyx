"""Histogram builders: per-bin sums of gradients and hessians over a node's rows.

A histogram is a flat array of (sum_g, sum_h) entries; feature f owns entries
``bin_offsets[f]:bin_offsets[f + 1]``. The work is cut into tasks (row chunk x
feature block, see ``make_plan``) run with ``prange``; the grower builds the
smaller child and derives its sibling with ``subtract_histograms``.

Gradients and hessians are read as interleaved float32 pairs ``gh[2 r]``,
``gh[2 r + 1]`` (one cache line per row instead of two), the layout in which
the booster has the objectives write them; the rows of a node are read ahead
with software prefetches, since they are a gather.

With quantised gradients (``_quantizer.quantize_into``) a row's value is one int32 that
packs its integer gradient and hessian (16 bits each: half the bytes of a float
pair to gather), and a histogram entry is one int64 that packs their sums
(32 bits each): one integer add per (row, feature) instead of two float adds,
half the histogram memory, and sums that are exact. The
kernels are written once over the fused type ``acc_t`` (a ``hist_entry`` of
doubles, or a packed int64).
"""
from cython.parallel cimport prange
from libc.string cimport memset
from libc.stdint cimport int16_t, int32_t, int64_t, uint16_t, uint32_t

from ._typedefs cimport (X_BINNED_C, G_H_C, IDX_C, hist_entry, entry_t, acc_t,
                         GBT_PREFETCH_L2, gbt_take)

cdef extern from "_unpack.h":
    void gbt_unpack_entries(const int64_t* packed, Py_ssize_t n, double g_step, double h_step,
                            double* out) noexcept nogil

cdef enum:
    # At most this many row chunks (private buffers) per build.
    MAX_HIST_CHUNKS = 64
    # Rows per chunk below which splitting rows across buffers does not pay.
    MIN_CHUNK_ROWS = 16384
    # ... except that from this many rows a node is cut in two chunks: two
    # threads then read different rows (with feature blocks both would fetch
    # every row's cache lines: 1.6x instead of 1.9x on two cores, cold caches).
    MIN_TWO_CHUNK_ROWS = 4096
    # Memory cap for the per-chunk private histograms, in entries.
    MAX_SCRATCH_ENTRIES = 4 * 1024 * 1024
    # Below this many (row, feature) pairs a build runs on one thread.
    MIN_PARALLEL_WORK = 32768
    # How many rows ahead the gather is prefetched.
    PREFETCH_ROWS = 32
    # the same for the stored entries of sparse rows (their offsets twice as far)
    SPARSE_PREFETCH_ROWS = 12
    # Features per pass of the dense kernel (its table of histogram addresses;
    # wider blocks are done in several passes over the rows).
    MAX_TABLE_FEATURES = 256


cdef hist_plan make_plan(Py_ssize_t n_rows, int n_features, Py_ssize_t n_entries,
                         int max_chunks, int n_threads) noexcept nogil:
    cdef hist_plan plan
    cdef Py_ssize_t n_chunks = n_rows // MIN_CHUNK_ROWS
    if n_chunks < 2 and n_rows >= MIN_TWO_CHUNK_ROWS:
        n_chunks = 2
    if n_chunks > max_chunks:
        n_chunks = max_chunks
    if n_chunks > MAX_HIST_CHUNKS:
        n_chunks = MAX_HIST_CHUNKS
    if n_chunks * n_entries > MAX_SCRATCH_ENTRIES:
        n_chunks = MAX_SCRATCH_ENTRIES // n_entries
    # An even count (set by the rows alone, like the rest): with 3, 5 or 7 chunks
    # one of two threads builds a chunk more than the other (a third more time
    # for 3). Builds of 65,536+ row nodes' smaller children, two threads, 60
    # trees of workload 1: 1.87x the root's time instead of 2.02x.
    n_chunks -= n_chunks % 2
    if n_chunks < 2:
        n_chunks = 1
    plan.n_chunks = <int>n_chunks
    plan.scratch_chunks = plan.n_chunks
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
                               const void* value) noexcept nogil:
    # first, middle and last byte: a row of up to 3 cache lines; and its value
    GBT_PREFETCH_L2(row + f_lo)
    GBT_PREFETCH_L2(row + ((f_lo + f_hi) >> 1))
    GBT_PREFETCH_L2(row + f_hi - 1)
    GBT_PREFETCH_L2(value)


cdef inline const void* _value_at(const void* values, Py_ssize_t r,
                                  const acc_t* kind) noexcept nogil:
    # where row r's value is: 4 bytes a row (packed int32) or 8 (a float32 pair)
    if acc_t is int64_t:
        return <const int32_t*>values + r
    else:
        return <const G_H_C*>values + 2 * r


# Values of acc_t are passed and returned by value, so that a sum kept in a local
# stays in registers (through a pointer, GCC kept the OpenMP-outlined ones in memory).

cdef inline acc_t _load(const void* values, Py_ssize_t r, const acc_t* kind) noexcept nogil:
    """Row r's value: its (g, h) float32 pair as doubles, or its int32
    ``g * 2**16 + h`` widened to the int64 ``g * 2**32 + h``."""
    cdef int32_t q
    cdef int64_t h
    cdef acc_t v
    if acc_t is int64_t:
        q = (<const int32_t*>values)[r]
        h = <int16_t><uint16_t>(<uint32_t>q & 0xFFFF)    # the low half, sign-extended
        v = (<int64_t>q - h) * 65536 + h
    else:
        v.sum_g = (<const G_H_C*>values)[2 * r]
        v.sum_h = (<const G_H_C*>values)[2 * r + 1]
    return v


cdef inline acc_t _plus(acc_t a, acc_t b) noexcept nogil:
    if acc_t is int64_t:
        return a + b
    else:
        a.sum_g = a.sum_g + b.sum_g
        a.sum_h = a.sum_h + b.sum_h
        return a


cdef inline acc_t _minus(acc_t a, acc_t b) noexcept nogil:
    if acc_t is int64_t:
        return a - b
    else:
        a.sum_g = a.sum_g - b.sum_g
        a.sum_h = a.sum_h - b.sum_h
        return a


cdef inline acc_t _plus_unless(acc_t a, acc_t b, bint skip) noexcept nogil:
    # adds 0 when ``skip``: branch-free
    if acc_t is int64_t:
        return a + (0 if skip else b)
    else:
        a.sum_g = a.sum_g + (0.0 if skip else b.sum_g)
        a.sum_h = a.sum_h + (0.0 if skip else b.sum_h)
        return a


cdef inline acc_t _zero(const acc_t* kind) noexcept nogil:
    cdef acc_t z
    if acc_t is int64_t:
        z = 0
    else:
        z.sum_g = 0.0
        z.sum_h = 0.0
    return z


cdef inline void _add(acc_t* e, acc_t v) noexcept nogil:
    e[0] = _plus(e[0], v)


cdef inline void _accumulate(const X_BINNED_C* X, Py_ssize_t stride,
                             const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                             const void* values,
                             const int* bin_offsets, int f_lo, int f_hi,
                             acc_t* hist, acc_t* total) noexcept nogil:
    """The rows' values into the histograms of features f_lo..f_hi-1, at most
    ``MAX_TABLE_FEATURES`` features a pass (``_accumulate_block``); the rows'
    values are added to ``total`` (if not NULL) in row order, so that two calls
    on consecutive ranges sum like one."""
    cdef int f = f_lo, f_end
    while f < f_hi:
        f_end = f + MAX_TABLE_FEATURES if f_hi - f > MAX_TABLE_FEATURES else f_hi
        _accumulate_block(X, stride, rows, lo, hi, values, bin_offsets, f, f_end, hist,
                          total if f == f_lo else <acc_t*>NULL)
        f = f_end


cdef inline void _accumulate_block(const X_BINNED_C* X, Py_ssize_t stride,
                                   const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                                   const void* values,
                                   const int* bin_offsets, int f_lo, int f_hi,
                                   acc_t* hist, acc_t* total) noexcept nogil:
    """Rows two at a time: each feature's histogram is found once for both, and a
    bin still receives its rows' values in row order (the same sums).
    ``rows == NULL`` means the rows lo..hi-1 themselves (read in sequence: no
    gather to prefetch). Features are visited two at a time through a table of
    their histograms' addresses (fewer instructions a (row, feature): the
    sequential root build 10 % faster)."""
    cdef Py_ssize_t i, r, r2, pf_end = hi - PREFETCH_ROWS
    cdef int j, n_f = f_hi - f_lo, n_pairs
    cdef acc_t v, v2, t
    cdef const X_BINNED_C* row
    cdef const X_BINNED_C* row2
    cdef acc_t* h0
    cdef acc_t* h1
    cdef acc_t* base[MAX_TABLE_FEATURES]
    cdef bint gather = rows != NULL
    for j in range(n_f):
        base[j] = hist + bin_offsets[f_lo + j]
    n_pairs = n_f >> 1
    t = total[0] if total != NULL else _zero(hist)
    if pf_end < lo or not gather:
        pf_end = lo
    i = lo
    while i < hi:
        if i < pf_end:
            _prefetch_row(X + rows[i + PREFETCH_ROWS] * stride, f_lo, f_hi,
                          _value_at(values, rows[i + PREFETCH_ROWS], hist))
            if i + 1 < pf_end:
                _prefetch_row(X + rows[i + 1 + PREFETCH_ROWS] * stride, f_lo, f_hi,
                              _value_at(values, rows[i + 1 + PREFETCH_ROWS], hist))
        r = rows[i] if gather else i
        v = _load(values, r, hist)
        t = _plus(t, v)
        row = X + r * stride + f_lo
        if i + 1 < hi:
            r2 = rows[i + 1] if gather else i + 1
            v2 = _load(values, r2, hist)
            t = _plus(t, v2)
            row2 = X + r2 * stride + f_lo
            for j in range(n_pairs):
                h0 = base[2 * j]
                h1 = base[2 * j + 1]
                _add(h0 + row[2 * j], v)
                _add(h0 + row2[2 * j], v2)
                _add(h1 + row[2 * j + 1], v)
                _add(h1 + row2[2 * j + 1], v2)
            if n_f & 1:
                h0 = base[n_f - 1]
                _add(h0 + row[n_f - 1], v)
                _add(h0 + row2[n_f - 1], v2)
            i += 2
        else:
            for j in range(n_f):
                _add(base[j] + row[j], v)
            i += 1
    if total != NULL:
        total[0] = t


cdef inline void _accumulate_entries(const int64_t* indptr, const entry_t* entries,
                                     const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                                     const void* values, Py_ssize_t e_lo, Py_ssize_t e_hi,
                                     bint all_features, acc_t* hist,
                                     acc_t* total) noexcept nogil:
    cdef Py_ssize_t i, r, k, b, pf_end = hi - 2 * SPARSE_PREFETCH_ROWS
    cdef acc_t v, t
    t = total[0] if total != NULL else _zero(hist)
    if pf_end < lo:
        pf_end = lo
    for i in range(lo, hi):
        if i < pf_end:
            # two stages: the row's offset first, its entries once that has arrived
            GBT_PREFETCH_L2(indptr + rows[i + 2 * SPARSE_PREFETCH_ROWS])
            r = rows[i + SPARSE_PREFETCH_ROWS]
            # every cache line of the row's entries (rows are scattered in a node);
            # an empty row has none (and entries may be NULL when no row has any)
            if indptr[r + 1] > indptr[r]:
                GBT_PREFETCH_L2(entries + indptr[r])
                GBT_PREFETCH_L2(entries + ((indptr[r] + indptr[r + 1]) >> 1))
                GBT_PREFETCH_L2(entries + indptr[r + 1] - 1)
            GBT_PREFETCH_L2(_value_at(values, r, hist))
        r = rows[i]
        v = _load(values, r, hist)
        t = _plus(t, v)
        if all_features:
            for k in range(indptr[r], indptr[r + 1]):
                _add(hist + entries[k], v)
        else:
            for k in range(indptr[r], indptr[r + 1]):
                b = entries[k]
                if b >= e_lo and b < e_hi:
                    _add(hist + b, v)
    if total != NULL:
        total[0] = t


cdef void _recover_default_bins(acc_t* hist, const int* bin_offsets, int n_features,
                                const X_BINNED_C* default_bin, const acc_t* total,
                                int n_threads) noexcept nogil:
    """Each feature's default-bin entry becomes the node totals minus its other
    entries: the same arithmetic for a dense and a sparse matrix, whose default
    bins are never accumulated (``_recover_feature``)."""
    cdef int f
    if bin_offsets[n_features] < MIN_PARALLEL_WORK or n_threads == 1:
        # (no thread team: the caller may be one thread of its own team)
        for f in range(n_features):
            _recover_feature(hist, bin_offsets[f], bin_offsets[f + 1],
                             bin_offsets[f] + default_bin[f], total)
        return
    for f in prange(n_features, schedule='static', num_threads=n_threads, nogil=True):
        _recover_feature(hist, bin_offsets[f], bin_offsets[f + 1],
                         bin_offsets[f] + default_bin[f], total)


cdef inline void _recover_feature(acc_t* hist, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t d,
                                  const acc_t* total) noexcept nogil:
    """Entry d of the feature's entries lo:hi becomes the total minus the others,
    summed in four interleaved partial sums (bin b into sum b % 4), added as
    (s0 + s1) + (s2 + s3)."""
    cdef Py_ssize_t b = lo
    cdef acc_t s0 = _zero(hist), s1, s2, s3
    s1 = s0
    s2 = s0
    s3 = s0
    while b + 4 <= hi:
        s0 = _plus_unless(s0, hist[b], b == d)
        s1 = _plus_unless(s1, hist[b + 1], b + 1 == d)
        s2 = _plus_unless(s2, hist[b + 2], b + 2 == d)
        s3 = _plus_unless(s3, hist[b + 3], b + 3 == d)
        b = b + 4
    if b < hi:
        s0 = _plus_unless(s0, hist[b], b == d)
    if b + 1 < hi:
        s1 = _plus_unless(s1, hist[b + 1], b + 1 == d)
    if b + 2 < hi:
        s2 = _plus_unless(s2, hist[b + 2], b + 2 == d)
    hist[d] = _minus(total[0], _plus(_plus(s0, s1), _plus(s2, s3)))


cdef inline void _accumulate_range(const X_BINNED_C* X, const sparse_binned* S,
                                   const IDX_C* rows, Py_ssize_t lo, Py_ssize_t hi,
                                   const void* values, const int* bin_offsets, int n_features,
                                   int f_lo, int f_hi, bint all_features, acc_t* dest,
                                   acc_t* total) noexcept nogil:
    # (sparse: the stored entries of the rows only, the default bins filled by
    # ``_recover_default_bins``; uint16 entries when the histogram has at most 65,536)
    if lo >= hi:
        return
    if S == NULL:
        _accumulate(X, n_features, rows, lo, hi, values, bin_offsets, f_lo, f_hi, dest, total)
    elif S.entries16 != NULL:
        _accumulate_entries(S.indptr, S.entries16, rows, lo, hi, values, bin_offsets[f_lo],
                            bin_offsets[f_hi], all_features, dest, total)
    else:
        _accumulate_entries(S.indptr, S.entries, rows, lo, hi, values, bin_offsets[f_lo],
                            bin_offsets[f_hi], all_features, dest, total)


cdef inline Py_ssize_t chunk_buffer(const hist_plan* plan, int c) noexcept nogil:
    """Which of the scratch's buffers chunk ``c`` sums into: the lower half of
    the chunks the first buffers, the upper half the last ones. With two
    threads, one takes the chunks from the first up, the other from the last
    down, whatever their number, so each thread mostly writes the buffers it
    wrote before and holds in its own caches (the same sums)."""
    if 2 * c < plan.n_chunks:
        return c
    return plan.scratch_chunks - plan.n_chunks + c


cdef inline void _build_task(const X_BINNED_C* X, const sparse_binned* S,
                             const IDX_C* rows, Py_ssize_t n_rows, const IDX_C* rows_hi,
                             Py_ssize_t n_lo, const void* values,
                             const int* bin_offsets, int n_features, acc_t* out,
                             acc_t* scratch, hist_plan plan, int task,
                             acc_t* chunk_totals, acc_t* into=NULL,
                             bint clear=True) noexcept nogil:
    """Task ``task`` of ``build_histogram``: one row chunk, one block of features. A
    chunk across the two ranges of the row list sums the first range's rows, then
    the second's, into the same entries: the sums of one list. ``into`` (packed
    sums only, which do not depend on their order): add to that buffer instead
    of the chunk's own, cleared first if ``clear``."""
    cdef Py_ssize_t n_entries = bin_offsets[n_features]
    cdef int c = task // plan.n_fblocks, fb = task % plan.n_fblocks
    cdef int f_lo = <int>((<Py_ssize_t>n_features * fb) // plan.n_fblocks)
    cdef int f_hi = <int>((<Py_ssize_t>n_features * (fb + 1)) // plan.n_fblocks)
    cdef Py_ssize_t lo = c * plan.chunk_rows, hi = lo + plan.chunk_rows
    cdef acc_t* dest = out if plan.n_chunks == 1 else scratch + chunk_buffer(&plan, c) * n_entries
    cdef acc_t* chunk_total = NULL
    cdef bint all_features = plan.n_fblocks == 1
    if into != NULL:
        dest = into
    if hi > n_rows:
        hi = n_rows
    if fb == 0:
        chunk_total = &chunk_totals[c]
        chunk_total[0] = _zero(chunk_total)
    if clear:
        memset(dest + bin_offsets[f_lo], 0,
               (bin_offsets[f_hi] - bin_offsets[f_lo]) * sizeof(acc_t))
    if rows_hi == NULL or hi <= n_lo:
        _accumulate_range(X, S, rows, lo, hi, values, bin_offsets, n_features, f_lo, f_hi,
                          all_features, dest, chunk_total)
    else:
        if lo < n_lo:
            _accumulate_range(X, S, rows, lo, n_lo, values, bin_offsets, n_features, f_lo,
                              f_hi, all_features, dest, chunk_total)
            lo = n_lo
        _accumulate_range(X, S, rows_hi + (lo - n_lo), 0, hi - lo, values, bin_offsets,
                          n_features, f_lo, f_hi, all_features, dest, chunk_total)


cdef inline acc_t _chunk_sum(const acc_t* scratch, const hist_plan* plan,
                             Py_ssize_t n_entries, Py_ssize_t b) noexcept nogil:
    """Entry b of a build in ``plan.n_chunks > 1`` chunks: the chunks' sums in chunk
    order, in a register (stored once)."""
    cdef acc_t total = scratch[b]
    cdef int k
    for k in range(1, plan.n_chunks):
        total = _plus(total, scratch[chunk_buffer(plan, k) * n_entries + b])
    return total


cdef inline acc_t _side_sum(acc_t** buffers, const int* tasks, Py_ssize_t b,
                            const acc_t* kind) noexcept nogil:
    """Entry b of a packed build whose two sides each summed into a buffer of their
    own (a side that took no task left its buffer uncleared)."""
    cdef acc_t total = _zero(kind)
    if tasks[0] > 0:
        total = _plus(total, buffers[0][b])
    if tasks[1] > 0:
        total = _plus(total, buffers[1][b])
    return total


cdef void build_histogram(const X_BINNED_C* X, const sparse_binned* S,
                          const IDX_C* rows, Py_ssize_t n_rows,
                          const IDX_C* rows_hi, Py_ssize_t n_lo,
                          const void* values,
                          const int* bin_offsets, int n_features,
                          acc_t* out, acc_t* scratch,
                          hist_plan plan, int n_threads,
                          const X_BINNED_C* default_bin, acc_t* totals) noexcept nogil:
    """Histogram of ``rows[0:n_rows]`` into ``out`` (overwritten), from the dense
    binned matrix ``X`` (C order, n_features columns) or, when ``S`` is not NULL,
    from its stored entries.

    ``rows == NULL`` (dense ``X`` only) stands for the rows 0..n_rows-1. With
    ``rows_hi`` (not NULL) the list is in two ranges: ``rows[0:n_lo]`` followed by
    ``rows_hi[0:n_rows - n_lo]`` (the grower keeps a node's rows in two halves);
    the sums are those of the joined list.
    ``values`` holds every row's value: interleaved float32 (gradient, hessian)
    pairs for a ``hist_entry`` histogram, packed int32 (``quantize_into``) for
    an int64 one. ``scratch`` must hold ``plan.scratch_chunks * n_entries`` entries
    when ``plan.n_chunks > 1``. ``totals`` (if not NULL) gets the rows' sum,
    summed chunk by chunk like the bins. With ``default_bin`` (then ``totals``
    is required) every feature's default bin is recovered from the totals
    (``_recover_default_bins``): required for sparse input.
    """
    cdef Py_ssize_t n_entries = bin_offsets[n_features]
    cdef int n_tasks = plan.n_chunks * plan.n_fblocks
    cdef int task, side, k
    cdef long long tickets[1]
    cdef long long* next_ticket = &tickets[0]
    cdef Py_ssize_t b
    cdef acc_t chunk_totals[MAX_HIST_CHUNKS]
    cdef acc_t* side_buffer
    cdef acc_t* side_buffers[2]
    cdef int side_tasks[2]
    # Packed sums are exact whatever their order: a thread adds all its chunks into
    # one buffer (fewer buffers to clear and to add up), one thread straight into out.
    cdef bint one_buffer = acc_t is int64_t and plan.n_chunks > 1 and plan.n_fblocks == 1
    if (n_rows * (S.row_entries if S != NULL else n_features) < MIN_PARALLEL_WORK
            and plan.n_chunks == 1):
        n_threads = 1   # a thread team costs more than the work (the sums do not change)
    if one_buffer and n_threads == 2 and n_tasks > 1:
        # as below, each side into its own buffer: the first and the last chunk's
        side_buffers[0] = scratch
        side_buffers[1] = scratch + (plan.scratch_chunks - 1) * n_entries
        side_tasks[0] = 0
        side_tasks[1] = 0
        tickets[0] = 0
        for side in prange(2, schedule='static', num_threads=2, nogil=True):
            k = 0
            side_buffer = side_buffers[side]
            while gbt_take(next_ticket) < n_tasks:
                _build_task(X, S, rows, n_rows, rows_hi, n_lo, values, bin_offsets, n_features,
                            out, scratch, plan, k if side == 0 else n_tasks - 1 - k,
                            chunk_totals, side_buffer, k == 0)
                k = k + 1
            side_tasks[side] = k
        for b in range(n_entries):
            out[b] = _side_sum(side_buffers, side_tasks, b, out)
    elif one_buffer and n_threads == 1:
        for task in range(n_tasks):
            _build_task(X, S, rows, n_rows, rows_hi, n_lo, values, bin_offsets, n_features,
                        out, scratch, plan, task, chunk_totals, out, task == 0)
    elif n_threads == 2 and n_tasks > 1:
        # Two-sided: one thread takes the tasks from the first up, the other from the
        # last down, until they meet (each draws a ticket per task: a thread that is
        # descheduled takes fewer). The first thread reads the lower rows: those
        # whose gradients it wrote (the objectives split the rows in halves, in
        # order), which stay in its core's caches rather than the other core's.
        # (Side 1 runs after side 0 on one thread, and finds every task taken.) Two
        # threads only: the ends of the task list are the two halves of the rows.
        tickets[0] = 0
        for side in prange(2, schedule='static', num_threads=2, nogil=True):
            k = 0
            while gbt_take(next_ticket) < n_tasks:
                _build_task(X, S, rows, n_rows, rows_hi, n_lo, values, bin_offsets, n_features,
                            out, scratch, plan, k if side == 0 else n_tasks - 1 - k,
                            chunk_totals)
                k = k + 1
    elif n_threads == 1:
        # no thread team (the caller may be one thread of its own team: expanding ahead)
        for task in range(n_tasks):
            _build_task(X, S, rows, n_rows, rows_hi, n_lo, values, bin_offsets, n_features,
                        out, scratch, plan, task, chunk_totals)
    else:
        # dynamic: a thread that is descheduled (a busy machine) does not hold up the rest
        for task in prange(n_tasks, schedule='dynamic', num_threads=n_threads, nogil=True):
            _build_task(X, S, rows, n_rows, rows_hi, n_lo, values, bin_offsets, n_features,
                        out, scratch, plan, task, chunk_totals)
    if one_buffer and n_threads <= 2:
        pass   # (summed above)
    elif plan.n_chunks > 1 and n_threads == 1:
        for b in range(n_entries):
            out[b] = _chunk_sum(scratch, &plan, n_entries, b)
    elif plan.n_chunks > 1:
        for b in prange(n_entries, schedule='static', num_threads=n_threads, nogil=True):
            out[b] = _chunk_sum(scratch, &plan, n_entries, b)
    if totals != NULL:
        totals[0] = chunk_totals[0]
        for k in range(1, plan.n_chunks):
            totals[0] = _plus(totals[0], chunk_totals[k])
        if default_bin != NULL:
            _recover_default_bins(out, bin_offsets, n_features, default_bin, totals, n_threads)


cdef void subtract_histograms(acc_t* parent, const acc_t* child,
                              Py_ssize_t n_entries, int n_threads) noexcept nogil:
    """``parent -= child``: the parent's buffer becomes the sibling's histogram."""
    cdef Py_ssize_t b
    if n_entries < MIN_PARALLEL_WORK or n_threads == 1:
        # (no thread team: the caller may be one thread of its own team)
        for b in range(n_entries):
            parent[b] = _minus(parent[b], child[b])
        return
    for b in prange(n_entries, schedule='static', num_threads=n_threads, nogil=True):
        parent[b] = _minus(parent[b], child[b])


cdef void unpack_histogram(const int64_t* packed, Py_ssize_t n_entries, const double* scales,
                           hist_entry* out) noexcept nogil:
    """A packed histogram as sums of gradients and hessians (``gbt_unpack_entries``):
    each entry's integer parts times the quantisation steps ``scales[0]``, ``scales[1]``."""
    gbt_unpack_entries(packed, n_entries, scales[0], scales[1], &out[0].sum_g)
