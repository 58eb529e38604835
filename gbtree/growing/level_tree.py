"""The growth loop of the growers written in Python and of the level-wise fits:
``TreeBuilder`` decides each batch of splits of a tree from the best splits of
the rows' holder (``row_blocks.RowBlocks``, in memory or in shards, and
``ExactGrower``) and emits the tree's nodes."""
import numpy as np

from ..kernels._constraints import MonotoneConstraints
from ..kernels._splitting import py_leaf_weight
from ._expansion import OpenNodes
from ._nodes import node_records


def allowed_features(groups, n_features, sampled, used):
    """The uint8 mask of the features a level may split on: the column sample's
    ``sampled`` (None: all) within the interaction constraints ``groups`` given the
    features ``used`` by the levels above (None: every feature)."""
    if not groups or not used:
        return sampled
    used = set(used)
    mask = np.zeros(n_features, dtype=np.uint8)
    for group in groups:
        if used <= set(group):
            mask[group] = 1
    if len(used) == 1 and not any(used <= set(group) for group in groups):
        mask[next(iter(used))] = 1      # a feature in no group: with itself
    return mask if sampled is None else mask & sampled


def build_children(child_sums):
    """Of each node's two children (``child_sums``: (G, H) of left, right, left, ...),
    the index of the one whose histogram is built, the other's being its parent's
    minus it: the one of the smaller hessian sum (the left on a tie)."""
    m = child_sums.shape[0] // 2
    return 2 * np.arange(m) + (child_sums[0::2, 1] > child_sums[1::2, 1])


