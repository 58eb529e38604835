"""How the shards of a level-wise fit (``row_shard.RowShard``) sum what they hold:
per tree level, each shard's histograms are reduce-scattered (each shard gets its
range of features, ``feature_ranges``, from every shard, summed in an order fixed
by the shards' places, so the model never depends on which shard answers first)
and the candidate splits gathered (``best_split``); small arrays are summed over
every shard (``ShardExchange._sum``). A shard alone sends nothing; a cluster's
shard sends through it (``gbtree.dask``: actor messages)."""
import threading

import numpy as np


class ShardExchange:
    """A shard's side of its fit's exchanges (``RowShard`` is one). The shard has
    ``n_bins`` and ``bin_offsets`` (of every feature) when it connects."""

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
            other, other_extra = self._take(1 - i, 0)
            return ((parts + other, extra + other_extra) if i == 0
                    else (other + parts, other_extra + extra))
        if i >= P:   # (folds into shard i - P, which sends back the summed extras)
            self._post(i - P, 0, (parts, extra))
            return parts[:, :0].copy(), self._take(i - P, "totals")
        if i + P < W:
            other, other_extra = self._take(i + P, 0)
            parts, extra = parts + other, extra + other_extra
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
            other, other_extra = self._take(partner, step)
            own_part = parts[:, k0:k1]
            # (the lower shard's sums first, on both sides)
            parts = own_part + other if low else other + own_part
            extra = extra + other_extra if low else other_extra + extra
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


def sum_in_order(arrays):
    """The sum of the shards' arrays, added in shard order (the model must not depend
    on which shard answers first)."""
    total = np.array(arrays[0], dtype=arrays[0].dtype, copy=True)
    for a in arrays[1:]:
        total += a
    return total
