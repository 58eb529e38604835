from libcpp.pair cimport pair
from libcpp.vector cimport vector

from ..kernels._typedefs cimport G_H_C, SUM_C, IDX_C, hist_entry, node_struct
from ..kernels._splitting cimport split_params, split_info
from ..kernels._binned_matrix cimport BinnedMatrix
from ..kernels._column_sampler cimport ColumnSampler
from ..kernels._constraints cimport InteractionConstraints, MonotoneConstraints
from ..kernels._histogram_pool cimport HistogramPool
from ..kernels._partition cimport DataPartition
from ..kernels._quantizer cimport GradientQuantizer


cdef struct node_state:
    # The node's rows (DataPartition): rows[lo[0]:hi[0]], then rows[lo[1]:hi[1]].
    Py_ssize_t lo[2]
    Py_ssize_t hi[2]
    SUM_C sum_g
    SUM_C sum_h
    int depth
    int slot              # histogram slot, -1 when the node has none
    double lower          # bounds on the node's weight (monotone constraints)
    double upper
    split_info split      # split.feature == -1: the node stays a leaf
    int ahead             # its expansion when expanded ahead (_expand_ahead), else -1
    bint raw_done         # a final leaf whose raw scores were updated during the tree


cdef struct expansion:
    # One split being expanded (see SerialGrower._expand_rows).
    int parent            # the node split; -1: a free entry
    int n_leaves          # leaves once it is split; -1: not known yet (expanded ahead)
    Py_ssize_t n_left     # the left child's rows
    Py_ssize_t left_in[2]   # ... of them in each half of the row array
    node_state child[2]   # left, right (until they are committed)
    int spare[2]          # histogram slots taken for the children, -1: none
    int release           # slot to give back after the expansion, -1: none
    # (expanded ahead only)
    int extra             # slots held beyond the parent's one (spares until finished)
    int had_slot          # the parent had a histogram when it was queued
    int status            # FREE, QUEUED, RUNNING, DONE (not finished yet), FINISHED


cdef inline Py_ssize_t n_rows_of(const node_state* st) noexcept nogil:
    return (st.hi[0] - st.lo[0]) + (st.hi[1] - st.lo[1])


cdef class SerialGrower:
    # the parts
    cdef BinnedMatrix X
    cdef DataPartition partition
    cdef HistogramPool pool
    cdef GradientQuantizer quantizer
    cdef ColumnSampler sampler
    cdef InteractionConstraints interactions
    cdef MonotoneConstraints monotone
    cdef split_params params
    cdef const double[::1] bin_thresholds
    cdef int n_features
    cdef int max_depth, max_leaves
    cdef bint lossguide
    cdef bint drop_hopeless           # close the open nodes the leaf budget cannot reach
    cdef public int n_threads
    cdef readonly object grower_params   # (``twin`` makes a grower of the same ones)
    # the current tree
    cdef const G_H_C* pairs           # interleaved (gradient, hessian) pairs
    cdef const void* values           # what the histograms read (GradientQuantizer.values)
    cdef bint all_rows                # grown on every row
    cdef vector[node_struct] nodes
    cdef vector[node_state] states
    # buffers: histogram chunks of a build on every thread, split scans of two
    # nodes at once (n_features each), ``_drop_hopeless``'s scratch
    cdef hist_entry* scratch
    cdef int scratch_chunks
    cdef int max_chunks
    cdef split_info* per_feature
    cdef vector[pair[double, int]] hopeless
    cdef vector[int] closing

    cdef void _build_state(self, node_state* st, bint root, hist_entry* scratch,
                           int n_threads) noexcept nogil
    cdef bint _may_split(self, const node_state* st, int n_leaves) noexcept nogil
    cdef void _evaluate(self, node_state* st, int node, split_info* scratch, int n_threads,
                        int task) noexcept nogil
    cdef void _subtract(self, node_state* large, const node_state* small,
                        int n_threads) noexcept nogil
    cdef void _subtract_and_evaluate(self, node_state* small, node_state* large, int small_id,
                                     int large_id, bint need_small, bint need_large,
                                     bint large_built, split_info* per_feature,
                                     int n_threads, int task) noexcept nogil
    cdef int _acquire_spares(self, expansion* e, bint sure) noexcept nogil
    cdef bint _left_is_larger(self, const expansion* e) noexcept nogil
    cdef void _release_spares(self, expansion* e) noexcept nogil
    cdef void _expand_rows(self, expansion* e, int tid, int n_threads) noexcept nogil
    cdef void _expand_hist(self, expansion* e, node_state* L, node_state* R, int left_id,
                           int right_id, hist_entry* scratch, split_info* per_feature,
                           int n_threads, int task) noexcept nogil
    cdef void _commit(self, expansion* e, double learning_rate, int* left,
                      int* right) noexcept nogil
    cdef void _open_children(self, int left, int right, int n_leaves,
                             vector[int]& open_nodes) noexcept nogil
    cdef void _close(self, int node) noexcept nogil
    cdef void _drop_hopeless(self, vector[int]& open_nodes, int n_leaves) noexcept nogil
    cdef int _push_node(self, const node_state* st, double learning_rate) noexcept nogil
    cdef int _pick(self, const vector[int]& open_nodes, Py_ssize_t below_rows) noexcept nogil
    cdef int _grow(self, double learning_rate, const IDX_C* sample,
                   Py_ssize_t n_sample) noexcept nogil
    cdef void _update_raw(self, double[:, ::1] raw, int output, bint renew,
                          double learning_rate) noexcept nogil
    cdef void _renew_node(self, int k, SUM_C g, SUM_C h, double learning_rate) noexcept nogil
    cdef hist_entry _leaf_sums(self, const node_state* st) noexcept nogil
    # what a grower that expands nodes ahead adds (nothing here)
    cdef int _prepare_tree(self, double[:, ::1] raw, int output) except -1
    cdef int _split_ahead(self, int pick, vector[int]& open_nodes, int* n_leaves,
                          double learning_rate) noexcept nogil
    cdef int _slots_in_use(self) noexcept nogil
    cdef void _final_leaf(self, int node) noexcept nogil
