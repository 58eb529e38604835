"""Constraints on the histogram grower's splits.

Interaction constraints: the features on a path from the root must all belong to
one of the given groups (XGBoost's ``interaction_constraints``); a feature in no
group may only be used alone on its path. Monotone constraints: XGBoost's rule,
the children's weights are clipped to their parent's bounds and a constrained
split puts the midpoint of their weights between them."""

import numpy as np

# masks kept at once: the two children of a split may be evaluated together
cdef int TASKS = 2


cdef class InteractionConstraints:
    """Which features each node may split on, given the features on its path."""

    def __cinit__(self, int n_features, groups=None):
        cdef int f, g
        self.n_features = n_features
        if groups is not None:
            groups = [sorted(set(int(f) for f in grp)) for grp in groups]
            self.n_groups = len(groups)
            self.membership.assign(n_features * self.n_groups, 0)
            self.listed.assign(n_features, 0)
            for g, grp in enumerate(groups):
                for f in grp:
                    self.membership[f * self.n_groups + g] = 1
                    self.listed[f] = 1
        self.masks.assign(TASKS * n_features, 1)

    cdef void start_tree(self) noexcept nogil:
        if self.n_groups > 0:
            self.node_solo.assign(1, -1)
            self.node_groups.assign(self.n_groups, 0)

    cdef const unsigned char* allowed(self, int node, const unsigned char* base,
                                      int task) noexcept nogil:
        """The features of ``base`` (NULL: all) that node ``node`` may split on; writes
        only the mask of ``task`` (0 or 1)."""
        cdef int f, g, solo
        cdef unsigned char* out
        cdef bint any_group
        if self.n_groups == 0 or node == 0:
            return base
        out = &self.masks[task * self.n_features]
        solo = self.node_solo[node]
        for f in range(self.n_features):
            if base != NULL and not base[f]:
                out[f] = 0
            elif solo >= 0:
                out[f] = f == solo
            else:
                any_group = False
                for g in range(self.n_groups):
                    if (self.node_groups[node * self.n_groups + g]
                            and self.membership[f * self.n_groups + g]):
                        any_group = True
                        break
                out[f] = any_group
        return out

    cdef void add_children(self, int parent, int f, int left, int right) noexcept nogil:
        """The children ``left``..``right`` of ``parent`` (ids in increasing order)
        add feature f to their path."""
        cdef int g, k, child
        cdef int solo = self.node_solo[parent]
        self.node_solo.resize(right + 1, -1)
        self.node_groups.resize((right + 1) * self.n_groups, 0)
        for child in range(left, right + 1):
            if parent == 0 and not self.listed[f]:
                self.node_solo[child] = f
            else:
                self.node_solo[child] = solo
            for g in range(self.n_groups):
                k = parent * self.n_groups + g
                self.node_groups[child * self.n_groups + g] = (
                    self.membership[f * self.n_groups + g]
                    and (parent == 0 or self.node_groups[k]))

    def start(self):
        """Start a tree: its root may split on every feature (``mask``, ``split``: the
        same rules from Python, for a tree grown level by level)."""
        self.start_tree()

    def mask(self, int node, base=None):
        """The uint8 mask of the features node ``node`` may split on among those of
        ``base`` (a uint8 mask, or None: all); None when every one of them may."""
        cdef const unsigned char[::1] base_v
        cdef const unsigned char* got
        cdef const unsigned char* base_ptr = NULL
        if base is not None:
            base_v = np.ascontiguousarray(base, dtype=np.uint8)
            if base_v.shape[0] != self.n_features:
                raise ValueError("base must hold one value per feature")
            base_ptr = &base_v[0]
        if node < 0 or (self.n_groups > 0 and node >= <int>self.node_solo.size()):
            raise ValueError(f"node {node} is not a node of the tree")
        got = self.allowed(node, base_ptr, 0)
        if got == NULL:
            return None
        return np.array(<const unsigned char[:self.n_features]>got, dtype=np.uint8)

    def split(self, int parent, int f, int left, int right):
        """Node ``parent`` split on feature f into the nodes ``left``..``right``."""
        if not 0 <= f < self.n_features or not 0 <= parent < left <= right:
            raise ValueError("not a split of the tree")
        if self.n_groups > 0:
            if parent >= <int>self.node_solo.size():
                raise ValueError(f"node {parent} is not a node of the tree")
            self.add_children(parent, f, left, right)


cdef class MonotoneConstraints:
    """Each feature's direction, and the bounds it puts on the children's weights."""

    def __cinit__(self, int n_features, directions=None):
        cdef int f
        if directions is not None and any(directions):
            self.direction.assign(n_features, 0)
            for f in range(n_features):
                self.direction[f] = <signed char>directions[f]

    cdef const signed char* directions(self) noexcept nogil:
        """Per feature -1 / 0 / +1, or NULL without constraints."""
        return &self.direction[0] if self.direction.size() > 0 else NULL

    cdef void bound_children(self, int f, double lower, double upper, double w_left,
                             double w_right, double* bounds) noexcept nogil:
        """``bounds`` = the (lower, upper) bounds of the left child, then of the right
        one, after a split on f of a node bounded by ``lower``, ``upper`` whose
        children's weights (clipped to those bounds) are ``w_left``, ``w_right``."""
        cdef double mid = 0.5 * (w_left + w_right)
        cdef int c = self.direction[f]
        bounds[:4] = [lower, upper, lower, upper]
        if c > 0:
            bounds[1] = mid
            bounds[2] = mid
        elif c < 0:
            bounds[0] = mid
            bounds[3] = mid

    def children_bounds(self, int f, double lower, double upper, double w_left,
                        double w_right):
        """``bound_children`` from Python: (lower, upper) of the left child, then of
        the right one."""
        cdef double bounds[4]
        if self.direction.size() == 0 or not 0 <= f < <int>self.direction.size():
            return lower, upper, lower, upper
        self.bound_children(f, lower, upper, w_left, w_right, bounds)
        return bounds[0], bounds[1], bounds[2], bounds[3]
