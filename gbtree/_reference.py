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


def interleave(grad, hess):
    """Float32 (g0, h0, g1, h1, ...) pairs (``_histogram.interleave``)."""
    return np.column_stack([grad, hess]).astype(np.float32).ravel()


def build_histogram(X_binned, rows, grad, hess, bin_offsets):
    """(n_entries, 2) sums of grad and hess per (feature, bin) over ``rows``."""
    n_entries = bin_offsets[-1]
    hist = np.zeros((n_entries, 2))
    for f in range(X_binned.shape[1]):
        idx = bin_offsets[f] + X_binned[rows, f].astype(np.intp)
        hist[:, 0] += np.bincount(idx, weights=grad[rows].astype(np.float64), minlength=n_entries)
        hist[:, 1] += np.bincount(idx, weights=hess[rows].astype(np.float64), minlength=n_entries)
    return hist


def leaf_weight(G, H, reg_lambda=1.0, reg_alpha=0.0, min_child_weight=1.0, max_delta_step=0.0):
    """``-T_alpha(G) / (H + lambda)`` clipped to max_delta_step; 0 if H < min_child_weight."""
    if H <= 0 or H < min_child_weight:
        return 0.0
    t = np.sign(G) * max(abs(G) - reg_alpha, 0.0)
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


def find_best_split(hist, n_bins, bin_offsets, G, H, reg_lambda=1.0, reg_alpha=0.0,
                    min_child_weight=1.0, max_delta_step=0.0, gamma=0.0):
    """Exhaustive search over (feature, threshold bin, missing side).

    Returns a dict like ``_splitting.py_find_best_split`` (feature -1 if none);
    the tie-breaking is the kernel's: lowest feature, then lowest bin, then
    missing-right before missing-left.
    """
    reg = dict(reg_lambda=reg_lambda, reg_alpha=reg_alpha,
               min_child_weight=min_child_weight, max_delta_step=max_delta_step)
    parent = node_score(G, H, **reg)
    best = None
    for f in range(len(n_bins)):
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


def partition(X_binned, rows, feature, bin, missing_bin, default_left):
    """Stable partition of ``rows``: (left rows then right rows, number of left rows)."""
    b = X_binned[rows, feature]
    left = np.where(b == missing_bin, default_left, b <= bin)
    return np.concatenate([rows[left], rows[~left]]), int(left.sum())


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
