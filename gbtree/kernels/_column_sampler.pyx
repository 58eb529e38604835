"""Column sampling of every grower: by tree, by depth level and by node
(``colsample_bytree``, ``colsample_bylevel``, ``colsample_bynode``), with
``feature_weights``. Each draw depends only on the tree's seed and on the level
or node it is for, so the trees do not depend on the thread count or on the order
in which nodes are evaluated. The growers written in Python use ``begin`` and
``mask``."""
import numpy as np

from libc.math cimport log
from libc.stdint cimport uint64_t
from libcpp.algorithm cimport sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector

from ._typedefs cimport splitmix64

# node masks kept at once: the two children of a split may be evaluated together
cdef int TASKS = 2


cdef void sample_features(const unsigned char* among, unsigned char* out, int n_features,
                          double fraction, const double* weights, uint64_t key) noexcept nogil:
    """``out`` = a random subset of the features in ``among``: ``max(1, floor(fraction * n))``
    of its n features, drawn without replacement with probability proportional to
    ``weights`` (Efraimidis-Spirakis keys ``log(u) / w``); the draw depends only on ``key``."""
    cdef vector[pair[double, int]] keys
    cdef int f, n = 0, k
    cdef double u
    for f in range(n_features):
        out[f] = 0
        if among[f] and (weights == NULL or weights[f] > 0):
            n += 1
            u = ((splitmix64(key * <uint64_t>1000003 + <uint64_t>f) >> 11) + 0.5) * (1.0 / 9007199254740992.0)
            # negated so that an ascending sort puts the chosen keys first
            keys.push_back(pair[double, int](-(log(u) / (weights[f] if weights != NULL else 1.0)), f))
    k = <int>(fraction * n)
    if k < 1:
        k = 1
    if k < n:
        sort(keys.begin(), keys.end())
    for f in range(min(k, n)):     # (all n of them, in any order, when k >= n)
        out[keys[f].second] = 1


cdef class ColumnSampler:
    """The features each node may split on, drawn per tree, level and node, as
    ``params`` (a ``grower_params.GrowerParams``) asks."""

    def __cinit__(self, int n_features, params):
        cdef const double[::1] fw
        feature_weights = params.feature_weights
        self.n_features = n_features
        self.bytree = params.colsample_bytree
        self.bylevel = params.colsample_bylevel
        self.bynode = params.colsample_bynode
        if feature_weights is not None:
            self._weights_ref = np.ascontiguousarray(feature_weights, dtype=np.float64)
            fw = self._weights_ref
            self.weights = &fw[0]
        self.active = (self.bytree < 1.0 or self.bylevel < 1.0 or self.bynode < 1.0
                       or feature_weights is not None)
        self.all_mask.assign(n_features, 1)
        self.tree_mask.assign(n_features, 1)
        self.node_masks.assign(TASKS * n_features, 1)

    cdef void start_tree(self, uint64_t seed) noexcept nogil:
        """Draw the tree's sample; the levels' are drawn as the tree reaches them."""
        self.seed = seed
        self.level_masks.clear()
        if self.active:
            sample_features(&self.all_mask[0], &self.tree_mask[0], self.n_features,
                            self.bytree, self.weights, splitmix64(seed))

    cdef void ensure_level(self, int depth) noexcept nogil:
        """Draw the samples of the levels up to ``depth`` (serially, before use)."""
        if not self.active or self.bylevel >= 1.0:
            return
        while <int>self.level_masks.size() <= depth:
            self.level_masks.push_back(self.all_mask)
            sample_features(&self.tree_mask[0],
                            &self.level_masks[self.level_masks.size() - 1][0],
                            self.n_features, self.bylevel, self.weights,
                            splitmix64(self.seed ^ (<uint64_t>0x51ED27 + self.level_masks.size())))

    cdef const unsigned char* features(self, int node, int depth, int task) noexcept nogil:
        """The features node ``node`` at ``depth`` may split on, or NULL for all of
        them. Writes only the mask of ``task`` (0 or 1); the level's sample must
        exist (``ensure_level``)."""
        cdef const unsigned char* base
        cdef unsigned char* node_mask
        if not self.active:
            return NULL
        base = &self.tree_mask[0]
        if self.bylevel < 1.0:
            base = &self.level_masks[depth][0]
        if self.bynode < 1.0:
            node_mask = &self.node_masks[task * self.n_features]
            sample_features(base, node_mask, self.n_features, self.bynode, self.weights,
                            splitmix64(self.seed ^ (<uint64_t>0xA5A5A5A5 * (<uint64_t>node + 1))))
            base = node_mask
        return base

    def begin(self, uint64_t seed):
        """Start a tree: draw its sample from ``seed``."""
        self.start_tree(seed)

    def mask(self, int node, int depth):
        """The uint8 mask of the features node ``node`` (at ``depth``) may split on,
        a new array, or None when every feature may."""
        cdef const unsigned char* m
        self.ensure_level(depth)
        m = self.features(node, depth, 0)
        if m == NULL:
            return None
        return np.asarray(<const unsigned char[:self.n_features]>m).copy()
