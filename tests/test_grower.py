import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import _reference as ref
from gbtree.kernels._binned_matrix import columns_of
from gbtree.growing._expand_ahead import TreeGrower
from gbtree.growing.approx import GlobalApproxGrower
from gbtree.growing.exact import ExactGrower
from gbtree.growing.row_blocks import SymmetricGrower, VectorLeafGrower
from gbtree.growing.grower_params import GrowerParams
from gbtree.data.binning import BinMapper
from gbtree.predicting.tree import TreeEnsemble


def _setup(rng, n=3000, p=5, max_bin=64, missing=0.05):
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) < missing] = np.nan
    y = np.nan_to_num(X[:, 0]) * 2 + np.sin(np.nan_to_num(X[:, 1]) * 3) + rng.normal(scale=0.1, size=n)
    mapper = BinMapper(max_bin).fit(X)
    Xb = mapper.transform(X)
    grad = (0.0 - y).astype(np.float32)     # squared error at F = 0
    hess = np.ones(n, dtype=np.float32)
    return X, Xb, mapper, grad, hess


def _grower(Xb, mapper, n_threads=1, **kw):
    """A grower of the binned rows; ``kw``: fields of GrowerParams."""
    return TreeGrower(Xb, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
                      GrowerParams(**kw), n_threads)


def _depths(tree):
    return tree["depth"][tree["is_leaf"] == 1]


@pytest.mark.parametrize("lossguide", [False, True])
def test_raw_update_equals_prediction_of_the_tree(rng, lossguide):
    X, Xb, mapper, grad, hess = _setup(rng)
    grower = _grower(Xb, mapper, lossguide=lossguide, max_leaves=20 if lossguide else 0)
    raw = np.zeros((X.shape[0], 1))
    tree = grower.grow(ref.gradient_pairs(grad, hess), 0.5, raw, 0)[0]
    ens = TreeEnsemble(X.shape[1], [0.0])
    ens.add_tree(tree, 0)
    np.testing.assert_array_equal(raw, ens.predict_raw_binned(Xb, mapper.n_bins_))
    np.testing.assert_array_equal(raw, ens.predict_raw(X))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("sampled", [False, True])
def test_raw_update_on_threads_equals_prediction_of_the_tree(rng, n_threads, sampled):
    # 20,000 rows: each thread updates its own block of rows (the parallel path);
    # with a row sample only the sampled rows move, each by its leaf's value once
    X, Xb, mapper, grad, hess = _setup(rng, n=20000)
    grower = _grower(Xb, mapper, n_threads=n_threads, lossguide=True, max_depth=0,
                     max_leaves=63)
    sample = np.flatnonzero(rng.rand(X.shape[0]) < 0.7).astype(np.uint32) if sampled else None
    raw = np.full((X.shape[0], 1), 0.25)
    tree = grower.grow(ref.gradient_pairs(grad, hess), 0.5, raw, 0, sample=sample)[0]
    ens = TreeEnsemble(X.shape[1], [0.25])
    ens.add_tree(tree, 0)
    expected = ens.predict_raw_binned(Xb, mapper.n_bins_)
    if sampled:
        out = np.ones(X.shape[0], dtype=bool)
        out[sample] = False
        expected[out] = 0.25
    np.testing.assert_array_equal(raw, expected)


@settings(max_examples=30, deadline=None)
@given(n_rows=st.integers(0, 20_000), n_features=st.integers(0, 40),
       n_threads=st.sampled_from([1, 2, 3]), seed=st.integers(0, 2 ** 31 - 1))
def test_columns_of_is_the_transposed_copy(n_rows, n_features, n_threads, seed):
    # blocks of 4096 rows on each thread, a partial last block
    Xb = np.random.RandomState(seed).randint(0, 256, size=(n_rows, n_features)).astype(np.uint8)
    cols = columns_of(Xb, n_threads)
    assert cols.flags.c_contiguous and cols.dtype == np.uint8
    np.testing.assert_array_equal(cols, np.ascontiguousarray(Xb.T))


@pytest.mark.parametrize("sample", [[3, 1, 2], [0, 1, 1], [0, 5, 3000]])
def test_row_sample_must_be_increasing_rows(rng, sample):
    X, Xb, mapper, grad, hess = _setup(rng)
    with pytest.raises(ValueError, match="row sample"):
        _grower(Xb, mapper).grow(ref.gradient_pairs(grad, hess), 0.5, np.zeros((X.shape[0], 1)), 0,
                                 sample=np.array(sample, dtype=np.uint32))[0]


