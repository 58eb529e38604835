"""Which open node a tree splits next (the expansion policy) for the growers
written in Python: depthwise the oldest open node, so that a tree grows level by
level; lossguide the open node of the largest gain, the oldest on a tie. The
histogram grower's C loop follows the same order (``_serial_grower._pick``), and
the tests compare the trees of both."""


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

    def pop(self):
        """The node to split next, taken out."""
        k = 0
        if self.lossguide:
            k = max(range(len(self.gains)), key=lambda j: (self.gains[j], -j))
        del self.gains[k]
        return self.ids.pop(k)

    def pop_batch(self, room=None):
        """The nodes a level-wise grower splits together, taken out: lossguide the
        next one; depthwise the oldest ``room`` (all when None): a level, or what of
        it the leaf budget leaves."""
        if self.lossguide:
            return [self.pop()]
        n = len(self.ids) if room is None else room
        batch = self.ids[:n]
        del self.ids[:n], self.gains[:n]
        return batch
