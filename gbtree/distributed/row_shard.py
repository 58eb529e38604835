"""The rows of a level-wise fit (``levelwise.boost``), held in shards: one per
Dask worker (``gbtree.dask``), or one whose blocks of rows are files (out-of-core
fits, ``gbtree.ExternalData``). A ``RowShard`` is a ``growing.row_blocks.RowBlocks``
(its blocks in memory, or loaded one at a time from disk while the next one is
read) that also keeps what a fit keeps per row: raw scores and gradients. The
trainer talks to the shards only through ``call(method, *args)``, which returns
every shard's answer in shard order, once per round: ``grow`` has every shard
compute its rows' gradients and grow the round's trees, each shard the same
trees, a batch of splits at a time, talking to the others directly (LightGBM's
data-parallel learner): each shard builds its rows' histograms, which are
reduce-scattered (``shard_exchange``: each shard sums its range of features over
every shard, in shard order, so the model never depends on which shard answers
first) and scanned, the candidate splits gathered. A shard alone (out of core)
sends nothing.

With ``subsample`` < 1 a round's trees grow on the rows whose uniform draw is
below it; row r of the data draws the r-th number of the round's generator, as
in a local fit (a shard knows where its rows are in the data, ``places``, and
jumps its generator there), so the same rows are drawn however they are spread
over shards and blocks. The other rows get the round's trees from a walk over
their bins, when their block is next read.
"""
import concurrent.futures
import functools

import numpy as np

from ..boosting import booster, sampling
from ..boosting import objectives as _obj
from ..growing.row_blocks import RowBlocks
from ..kernels._leaf_rows import leaf_sums
from ..kernels._quantizer import gradient_extent_of, quantize_places, steps_of
from ..kernels._threads import ThreadBudget
from ..kernels._typedefs import G_H_DTYPE
from ..predicting.tree import add_tree_binned_rows
from .leaf_quantiles import SELECTED, select_quantiles
from .shard_exchange import ShardExchange


class RowShard(ShardExchange, RowBlocks):
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
        self.threads = ThreadBudget(n_threads)
        self.take_blocks(blocks, block_rows, mapper.n_bins_, mapper.bin_offsets_,
                         mapper.bin_thresholds(), grower_params, self.threads.n)
        self.places = (np.array([[0, self.n_rows]], dtype=np.int64) if places is None
                       else np.asarray(places, dtype=np.int64).reshape(-1, 2))
        self.objective = objective
        self.prefetch = prefetch and len(blocks) > 1
        K = base_score.shape[0]
        self.raw = (np.tile(base_score, (self.n_rows, 1)) if margin is None
                    else np.array(margin, dtype=np.float64, order="C"))
        self._from_margin = margin is not None
        self.pairs = np.empty((K, self.n_rows, 2), dtype=G_H_DTYPE)
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
        vector = self.grower_params.vector_leaves
        self._gradients_first(trees, seeds, samples, drop)
        grown = self.grow_trees(trees, seeds[::K] if vector else seeds, samples, learning_rate,
                                self._renew if self.levels else None,
                                self._refit if isinstance(self.objective, SELECTED) else None)
        if vector:   # (the K trees of each structure)
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

    def _gradients_first(self, trees, seeds, samples, drop):
        """The round's gradients (without the trees ``drop`` drops) computed block by
        block as the roots' histograms are built, or first over every block when the
        steps of quantised gradients or GOSS's rows need them all (then the steps and
        each GOSS sample's rows, over all shards); ``samples`` as in ``grow``."""
        self._drop, self._kept = drop, {}
        goss = [j for j, sample in enumerate(samples)
                if sample is not None and sample[0] == "goss"]
        self._graded = bool(self.levels or goss)
        if self._graded:
            for b, block in self._each_block():
                self._gradients(b, block, drop)
            self._kept = {j: self._goss(*samples[j][1:]) for j in goss}
            if self.levels:
                self._quantize(trees, seeds)

    def _picked(self, b, block, samples):
        """Per sample, the rows of block ``b`` its trees grow on (None: every row),
        drawn at their places in the data or kept by GOSS; the rest are left out (the
        block's gradients first, unless ``_gradients_first`` made them)."""
        lo, hi = self.offsets[b], self.offsets[b + 1]
        if not self._graded:
            self._gradients(b, block, self._drop)
        picks = []
        for j, sample in enumerate(samples):
            if sample is None:
                picks.append(None)
                continue
            keep = (self._kept[j][lo:hi] if j in self._kept
                    else place_draws(sample[1], self.places, lo, hi) < sample[0])
            self._left_out[(b, j)] = np.flatnonzero(~keep).astype(np.uint32)
            picks.append(np.flatnonzero(keep).astype(np.uint32))
        return picks

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
            base = np.array([_obj.huber_location(y, w, obj.delta, self._sum, self._largest)])
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
        return self.objective.refit_leaves(
            y[rows], self.raw[rows, k], None if w is None else w[rows], groups, len(leaves), k,
            functools.partial(select_quantiles, sum_shards=self._sum), self._sum)

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

    def close(self):
        """Stop the thread that reads blocks ahead (after the block it is reading)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = self._ahead = None

    finish = close   # (the fit is over: ``call("finish")``)


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