class TreeBuilder:
    """Grows one tree, a batch of splits at a time: ``level(t, splits)`` applies the
    splits of tree ``t`` and returns the children's row counts and best splits
    (``RowBlocks._level``, ``ExactGrower._level``).
    Depthwise, a batch is a level (up to the ``max_leaves`` budget: the histogram
    grower splits the nodes of a level oldest first); lossguide, it is the one open
    node of the largest gain (the oldest on a tie), in the order of ``_expansion``.
    A split is (gain, feature, bin, default_left, left sums, ...); without
    ``thresholds`` (None: ``ExactGrower._level``) its third value is its raw
    threshold. With ``renew`` (quantised gradients), ``renew(t, leaves)``
    gives the exact sums of the leaves of tree ``t`` once it is grown
    (``RowShard._renew``): those of every node are made from them before its values.
    With ``refit``, ``refit(t, leaves)`` gives the loss's own value of each leaf
    (``RowShard._refit``; NaN: keep the Newton value), as a local fit refits them."""

    def __init__(self, level, thresholds, bin_offsets, params, renew=None, refit=None,
                 moves=None):
        self.level = level
        self.renew = renew
        self.refit = refit
        # lossguide, with ``moves`` (the holder's ``(rename, merge)``): each batch also
        # splits the next open nodes (``params.split_ahead`` in all) under spare ids,
        # kept until the order reaches them (renamed) or the tree ends (merged back).
        # The trees are the same; a holder whose batch is an exchange makes fewer. Not
        # with node-wise column samples or interaction constraints (keyed by node id).
        ahead = (moves is not None and params.lossguide and params.max_leaves
                 and params.split_ahead > 1 and params.colsample_bynode >= 1.0
                 and not params.interaction_groups)
        self.rename, self.merge = moves if ahead else (None, None)
        self.thresholds, self.bin_offsets = thresholds, bin_offsets
        self.params = params
        self.monotone = (None if params.monotone_constraints is None
                         or not np.any(params.monotone_constraints)
                         else MonotoneConstraints(len(bin_offsets) - 1,
                                                  params.monotone_constraints))

    def grow(self, t, root, learning_rate):
        """Tree ``t`` of the round from its root's (sums, row count, best split);
        returns its nodes (NODE_DTYPE) and its leaves' values by node id."""
        params = self.params
        if params.symmetric:
            nodes, children = self._grow_symmetric(t, root)
            return self._finish(t, nodes, children, learning_rate)
        sums, count, split = root
        unbounded = (-np.inf, np.inf)
        # (``bounds``: those of a node's weight; ``clip``: those its value is clipped
        # to, its parent's, as the local grower clips a split's children)
        nodes = [dict(sums=sums, count=int(count), depth=0, split=split, bounds=unbounded,
                      clip=unbounded)]
        opened = OpenNodes(params.lossguide)
        if split is not None:
            opened.push(0, split[0])
        children = {}
        ahead = {}   # node -> (its split, children, counts, best splits) made ahead
        spare = iter(range(2 * params.max_leaves, 2 ** 31, 2))   # (ids of those children)
        n_leaves = 1
        while opened and not (params.max_leaves and n_leaves >= params.max_leaves):
            batch = opened.pop_batch(params.max_leaves - n_leaves if params.max_leaves else None)
            n_leaves += len(batch)
            # (the children may split: below the depth limit, with leaves to spare)
            room_left = not (params.max_leaves and n_leaves >= params.max_leaves)
            if batch[0] in ahead:
                i = batch[0]
                split, made, counts, found = ahead.pop(i)
                left, right = len(nodes), len(nodes) + 1
                self.rename(t, {split[4]: left, split[5]: right})
                for old, new in ((split[4], left), (split[5], right)):
                    if old in ahead:
                        ahead[new] = ahead.pop(old)
                made = [(dict(node, count=int(n), split=f if room_left else None))
                        for node, n, f in zip(made, counts, found)]
                self._open(nodes, children, opened, i, made)
                continue
            later = [] if self.rename is None or not room_left else \
                self._ahead(nodes, opened, ahead, params.max_leaves - n_leaves)
            splits, made = [], []
            for k, (i, node) in enumerate([(i, nodes[i]) for i in batch] + later):
                left = len(nodes) + 2 * k if k < len(batch) else next(spare)
                split, pair = self._split(node, i, left, left + 1, room_left)
                splits.append(split)
                made.append(pair)
            counts, found = self.level(t, splits)
            for k, split in enumerate(splits):
                pair = [dict(node, count=int(counts[2 * k + side]), split=found[2 * k + side])
                        for side, node in enumerate(made[k])]
                if k < len(batch):
                    self._open(nodes, children, opened, split[0], pair)
                else:
                    ahead[split[0]] = (split, made[k], counts[2 * k:2 * k + 2],
                                       found[2 * k:2 * k + 2])
        # (split ahead but left leaves: merged back, children before their parents)
        for i, (split, *_) in sorted(ahead.items(), key=lambda item: -item[1][0][9]):
            self.merge(t, i, split[4], split[5])
        return self._finish(t, nodes, children, learning_rate)

    def _split(self, node, i, left, right, room_left):
        """The split of open node ``node`` (id ``i``) into children ``left`` and
        ``right``, as ``level`` takes it, and the children's nodes."""
        params = self.params
        gain, f, b, default_left, left_sums = node["split"][:5]
        depth = node["depth"] + 1
        sums_l, sums_r = left_sums, node["sums"] - left_sums
        lo, up = node["bounds"]
        bounds = (lo, up, lo, up)
        if self.monotone is not None:
            bounds = self.monotone.children_bounds(
                f, lo, up, self._weight(sums_l, (lo, up)), self._weight(sums_r, (lo, up)))
        pair = (dict(sums=sums_l, depth=depth, bounds=bounds[:2], clip=(lo, up)),
                dict(sums=sums_r, depth=depth, bounds=bounds[2:], clip=(lo, up)))
        # the child of the smaller hessian sum is built, the other derived
        build = -1
        if room_left and not (params.max_depth and depth >= params.max_depth):
            # (of a structure of several outputs: their summed hessians)
            hess_l, hess_r = np.sum(sums_l[..., 1]), np.sum(sums_r[..., 1])
            build = left if hess_l <= hess_r else right
        return ((i, f, b, default_left, left, right, build, sums_l, sums_r, depth, bounds[:2],
                 bounds[2:]), pair)

    def _ahead(self, nodes, opened, ahead, room):
        """The nodes to split ahead with the next batch, as (id, node): of the open
        nodes and the children of those split ahead, those of the largest gains not
        split yet, ``split_ahead - 1`` at most and at most ``room``."""
        n = min(self.params.split_ahead - 1, room)
        if n <= 0:
            return []
        candidates = [(i, nodes[i]) for i in opened.first(n + len(ahead)) if i not in ahead]
        for split, made, counts, found in ahead.values():
            for side in (0, 1):
                if found[side] is not None and split[4 + side] not in ahead:
                    candidates.append((split[4 + side], dict(made[side], split=found[side])))
        candidates.sort(key=lambda c: -c[1]["split"][0])
        return candidates[:n]

    @staticmethod
    def _open(nodes, children, opened, i, pair):
        """Node ``i`` split: its children (``pair``, with their counts and best splits)
        appended, those that have a split opened."""
        children[i] = (len(nodes), len(nodes) + 1)
        for node in pair:
            if node["split"] is not None:
                opened.push(len(nodes), node["split"][0])
            nodes.append(node)

    def _grow_symmetric(self, t, root):
        """A symmetric tree (``grow_policy="symmetric"``): every node of a level split
        alike, by the level's best split, complete to its depth (node i's children
        are 2i + 1 and 2i + 2), as a local fit's ``SymmetricGrower`` grows it: its
        nodes and children, as ``grow`` makes them."""
        params = self.params
        sums, count, split = root
        unbounded = (-np.inf, np.inf)
        nodes = [dict(sums=sums, count=int(count), depth=0, split=None, bounds=unbounded,
                      clip=unbounded)]
        children = {}
        level = [0]
        depth = 0
        while split is not None and depth < params.max_depth:
            _, f, b, default_left, left_sums, gains = split
            depth += 1
            child_sums = np.empty((2 * len(level), 2))
            child_sums[0::2] = left_sums
            child_sums[1::2] = [nodes[i]["sums"] for i in level] - left_sums
            built = set(build_children(child_sums).tolist()) if depth < params.max_depth else ()
            splits = []
            for j, i in enumerate(level):
                left, right = 2 * i + 1, 2 * i + 2
                nodes[i]["split"] = (gains[j], f, b, default_left)
                nodes += [dict(sums=child_sums[2 * j], depth=depth, bounds=unbounded,
                               clip=unbounded),
                          dict(sums=child_sums[2 * j + 1], depth=depth, bounds=unbounded,
                               clip=unbounded)]
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
        if not self.params.vector_leaves:
            return self._output_tree(t, nodes, children, learning_rate)
        trees = []
        for k in range(len(nodes[0]["sums"])):
            output_nodes = [dict(node, sums=node["sums"][k]) for node in nodes]
            for i in children:
                split = nodes[i]["split"]
                output_nodes[i]["split"] = (split[5][k],) + tuple(split[1:4])
            trees.append(self._output_tree(t, output_nodes, children, learning_rate, k))
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
                if not np.isnan(v):   # (within the leaf's bounds of monotone constraints)
                    lo, up = nodes[i]["bounds"]
                    values[i] = out["value"][i] = learning_rate * min(max(v, lo), up)
        return out, values

    def _weight(self, sums, bounds):
        """The weight of a node of ``sums``, within ``bounds``."""
        params = self.params
        w = py_leaf_weight(sums[0], sums[1], *params.penalties)
        return min(max(w, bounds[0]), bounds[1])

    def _emit(self, nodes, children, learning_rate):
        split = sorted(children)
        found = [nodes[i]["split"] for i in split]
        f = np.array([s[1] for s in found], dtype=np.intp)
        if self.thresholds is None:   # (raw thresholds)
            threshold, b = [s[2] for s in found], None
        else:
            b = np.array([s[2] for s in found], dtype=np.intp)
            threshold = self.thresholds[self.bin_offsets[f] + b]
        out = node_records(
            [learning_rate * self._weight(node["sums"], node["clip"]) for node in nodes],
            [node["sums"][1] for node in nodes], [node["count"] for node in nodes],
            [node["depth"] for node in nodes], split, f, threshold, [s[3] for s in found],
            [s[0] for s in found], [children[i][0] for i in split],
            [children[i][1] for i in split], bin_threshold=b)
        leaves = np.flatnonzero(out["is_leaf"])
        return out, dict(zip(leaves.tolist(), out["value"][leaves].tolist()))
