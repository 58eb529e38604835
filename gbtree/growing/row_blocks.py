"""Rows in blocks that ``level_tree.TreeBuilder`` grows trees over, a batch of
splits at a time: ``RowBlocks`` holds each tree's rows partitioned by node (a
range of them a node, per block) and the histograms of the nodes that may split;
a batch partitions every block's rows, builds the histograms of the smaller
child of each split (by hessian sum; the other child's is its parent's minus it)
and scans them. The in-memory growers of symmetric trees and vector leaves grow
over one block; ``distributed.row_shard.RowShard`` over blocks on disk or a
Dask worker's rows, its exchanges summing the histograms and gathering the best
splits over the shards (a store alone sums nothing)."""
import dataclasses
import sys

import numpy as np

from ..kernels._binned_matrix import columns_of
from ..kernels._column_sampler import ColumnSampler
from ..kernels._constraints import InteractionConstraints
from ..kernels._leaf_rows import add_leaf_values
from ..kernels._node_histograms import level_histograms, py_unpack_histogram
from ..kernels._partition import partition_ranges
from ..kernels._splitting import find_best_split_outputs, py_find_best_split
from .grower_params import check_pairs
from .level_tree import TreeBuilder, allowed_features

# the deepest symmetric tree (2**16 leaves), as CatBoost's
MAX_SYMMETRIC_DEPTH = 16


class MemoryBlock:
    """A block of binned rows held in memory (row-major bins, their columns as one
    column-major array, labels, weights or None); ``columns`` are made from the bins
    when not given (sparse bins, a ``binning.SparseBinned``, are their own columns).
    A ranker's block holds whole queries: ``groups`` is (their row offsets, their
    numbers among all queries), else None."""

    def __init__(self, Xb, y, w, n_threads, columns=None, groups=None):
        self.Xb, self.y, self.w = Xb, y, w
        if columns is None:
            columns = columns_of(Xb, n_threads) if isinstance(Xb, np.ndarray) else Xb
        self.columns = columns
        self.n_rows = Xb.shape[0]
        self.groups = groups

    def load(self):
        return self


