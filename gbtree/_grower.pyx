"""Grow one regression tree on the binned matrix, entirely without the GIL.

Nodes are expanded one at a time from a list of open leaves: depthwise takes
them first-in first-out (which yields the level-by-level tree), lossguide takes
the one with the largest gain (ties: the oldest). For each split the rows are
partitioned in place, the smaller child's histogram is built and the larger
child's is derived from the parent's by subtraction. When the tree is done the
raw predictions of the training rows are updated from the partition (each
thread its own block of rows, found in every leaf), without walking the tree
again; with two threads or more, a thread that had nothing to expand has
already added the values of the leaves that were final by then
(``_early_update``).

With two threads or more, open nodes of fewer than ``AHEAD_MAX_ROWS`` rows are
expanded ahead, each on one thread: the nodes are still split in the order
above, the next best ones are queued, and every thread takes the next
expansion from the queue as soon as it is free (partition, the children's
histograms, their best splits); an expanded node waits until the order picks
it, and the thread that finishes the expansion of the node whose turn it is
makes the split and picks the next (see ``_expand_rows`` and ``_phase``).
Larger nodes are expanded one at a time with every thread on each step. The
tree is the same either way, at any thread count.

The binned matrix is dense (uint8, C order) or a ``binning.SparseBinned``; with
sparse input the histograms read the stored entries only and the partition
reads the split feature's stored entries. Histograms are kept per open node up
to a memory budget (``GrowerParams.hist_memory_bytes``): a node whose histogram
was dropped builds both children's histograms instead of subtracting.

With ``quant_levels`` > 0 the gradients and hessians of each tree are quantised
to integers (``_histogram.quantize_into``, LightGBM's quantised training): the
histograms hold packed int64 sums, which are exact, and are unpacked to floats
feature by feature inside the split scan. The splits are chosen on the quantised sums; when
the tree is done its node sums, leaf values and covers are recomputed from the
exact gradients (``_update_raw``).
"""
import numpy as np

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport log, isfinite, INFINITY
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libcpp.algorithm cimport nth_element, sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector

from ._typedefs cimport (X_BINNED_C, G_H_C, SUM_C, IDX_C, hist_entry, node_struct,
                         splitmix64, GBT_PREFETCH, unpack_entry, first_at_least)
from ._histogram cimport (hist_plan, make_plan, build_histogram, subtract_histograms,
                          quantize_into, sparse_binned)
from ._splitting cimport (split_params, split_info, find_best_split, partition,
                          sparse_feature, leaf_weight, bounded_weight, MAX_PARTITION_CHUNKS,
                          MIN_PARALLEL_ENTRIES, MIN_PARTITION_ROWS)
from ._typedefs import NODE_DTYPE


