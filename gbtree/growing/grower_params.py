"""What a grower is told: the shape of its trees, their regularisation, column
sampling, constraints and gradient quantisation, and how it works; and the
gradient pairs every grower takes (``check_pairs``)."""
from dataclasses import dataclass



def check_pairs(shape, n_rows, n_outputs):
    """ValueError unless ``shape`` is that of the pairs a grower takes: the
    (gradient, hessian) pairs of ``n_outputs`` outputs, one pair per row."""
    if tuple(shape) != (n_outputs, n_rows, 2):
        raise ValueError(f"pairs must hold the (gradient, hessian) pairs of {n_outputs} "
                         f"output(s), one pair per row: shape ({n_outputs}, {n_rows}, 2), got "
                         f"{tuple(shape)}")


@dataclass(frozen=True)
class GrowerParams:
    """The parameters of one ``_expand_ahead.TreeGrower`` (validated by the estimators; see
    sklearn.py for their meaning). The last eight fields are engine options: they
    change how the grower works, never the trees it grows (the tests check that
    by growing with them on and off)."""

    max_depth: int = 6
    max_leaves: int = 0
    lossguide: bool = False
    symmetric: bool = False              # one split per level (the level-wise trainer's)
    vector_leaves: bool = False          # one structure for every output (the same)
    reg_lambda: float = 1.0
    reg_alpha: float = 0.0
    min_child_weight: float = 1.0
    max_delta_step: float = 0.0
    gamma: float = 0.0
    colsample_bytree: float = 1.0
    colsample_bylevel: float = 1.0
    colsample_bynode: float = 1.0
    feature_weights: object = None       # per feature, for column sampling
    interaction_groups: object = None    # lists of features allowed together on a path
    monotone_constraints: object = None  # per feature -1, 0 or +1
    quant_levels: int = 0                # quantised gradients (0: float sums)
    max_chunks: int = 16                 # row chunks of a histogram at most
    # engine options
    expand_ahead: bool = True            # small open nodes expanded ahead, one per thread
    ahead_max_rows: int = 65536          # ... those of fewer rows
    ahead_tasks_per_thread: int = 3      # ... at most this many queued or running per thread
    ahead_lifo: bool = False             # the expansion queue's last entry runs first
    drop_hopeless: bool = True           # open nodes the leaf budget cannot reach are closed
    hist_memory_bytes: int = 128 * 2 ** 20   # histograms of open nodes kept up to this
    plain_scan: bool = True              # the vectorised scan of features without missing rows
    split_ahead: int = 8                 # lossguide on row blocks: open nodes split a batch

    @property
    def penalties(self):
        """(reg_lambda, reg_alpha, min_child_weight, max_delta_step): what a leaf's
        weight and a split's gain take besides the sums."""
        return self.reg_lambda, self.reg_alpha, self.min_child_weight, self.max_delta_step

    @classmethod
    def from_boost(cls, params):
        """The grower's parameters for a ``booster.BoostParams``."""
        return cls(max_depth=params.max_depth, max_leaves=params.max_leaves,
                   lossguide=params.grow_policy == "lossguide",
                   symmetric=params.grow_policy == "symmetric",
                   vector_leaves=params.multi_strategy == "multi_output_tree",
                   reg_lambda=params.reg_lambda,
                   reg_alpha=params.reg_alpha, min_child_weight=params.min_child_weight,
                   max_delta_step=params.max_delta_step, gamma=params.gamma,
                   colsample_bytree=params.colsample_bytree,
                   colsample_bylevel=params.colsample_bylevel,
                   colsample_bynode=params.colsample_bynode,
                   feature_weights=params.feature_weights,
                   interaction_groups=params.interaction_constraints,
                   monotone_constraints=params.monotone_constraints,
                   quant_levels=params.grad_quant_bins)