class RowBlocks:
    """The rows of ``blocks`` (objects whose ``load()`` gives ``Xb``, ``columns``,
    ``n_rows``), their gradient ``pairs`` (K, rows, 2) and raw scores ``raw``
    (rows, K), set by the owner; see the module."""

    def take_blocks(self, blocks, block_rows, n_bins, bin_offsets, thresholds, grower_params,
                    n_threads):
        """Hold ``blocks`` of ``block_rows`` rows each, binned into ``n_bins`` bins a
        feature (``bin_offsets``, ``thresholds``); ``grower_params`` scans them."""
        self.blocks = blocks
        self.offsets = np.concatenate([[0], np.cumsum(block_rows)]).astype(np.int64)
        self.n_rows = int(self.offsets[-1])
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.intc)
        self.bin_offsets = np.ascontiguousarray(bin_offsets, dtype=np.intc)
        self.thresholds = thresholds
        self.grower_params = grower_params
        self.n_threads = n_threads
        mono = grower_params.monotone_constraints
        self.monotone = (None if mono is None or not np.any(mono) else
                         np.ascontiguousarray(mono, dtype=np.int8))
        # quantised gradients: the levels, and per tree of the round its rows' packed
        # values; the steps (gradient, hessian) of each output
        self.levels = grower_params.quant_levels
        self.values, self.steps = {}, None
        # while a round's trees grow: (block, tree of the round) -> the block's rows,
        # partitioned so that each node's rows are one range of them, and
        # (block, tree, node) -> that range
        self.rows, self.ranges = {}, {}
        # per tree of the round: its column sample, interaction constraints (a symmetric
        # tree's: the features of its levels), and the summed histograms (of the
        # features this store scans) of the nodes the next batch may split
        self.samplers, self.paths, self.used, self.hists = {}, {}, {}, {}
        self._buffers = []   # (the arrays of earlier batches' histograms, see ``_empty``)
        # (the features this store scans: every one, unless its shard connects)
        self.own, self.own_n_bins, self.own_offsets = (0, len(n_bins)), self.n_bins, \
            self.bin_offsets

    # a store alone: its sums are its own (``ShardExchange`` sums over the shards)
    peers = None

    def _exchange(self, parts, extra):
        return parts, extra

    def _gather(self, found):
        return found

    def _empty(self, shape, dtype=np.float64):
        """An array of ``shape``, in the smallest buffer of an earlier batch that is
        large enough and that no histogram views any more (its pages are mapped
        already: fresh pages cost as much as building the histograms into them)."""
        size = int(np.prod(shape))
        # (no view of a free one lives: the list's, the loop's and the call's references)
        free = [b for b in self._buffers
                if b.dtype == dtype and b.size >= size and sys.getrefcount(b) == 3]
        if free:
            return min(free, key=len)[:size].reshape(shape)
        # (the free ones are too small: dropped, so that the buffers are what histograms hold)
        self._buffers = [b for b in self._buffers if sys.getrefcount(b) > 3]
        buffer = np.empty(size, dtype=dtype)
        self._buffers.append(buffer)
        return buffer.reshape(shape)

    def _each_block(self, only=None):
        """(index, loaded block) in order, of the blocks ``only`` (None: all)."""
        for b in range(len(self.blocks)) if only is None else sorted(only):
            yield b, self.blocks[b].load()

    def _picked(self, b, block, samples):
        """Per sample of the round, the rows of block ``b`` its trees grow on (uint32
        indices into the block, in order; None: every row): ``samples`` as given."""
        return [None if s is None else np.array(s, dtype=np.uint32) for s in samples]

    def _structures(self, trees):
        """The structures a round of ``trees`` trees grows: one per tree, or with
        vector leaves one per set of K trees (the K outputs share it)."""
        return trees // self.pairs.shape[0] if self.grower_params.vector_leaves else trees

    def _outputs(self, t):
        """The outputs of structure ``t``, a slice of them: its tree's, or every one."""
        K = self.pairs.shape[0]
        return slice(0, K) if self.grower_params.vector_leaves else slice(t % K, t % K + 1)

    def grow_trees(self, trees, seeds, samples, learning_rate, renew=None, refit=None):
        """The round's ``trees`` trees (tree t of output t % K, on the rows of sample
        t // K), grown with ``TreeBuilder``: per structure (``_structures``), its nodes
        and its leaves' values by node id (with vector leaves, the lists of its K
        trees' nodes and values). ``seeds``: each structure's column sample's seed."""
        builder = TreeBuilder(self._level, self.thresholds, self.bin_offsets, self.grower_params,
                              renew, refit, self.moves)
        roots = self._roots(self._structures(trees), seeds, samples)
        return [builder.grow(t, root, learning_rate) for t, root in enumerate(roots)]

    def _roots(self, trees, seeds, samples):
        """Start each of the round's ``trees`` structures: its rows (``_picked``), its
        column sample from its seed and its root's sums (of its outputs with vector
        leaves), row count and best split, over all shards."""
        E = int(self.bin_offsets[-1])
        K = self.pairs.shape[0]
        vector = self.grower_params.vector_leaves
        nk = K if vector else 1   # (the outputs of a structure)
        packed = self.levels > 0
        hists = (np.zeros((trees, nk, E), dtype=np.int64) if packed
                 else np.zeros((trees, nk, E, 2)))
        sums = np.zeros((trees, nk, 2))   # (quantised: the sums of the integer values)
        counts = np.zeros(trees)
        h, s = np.empty(hists.shape[1:], dtype=hists.dtype), np.empty((nk, 2))
        for b, block in self._each_block():
            lo, hi = self.offsets[b], self.offsets[b + 1]
            if hi == lo:
                continue
            default = _default_bins(block.Xb)
            for j, picked in enumerate(self._picked(b, block, samples)):
                if picked is not None and picked.shape[0] == 0:
                    continue
                if picked is None and (default is not None or packed):   # (listed rows)
                    picked = np.arange(hi - lo, dtype=np.uint32)
                for t in ([j] if vector else range(j * K, (j + 1) * K)):
                    rows = (np.arange(hi - lo, dtype=np.uint32) if picked is None
                            else picked.copy())
                    self.rows[(b, t)] = rows
                    self.ranges[(b, t, 0)] = (0, rows.shape[0])
                    counts[t] += rows.shape[0]
                    outputs = self._outputs(t)
                    for i, k in enumerate(range(outputs.start, outputs.stop)):
                        total = level_histograms(
                            block.Xb, picked, np.array([[0, rows.shape[0]]]),
                            self.values[t][lo:hi] if packed else self.pairs[k, lo:hi],
                            self.bin_offsets, default, h, np.array([i]), self.n_threads)
                        s[i] = integer_sums(total[0]) if packed else total[0]
                    hists[t] += h
                    sums[t] += s
        own, total = self._exchange(hists.reshape((trees * nk,) + hists.shape[2:]),
                                    np.r_[sums.ravel(), counts])
        own = own.reshape((trees, nk) + own.shape[1:])
        sums, counts = total[:2 * nk * trees].reshape(trees, nk, 2), total[2 * nk * trees:]
        if packed:
            sums = sums * np.array([self.steps[t % K] for t in range(trees)])[:, None]
        if not np.all(np.isfinite(sums)):   # (every shard sees the same sums)
            raise ValueError("grad and hess must be finite: their sums over the rows are "
                             "inf or NaN")
        found = []
        params = self.grower_params
        for t in range(trees):
            self.samplers[t] = ColumnSampler(self.n_bins.shape[0], params)
            self.samplers[t].begin(int(seeds[t]))
            self.paths[t] = InteractionConstraints(self.n_bins.shape[0],
                                                   params.interaction_groups)
            self.paths[t].start()
            self.used[t] = []
            # (a symmetric tree's level's histograms side by side, else each open node's)
            self.hists[t] = own[t] if params.symmetric else {0: own[t]}
            found.append(self._scan_level(t, own[t], sums[t], 0) if params.symmetric
                         else self._scan(t, 0, own[t], sums[t], int(counts[t]), 0))
        return [(sums[t] if vector else sums[t][0], int(counts[t]), split)
                for t, split in enumerate(self._gather(found))]

    def _scan(self, t, node, hist, sums, count, depth, bounds=(-np.inf, np.inf)):
        """The best split of node ``node`` of structure ``t`` among this store's
        features, from its histogram and sums (those of each of its outputs, a leading
        axis; ``bounds``: those of its weight, from monotone constraints): (gain,
        feature, bin, default_left, left sums) or None; with vector leaves, the
        split of the largest gain summed over the outputs, with each output's gain
        after the left sums."""
        params = self.grower_params
        lo, hi = self.own
        if (params.max_depth and depth >= params.max_depth) or count < 2 or hi == lo:
            return None
        if params.vector_leaves:
            return self._summed_split(hist, sums, params.gamma, self.samplers[t].mask(node, depth))
        hist, sums = hist[0], np.asarray(sums).reshape(-1)
        mask = self.paths[t].mask(node, self.samplers[t].mask(node, depth))
        if self.levels:
            hist = py_unpack_histogram(hist, *self.steps[t % self.pairs.shape[0]])
        found = py_find_best_split(
            hist, self.own_n_bins, self.own_offsets, sums[0], sums[1], *params.penalties,
            params.gamma, self.n_threads, params.plain_scan, None if mask is None else mask[lo:hi],
            None if self.monotone is None else self.monotone[lo:hi], *bounds)
        if found["feature"] < 0:
            return None
        return (found["gain"], found["feature"] + lo, found["bin"], found["default_left"],
                np.array([found["sum_g_left"], found["sum_h_left"]]))

    def _scan_level(self, t, hists, sums, depth):
        """The best split of a level of symmetric tree ``t`` among this store's
        features, the same for every node of the level (their histograms ``hists``,
        side by side, and sums, in order): the one of the largest summed gain, valid when the
        children's hessian sums averaged over the nodes are, and kept when it gains
        at least ``gamma`` a node, or None: (gain, feature, bin, default_left, each
        node's left sums, each node's gain)."""
        params = self.grower_params
        lo, hi = self.own
        if depth >= params.max_depth or hi == lo:
            return None
        # (a level has one split: its node-level draw is keyed by the depth)
        mask = allowed_features(params.interaction_groups, self.n_bins.shape[0],
                                self.samplers[t].mask(depth, depth), self.used[t])
        if mask is not None and not mask[lo:hi].any():
            return None
        if self.levels:
            hists = np.stack([py_unpack_histogram(h, *self.steps[t % self.pairs.shape[0]])
                              for h in hists])
        return self._summed_split(hists, sums, params.gamma * len(hists), mask)

    def _summed_split(self, hists, sums, gamma, mask):
        """The split of the largest gain summed over ``hists`` (a structure's outputs, or
        a level's nodes; ``sums``: theirs) among this store's features (``mask``: those
        allowed, of every feature): (gain, feature, bin, default_left, left sums, each
        one's gain) or None."""
        lo, hi = self.own
        found = find_best_split_outputs(
            np.ascontiguousarray(hists), self.own_n_bins, self.own_offsets,
            np.ascontiguousarray(np.reshape(sums, (-1, 2)), dtype=np.float64),
            *self.grower_params.penalties, gamma,
            None if mask is None else np.ascontiguousarray(mask[lo:hi]), self.n_threads)
        return None if found is None else (found[0], found[1] + lo) + tuple(found[2:])

    def _add_leaves(self, leaves):
        """Add each tree's leaf values to the raw scores of the leaves' rows, tree by
        tree: ``leaves`` holds per structure of the round (``_structures``) the
        (column of ``raw``, {node: value}) of each of its trees."""
        by_tree = {}
        for (b, t, node), r in self.ranges.items():
            bounds, vals = by_tree.setdefault((b, t), ([], []))
            bounds.append(r)
            vals.append([values[node] for _, values in leaves[t]])
        for b, t in sorted(by_tree):
            bounds, vals = by_tree[b, t]
            vals = np.array(vals)
            for i, (k, _) in enumerate(leaves[t]):
                add_leaf_values(self.rows[(b, t)], np.array(bounds, dtype=np.int64),
                                np.ascontiguousarray(vals[:, i]),
                                self.raw[self.offsets[b]:self.offsets[b + 1]], k,
                                self.n_threads)
        self.rows, self.ranges = {}, {}

    @property
    def moves(self):
        """``(rename, merge)`` of the nodes split ahead (``TreeBuilder``)."""
        return self._rename, self._merge

    def _rename(self, t, ids):
        """Tree ``t``'s nodes ``ids`` (old: new) renamed: their rows and histograms."""
        hists = self.hists[t]
        for (b, _, node) in [key for key in self.ranges if key[1] == t and key[2] in ids]:
            self.ranges[(b, t, ids[node])] = self.ranges.pop((b, t, node))
        for node in [node for node in hists if node in ids]:
            hists[ids[node]] = hists.pop(node)

    def _merge(self, t, node, left, right):
        """Tree ``t``'s ``node``, split into ``left`` and ``right``, a leaf again: its
        rows those of both (next to each other in each block)."""
        for b in range(len(self.blocks)):
            lo = self.ranges.pop((b, t, left), None)
            hi = self.ranges.pop((b, t, right), None)
            if lo is not None or hi is not None:
                self.ranges[(b, t, node)] = ((lo or hi)[0], (hi or lo)[1])
        self.hists[t].pop(left, None)
        self.hists[t].pop(right, None)

    def _level(self, t, splits):
        """Apply a level's splits of tree ``t``: ``splits`` holds (node, feature, bin,
        default_left, left, right, build, left sums, right sums, children's depth,
        left bounds, right bounds) per split, ``build`` the child whose histogram to
        build (-1: none; the other child's is its parent's minus it), the bounds those
        of the children's weights. Returns the children's row counts (left, right of
        each split in order) and their best splits (``_scan``), both over all
        shards."""
        for split in splits:
            self.paths[t].split(split[0], split[1], split[4], split[5])
        counts = np.zeros(2 * len(splits), dtype=np.int64)
        n_built = sum(1 for s in splits if s[6] >= 0)
        E = int(self.bin_offsets[-1])
        outputs = self._outputs(t)
        nk = outputs.stop - outputs.start   # (each child's histograms: one per output)
        entry, dtype = ((E,), np.int64) if self.levels else ((E, 2), float)
        # built child j's histogram of output i at slots[j] * nk + i (a child's K are one
        # array); a symmetric tree's level side by side, its built children in place
        symmetric = self.grower_params.symmetric and n_built > 0
        slots = (2 * np.arange(n_built) + [s[6] == s[5] for s in splits] if symmetric
                 else np.arange(n_built))
        shape = (n_built, nk) + entry
        built = self._empty(((2 if symmetric else 1) * n_built, nk) + entry, dtype)
        part = None
        first = True   # the first block's histograms go straight into ``built``
        features = np.array([s[1] for s in splits], dtype=np.intc)
        bins = np.array([s[2] for s in splits], dtype=np.intc)
        missing = self.n_bins[features].astype(np.intc)
        defaults = np.array([s[3] for s in splits], dtype=np.uint8)
        # (the blocks where the split nodes have rows)
        where = {b for b in range(len(self.blocks))
                 if any((b, t, split[0]) in self.ranges for split in splits)}
        for b, block in self._each_block(where):
            rows = self.rows.get((b, t))
            spans = np.array([self.ranges.pop((b, t, s[0]), (0, 0)) for s in splits],
                             dtype=np.int64).reshape(-1, 2)
            # every split of the level in one call
            n_lefts = (np.zeros(len(splits), dtype=np.int64) if rows is None else
                       partition_ranges(block.columns, rows, spans, features, bins, missing,
                                        defaults, self.n_threads))
            bounds, which = [], []
            j = 0
            for k, split in enumerate(splits):
                left, right, build = split[4], split[5], split[6]
                lo, hi = int(spans[k, 0]), int(spans[k, 1])
                mid = lo + int(n_lefts[k])
                if mid > lo:
                    self.ranges[(b, t, left)] = (lo, mid)
                if hi > mid:
                    self.ranges[(b, t, right)] = (mid, hi)
                counts[2 * k] += mid - lo
                counts[2 * k + 1] += hi - mid
                if build >= 0:
                    child = (lo, mid) if build == left else (mid, hi)
                    if first or child[1] > child[0]:   # (the first block's: zeros if empty)
                        bounds.append(child)
                        which.append(j)
                    j += 1
            if bounds:
                # the block's share of every built child in one call an output
                if not first and part is None:
                    part = self._empty(shape, dtype)
                lo_b, hi_b = self.offsets[b], self.offsets[b + 1]
                out = (built if first else part).reshape((-1,) + entry)
                places = nk * (slots[which] if first else np.arange(len(bounds)))
                for i, k in enumerate(range(outputs.start, outputs.stop)):
                    values = (self.values[t][lo_b:hi_b] if self.levels else
                              self.pairs[k, lo_b:hi_b])
                    level_histograms(block.Xb, rows, np.array(bounds, dtype=np.int64), values,
                                     self.bin_offsets, _default_bins(block.Xb), out, places + i,
                                     self.n_threads)
                if not first:
                    if len(which) == built.shape[0]:
                        built += part      # (in place: every child has rows here)
                    else:
                        built[slots[which]] += part[:len(bounds)]
                first = False
        if first:
            built[...] = 0
        # (a store alone sums nothing: its histograms stay where they were built)
        parts = built if self.peers is None or not symmetric else built[slots]
        own, counts = self._exchange(parts.reshape((-1,) + entry), counts)
        own = own.reshape((parts.shape[0], nk) + own.shape[1:])
        if self.grower_params.symmetric:
            if parts is not built:   # (the shards' sums of this shard's features)
                level = self._empty((built.shape[0],) + own.shape[1:], own.dtype)
                level[slots] = own
                own = level
            return counts, self._next_level(t, splits, own, slots)
        hists = self.hists[t]   # (of the open nodes: a split's replaced by its children's)
        found, made = [], []
        j = 0
        for k, (node, _, _, _, left, right, build, sums_l, sums_r, depth, bounds_l,
                bounds_r) in enumerate(splits):
            if build < 0:
                hists.pop(node, None)
                found += [None, None]
                made += [(None, None)] * 2
                continue
            small = own[j]
            j += 1
            other = hists.pop(node)
            other -= small   # (in place: the parent's histogram is not needed again)
            for c, sums, n, bounds in ((left, sums_l, counts[2 * k], bounds_l),
                                       (right, sums_r, counts[2 * k + 1], bounds_r)):
                hist = small if c == build else other
                made.append((c, hist))
                found.append(self._scan(t, c, hist, np.asarray(sums), int(n), depth, bounds))
        if n_built == 0:   # (the last level: its children are leaves, whatever any shard says)
            return counts, found
        found = self._gather(found)
        for (c, hist), split in zip(made, found):   # (those of the children that may split)
            if split is not None:
                hists[c] = hist
        return counts, found

    def _next_level(self, t, splits, level, slots):
        """The best split of the level that symmetric tree ``t``'s ``splits`` make
        ([None] at the last level), from the children's histograms side by side
        (``level``): the built ones at ``slots``, the others their parents' minus
        them."""
        parents = self.hists.pop(t)   # (the level's, side by side)
        if splits[0][6] < 0:
            return [None]
        self.used[t].append(splits[0][1])
        for k, slot in enumerate(slots):
            np.subtract(parents[k], level[slot, 0], out=level[slot ^ 1, 0])
        self.hists[t] = level[:, 0]
        sums = np.concatenate([[split[7], split[8]] for split in splits])
        return self._gather([self._scan_level(t, level[:, 0], sums, splits[0][9])])


