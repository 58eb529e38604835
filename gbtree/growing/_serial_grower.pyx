"""Grow one regression tree on the binned matrix, one split at a time, without the GIL.

Nodes are expanded one at a time from a list of open leaves: depthwise takes
them first-in first-out (which yields the level-by-level tree), lossguide takes
the one with the largest gain (ties: the oldest). For each split the rows are
partitioned in place (``DataPartition``), the smaller child's histogram is built
and the larger child's is derived from the parent's by subtraction; each step
runs on every thread. When the tree is done the raw predictions of the training
rows are updated from the partition (each thread its own block of rows, found in
every leaf), without walking the tree again.

The parts: ``BinnedMatrix`` (the data as the kernels read it, dense or sparse),
``DataPartition`` (each node's rows), ``HistogramPool`` (the open nodes'
histograms, up to a memory budget: a node whose histogram was dropped builds both
children's histograms instead of subtracting), ``ColumnSampler``,
``InteractionConstraints`` and ``MonotoneConstraints`` (which features a node may
split on, and the bounds on its weight), and ``GradientQuantizer`` (with
``quant_levels`` > 0 the histograms hold exact packed integer sums of quantised
gradients; the splits are chosen on them, and when the tree is done its node
sums, leaf values and covers are recomputed from the exact gradients,
``_update_raw``).

``_expand_ahead.TreeGrower`` adds to this loop the expansion of small nodes
ahead of their turn, one per thread; the trees are the same.
"""
import numpy as np

from cython.parallel cimport prange
from libc.math cimport isfinite, INFINITY
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libcpp.algorithm cimport nth_element, sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector

from ..kernels._typedefs cimport (G_H_C, SUM_C, IDX_C, hist_entry, node_struct, GBT_PREFETCH,
                         first_at_least)
from ..kernels._histogram cimport (hist_plan, make_plan, build_histogram,
                                   subtract_histograms, unpack_histogram)
from ..kernels._splitting cimport (split_params, split_info, find_best_split, weight,
                          bounded_weight, make_split_params, MIN_PARALLEL_ENTRIES)
from ..kernels._binned_matrix cimport BinnedMatrix
from ..kernels._column_sampler cimport ColumnSampler
from ..kernels._constraints cimport InteractionConstraints, MonotoneConstraints
from ..kernels._histogram_pool cimport HistogramPool
from ..kernels._partition cimport DataPartition, add_to_rows, PREFETCH_ROWS
from ..kernels._quantizer cimport GradientQuantizer
from ._expansion cimport expansion_key
from ._nodes cimport write_leaf, write_split
from ..kernels._typedefs import NODE_DTYPE
from .grower_params import check_pairs


# Below this many rows the raw-score update runs on one thread.
cdef Py_ssize_t MIN_PARALLEL_UPDATE = 16384


cdef inline void init_state(node_state* st, Py_ssize_t lo0, Py_ssize_t hi0, Py_ssize_t lo1,
                            Py_ssize_t hi1, SUM_C sum_g, SUM_C sum_h, int depth) noexcept nogil:
    st.lo[:] = [lo0, lo1]
    st.hi[:] = [hi0, hi1]
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


