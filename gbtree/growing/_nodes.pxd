# The node writer: a grown tree's node records (``NODE_DTYPE``, the model's format),
# written once for every grower (``node_records`` for those written in Python, the
# histogram grower's C loop calls these).
from ..kernels._typedefs cimport node_struct


cdef inline void write_leaf(node_struct* rec, double value, double cover, int count,
                            int depth) noexcept nogil:
    """``rec`` a leaf of ``value`` (its leaf value, shrunk), ``cover`` (hessian
    sum), ``count`` rows, at ``depth``."""
    rec.value = value
    rec.threshold = 0.0
    rec.gain = 0.0
    rec.cover = cover
    rec.feature = -1
    rec.left = -1
    rec.right = -1
    rec.count = count
    rec.depth = depth
    rec.bin_threshold = 0
    rec.default_left = 0
    rec.is_leaf = 1


cdef inline void write_split(node_struct* rec, int feature, double threshold,
                             unsigned short bin_threshold, unsigned char default_left,
                             double gain, int left, int right) noexcept nogil:
    """``rec`` (written as a leaf) split on ``feature`` at ``threshold`` (and bin
    ``bin_threshold``, for trees grown on bins), missing values going left where
    ``default_left``, with ``gain`` and the children ``left`` and ``right``."""
    rec.is_leaf = 0
    rec.feature = feature
    rec.bin_threshold = bin_threshold
    rec.threshold = threshold
    rec.default_left = default_left
    rec.gain = gain
    rec.left = left
    rec.right = right