class BlockGrower(RowBlocks):
    """A grower of symmetric trees or vector leaves over a binned matrix in memory
    (dense or a ``binning.SparseBinned``), one block of ``RowBlocks``; the
    construction of ``_expand_ahead.TreeGrower``. Monotone constraints and quantised
    gradients are refused, interaction constraints but for symmetric trees."""

    kind = "trees"
    interactions = False
    moves = None   # (one block in memory: a batch is no exchange, nothing to split ahead)

    def __init__(self, X_binned, n_bins, bin_offsets, bin_thresholds, params, n_threads,
                 default_bin=None):
        if (params.monotone_constraints is not None or params.quant_levels
                or (params.interaction_groups and not self.interactions)):
            refused = "monotone constraints, quantised gradients" + (
                "" if self.interactions else " or interaction constraints")
            raise ValueError(f"{self.kind} do not support {refused}")
        self.params = params
        self.n_features = X_binned.shape[1]
        self.take_blocks([MemoryBlock(X_binned, None, None, n_threads)], [X_binned.shape[0]],
                         n_bins, bin_offsets, np.asarray(bin_thresholds, dtype=np.float64),
                         params, n_threads)
        self._last = None

    def grow(self, pairs, learning_rate, raw, output, sample=None, seed=0):
        """Grow one tree structure on ``pairs`` (m, n_rows, 2) float32 of outputs
        ``output`` .. ``output + m - 1``, on the rows ``sample`` (sorted; None: all),
        its column sample drawn from ``seed``; add its values to those columns of
        ``raw``. Returns its m trees (NODE_DTYPE), one per output."""
        m = pairs.shape[0]
        check_pairs(pairs.shape, self.n_rows, raw.shape[1] if self.params.vector_leaves else 1)
        if raw.shape[0] != self.n_rows or not 0 <= output <= raw.shape[1] - m:
            raise ValueError(f"raw of shape {raw.shape} has no outputs {output} to "
                             f"{output + m - 1} of {self.n_rows} rows")
        if sample is not None and len(sample) == 0:
            raise ValueError("there are no rows to grow a tree on")
        self.pairs, self.raw = pairs, raw
        (nodes, values), = self.grow_trees(m, [seed], [sample], learning_rate)
        if not self.params.vector_leaves:
            nodes, values = [nodes], [values]
        starts, ends = np.zeros((2, nodes[0].shape[0]), dtype=np.intp)
        for (_, _, node), (lo, hi) in self.ranges.items():   # (the leaves with rows)
            starts[node], ends[node] = lo, hi
        self._last = (self.rows[(0, 0)], starts, ends)
        self._add_leaves([[(output + k, v) for k, v in enumerate(values)]])
        self.pairs = self.raw = None
        return nodes

    def node_bounds(self):
        """``(lower, upper)`` bounds on each node's weight in the last tree: none."""
        n = self._last[1].shape[0]
        return np.full(n, -np.inf), np.full(n, np.inf)

    def leaf_rows(self):
        """As ``TreeGrower.leaf_rows``: the row array of the last tree and each leaf's
        (start, end) in it, its rows increasing ((0, 0) for other nodes)."""
        return self._last


