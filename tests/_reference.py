"""Plain NumPy references of the Cython kernels, for the tests.

Each function computes what the kernel of the same stage computes, the slow
and obvious way; tests/test_kernels.py compares them on random data.
"""
import numpy as np


def map_to_bins(X, cuts, cut_ptr):
    """Bin of each value: number of cuts < x; NaN -> n_cuts + 1 (``_binning.map_to_bins``)."""
    X = np.asarray(X, dtype=np.float64)
    out = np.empty(X.shape, dtype=np.uint8)
    for f in range(X.shape[1]):
        c = cuts[cut_ptr[f]:cut_ptr[f + 1]]
        col = X[:, f]
        b = np.searchsorted(c, col, side="left")
        b[np.isnan(col)] = c.size + 1
        out[:, f] = b
    return out


def dense_bins(B):
    """The dense uint8 matrix of a ``binning.SparseBinned``: each row's default bins
    with its stored entries' bins written over them."""
    out = np.repeat(B.default_bin[None, :], B.shape[0], axis=0)
    rows = np.repeat(np.arange(B.shape[0]), np.diff(B.indptr))
    out[rows, B.indices] = B.bins
    return np.ascontiguousarray(out)


def sorted_finite_column(col):
    """The finite values of one column, sorted (``_binning.sorted_finite_columns``)."""
    return np.sort(col[np.isfinite(col)])


def build_histogram(X_binned, rows, grad, hess, bin_offsets):
    """(n_entries, 2) sums of grad and hess per (feature, bin) over ``rows``."""
    n_entries = bin_offsets[-1]
    hist = np.zeros((n_entries, 2))
    for f in range(X_binned.shape[1]):
        idx = bin_offsets[f] + X_binned[rows, f].astype(np.intp)
        hist[:, 0] += np.bincount(idx, weights=grad[rows].astype(np.float64), minlength=n_entries)
        hist[:, 1] += np.bincount(idx, weights=hess[rows].astype(np.float64), minlength=n_entries)
    return hist


