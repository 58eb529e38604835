"""The rows of a level-wise fit (``levelwise.boost``), held in shards: one per
Dask worker (``gbtree.dask``), or one whose blocks of rows are files (out-of-core
fits, ``gbtree.ExternalData``). Trees are grown a batch of splits at a time. Depthwise
and symmetric trees are grown a level at a time, lossguide trees a split at a
time (``level_tree.TreeBuilder``); the words "level" below mean either batch. A tree whose
leaves hold a vector is one structure for the K outputs (``_structures``): each
node's K histograms are built, exchanged and scanned together.

A ``RowShard`` holds rows in blocks (in memory, or loaded one at a time from
disk while the next one is read) and, in memory, what a fit keeps per row: raw
scores, gradients and, while a tree grows, the rows partitioned by node (4 bytes
a row). The trainer (``boost``) talks to the shards only through
``call(method, *args)``, which returns every shard's answer in shard order, once
per round: ``grow`` has every shard compute its rows' gradients and grow the
round's trees, each shard the same trees, level by level, talking to the others
directly (LightGBM's data-parallel learner):

- each level, every shard applies the level's splits to its rows and builds the
  histograms of the smaller child of each split (by hessian sum; the larger
  child's is its parent's minus the smaller one's);
- the histograms are reduce-scattered (``shard_exchange``): each shard gets
  those of its range of features from every shard and sums them in shard order,
  so the model never depends on which shard answers first;
- each shard scans its features for the children's best splits, and the
  candidates are gathered by every shard, which keeps the best (the first
  shard's on a tie, as one scan over every feature would).

A shard alone (out of core) does the same without sending anything. Per tree
level, a shard sends each other shard its part of the histograms and its
candidates; the client only starts each round and gets its trees.

With ``subsample`` < 1 a round's trees grow on the rows whose uniform draw is
below it; row r of the data draws the r-th number of the round's generator, as
in a local fit (a shard knows where its rows are in the data, ``places``, and
jumps its generator there), so the same rows are drawn however they are spread
over shards and blocks. The other rows get the round's trees from a walk over
their bins, when their block is next read.
"""
import concurrent.futures

import numpy as np

from ..boosting import booster, rounds, sampling
from ..boosting import objectives as _obj
from ..kernels._binned_matrix import columns_of
from ..kernels._column_sampler import ColumnSampler
from ..kernels._constraints import InteractionConstraints
from ..kernels._node_histograms import level_histograms, output_histograms, py_unpack_histogram
from ..kernels._leaf_rows import add_leaf_values, leaf_sums
from ..kernels._quantizer import gradient_extent_of, quantize_places, steps_of
from ..kernels._partition import partition_ranges
from ..kernels._splitting import find_best_split_outputs, py_find_best_split
from ..kernels._threads import ThreadBudget
from ..kernels._typedefs import G_H_DTYPE
from .leaf_quantiles import SELECTED, huber_location, select_quantiles
from ..growing.level_tree import TreeBuilder
from .shard_exchange import ShardExchange
from ..growing.level_tree import allowed_features
from ..predicting.tree import add_tree_binned_rows


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
        self.n_rows = y.shape[0]
        self.groups = groups

    def load(self):
        return self


