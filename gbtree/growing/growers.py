"""Which grower grows the trees of a fit: ``make_grower`` reads the parameters once.

Every grower takes the same inputs and gives the same value:
``grow(pairs, learning_rate, raw, output, sample=None, seed=0)`` grows one tree
structure on ``pairs``, the float32 (gradient, hessian) pairs (m, n_rows, 2) of
outputs ``output`` .. ``output + m - 1`` (m = 1; vector leaves: every output, from
0), on the rows ``sample`` (sorted; None: all), its column sample drawn from
``seed``; it adds the tree's values (times ``learning_rate``) to those outputs'
columns of ``raw`` on the rows it grew on, and returns the m trees (NODE_DTYPE
records, written by ``_nodes``), one per output. Until the next ``grow``,
``leaf_rows`` gives each node's rows and ``node_bounds`` each node's bounds. A
grower takes the round's thread count (``n_threads``). The first row of this
table that matches the parameters names the grower::

    tree_method="exact"                    ExactGrower (exact.py): level walks of the
                                           column blocks sorted once per fit
    tree_method="approx", approx_proposal  ExactGrower, the candidates proposed per node
      ="local"
    tree_method="approx" (global proposals)  GlobalApproxGrower (approx.py): each tree on
                                           histograms of bins proposed for it
    grow_policy="symmetric"                SymmetricGrower (row_blocks.py): one split
                                           a level
    multi_strategy="multi_output_tree"     VectorLeafGrower (row_blocks.py): one
                                           structure for every output
    anything else (histograms, depthwise   TreeGrower (_expand_ahead.pyx over
      or lossguide)                        _serial_grower.pyx): node by node, small nodes
                                           expanded ahead on every thread
    boosting_type="ordered"                OrderedBoosting (ordered.py) around the grower
                                           its other parameters name

Two growth loops grow the trees: TreeGrower's, in C, and ``level_tree.TreeBuilder``,
which grows the trees of ExactGrower, and of ``row_blocks.RowBlocks``: SymmetricGrower
and VectorLeafGrower over the rows in memory, and out of core and on Dask over rows
held elsewhere (``row_shard.RowShard``): depthwise, lossguide and symmetric trees and
vector leaves, the same trees as the growers above; what
those fits refuse (exact and approx, ordered boosting, GOSS on Dask, losses that
need all rows at once) ``levelwise_fit.check_params`` and ``make_objective`` refuse.
"""
from ._expand_ahead import TreeGrower
from .approx import GlobalApproxGrower
from .exact import ExactGrower
from .grower_params import GrowerParams
from .ordered import OrderedBoosting
from .row_blocks import SymmetricGrower, VectorLeafGrower


def make_grower(params, X, X_binned, mapper, n_threads, ordered=None):
    """The grower of a fit of ``params`` (``booster.BoostParams``) on ``X`` (raw
    values: exact and approx read them), binned by ``mapper`` into ``X_binned``
    (None for exact and approx), on ``n_threads`` threads to start with.
    ``ordered``: for ordered boosting, (objective, y, sample_weight, the rows'
    starting raw scores)."""
    grower_params = GrowerParams.from_boost(params)
    vector_leaves = params.multi_strategy == "multi_output_tree"
    if params.tree_method in ("exact", "approx"):
        if vector_leaves:
            raise ValueError(f"tree_method={params.tree_method!r} grows one output per tree: "
                             f"it cannot be used with multi_strategy='multi_output_tree'")
        if params.tree_method == "approx" and params.approx_proposal == "global":
            grower = GlobalApproxGrower(X, grower_params, n_threads,
                                        absent_as_missing=mapper.absent_as_missing,
                                        n_parts=params.approx_parts)
        else:
            grower = ExactGrower(
                X, grower_params, n_threads, absent_as_missing=mapper.absent_as_missing,
                n_parts=params.approx_parts,
                proposal="local" if params.tree_method == "approx" else None)
    else:
        kind = (SymmetricGrower if params.grow_policy == "symmetric"
                else VectorLeafGrower if vector_leaves else TreeGrower)
        grower = kind(X_binned, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
                      grower_params, n_threads, default_bin=mapper.default_bins())
    if params.boosting_type == "ordered":
        objective, y, sample_weight, start = ordered
        grower = OrderedBoosting(grower, objective, y, sample_weight, start, grower_params,
                                 params.permutation_count, params.seed, n_threads)
    return grower