def test_tree_structure_is_consistent(rng):
    X, Xb, mapper, grad, hess = _setup(rng)
    pairs = ref.gradient_pairs(grad, hess)
    tree = _grower(Xb, mapper).grow(pairs, 1.0, np.zeros((X.shape[0], 1)), 0)[0]
    inner = tree[tree["is_leaf"] == 0]
    # children hold their parent's rows and hessians
    np.testing.assert_array_equal(tree["count"][inner["left"]] + tree["count"][inner["right"]], inner["count"])
    np.testing.assert_allclose(tree["cover"][inner["left"]] + tree["cover"][inner["right"]], inner["cover"])
    assert tree["count"][0] == X.shape[0]
    assert (inner["gain"] > 0).all()
    # leaf values are the regularised Newton steps of their rows
    rows, starts, ends = _grower(Xb, mapper), None, None
    g = _grower(Xb, mapper)
    g.grow(ref.gradient_pairs(grad, hess), 1.0, np.zeros((X.shape[0], 1)), 0)
    rows, starts, ends = g.leaf_rows()
    for k in np.flatnonzero(tree["is_leaf"]):
        r = rows[starts[k]:ends[k]]
        np.testing.assert_allclose(tree["value"][k], ref.leaf_weight(grad[r].sum(), hess[r].sum()), rtol=1e-6)


@pytest.mark.parametrize("max_depth", [1, 2, 5])
def test_depthwise_respects_max_depth_and_fills_levels(rng, max_depth):
    X, Xb, mapper, grad, hess = _setup(rng, n=20000)
    # reg_lambda=0: with noise every split has a positive gain (lambda > 0 can
    # make splits of homogeneous nodes lose)
    tree = _grower(Xb, mapper, max_depth=max_depth, min_child_weight=0.0, reg_lambda=0.0).grow(
        ref.gradient_pairs(grad, hess), 1.0, np.zeros((X.shape[0], 1)), 0)[0]
    assert _depths(tree).max() == max_depth
    assert (tree["is_leaf"] == 1).sum() == 2 ** max_depth   # plenty of data: a full tree


@pytest.mark.parametrize("max_leaves", [2, 7, 31])
def test_lossguide_respects_max_leaves(rng, max_leaves):
    X, Xb, mapper, grad, hess = _setup(rng, n=20000)
    tree = _grower(Xb, mapper, max_depth=0, max_leaves=max_leaves, lossguide=True).grow(
        ref.gradient_pairs(grad, hess), 1.0, np.zeros((X.shape[0], 1)), 0)[0]
    assert (tree["is_leaf"] == 1).sum() == max_leaves


def test_lossguide_splits_the_best_leaf_first(rng):
    X, Xb, mapper, grad, hess = _setup(rng, n=20000)
    tree = _grower(Xb, mapper, max_depth=0, max_leaves=16, lossguide=True).grow(
        ref.gradient_pairs(grad, hess), 1.0, np.zeros((X.shape[0], 1)), 0)[0]
    # children get ids in the order their parents are split: the node split at
    # step s has left child 2s + 1. Every node open at that step and split later
    # has a gain no larger than the one split then.
    inner = np.flatnonzero(tree["is_leaf"] == 0)
    step = (tree["left"][inner] - 1) // 2
    for i, s in zip(inner, step):
        later = inner[(step > s) & (inner < 2 * s + 1)]
        assert np.all(tree["gain"][later] <= tree["gain"][i])
    # and the consequence: lossguide with max_leaves=2**d has at least the
    # training-loss reduction of depthwise with max_depth=d.
    raw_lg = np.zeros((X.shape[0], 1))
    pairs = ref.gradient_pairs(grad, hess)
    _grower(Xb, mapper, max_depth=0, max_leaves=16, lossguide=True).grow(pairs, 1.0, raw_lg, 0)
    raw_dw = np.zeros((X.shape[0], 1))
    _grower(Xb, mapper, max_depth=4).grow(pairs, 1.0, raw_dw, 0)
    y = -grad.astype(np.float64)
    assert ((y - raw_lg[:, 0]) ** 2).sum() <= ((y - raw_dw[:, 0]) ** 2).sum()


def test_lossguide_with_max_depth(rng):
    X, Xb, mapper, grad, hess = _setup(rng, n=20000)
    tree = _grower(Xb, mapper, max_depth=3, max_leaves=100, lossguide=True).grow(
        ref.gradient_pairs(grad, hess), 1.0, np.zeros((X.shape[0], 1)), 0)[0]
    assert _depths(tree).max() <= 3
    assert (tree["is_leaf"] == 1).sum() <= 8