# A lock for the queue of expansions (OpenMP's; none without OpenMP, where one
# thread does everything) and a pause for the threads that wait on it.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    typedef omp_lock_t gbt_lock_t;
    static void gbt_lock_init(gbt_lock_t* l) { omp_init_lock(l); }
    static void gbt_lock_destroy(gbt_lock_t* l) { omp_destroy_lock(l); }
    static void gbt_lock(gbt_lock_t* l) { omp_set_lock(l); }
    static void gbt_unlock(gbt_lock_t* l) { omp_unset_lock(l); }
    #else
    typedef int gbt_lock_t;
    static void gbt_lock_init(gbt_lock_t* l) { (void)l; }
    static void gbt_lock_destroy(gbt_lock_t* l) { (void)l; }
    static void gbt_lock(gbt_lock_t* l) { (void)l; }
    static void gbt_unlock(gbt_lock_t* l) { (void)l; }
    #endif
    #if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
    #include <immintrin.h>
    #define GBT_PAUSE() _mm_pause()
    #else
    #define GBT_PAUSE() ((void)0)
    #endif
    """
    ctypedef struct gbt_lock_t:
        pass
    void gbt_lock_init(gbt_lock_t* l) noexcept nogil
    void gbt_lock_destroy(gbt_lock_t* l) noexcept nogil
    void gbt_lock(gbt_lock_t* l) noexcept nogil
    void gbt_unlock(gbt_lock_t* l) noexcept nogil
    void GBT_PAUSE() noexcept nogil


cdef enum:
    # Histogram slots a grower keeps at least, whatever its memory budget
    # (``hist_memory_bytes``): a parent and its two children.
    MIN_SLOTS = 3
    # How many rows ahead the raw-score update prefetches a leaf's rows: they are
    # scattered, so far enough for a load from memory to arrive in time
    PREFETCH_ROWS = 64
    # Expansions queued or running at once: TASKS_PER_THREAD per thread, at most
    # MAX_AHEAD_TASKS (which also bounds those waiting for their turn); threads
    # with their own buffers: at most MAX_AHEAD_THREADS.
    TASKS_PER_THREAD = 3
    MAX_AHEAD_TASKS = 16
    MAX_AHEAD_THREADS = 8
    # an expansion's status (see TreeGrower._work)
    FREE = 0
    QUEUED = 1
    RUNNING = 2
    DONE = 3
    FINISHED = 4
    # Pauses between two looks at an empty queue.
    IDLE_PAUSES = 32
    # Nodes with fewer rows are expanded ahead, each on one thread (larger ones are
    # expanded one at a time, each on every thread).
    AHEAD_MAX_ROWS = 65536
    # Rows per block of the parallel transpose (``columns_of``): the block's rows,
    # 4096 x n_features bytes, stay in L2 while its columns are written.
    TRANSPOSE_ROWS = 4096
    # Below this many rows the raw-score update runs on one thread.
    MIN_PARALLEL_UPDATE = 16384


cdef void _sample_features(const unsigned char* among, unsigned char* out, int n_features,
                           double fraction, const double* weights, uint64_t key) noexcept nogil:
    """``out`` = a random subset of the features in ``among``: ``max(1, floor(fraction * n))``
    of its n features, drawn without replacement with probability proportional to
    ``weights`` (Efraimidis-Spirakis keys ``log(u) / w``); the draw depends only on ``key``."""
    cdef vector[pair[double, int]] keys
    cdef int f, n = 0, k
    cdef double u
    for f in range(n_features):
        out[f] = 0
        if among[f] and (weights == NULL or weights[f] > 0):
            n += 1
            u = ((splitmix64(key * <uint64_t>1000003 + <uint64_t>f) >> 11) + 0.5) * (1.0 / 9007199254740992.0)
            # negated so that an ascending sort puts the chosen keys first
            keys.push_back(pair[double, int](-(log(u) / (weights[f] if weights != NULL else 1.0)), f))
    k = <int>(fraction * n)
    if k < 1:
        k = 1
    if k >= n:
        for f in range(n_features):
            out[f] = among[f] and (weights == NULL or weights[f] > 0)
        return
    sort(keys.begin(), keys.end())
    for f in range(k):
        out[keys[f].second] = 1


cdef struct node_state:
    # The node's rows, increasing: rows[lo[0]:hi[0]] (in the row array's first
    # half), then rows[lo[1]:hi[1]] (in its second half); see TreeGrower._grow.
    Py_ssize_t lo[2]
    Py_ssize_t hi[2]
    SUM_C sum_g
    SUM_C sum_h
    int depth
    int slot              # histogram slot, -1 when the node has none
    double lower          # bounds on the node's weight (monotone constraints)
    double upper
    split_info split      # split.feature == -1: the node stays a leaf
    int ahead             # its entry in TreeGrower.ahead when expanded ahead, else -1
    bint raw_done         # a final leaf whose raw scores were updated during the tree


cdef inline void _init_state(node_state* st, Py_ssize_t lo0, Py_ssize_t hi0, Py_ssize_t lo1,
                             Py_ssize_t hi1, SUM_C sum_g, SUM_C sum_h, int depth) noexcept nogil:
    st.lo[0] = lo0
    st.hi[0] = hi0
    st.lo[1] = lo1
    st.hi[1] = hi1
    st.sum_g = sum_g
    st.sum_h = sum_h
    st.depth = depth
    st.slot = -1
    st.lower = -INFINITY
    st.upper = INFINITY
    st.split.feature = -1
    st.split.gain = 0.0
    st.ahead = -1
    st.raw_done = False


cdef inline Py_ssize_t _n_rows(const node_state* st) noexcept nogil:
    return (st.hi[0] - st.lo[0]) + (st.hi[1] - st.lo[1])


cdef inline void _add_to_rows(double* raw, Py_ssize_t stride, const IDX_C* rows,
                              Py_ssize_t a, Py_ssize_t b, double v) noexcept nogil:
    """``raw[rows[i] * stride] += v`` for i in a..b-1 (a leaf's rows are scattered:
    their scores are prefetched)."""
    cdef Py_ssize_t i
    for i in range(a, b):
        if i + PREFETCH_ROWS < b:
            GBT_PREFETCH(raw + rows[i + PREFETCH_ROWS] * stride)
        raw[rows[i] * stride] += v


cdef inline bint _may_go_ahead(const node_state* st) noexcept nogil:
    """Whether an open node may be expanded ahead: not yet, and small."""
    return st.ahead < 0 and _n_rows(st) < AHEAD_MAX_ROWS


cdef int _check_sample(const IDX_C* sample, Py_ssize_t n, Py_ssize_t n_rows) noexcept nogil:
    """0 when sample[0:n] is strictly increasing and below n_rows (the partition
    and the raw-score update rely on increasing rows), else -1."""
    cdef Py_ssize_t i
    if sample[n - 1] >= n_rows:
        return -1
    for i in range(1, n):
        if sample[i] <= sample[i - 1]:
            return -1
    return 0


cdef void _keep_first(vector[pair[double, int]]& order, int n_keep, vector[int]& kept,
                      vector[int]& dropped) noexcept nogil:
    """Split the (key, node) pairs of ``order`` (distinct nodes) into the ``n_keep``
    first by (key, node) and the others: their nodes into ``kept`` and ``dropped``,
    each in increasing node order. ``order`` is reordered, without a full sort
    (``_drop_hopeless`` runs this after most splits of a large tree)."""
    cdef pair[double, int] last
    cdef int k, n = <int>order.size()
    kept.clear()
    dropped.clear()
    if n_keep > 0 and n_keep < n:
        # the last pair kept: the n_keep-th in that order
        nth_element(order.begin(), order.begin() + (n_keep - 1), order.end())
        last = order[n_keep - 1]
    for k in range(n):
        if n_keep >= n or (n_keep > 0 and (
                order[k].first < last.first
                or (order[k].first == last.first and order[k].second <= last.second))):
            kept.push_back(order[k].second)
        else:
            dropped.push_back(order[k].second)
    sort(kept.begin(), kept.end())
    sort(dropped.begin(), dropped.end())


cdef struct expansion:
    # One split being expanded (see TreeGrower._expand_rows).
    int parent            # the node split; -1: a free entry
    int n_leaves          # leaves once it is split; -1: not known yet (expanded ahead)
    Py_ssize_t n_left     # the left child's rows
    Py_ssize_t left_in[2]   # ... of them in each half of the row array
    node_state child[2]   # left, right (until they are committed)
    int spare[2]          # histogram slots taken for the children, -1: none
    int release           # slot to give back after the expansion, -1: none
    int extra             # slots held beyond the parent's one (spares until finished)
    int had_slot          # the parent had a histogram when it was queued
    int status            # FREE, QUEUED, RUNNING, DONE (not finished yet), FINISHED


cdef inline void _free_entry(expansion* e) noexcept nogil:
    e.parent = -1
    e.status = FREE


cdef class TreeGrower:
    """Buffers for growing trees on one binned matrix; ``grow`` builds one tree.

    Parameters
    ----------
    X_binned : uint8 array (n_rows, n_features), C order, or binning.SparseBinned
    n_bins, bin_offsets : int32 arrays from ``BinMapper``
    bin_thresholds : float64 array from ``BinMapper.bin_thresholds()``
    max_depth, max_leaves : int (0 = no limit)
    lossguide : bool
    reg_lambda, reg_alpha, min_child_weight, max_delta_step, gamma : float
    n_threads : int
    default_bin : uint8 array (n_features,) or None
        Each feature's default bin (``BinMapper.default_bins``): its histogram
        entry is recovered from the node totals. Required for sparse input.
    """
    cdef const X_BINNED_C[:, ::1] X_binned
    cdef const X_BINNED_C[:, ::1] X_columns   # X_binned transposed, for the partition
    cdef const X_BINNED_C* X_ptr              # dense: &X_binned[0, 0]; NULL when sparse
    cdef bint is_sparse
    cdef sparse_binned S                      # sparse: the row-wise entries
    cdef const int64_t[::1] s_indptr
    cdef const uint32_t[::1] s_entries
    cdef const uint16_t[::1] s_entries16
    cdef bint has_columns                     # sparse: a column-wise copy exists
    cdef const int64_t[::1] col_ptr
    cdef const uint32_t[::1] col_rows
    cdef const X_BINNED_C[::1] col_bins
    cdef const int32_t[::1] dense_index       # sparse: row of dense_cols holding feature f, or -1
    cdef const X_BINNED_C[:, ::1] dense_cols
    cdef const X_BINNED_C[::1] default_bin_v
    cdef const X_BINNED_C* default_bin
    cdef int max_slots
    cdef const int[::1] n_bins
    cdef const int[::1] bin_offsets
    cdef const double[::1] bin_thresholds
    cdef int n_features
    cdef Py_ssize_t n_rows, n_entries
    cdef IDX_C[::1] rows
    cdef IDX_C[::1] buffer
    cdef const G_H_C* pairs       # the current tree's interleaved (gradient, hessian) pairs
    cdef object pair_copy         # (n_rows, 2) float32: pairs made when grow() gets two
                                  # separate arrays (made on first use)
    cdef int32_t[::1] packed_values   # (quantised) the current tree's packed int32 row values
    cdef const void* values       # what the histograms read: pairs or packed_values
    cdef int quant_levels         # 0: float gradients
    cdef double quant_steps[2]    # the current tree's gradient and hessian steps
    cdef Py_ssize_t entry_bytes   # of a histogram entry: 16 (floats) or 8 (packed)
    cdef bint all_rows            # the current tree is grown on every row
    cdef Py_ssize_t[::1] chunk_counts   # MAX_PARTITION_CHUNKS per thread
    cdef vector[hist_entry*] slots   # packed int64 entries when quantised
    cdef vector[int] free_slots
    cdef hist_entry* scratch
    cdef int scratch_chunks   # chunk buffers in ``scratch`` (the root's chunks)
    cdef split_info* per_feature   # n_features per thread (at least 2)
    # expanding ahead: threads with buffers, their scratch beyond thread 0's,
    # the expanded nodes waiting for their turn
    cdef int ahead_threads
    cdef char* task_scratch
    cdef Py_ssize_t task_scratch_bytes
    cdef vector[expansion] ahead
    cdef int ahead_extra              # slots held by waiting expansions beyond their parents'
    # the queue (entries of ``ahead``, in the order they are to run), under ``lock``
    cdef gbt_lock_t lock
    cdef bint lock_ready
    cdef int queue[MAX_AHEAD_TASKS]
    cdef int n_queued
    cdef int n_in_flight              # queued or running
    cdef bint queue_closed            # no phase runs (or it is ending)
    cdef vector[int]* phase_nodes     # the phase's open nodes
    cdef int* phase_leaves            # ... its leaf count
    cdef double phase_lr              # ... its learning rate
    cdef int turn                     # the open node to be split next (queued or expanded), or -1
    cdef int advance_tid              # the thread in ``_advance``
    # Final leaves whose raw scores a waiting thread may update before the tree is
    # done (``_early_update``): the raw scores of the tree's output (stride
    # ``raw_stride``; NULL: none), the leaves, and the next one to take.
    cdef double* raw_ptr
    cdef Py_ssize_t raw_stride
    cdef vector[int] final_leaves
    cdef vector[pair[double, int]] hopeless   # ``_drop_hopeless``'s scratch
    cdef vector[int] closing                  # ... the nodes it closes
    cdef int next_final
    cdef int feed_max                 # expansions queued or running at most
    cdef int phase_commits            # splits committed by the last expand-ahead phase
    cdef bint phase_error             # ... which could not allocate a buffer
    cdef public Py_ssize_t n_ahead_expanded, n_ahead_undone
    cdef int max_chunks
    cdef int max_depth, max_leaves
    cdef bint lossguide
    # engine options (GrowerParams): expand small nodes ahead, the queue's last
    # expansion first (tests: the node whose turn it is then waits behind nodes
    # expanded ahead), close the open nodes the leaf budget cannot reach
    cdef bint expand_ahead, ahead_lifo, drop_hopeless
    cdef split_params params
    cdef public int n_threads
    cdef vector[node_struct] nodes
    cdef vector[node_state] states
    # column sampling and interaction constraints (all optional)
    cdef double colsample_bytree, colsample_bylevel, colsample_bynode
    cdef const double* feature_weights
    cdef object _feature_weights_ref
    cdef bint sampling_columns
    cdef int n_groups                       # interaction constraint groups, 0 = none
    cdef vector[unsigned char] membership   # n_features x n_groups
    cdef vector[unsigned char] listed       # feature appears in some group
    cdef vector[unsigned char] node_groups  # per node: groups compatible with its path
    cdef vector[int] node_solo              # per node: the unlisted feature on its path, or -1
    cdef uint64_t seed
    cdef vector[unsigned char] tree_mask
    cdef vector[vector[unsigned char]] level_masks
    cdef vector[unsigned char] node_mask
    cdef vector[unsigned char] scratch_mask
    cdef vector[unsigned char] all_mask
    cdef vector[signed char] monotone       # per feature -1 / 0 / +1, empty = none

    def __cinit__(self, X_binned, const int[::1] n_bins,
                  const int[::1] bin_offsets, const double[::1] bin_thresholds,
                  params, int n_threads, default_bin=None):
        """``params``: a ``grower_params.GrowerParams``; ``default_bin``: each
        feature's default bin (sparse input)."""
        cdef hist_plan plan
        cdef const double[::1] fw
        cdef int f, g
        cdef int quant_levels = params.quant_levels, max_chunks = params.max_chunks
        cdef double colsample_bytree = params.colsample_bytree
        cdef double colsample_bylevel = params.colsample_bylevel
        cdef double colsample_bynode = params.colsample_bynode
        feature_weights = params.feature_weights
        interaction_groups = params.interaction_groups
        monotone_constraints = params.monotone_constraints
        self.expand_ahead = params.expand_ahead
        self.ahead_lifo = params.ahead_lifo
        self.drop_hopeless = params.drop_hopeless
        self.is_sparse = not isinstance(X_binned, np.ndarray)
        self.n_rows = X_binned.shape[0]
        self.n_features = X_binned.shape[1]
        self.X_ptr = NULL
        if self.is_sparse:
            if default_bin is None:
                raise ValueError("sparse input needs default_bin")
            self.s_indptr = X_binned.indptr
            self.S.indptr = &self.s_indptr[0]
            self.S.entries = NULL
            self.S.entries16 = NULL
            if X_binned.entries.dtype == np.uint16:
                self.s_entries16 = X_binned.entries
                if self.s_entries16.shape[0] > 0:
                    self.S.entries16 = &self.s_entries16[0]
            else:
                self.s_entries = X_binned.entries
                if self.s_entries.shape[0] > 0:
                    self.S.entries = &self.s_entries[0]
            self.S.row_entries = X_binned.entries.shape[0] / max(self.n_rows, 1)
            self.has_columns = X_binned.col_ptr is not None
            if self.has_columns:
                self.col_ptr = X_binned.col_ptr
                self.col_rows = X_binned.col_rows
                self.col_bins = X_binned.col_bins
            self.dense_index = X_binned.dense_index
            self.dense_cols = X_binned.dense_cols
        else:
            self.X_binned = X_binned
            self.X_columns = columns_of(X_binned, n_threads)
            if self.n_rows > 0 and self.n_features > 0:
                self.X_ptr = &self.X_binned[0, 0]
        self.default_bin = NULL
        if default_bin is not None:
            self.default_bin_v = np.ascontiguousarray(default_bin, dtype=np.uint8)
            self.default_bin = &self.default_bin_v[0] if self.n_features > 0 else NULL
        self.n_bins = n_bins
        self.bin_offsets = bin_offsets
        self.bin_thresholds = bin_thresholds
        self.n_entries = bin_offsets[self.n_features]
        if quant_levels < 0 or quant_levels == 1 or quant_levels > 32766:
            raise ValueError(f"quant_levels must be 0 or in 2..32766, got {quant_levels}")
        self.quant_levels = quant_levels
        self.entry_bytes = sizeof(int64_t) if quant_levels > 0 else sizeof(hist_entry)
        self.max_slots = max(MIN_SLOTS, <Py_ssize_t>params.hist_memory_bytes // max(
            self.n_entries * self.entry_bytes, 1))
        self.max_depth = params.max_depth
        self.max_leaves = params.max_leaves
        self.lossguide = params.lossguide
        self.params.reg_lambda = params.reg_lambda
        self.params.reg_alpha = params.reg_alpha
        self.params.min_child_weight = params.min_child_weight
        self.params.max_delta_step = params.max_delta_step
        self.params.gamma = params.gamma
        self.params.plain_scan = params.plain_scan
        self.n_threads = n_threads
        self.rows = np.empty(self.n_rows, dtype=np.uint32)
        self.buffer = np.empty(self.n_rows, dtype=np.uint32)
        if quant_levels > 0:
            self.packed_values = np.empty(max(self.n_rows, 1), dtype=np.int32)
        plan = make_plan(self.n_rows, self.n_features, self.n_entries, max_chunks, n_threads)
        self.max_chunks = max_chunks
        self.scratch_chunks = max(plan.n_chunks, 1)
        self.scratch = <hist_entry*>malloc(self.scratch_chunks * self.n_entries * self.entry_bytes)
        if self.scratch == NULL:
            raise MemoryError()
        self.per_feature = NULL
        self.task_scratch = NULL
        self.task_scratch_bytes = 0
        self.ahead_threads = 0
        gbt_lock_init(&self.lock)
        self.lock_ready = True
        self._ensure_tasks()
        self.ahead.resize(MAX_AHEAD_TASKS)
        self.colsample_bytree = colsample_bytree
        self.colsample_bylevel = colsample_bylevel
        self.colsample_bynode = colsample_bynode
        self.feature_weights = NULL
        if feature_weights is not None:
            self._feature_weights_ref = np.ascontiguousarray(feature_weights, dtype=np.float64)
            fw = self._feature_weights_ref
            self.feature_weights = &fw[0]
        self.sampling_columns = (colsample_bytree < 1.0 or colsample_bylevel < 1.0
                                 or colsample_bynode < 1.0 or feature_weights is not None)
        self.n_groups = 0
        if interaction_groups is not None:
            groups = [sorted(set(int(f) for f in grp)) for grp in interaction_groups]
            self.n_groups = len(groups)
            self.membership.assign(self.n_features * self.n_groups, 0)
            self.listed.assign(self.n_features, 0)
            for g, grp in enumerate(groups):
                for f in grp:
                    self.membership[f * self.n_groups + g] = 1
                    self.listed[f] = 1
        self.tree_mask.assign(self.n_features, 1)
        self.node_mask.assign(2 * self.n_features, 1)      # one per concurrent evaluation
        self.scratch_mask.assign(2 * self.n_features, 1)
        self.all_mask.assign(self.n_features, 1)
        if monotone_constraints is not None and any(monotone_constraints):
            self.monotone.assign(self.n_features, 0)
            for f in range(self.n_features):
                self.monotone[f] = <signed char>monotone_constraints[f]

    def __dealloc__(self):
        cdef size_t i
        if self.lock_ready:
            gbt_lock_destroy(&self.lock)
        for i in range(self.slots.size()):
            free(self.slots[i])
        free(self.scratch)
        free(self.per_feature)
        free(self.task_scratch)

    def _ensure_tasks(self):
        """Per-thread buffers for expanding nodes ahead on min(n_threads,
        MAX_AHEAD_THREADS) threads (a thread works on one node at a time)."""
        cdef int threads = max(1, min(self.n_threads, MAX_AHEAD_THREADS))
        cdef hist_plan plan = make_plan(AHEAD_MAX_ROWS - 1, self.n_features, self.n_entries,
                                         self.max_chunks, 1)
        cdef Py_ssize_t scratch_bytes = plan.n_chunks * self.n_entries * self.entry_bytes
        cdef split_info* per_feature
        cdef char* task_scratch
        if threads <= self.ahead_threads and scratch_bytes <= self.task_scratch_bytes:
            return
        per_feature = <split_info*>malloc(max(threads, 2) * max(self.n_features, 1)
                                          * sizeof(split_info))
        task_scratch = NULL
        if threads > 1:
            task_scratch = <char*>malloc((threads - 1) * scratch_bytes)
        if per_feature == NULL or (threads > 1 and task_scratch == NULL):
            free(per_feature)
            free(task_scratch)
            raise MemoryError()
        free(self.per_feature)
        free(self.task_scratch)
        self.per_feature = per_feature
        self.task_scratch = task_scratch
        self.task_scratch_bytes = scratch_bytes
        self.chunk_counts = np.empty(threads * MAX_PARTITION_CHUNKS, dtype=np.intp)
        self.ahead_threads = threads

    cdef inline int _held_slots(self) noexcept nogil:
        return <int>(self.slots.size() - self.free_slots.size())

    cdef int _acquire_slot(self) noexcept nogil:
        cdef int s
        cdef hist_entry* buf
        if self.free_slots.size() > 0:
            s = self.free_slots.back()
            self.free_slots.pop_back()
            return s
        buf = <hist_entry*>malloc(self.n_entries * self.entry_bytes)
        if buf == NULL:
            return -1
        self.slots.push_back(buf)
        return <int>self.slots.size() - 1

    @property
    def n_histogram_buffers(self):
        """How many histogram buffers this grower has allocated: the most it held at
        once while growing its trees (tests, memory)."""
        return self.slots.size()

    cdef inline void _release_slot(self, int s) noexcept nogil:
        if s >= 0:
            self.free_slots.push_back(s)

    cdef void _build_state(self, node_state* st, bint root, hist_entry* scratch,
                           int n_threads) noexcept nogil:
        """The histogram of the node ``st`` into its slot (``root``: the sums too)."""
        cdef Py_ssize_t n = _n_rows(st)
        cdef hist_plan plan = make_plan(n, self.n_features, self.n_entries, self.max_chunks,
                                         n_threads)
        cdef hist_entry totals
        cdef int64_t packed_totals
        if scratch == self.scratch and n_threads > 1:
            # a build on every thread: its chunks at both ends of the root's
            # buffers (``chunk_buffer``); thread 0's own builds (expanding ahead)
            # keep the first buffers
            plan.scratch_chunks = self.scratch_chunks
        # the node's two ranges, read as one list
        cdef const IDX_C* rows = &self.rows[0] + st.lo[0]
        cdef const IDX_C* rows_hi = &self.rows[0] + st.lo[1]
        if root and self.all_rows and not self.is_sparse:
            # a dense root of all rows reads them in sequence (no row list)
            rows = NULL
            rows_hi = NULL
        if self.quant_levels > 0:
            build_histogram(self.X_ptr, &self.S if self.is_sparse else NULL,
                            rows, n, rows_hi, st.hi[0] - st.lo[0], self.values,
                            &self.bin_offsets[0], self.n_features,
                            <int64_t*>self.slots[st.slot], <int64_t*>scratch, plan,
                            n_threads, self.default_bin, &packed_totals)
            unpack_entry(packed_totals, self.quant_steps, &totals)
        else:
            build_histogram(self.X_ptr, &self.S if self.is_sparse else NULL,
                            rows, n, rows_hi, st.hi[0] - st.lo[0], self.values,
                            &self.bin_offsets[0], self.n_features,
                            self.slots[st.slot], scratch, plan, n_threads,
                            self.default_bin, &totals)
        if root:
            st.sum_g = totals.sum_g
            st.sum_h = totals.sum_h

    cdef bint _may_split(self, const node_state* st, int n_leaves) noexcept nogil:
        """Whether a node may be split: depth, rows and, unless ``n_leaves`` < 0,
        the leaf budget."""
        if self.max_depth > 0 and st.depth >= self.max_depth:
            return False
        if self.max_leaves > 0 and n_leaves >= self.max_leaves:
            return False
        return _n_rows(st) >= 2

    cdef void _ensure_level(self, int d) noexcept nogil:
        """Draw the column sample of depth levels up to ``d`` (serially, before use)."""
        if not self.sampling_columns or self.colsample_bylevel >= 1.0:
            return
        while <int>self.level_masks.size() <= d:
            self.level_masks.push_back(self.all_mask)
            _sample_features(&self.tree_mask[0],
                             &self.level_masks[self.level_masks.size() - 1][0],
                             self.n_features, self.colsample_bylevel, self.feature_weights,
                             splitmix64(self.seed ^ (<uint64_t>0x51ED27 + self.level_masks.size())))

    cdef const unsigned char* _allowed(self, int node, int task) noexcept nogil:
        """Features the node may split on, or NULL for all of them. Writes only the
        mask buffers of ``task``; the level samples must exist (``_ensure_level``)."""
        cdef int f, g, d = self.states[node].depth, solo
        cdef const unsigned char* base
        cdef unsigned char* node_mask = &self.node_mask[task * self.n_features]
        cdef unsigned char* out = &self.scratch_mask[task * self.n_features]
        cdef bint any_group
        if not self.sampling_columns and self.n_groups == 0:
            return NULL
        base = &self.tree_mask[0]
        if self.sampling_columns:
            if self.colsample_bylevel < 1.0:
                base = &self.level_masks[d][0]
            if self.colsample_bynode < 1.0:
                _sample_features(base, node_mask, self.n_features, self.colsample_bynode,
                                 self.feature_weights,
                                 splitmix64(self.seed ^ (<uint64_t>0xA5A5A5A5 * (<uint64_t>node + 1))))
                base = node_mask
        if self.n_groups == 0 or node == 0:
            return base
        solo = self.node_solo[node]
        for f in range(self.n_features):
            if solo >= 0:
                out[f] = base[f] and f == solo
            else:
                any_group = False
                for g in range(self.n_groups):
                    if (self.node_groups[node * self.n_groups + g]
                            and self.membership[f * self.n_groups + g]):
                        any_group = True
                        break
                out[f] = base[f] and any_group
        return out

    cdef void _constrain_children(self, int parent, int f, int left, int right) noexcept nogil:
        """Interaction constraints: the children's paths add feature f."""
        cdef int g, k, child
        cdef int solo = self.node_solo[parent]
        self.node_solo.resize(right + 1, -1)
        self.node_groups.resize((right + 1) * self.n_groups, 0)
        for child in range(left, right + 1):
            if parent == 0 and not self.listed[f]:
                self.node_solo[child] = f
            else:
                self.node_solo[child] = solo
            for g in range(self.n_groups):
                k = parent * self.n_groups + g
                self.node_groups[child * self.n_groups + g] = (
                    self.membership[f * self.n_groups + g]
                    and (parent == 0 or self.node_groups[k]))

    cdef void _bound_children(self, int parent, int f, int left, int right,
                              double learning_rate) noexcept nogil:
        """Monotone constraints (XGBoost's rule): the children's weights are clipped to
        the parent's bounds, and a constrained split puts their midpoint between them."""
        cdef double lo = self.states[parent].lower, up = self.states[parent].upper, mid
        cdef double wl = bounded_weight(self.states[left].sum_g, self.states[left].sum_h,
                                        &self.params, lo, up)
        cdef double wr = bounded_weight(self.states[right].sum_g, self.states[right].sum_h,
                                        &self.params, lo, up)
        cdef int c = self.monotone[f]
        self.states[left].lower = lo
        self.states[left].upper = up
        self.states[right].lower = lo
        self.states[right].upper = up
        mid = 0.5 * (wl + wr)
        if c > 0:
            self.states[left].upper = mid
            self.states[right].lower = mid
        elif c < 0:
            self.states[left].lower = mid
            self.states[right].upper = mid
        self.nodes[left].value = learning_rate * wl
        self.nodes[right].value = learning_rate * wr

    cdef void _evaluate(self, node_state* st, int node, split_info* scratch, int n_threads,
                        int task) noexcept nogil:
        # ``task`` picks the mask buffers (two nodes may be evaluated at once); ``node``
        # (the node's id, for the masks) is -1 when no mask is needed (expand-ahead)
        cdef const unsigned char* allowed = self._allowed(node, task) if node >= 0 else NULL
        cdef bint quantised = self.quant_levels > 0
        st.split = find_best_split(self.slots[st.slot], &self.n_bins[0], &self.bin_offsets[0],
                                   self.n_features, st.sum_g, st.sum_h, &self.params,
                                   scratch, n_threads, allowed,
                                   &self.monotone[0] if self.monotone.size() > 0 else NULL,
                                   st.lower, st.upper,
                                   <const int64_t*>self.slots[st.slot] if quantised else NULL,
                                   self.quant_steps)

    cdef void _subtract(self, node_state* large, const node_state* small,
                        int n_threads) noexcept nogil:
        """The larger child's histogram (its parent's buffer) minus the smaller one's."""
        if self.quant_levels > 0:
            subtract_histograms(<int64_t*>self.slots[large.slot],
                                <const int64_t*>self.slots[small.slot],
                                self.n_entries, n_threads)
        else:
            subtract_histograms(self.slots[large.slot],
                                <const hist_entry*>self.slots[small.slot],
                                self.n_entries, n_threads)

    cdef void _subtract_and_evaluate(self, node_state* small, node_state* large, int small_id,
                                     int large_id, bint need_small, bint need_large,
                                     bint large_built, split_info* per_feature,
                                     int n_threads, int task) noexcept nogil:
        """The larger child's histogram is its parent's minus the smaller one's
        (the parent's buffer is already the larger child's slot); then both
        children that may split look for their best split. With two children
        to evaluate and two threads or more, each is one task of a single
        parallel region (``per_feature`` then holds two features' scratch)."""
        cdef int t
        if need_small and need_large and n_threads > 1 and (
                n_threads == 2 or self.n_entries < MIN_PARALLEL_ENTRIES):
            for t in prange(2, schedule='static', num_threads=2, nogil=True):
                if t == 0:
                    self._evaluate(small, small_id, per_feature, 1, 0)
                else:
                    if not large_built:
                        self._subtract(large, small, 1)
                    self._evaluate(large, large_id, per_feature + self.n_features, 1, 1)
            return
        if need_large and not large_built:
            self._subtract(large, small, n_threads)
        if need_small:
            self._evaluate(small, small_id, per_feature, n_threads, task)
        if need_large:
            self._evaluate(large, large_id, per_feature, n_threads, task)

    # ------------------------------------------------------------ expanding a node
    #
    # A split is expanded in three steps: ``_expand_rows`` partitions the parent's
    # rows and describes the two children; ``_expand_hist`` builds the smaller
    # child's histogram, derives the larger one's and finds both children's best
    # splits; ``_commit`` gives the children their node ids (ids follow the order
    # of commits). One split at a time, the steps run in the order rows, commit,
    # hist, on every thread. With two threads or more, small nodes are expanded
    # ahead, each on one thread (``_phase``): every thread runs queued expansions
    # (``_work``), and the one that finishes the expansion of the node whose turn
    # it is commits it and picks the next node in the sequential order
    # (``_advance``); it queues that node's expansion first and those of the next
    # best open nodes behind it. An expanded-ahead node waits for its turn; one
    # whose turn never comes is undone. A node's rows, histograms and splits
    # depend on no other node, so the tree is the one grown one split at a time.

    cdef int _acquire_spares(self, expansion* e, bint sure) noexcept nogil:
        """The histogram slots the children may need, taken before ``_expand_hist``
        (which must not allocate when it runs in parallel). ``sure``: the children
        are known (after ``_expand_rows``, one split at a time) and nothing is
        taken that will not be used. Returns -1 when a buffer cannot be allocated."""
        cdef const node_state* par = &self.states[e.parent]
        cdef bint may_l = True, may_r = True, need_large = True
        e.spare[0] = -1
        e.spare[1] = -1
        if sure:
            may_l = self._may_split(&e.child[0], e.n_leaves)
            may_r = self._may_split(&e.child[1], e.n_leaves)
            need_large = may_l if self._left_is_larger(e) else may_r
        if may_l or may_r:
            e.spare[0] = self._acquire_slot()
            if e.spare[0] < 0:
                return -1
            if par.slot < 0 and need_large:
                e.spare[1] = self._acquire_slot()
                if e.spare[1] < 0:
                    return -1
        return 0

    cdef inline bint _left_is_larger(self, const expansion* e) noexcept nogil:
        """Whether the left child has more rows (then the right one is built and
        the left one derived from the parent by subtraction)."""
        cdef const node_state* par = &self.states[e.parent]
        return e.n_left > _n_rows(par) - e.n_left

    cdef void _release_spares(self, expansion* e) noexcept nogil:
        """Give back what ``_expand_hist`` did not use (spares, the parent's slot)."""
        self._release_slot(e.spare[0])
        self._release_slot(e.spare[1])
        self._release_slot(e.release)
        e.spare[0] = -1
        e.spare[1] = -1
        e.release = -1

    cdef void _expand_rows(self, expansion* e, Py_ssize_t* chunk_counts,
                           int n_threads) noexcept nogil:
        """Partition the rows of node ``e.parent`` by its split; describe the children.

        Each half of the node's rows is partitioned in place: the left child's
        rows come first in both. With two threads each thread partitions one
        half, the one whose rows it wrote last time, in its own core's caches (a
        node's rows in one range would have one thread's left rows written where
        the other thread's were: across two dies that was 0.19 of 0.49 extra
        CPU-s a fit). When the halves differ by more than a quarter of the rows,
        each half is partitioned on every thread instead (ordered data)."""
        cdef const node_state* st = &self.states[e.parent]
        cdef const split_info* s = &st.split
        cdef Py_ssize_t n0 = st.hi[0] - st.lo[0], n1 = st.hi[1] - st.lo[1]
        cdef IDX_C* rows = &self.rows[0]
        cdef IDX_C* buffer = &self.buffer[0]
        cdef sparse_feature col
        cdef const sparse_feature* sparse = NULL
        cdef const X_BINNED_C* column = NULL
        cdef int f = s.feature, h
        if self.is_sparse and self.dense_index[f] >= 0:
            column = &self.dense_cols[self.dense_index[f], 0]
        elif self.is_sparse:
            col.has_column = self.has_columns
            if self.has_columns:
                col.col_len = self.col_ptr[f + 1] - self.col_ptr[f]
                col.col_rows = &self.col_rows[self.col_ptr[f]] if col.col_len > 0 else NULL
                col.col_bins = &self.col_bins[self.col_ptr[f]] if col.col_len > 0 else NULL
            col.indptr = self.S.indptr
            col.entries = self.S.entries
            col.entries16 = self.S.entries16
            col.e_lo = self.bin_offsets[f]
            col.e_hi = self.bin_offsets[f + 1]
            col.default_bin = self.default_bin[f]
            sparse = &col
        else:
            column = &self.X_columns[f, 0]
        if (n_threads == 2 and n0 + n1 >= 2 * MIN_PARTITION_ROWS
                and 4 * (n0 - n1 if n0 > n1 else n1 - n0) <= n0 + n1):
            for h in prange(2, schedule='static', num_threads=2, nogil=True):
                e.left_in[h] = partition(column, 1, rows + st.lo[h], st.hi[h] - st.lo[h],
                                         s.bin, self.n_bins[f], s.default_left,
                                         buffer + st.lo[h], chunk_counts, 1, sparse)
        else:
            for h in range(2):
                e.left_in[h] = partition(column, 1, rows + st.lo[h], st.hi[h] - st.lo[h],
                                         s.bin, self.n_bins[f], s.default_left,
                                         buffer + st.lo[h], chunk_counts, n_threads, sparse)
        e.n_left = e.left_in[0] + e.left_in[1]
        _init_state(&e.child[0], st.lo[0], st.lo[0] + e.left_in[0], st.lo[1],
                    st.lo[1] + e.left_in[1], s.sum_g_left, s.sum_h_left, st.depth + 1)
        _init_state(&e.child[1], st.lo[0] + e.left_in[0], st.hi[0], st.lo[1] + e.left_in[1],
                    st.hi[1], st.sum_g - s.sum_g_left, st.sum_h - s.sum_h_left, st.depth + 1)

    cdef void _expand_hist(self, expansion* e, node_state* L, node_state* R, int left_id,
                           int right_id, hist_entry* scratch, split_info* per_feature,
                           int n_threads, int task) noexcept nogil:
        """Histograms and best splits of the children ``L`` and ``R`` of ``e.parent``
        (the states in ``e`` or, once committed, in ``self.states``). Uses the
        spare slots; the parent's slot becomes the larger child's or ``e.release``."""
        cdef node_state* par = &self.states[e.parent]
        cdef bint may_l = self._may_split(L, e.n_leaves)
        cdef bint may_r = self._may_split(R, e.n_leaves)
        cdef bint need_small, need_large, large_built = False
        cdef node_state* small = L
        cdef node_state* large = R
        cdef int small_id = left_id, large_id = right_id
        e.release = -1
        if not (may_l or may_r):
            e.release = par.slot
            par.slot = -1
            return
        if self._left_is_larger(e):
            small, large, small_id, large_id = R, L, right_id, left_id
        need_small = may_l if small == L else may_r
        need_large = may_l if large == L else may_r
        small.slot = e.spare[0]
        e.spare[0] = -1
        self._build_state(small, False, scratch, n_threads)
        if need_large and par.slot < 0:
            # the parent's histogram was dropped: build the larger child too
            large.slot = e.spare[1]
            e.spare[1] = -1
            self._build_state(large, False, scratch, n_threads)
            large_built = True
        elif need_large:
            large.slot = par.slot   # becomes its histogram below
        else:
            e.release = par.slot
        par.slot = -1
        self._subtract_and_evaluate(small, large, small_id, large_id, need_small, need_large,
                                    large_built, per_feature, n_threads, task)

    cdef void _commit(self, expansion* e, double learning_rate, int* left,
                      int* right) noexcept nogil:
        """Append the children of ``e.parent`` to the tree; the parent becomes a split."""
        cdef int p = e.parent, f
        cdef split_info s = self.states[p].split
        left[0] = self._push_node(&e.child[0], learning_rate)
        right[0] = self._push_node(&e.child[1], learning_rate)
        f = s.feature
        self.nodes[p].is_leaf = 0
        self.nodes[p].feature = f
        self.nodes[p].bin_threshold = <unsigned short>s.bin
        self.nodes[p].threshold = self.bin_thresholds[self.bin_offsets[f] + s.bin]
        self.nodes[p].default_left = s.default_left
        self.nodes[p].gain = s.gain
        self.nodes[p].left = left[0]
        self.nodes[p].right = right[0]
        if self.n_groups > 0:
            self._constrain_children(p, f, left[0], right[0])
        if self.monotone.size() > 0:
            self._bound_children(p, f, left[0], right[0], learning_rate)

    cdef void _open_children(self, int left, int right, int n_leaves,
                             vector[int]& open_nodes) noexcept nogil:
        """Children with a split join the open nodes (those past the memory budget
        without their histogram); the others are leaves and free theirs."""
        cdef int k
        cdef node_state* st
        for k in range(left, right + 1):
            st = &self.states[k]
            if st.split.feature >= 0 and self._may_split(st, n_leaves):
                open_nodes.push_back(k)
                # slots held by expanded-ahead nodes count as their parents' one
                if self._held_slots() - self.ahead_extra > self.max_slots - 2:
                    # over the memory budget: this node will build both children
                    self._release_slot(st.slot)
                    st.slot = -1
            else:
                st.split.feature = -1
                self._release_slot(st.slot)
                st.slot = -1
                self._final_leaf(k)

    cdef void _close(self, int node) noexcept nogil:
        """An open node stays a leaf: free its histogram, or undo its expansion ahead
        (free the children's histograms; merge its rows back in increasing order)."""
        cdef node_state* st = &self.states[node]
        cdef expansion* e
        cdef Py_ssize_t i, a, b, n_left, n
        cdef IDX_C* rows
        cdef IDX_C* buf
        cdef int h
        if st.ahead >= 0 and not self.queue_closed:
            # in a phase (in ``_advance``, holding the lock): wait until its
            # expansion is done, or drop it if it has not started
            self._settle(&self.ahead[st.ahead], self.advance_tid)
        self._release_slot(st.slot)
        st.slot = -1
        if st.ahead < 0:
            self._final_leaf(node)
            return
        e = &self.ahead[st.ahead]
        self._release_slot(e.child[0].slot)
        self._release_slot(e.child[1].slot)
        self.ahead_extra -= e.extra
        self.n_ahead_undone += 1
        # in each half of the rows, both sides are increasing (the partition is
        # stable): merge them
        for h in range(2):
            rows = &self.rows[0] + st.lo[h]
            buf = &self.buffer[0] + st.lo[h]
            n = st.hi[h] - st.lo[h]
            n_left = e.left_in[h]
            for i in range(n_left):
                buf[i] = rows[i]
            a = 0
            b = n_left
            i = 0
            while a < n_left:
                if b < n and rows[b] < buf[a]:
                    rows[i] = rows[b]
                    b += 1
                else:
                    rows[i] = buf[a]
                    a += 1
                i += 1
        _free_entry(e)
        st.ahead = -1
        self._final_leaf(node)

    cdef inline void _final_leaf(self, int node) noexcept nogil:
        """``node`` stays a leaf: its raw scores may be updated early (see
        ``_early_update``)."""
        if self.raw_ptr != NULL:
            self.final_leaves.push_back(node)

    cdef bint _early_update(self) noexcept nogil:
        """Add a final leaf's value to the raw scores of its rows, on a thread that
        has nothing to run (holding the lock on entry and on return, not while it
        adds); False when no leaf is left. Each row is in one leaf and gets one
        addition a tree, so the scores do not depend on when it is made;
        ``_update_raw`` skips the leaves done here."""
        cdef int k
        cdef node_state st
        cdef double v
        cdef const IDX_C* rows = &self.rows[0]
        cdef double* raw = self.raw_ptr
        cdef Py_ssize_t stride = self.raw_stride
        if raw == NULL or self.next_final >= <int>self.final_leaves.size():
            return False
        k = self.final_leaves[self.next_final]
        self.next_final += 1
        self.states[k].raw_done = True
        # (read under the lock: ``nodes`` and ``states`` may move when a split is committed)
        v = self.nodes[k].value
        st = self.states[k]
        gbt_unlock(&self.lock)
        _add_to_rows(raw, stride, rows, st.lo[0], st.hi[0], v)
        _add_to_rows(raw, stride, rows, st.lo[1], st.hi[1], v)
        gbt_lock(&self.lock)
        return True

    cdef void _drop_hopeless(self, vector[int]& open_nodes, int splits_left) noexcept nogil:
        """Close the open nodes that can no longer be split, and free their histograms.

        Nodes are picked in a fixed order (lossguide: larger gain first, then the
        older node; depthwise: the older node), and a new node never gets ahead of
        one that is already open. So a node with at least ``splits_left`` nodes
        ahead of it will not be split before the leaf budget runs out: it stays
        a leaf, as it would have anyway. The tree is the same; fewer histograms
        are held (at most about ``max_leaves / 2`` instead of ``max_leaves``)."""
        cdef vector[pair[double, int]]* order = &self.hopeless
        cdef int k
        if <int>open_nodes.size() <= splits_left:
            return     # every open node may still be split
        order.clear()
        for k in range(<int>open_nodes.size()):
            order.push_back(pair[double, int](
                -self.states[open_nodes[k]].split.gain if self.lossguide else 0.0,
                open_nodes[k]))
        # node ids grow with age: the kept nodes stay in the order they were opened
        _keep_first(order[0], splits_left, open_nodes, self.closing)
        for k in range(<int>self.closing.size()):
            self._close(self.closing[k])

    cdef int _push_node(self, const node_state* st, double learning_rate) noexcept nogil:
        """Append a node (a leaf until it is split) with state ``st``; returns its id."""
        cdef node_struct rec
        rec.value = learning_rate * leaf_weight(st.sum_g, st.sum_h, &self.params)
        rec.threshold = 0.0
        rec.gain = 0.0
        rec.cover = st.sum_h
        rec.feature = -1
        rec.left = -1
        rec.right = -1
        rec.count = <int>_n_rows(st)
        rec.depth = st.depth
        rec.bin_threshold = 0
        rec.default_left = 0
        rec.is_leaf = 1
        self.states.push_back(st[0])
        self.nodes.push_back(rec)
        return <int>self.nodes.size() - 1

    cdef int _pick(self, const vector[int]& open_nodes, bint ahead_only) noexcept nogil:
        """Index in ``open_nodes`` of the next node to split (lossguide: the largest
        gain, ties to the older node; depthwise: the oldest); with ``ahead_only``,
        among the nodes that may be expanded ahead (not expanded yet, fewer than
        AHEAD_MAX_ROWS rows). -1 when none."""
        cdef int k, pick = -1
        cdef const node_state* st
        for k in range(<int>open_nodes.size()):
            st = &self.states[open_nodes[k]]
            if ahead_only and not _may_go_ahead(st):
                continue
            if pick < 0:
                pick = k
                if not self.lossguide:
                    break
            elif st.split.gain > self.states[open_nodes[pick]].split.gain:
                pick = k
        return pick

    cdef int _free_ahead(self) noexcept nogil:
        """A free entry of ``self.ahead``, or -1."""
        cdef int i
        for i in range(<int>self.ahead.size()):
            if self.ahead[i].parent < 0:
                return i
        return -1

    cdef bint _partner(self, const vector[int]& open_nodes, int p) noexcept nogil:
        """Whether an open node other than ``p`` may be expanded ahead."""
        cdef int k
        for k in range(<int>open_nodes.size()):
            if open_nodes[k] != p and _may_go_ahead(&self.states[open_nodes[k]]):
                return True
        return False

    # ------------------------------------------------------------ expanding ahead
    #
    # In a phase, the tree, the open nodes, the buffers' bookkeeping, the queue
    # and the expansions' entries are shared under ``self.lock``: every thread
    # holds it except while it runs an expansion or waits; under it, a thread
    # makes the splits whose turn has come (``_advance``), and any thread that
    # finds the queue empty refills it (``_feed``). A queued expansion
    # holds its parent's histogram and its spares; the thread that runs it, not
    # holding the lock, writes only its entry's children, its parent's rows,
    # buffer rows and slot, and its own buffers. Nothing may move what a running
    # expansion reads: ``states`` and ``slots`` grow within their reserved
    # capacity (checked before each commit and each queued expansion).

    cdef int _queue(self, int node, bint front) noexcept nogil:
        """Queue the expansion of the open node ``node`` with the spare buffers it
        may take (``front``: it is the one needed next), under the lock. Returns
        1 when queued, 0 when there is no free entry or a new buffer would move
        ``slots``, -1 when a buffer cannot be allocated."""
        cdef int k = self._free_ahead()
        cdef expansion* e
        if k < 0 or (<Py_ssize_t>self.free_slots.size()
                     + <Py_ssize_t>(self.slots.capacity() - self.slots.size())) < 2:
            return 0
        e = &self.ahead[k]
        e.parent = node
        e.n_leaves = -1   # not known yet: checked at the commit
        e.had_slot = self.states[node].slot >= 0
        e.release = -1
        if self._acquire_spares(e, False) < 0:
            return -1
        e.extra = (e.spare[0] >= 0) + (e.spare[1] >= 0)
        self.ahead_extra += e.extra
        self.states[node].ahead = k
        if front:
            self._push_front(k)
        else:
            self.queue[self.n_queued] = k
            self.n_queued += 1
        self.n_in_flight += 1
        e.status = QUEUED
        return 1

    cdef int _feed(self) noexcept nogil:
        """Queue the next best open nodes that may be expanded ahead while fewer than
        ``feed_max`` expansions are in flight and two more buffers fit the
        histogram memory budget (under the lock). Returns how many were queued;
        sets ``phase_error`` when a buffer cannot be allocated."""
        cdef int pick, r, n = 0
        while not self.phase_error and not self.queue_closed:
            if (self.n_in_flight >= self.feed_max
                    or self._held_slots() + 2 > self.max_slots):
                break
            pick = self._pick(self.phase_nodes[0], True)
            if pick < 0:
                break
            r = self._queue(self.phase_nodes[0][pick], False)
            if r <= 0:
                self.phase_error = r < 0
                break
            self.n_ahead_expanded += 1
            n += 1
        return n

    cdef inline void _push_front(self, int k) noexcept nogil:
        """Queue entry ``k`` first (under the lock)."""
        cdef int i
        for i in range(self.n_queued, 0, -1):
            self.queue[i] = self.queue[i - 1]
        self.queue[0] = k
        self.n_queued += 1

    cdef void _unqueue_entry(self, int k) noexcept nogil:
        """Take entry ``k`` of ``self.ahead`` out of the queue (under the lock)."""
        cdef int i
        for i in range(self.n_queued):
            if self.queue[i] == k:
                self._unqueue(i)
                return

    cdef inline void _unqueue(self, int at) noexcept nogil:
        """Remove position ``at`` of the queue (under the lock)."""
        cdef int i
        self.n_queued -= 1
        for i in range(at, self.n_queued):
            self.queue[i] = self.queue[i + 1]

    cdef void _cancel(self, expansion* e) noexcept nogil:
        """Drop a queued expansion that never ran (under the lock)."""
        self._release_spares(e)
        self.ahead_extra -= e.extra
        self.states[e.parent].ahead = -1
        self.n_ahead_expanded -= 1
        self.n_in_flight -= 1
        _free_entry(e)

    cdef void _run(self, expansion* e, int tid) noexcept nogil:
        """Expand ``e`` on thread ``tid`` alone, with that thread's buffers."""
        self._expand_rows(e, &self.chunk_counts[tid * MAX_PARTITION_CHUNKS], 1)
        self._expand_hist(e, &e.child[0], &e.child[1], -1, -1,
                          self.scratch if tid == 0 else <hist_entry*>(
                              self.task_scratch + (tid - 1) * self.task_scratch_bytes),
                          self.per_feature + tid * self.n_features, 1, tid)

    cdef expansion* _run_next(self, int tid) noexcept nogil:
        """Run the first queued expansion (the last with ``ahead_lifo``) on thread
        ``tid`` (holding the lock on entry and on return, not while it runs);
        returns it."""
        cdef int at = self.n_queued - 1 if self.ahead_lifo else 0
        cdef expansion* e = &self.ahead[self.queue[at]]
        self._unqueue(at)
        e.status = RUNNING
        gbt_unlock(&self.lock)
        self._run(e, tid)
        gbt_lock(&self.lock)
        e.status = DONE
        self.n_in_flight -= 1
        return e

    cdef inline void _pause(self) noexcept nogil:
        """Let go of the lock a moment (nothing to run)."""
        cdef int i
        gbt_unlock(&self.lock)
        for i in range(IDLE_PAUSES):
            GBT_PAUSE()
        gbt_lock(&self.lock)

    cdef void _work(self, int tid) noexcept nogil:
        """Run queued expansions on thread ``tid`` until the phase is closed and the
        queue empty (holding the lock on entry and on return). The thread that
        finishes the expansion of the node whose turn it is moves the phase on
        (``_advance``); a thread that finds the queue empty refills it, or else
        adds a final leaf's raw scores (``_early_update``), before it waits."""
        cdef expansion* e
        while True:
            if self.n_queued > 0 or self._feed() > 0:
                e = self._run_next(tid)
                if e.parent == self.turn:
                    self._advance(tid)
            elif self.queue_closed:
                break
            elif not self._early_update():
                self._pause()

    cdef void _settle(self, expansion* e, int tid) noexcept nogil:
        """Drop the expansion ``e`` if it is still queued, else wait until it is
        done, running queued ones meanwhile, and finish it (under the lock)."""
        if e.status == QUEUED:
            self._unqueue_entry(<int>(e - &self.ahead[0]))
            self._cancel(e)
            return
        while e.status == RUNNING:
            if self.n_queued > 0:
                self._run_next(tid)
            else:
                self._pause()
        if e.status == DONE:
            self._finish(e)

    cdef void _finish(self, expansion* e) noexcept nogil:
        """A done expansion gives back the buffers it did not use; while it waits
        for its turn, its children's count beyond its parent's one."""
        cdef int kept = (e.child[0].slot >= 0) + (e.child[1].slot >= 0)
        self._release_spares(e)
        self.ahead_extra += kept - e.had_slot - e.extra
        e.extra = kept - e.had_slot
        e.status = FINISHED

    cdef void _take_turn(self, int p, double learning_rate, int* n_leaves,
                         vector[int]& open_nodes) noexcept nogil:
        """Commit the open node ``p``, expanded ahead and finished (its turn has
        come; it is no longer in ``open_nodes``)."""
        cdef expansion* e = &self.ahead[self.states[p].ahead]
        cdef int left, right
        self.ahead_extra -= e.extra
        self.states[p].ahead = -1
        self._commit(e, learning_rate, &left, &right)
        _free_entry(e)
        n_leaves[0] += 1
        self._open_children(left, right, n_leaves[0], open_nodes)
        self._after_split(open_nodes, n_leaves[0])

    cdef void _close_phase(self) noexcept nogil:
        """End the phase (under the lock): drop what is still queued; the threads
        leave when their expansions are done."""
        cdef int i
        for i in range(self.n_queued):
            self._cancel(&self.ahead[self.queue[i]])
        self.n_queued = 0
        self.turn = -1
        self.queue_closed = True

    cdef void _advance(self, int tid) noexcept nogil:
        """Move the phase on, on thread ``tid`` (under the lock): while the node
        whose turn it is has been expanded, commit it and pick the next one in the
        sequential order; queue the picked node's expansion first (unless it is
        under way) and the next best ones behind it. The phase is closed at a
        large node, at a small one with nothing to expand beside it, at the leaf
        budget, or where a buffer would move. Commits are counted in
        ``phase_commits``; ``phase_error``: a buffer could not be allocated."""
        cdef vector[int]* open_nodes = self.phase_nodes
        cdef expansion* e
        cdef node_state* st
        cdef int pick, p, k, r
        self.advance_tid = tid
        while not self.queue_closed:
            if self.phase_error:
                self._close_phase()
                break
            if self.turn >= 0:
                e = &self.ahead[self.states[self.turn].ahead]
                if e.status == QUEUED or e.status == RUNNING:
                    break    # the thread that runs it comes back here
                if e.status == DONE:
                    self._finish(e)
                p = self.turn
                # (-1 while the commit may let go of the lock, in ``_close``: no
                # other thread comes in here meanwhile)
                self.turn = -1
                for k in range(<int>open_nodes.size()):
                    if open_nodes[0][k] == p:
                        open_nodes.erase(open_nodes.begin() + k)
                        break
                self._take_turn(p, self.phase_lr, self.phase_leaves, open_nodes[0])
                self.phase_commits += 1
            if (open_nodes.size() == 0
                    or (self.max_leaves > 0 and self.phase_leaves[0] >= self.max_leaves)
                    # a commit would move the states running expansions read
                    or self.states.capacity() - self.states.size() < 2):
                self._close_phase()
                break
            pick = self._pick(open_nodes[0], False)
            p = open_nodes[0][pick]
            st = &self.states[p]
            if st.ahead < 0:
                if not _may_go_ahead(st) or (
                        self.n_in_flight == 0 and not self._partner(open_nodes[0], p)):
                    self._close_phase()
                    break
                r = self._queue(p, True)
                if r <= 0:
                    self.phase_error = r < 0
                    self._close_phase()
                    break
            elif self.ahead[st.ahead].status == QUEUED:
                # queued behind others: to the front
                self._unqueue_entry(st.ahead)
                self._push_front(st.ahead)
            self.turn = p
            self._feed()

    cdef void _phase(self, int tid) noexcept nogil:
        """One thread of an expand-ahead phase: thread 0 picks the first node
        (``_advance``), then every thread runs queued expansions (``_work``)."""
        gbt_lock(&self.lock)
        if tid == 0:
            self._advance(0)
        self._work(tid)
        gbt_unlock(&self.lock)

    cdef int _grow(self, double learning_rate, const IDX_C* sample,
                   Py_ssize_t n_sample) noexcept nogil:
        """Grow the tree on ``self.pairs`` into self.nodes, on the rows ``sample`` (all
        rows when NULL); returns -1 on allocation failure, -2 when the gradients or
        hessians are not all finite."""
        cdef vector[int] open_nodes
        cdef Py_ssize_t i
        cdef int n_leaves = 1, pick, k, p, left, right
        cdef node_state root
        cdef expansion one
        cdef expansion* e = &one
        cdef int n_workers = min(self.n_threads, self.ahead_threads)   # grow() made the buffers
        cdef int max_tasks = min(TASKS_PER_THREAD * n_workers, MAX_AHEAD_TASKS), tid = 0
        self.nodes.clear()
        self.states.clear()
        self.ahead_extra = 0
        for k in range(<int>self.ahead.size()):
            _free_entry(&self.ahead[k])
        self.n_queued = 0
        self.n_in_flight = 0
        self.queue_closed = True
        self.final_leaves.clear()
        self.next_final = 0
        self.values = self.pairs
        if self.quant_levels > 0:
            quantize_into(self.pairs, self.n_rows, self.quant_levels,
                          splitmix64(self.seed ^ <uint64_t>0x71A27), &self.packed_values[0],
                          self.quant_steps, self.n_threads)
            self.values = &self.packed_values[0]
        self.all_rows = sample == NULL
        # (on every thread: a serial pass over a million rows left the others idle)
        if sample == NULL:
            n_sample = self.n_rows
            for i in prange(self.n_rows, schedule='static', num_threads=self.n_threads):
                self.rows[i] = <IDX_C>i
        else:
            for i in prange(n_sample, schedule='static', num_threads=self.n_threads):
                self.rows[i] = sample[i]
        self.level_masks.clear()
        if self.n_groups > 0:
            self.node_solo.assign(1, -1)
            self.node_groups.assign(self.n_groups, 0)
        # The root's histogram is built even when it cannot split: its sums
        # come from the same pass. Its rows are in two halves, each partitioned
        # in place (``_expand_rows``): the first half holds the lower rows, the
        # ones whose gradients and raw scores thread 0 of two writes.
        _init_state(&root, 0, n_sample // 2, n_sample // 2, n_sample, 0.0, 0.0, 0)
        root.slot = self._acquire_slot()
        if root.slot < 0:
            return -1
        self._build_state(&root, True, self.scratch, self.n_threads)
        if not (isfinite(root.sum_g) and isfinite(root.sum_h)):
            # an inf or NaN gradient or hessian (quantised: ``quantize_into`` made
            # the steps NaN): no split could be scored
            self._release_slot(root.slot)
            return -2
        self._push_node(&root, learning_rate)
        if self._may_split(&self.states[0], 1):
            self._ensure_level(0)
            self._evaluate(&self.states[0], 0, self.per_feature, self.n_threads, 0)
        if self.states[0].split.feature >= 0:
            open_nodes.push_back(0)
        else:
            self._close(0)
        # expanding ahead needs nodes whose splits depend on no node id, bound or level
        # (and a second thread: on one, expanding ahead only reorders the work)
        if (not self.expand_ahead or n_workers < 2 or self.sampling_columns or self.n_groups > 0
                or self.monotone.size() > 0):
            max_tasks = 1

        while open_nodes.size() > 0:
            if self.max_leaves > 0 and n_leaves >= self.max_leaves:
                break
            pick = self._pick(open_nodes, False)
            p = open_nodes[pick]
            if self.states[p].ahead >= 0:
                # expanded ahead: its turn has come
                open_nodes.erase(open_nodes.begin() + pick)
                self._take_turn(p, learning_rate, &n_leaves, open_nodes)
                continue
            if (max_tasks > 1 and _may_go_ahead(&self.states[p])
                    and self._partner(open_nodes, p)):
                # a phase of small nodes, expanded ahead on every thread; the states
                # and buffers get room to grow without moving while it runs
                if self.states.capacity() - self.states.size() < 64:
                    self.states.reserve(2 * self.states.capacity() + 64)
                if self.slots.capacity() - self.slots.size() < 2 * MAX_AHEAD_TASKS:
                    self.slots.reserve(self.slots.size() + 4 * MAX_AHEAD_TASKS)
                self.phase_commits = 0
                self.phase_error = False
                self.queue_closed = False
                self.turn = -1
                self.phase_nodes = &open_nodes
                self.phase_leaves = &n_leaves
                self.phase_lr = learning_rate
                self.feed_max = max_tasks
                with parallel(num_threads=n_workers):
                    tid = threadid()
                    self._phase(tid)
                self.phase_nodes = NULL
                self.phase_leaves = NULL
                for k in range(<int>self.ahead.size()):
                    if self.ahead[k].status == DONE:
                        self._finish(&self.ahead[k])
                if self.phase_error:
                    return -1
                if self.phase_commits > 0:
                    continue
                # (no free entry: the picked node, still open, is split below)
            # one split at a time, on every thread
            open_nodes.erase(open_nodes.begin() + pick)
            e.parent = p
            e.n_leaves = n_leaves + 1
            self._expand_rows(e, &self.chunk_counts[0], self.n_threads)
            if self._acquire_spares(e, True) < 0:
                return -1
            self._commit(e, learning_rate, &left, &right)
            self._ensure_level(self.states[left].depth)
            self._expand_hist(e, &self.states[left], &self.states[right], left, right,
                              self.scratch, self.per_feature, self.n_threads, 0)
            self._release_spares(e)
            e.parent = -1
            n_leaves += 1
            self._open_children(left, right, n_leaves, open_nodes)
            self._after_split(open_nodes, n_leaves)
        for k in range(<int>open_nodes.size()):
            self._close(open_nodes[k])
        return 0

    cdef void _after_split(self, vector[int]& open_nodes, int n_leaves) noexcept nogil:
        if (self.drop_hopeless and self.max_leaves > 0
                and <int>open_nodes.size() > self.max_leaves - n_leaves):
            self._drop_hopeless(open_nodes, self.max_leaves - n_leaves)

    cdef void _update_raw(self, double[:, ::1] raw, int output, bint renew,
                          double learning_rate) noexcept nogil:
        """Add each leaf's value to the raw predictions of its rows. With ``renew``
        (quantised gradients chose the splits) each node's sums, value and cover
        first become those of the exact gradients (LightGBM's
        ``quant_train_renew_leaf``): a leaf sums its rows in partition order, an
        inner node adds its children's sums.

        Thread t updates the raw scores of rows n_rows t / T .. n_rows (t + 1) / T
        only, the block that the objectives' static loops give it: it finds that
        block's rows in each leaf by search (``first_at_least``: a leaf's rows are
        increasing). Going leaf by leaf instead, the threads would write into the
        same cache lines of ``raw`` (a line holds 8 rows of different leaves)."""
        cdef int k, t, half, n_nodes = <int>self.nodes.size()
        cdef int n_threads = self.n_threads
        cdef Py_ssize_t i, a, b, r_lo, r_hi
        cdef double v
        cdef SUM_C g, h
        cdef const G_H_C* pairs = self.pairs
        cdef const IDX_C* rows = &self.rows[0]
        cdef double* out = &raw[0, output] if raw.shape[0] > 0 else NULL
        cdef Py_ssize_t stride = raw.shape[1]
        if renew:
            for k in prange(n_nodes, schedule='dynamic', num_threads=self.n_threads, nogil=True):
                if self.nodes[k].is_leaf:
                    g = 0.0
                    h = 0.0
                    for half in range(2):
                        a = self.states[k].lo[half]
                        b = self.states[k].hi[half]
                        for i in range(a, b):
                            if i + PREFETCH_ROWS < b:
                                GBT_PREFETCH(pairs + 2 * rows[i + PREFETCH_ROWS])
                            g = g + pairs[2 * rows[i]]
                            h = h + pairs[2 * rows[i] + 1]
                    self._renew_node(k, g, h, learning_rate)
            for k in range(n_nodes - 1, -1, -1):   # children come after their parent
                if not self.nodes[k].is_leaf:
                    self._renew_node(k, self.states[self.nodes[k].left].sum_g
                                     + self.states[self.nodes[k].right].sum_g,
                                     self.states[self.nodes[k].left].sum_h
                                     + self.states[self.nodes[k].right].sum_h, learning_rate)
        if _n_rows(&self.states[0]) < MIN_PARALLEL_UPDATE:
            n_threads = 1
        for t in prange(n_threads, schedule='static', num_threads=n_threads, nogil=True):
            r_lo = self.n_rows * t // n_threads
            r_hi = self.n_rows * (t + 1) // n_threads
            for k in range(n_nodes):
                if not self.nodes[k].is_leaf or self.states[k].raw_done:
                    continue
                v = self.nodes[k].value
                for half in range(2):
                    a = self.states[k].lo[half]
                    b = self.states[k].hi[half]
                    if t > 0:
                        a = first_at_least(rows, a, b, <IDX_C>r_lo)
                    if t < n_threads - 1:
                        b = first_at_least(rows, a, b, <IDX_C>r_hi)
                    _add_to_rows(out, stride, rows, a, b, v)

    cdef inline void _renew_node(self, int k, SUM_C g, SUM_C h,
                                 double learning_rate) noexcept nogil:
        cdef node_state* st = &self.states[k]
        st.sum_g = g
        st.sum_h = h
        self.nodes[k].cover = h
        self.nodes[k].value = learning_rate * bounded_weight(g, h, &self.params, st.lower,
                                                             st.upper)

    def grow(self, const G_H_C[:] grad, const G_H_C[:] hess, double learning_rate,
             double[:, ::1] raw, int output, const IDX_C[::1] sample=None, uint64_t seed=0):
        """Grow one tree on (grad, hess); add its predictions to ``raw[:, output]``.

        ``grad`` and ``hess`` (float32, one value per row) are read in place when
        they are the two columns of one C-ordered (n_rows, 2) array, as the
        booster makes them; otherwise they are copied into such pairs first.
        ``sample``: sorted row indices to grow the tree on (row subsampling);
        only their raw predictions are updated. ``seed`` drives the column
        sampling of this tree. Returns the tree as a NODE_DTYPE array (node 0
        is the root).
        """
        cdef int status
        cdef const IDX_C* rows_ptr = NULL
        cdef Py_ssize_t n_sample = 0
        cdef G_H_C[:, ::1] copy_view
        if grad.shape[0] != self.n_rows or hess.shape[0] != self.n_rows:
            raise ValueError(f"grad and hess must have one value per row ({self.n_rows}), "
                             f"got {grad.shape[0]} and {hess.shape[0]}")
        if self.n_rows == 0:
            raise ValueError("there are no rows to grow a tree on")
        if sample is not None:
            if sample.shape[0] == 0:
                raise ValueError("the row sample is empty")
            rows_ptr = &sample[0]
            n_sample = sample.shape[0]
            with nogil:
                status = _check_sample(rows_ptr, n_sample, self.n_rows)
            if status != 0:
                raise ValueError(f"the row sample must be increasing row indices below "
                                 f"{self.n_rows}")
        if (grad.strides[0] == 2 * sizeof(G_H_C) and hess.strides[0] == 2 * sizeof(G_H_C)
                and &hess[0] == &grad[0] + 1):
            self.pairs = &grad[0]
        else:
            if self.pair_copy is None:
                self.pair_copy = np.empty((self.n_rows, 2), dtype=np.float32)
            self.pair_copy[:, 0] = grad
            self.pair_copy[:, 1] = hess
            copy_view = self.pair_copy
            self.pairs = &copy_view[0, 0]
        self.seed = seed
        self._ensure_tasks()   # n_threads may have changed
        if self.sampling_columns:
            _sample_features(&self.all_mask[0], &self.tree_mask[0], self.n_features,
                             self.colsample_bytree, self.feature_weights, splitmix64(seed))
        # a waiting thread may update final leaves' raw scores during the tree (not when
        # quantised gradients renew the leaf values at the end)
        self.raw_ptr = NULL
        if self.n_threads > 1 and self.quant_levels == 0 and raw.shape[0] > 0:
            self.raw_ptr = &raw[0, output]
            self.raw_stride = raw.shape[1]
        with nogil:
            status = self._grow(learning_rate, rows_ptr, n_sample)
            if status == 0:
                self._update_raw(raw, output, self.quant_levels > 0, learning_rate)
        self.raw_ptr = NULL
        if status == -2:
            raise ValueError("grad and hess must be finite: their sums over the rows are "
                             "inf or NaN")
        if status != 0:
            raise MemoryError("could not allocate a histogram buffer")
        # (copied into an array of NODE_DTYPE: a view of the vector would make NumPy
        # parse the struct's buffer format again, 0.3 ms a tree)
        out = np.empty(self.nodes.size(), dtype=NODE_DTYPE)
        cdef node_struct[::1] out_view = out
        if self.nodes.size() > 0:
            memcpy(&out_view[0], self.nodes.data(), self.nodes.size() * sizeof(node_struct))
        return out

    def node_bounds(self):
        """``(lower, upper)``: the bounds monotone constraints put on each node's weight
        (before the learning rate) in the last tree; -inf and inf without them."""
        cdef Py_ssize_t n_nodes = self.nodes.size(), k
        lower = np.array([self.states[k].lower for k in range(n_nodes)], dtype=np.float64)
        upper = np.array([self.states[k].upper for k in range(n_nodes)], dtype=np.float64)
        return lower, upper

    def leaf_rows(self):
        """Partition array of the rows the last tree was grown on, and (start, end) of
        each of its nodes in it: a node's range holds its left child's, then its
        right child's; a leaf's rows are increasing (its first half,
        ``rows[lo[0]:hi[0]]``, then its second)."""
        cdef Py_ssize_t n_nodes = self.nodes.size(), k
        cdef Py_ssize_t half = self.states[0].lo[1] if n_nodes > 0 else 0
        lo = np.array([[self.states[k].lo[0], self.states[k].lo[1]] for k in range(n_nodes)],
                      dtype=np.intp).reshape(n_nodes, 2)
        hi = np.array([[self.states[k].hi[0], self.states[k].hi[1]] for k in range(n_nodes)],
                      dtype=np.intp).reshape(n_nodes, 2)
        # the rows before a node: those before its first half, and before its second
        starts = lo[:, 0] + (lo[:, 1] - half)
        ends = starts + (hi - lo).sum(axis=1)
        rows = np.asarray(self.rows)
        out = np.empty(ends[0] if n_nodes > 0 else 0, dtype=rows.dtype)
        for k in np.flatnonzero(np.array([self.nodes[k].is_leaf for k in range(n_nodes)],
                                         dtype=bool)):
            n0 = hi[k, 0] - lo[k, 0]
            out[starts[k]:starts[k] + n0] = rows[lo[k, 0]:hi[k, 0]]
            out[starts[k] + n0:ends[k]] = rows[lo[k, 1]:hi[k, 1]]
        return out, starts, ends


def columns_of(const X_BINNED_C[:, ::1] X_binned, int n_threads=1):
    """The binned matrix in column-major order, (n_features, n_rows) C-contiguous
    (``np.ascontiguousarray(X_binned.T)``), for the partition: blocks of rows
    transposed in parallel (NumPy's copy runs on one thread, and the grower is
    built on every fit)."""
    cdef Py_ssize_t n_rows = X_binned.shape[0], n_features = X_binned.shape[1]
    cdef Py_ssize_t n_blocks = (n_rows + TRANSPOSE_ROWS - 1) // TRANSPOSE_ROWS, c, r, lo, hi
    cdef Py_ssize_t f
    out = np.empty((n_features, n_rows), dtype=np.uint8)
    cdef X_BINNED_C[:, ::1] cols = out
    if n_rows == 0 or n_features == 0:
        return out
    if n_blocks < 2:
        n_threads = 1
    for c in prange(n_blocks, schedule='static', num_threads=n_threads, nogil=True):
        lo = c * TRANSPOSE_ROWS
        hi = min(lo + TRANSPOSE_ROWS, n_rows)
        for f in range(n_features):
            for r in range(lo, hi):
                cols[f, r] = X_binned[r, f]
    return out


# nodes expanded at once per thread (the tests' bound on buffers held)
AHEAD_TASKS_PER_THREAD = TASKS_PER_THREAD
# nodes of fewer rows are expanded ahead (read by benchmarks/tree_blocks.py)
AHEAD_ROWS = AHEAD_MAX_ROWS


def py_keep_first(double[::1] keys, int[::1] nodes, int n_keep):
    """``_keep_first`` on the pairs ``(keys[i], nodes[i])``: returns (kept, dropped)
    as int arrays (tests)."""
    cdef vector[pair[double, int]] order
    cdef vector[int] kept, dropped
    cdef Py_ssize_t i
    if keys.shape[0] != nodes.shape[0]:
        raise ValueError("keys and nodes must have the same length")
    for i in range(keys.shape[0]):
        order.push_back(pair[double, int](keys[i], nodes[i]))
    _keep_first(order, n_keep, kept, dropped)
    return (np.array([kept[i] for i in range(<Py_ssize_t>kept.size())], dtype=np.intc),
            np.array([dropped[i] for i in range(<Py_ssize_t>dropped.size())], dtype=np.intc))