class VectorLeafGrower(BlockGrower):
    """Grows trees whose leaves hold a vector, one structure for the K outputs
    (XGBoost's ``multi_strategy="multi_output_tree"``): each split maximises the gain
    summed over the outputs (``find_best_split_outputs``), each leaf holds a Newton
    step per output. The tree is returned as K trees of one structure, each with its
    output's values, covers and gains, as the ensemble stores it."""

    kind = "trees whose leaves hold a vector"

    def __init__(self, X_binned, n_bins, bin_offsets, bin_thresholds, params, n_threads,
                 default_bin=None):
        super().__init__(X_binned, n_bins, bin_offsets, bin_thresholds,
                         dataclasses.replace(params, vector_leaves=True), n_threads)


class SymmetricGrower(BlockGrower):
    """Grows symmetric (oblivious) trees to ``max_depth`` (``grow_policy="symmetric"``,
    CatBoost's): every node of a level splits alike, by the split of the largest gain
    summed over the level's nodes (``find_best_split_outputs``, a node per output), so
    a node may have an empty child. Column sampling draws one set of features a level;
    with interaction constraints a level splits on a feature that lies in one group
    with those of the levels above. The tree is complete, its nodes in level order
    (node i's children are 2i + 1 and 2i + 2)."""

    kind = "symmetric trees"
    interactions = True

    def __init__(self, X_binned, n_bins, bin_offsets, bin_thresholds, params, n_threads,
                 default_bin=None):
        if params.lossguide or params.max_leaves or not 1 <= params.max_depth <= \
                MAX_SYMMETRIC_DEPTH:
            raise ValueError(f"symmetric trees grow level by level to max_depth (1 to "
                             f"{MAX_SYMMETRIC_DEPTH}), without max_leaves")
        super().__init__(X_binned, n_bins, bin_offsets, bin_thresholds,
                         dataclasses.replace(params, symmetric=True), n_threads)


def _default_bins(Xb):
    """The bins of absent entries of sparse bins, None for dense ones."""
    return None if isinstance(Xb, np.ndarray) else Xb.default_bin


def integer_sums(packed):
    """The (gradient, hessian) integer sums that a packed int64 histogram entry holds
    (``_unpack.h``'s ``gbt_unpack_entries``), as floats (exact)."""
    low = np.int64(np.uint32(packed & 0xFFFFFFFF).view(np.int32))
    return np.array([float((packed - low) >> 32), float(low)])