cdef class SerialGrower:
    """Buffers for growing trees on one binned matrix; ``grow`` builds one tree.

    Parameters
    ----------
    X_binned : uint8 array (n_rows, n_features), C order, or binning.SparseBinned
        (or the ``BinnedMatrix`` of another grower, which it then shares)
    n_bins, bin_offsets : int32 arrays from ``BinMapper``
    bin_thresholds : float64 array from ``BinMapper.bin_thresholds()``
    params : grower_params.GrowerParams
    n_threads : int
    default_bin : uint8 array (n_features,) or None
        Each feature's default bin (``BinMapper.default_bins``): its histogram
        entry is recovered from the node totals. Required for sparse input.
    """

    def __cinit__(self, X_binned, const int[::1] n_bins,
                  const int[::1] bin_offsets, const double[::1] bin_thresholds,
                  params, int n_threads, default_bin=None):
        cdef hist_plan plan
        # (a BinnedMatrix: another grower's, shared, see ``twin``)
        self.X = (X_binned if isinstance(X_binned, BinnedMatrix) else
                  BinnedMatrix(X_binned, n_bins, bin_offsets, n_threads, default_bin))
        self.grower_params = params
        self.n_features = self.X.n_features
        self.quantizer = GradientQuantizer(params.quant_levels, self.X.n_rows)
        self.pool = HistogramPool(self.X.n_entries, self.quantizer.entry_bytes,
                                  params.hist_memory_bytes)
        self.partition = DataPartition(self.X.n_rows)
        self.sampler = ColumnSampler(self.n_features, params)
        self.interactions = InteractionConstraints(self.n_features, params.interaction_groups)
        self.monotone = MonotoneConstraints(self.n_features, params.monotone_constraints)
        self.bin_thresholds = bin_thresholds
        self.max_depth = params.max_depth
        self.max_leaves = params.max_leaves
        self.lossguide = params.lossguide
        self.drop_hopeless = params.drop_hopeless
        self.params = make_split_params(params.reg_lambda, params.reg_alpha,
                                        params.min_child_weight, params.max_delta_step,
                                        params.gamma, params.plain_scan)
        self.n_threads = n_threads
        self.max_chunks = params.max_chunks
        plan = make_plan(self.X.n_rows, self.n_features, self.X.n_entries, self.max_chunks,
                         n_threads)
        self.scratch_chunks = max(plan.n_chunks, 1)
        self.scratch = <hist_entry*>malloc(self.scratch_chunks * self.X.n_entries
                                           * self.pool.entry_bytes)
        self.per_feature = <split_info*>malloc(2 * max(self.n_features, 1) * sizeof(split_info))
        if self.scratch == NULL or self.per_feature == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.scratch)
        free(self.per_feature)

    @property
    def n_histogram_buffers(self):
        """How many histogram buffers this grower has allocated: the most it held at
        once while growing its trees (tests, memory)."""
        return self.pool.n_buffers

    cdef void _build_state(self, node_state* st, bint root, hist_entry* scratch,
                           int n_threads) noexcept nogil:
        """The histogram of the node ``st`` into its slot (``root``: the sums too)."""
        cdef Py_ssize_t n = n_rows_of(st)
        cdef hist_plan plan = make_plan(n, self.n_features, self.X.n_entries, self.max_chunks,
                                        n_threads)
        cdef hist_entry totals
        cdef int64_t packed_totals
        if scratch == self.scratch and n_threads > 1:
            # a build on every thread: its chunks at both ends of the root's
            # buffers (``chunk_buffer``); thread 0's own builds (expanding ahead)
            # keep the first buffers
            plan.scratch_chunks = self.scratch_chunks
        # the node's two ranges, read as one list
        cdef const IDX_C* rows = &self.partition.rows[0] + st.lo[0]
        cdef const IDX_C* rows_hi = &self.partition.rows[0] + st.lo[1]
        if root and self.all_rows and not self.X.is_sparse:
            # a dense root of all rows reads them in sequence (no row list)
            rows = NULL
            rows_hi = NULL
        if self.quantizer.levels > 0:
            build_histogram(self.X.X_ptr, self.X.sparse(), rows, n, rows_hi,
                            st.hi[0] - st.lo[0], self.values, &self.X.bin_offsets[0],
                            self.n_features, <int64_t*>self.pool.slots[st.slot],
                            <int64_t*>scratch, plan, n_threads, self.X.default_bin,
                            &packed_totals)
            unpack_histogram(&packed_totals, 1, self.quantizer.steps, &totals)
        else:
            build_histogram(self.X.X_ptr, self.X.sparse(), rows, n, rows_hi,
                            st.hi[0] - st.lo[0], self.values, &self.X.bin_offsets[0],
                            self.n_features, self.pool.slots[st.slot], scratch, plan,
                            n_threads, self.X.default_bin, &totals)
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
        return n_rows_of(st) >= 2

    cdef void _evaluate(self, node_state* st, int node, split_info* scratch, int n_threads,
                        int task) noexcept nogil:
        # ``task`` picks the mask buffers (two nodes may be evaluated at once); ``node``
        # (the node's id, for the masks) is -1 when no mask is needed (expand-ahead); the
        # features it may split on, or NULL for all of them
        cdef const unsigned char* allowed = self.interactions.allowed(
            node, self.sampler.features(node, self.states[node].depth, task),
            task) if node >= 0 else NULL
        cdef bint quantised = self.quantizer.levels > 0
        st.split = find_best_split(self.pool.slots[st.slot], &self.X.n_bins[0],
                                   &self.X.bin_offsets[0], self.n_features, st.sum_g,
                                   st.sum_h, &self.params, scratch, n_threads, allowed,
                                   self.monotone.directions(), st.lower, st.upper,
                                   <const int64_t*>self.pool.slots[st.slot] if quantised
                                   else NULL, self.quantizer.steps)

    cdef void _subtract(self, node_state* large, const node_state* small,
                        int n_threads) noexcept nogil:
        """The larger child's histogram (its parent's buffer) minus the smaller one's."""
        if self.quantizer.levels > 0:
            subtract_histograms(<int64_t*>self.pool.slots[large.slot],
                                <const int64_t*>self.pool.slots[small.slot],
                                self.X.n_entries, n_threads)
        else:
            subtract_histograms(self.pool.slots[large.slot],
                                <const hist_entry*>self.pool.slots[small.slot],
                                self.X.n_entries, n_threads)

    cdef void _subtract_and_evaluate(self, node_state* small, node_state* large, int small_id,
                                     int large_id, bint need_small, bint need_large,
                                     bint large_built, split_info* per_feature,
                                     int n_threads, int task) noexcept nogil:
        """The larger child's histogram is its parent's minus the smaller one's
        (the parent's buffer is already the larger child's slot); then both
        children that may split look for their best split. With two children
        to evaluate on exactly two threads (or on more with a small histogram),
        each child is one task of a single parallel region (``per_feature`` then
        holds two features' scratch): one region instead of two, each scan on one
        thread. With more threads and a large histogram, each child's scan takes
        them all."""
        cdef int t
        if need_small and need_large and n_threads > 1 and (
                n_threads == 2 or self.X.n_entries < MIN_PARALLEL_ENTRIES):
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
    # of commits). Here the steps run in the order rows, commit, hist, on every
    # thread; ``_expand_ahead`` runs rows and hist of small nodes before their
    # turn, each on one thread, and commits them when it comes.

    cdef int _acquire_spares(self, expansion* e, bint sure) noexcept nogil:
        """The histogram slots the children may need, taken before ``_expand_hist``
        (which must not allocate when it runs in parallel). ``sure``: the children
        are known (after ``_expand_rows``, one split at a time) and nothing is
        taken that will not be used. Returns -1 when a buffer cannot be allocated."""
        cdef const node_state* par = &self.states[e.parent]
        cdef bint may_l = True, may_r = True, need_large = True
        e.spare[:] = [-1, -1]
        if sure:
            may_l = self._may_split(&e.child[0], e.n_leaves)
            may_r = self._may_split(&e.child[1], e.n_leaves)
            need_large = may_l if self._left_is_larger(e) else may_r
        if may_l or may_r:
            e.spare[0] = self.pool.acquire()
            if e.spare[0] < 0:
                return -1
            if par.slot < 0 and need_large:
                e.spare[1] = self.pool.acquire()
                if e.spare[1] < 0:
                    return -1
        return 0

    cdef bint _left_is_larger(self, const expansion* e) noexcept nogil:
        """Whether the left child has more rows (then the right one is built and
        the left one derived from the parent by subtraction)."""
        cdef const node_state* par = &self.states[e.parent]
        return e.n_left > n_rows_of(par) - e.n_left

    cdef void _release_spares(self, expansion* e) noexcept nogil:
        """Give back what ``_expand_hist`` did not use (spares, the parent's slot)."""
        self.pool.release(e.spare[0])
        self.pool.release(e.spare[1])
        self.pool.release(e.release)
        e.spare[:] = [-1, -1]
        e.release = -1

    cdef void _expand_rows(self, expansion* e, int tid, int n_threads) noexcept nogil:
        """Partition the rows of node ``e.parent`` by its split (with thread ``tid``'s
        buffers); describe the children."""
        cdef const node_state* st = &self.states[e.parent]
        cdef const split_info* s = &st.split
        self.partition.split(self.X, st.lo, st.hi, s.feature, s.bin, s.default_left,
                             e.left_in, tid, n_threads)
        e.n_left = e.left_in[0] + e.left_in[1]
        init_state(&e.child[0], st.lo[0], st.lo[0] + e.left_in[0], st.lo[1],
                   st.lo[1] + e.left_in[1], s.sum_g_left, s.sum_h_left, st.depth + 1)
        init_state(&e.child[1], st.lo[0] + e.left_in[0], st.hi[0], st.lo[1] + e.left_in[1],
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
        cdef double lo, up, wl, wr
        cdef double bounds[4]
        left[0] = self._push_node(&e.child[0], learning_rate)
        right[0] = self._push_node(&e.child[1], learning_rate)
        f = s.feature
        write_split(&self.nodes[p], f, self.bin_thresholds[self.X.bin_offsets[f] + s.bin],
                    <unsigned short>s.bin, s.default_left, s.gain, left[0], right[0])
        if self.interactions.n_groups > 0:
            self.interactions.add_children(p, f, left[0], right[0])
        if self.monotone.directions() != NULL:
            # the children's weights, clipped to the parent's bounds, and their bounds
            lo = self.states[p].lower
            up = self.states[p].upper
            wl = bounded_weight(self.states[left[0]].sum_g, self.states[left[0]].sum_h,
                                &self.params, lo, up)
            wr = bounded_weight(self.states[right[0]].sum_g, self.states[right[0]].sum_h,
                                &self.params, lo, up)
            self.monotone.bound_children(f, lo, up, wl, wr, bounds)
            self.states[left[0]].lower = bounds[0]
            self.states[left[0]].upper = bounds[1]
            self.states[right[0]].lower = bounds[2]
            self.states[right[0]].upper = bounds[3]
            self.nodes[left[0]].value = learning_rate * wl
            self.nodes[right[0]].value = learning_rate * wr

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
                if self._slots_in_use() > self.pool.max_slots - 2:
                    # over the memory budget: this node will build both children
                    self.pool.release(st.slot)
                    st.slot = -1
            else:
                st.split.feature = -1
                self._close(k)

    cdef void _close(self, int node) noexcept nogil:
        """An open node stays a leaf: free its histogram."""
        cdef node_state* st = &self.states[node]
        self.pool.release(st.slot)
        st.slot = -1
        self._final_leaf(node)

    cdef void _drop_hopeless(self, vector[int]& open_nodes, int n_leaves) noexcept nogil:
        """After a split (``n_leaves`` leaves), with ``drop_hopeless`` and a leaf
        budget: close the open nodes that can no longer be split, and free their
        histograms.

        Nodes are picked in a fixed order (lossguide: larger gain first, then the
        older node; depthwise: the older node), and a new node never gets ahead of
        one that is already open. So a node with at least ``splits_left`` nodes
        ahead of it will not be split before the leaf budget runs out: it stays
        a leaf, as it would have anyway. The tree is the same; fewer histograms
        are held (at most about ``max_leaves / 2`` instead of ``max_leaves``)."""
        cdef vector[pair[double, int]]* order = &self.hopeless
        cdef int k, splits_left = self.max_leaves - n_leaves
        if (not self.drop_hopeless or self.max_leaves <= 0
                or <int>open_nodes.size() <= splits_left):
            return     # every open node may still be split
        order.clear()
        for k in range(<int>open_nodes.size()):
            order.push_back(pair[double, int](
                expansion_key(self.states[open_nodes[k]].split.gain, self.lossguide),
                open_nodes[k]))
        # node ids grow with age: the kept nodes stay in the order they were opened
        _keep_first(order[0], splits_left, open_nodes, self.closing)
        for k in range(<int>self.closing.size()):
            self._close(self.closing[k])

    cdef int _push_node(self, const node_state* st, double learning_rate) noexcept nogil:
        """Append a node (a leaf until it is split) with state ``st``; returns its id."""
        cdef node_struct rec
        write_leaf(&rec, learning_rate * weight(st.sum_g, st.sum_h, &self.params),
                   st.sum_h, <int>n_rows_of(st), st.depth)
        self.states.push_back(st[0])
        self.nodes.push_back(rec)
        return <int>self.nodes.size() - 1

    cdef int _pick(self, const vector[int]& open_nodes, Py_ssize_t below_rows) noexcept nogil:
        """Index in ``open_nodes`` (in the order they were opened) of the next node to
        split by the expansion policy (``_expansion.expansion_key``); with
        ``below_rows`` > 0, among the nodes not expanded ahead yet with fewer rows.
        -1 when none."""
        cdef int k, pick = -1
        cdef double key, best = 0.0
        cdef const node_state* st
        for k in range(<int>open_nodes.size()):
            st = &self.states[open_nodes[k]]
            if below_rows > 0 and (st.ahead >= 0 or n_rows_of(st) >= below_rows):
                continue
            key = expansion_key(st.split.gain, self.lossguide)
            if pick < 0 or key < best:
                pick, best = k, key
            if not self.lossguide:
                break   # (every key the same: the first is the oldest)
        return pick

    cdef int _grow(self, double learning_rate, const IDX_C* sample,
                   Py_ssize_t n_sample) noexcept nogil:
        """Grow the tree on ``self.pairs`` into self.nodes, on the rows ``sample`` (all
        rows when NULL); returns -1 on allocation failure, -2 when the gradients or
        hessians are not all finite."""
        cdef vector[int] open_nodes
        cdef int n_leaves = 1, pick, p, left, right, r
        cdef node_state root
        cdef expansion one
        cdef expansion* e = &one
        self.nodes.clear()
        self.states.clear()
        self.all_rows = sample == NULL
        if sample == NULL:
            n_sample = self.X.n_rows
        self.partition.reset(sample, n_sample, self.n_threads)
        self.interactions.start_tree()
        # The root's histogram is built even when it cannot split: its sums
        # come from the same pass. Its rows are in two halves, each partitioned
        # in place: the first half holds the lower rows, the ones whose
        # gradients and raw scores thread 0 of two writes.
        init_state(&root, 0, n_sample // 2, n_sample // 2, n_sample, 0.0, 0.0, 0)
        root.slot = self.pool.acquire()
        if root.slot < 0:
            return -1
        self._build_state(&root, True, self.scratch, self.n_threads)
        if not (isfinite(root.sum_g) and isfinite(root.sum_h)):
            # an inf or NaN gradient or hessian (quantised: ``quantize_into`` made
            # the steps NaN): no split could be scored
            self.pool.release(root.slot)
            return -2
        self._push_node(&root, learning_rate)
        if self._may_split(&self.states[0], 1):
            self.sampler.ensure_level(0)
            self._evaluate(&self.states[0], 0, self.per_feature, self.n_threads, 0)
        if self.states[0].split.feature >= 0:
            open_nodes.push_back(0)
        else:
            self._close(0)

        while open_nodes.size() > 0:
            if self.max_leaves > 0 and n_leaves >= self.max_leaves:
                break
            pick = self._pick(open_nodes, 0)
            r = self._split_ahead(pick, open_nodes, &n_leaves, learning_rate)
            if r < 0:
                return -1
            if r > 0:
                continue
            # one split at a time, on every thread
            p = open_nodes[pick]
            open_nodes.erase(open_nodes.begin() + pick)
            e.parent = p
            e.n_leaves = n_leaves + 1
            self._expand_rows(e, 0, self.n_threads)
            if self._acquire_spares(e, True) < 0:
                return -1
            self._commit(e, learning_rate, &left, &right)
            self.sampler.ensure_level(self.states[left].depth)
            self._expand_hist(e, &self.states[left], &self.states[right], left, right,
                              self.scratch, self.per_feature, self.n_threads, 0)
            self._release_spares(e)
            e.parent = -1
            n_leaves += 1
            self._open_children(left, right, n_leaves, open_nodes)
            self._drop_hopeless(open_nodes, n_leaves)
        for p in range(<int>open_nodes.size()):
            self._close(open_nodes[p])
        return 0

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
        cdef Py_ssize_t i, a, b, r_lo, r_hi, n_rows = self.X.n_rows
        cdef double v
        cdef hist_entry sums
        cdef const IDX_C* rows = &self.partition.rows[0]
        cdef double* out = &raw[0, output] if raw.shape[0] > 0 else NULL
        cdef Py_ssize_t stride = raw.shape[1]
        if renew:
            # (leaves done early were renewed then)
            for k in prange(n_nodes, schedule='dynamic', num_threads=self.n_threads, nogil=True):
                if self.nodes[k].is_leaf and not self.states[k].raw_done:
                    sums = self._leaf_sums(&self.states[k])
                    self._renew_node(k, sums.sum_g, sums.sum_h, learning_rate)
            for k in range(n_nodes - 1, -1, -1):   # children come after their parent
                if not self.nodes[k].is_leaf:
                    self._renew_node(k, self.states[self.nodes[k].left].sum_g
                                     + self.states[self.nodes[k].right].sum_g,
                                     self.states[self.nodes[k].left].sum_h
                                     + self.states[self.nodes[k].right].sum_h, learning_rate)
        if n_rows_of(&self.states[0]) < MIN_PARALLEL_UPDATE:
            n_threads = 1
        for t in prange(n_threads, schedule='static', num_threads=n_threads, nogil=True):
            r_lo = n_rows * t // n_threads
            r_hi = n_rows * (t + 1) // n_threads
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
                    add_to_rows(out, stride, rows, a, b, v)

    cdef hist_entry _leaf_sums(self, const node_state* st) noexcept nogil:
        """The exact gradient and hessian sums of a leaf's rows, in partition order."""
        cdef const G_H_C* pairs = self.pairs
        cdef const IDX_C* rows = &self.partition.rows[0]
        cdef SUM_C sg = 0.0, sh = 0.0
        cdef hist_entry out
        cdef Py_ssize_t i, a, b
        cdef int half
        for half in range(2):
            a = st.lo[half]
            b = st.hi[half]
            for i in range(a, b):
                if i + PREFETCH_ROWS < b:
                    GBT_PREFETCH(pairs + 2 * rows[i + PREFETCH_ROWS])
                sg = sg + pairs[2 * rows[i]]
                sh = sh + pairs[2 * rows[i] + 1]
        out.sum_g = sg
        out.sum_h = sh
        return out

    cdef void _renew_node(self, int k, SUM_C g, SUM_C h, double learning_rate) noexcept nogil:
        cdef node_state* st = &self.states[k]
        st.sum_g = g
        st.sum_h = h
        self.nodes[k].cover = h
        self.nodes[k].value = learning_rate * bounded_weight(g, h, &self.params, st.lower,
                                                             st.upper)

    # ------------------------------------------------------------ hooks
    # (``_expand_ahead.TreeGrower`` fills them in)

    cdef int _prepare_tree(self, double[:, ::1] raw, int output) except -1:
        """Before a tree, with the GIL."""
        return 0

    cdef int _split_ahead(self, int pick, vector[int]& open_nodes, int* n_leaves,
                          double learning_rate) noexcept nogil:
        """Make the split of ``open_nodes[pick]`` (and maybe more) another way than one
        split at a time: 1 when done, 0 when not (the loop splits it), -1 when a
        buffer cannot be allocated."""
        return 0

    cdef int _slots_in_use(self) noexcept nogil:
        """The histograms held that count against the memory budget."""
        return self.pool.held()

    cdef void _final_leaf(self, int node) noexcept nogil:
        """``node`` will stay a leaf."""
        pass

    def grow(self, const G_H_C[:, :, ::1] pairs, double learning_rate, double[:, ::1] raw,
             int output, const IDX_C[::1] sample=None, uint64_t seed=0):
        """Grow one tree on ``pairs`` (1, n_rows, 2), the (gradient, hessian) pairs of
        output ``output``; add its predictions to ``raw[:, output]`` (see
        ``growers``). ``sample``: sorted row indices to grow the tree on (row
        subsampling); only their raw predictions are updated. ``seed`` drives the
        column sampling of this tree. Returns ``[the tree]`` (NODE_DTYPE, node 0 the
        root).
        """
        cdef int status
        cdef const IDX_C* rows_ptr = NULL
        cdef Py_ssize_t n_sample = 0, n_rows = self.X.n_rows
        check_pairs((pairs.shape[0], pairs.shape[1], pairs.shape[2]), n_rows, 1)
        if n_rows == 0:
            raise ValueError("there are no rows to grow a tree on")
        if sample is not None:
            if sample.shape[0] == 0:
                raise ValueError("the row sample is empty")
            rows_ptr = &sample[0]
            n_sample = sample.shape[0]
            with nogil:
                status = _check_sample(rows_ptr, n_sample, n_rows)
            if status != 0:
                raise ValueError(f"the row sample must be increasing row indices below "
                                 f"{n_rows}")
        self.pairs = &pairs[0, 0, 0]
        self.sampler.start_tree(seed)
        self._prepare_tree(raw, output)
        with nogil:
            self.values = self.quantizer.values(self.pairs, n_rows, seed, self.n_threads)
            status = self._grow(learning_rate, rows_ptr, n_sample)
            if status == 0:
                self._update_raw(raw, output, self.quantizer.levels > 0, learning_rate)
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
        return [out]

    def twin(self, int n_threads=1):
        """A grower of the same class and parameters on the same binned matrix (shared,
        not copied), with buffers of its own: two trees grow at once, one on each."""
        return type(self)(self.X, self.X.n_bins, self.X.bin_offsets, self.bin_thresholds,
                          self.grower_params, n_threads)

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
        rows = np.asarray(self.partition.rows)
        out = np.empty(ends[0] if n_nodes > 0 else 0, dtype=rows.dtype)
        for k in np.flatnonzero(np.array([self.nodes[k].is_leaf for k in range(n_nodes)],
                                         dtype=bool)):
            n0 = hi[k, 0] - lo[k, 0]
            out[starts[k]:starts[k] + n0] = rows[lo[k, 0]:hi[k, 0]]
            out[starts[k] + n0:ends[k]] = rows[lo[k, 1]:hi[k, 1]]
        return out, starts, ends


# ---------------------------------------------------------------- for the tests only
# (the C-level functions above called from Python by tests/; gbtree itself does not)
def py_keep_first(double[::1] keys, int[::1] nodes, int n_keep):
    """``_keep_first`` on the pairs ``(keys[i], nodes[i])``: returns (kept, dropped)
    as int arrays."""
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
