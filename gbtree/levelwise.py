"""Trees grown a batch of splits at a time over rows held elsewhere: the trainer of
``gbtree.dask`` (one shard of rows per worker) and of out-of-core fits
(``gbtree.ExternalData``: one shard whose blocks of rows are files). Depthwise
and symmetric trees are grown a level at a time, lossguide trees a split at a
time (``TreeBuilder``); the words "level" below mean either batch. A tree whose
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
- the histograms are reduce-scattered: each shard gets those of its range of
  features (``feature_ranges``) from every shard and sums them in shard order,
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
import copy
import inspect
import threading

import numpy as np
from scipy.optimize import brentq

from . import booster
from . import objectives as _obj
from . import params as _params
from ._binned_matrix import columns_of
from ._column_sampler import ColumnSampler
from ._constraints import InteractionConstraints, MonotoneConstraints
from ._histogram import level_histograms, output_histograms, py_unpack_histogram
from ._predictor import add_leaf_values, leaf_sums
from ._quantizer import gradient_extent_of, quantize_places, steps_of
from ._splitting import (find_best_split_outputs, partition_ranges, py_find_best_split,
                         py_leaf_weight)
from ._threads import effective_n_threads
from ._typedefs import G_H_DTYPE, NODE_DTYPE
from .binning import _weighted_cuts
from .callback import TrainingState, training_callbacks
from .metrics import eval_metrics
from .symmetric_grower import allowed_features, build_children
from .tree import TreeEnsemble, add_tree_binned_rows, add_trees_to_raw

# the parameters a level-wise fit takes (the others must stay at their defaults)
SUPPORTED = {"objective", "n_estimators", "learning_rate", "max_depth", "max_leaves",
             "grow_policy", "max_bin",
             "min_child_weight", "reg_lambda", "reg_alpha", "gamma", "max_delta_step",
             "colsample_bytree", "colsample_bylevel", "colsample_bynode", "feature_weights",
             "subsample", "interaction_constraints", "monotone_constraints", "num_parallel_tree",
             "booster", "rate_drop", "skip_drop", "one_drop", "normalize_type", "sample_type",
             "class_weight", "absent_as_missing", "grad_quant_bins", "warm_start",
             "multi_strategy", "n_jobs",
             "random_state", "verbosity", "importance_type", "log_period", "eval_metric",
             "early_stopping_rounds", "callbacks", "tweedie_variance_power", "quantile_alpha",
             "huber_delta",
             "lambdarank_truncation_level", "lambdarank_num_pair_per_sample",
             "lambdarank_norm", "ndcg_exp_gain"}

# the losses whose starting value and gradients a level-wise fit computes part by part
OBJECTIVES = ("squared_error", "poisson", "gamma", "tweedie", "log_loss", "a callable",
              "absolute_error", "quantile", "huber")

# the losses whose starting value is a weighted quantile of y (or Huber's location) and
# whose leaf values are quantiles of their rows' residuals: the shards select them
# together (``RowShard._select``)
SELECTED = (_obj.AbsoluteError, _obj.MultiQuantile, _obj.Huber)


def local_params(estimator, local_class):
    """The parameters of ``local_class`` (a local estimator class) read off ``estimator``."""
    names = inspect.signature(local_class.__init__).parameters
    return {k: getattr(estimator, k) for k in names if k != "self"}


# the parameters of categorical columns (a fit that encodes them: gbtree.dask)
CATEGORICAL = {"categorical_features", "max_cat_to_ordinal", "max_cat_to_onehot", "cat_smooth"}


def check_params(estimator, local_class, what, more=()):
    """A ValueError naming the first parameter of ``estimator`` a level-wise fit does
    not support (``what`` names the fit in the message; ``more``: parameters it
    supports beside ``SUPPORTED``)."""
    defaults = local_class().get_params()
    for name, value in local_params(estimator, local_class).items():
        if name in SUPPORTED or name in more:
            continue
        default = defaults[name]
        same = value is default or (not isinstance(value, (list, dict, np.ndarray))
                                    and value == default)
        if not same:
            raise ValueError(f"{what} does not support {name}={value!r} yet: leave it at its "
                             f"default ({default!r}) or fit in memory")
    from .sklearn import GBTRegressor
    if issubclass(local_class, GBTRegressor):
        make_objective(estimator, 0, what)   # (a classifier's loss needs its classes)
    if estimator.grow_policy not in ("depthwise", "lossguide", "symmetric"):
        raise ValueError(f"{what} grows depthwise, lossguide or symmetric trees, not "
                         f"grow_policy={estimator.grow_policy!r}")
    if not (estimator.max_depth in range(1, 33)
            or (estimator.max_depth == 0 and estimator.max_leaves)):
        raise ValueError(f"{what}: max_depth must be in 1..32, or 0 with max_leaves set; got "
                         f"max_depth={estimator.max_depth!r}")


def make_objective(estimator, n_classes, what, n_targets=0):
    """The loss of a level-wise fit: a classifier's of ``n_classes`` classes, or (0) a
    regressor's (of a y of ``n_targets`` columns, 0: one); a ValueError naming
    ``what`` for a loss whose starting value or leaf values need all rows at once."""
    if n_classes:
        objective = _obj.classification_objective(estimator.objective, n_classes)
    else:
        objective = estimator._make_objective(n_targets)
    if not (isinstance(objective, SELECTED)
            or (objective.summable_start and not objective.needs_refit)):
        raise ValueError(f"{what} does not support objective={estimator.objective!r} yet (its "
                         f"starting value or leaf values need all rows at once): use one of "
                         f"{', '.join(OBJECTIVES)}, or fit in memory")
    return objective


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


class RowShard:
    """Rows in ``blocks`` (objects whose ``load()`` gives ``Xb``, ``columns``, ``y``,
    ``w``, ``n_rows``) and each row's raw scores and gradients; see the module."""

    def start(self, blocks, block_rows, mapper, objective, base_score, n_threads, grower,
              prefetch=False, places=None, init=None, margin=None):
        """Take ``blocks`` of ``block_rows`` rows each; every raw score starts at
        ``base_score`` or the row's base ``margin`` ((rows, outputs), if given), plus
        (``init``: the ensemble a warm start continues, whose trees split at
        ``mapper``'s edges) its trees' scores, computed when each block is first read;
        ``grower`` (GrowerParams) scans the histograms. ``prefetch``:
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
        self.n_threads = n_threads
        self.grower = grower
        # quantised gradients: the levels, and per tree of the round its rows' packed
        # values; the steps (gradient, hessian) of each output
        self.levels = grower.quant_levels
        self.values, self.steps = {}, None
        self.prefetch = prefetch and len(blocks) > 1
        self.bin_offsets = np.ascontiguousarray(mapper.bin_offsets_, dtype=np.intc)
        self.n_bins = np.ascontiguousarray(mapper.n_bins_, dtype=np.intc)
        self.thresholds = mapper.bin_thresholds()
        mono = grower.monotone_constraints
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
        if init is not None:
            def scores(b, block, raw):   # (as a local fit starts: the binned rows' scores)
                raw[:] = init.predict_raw_binned(block.Xb, self.n_bins, self.n_threads,
                                                 None if margin is None else raw.copy())
            self._pending = [scores]
        self.connect(None, 0, [(0, self.n_bins.shape[0])], None)
        return self.n_rows

    def connect(self, peers, index, features, timeout):
        """Join the shards of a fit: ``peers`` holds every shard (this one at
        ``index``; None: this shard is the only one), ``features`` the range of
        features (lo, hi) whose summed histograms each shard gets and scans
        (``feature_ranges``), and ``timeout`` bounds every wait for another shard."""
        self.peers, self.index, self.features, self.timeout = peers, index, features, timeout
        lo, hi = features[index]
        self.own = (lo, hi)
        self.own_n_bins = np.ascontiguousarray(self.n_bins[lo:hi])
        self.own_offsets = np.ascontiguousarray(self.bin_offsets[lo:hi + 1]
                                                - self.bin_offsets[lo])
        # the shards of the butterfly (a power of two); the others fold into them
        self.n_paired = 1 << (len(features).bit_length() - 1)
        self._inbox, self._arrived = {}, threading.Condition()
        self._abandoned = False
        self._calls = self.messages = self.bytes_sent = 0
        self._sending = []

    def _exchange(self, parts, extra):
        """Reduce-scatter: ``parts`` (n, entries, 2) are this shard's histograms of n
        nodes over every feature, ``extra`` a small array (row counts, sums). Returns
        the histograms of this shard's features and the extras, both summed over
        every shard in an order fixed by the shards' places (the model never depends
        on which shard answers first).

        Two shards send each other everything (both scan every feature). More fold
        into the largest power of two of them, P (shard P + i sends shard i its
        histograms), which halve their feature ranges log2(P) times, each step
        sending its partner the half it gives up and adding what it gets (recursive
        halving: log2(P) messages, about one set of histograms sent in all)."""
        lo, hi = self.own
        if self.peers is None:
            return np.ascontiguousarray(
                parts[:, self.bin_offsets[lo]:self.bin_offsets[hi]]), extra
        i, W, P = self.index, len(self.peers), self.n_paired
        self._calls += 1
        if W == 2:
            self._post(1 - i, 0, (parts, extra))
            other, more = self._take(1 - i, 0)
            return (parts + other, extra + more) if i == 0 else (other + parts, more + extra)
        if i >= P:   # (folds into shard i - P, which sends back the summed extras)
            self._post(i - P, 0, (parts, extra))
            return parts[:, :0].copy(), self._take(i - P, "totals")
        if i + P < W:
            other, more = self._take(i + P, 0)
            parts, extra = parts + other, extra + more
        a, b = 0, P          # the shards whose features ``parts`` still holds
        base = 0             # the bin where ``parts`` starts
        step = 1
        while b - a > 1:
            mid = (a + b) // 2
            low = i < mid
            keep, give = ((a, mid), (mid, b)) if low else ((mid, b), (a, mid))
            partner = i + (mid - a) if low else i - (mid - a)
            g0, g1 = (self.bin_offsets[self.features[give[0]][0]] - base,
                      self.bin_offsets[self.features[give[1] - 1][1]] - base)
            k0, k1 = (self.bin_offsets[self.features[keep[0]][0]] - base,
                      self.bin_offsets[self.features[keep[1] - 1][1]] - base)
            self._post(partner, step, (np.ascontiguousarray(parts[:, g0:g1]), extra))
            other, more = self._take(partner, step)
            mine = parts[:, k0:k1]
            # (the lower shard's sums first, on both sides)
            parts = mine + other if low else other + mine
            extra = extra + more if low else more + extra
            base += k0
            a, b = keep
            step += 1
        if i + P < W:
            self._post(i + P, "totals", extra)
        return np.ascontiguousarray(parts), extra

    def _gather(self, found):
        """All-gather: every shard's candidate splits (lists alike), merged into the
        best of each (``best_split``: the lower features' on a tie), by recursive
        doubling over the shards of ``_exchange``'s butterfly, which then send the
        merged list to the shards folded into them. Two shards scanned every
        feature: nothing to gather."""
        if self.peers is None or len(self.peers) == 2:
            return found
        i, W, P = self.index, len(self.peers), self.n_paired
        self._calls += 1
        if i >= P:
            return self._take(i - P, "found")
        size, step = 1, 1
        while size < P:
            partner = i ^ size
            self._post(partner, step, found)
            other = self._take(partner, step)
            pairs = zip(found, other) if i < partner else zip(other, found)
            found = [best_split(pair) for pair in pairs]
            size, step = 2 * size, step + 1
        if i + P < W:
            self._post(i + P, "found", found)
        return found

    def _post(self, j, tag, message):
        """Send shard ``j`` a message of this exchange (``tag``: its step)."""
        self.messages += 1
        self.bytes_sent += message_bytes(message)
        self._sending.append(self._send(j, (self._calls, tag), message))

    def _take(self, j, tag):
        """The message of this exchange's step ``tag`` from shard ``j``, once it came."""
        key = (self._calls, tag, j)
        with self._arrived:
            if not self._arrived.wait_for(lambda: key in self._inbox or self._abandoned,
                                          timeout=self.timeout):
                raise TimeoutError(f"shard {j} did not send its part of a tree within "
                                   f"{self.timeout} s; it may have died")
            if key not in self._inbox:
                raise RuntimeError("the fit was abandoned (another shard failed)")
            return self._inbox.pop(key)

    def _abandon(self):
        """The fit is over (another shard failed): stop waiting for messages."""
        with self._arrived:
            self._abandoned = True
            self._arrived.notify_all()

    def _receive(self, key, sender, message):
        """Another shard's message (``_post``)."""
        with self._arrived:
            self._inbox[key + (sender,)] = message
            self._arrived.notify_all()

    def _send(self, j, key, message):
        """Send shard ``j`` its message of an exchange; returns what ``_sent`` awaits."""
        raise NotImplementedError("a shard with peers sends through its cluster")

    def _sent(self, sending):
        """Wait for the sends of a round's exchanges (their errors are raised here)."""

    def _scan(self, t, node, hist, sums, count, depth, bounds=(-np.inf, np.inf)):
        """The best split of node ``node`` of structure ``t`` among this shard's
        features, from its histogram and sums (those of each of its outputs, a leading
        axis; ``bounds``: those of its weight, from monotone constraints): (gain,
        feature, bin, default_left, left sums) or None; with vector leaves, the
        split of the largest gain summed over the outputs (as a local fit's
        ``VectorLeafGrower`` scans), with each output's gain after the left sums."""
        p = self.grower
        lo, hi = self.own
        if (p.max_depth and depth >= p.max_depth) or count < 2 or hi == lo:
            return None
        if p.vector_leaves:
            mask = self.samplers[t].mask(node, depth)
            found = find_best_split_outputs(
                np.ascontiguousarray(hist), self.own_n_bins, self.own_offsets,
                np.ascontiguousarray(sums, dtype=np.float64), p.reg_lambda, p.reg_alpha,
                p.min_child_weight, p.max_delta_step, p.gamma,
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
            hist, self.own_n_bins, self.own_offsets, sums[0], sums[1], p.reg_lambda,
            p.reg_alpha, p.min_child_weight, p.max_delta_step, p.gamma, self.n_threads,
            p.plain_scan, None if mask is None else mask[lo:hi],
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
        p = self.grower
        lo, hi = self.own
        if depth >= p.max_depth or hi == lo:
            return None
        mask = allowed_features(p.interaction_groups, self.n_bins.shape[0],
                                self.samplers[t].mask(depth, depth), self.used[t])
        if mask is not None and not mask[lo:hi].any():
            return None
        hists = [h[0] for h in hists]   # (a symmetric tree has one output)
        if self.levels:
            hists = [py_unpack_histogram(h, *self.steps[t % self.pairs.shape[0]])
                     for h in hists]
        found = find_best_split_outputs(
            np.ascontiguousarray(np.stack(hists)), self.own_n_bins, self.own_offsets,
            np.ascontiguousarray(np.reshape(sums, (-1, 2)), dtype=np.float64), p.reg_lambda,
            p.reg_alpha, p.min_child_weight, p.max_delta_step, p.gamma * len(hists),
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
        return trees // self.pairs.shape[0] if self.grower.vector_leaves else trees

    def _outputs(self, t):
        """The outputs of structure ``t``, a slice of them: its tree's, or every one."""
        K = self.pairs.shape[0]
        return slice(0, K) if self.grower.vector_leaves else slice(t % K, t % K + 1)

    def _sample_of(self, t):
        """The sample (of a forest's sets of trees) whose rows structure ``t`` grows on."""
        return t if self.grower.vector_leaves else t // self.pairs.shape[0]

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
        samples = samples or [None] * (trees // K)
        builder = TreeBuilder(self._level, self.thresholds, self.bin_offsets, self.grower,
                              self._renew if self.levels else None,
                              self._refit if isinstance(self.objective, SELECTED) else None)
        S = self._structures(trees)
        roots = self._roots(S, seeds, samples, drop)
        grown = [builder.grow(t, roots[t], learning_rate) for t in range(S)]
        if self.grower.vector_leaves:   # (the K trees of each structure)
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
        return [nodes for nodes, _ in grown]

    def _walk(self, nodes, k, j):
        """What tree ``nodes`` (of output k) owes the rows left out of the round's
        sample j (None: every row): a walk over their bins, added to their raw
        scores."""
        def pay(b, block, raw):
            rows = (np.arange(raw.shape[0], dtype=np.uint32) if j is None
                    else self._left_out[(b, j)])
            add_tree_binned_rows(block.Xb, self.n_bins, nodes, rows, raw, k, self.n_threads)
        return pay

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
        vector = self.grower.vector_leaves
        nk = K if vector else 1   # (the outputs of a structure)
        packed = self.levels > 0
        if packed:
            # (the steps need every row's gradients, over all shards: the gradients of
            # every block first, then the histograms)
            for b, block in self._each_block():
                self._gradients(b, block, drop)
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
            if not packed:
                self._gradients(b, block, drop)
            default = _default_bins(block.Xb)
            for j, sample in enumerate(samples):
                picked = None   # (None: every row, in order)
                if sample is not None:
                    keep = self._draws(sample[1], lo, hi) < sample[0]
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
        found = []
        for t in range(trees):
            self.samplers[t] = ColumnSampler(self.n_bins.shape[0], self.grower)
            self.samplers[t].begin(int(seeds[t * K if vector else t]))
            self.paths[t] = InteractionConstraints(self.n_bins.shape[0],
                                                   self.grower.interaction_groups)
            self.paths[t].start()
            self.used[t] = []
            self.hists[t] = {0: own[t]}
            found.append(self._scan_level(t, [own[t]], sums[t], 0) if self.grower.symmetric
                         else self._scan(t, 0, own[t], sums[t], int(counts[t]), 0))
        return [(sums[t] if vector else sums[t][0], int(counts[t]), split)
                for t, split in enumerate(self._gather(found))]

    def _gradients(self, b, block, drop):
        """The gradients of block ``b``'s rows (loaded: ``block``), after what earlier
        rounds owe its raw scores and without the trees ``drop`` drops."""
        lo, hi = self.offsets[b], self.offsets[b + 1]
        if hi == lo:
            return
        for pay in self._pending:
            pay(b, block, self.raw[lo:hi])
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
        mine = np.zeros((K, 2))
        for k in range(K):
            extent = gradient_extent_of(self.pairs[k], self.n_threads)
            mine[k] = np.nan if extent is None else extent
        largest = self._largest(mine)
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

    def _sum(self, a):
        """The sum of the array ``a`` over every shard (the same on each)."""
        a = np.asarray(a, dtype=np.float64)
        return self._exchange(np.zeros((0, 0)), a.ravel())[1].reshape(a.shape)

    def _largest(self, a):
        """The largest of the arrays ``a`` of every shard, element by element (NaN
        where one is NaN)."""
        a = np.asarray(a, dtype=np.float64)
        W = 1 if self.peers is None else len(self.peers)
        slots = np.zeros((W,) + a.shape)
        slots[self.index] = a   # (each shard's in its slot: the summed slots hold them all)
        return self._sum(slots).max(axis=0)

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

    def _select(self, values, weights, groups, n_groups, alpha):
        """Per group, the smallest value whose cumulative weight reaches ``alpha`` of
        the group's, over every shard's rows (``objectives.grouped_weighted_quantile``
        of all of them; NaN for a group without weight). A radix selection: each of
        eight steps takes the next 8 bits of the values' order-preserving keys, from
        the weights of the group's rows in each of 256 buckets, summed over the
        shards (one exchange)."""
        if weights is None:
            weights = np.ones(values.shape[0])
        keep = weights > 0   # (a row of weight 0 is never the answer)
        values, weights, groups = values[keep], weights[keep], groups[keep]
        bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
        negative = (bits >> np.uint64(63)).astype(bool)
        keys = np.where(negative, ~bits, bits | np.uint64(1 << 63))
        key = np.zeros(n_groups, dtype=np.uint64)
        below = np.zeros(n_groups)
        target = None
        for step in range(8):
            shift = np.uint64(56 - 8 * step)
            bucket = ((keys >> shift) & np.uint64(255)).astype(np.intp)
            hist = self._sum(np.bincount(groups * 256 + bucket, weights=weights,
                                         minlength=n_groups * 256).reshape(n_groups, 256))
            if target is None:
                total = hist.sum(axis=1)
                target = alpha * total * (1 - 1e-12)
            cum = below[:, None] + np.cumsum(hist, axis=1)
            # the first bucket with rows where the cumulative weight reaches the target
            reached = (cum >= target[:, None]) & (hist > 0)
            # (or the last bucket with rows, should the sums in another order fall an
            # ulp short of the target that an earlier step's reached)
            last = 255 - (hist[:, ::-1] > 0).argmax(axis=1)
            chosen = np.where(reached.any(axis=1), reached.argmax(axis=1), last)
            at = np.arange(n_groups)
            below = cum[at, chosen] - hist[at, chosen]
            key |= chosen.astype(np.uint64) << shift
            stay = bucket == chosen[groups]
            keys, weights, groups = keys[stay], weights[stay], groups[stay]
        negative = ~(key >> np.uint64(63)).astype(bool)
        out = np.where(negative, ~key, key & np.uint64((1 << 63) - 1)).view(np.float64)
        return np.where(total > 0, out, np.nan)

    def start_value(self):
        """The starting raw score of a loss whose starting value is a weighted quantile
        of y (``objective.init_raw`` over every shard's rows; Huber's location by the
        same root search over the summed psi), the same on every shard: every raw
        score starts there (unless it starts at its base margin)."""
        y, w = self._labels()
        obj = self.objective
        if isinstance(obj, _obj.Huber):
            base = np.array([self._huber_location(y, w, obj.delta)])
        else:
            groups = np.zeros(y.shape[0], dtype=np.intp)
            alphas = obj.alphas if isinstance(obj, _obj.MultiQuantile) else (obj.alpha,)
            base = np.array([self._select(y, w, groups, 1, a)[0] for a in alphas])
        if np.isnan(base).any():
            raise ValueError("every row has sample_weight 0")
        if not self._from_margin:
            self.raw[:] = base
        return base

    def _huber_location(self, y, w, delta):
        """``Huber.init_raw`` over every shard's rows: the root of the summed
        psi(c) = sum w clip(y - c, +-delta) between the smallest and largest y of
        weight > 0 (every shard searches alike: the sums are the same on each)."""
        w = np.ones_like(y) if w is None else w
        keep = w > 0
        y, w = y[keep], w[keep]
        ends = self._largest([-y.min() if y.size else -np.inf,
                              y.max() if y.size else -np.inf])
        lo, hi = float(-ends[0]), float(ends[1])

        def psi(c):
            return float(self._sum([np.sum(w * np.clip(y - c, -delta, delta))])[0])

        if lo == hi or psi(lo) <= 0.0:
            return lo
        if psi(hi) >= 0.0:
            return hi
        return brentq(psi, lo, hi, xtol=1e-12, rtol=1e-15)

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
        r = y[rows] - self.raw[rows, k]
        wr = None if w is None else w[rows]
        obj = self.objective
        if isinstance(obj, _obj.Huber):   # (Friedman's M-step: the median, then the mean)
            med = self._select(r, wr, groups, len(leaves), 0.5)
            ww = np.ones_like(r) if wr is None else wr
            dev = np.clip(r - med[groups], -obj.delta, obj.delta)
            sums = self._sum([np.bincount(groups, weights=ww * dev, minlength=len(leaves)),
                              np.bincount(groups, weights=ww, minlength=len(leaves))])
            return med + np.divide(sums[0], sums[1], out=np.zeros(len(leaves)),
                                   where=sums[1] > 0)
        alpha = obj.alphas[k] if isinstance(obj, _obj.MultiQuantile) else obj.alpha
        return self._select(r, wr, groups, len(leaves), alpha)

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
        symmetric = self.grower.symmetric
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


class TreeBuilder:
    """Grows one tree, a batch of splits at a time: ``level(t, splits)`` applies the
    splits of tree ``t`` and returns the children's row counts and best splits
    (``RowShard._level``). Depthwise, a batch is a level (up to the ``max_leaves``
    budget: the local grower splits the nodes of a level oldest first); lossguide,
    it is the one open node of the largest gain (the oldest on a tie), as the local
    grower picks them. With ``renew`` (quantised gradients), ``renew(t, leaves)``
    gives the exact sums of the leaves of tree ``t`` once it is grown
    (``RowShard._renew``): those of every node are made from them before its values.
    With ``refit``, ``refit(t, leaves)`` gives the loss's own value of each leaf
    (``RowShard._refit``; NaN: keep the Newton value), as a local fit refits them."""

    def __init__(self, level, thresholds, bin_offsets, params, renew=None, refit=None):
        self.level = level
        self.renew = renew
        self.refit = refit
        self.thresholds, self.bin_offsets = thresholds, bin_offsets
        self.p = params
        self.monotone = (None if params.monotone_constraints is None
                         or not np.any(params.monotone_constraints)
                         else MonotoneConstraints(len(bin_offsets) - 1,
                                                  params.monotone_constraints))

    def grow(self, t, root, learning_rate):
        """Tree ``t`` of the round from its root's (sums, row count, best split);
        returns its nodes (NODE_DTYPE) and its leaves' values by node id."""
        p = self.p
        if p.symmetric:
            nodes, children = self._grow_symmetric(t, root)
            return self._finish(t, nodes, children, learning_rate)
        sums, count, split = root
        unbounded = (-np.inf, np.inf)
        # (``bounds``: those of a node's weight; ``clip``: those its value is clipped
        # to, its parent's, as the local grower clips a split's children)
        nodes = [dict(sums=sums, count=int(count), depth=0, split=split, bounds=unbounded,
                      clip=unbounded)]
        opened = [0] if split is not None else []   # (in the order of their ids)
        children = {}
        n_leaves = 1
        while opened and not (p.max_leaves and n_leaves >= p.max_leaves):
            if p.lossguide:
                best = max(range(len(opened)), key=lambda k: (nodes[opened[k]]["split"][0], -k))
                batch = [opened.pop(best)]
            else:
                room = len(opened) if not p.max_leaves else p.max_leaves - n_leaves
                batch, opened = opened[:room], opened[room:]
            n_leaves += len(batch)
            # (the children may split: below the depth limit, with leaves to spare)
            more = not (p.max_leaves and n_leaves >= p.max_leaves)
            splits = []
            for i in batch:
                gain, f, b, default_left, left_sums = nodes[i]["split"][:5]
                left, right = len(nodes), len(nodes) + 1
                depth = nodes[i]["depth"] + 1
                sums_l, sums_r = left_sums, nodes[i]["sums"] - left_sums
                lo, up = nodes[i]["bounds"]
                bounds = (lo, up, lo, up)
                if self.monotone is not None:
                    bounds = self.monotone.children_bounds(
                        f, lo, up, self._weight(sums_l, (lo, up)),
                        self._weight(sums_r, (lo, up)))
                nodes += [dict(sums=sums_l, depth=depth, bounds=bounds[:2], clip=(lo, up)),
                          dict(sums=sums_r, depth=depth, bounds=bounds[2:], clip=(lo, up))]
                children[i] = (left, right)
                # the child of the smaller hessian sum is built, the other derived
                build = -1
                if more and not (p.max_depth and depth >= p.max_depth):
                    # (of a structure of several outputs: their summed hessians)
                    hess_l, hess_r = np.sum(sums_l[..., 1]), np.sum(sums_r[..., 1])
                    build = left if hess_l <= hess_r else right
                splits.append((i, f, b, default_left, left, right, build, sums_l, sums_r,
                               depth, bounds[:2], bounds[2:]))
            counts, found = self.level(t, splits)
            for k, split in enumerate(splits):
                for side, c in enumerate(split[4:6]):
                    nodes[c]["count"] = int(counts[2 * k + side])
                    nodes[c]["split"] = found[2 * k + side]
                    if found[2 * k + side] is not None:
                        opened.append(c)
        return self._finish(t, nodes, children, learning_rate)

    def _grow_symmetric(self, t, root):
        """A symmetric tree (``grow_policy="symmetric"``): every node of a level split
        alike, by the level's best split, complete to its depth (node i's children
        are 2i + 1 and 2i + 2), as a local fit's ``SymmetricGrower`` grows it: its
        nodes and children, as ``grow`` makes them."""
        p = self.p
        sums, count, split = root
        unbounded = (-np.inf, np.inf)
        nodes = [dict(sums=sums, count=int(count), depth=0, split=None, clip=unbounded)]
        children = {}
        level = [0]
        depth = 0
        while split is not None and depth < p.max_depth:
            _, f, b, default_left, left_sums, gains = split
            depth += 1
            child_sums = np.empty((2 * len(level), 2))
            child_sums[0::2] = left_sums
            child_sums[1::2] = [nodes[i]["sums"] for i in level] - left_sums
            built = set(build_children(child_sums).tolist()) if depth < p.max_depth else ()
            splits = []
            for j, i in enumerate(level):
                left, right = 2 * i + 1, 2 * i + 2
                nodes[i]["split"] = (gains[j], f, b, default_left)
                nodes += [dict(sums=child_sums[2 * j], depth=depth, clip=unbounded),
                          dict(sums=child_sums[2 * j + 1], depth=depth, clip=unbounded)]
                children[i] = (left, right)
                build = left if 2 * j in built else right if 2 * j + 1 in built else -1
                splits.append((i, f, b, default_left, left, right, build, child_sums[2 * j],
                               child_sums[2 * j + 1], depth, unbounded, unbounded))
            counts, (split,) = self.level(t, splits)
            level = [c for i in level for c in children[i]]
            for c, n in zip(level, counts):
                nodes[c]["count"] = int(n)
        return nodes, children

    def _finish(self, t, nodes, children, learning_rate):
        """The grown tree's nodes (NODE_DTYPE) and its leaves' values by node id, after
        the renewal of its sums and its leaves' refit; with vector leaves, the list of
        each output's tree and the list of their values (``VectorLeafGrower``'s K
        trees of one structure, each with its output's values, covers and gains)."""
        if not self.p.vector_leaves:
            return self._output_tree(t, nodes, children, learning_rate)
        trees = []
        for k in range(len(nodes[0]["sums"])):
            mine = [dict(node, sums=node["sums"][k]) for node in nodes]
            for i in children:
                split = nodes[i]["split"]
                mine[i]["split"] = (split[5][k],) + tuple(split[1:4])
            trees.append(self._output_tree(t, mine, children, learning_rate, k))
        return [nodes for nodes, _ in trees], [values for _, values in trees]

    def _output_tree(self, t, nodes, children, learning_rate, k=None):
        """``_finish`` of one output's tree (``k``: its output, of a structure of
        several; None: the tree's own)."""
        if self.renew is not None:
            leaves = [i for i in range(len(nodes)) if i not in children]
            for i, sums in zip(leaves, self.renew(t, leaves)):
                nodes[i]["sums"] = sums
            for i in sorted(children, reverse=True):   # (children after their parent)
                left, right = children[i]
                nodes[i]["sums"] = nodes[left]["sums"] + nodes[right]["sums"]
        out, values = self._emit(nodes, children, learning_rate)
        if self.refit is not None:
            leaves = list(values)
            best = self.refit(t, leaves, k)
            for i, v in zip(leaves, best):
                if not np.isnan(v):   # (within the bounds of monotone constraints)
                    lo, up = nodes[i]["clip"]
                    values[i] = out["value"][i] = learning_rate * min(max(v, lo), up)
        return out, values

    def _weight(self, sums, bounds):
        """The weight of a node of ``sums``, within ``bounds``."""
        p = self.p
        w = py_leaf_weight(sums[0], sums[1], p.reg_lambda, p.reg_alpha, p.min_child_weight,
                           p.max_delta_step)
        return min(max(w, bounds[0]), bounds[1])

    def _emit(self, nodes, children, learning_rate):
        n = len(nodes)
        out = np.zeros(n, dtype=NODE_DTYPE)
        out["value"] = [learning_rate * self._weight(node["sums"], node["clip"])
                        for node in nodes]
        out["cover"] = [node["sums"][1] for node in nodes]
        out["count"] = [node["count"] for node in nodes]
        out["depth"] = [node["depth"] for node in nodes]
        out["feature"] = out["left"] = out["right"] = -1
        out["is_leaf"] = 1
        if children:
            split = np.array(sorted(children), dtype=np.intp)
            found = [nodes[i]["split"] for i in split.tolist()]
            f = np.array([s[1] for s in found], dtype=np.intp)
            b = np.array([s[2] for s in found], dtype=np.intp)
            out["feature"][split] = f
            out["bin_threshold"][split] = b
            out["threshold"][split] = self.thresholds[self.bin_offsets[f] + b]
            out["default_left"][split] = [s[3] for s in found]
            out["gain"][split] = [s[0] for s in found]
            out["left"][split] = [children[i][0] for i in split.tolist()]
            out["right"][split] = [children[i][1] for i in split.tolist()]
            out["is_leaf"][split] = 0
        leaves = np.flatnonzero(out["is_leaf"])
        return out, dict(zip(leaves.tolist(), out["value"][leaves].tolist()))


def best_split(candidates):
    """The best of the shards' splits of a node (each the best among its features, or
    None): the largest gain, the first shard's (its features come first) on a tie,
    as one scan over every feature chooses."""
    best = None
    for c in candidates:
        if c is not None and (best is None or c[0] > best[0]):
            best = c
    return best


def feature_ranges(bin_offsets, n_shards):
    """The features (lo, hi) whose summed histograms each of ``n_shards`` shards gets
    and scans (``RowShard._exchange``): for two shards, every feature for both (each
    sends the other all its histograms, and the candidates need no exchange: one
    exchange a level); for more, consecutive ranges of about as many bins each for
    the largest power of two of them, none for the others (a reduce-scatter, then
    the candidates gathered: two exchanges a level)."""
    F = len(bin_offsets) - 1
    if n_shards <= 2:
        return [(0, F)] * n_shards
    P = 1 << (n_shards.bit_length() - 1)
    E = int(bin_offsets[-1])
    cuts = np.searchsorted(bin_offsets, np.arange(1, P) * E / P)
    bounds = np.r_[0, np.minimum(cuts, F), F]
    return ([(int(lo), int(max(lo, hi))) for lo, hi in zip(bounds[:-1], bounds[1:])]
            + [(F, F)] * (n_shards - P))


def message_bytes(obj):
    """Bytes of the NumPy arrays in ``obj`` (nested tuples, lists and dicts)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(message_bytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(message_bytes(x) for x in obj.values())
    return 0


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


def sum_in_order(arrays):
    """The sum of the shards' arrays, added in shard order (the model must not depend
    on which shard answers first)."""
    total = np.array(arrays[0], dtype=arrays[0].dtype, copy=True)
    for a in arrays[1:]:
        total += a
    return total


def summary_cuts(summary, max_bin):
    """The edges ``BinMapper.fit`` cuts for ``max_bin`` bins from a ``sketch.Summary``
    of a feature's finite values (the same edges when the summary is exact; a pruned
    one spreads the weight between its entries over them)."""
    if not len(summary):
        return np.empty(0)
    return _weighted_cuts(summary.values, summary.masses(), max_bin - 1)


def flat_cuts(cuts):
    """``(cuts, cut_ptr)`` of a list of per-feature edges (``BinMapper.from_cuts``)."""
    ptr = np.zeros(len(cuts) + 1, dtype=np.int64)
    np.cumsum([c.size for c in cuts], out=ptr[1:])
    return (np.concatenate(cuts) if cuts else np.empty(0)), ptr


def boost(call, local, params, objective, base_score, n_features, n_rows, eval_sets=(),
          rng=None, init=None):
    """The rounds of a fit over the shards behind ``call`` (``n_rows`` rows in all):
    (the fitted ensemble, the rounds built, the ``TrainingState`` of its metrics and
    callbacks). ``local`` is the local estimator whose parameters (``params``: its
    boosting parameters), metrics and callbacks are used; ``eval_sets``
    (``booster.EvalSet``, in memory) are evaluated after every round. ``rng``: the
    random state the local fit would draw its seed from next (default: a new one).
    ``init``: the ensemble a warm start continues (the shards start from its
    scores), whose round numbers go on."""
    booster.check_quant_bins(params, n_rows)
    K, P = objective.n_outputs, params.num_parallel_tree
    ensemble = (TreeEnsemble(n_features, base_score) if init is None
                else copy.deepcopy(init))
    before = ensemble.n_trees // (K * P)   # (a warm start's rounds)
    dart = None if params.dart is None else booster._Dart(params.dart, ensemble.n_trees)
    seed = int((local._rng() if rng is None else rng).randint(0, 2 ** 31 - 1))
    metrics = eval_metrics(local.eval_metric, objective, type(local).__name__)
    callbacks = training_callbacks(local.callbacks, local.early_stopping_rounds)
    n_threads = effective_n_threads(local.n_jobs)   # (the client's own work: eval sets)
    absent = np.nan if local.absent_as_missing else 0.0   # (of a sparse eval set)
    for ev in eval_sets:
        ev.raw = ensemble.predict_raw(ev.X, n_threads, absent=absent,
                                      base_margin=ev.base_margin)
    state = TrainingState(params.n_estimators, params.learning_rate, metrics,
                          [ev.name for ev in eval_sets])
    for cb in callbacks:
        cb.before_training(state)
    n_rounds = 0
    for it in range(params.n_estimators):
        state.iteration = it
        if booster.stop_asked(callbacks, "before_iteration", state):
            break
        r = before + it   # (the round's number)
        lr = booster.round_learning_rate(state, r)
        # the round's draws, as a local fit's, for each of its P sets of K trees (a
        # forest's): the rows' (each shard draws its own), then the trees' seeds
        samples, seeds = [], []
        for p in range(P):
            draws = np.random.default_rng([seed, r] if p == 0 else [seed, r, 2, p])
            samples.append(None)
            if params.subsample < 1.0:
                samples[-1] = (params.subsample, [seed, r] if p == 0 else [seed, r, 2, p])
                draws.bit_generator.advance(n_rows)
            seeds.append(draws.integers(0, 2 ** 63, size=K, dtype=np.uint64))
        # DART's trees dropped this round (a generator of its own, as in a local fit)
        dropped = (np.empty(0, dtype=np.intp) if dart is None
                   else dart.drop(np.random.default_rng([seed, r, 1])))
        drop = None
        if dropped.size:
            factor, weight = dart.factors(dropped.size, K * P, lr)
            drop = ([ensemble.tree(t).copy() for t in dropped], ensemble.tree_class[dropped],
                    factor, weight)
        answers = call("grow", K * P, np.concatenate(seeds), lr / P,
                       samples if any(samples) else None, drop)
        trees = answers[0]
        for other in answers[1:]:   # (every shard grows the same trees)
            if len(other) != K * P or not all(np.array_equal(a, b)
                                              for a, b in zip(other, trees)):
                raise RuntimeError("gbtree: the shards of a fit grew different trees")
        outputs = [j % K for j in range(K * P)]
        if dart is not None:
            weight = 1.0
            if drop is not None:
                weight = drop[3]
                for nodes in trees:
                    nodes["value"] *= weight
                ensemble.scale_trees(dropped, drop[2])
                for t in dropped:
                    dart.weights[t] *= drop[2]
                for ev in eval_sets:
                    gone = np.zeros_like(ev.raw)
                    add_trees_to_raw(ev.X, drop[0], drop[1], gone, n_threads, absent=absent)
                    ev.raw += (drop[2] - 1.0) * gone
            dart.weights += [weight] * len(trees)
        for nodes, k in zip(trees, outputs):
            ensemble.add_tree(nodes, k)
        n_rounds += 1
        if booster.evaluate_round(eval_sets, trees, outputs, objective, state, callbacks,
                                  n_threads, absent):
            break
    call("finish")
    for cb in callbacks:
        cb.after_training(state)
    ensemble._flush()
    booster.settle_best(state, n_rounds, eval_sets)
    return ensemble, n_rounds, state


def per_feature(local, params, encoder=None):
    """Set ``params``' per-feature parameters from ``local`` (``prepare``d; its
    categorical columns' ``encoder``), as a local fit sets them."""
    n = local.n_features_in_
    params.feature_weights = _params.feature_weights(local, n)
    params.interaction_constraints = _params.interaction_groups(local, n)
    params.monotone_constraints = _params.monotone_constraints(local, n)
    if encoder is not None and encoder.parents().shape[0] > local.n_features_in_:
        _params.widen(params, encoder.parents())


def prepare(local, n_features, encoder=None, names=None):
    """``local`` (a local estimator) told the data before a level-wise fit checks its
    eval sets against it: its width, its categorical columns' ``encoder`` (fitted;
    None: none) and its column names (None: none)."""
    local.n_features_in_ = n_features
    local._cat_encoder = encoder
    local.is_categorical_ = (None if encoder is None else
                             np.isin(np.arange(n_features), encoder.columns))
    if names is not None:
        local.feature_names_in_ = np.asarray(names, dtype=object)
    elif hasattr(local, "feature_names_in_"):
        del local.feature_names_in_


def continued(local, objective, n_features, what, params):
    """What a warm start of ``local`` (a fitted local estimator, its parameters set;
    ``objective``: this fit's loss, which takes over the fitted one's state)
    continues: (its ensemble, its bin mapper, its rounds), ``params.n_estimators``
    made the rounds still to grow; or (None, None, 0) when the fit starts anew. A
    ValueError when the model cannot be continued by a level-wise fit (``what``
    names it) on ``n_features`` columns."""
    init, done = local._warm_start_model(None, objective)
    if init is None:
        return None, None, 0
    ensemble, mapper = init
    if ensemble.n_features != n_features:
        raise ValueError(f"X has {n_features} features, but the model to continue has "
                         f"{ensemble.n_features}")
    if not booster._on_bin_edges(ensemble, mapper):
        raise ValueError(f"{what} continues models whose trees split at their bin edges; "
                         f"this one's do not (tree_method='exact' or 'approx'): set "
                         f"warm_start=False to refit")
    params.n_estimators -= done
    return ensemble, mapper, done


def fitted(local, ensemble, objective, mapper, n_rounds, state, eval_sets, fit_info, done=0):
    """``local`` (a local estimator, ``prepare``d) made the fitted model of
    ``ensemble``, built in ``n_rounds`` rounds after the ``done`` rounds of the
    model a warm start continued; ``state``: the fit's ``TrainingState``."""
    if isinstance(objective, _obj.Ranking):
        # (the shards' losses drew that many rounds of pairs)
        objective._round = done + n_rounds
    previous = {}
    for name in ("evals_result_", "best_score_", "best_iteration_", "oob_improvement_",
                 "oob_scores_", "oob_score_"):
        if hasattr(local, name):
            previous[name] = getattr(local, name)
            delattr(local, name)
    local._ensemble = ensemble
    local._objective = objective
    local._bin_mapper = mapper
    local.n_estimators_ = done + n_rounds
    local.best_iteration_ = done + state.best_iteration
    if eval_sets:
        local.evals_result_ = state.evals_result
        local.best_score_ = state.best_score
    if done:   # (the histories cover every round; early stopping keeps the best of all)
        local._continue_histories(previous, eval_metrics(local.eval_metric, objective,
                                                         type(local).__name__), n_rounds)
    local.fit_info_ = dict(fit_info)
    return local
