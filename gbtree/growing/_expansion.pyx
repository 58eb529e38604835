"""The expansion policy (``expansion_key`` in ``_expansion.pxd``) for the growers
written in Python (``level_tree``): ``OpenNodes``. The
histogram grower's C loop orders its open nodes by the same key
(``_serial_grower._pick``, ``_drop_hopeless``)."""


class OpenNodes:
    """The open nodes of a tree (those that have a split), in the order they were
    opened."""

    def __init__(self, lossguide):
        self.lossguide = bool(lossguide)
        self.ids, self.gains = [], []

    def __len__(self):
        return len(self.ids)

    def push(self, node, gain):
        self.ids.append(node)
        self.gains.append(gain)

    def order(self, j):
        """The place in the expansion order of the ``j``-th open node."""
        return (expansion_key(self.gains[j], self.lossguide), j)

    def pop(self):
        """The node to split next, taken out."""
        k = min(range(len(self.ids)), key=self.order)
        del self.gains[k]
        return self.ids.pop(k)

    def first(self, k):
        """The first ``k`` open nodes in the expansion order, kept."""
        return [self.ids[j] for j in sorted(range(len(self.ids)), key=self.order)[:k]]

    def pop_batch(self, room=None):
        """The nodes a level-wise grower splits together, taken out: lossguide the
        next one; depthwise (every key the same) the oldest ``room`` (all when
        None): a level, or what of it the leaf budget leaves."""
        if self.lossguide:
            return [self.pop()]
        n = len(self.ids) if room is None else room
        batch = self.ids[:n]
        del self.ids[:n], self.gains[:n]
        return batch