def splitmix64(x):
    """splitmix64 of each uint64 in ``x`` (``_typedefs.splitmix64``; wraps modulo 2**64)."""
    x = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def quantize(grad, hess, levels, seed):
    """Packed int32 row values and (gradient step, hessian step) (``_quantizer.quantize_into``):
    g / step_g and h / step_h rounded down or up at random (up with probability
    their fractional part), packed as g_int * 2**16 + h_int."""
    g, h = grad.astype(np.float64), hess.astype(np.float64)
    max_g = np.abs(g).max() if g.size else 0.0
    max_h = np.abs(h).max() if h.size else 0.0
    step_g = max_g / (levels // 2) if max_g > 0 else 1.0
    step_h = max_h / levels if max_h > 0 else 1.0
    m = splitmix64(np.uint64(seed) ^ np.arange(g.size, dtype=np.uint64))
    u_g = (m >> np.uint64(32)).astype(np.float64) * 2.0 ** -32
    u_h = (m & np.uint64(0xFFFFFFFF)).astype(np.float64) * 2.0 ** -32
    g_int = np.floor(g * (1.0 / step_g) + u_g).astype(np.int64)
    h_int = np.floor(h * (1.0 / step_h) + u_h).astype(np.int64)
    return (g_int * 2 ** 16 + h_int).astype(np.int32), (step_g, step_h)


def widen(q):
    """int32 row values g * 2**16 + h as the int64 g * 2**32 + h the histograms add."""
    h = (q.astype(np.int64) & 0xFFFF).astype(np.uint16).astype(np.int16).astype(np.int64)
    return (q.astype(np.int64) - h) // 2 ** 16 * 2 ** 32 + h


def unpack(packed, step_g, step_h):
    """(n, 2) float sums of packed int64 values (``_histogram.unpack_histogram``)."""
    h_int = (packed & 0xFFFFFFFF).astype(np.uint32).astype(np.int32).astype(np.int64)
    g_int = (packed - h_int) // 2 ** 32
    return np.column_stack([g_int * step_g, h_int * step_h])


def build_packed_histogram(X_binned, rows, q, bin_offsets):
    """(n_entries,) int64 sums of the widened int32 row values ``q`` per (feature, bin)
    over ``rows``."""
    hist = np.zeros(bin_offsets[-1], dtype=np.int64)
    packed = widen(q)
    for f in range(X_binned.shape[1]):
        np.add.at(hist, bin_offsets[f] + X_binned[rows, f].astype(np.intp), packed[rows])
    return hist


def leaf_weight(G, H, reg_lambda=1.0, reg_alpha=0.0, min_child_weight=1.0, max_delta_step=0.0):
    """``-T_alpha(G) / (H + lambda)`` clipped to max_delta_step; 0 if H < min_child_weight."""
    if H <= 0 or H < min_child_weight:
        return 0.0
    t = np.sign(G) * max(abs(G) - reg_alpha, 0.0)
    with np.errstate(over="ignore"):   # a subnormal H + lambda gives +-inf, as in the kernel
        w = -t / (H + reg_lambda)
    if max_delta_step > 0:
        w = float(np.clip(w, -max_delta_step, max_delta_step))
    return w


def node_score(G, H, reg_lambda=1.0, reg_alpha=0.0, min_child_weight=1.0, max_delta_step=0.0):
    """``-2 x`` the minimal regularised loss ``G w + 1/2 (H + lambda) w^2 + alpha |w|``."""
    if H <= 0 or H < min_child_weight:
        return 0.0
    w = leaf_weight(G, H, reg_lambda, reg_alpha, min_child_weight, max_delta_step)
    return -2.0 * (G * w + 0.5 * (H + reg_lambda) * w * w + reg_alpha * abs(w))


def score_given_weight(G, H, w, reg_lambda=1.0, reg_alpha=0.0, min_child_weight=1.0,
                       max_delta_step=0.0):
    """``node_score`` at weight ``w`` instead of the best one."""
    if H <= 0 or H < min_child_weight:
        return 0.0
    return -(2.0 * G * w + (H + reg_lambda) * w * w + 2.0 * reg_alpha * abs(w))


def find_best_split(hist, n_bins, bin_offsets, G, H, reg_lambda=1.0, reg_alpha=0.0,
                    min_child_weight=1.0, max_delta_step=0.0, gamma=0.0, allowed=None,
                    monotone=None, lower=-np.inf, upper=np.inf):
    """Exhaustive search over (feature, threshold bin, missing side).

    Returns a dict like ``_splitting.py_find_best_split`` (feature -1 if none);
    the tie-breaking is the kernel's: lowest feature, then lowest bin, then
    missing-right before missing-left. ``allowed``: the features that may split;
    ``monotone`` (per feature -1 / 0 / +1) and the weight bounds [lower, upper]:
    where they apply, the children's weights are clipped to the bounds, a split
    whose weights go against the feature's direction is refused, and the scores
    are taken at the clipped weights (XGBoost's monotone rule).
    """
    reg = dict(reg_lambda=reg_lambda, reg_alpha=reg_alpha,
               min_child_weight=min_child_weight, max_delta_step=max_delta_step)
    parent = node_score(G, H, **reg)
    bounded = lower > -np.inf or upper < np.inf

    def weight(g, h):
        return float(np.clip(leaf_weight(g, h, **reg), lower, upper))

    bounded_parent = score_given_weight(G, H, weight(G, H), **reg)
    best = None
    for f in range(len(n_bins)):
        if allowed is not None and not allowed[f]:
            continue
        direction = 0 if monotone is None else monotone[f]
        constrained = bounded or direction != 0
        h = hist[bin_offsets[f]:bin_offsets[f + 1]]
        nb = n_bins[f]
        gm, hm = h[nb]
        has_missing = gm != 0 or hm != 0
        cg = np.cumsum(h[:nb, 0])
        ch = np.cumsum(h[:nb, 1])
        for b in range(nb):
            options = []
            if b < nb - 1 or has_missing:
                options.append((0, cg[b], ch[b]))
            if has_missing and b < nb - 1:
                options.append((1, cg[b] + gm, ch[b] + hm))
            for default_left, gl, hl in options:
                gr, hr = G - gl, H - hl
                if hl < min_child_weight or hr < min_child_weight or hl <= 0 or hr <= 0:
                    continue
                if constrained:
                    wl, wr = weight(gl, hl), weight(gr, hr)
                    if direction * (wr - wl) < 0:
                        continue
                    sl = score_given_weight(gl, hl, wl, **reg)
                    sr = score_given_weight(gr, hr, wr, **reg)
                    gain = sl + sr - bounded_parent
                    if gain <= 1e-10 * abs(sl + sr) or gain < gamma:
                        continue
                else:
                    sl, sr = node_score(gl, hl, **reg), node_score(gr, hr, **reg)
                    gain = sl + sr - parent
                    if gain <= 1e-10 * (sl + sr) or gain < gamma:
                        continue
                if best is None or gain > best["gain"]:
                    best = dict(gain=gain, feature=f, bin=b, default_left=bool(default_left),
                                sum_g_left=gl, sum_h_left=hl, has_missing=has_missing)
    if best is None:
        return dict(gain=0.0, feature=-1)
    if not best.pop("has_missing"):
        best["default_left"] = bool(best["sum_h_left"] >= H - best["sum_h_left"])
    return best


def find_best_split_outputs(hist, n_bins, bin_offsets, sums, reg_lambda=1.0, reg_alpha=0.0,
                            min_child_weight=1.0, max_delta_step=0.0, gamma=0.0):
    """Exhaustive search for a tree whose leaves hold a vector: ``hist`` (K, n_entries,
    2), ``sums`` (K, 2). The gain is the sum of the outputs' gains; a split is valid
    when both children's hessians averaged over the outputs are > 0 and >=
    min_child_weight. Returns None or (gain, feature, bin, default_left, left sums)."""
    reg = dict(reg_lambda=reg_lambda, reg_alpha=reg_alpha,
               min_child_weight=min_child_weight, max_delta_step=max_delta_step)
    K = hist.shape[0]
    score = lambda S: sum(node_score(g, h, **reg) for g, h in S)   # noqa: E731
    parent = score(sums)
    best = None
    for f in range(len(n_bins)):
        h = hist[:, bin_offsets[f]:bin_offsets[f + 1]]
        nb = n_bins[f]
        miss = h[:, nb]
        has_missing = np.any(miss != 0)
        cum = np.cumsum(h[:, :nb], axis=1)
        for b in range(nb):
            options = []
            if b < nb - 1 or has_missing:
                options.append((0, cum[:, b]))
            if has_missing and b < nb - 1:
                options.append((1, cum[:, b] + miss))
            for default_left, left in options:
                right = sums - left
                hl, hr = left[:, 1].sum(), right[:, 1].sum()
                if hl / K < min_child_weight or hr / K < min_child_weight or hl <= 0 or hr <= 0:
                    continue
                s = score(left) + score(right)
                gain = s - parent
                if gain <= 1e-10 * s or gain < gamma:
                    continue
                if best is None or gain > best[0]:
                    best = [gain, f, b, bool(default_left), left, has_missing]
    if best is None:
        return None
    if not best.pop():
        hl = best[4][:, 1].sum()
        best[3] = bool(hl >= sums[:, 1].sum() - hl)
    return tuple(best)


def grow_symmetric(X_binned, n_bins, bin_offsets, grad, hess, max_depth, learning_rate=1.0,
                   reg_lambda=1.0, reg_alpha=0.0, min_child_weight=1.0, max_delta_step=0.0,
                   gamma=0.0):
    """A symmetric tree by brute force: each level's split maximises the gain summed
    over the level's nodes (``find_best_split_outputs`` with a node per output) and
    is kept when it is at least ``gamma`` per node. Returns the levels' splits
    [(feature, bin, default_left)] and the leaves' values, in path order (left =
    0, the first level's bit the highest)."""
    reg = dict(reg_lambda=reg_lambda, reg_alpha=reg_alpha,
               min_child_weight=min_child_weight, max_delta_step=max_delta_step)
    nodes = [np.arange(X_binned.shape[0])]
    splits = []
    for _ in range(max_depth):
        hist = np.stack([build_histogram(X_binned, r, grad, hess, bin_offsets) for r in nodes])
        sums = np.array([[grad[r].astype(np.float64).sum(), hess[r].astype(np.float64).sum()]
                         for r in nodes])
        found = find_best_split_outputs(hist, n_bins, bin_offsets, sums, gamma=gamma * len(nodes),
                                        **reg)
        if found is None:
            break
        _, f, b, default_left, _ = found
        splits.append((f, b, default_left))
        children = []
        for r in nodes:
            order, n_left = partition(X_binned, r, f, b, n_bins[f], default_left)
            children += [order[:n_left], order[n_left:]]
        nodes = children
    values = [learning_rate * leaf_weight(grad[r].astype(np.float64).sum(),
                                          hess[r].astype(np.float64).sum(), **reg)
              for r in nodes]
    return splits, np.array(values)


def exact_level_splits(XT, pos, pairs, sums, has_missing, allowed=None, reg_lambda=1.0,
                       reg_alpha=0.0, min_child_weight=1.0, max_delta_step=0.0):
    """Exact greedy splits of the nodes of one level, by brute force: ``XT``
    (n_features, n_rows) float32 (NaN missing), ``pos[row]`` the row's node or
    -1. Candidates in the kernel's order: per feature, if it has missing values,
    the cuts between its node's distinct values in increasing order with missing
    rows right, then every value left; then in decreasing order with missing rows
    left, then every value right; the first best of the lowest feature wins.
    Returns per node (gain, feature, threshold, default_left, left sums) with
    threshold the float64 midpoint (or past the end) of the cut, -inf / -1 when
    there is no valid split."""
    reg = dict(reg_lambda=reg_lambda, reg_alpha=reg_alpha,
               min_child_weight=min_child_weight, max_delta_step=max_delta_step)
    out = []
    for nid in range(len(sums)):
        G, H = sums[nid]
        parent = node_score(G, H, **reg)
        best = (-np.inf, -1, 0.0, False, np.zeros(2))
        for f in range(XT.shape[0]):
            if allowed is not None and not allowed[nid, f]:
                continue
            rows = np.flatnonzero(pos == nid)
            v = XT[f, rows]
            keep = ~np.isnan(v)
            v, g, h = v[keep], pairs[rows[keep], 0].astype(float), pairs[rows[keep], 1].astype(float)
            if v.size == 0:
                continue
            uniq = np.unique(v)
            cands = []
            sl_g = np.array([g[v <= u].sum() for u in uniq])
            sl_h = np.array([h[v <= u].sum() for u in uniq])
            if has_missing[f]:
                for j in range(uniq.size - 1):
                    cands.append((sl_g[j], sl_h[j], (float(uniq[j]) + float(uniq[j + 1])) / 2, False))
                cands.append((g.sum(), h.sum(), float(uniq[-1]) + abs(float(uniq[-1])) + 1e-6, False))
            for j in range(uniq.size - 2, -1, -1):
                cands.append((G - (g.sum() - sl_g[j]), H - (h.sum() - sl_h[j]),
                              (float(uniq[j]) + float(uniq[j + 1])) / 2, True))
            cands.append((G - g.sum(), H - h.sum(), float(uniq[0]) - abs(float(uniq[0])) - 1e-6,
                          True))
            for gl, hl, t, dl in cands:
                gr, hr = G - gl, H - hl
                if hl < min_child_weight or hr < min_child_weight or hl <= 0 or hr <= 0:
                    continue
                sl, sr = node_score(gl, hl, **reg), node_score(gr, hr, **reg)
                gain = sl + sr - parent
                if gain > best[0] and gain > 1e-10 * (sl + sr):
                    best = (gain, f, t, dl, np.array([gl, hl]))
        out.append(best)
    return out


def partition(X_binned, rows, feature, bin, missing_bin, default_left):
    """Stable partition of ``rows``: (left rows then right rows, number of left rows)."""
    b = X_binned[rows, feature]
    left = np.where(b == missing_bin, default_left, b <= bin)
    return np.concatenate([rows[left], rows[~left]]), int(left.sum())


def keep_first(keys, nodes, n_keep):
    """The grower's ``_keep_first``: the nodes of the ``n_keep`` first (key, node)
    pairs, and the others, each in increasing node order."""
    keys = np.asarray(keys, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.intc)
    order = np.lexsort((nodes, keys))
    n_keep = min(max(n_keep, 0), len(nodes))
    return np.sort(nodes[order[:n_keep]]), np.sort(nodes[order[n_keep:]])


def predict_raw(X, nodes, tree_ptr, tree_class, base_score):
    """Walk every tree for every row, one row at a time."""
    X = np.asarray(X, dtype=np.float64)
    out = np.tile(np.asarray(base_score, dtype=np.float64), (X.shape[0], 1))
    for t in range(len(tree_ptr) - 1):
        tree = nodes[tree_ptr[t]:tree_ptr[t + 1]]
        for i in range(X.shape[0]):
            n = 0
            while not tree[n]["is_leaf"]:
                v = X[i, tree[n]["feature"]]
                if np.isnan(v):
                    go_left = tree[n]["default_left"]
                else:
                    go_left = v <= tree[n]["threshold"]
                n = tree[n]["left"] if go_left else tree[n]["right"]
            out[i, tree_class[t]] += tree[n]["value"]
    return out


def squared_error_grad(y, raw, w=None):
    w = np.ones_like(y) if w is None else w
    return w * (raw[:, 0] - y), w.copy()


def logistic_grad(y, raw, w=None):
    w = np.ones_like(y) if w is None else w
    p = 1 / (1 + np.exp(-raw[:, 0]))
    return w * (p - y), w * np.maximum(p * (1 - p), 1e-16)


def softmax_grad(y, raw, w=None):
    """(grad, hess) of shape (K, n): ``p - onehot`` and ``K/(K-1) p (1 - p)``."""
    n, K = raw.shape
    w = np.ones(n) if w is None else w
    e = np.exp(raw - raw.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    onehot = np.eye(K)[y.astype(int)]
    grad = (p - onehot) * w[:, None]
    hess = np.maximum(K / (K - 1) * p * (1 - p), 1e-16) * w[:, None]
    return grad.T, hess.T


def absolute_error_grad(y, raw, w=None):
    w = np.ones_like(y) if w is None else w
    return w * np.sign(raw[:, 0] - y), w.copy()


def quantile_grad(y, raw, w=None, alpha=0.5):
    w = np.ones_like(y) if w is None else w
    d = raw[:, 0] - y
    return w * np.where(d > 0, 1 - alpha, np.where(d < 0, -alpha, 0.0)), w.copy()


def huber_grad(y, raw, w=None, delta=1.0):
    w = np.ones_like(y) if w is None else w
    return w * np.clip(raw[:, 0] - y, -delta, delta), w.copy()


def poisson_grad(y, raw, w=None, hess_shift=0.7):
    w = np.ones_like(y) if w is None else w
    return w * (np.exp(raw[:, 0]) - y), w * np.exp(raw[:, 0] + hess_shift)


def gamma_grad(y, raw, w=None):
    w = np.ones_like(y) if w is None else w
    t = y * np.exp(-raw[:, 0])
    return w * (1 - t), w * np.maximum(t, 1e-16)


def tweedie_grad(y, raw, w=None, power=1.5):
    w = np.ones_like(y) if w is None else w
    a, b = np.exp((1 - power) * raw[:, 0]), np.exp((2 - power) * raw[:, 0])
    return w * (b - y * a), w * ((2 - power) * b - (1 - power) * y * a)


# ---------------------------------------------------------------- ranking
def _splitmix(state):
    """One step of splitmix64 on a Python int state: (new state, output)."""
    m = (1 << 64) - 1
    state = (state + 0x9E3779B97F4A7C15) & m
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return state, z ^ (z >> 31)


def _dcg_full(gain_in_order):
    """DCG over every position (no cut-off) of gains listed in rank order."""
    return float(np.sum(gain_in_order / np.log2(np.arange(gain_in_order.size) + 2.0)))


def _ap_full(rel_in_order):
    """Average precision (no cut-off) of binary relevances in rank order (0 if none)."""
    hits = np.cumsum(rel_in_order)
    if hits[-1] == 0:
        return 0.0
    return float(np.sum(rel_in_order * hits / (np.arange(rel_in_order.size) + 1)) / hits[-1])


def ranking_grad(y, raw, group_ptr, kind="ndcg", w=None, truncation=30, exp_gain=True,
                 norm=True, n_pair=0, seed=0, group_ids=None):
    """Per-group pairwise gradients, the slow way (``_ranking.ranking_grad``).

    The pair weight is computed by brute force: the metric of the current
    ranking with the two documents swapped minus the metric without the swap
    (NDCG: DCG over every position divided by the ideal DCG at ``truncation``;
    MAP: average precision over every position, relevant meaning ``y > 0``).
    """
    y = np.asarray(y, dtype=np.float64)
    s_all = raw[:, 0]
    n_rows = y.size
    w = np.ones(n_rows) if w is None else w
    grad, hess = np.zeros(n_rows), np.zeros(n_rows)
    for g in range(len(group_ptr) - 1):
        lo_row, hi_row = group_ptr[g], group_ptr[g + 1]
        yy, s = y[lo_row:hi_row], s_all[lo_row:hi_row]
        n = int(yy.size)
        if n < 2 or np.all(yy == yy[0]):
            continue
        by_score = np.argsort(-s, kind="stable")
        rank = np.empty(n, dtype=int)
        rank[by_score] = np.arange(n)
        gain = (2.0 ** yy - 1) if exp_gain else yy.copy()
        ideal = np.sort(gain)[::-1][:min(truncation, n)]
        idcg = _dcg_full(ideal)
        rel = (yy > 0).astype(float)

        def weight(i, j):
            if kind == "pairwise":
                return 1.0
            order = by_score.copy()
            a, b = rank[i], rank[j]
            swapped = order.copy()
            swapped[a], swapped[b] = order[b], order[a]
            if kind == "ndcg":
                return abs(_dcg_full(gain[swapped]) - _dcg_full(gain[order])) / idcg
            return abs(_ap_full(rel[swapped]) - _ap_full(rel[order]))

        if n_pair <= 0:
            pairs = [(by_score[a], by_score[b]) for a in range(min(truncation, n - 1))
                     for b in range(a + 1, n)]
        else:
            by_label = np.argsort(-yy, kind="stable")
            gid = g if group_ids is None else int(group_ids[g])
            state = seed ^ ((gid * 0xD1B54A32D192ED03) & ((1 << 64) - 1))
            pairs = []
            for q in range(n):
                i = by_label[q]
                same = np.flatnonzero(yy[by_label] == yy[i])
                lo, hi = int(same[0]), int(same[-1]) + 1
                for _ in range(n_pair):
                    state, r = _splitmix(state)
                    r = r % (n - (hi - lo))   # Python ints: no overflow
                    pairs.append((i, by_label[r if r < lo else r + (hi - lo)]))
        score_norm = norm and s.max() != s.min()
        lam, hh = np.zeros(n), np.zeros(n)
        total = 0.0
        for i, j in pairs:
            if yy[i] == yy[j]:
                continue
            hi_doc, lo_doc = (i, j) if yy[i] > yy[j] else (j, i)
            z = weight(i, j)
            d = s[hi_doc] - s[lo_doc]
            if score_norm:
                z /= 0.01 + abs(d)
            rho = 1 / (1 + np.exp(d))
            lam[hi_doc] -= z * rho
            lam[lo_doc] += z * rho
            hh[hi_doc] += z * rho * (1 - rho)
            hh[lo_doc] += z * rho * (1 - rho)
            total += 2 * z * rho
        if norm and total > 0:
            f = np.log2(1 + total) / total
            lam, hh = lam * f, hh * f
        grad[lo_row:hi_row] = w[lo_row:hi_row] * lam
        hess[lo_row:hi_row] = w[lo_row:hi_row] * hh
    return grad, hess


def ranknet_loss(y, raw, group_ptr):
    """Sum over groups and pairs ``y_i > y_j`` of ``log(1 + exp(-(s_i - s_j)))``."""
    total = 0.0
    for g in range(len(group_ptr) - 1):
        yy, s = y[group_ptr[g]:group_ptr[g + 1]], raw[group_ptr[g]:group_ptr[g + 1], 0]
        better = yy[:, None] > yy[None, :]
        total += float(np.sum(np.logaddexp(0.0, -(s[:, None] - s[None, :]))[better]))
    return total


def ordered_statistics(codes, target, weight, prior, smooth, perm):
    """Ordered target statistic of every row, one row at a time in ``perm``'s order
    (``categorical.ordered_statistics``): each row's value uses the rows of its
    category met before it, then adds its own label to the sums."""
    out = np.full(len(codes), np.nan)
    sum_wy, sum_w = {}, {}
    for i in perm:
        c = codes[i]
        if np.isnan(c):
            continue
        if c == -1:   # a category not in the fitted table
            out[i] = prior
            continue
        out[i] = (sum_wy.get(c, 0.0) + smooth * prior) / (sum_w.get(c, 0.0) + smooth)
        sum_wy[c] = sum_wy.get(c, 0.0) + weight[i] * target[i]
        sum_w[c] = sum_w.get(c, 0.0) + weight[i]
    return out


def _tree_expectation(tree, x, present, cover):
    """E[tree(X) | X_S = x_S] over the training distribution the covers describe:
    splits on a feature of ``present`` follow x, others average their children
    weighted by cover (``cover``: each node's leaves' sum; 0 below: halves)."""
    def walk(n):
        if tree["is_leaf"][n]:
            return tree["value"][n]
        f, left, right = tree["feature"][n], tree["left"][n], tree["right"][n]
        if present[f]:
            v = x[f]
            go_left = bool(tree["default_left"][n]) if np.isnan(v) else v <= tree["threshold"][n]
            return walk(left if go_left else right)
        total = cover[left] + cover[right]
        wl = cover[left] / total if total > 0 else 0.5
        return wl * walk(left) + (1 - wl) * walk(right)
    return walk(0)


def _leaf_covers(tree):
    """Each node's cover as the sum of its leaves' covers."""
    cover = np.zeros(tree.shape[0])

    def walk(n):
        if tree["is_leaf"][n]:
            cover[n] = tree["cover"][n]
        else:
            cover[n] = walk(tree["left"][n]) + walk(tree["right"][n])
        return cover[n]
    walk(0)
    return cover


def shap_values_bruteforce(tree, x, n_features):
    """Exact Shapley values of one tree at row x, by enumerating every subset S of
    features: v(S) = E[tree | x_S] (``_tree_expectation``). Returns
    ``(phi, interactions)``: phi of shape (n_features + 1,) (last: v(empty set)),
    and the Shapley interaction values of shape (n_features + 1,) * 2 (off the
    diagonal half the interaction index, on it the rest of phi; bias in the corner)."""
    from itertools import combinations
    from math import factorial
    m = n_features
    cover = _leaf_covers(tree)
    cache = {}

    def v(subset):
        if subset not in cache:
            present = np.zeros(m, dtype=bool)
            present[list(subset)] = True
            cache[subset] = _tree_expectation(tree, x, present, cover)
        return cache[subset]

    def subsets(others):
        for size in range(len(others) + 1):
            for s in combinations(others, size):
                yield s

    phi = np.zeros(m + 1)
    inter = np.zeros((m + 1, m + 1))
    for i in range(m):
        others = [j for j in range(m) if j != i]
        for s in subsets(others):
            w = factorial(len(s)) * factorial(m - len(s) - 1) / factorial(m)
            phi[i] += w * (v(tuple(sorted(s + (i,)))) - v(s))
        for j in others:
            rest = [k for k in others if k != j]
            for s in subsets(rest):
                w = factorial(len(s)) * factorial(m - len(s) - 2) / (2 * factorial(m - 1))
                inter[i, j] += w * (v(tuple(sorted(s + (i, j)))) - v(tuple(sorted(s + (i,))))
                                    - v(tuple(sorted(s + (j,)))) + v(s))
        inter[i, i] = phi[i] - inter[i, :m].sum()
    phi[m] = v(())
    inter[m, m] = phi[m]
    return phi, inter


def saabas(tree, x, n_features):
    """Saabas' attributions of one tree at row x: each split on x's path gives its
    feature the change of the cover-weighted mean from the node to the child x
    takes; last entry: the root's mean."""
    cover = _leaf_covers(tree)

    def mean(k):
        if tree["is_leaf"][k]:
            return tree["value"][k]
        left, right = tree["left"][k], tree["right"][k]
        total = cover[left] + cover[right]
        wl = cover[left] / total if total > 0 else 0.5
        return wl * mean(left) + (1 - wl) * mean(right)

    phi = np.zeros(n_features + 1)
    phi[n_features] = mean(0)
    n = 0
    while not tree["is_leaf"][n]:
        f, v = tree["feature"][n], x[tree["feature"][n]]
        go_left = bool(tree["default_left"][n]) if np.isnan(v) else v <= tree["threshold"][n]
        nxt = tree["left"][n] if go_left else tree["right"][n]
        phi[f] += mean(nxt) - mean(n)
        n = nxt
    return phi


def gradient_pairs(grad, hess):
    """The pairs a grower takes for one output: float32 (1, n_rows, 2)."""
    pairs = np.empty((1, len(grad), 2), dtype=np.float32)
    pairs[0, :, 0], pairs[0, :, 1] = grad, hess
    return pairs