@pytest.mark.parametrize("ahead", [True, False])
@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_each_node_holds_the_rows_that_reach_it_in_order(rng, ordered, n_threads, ahead):
    # A node's rows are kept in two halves of the row array, each partitioned in
    # place (with two threads, each half on its own thread; when the halves are
    # uneven, each on every thread). Rows sorted by the first split's feature
    # leave the root's children with rows in one half only. Without expanding
    # ahead, every split runs on all threads.
    X, Xb, mapper, grad, hess = _setup(rng, n=140_000, p=5)
    if ordered:
        order = np.argsort(Xb[:, 0], kind="stable")
        Xb, grad, hess = np.ascontiguousarray(Xb[order]), grad[order], hess[order]
    g = _grower(Xb, mapper, n_threads, max_depth=0, max_leaves=63, lossguide=True,
                expand_ahead=ahead)
    tree = g.grow(ref.gradient_pairs(grad, hess), 0.3, np.zeros((Xb.shape[0], 1)), 0)[0]
    assert tree["feature"][0] == 0
    rows, starts, ends = g.leaf_rows()
    expected = {0: np.arange(Xb.shape[0])}
    for k in range(tree.shape[0]):   # children come after their parent
        if tree["is_leaf"][k]:   # increasing rows
            np.testing.assert_array_equal(rows[starts[k]:ends[k]], expected[k])
        else:   # its children's ranges, the left one first
            assert (starts[tree["left"][k]], ends[tree["right"][k]]) == (starts[k], ends[k])
            assert ends[tree["left"][k]] == starts[tree["right"][k]]
            np.testing.assert_array_equal(np.sort(rows[starts[k]:ends[k]]), expected[k])
            f = tree["feature"][k]
            part, n_left = ref.partition(Xb, expected[k], f, tree["bin_threshold"][k],
                                         mapper.n_bins_[f], bool(tree["default_left"][k]))
            expected[tree["left"][k]] = part[:n_left]
            expected[tree["right"][k]] = part[n_left:]


def test_tree_is_identical_across_threads(rng):
    X, Xb, mapper, grad, hess = _setup(rng, n=100_000, p=8)
    trees = []
    for n_threads in (1, 2, 3):
        raw = np.zeros((X.shape[0], 1))
        grower = _grower(Xb, mapper, n_threads, max_depth=8)
        trees.append((grower.grow(ref.gradient_pairs(grad, hess), 0.3, raw, 0)[0], raw))
    for tree, raw in trees[1:]:
        assert tree.tobytes() == trees[0][0].tobytes()
        np.testing.assert_array_equal(raw, trees[0][1])


@pytest.mark.parametrize("lossguide", [False, True])
def test_wide_tree_is_identical_across_threads(rng, lossguide):
    # > 16384 histogram entries: on two threads both children are scanned as
    # the two tasks of one parallel region, on three over features
    X, Xb, mapper, grad, hess = _setup(rng, n=6000, p=70, max_bin=256)
    assert mapper.bin_offsets_[-1] >= 16384
    trees = []
    for n_threads in (1, 2, 3):
        raw = np.zeros((X.shape[0], 1))
        trees.append((_grower(Xb, mapper, n_threads, max_depth=0 if lossguide else 6,
                              max_leaves=40 if lossguide else 0, lossguide=lossguide)
                      .grow(ref.gradient_pairs(grad, hess), 0.3, raw, 0)[0], raw))
    for tree, raw in trees[1:]:
        assert tree.tobytes() == trees[0][0].tobytes()
        np.testing.assert_array_equal(raw, trees[0][1])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), max_depth=st.integers(1, 6), reg_lambda=st.floats(0, 5),
       reg_alpha=st.floats(0, 5), min_child_weight=st.floats(0, 20), gamma=st.floats(0, 5),
       max_delta_step=st.sampled_from([0.0, 0.3, 2.0]), lossguide=st.booleans())
