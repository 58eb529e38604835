# The expansion policy of every grower that grows node by node: of the open nodes
# (those with a split), the one of the smallest (key, age) splits next.

cdef inline double expansion_key(double gain, bint lossguide) noexcept nogil:
    """An open node's place in the expansion order, before its age (older first):
    lossguide the largest gain first; depthwise the same for every node, so the
    oldest open node splits next and a tree grows level by level."""
    return -gain if lossguide else 0.0
