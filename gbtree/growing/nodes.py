"""The node records of a grown tree (``NODE_DTYPE``, the model's format), written
in one place for the growers written in Python; the histogram grower writes the
same records from its C loop (``_serial_grower._push_node``)."""
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
    out["value"] = value
    out["cover"] = cover
    out["count"] = count
    out["depth"] = depth
    out["feature"] = out["left"] = out["right"] = -1
    out["is_leaf"] = 1
    split = np.asarray(split, dtype=np.intp)
    if split.size:
        out["feature"][split] = feature
        out["threshold"][split] = threshold
        if bin_threshold is not None:
            out["bin_threshold"][split] = bin_threshold
        out["default_left"][split] = default_left
        out["gain"][split] = gain
        out["left"][split] = left
        out["right"][split] = right
        out["is_leaf"][split] = 0
    return out