def test_a_tree_never_increases_the_training_loss(seed, max_depth, reg_lambda, reg_alpha,
                                                 min_child_weight, gamma, max_delta_step, lossguide):
    # XGBoost's updater property test: the regularised Newton step never hurts
    # the second-order objective (exact for squared error with unit hessians).
    rng = np.random.RandomState(seed)
    X, Xb, mapper, grad, hess = _setup(rng, n=500, p=4, max_bin=32)
    raw = np.zeros((X.shape[0], 1))
    _grower(Xb, mapper, max_depth=max_depth, reg_lambda=reg_lambda, reg_alpha=reg_alpha,
            min_child_weight=min_child_weight, gamma=gamma, max_delta_step=max_delta_step,
            lossguide=lossguide, max_leaves=8 if lossguide else 0).grow(
                ref.gradient_pairs(grad, hess), 1.0, raw, 0)
    y = -grad.astype(np.float64)
    assert ((y - raw[:, 0]) ** 2).sum() <= (y ** 2).sum() + 1e-9


@pytest.mark.parametrize("quant_levels", [0, 16])
def test_every_grower_takes_the_pairs_of_its_outputs(rng, quant_levels):
    # The booster hands each grower the slice of the round's (K, n, 2) pairs of the
    # outputs it grows, read in place: the same tree and raw scores as pairs of
    # their own, and the output's column of raw alone changes. Any other shape is
    # refused, by every grower.
    X, Xb, mapper, grad, hess = _setup(rng)
    hess = rng.uniform(0.5, 2.0, size=hess.shape[0]).astype(np.float32)
    round_pairs = np.zeros((3, X.shape[0], 2), dtype=np.float32)
    round_pairs[1] = ref.gradient_pairs(grad, hess)[0]
    results = []
    for pairs, output in [(round_pairs[1:2], 1), (ref.gradient_pairs(grad, hess), 1)]:
        grower = _grower(Xb, mapper, 2, max_depth=0, max_leaves=31, lossguide=True,
                         quant_levels=quant_levels)
        raw = np.zeros((X.shape[0], 3))
        results.append((grower.grow(pairs, 0.3, raw, output, seed=5)[0], raw))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    assert (results[0][0]["is_leaf"] == 1).sum() == 31
    assert results[0][1][:, 1].any() and not results[0][1][:, [0, 2]].any()
    params = GrowerParams(max_depth=3)
    growers = [_grower(Xb, mapper, 2),
               SymmetricGrower(Xb, mapper.n_bins_, mapper.bin_offsets_,
                               mapper.bin_thresholds(), params, 1),
               ExactGrower(X, params, 1), GlobalApproxGrower(X, params, 1)]
    for grower in growers:
        for bad in (ref.gradient_pairs(grad[:-1], hess[:-1]), round_pairs[:2]):
            with pytest.raises(ValueError, match="one pair per row: shape \\(1, 3000, 2\\)"):
                grower.grow(bad, 0.3, np.zeros((X.shape[0], 1)), 0)
    vector = VectorLeafGrower(Xb, mapper.n_bins_, mapper.bin_offsets_, mapper.bin_thresholds(),
                              params, 1)
    with pytest.raises(ValueError, match="pairs of 3 output"):
        vector.grow(round_pairs[:2], 0.3, np.zeros((X.shape[0], 3)), 0)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_keep_first_matches_the_reference(data):
    # ``_drop_hopeless`` keeps the open nodes that come first by (-gain, node) and
    # closes the rest; many gains tie (depthwise: all of them), so the node id
    # decides. One node kept too many or too few changes the sets.
    from gbtree.growing._serial_grower import py_keep_first
    n = data.draw(st.integers(0, 40))
    nodes = np.array(data.draw(st.lists(st.integers(0, 10_000), min_size=n, max_size=n,
                                        unique=True)), dtype=np.intc)
    keys = np.array(data.draw(st.lists(st.sampled_from([-3.0, -1.5, -0.25, 0.0]),
                                       min_size=n, max_size=n)), dtype=np.float64)
    n_keep = data.draw(st.integers(0, n + 2))
    kept, dropped = py_keep_first(keys, nodes, n_keep)
    want_kept, want_dropped = ref.keep_first(keys, nodes, n_keep)
    np.testing.assert_array_equal(kept, want_kept)
    np.testing.assert_array_equal(dropped, want_dropped)