class RowShard(ShardExchange):
    """Rows in ``blocks`` (objects whose ``load()`` gives ``Xb``, ``columns``, ``y``,
    ``w``, ``n_rows``) and each row's raw scores and gradients; see the module."""

    def start(self, blocks, block_rows, mapper, objective, base_score, n_threads, grower_params,
              prefetch=False, places=None, init=None, margin=None):
        """Take ``blocks`` of ``block_rows`` rows each; every raw score starts at
        ``base_score`` or the row's base ``margin`` ((rows, outputs), if given), plus
        (``init``: the ensemble a warm start continues, whose trees split at
        ``mapper``'s edges) its trees' scores, computed when each block is first read;
        ``grower_params`` (GrowerParams) scans the histograms. ``prefetch``:
        read the next block on a thread while the current one is worked on.
        ``places``: where the rows are in the data, as runs (first row, count) in the
        shard's order (None: its rows are the data's, in order). The shard is the only
        one of its fit until ``connect``."""
        self.blocks = blocks
        self.offsets = np.concatenate([[0], np.cumsum(block_rows)]).astype(np.int64)
        self.n_rows = int(self.offsets[-1])
        self.places = (np.array([[0, self.n_rows]], dtype=np.int64) if places is None
                       else np.asarray(places, dtype=np.int64).reshape(-1, 2))
        self.objective = objective
        # (the model is the same at any thread count: each round takes what is free)
        self.threads = ThreadBudget(n_threads)
        self.n_threads = self.threads.n
        self.grower_params = grower_params
        # quantised gradients: the levels, and per tree of the round its rows' packed
        # values; the steps (gradient, hessian) of each output
        self.levels = grower_params.quant_levels
        self.values, self.steps = {}, None
        self.prefetch = prefetch and len(blocks) > 1
        self.bin_offsets = np.ascontiguousarray(mapper.bin_offsets_, dtype=np.intc)
        self.n_bins = np.ascontiguousarray(mapper.n_bins_, dtype=np.intc)
        self.thresholds = mapper.bin_thresholds()
        mono = grower_params.monotone_constraints
        self.monotone = (None if mono is None or not np.any(mono) else
                         np.ascontiguousarray(mono, dtype=np.int8))
        K = base_score.shape[0]
        self.raw = (np.tile(base_score, (self.n_rows, 1)) if margin is None
                    else np.array(margin, dtype=np.float64, order="C"))
        self._from_margin = margin is not None
        self.pairs = np.empty((K, self.n_rows, 2), dtype=G_H_DTYPE)
        # while a round's trees grow: (block, tree of the round) -> the block's rows,
        # partitioned so that each node's rows are one range of them, and
        # (block, tree, node) -> that range
        self.rows, self.ranges = {}, {}
        # per tree of the round: its column sample, interaction constraints (a symmetric
        # tree's: the features of its levels), and the summed histograms (of the
        # features this shard scans) of the nodes the next level may split
        self.samplers, self.paths, self.used, self.hists = {}, {}, {}, {}
        self._pool = self._ahead = None
        self._losses = {}   # a ranker's loss over each block's queries
        # the rows of each block left out of each sample of the last round, and what
        # that round's trees still owe the raw scores, paid when the block is next read
        # (functions of the block's index, the loaded block and its raw scores)
        self._left_out, self._pending = {}, []
        self._y = self._w = None   # (every row's label and weight, when a loss reads them)
        self._refit_weight = None   # (the round's weights of the leaf refit, under GOSS)
        if init is not None:
            def scores(b, block, raw):   # (as a local fit starts: the binned rows' scores)
                raw[:] = init.predict_raw_binned(block.Xb, self.n_bins, self.n_threads,
                                                 None if margin is None else raw.copy())
            self._pending = [scores]
        self.connect(None, 0, [(0, self.n_bins.shape[0])], None)
        return self.n_rows

    def _scan(self, t, node, hist, sums, count, depth, bounds=(-np.inf, np.inf)):
        """The best split of node ``node`` of structure ``t`` among this shard's
        features, from its histogram and sums (those of each of its outputs, a leading
        axis; ``bounds``: those of its weight, from monotone constraints): (gain,
        feature, bin, default_left, left sums) or None; with vector leaves, the
        split of the largest gain summed over the outputs (as a local fit's
        ``VectorLeafGrower`` scans), with each output's gain after the left sums."""
        params = self.grower_params
        lo, hi = self.own
        if (params.max_depth and depth >= params.max_depth) or count < 2 or hi == lo:
            return None
        if params.vector_leaves:
            mask = self.samplers[t].mask(node, depth)
            found = find_best_split_outputs(
                np.ascontiguousarray(hist), self.own_n_bins, self.own_offsets,
                np.ascontiguousarray(sums, dtype=np.float64), *params.penalties, params.gamma,
                None if mask is None else np.ascontiguousarray(mask[lo:hi]), self.n_threads)
            if found is None:
                return None
            gain, f, b, default_left, left_sums, gains = found
            return gain, f + lo, b, default_left, left_sums, gains
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
        """The best split of a level of symmetric tree ``t`` among this shard's
        features, the same for every node of the level (their histograms ``hists``
        and sums, in order): the one of the largest summed gain
        (``_splitting.find_best_split_outputs``, as a local fit's symmetric grower
        scans), or None: (gain, feature, bin, default_left, each node's left sums,
        each node's gain)."""
        params = self.grower_params
        lo, hi = self.own
        if depth >= params.max_depth or hi == lo:
            return None
        mask = allowed_features(params.interaction_groups, self.n_bins.shape[0],
                                self.samplers[t].mask(depth, depth), self.used[t])
        if mask is not None and not mask[lo:hi].any():
            return None
        hists = [h[0] for h in hists]   # (a symmetric tree has one output)
        if self.levels:
            hists = [py_unpack_histogram(h, *self.steps[t % self.pairs.shape[0]])
                     for h in hists]
        found = find_best_split_outputs(
            np.ascontiguousarray(np.stack(hists)), self.own_n_bins, self.own_offsets,
            np.ascontiguousarray(np.reshape(sums, (-1, 2)), dtype=np.float64),
            *params.penalties, params.gamma * len(hists),
            None if mask is None else np.ascontiguousarray(mask[lo:hi]), self.n_threads)
        if found is None:
            return None
        gain, f, b, default_left, left_sums, gains = found
        return gain, f + lo, b, default_left, left_sums, gains

    def _loss_of(self, b, block):
        """The loss over block ``b``'s rows: the shard's, or for a ranker, its loss over
        the block's queries (made once: it keeps their rankings between rounds)."""
        if block.groups is None:
            return self.objective
        if b not in self._losses:
            self._losses[b] = self.objective.for_groups(*block.groups)
        return self._losses[b]

    def _each_block(self, only=None):
        """(index, loaded block) in order, of the blocks ``only`` (None: all); with
        ``prefetch``, the next one is read while the caller works on this one (after
        the last one, the first block, where the next pass may start)."""
        order = range(len(self.blocks)) if only is None else sorted(only)
        if not self.prefetch:
            for b in order:
                yield b, self.blocks[b].load()
            return
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1)
            self._ahead = (0, self._pool.submit(self.blocks[0].load))
        for k, b in enumerate(order):
            ahead, loading = self._ahead
            current = loading.result() if ahead == b else self.blocks[b].load()
            after = order[k + 1] if k + 1 < len(order) else 0
            self._ahead = (after, self._pool.submit(self.blocks[after].load))
            yield b, current

    def _add_leaves(self, leaves):
        """Add each tree's leaf values to the raw scores of the leaves' rows, tree by
        tree: ``leaves`` holds per structure of the last round (``_structures``) the
        (output, {node: value}) of each of its trees."""
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

    def _structures(self, trees):
        """The structures a round of ``trees`` trees grows: one per tree, or with
        vector leaves one per set of K trees (the K outputs share it)."""
        return trees // self.pairs.shape[0] if self.grower_params.vector_leaves else trees

    def _outputs(self, t):
        """The outputs of structure ``t``, a slice of them: its tree's, or every one."""
        K = self.pairs.shape[0]
        return slice(0, K) if self.grower_params.vector_leaves else slice(t % K, t % K + 1)

    def grow(self, trees, seeds, learning_rate, samples=None, drop=None):
        """One round: the gradients of the raw scores, then the round's ``trees``
        grown with the other shards (every shard grows the same trees), their leaf
        values added to the raw scores. Tree t fits output t % K of the K outputs, on
        the rows of sample t // K (a forest's trees each have rows of their own);
        ``seeds``: their column samples' seeds. ``samples``: per sample, (rate, its
        generator's seed) to draw the rows, or None for every row (all None: no
        samples, one set of K trees). ``drop``: DART's (dropped trees, their
        outputs, their factor, the new trees' weight) when the round drops trees,
        else None. Returns each tree's nodes (NODE_DTYPE), unweighted."""
        K = self.pairs.shape[0]
        self.n_threads = self.threads.n
        samples = samples or [None] * (trees // K)
        builder = TreeBuilder(self._level, self.thresholds, self.bin_offsets, self.grower_params,
                              self._renew if self.levels else None,
                              self._refit if isinstance(self.objective, SELECTED) else None)
        S = self._structures(trees)
        roots = self._roots(S, seeds, samples, drop)
        grown = [builder.grow(t, roots[t], learning_rate) for t in range(S)]
        if self.grower_params.vector_leaves:   # (the K trees of each structure)
            by_structure = [list(zip(range(K), values)) for _, values in grown]
            grown = [tree for nodes, values in grown for tree in zip(nodes, values)]
        else:
            by_structure = [[(t % K, values)] for t, (_, values) in enumerate(grown)]
        outputs = [t % K for t in range(trees)]
        if drop is not None:
            # every row's raw score anew when its block is next read, as a local fit
            # sets it: without the dropped trees, plus them scaled, plus the new ones
            self.rows, self.ranges = {}, {}
            dropped, dropped_out, factor, weight = drop
            new = [nodes.copy() for nodes, _ in grown]
            for nodes in new:
                nodes["value"] *= weight

            def restore(b, block, raw):
                raw[:] = (raw + factor * self._contributions(block, dropped, dropped_out)
                          + self._contributions(block, new, outputs))
            self._pending = [restore]
        elif len(samples) > 1 and any(samples):
            # (a forest's samples overlap: every row gets the trees in their order, as
            # the local fit adds them, when its block is next read)
            self.rows, self.ranges = {}, {}
            self._pending = [self._walk(nodes, t % K, None)
                             for t, (nodes, _) in enumerate(grown)]
        else:
            self._add_leaves(by_structure)
            self._pending = [self._walk(nodes, t % K, t // K)
                             for t, (nodes, _) in enumerate(grown)
                             if samples[t // K] is not None]
        sending, self._sending = self._sending, []
        self._sent(sending)
        self.threads.round_done()
        return [nodes for nodes, _ in grown]

    def _walk(self, nodes, k, j):
        """What tree ``nodes`` (of output k) owes the rows left out of the round's
        sample j (None: every row): a walk over their bins, added to their raw
        scores."""
        def add_owed(b, block, raw):
            rows = (np.arange(raw.shape[0], dtype=np.uint32) if j is None
                    else self._left_out[(b, j)])
            add_tree_binned_rows(block.Xb, self.n_bins, nodes, rows, raw, k, self.n_threads)
        return add_owed

    def _contributions(self, block, trees, outputs):
        """The sum of ``trees`` (tree i of output ``outputs[i]``) on each row of
        ``block``, shape (rows, K), added in the trees' order."""
        return booster._BinnedRows(block.Xb, self.n_bins, self.n_threads).contributions(
            trees, outputs, self.pairs.shape[0])

    def _roots(self, trees, seeds, samples, drop=None):
        """Compute the gradients of the raw scores (without the trees ``drop`` drops)
        and, for each of the round's ``trees`` structures (``_structures``), start
        its column sample from its seed and return the root's sums (of its outputs
        with vector leaves), row count and best split, over all shards
        (``samples``, ``drop``: as in ``grow``)."""
        E = int(self.bin_offsets[-1])
        K = self.pairs.shape[0]
        vector = self.grower_params.vector_leaves
        nk = K if vector else 1   # (the outputs of a structure)
        packed = self.levels > 0
        goss = {j: sample for j, sample in enumerate(samples)
                if sample is not None and sample[0] == "goss"}
        if packed or goss:
            # (the steps and GOSS's rows need every row's gradients, over all shards: the
            # gradients of every block first, then the histograms)
            for b, block in self._each_block():
                self._gradients(b, block, drop)
            kept = {j: self._goss(*sample[1:]) for j, sample in goss.items()}
            if packed:
                self._quantize(trees, seeds)
        hists = (np.zeros((trees, nk, E), dtype=np.int64) if packed
                 else np.zeros((trees, nk, E, 2)))
        sums = np.zeros((trees, nk, 2))   # (quantised: the sums of the integer values)
        counts = np.zeros(trees)
        h, s = np.empty(hists.shape[1:], dtype=hists.dtype), np.empty((nk, 2))
        for b, block in self._each_block():
            lo, hi = self.offsets[b], self.offsets[b + 1]
            if hi == lo:
                continue
            if not (packed or goss):
                self._gradients(b, block, drop)
            default = _default_bins(block.Xb)
            for j, sample in enumerate(samples):
                picked = None   # (None: every row, in order)
                if sample is not None:
                    keep = (kept[j][lo:hi] if j in goss
                            else self._draws(sample[1], lo, hi) < sample[0])
                    picked = np.flatnonzero(keep).astype(np.uint32)
                    self._left_out[(b, j)] = np.flatnonzero(~keep).astype(np.uint32)
                    if picked.shape[0] == 0:
                        continue
                if picked is None and (default is not None or packed):   # (listed rows)
                    picked = np.arange(hi - lo, dtype=np.uint32)
                for t in ([j] if vector else range(j * K, (j + 1) * K)):
                    rows = (np.arange(hi - lo, dtype=np.uint32) if picked is None
                            else picked.copy())
                    self.rows[(b, t)] = rows
                    self.ranges[(b, t, 0)] = (0, rows.shape[0])
                    counts[t] += rows.shape[0]
                    if packed:
                        total = level_histograms(
                            block.Xb, picked, np.array([[0, picked.shape[0]]]),
                            self.values[t][lo:hi], self.bin_offsets, default, h,
                            np.zeros(1, dtype=np.int64), self.n_threads)
                        s[0] = integer_sums(total[0])
                    else:
                        pairs = np.ascontiguousarray(self.pairs[self._outputs(t), lo:hi])
                        output_histograms(block.Xb, picked, pairs, self.bin_offsets, default,
                                          h, s, self.n_threads)
                    hists[t] += h
                    sums[t] += s
        self._pending = []
        own, total = self._exchange(hists.reshape((trees * nk,) + hists.shape[2:]),
                                    np.r_[sums.ravel(), counts])
        own = own.reshape((trees, nk) + own.shape[1:])
        sums, counts = total[:2 * nk * trees].reshape(trees, nk, 2), total[2 * nk * trees:]
        if packed:
            sums = sums * np.array([self.steps[t % K] for t in range(trees)])[:, None]
        if not np.all(np.isfinite(sums)):   # (every shard sees the same sums)
            raise ValueError(f"{rounds.NOT_FINITE}: their sums over the rows are inf or NaN")
        found = []
        for t in range(trees):
            self.samplers[t] = ColumnSampler(self.n_bins.shape[0], self.grower_params)
            self.samplers[t].begin(int(seeds[t * K if vector else t]))
            self.paths[t] = InteractionConstraints(self.n_bins.shape[0],
                                                   self.grower_params.interaction_groups)
            self.paths[t].start()
            self.used[t] = []
            self.hists[t] = {0: own[t]}
            found.append(self._scan_level(t, [own[t]], sums[t], 0) if self.grower_params.symmetric
                         else self._scan(t, 0, own[t], sums[t], int(counts[t]), 0))
        return [(sums[t] if vector else sums[t][0], int(counts[t]), split)
                for t, split in enumerate(self._gather(found))]

    def _goss(self, top_rate, other_rate, key):
        """GOSS's rows of the round, drawn as a local fit draws them from the shard's
        gradients (which GOSS amplifies in place; the shard holds every row of its
        fit): whether each row is kept. A loss that refits leaves weighs the
        amplified rows more, as a local fit does."""
        kept = np.ones(self.n_rows, dtype=bool)
        rows, amplified = sampling.goss_rows(top_rate, other_rate, np.random.default_rng(key),
                                            self.pairs[:, :, 0], self.pairs[:, :, 1])
        if rows is not None:
            kept[:] = False
            kept[rows] = True
        self._refit_weight = None
        if amplified is not None and isinstance(self.objective, SELECTED):
            _, w = self._labels()
            self._refit_weight = np.ones(self.n_rows) if w is None else w.copy()
            self._refit_weight[amplified] *= (1.0 - top_rate) / other_rate
        return kept

    def _gradients(self, b, block, drop):
        """The gradients of block ``b``'s rows (loaded: ``block``), after what earlier
        rounds owe its raw scores and without the trees ``drop`` drops."""
        lo, hi = self.offsets[b], self.offsets[b + 1]
        if hi == lo:
            return
        for add_owed in self._pending:
            add_owed(b, block, self.raw[lo:hi])
        if drop is not None:
            self.raw[lo:hi] -= self._contributions(block, drop[0], drop[1])
        self._loss_of(b, block).gradient(block.y, self.raw[lo:hi], block.w,
                                         self.pairs[:, lo:hi, 0], self.pairs[:, lo:hi, 1],
                                         self.n_threads)

    def _quantize(self, trees, seeds):
        """Quantised gradients: the steps of each output, from its largest |gradient|
        and |hessian| over every shard's rows (NaN when one is not finite, as in a
        local fit), then the packed values of each tree's rows, drawn at their places
        in the data: the values a local fit's trees histogram."""
        K = self.pairs.shape[0]
        extents = np.zeros((K, 2))
        for k in range(K):
            extent = gradient_extent_of(self.pairs[k], self.n_threads)
            extents[k] = np.nan if extent is None else extent
        largest = self._largest(extents)
        self.steps = [(np.nan, np.nan) if np.isnan(largest[k]).any()
                      else steps_of(largest[k, 0], largest[k, 1], self.levels)
                      for k in range(K)]
        self.values = {}
        for t in range(trees):
            k = t % K
            self.values[t] = np.zeros(self.n_rows, dtype=np.int32)
            if not np.isnan(self.steps[k][0]):
                quantize_places(self.pairs[k], self.levels, int(seeds[t]), *self.steps[k],
                                self.places, self.values[t], self.n_threads)

    def _labels(self):
        """Every row's label and weight (None: unweighted), read from the blocks once."""
        if self._y is None:
            y, w = np.empty(self.n_rows), None
            for b, block in self._each_block():
                lo, hi = self.offsets[b], self.offsets[b + 1]
                y[lo:hi] = block.y
                if block.w is not None:
                    w = np.ones(self.n_rows) if w is None else w
                    w[lo:hi] = block.w
            self._y, self._w = y, w
        return self._y, self._w

    def start_value(self):
        """The starting raw score of a loss whose starting value is a weighted quantile
        of y (``objective.init_raw`` over every shard's rows; Huber's location by the
        same root search over the summed psi), the same on every shard: every raw
        score starts there (unless it starts at its base margin)."""
        y, w = self._labels()
        obj = self.objective
        if isinstance(obj, _obj.Huber):
            base = np.array([huber_location(y, w, obj.delta, self._sum, self._largest)])
        else:
            groups = np.zeros(y.shape[0], dtype=np.intp)
            alphas = obj.alphas if isinstance(obj, _obj.MultiQuantile) else (obj.alpha,)
            base = np.array([select_quantiles(y, w, groups, 1, a, self._sum)[0]
                             for a in alphas])
        if np.isnan(base).any():
            raise ValueError("every row has sample_weight 0")
        if not self._from_margin:
            self.raw[:] = base
        return base

    def _refit(self, t, leaves, k=None):
        """The loss's value of each of tree ``t``'s ``leaves`` (node ids) over every
        shard's rows (``objective.refit_leaves`` of their residuals from the round's
        raw scores; NaN for a leaf without weight, which keeps its value); ``k``: the
        output, of a structure of several (None: the tree's own)."""
        y, w = self._labels()
        K = self.pairs.shape[0]
        k = t % K if k is None else k
        at = {node: i for i, node in enumerate(leaves)}
        rows, groups = [], []
        for (b, tree, node), (lo, hi) in sorted(self.ranges.items()):
            if tree == t and hi > lo:
                rows.append(self.rows[(b, t)][lo:hi].astype(np.int64) + self.offsets[b])
                groups.append(np.full(hi - lo, at[node], dtype=np.intp))
        rows = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
        groups = np.concatenate(groups) if groups else np.empty(0, dtype=np.intp)
        if self._refit_weight is not None:   # (GOSS's)
            w = self._refit_weight
        r = y[rows] - self.raw[rows, k]
        wr = None if w is None else w[rows]
        obj = self.objective
        if isinstance(obj, _obj.Huber):   # (Friedman's M-step: the median, then the mean)
            med = select_quantiles(r, wr, groups, len(leaves), 0.5, self._sum)
            ww = np.ones_like(r) if wr is None else wr
            dev = np.clip(r - med[groups], -obj.delta, obj.delta)
            sums = self._sum([np.bincount(groups, weights=ww * dev, minlength=len(leaves)),
                              np.bincount(groups, weights=ww, minlength=len(leaves))])
            return med + np.divide(sums[0], sums[1], out=np.zeros(len(leaves)),
                                   where=sums[1] > 0)
        alpha = obj.alphas[k] if isinstance(obj, _obj.MultiQuantile) else obj.alpha
        return select_quantiles(r, wr, groups, len(leaves), alpha, self._sum)

    def _renew(self, t, leaves):
        """Quantised gradients chose tree ``t``'s splits: the exact (gradient, hessian)
        sums of its ``leaves`` (node ids), over every shard's rows (LightGBM's
        ``quant_train_renew_leaf``, as a local fit renews them)."""
        k = t % self.pairs.shape[0]
        at = {node: i for i, node in enumerate(leaves)}
        spans = {}
        for (b, tree, node), (lo, hi) in self.ranges.items():
            if tree == t:
                spans.setdefault(b, []).append((lo, hi, at[node]))
        sums = np.zeros((len(leaves), 2))
        part = np.empty((len(leaves), 2))
        for b in sorted(spans):
            bounds = np.array([s[:2] for s in spans[b]], dtype=np.int64)
            # (each leaf's rows summed in their order, as a local fit renews them)
            lo, hi = self.offsets[b], self.offsets[b + 1]
            leaf_sums(self.rows[(b, t)], bounds, self.pairs[k, lo:hi], part[:len(bounds)],
                      self.n_threads)
            sums[[s[2] for s in spans[b]]] += part[:len(bounds)]
        return self._sum(sums)

    def _draws(self, seed, lo, hi):
        """The uniform draws of the shard's rows lo..hi from the generator seeded with
        ``seed``: the draws of their places in the data (``places``)."""
        return place_draws(seed, self.places, lo, hi)

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
        shape, dtype = (((nk, n_built, E), np.int64) if self.levels
                        else ((nk, n_built, E, 2), float))
        built = np.zeros(shape, dtype=dtype)
        part = np.empty(shape, dtype=dtype)
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
                    if child[1] > child[0]:
                        bounds.append(child)
                        which.append(j)
                    j += 1
            if bounds:
                # the block's share of every built child in one call an output
                lo_b, hi_b = self.offsets[b], self.offsets[b + 1]
                for i, k in enumerate(range(outputs.start, outputs.stop)):
                    out, targets = ((built[i], np.array(which, dtype=np.int64)) if first else
                                    (part[i, :len(bounds)],
                                     np.arange(len(bounds), dtype=np.int64)))
                    values = (self.values[t][lo_b:hi_b] if self.levels else
                              self.pairs[k, lo_b:hi_b])
                    level_histograms(block.Xb, rows, np.array(bounds, dtype=np.int64), values,
                                     self.bin_offsets, _default_bins(block.Xb), out, targets,
                                     self.n_threads)
                if not first:
                    if len(which) == n_built:
                        built += part      # (in place: every child has rows here)
                    else:
                        built[:, which] += part[:, :len(bounds)]
                first = False
        own, counts = self._exchange(built.reshape((nk * n_built,) + built.shape[2:]), counts)
        own = own.reshape((nk, n_built) + own.shape[1:])
        hists = self.hists[t]   # (of the open nodes: a split's replaced by its children's)
        symmetric = self.grower_params.symmetric
        found, made = [], []
        j = 0
        for k, (node, _, _, _, left, right, build, sums_l, sums_r, depth, bounds_l,
                bounds_r) in enumerate(splits):
            if build < 0:
                hists.pop(node, None)
                found += [None, None]
                made += [(None, None)] * 2
                continue
            small = own[:, j]
            j += 1
            other = hists.pop(node)
            other -= small   # (in place: the parent's histogram is not needed again)
            for c, sums, n, bounds in ((left, sums_l, counts[2 * k], bounds_l),
                                       (right, sums_r, counts[2 * k + 1], bounds_r)):
                hist = small if c == build else other
                made.append((c, hist))
                if not symmetric:
                    found.append(self._scan(t, c, hist, np.asarray(sums), int(n), depth,
                                            bounds))
        if n_built == 0:   # (the last level: its children are leaves, whatever any shard says)
            return counts, [None] if symmetric else found
        if symmetric:   # (one split for every child: the level's best)
            self.used[t].append(splits[0][1])
            sums = np.concatenate([[s[7], s[8]] for s in splits])
            found = self._gather([self._scan_level(t, [h for _, h in made], sums,
                                                   splits[0][9])])
            for c, hist in made:
                hists[c] = hist
            return counts, found
        found = self._gather(found)
        for (c, hist), split in zip(made, found):   # (those of the children that may split)
            if split is not None:
                hists[c] = hist
        return counts, found

    def finish(self):
        """The fit is over: stop reading ahead."""
        self.close()

    def close(self):
        """Stop the thread that reads blocks ahead (after the block it is reading)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = self._ahead = None


def _default_bins(Xb):
    """The bins of absent entries of sparse bins, None for dense ones."""
    return None if isinstance(Xb, np.ndarray) else Xb.default_bin


def place_draws(seed, places, lo, hi):
    """The uniform draws of rows lo..hi of rows at ``places`` in the data (runs
    (first place, count), ``runs``) from the generator seeded with ``seed``: row r of
    the data draws its r-th number, wherever it is held."""
    out = np.empty(hi - lo)
    ends = np.cumsum(places[:, 1])
    first = int(np.searchsorted(ends, lo, side="right"))
    at = lo
    for (place, count), end in zip(places[first:], ends[first:]):
        if at >= hi:
            break
        skip = at - (end - count)   # (rows of this run before ``at``)
        take = min(hi, end) - at
        bits = np.random.PCG64(np.random.SeedSequence(seed))
        bits.advance(int(place + skip))
        out[at - lo:at - lo + take] = np.random.Generator(bits).random(take)
        at += take
    return out


def runs(places):
    """(first, count) of each run of consecutive numbers in ``places`` (RowShard's
    ``places`` of rows at those places in the data, in that order)."""
    places = np.asarray(places, dtype=np.int64)
    if places.shape[0] == 0:
        return np.empty((0, 2), dtype=np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(places) != 1) + 1]
    ends = np.r_[starts[1:], places.shape[0]]
    return np.stack([places[starts], ends - starts], axis=1)


def integer_sums(packed):
    """The (gradient, hessian) integer sums that a packed int64 histogram entry holds
    (``_typedefs.unpack_entry``), as floats (exact)."""
    low = np.int64(np.uint32(packed & 0xFFFFFFFF).view(np.int32))
    return np.array([float((packed - low) >> 32), float(low)])
