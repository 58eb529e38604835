"""The node records of a grown tree (``NODE_DTYPE``, the model's format) for the
growers written in Python, by the node writer every grower uses (``_nodes.pxd``;
the histogram grower calls it from its C loop)."""
import numpy as np

from ..kernels._typedefs import NODE_DTYPE


def node_records(value, cover, count, depth, split=(), feature=(), threshold=(),
                 default_left=(), gain=(), left=(), right=(), bin_threshold=None):
    """The records of a tree's nodes: each node's ``value`` (its leaf value, shrunk),
    ``cover`` (hessian sum), ``count`` (rows) and ``depth``. The nodes ``split``
    (their ids) are split on ``feature`` at ``threshold`` (``bin_threshold``: the
    bin, for trees grown on bins), missing values going left where
    ``default_left``, with ``gain`` and the children ``left`` and ``right``; the
    other nodes are leaves."""
    out = np.zeros(len(value), dtype=NODE_DTYPE)
    cdef node_struct[::1] rec = out
    cdef Py_ssize_t i, j, n = rec.shape[0]
    cdef const double[::1] v = _column(value, np.float64, n)
    cdef const double[::1] c = _column(cover, np.float64, n)
    cdef const int[::1] rows = _column(count, np.intc, n)
    cdef const int[::1] d = _column(depth, np.intc, n)
    for i in range(n):
        write_leaf(&rec[i], v[i], c[i], rows[i], d[i])
    cdef const Py_ssize_t[::1] at = _column(split, np.intp, -1)
    cdef Py_ssize_t m = at.shape[0]
    if m == 0:
        return out
    cdef const int[::1] f = _column(feature, np.intc, m)
    cdef const double[::1] t = _column(threshold, np.float64, m)
    cdef const unsigned short[::1] b = _column(0 if bin_threshold is None else bin_threshold,
                                               np.uint16, m)
    cdef const unsigned char[::1] dl = _column(default_left, np.uint8, m)
    cdef const double[::1] g = _column(gain, np.float64, m)
    cdef const int[::1] lc = _column(left, np.intc, m)
    cdef const int[::1] rc = _column(right, np.intc, m)
    for j in range(m):
        write_split(&rec[at[j]], f[j], t[j], b[j], dl[j], g[j], lc[j], rc[j])
    return out


def _column(values, dtype, n):
    """``values`` (a sequence, or one value for all) as a contiguous array of ``n``
    (-1: as many as given) of ``dtype``, cast as NumPy casts them."""
    values = np.asarray(values)
    if n >= 0:
        values = np.broadcast_to(values, (n,))
    return np.ascontiguousarray(values.reshape(-1)).astype(dtype, copy=False)