@pytest.mark.parametrize("lossguide", [True, False])
def test_nodes_the_leaf_budget_cannot_reach_are_closed_without_changing_the_tree(rng, lossguide):
    # Once an open node has as many nodes ahead of it (in the pick order) as there
    # are splits left, it can never be split: its histogram is freed at once. The
    # tree must be the one grown without this, with fewer histogram buffers.
    # (one split at a time: nodes expanded ahead hold buffers of their own, see
    # test_expand_ahead.py)
    X, Xb, mapper, grad, hess = _setup(rng, n=20_000, p=6)
    grown = {}
    for drop in (False, True):
        g = _grower(Xb, mapper, n_threads=2, lossguide=lossguide, max_depth=0 if lossguide else 8,
                    max_leaves=63, min_child_weight=0.0, drop_hopeless=drop, expand_ahead=False)
        raw = np.zeros((X.shape[0], 1))
        tree = g.grow(ref.gradient_pairs(grad, hess), 0.5, raw, 0)[0]
        grown[drop] = (tree, raw, g.n_histogram_buffers)
    np.testing.assert_array_equal(grown[True][0], grown[False][0])
    np.testing.assert_array_equal(grown[True][1], grown[False][1])
    assert (grown[True][0]["is_leaf"] == 1).sum() == 63
    assert grown[True][2] < grown[False][2]
    assert grown[True][2] <= 63 // 2 + 3


@pytest.mark.parametrize("quant_levels", [0, 16])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("where", ["grad", "hess"])
def test_a_gradient_or_hessian_that_is_not_finite_is_an_error(rng, quant_levels, bad, where):
    # One inf or NaN made every gain NaN: a tree without splits, silently (float
    # gradients), or rows quantised from NaN (quantised). The grower refuses the
    # tree, leaves the raw scores alone and grows the next one as a new grower would.
    X, Xb, mapper, grad, hess = _setup(rng, n=70_000)

    def grower():
        return _grower(Xb, mapper, 2, quant_levels=quant_levels)

    g = grower()
    broken = {"grad": grad.copy(), "hess": hess.copy()}
    broken[where][12_345] = bad
    raw = np.zeros((X.shape[0], 1))
    with pytest.raises(ValueError, match="grad and hess must be finite"):
        g.grow(ref.gradient_pairs(broken["grad"], broken["hess"]), 0.3, raw, 0)
    assert not raw.any()
    tree = g.grow(ref.gradient_pairs(grad, hess), 0.3, raw, 0)[0]
    fresh_raw = np.zeros((X.shape[0], 1))
    np.testing.assert_array_equal(
        tree, grower().grow(ref.gradient_pairs(grad, hess), 0.3, fresh_raw, 0)[0])
    np.testing.assert_array_equal(raw, fresh_raw)
    assert (tree["is_leaf"] == 0).sum() > 10



def test_node_records_of_a_tree_of_one_split():
    # the one writer of the Python growers' node records: a root split into two leaves
    from gbtree.growing._nodes import node_records
    out = node_records([0.5, -0.1, 0.2], [10.0, 4.0, 6.0], [20, 8, 12], [0, 1, 1],
                       split=[0], feature=[3], threshold=[1.5], default_left=[True],
                       gain=[2.25], left=[1], right=[2], bin_threshold=[7])
    assert out["is_leaf"].tolist() == [0, 1, 1]
    assert out[0][["feature", "left", "right", "bin_threshold", "default_left"]].item() == \
        (3, 1, 2, 7, 1)
    assert (out["threshold"][0], out["gain"][0]) == (1.5, 2.25)
    assert out["feature"][1:].tolist() == out["left"][1:].tolist() == [-1, -1]
    assert out["value"].tolist() == [0.5, -0.1, 0.2] and out["count"].tolist() == [20, 8, 12]
    assert out["cover"].tolist() == [10.0, 4.0, 6.0] and out["depth"].tolist() == [0, 1, 1]
    assert node_records([0.3], [1.0], [5], [0])["is_leaf"].tolist() == [1]


def test_the_expansion_order_of_the_growers_in_python():
    # depthwise: oldest first, a batch the oldest `room`; lossguide: the largest
    # gain, the oldest on a tie
    from gbtree.growing._expansion import OpenNodes
    gains = {3: 0.5, 4: 2.0, 5: 2.0, 6: 1.0}
    depthwise, lossguide = OpenNodes(False), OpenNodes(True)
    for node, gain in gains.items():
        depthwise.push(node, gain)
        lossguide.push(node, gain)
    assert [lossguide.pop() for _ in range(4)] == [4, 5, 6, 3] and not lossguide
    assert depthwise.pop_batch(3) == [3, 4, 5] and depthwise.pop() == 6 and not depthwise
    lossguide.push(7, 1.0)
    lossguide.push(8, 3.0)
    assert lossguide.pop_batch(10) == [8] and len(lossguide) == 1
