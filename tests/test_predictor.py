import numpy as np
import pytest

from gbtree import GBTClassifier, GBTRegressor
import _reference as ref
from gbtree.data.binning import BinMapper
from gbtree.predicting.tree import TreeEnsemble


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_predict_matches_reference(rng, dtype, order):
    X = rng.normal(size=(600, 5))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    y = rng.randint(0, 3, size=600)
    model = GBTClassifier(n_estimators=5, max_depth=4).fit(X, y)
    ens = model._ensemble
    Xp = np.asarray(X, dtype=dtype, order=order)
    got = ens.predict_raw(Xp, n_threads=2)
    expected = ref.predict_raw(Xp, ens.nodes, ens.tree_ptr, ens.tree_class, ens.base_score)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_binned_and_raw_prediction_agree_on_training_data(rng):
    X = rng.normal(size=(3000, 6))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2
    model = GBTRegressor(n_estimators=10).fit(X, y)
    mapper = BinMapper(model.max_bin, random_state=np.random.RandomState(model.random_state)).fit(X)
    Xb = mapper.transform(X)
    raw = model._ensemble.predict_raw(X)
    np.testing.assert_array_equal(model._ensemble.predict_raw_binned(Xb, mapper.n_bins_), raw)


def test_apply_returns_leaves(rng):
    X = rng.normal(size=(500, 3))
    y = X[:, 0]
    model = GBTRegressor(n_estimators=4, max_depth=3).fit(X, y)
    leaves = model._ensemble.apply(X)
    for t in range(4):
        tree = model._ensemble.tree(t)
        assert tree["is_leaf"][leaves[:, t]].all()
        np.testing.assert_allclose(
            model._ensemble.base_score[0] + sum(model._ensemble.tree(u)["value"][leaves[:, u]] for u in range(4)),
            model.predict(X))


def test_traversal_copy_follows_the_trees(rng):
    # predict_raw walks a cached compact copy of the trees: it must be rebuilt
    # when trees are added or dropped, and is not pickled
    import pickle
    X = rng.normal(size=(400, 4))
    X[rng.rand(*X.shape) < 0.1] = np.nan
    model = GBTRegressor(n_estimators=6, max_depth=5).fit(X, np.nan_to_num(X[:, 0]) * 3 + rng.normal(size=400))
    full = model._ensemble.predict_raw(X)
    ens = TreeEnsemble.from_arrays(4, model._ensemble.base_score, *model._ensemble.tree_slice(0, 3))
    expected = ref.predict_raw(X, ens.nodes, ens.tree_ptr, ens.tree_class, ens.base_score)
    np.testing.assert_allclose(ens.predict_raw(X), expected, rtol=1e-12)
    ens.add_tree(ens.tree(0).copy(), 0)
    expected = ref.predict_raw(X, ens.nodes, ens.tree_ptr, ens.tree_class, ens.base_score)
    np.testing.assert_allclose(ens.predict_raw(X), expected, rtol=1e-12)
    clone = pickle.loads(pickle.dumps(ens))
    assert "_forest" not in ens.__getstate__()
    np.testing.assert_array_equal(clone.predict_raw(X), ens.predict_raw(X))
    assert not np.array_equal(full, ens.predict_raw(X))


# ---------------------------------------------------------------------------
# The vector walks against the portable walk and the reference

from hypothesis import given, settings, strategies as st  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from gbtree.predicting._predictor import (compact_nodes, predict_raw,  # noqa: E402
                                          simd_level, split_columns)
from gbtree.predicting._sparse_predictor import predict_raw_csr  # noqa: E402
from gbtree.kernels._typedefs import NODE_DTYPE  # noqa: E402
from gbtree.kernels._partition import split_rows_level  # noqa: E402

# the vector walks this CPU has (1: AVX2, 2: AVX-512), each compared with the portable one
LEVELS = list(range(1, simd_level() + 1))
needs_simd = pytest.mark.skipif(
    not LEVELS, reason="this CPU has neither AVX2 nor AVX-512: predict_raw uses the scalar "
                       "walk only, so there is no second walk to compare")


def random_tree(rs, n_features, n_inner, features=None):
    """A random tree of ``n_inner`` splits (NODE_DTYPE, root first). Thresholds are
    float64 values that float32 cannot hold, 0.0, or +-inf; default directions random."""
    nodes = np.zeros(2 * n_inner + 1, dtype=NODE_DTYPE)
    nodes["is_leaf"] = 1
    nodes["feature"] = -1
    nodes["left"] = nodes["right"] = -1
    leaves, n_nodes = [0], 1
    for _ in range(n_inner):
        k = leaves.pop(rs.randint(len(leaves)))
        kind = rs.randint(8)
        thr = {0: 0.0, 1: np.inf, 2: -np.inf}.get(kind, rs.normal() + 1e-9 * rs.rand())
        nodes[k]["is_leaf"] = 0
        nodes[k]["feature"] = rs.randint(n_features) if features is None else rs.choice(features)
        nodes[k]["threshold"] = thr
        nodes[k]["default_left"] = rs.randint(2)
        nodes[k]["left"], nodes[k]["right"] = n_nodes, n_nodes + 1
        leaves += [n_nodes, n_nodes + 1]
        n_nodes += 2
    nodes["value"] = rs.normal(size=nodes.shape[0])
    return nodes


def probe_rows(rs, trees, n_rows, n_features, dtype):
    """Rows whose values sit on, and one float32 or float64 step either side of, the
    trees' thresholds, mixed with NaN, +-inf and random values."""
    thr = np.concatenate([t["threshold"][t["is_leaf"] == 0] for t in trees])
    t32 = thr.astype(np.float32).astype(np.float64)
    cand = np.concatenate([thr, np.nextafter(thr, np.inf), np.nextafter(thr, -np.inf), t32,
                           np.nextafter(t32.astype(np.float32), np.float32(np.inf)),
                           np.nextafter(t32.astype(np.float32), np.float32(-np.inf)),
                           [np.nan, np.inf, -np.inf, 0.0, -0.0]])
    X = rs.normal(size=(n_rows, n_features))
    pick = rs.rand(n_rows, n_features) < 0.7
    X[pick] = rs.choice(cand, size=pick.sum())
    with np.errstate(over="ignore"):   # the largest float64 values become +-inf in float32
        return X.astype(dtype)


def ensemble(trees, n_outputs=1):
    nodes = np.concatenate(trees)
    ptr = np.concatenate([[0], np.cumsum([t.shape[0] for t in trees])]).astype(np.int64)
    cls = (np.arange(len(trees)) % n_outputs).astype(np.int32)
    return nodes, ptr, cls


def walk(X, nodes, ptr, cls, n_outputs, simd, n_threads=2):
    """predict_raw with the vector walks capped at ``simd`` (0: the portable walk for C-ordered rows)."""
    out = np.zeros((X.shape[0], n_outputs))
    predict_raw(X, compact_nodes(nodes, ptr), ptr, cls, out, n_threads, simd)
    return out


@needs_simd
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 200),
       n_features=st.integers(1, 12), n_trees=st.integers(1, 6),
       n_outputs=st.sampled_from([1, 3]), dtype=st.sampled_from([np.float32, np.float64]))
def test_simd_walk_equals_scalar_walk_and_reference(seed, n_rows, n_features, n_trees,
                                                    n_outputs, dtype):
    # Row counts around the 8-lane vectors, 32-row groups, 64-row blocks and the
    # 16-row minimum of the vector walk (fewer rows go one at a time); values on
    # and beside thresholds that float32 rounds (the float32 walk compares with the
    # threshold rounded down, which must give the same side for every float32 value).
    rs = np.random.RandomState(seed)
    trees = [random_tree(rs, n_features, rs.randint(0, 40)) for _ in range(n_trees)]
    nodes, ptr, cls = ensemble(trees, n_outputs)
    X = probe_rows(rs, trees, n_rows, n_features, dtype)
    scalar = walk(X, nodes, ptr, cls, n_outputs, simd=0)
    np.testing.assert_array_equal(scalar, ref.predict_raw(X, nodes, ptr, cls, np.zeros(n_outputs)))
    for level in LEVELS:
        np.testing.assert_array_equal(walk(X, nodes, ptr, cls, n_outputs, simd=level), scalar)


@needs_simd
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_simd_walk_on_strided_rows_and_csr(dtype):
    rs = np.random.RandomState(3)
    trees = [random_tree(rs, 9, 30) for _ in range(5)]
    nodes, ptr, cls = ensemble(trees)
    X = probe_rows(rs, trees, 300, 9, dtype)
    expected = walk(X, nodes, ptr, cls, 1, simd=0)
    wide = np.zeros((600, 9), dtype=dtype)
    wide[::2] = X
    Xs = sp.csr_matrix(np.where(np.isnan(X), 0, X))
    Xs.eliminate_zeros()
    csr_expected = walk(Xs.toarray(), nodes, ptr, cls, 1, simd=0)
    compact = compact_nodes(nodes, ptr)
    for level in LEVELS:
        # rows read backwards (negative row stride) and every other row of a wider array
        np.testing.assert_array_equal(walk(X[::-1], nodes, ptr, cls, 1, simd=level),
                                      expected[::-1])
        np.testing.assert_array_equal(walk(wide[::2], nodes, ptr, cls, 1, simd=level), expected)
        # the CSR kernel walks its dense scratch block the same way
        got = np.zeros((300, 1))
        predict_raw_csr(Xs.data, Xs.indices, Xs.indptr.astype(np.int64), 9, 0.0, compact,
                        ptr, cls, got, 2, level)
        np.testing.assert_array_equal(got, csr_expected)


@needs_simd
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_walks_beyond_the_packed_fields(dtype):
    # The float32 vector walks pack a child index into 16 bits and a feature into 15:
    # a tree of more than 65,536 nodes, or a feature of index >= 32,768, takes the
    # walk that follows any strides (the packed fields would wrap and send rows to wrong leaves). The
    # float64 walk reads the 16-byte records, which have no such limits.
    rs = np.random.RandomState(7)
    big = random_tree(rs, 4, 40_000)
    assert big.shape[0] > 65_536
    small = random_tree(rs, 4, 20)
    nodes, ptr, cls = ensemble([small, big, small])
    X = probe_rows(rs, [small, big], 200, 4, dtype)
    for level in LEVELS:
        np.testing.assert_array_equal(walk(X, nodes, ptr, cls, 1, simd=level),
                                      ref.predict_raw(X, nodes, ptr, cls, [0.0]))
    wide_tree = random_tree(rs, 40_000, 30, features=[1, 32_767, 32_768, 39_999])
    nodes, ptr, cls = ensemble([wide_tree])
    X = probe_rows(rs, [wide_tree], 40, 40_000, dtype)
    for level in LEVELS:
        np.testing.assert_array_equal(walk(X, nodes, ptr, cls, 1, simd=level),
                                      ref.predict_raw(X, nodes, ptr, cls, [0.0]))


# ---------------------------------------------------------------------------
# The partition walk (blocks of many rows) against the reference and the lane walks

def partition_walk(X, nodes, ptr, cls, n_outputs, block_rows, n_threads=2, split_simd=-1):
    """predict_raw through the partition walk in blocks of ``block_rows`` rows, its nodes'
    rows handed on with vector code up to ``split_simd`` (-1: the CPU's best)."""
    out = np.zeros((X.shape[0], n_outputs))
    predict_raw(X, compact_nodes(nodes, ptr), ptr, cls, out, n_threads, 0, None, block_rows,
                split_simd)
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 150),
       n_features=st.integers(1, 10), n_trees=st.integers(1, 5),
       n_outputs=st.sampled_from([1, 3]), dtype=st.sampled_from([np.float32, np.float64]),
       layout=st.sampled_from(["C", "F", "reversed", "every other row"]),
       block_rows=st.sampled_from([1, 2, 7, 64, 1000]), n_threads=st.sampled_from([1, 2]))
def test_partition_walk_equals_reference_and_lane_walk(seed, n_rows, n_features, n_trees,
                                                       n_outputs, dtype, layout, block_rows,
                                                       n_threads):
    # Every layout the walk reads through its strides, blocks of one row to more than
    # all of them (some blocks short), leaves-only trees among split ones, values on
    # and beside the thresholds (float32 ones compared with the threshold rounded
    # down to float32 by every node loop), NaN and +-inf; nodes of fewer and more rows
    # than its 16 lanes; the portable node loop and every vector one of this CPU.
    rs = np.random.RandomState(seed)
    trees = [random_tree(rs, n_features, rs.randint(0, 40)) for _ in range(n_trees)]
    nodes, ptr, cls = ensemble(trees, n_outputs)
    X = probe_rows(rs, trees, n_rows, n_features, dtype)
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "reversed":
        X = X[::-1]
    elif layout == "every other row":
        wide = np.zeros((2 * n_rows, n_features), dtype=dtype)
        wide[::2] = X
        X = wide[::2]
    got = partition_walk(X, nodes, ptr, cls, n_outputs, block_rows, n_threads, 0)
    np.testing.assert_array_equal(got, ref.predict_raw(X, nodes, ptr, cls, np.zeros(n_outputs)))
    for level in LEVELS:
        np.testing.assert_array_equal(
            partition_walk(X, nodes, ptr, cls, n_outputs, block_rows, n_threads, level), got)
    lanes = np.zeros((n_rows, n_outputs))
    predict_raw(X, compact_nodes(nodes, ptr), ptr, cls, lanes, n_threads, 0, None, -1)
    np.testing.assert_array_equal(got, lanes)


def test_partition_walk_on_a_range_of_trees_and_unused_features():
    # The trees of a range address the compact copy from their own offsets; the
    # block holds only the features the trees split on (here 3 of 3000).
    rs = np.random.RandomState(5)
    trees = [random_tree(rs, 3000, 25, features=[4, 1500, 2999]) for _ in range(6)]
    nodes, ptr, cls = ensemble(trees, 2)
    X = probe_rows(rs, trees, 90, 3000, np.float64)
    compact = compact_nodes(nodes, ptr)
    used, slot = split_columns(compact, ptr[2:5], 3000)     # trees 2 and 3
    assert set(used) <= {4, 1500, 2999} and np.all(np.diff(used) > 0)
    assert np.array_equal(np.flatnonzero(slot >= 0), used)
    assert np.array_equal(slot[used], np.arange(len(used)))
    got = np.zeros((90, 2))
    predict_raw(X, compact, ptr[2:5], cls[2:4], got, 2, 0, (used, slot), 16)
    expected = ref.predict_raw(X, nodes, ptr[2:5], cls[2:4], [0.0, 0.0])
    np.testing.assert_array_equal(got, expected)


def test_forest_predicts_many_rows_as_the_lane_walk_does(rng):
    # Thousands of rows take the partition walk: the same predictions as the rows
    # walked down the trees side by side, for both dtypes and thread counts.
    X = rng.normal(size=(6000, 8))
    X[rng.rand(*X.shape) < 0.05] = np.nan
    y = rng.randint(0, 3, size=6000)
    ens = GBTClassifier(n_estimators=4, max_leaves=40, max_depth=0,
                        grow_policy="lossguide").fit(X, y)._ensemble
    forest = ens._traversal()
    for dtype in (np.float32, np.float64):
        Xd = X.astype(dtype)
        lanes = np.tile(ens.base_score, (6000, 1))
        predict_raw(Xd, forest.compact, forest.tree_ptr, forest.tree_class, lanes, 2, -1,
                    None, -1)
        for n_threads in (1, 2):
            np.testing.assert_array_equal(ens.predict_raw(Xd, n_threads=n_threads), lanes)


def test_the_l2_cache_size_is_the_one_linux_reports():
    # (the partition walk's blocks take 7/8 of it; 0 where it is not known)
    import glob
    import os
    from gbtree.predicting._predictor import l2_cache_bytes
    want = 0
    for folder in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index[0-9]")):
        with open(os.path.join(folder, "level")) as f:
            if f.read().strip() == "2":
                with open(os.path.join(folder, "size")) as g:
                    size = g.read().strip()
                want = int(size[:-1]) * {"K": 1024, "M": 1024 ** 2}[size[-1]]
                break
    assert l2_cache_bytes() == want


_SIMD_CHILD = """
import numpy as np, sys
from gbtree import GBTRegressor
from gbtree.kernels._partition import split_rows_level
from gbtree.predicting._predictor import simd_level
rng = np.random.RandomState(0)
X = rng.normal(size=(3000, 6)).astype(sys.argv[1])
X[rng.rand(*X.shape) < 0.1] = np.nan
y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2
model = GBTRegressor(n_estimators=30, max_leaves=63, grow_policy="lossguide").fit(X, y)
np.save(sys.argv[2], np.c_[model.predict(X), model.apply(X)])
print(split_rows_level(), simd_level())
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gbtree_simd_chooses_the_walk_and_every_walk_predicts_the_same(tmp_path, dtype):
    # GBTREE_SIMD caps the vector walk and training's AVX-512 partition at a level
    # (never above the CPU's): every level the CPU has, run in a fresh process, grows
    # the same trees (every row in the same leaves) and predicts bit for bit the same
    import os
    import subprocess
    import sys
    preds = {}
    for name in ("none", "avx2", "avx512"):
        env = dict(os.environ, GBTREE_SIMD=name)
        path = tmp_path / f"{name}.npy"
        done = subprocess.run([sys.executable, "-c", _SIMD_CHILD, dtype, str(path)], env=env,
                              cwd=tmp_path, capture_output=True, text=True, check=True)
        split, level = map(int, done.stdout.split()[-2:])
        assert level == min(("none", "avx2", "avx512").index(name), simd_level())
        assert split == (split_rows_level() if name == "avx512" else 0)
        preds[name] = np.load(path)
    for name in ("avx2", "avx512"):
        np.testing.assert_array_equal(preds[name], preds["none"], err_msg=name)
    env = dict(os.environ, GBTREE_SIMD="sse9")
    bad = subprocess.run([sys.executable, "-c", "import gbtree"], env=env, capture_output=True,
                         text=True, cwd=tmp_path)
    assert bad.returncode != 0
    assert "GBTREE_SIMD must be one of none, avx2, avx512, got 'sse9'" in bad.stderr


def test_faster_walk_takes_the_walk_that_finishes_sooner():
    from gbtree.predicting._predictor import WALKS, faster_walk
    walks = tuple(WALKS)
    assert set(walks) == {"partition", "partition-avx512", "row-avx512"}
    for seconds, expected in (((3.0, 5.0, 4.0), walks[0]), ((5.0, 3.0, 4.0), walks[1]),
                              ((5.0, 4.0, 3.0), walks[2]), ((4.0, 4.0, 4.0), walks[0]),
                              ((5.0, 4.0, 4.0), walks[1])):
        now, ran = [0.0], []

        def run(walk):
            ran.append(walk)
            now[0] += dict(zip(walks, seconds))[walk]

        assert faster_walk(run, lambda: now[0]) == expected
        assert ran == list(walks + walks)   # each twice, in turn
    assert faster_walk(run, lambda: now[0], ("row-avx512", "partition")) == "row-avx512"


def test_the_timed_walk_predicts_as_every_other(rng):
    # on a CPU with AVX-512 (and GBTREE_SIMD unset) a large call times the partition
    # walk with either loop and the AVX-512 row walk once per dtype and keeps the
    # fastest; elsewhere (and before) many rows take the partition walk's portable
    # loop and nothing is timed
    import os
    from gbtree.predicting._predictor import TIMED_CALL, WALKS
    X = rng.normal(size=(TIMED_CALL, 5))
    model = GBTRegressor(n_estimators=8, max_leaves=31, grow_policy="lossguide").fit(
        X[:3000], X[:3000, 0] - X[:3000, 1] ** 2)
    forest = model._ensemble._traversal()
    for dtype in ("float64", "float32"):
        Xd = np.ascontiguousarray(X, dtype=dtype)
        got = model._ensemble.predict_raw(Xd, n_threads=2)
        for cap in (0, 1, 2):
            for block_rows, split_simd in WALKS.values():
                want = np.tile(model._ensemble.base_score, (Xd.shape[0], 1))
                predict_raw(Xd, forest.compact, forest.tree_ptr, forest.tree_class, want, 2,
                            cap, forest.columns, block_rows, split_simd)
                np.testing.assert_array_equal(got, want)
    if simd_level() == 2 and not os.environ.get("GBTREE_SIMD", "").strip():
        assert set(forest.timed_walks) == {"float64", "float32"}
        assert set(forest.timed_walks.values()) <= set(WALKS)
    else:
        assert forest.timed_walks == {}


# ---------------------------------------------------------------------------
# Forest: the compiled trees predict_raw walks; fewer than 16 C-ordered rows go
# through the trees side by side in the calling thread

from gbtree.predicting._predictor import Forest  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 40),
       n_features=st.integers(1, 12), n_trees=st.integers(0, 20),
       n_outputs=st.sampled_from([1, 3]), dtype=st.sampled_from([np.float32, np.float64]))
def test_forest_few_rows_equal_the_block_walk_and_reference(seed, n_rows, n_features, n_trees,
                                                            n_outputs, dtype):
    # the row walk (below 16 rows: trees in groups of 8, a group's leaves added in
    # tree order) against the block walk of the same rows and the reference, for
    # any range of trees
    rs = np.random.RandomState(seed)
    trees = [random_tree(rs, n_features, rs.randint(0, 40)) for _ in range(n_trees)]
    nodes, ptr, cls = (ensemble(trees, n_outputs) if trees else
                       (np.empty(0, NODE_DTYPE), np.zeros(1, np.int64), np.empty(0, np.int32)))
    X = probe_rows(rs, trees, n_rows, n_features, dtype) if trees else \
        rs.normal(size=(n_rows, n_features)).astype(dtype)
    forest = Forest(nodes, ptr, cls, n_features, n_outputs)
    base = rs.normal(size=n_outputs)
    start = rs.randint(0, n_trees + 1)
    stop = rs.randint(start, n_trees + 1)
    got = forest.predict_raw(X, base, start, stop, 1)
    expected = ref.predict_raw(X, nodes[ptr[start]:ptr[stop]], ptr[start:stop + 1] - ptr[start],
                               cls[start:stop], base)
    np.testing.assert_array_equal(got, expected)
    for lo in range(0, n_rows, 7):   # the same rows through the block walk, among others
        block = np.concatenate([X[lo:lo + 7]] * 4)
        out = np.tile(base, (block.shape[0], 1))
        predict_raw(block, forest.compact, ptr[start:stop + 1], cls[start:stop], out, 1)
        np.testing.assert_array_equal(out[:min(7, n_rows - lo)], got[lo:lo + 7])


def test_forest_refuses_what_it_cannot_walk(rng):
    trees = [random_tree(rng, 3, 5) for _ in range(4)]
    nodes, ptr, cls = ensemble(trees, 2)
    with pytest.raises(ValueError, match="is not an output of 2"):
        Forest(nodes, ptr, cls + 1, 3, 2)
    with pytest.raises(ValueError, match="one entry per tree"):
        Forest(nodes, ptr, cls[:3], 3, 2)
    forest = Forest(nodes, ptr, cls, 3, 2)
    X = rng.normal(size=(2, 3))
    with pytest.raises(ValueError, match="X has 4 features, but the model has 3"):
        forest.predict_raw(rng.normal(size=(2, 4)), np.zeros(2), 0, 4, 1)
    with pytest.raises(ValueError, match="trees 0..5 are not within 0..4"):
        forest.predict_raw(X, np.zeros(2), 0, 5, 1)
    with pytest.raises(ValueError, match="base_score must be a float64 array of 2 values"):
        forest.predict_raw(X, np.zeros(3), 0, 4, 1)
    for out in (np.zeros((2, 3)), np.zeros((3, 2)), np.zeros((2, 2), np.float32),
                np.zeros((2, 2), order="F")[:, :1], np.zeros((2, 2)).T):
        with pytest.raises(ValueError, match="out must be a writeable C-ordered float64 array"):
            forest.add_raw(X, out, 0, 4, 1)
    frozen = np.zeros((2, 2))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="out must be a writeable"):
        forest.add_raw(X, frozen, 0, 4, 1)


from gbtree.predicting._predictor import binary_labels  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(raw=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=40),
       kind=st.sampled_from(["int", "str", "object", "bool"]))
def test_binary_labels_are_numpys_take_of_the_positive_scores(raw, kind):
    scores = np.array(raw, dtype=np.float64).reshape(-1, 1)
    classes = {"int": np.array([-3, 7]), "str": np.array(["no", "yes"]),
               "object": np.array([None, "yes"], dtype=object),
               "bool": np.array([False, True])}[kind]
    out = binary_labels(scores, classes)
    expected = classes.take(scores[:, 0] > 0)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


def test_binary_labels_refuse_other_raw_scores():
    classes = np.array([0, 1])
    for bad in (np.zeros((3, 2)), np.zeros((3, 1), dtype=np.float32), np.zeros(3),
                np.zeros((4, 1))[::2], [[0.5]]):
        with pytest.raises(ValueError, match="C-ordered float64 array of one column"):
            binary_labels(bad, classes)


def test_predict_with_every_tree_or_the_best_rounds(rng):
    # the default range (every tree when no early stopping cut it) and explicit ranges
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 0).astype(int)
    full = GBTClassifier(n_estimators=30, max_depth=3).fit(X, y)
    np.testing.assert_array_equal(full.predict(X), full.predict(X, iteration_range=(0, 30)))
    stopped = GBTClassifier(n_estimators=400, max_depth=3, learning_rate=0.5,
                            early_stopping_rounds=3).fit(X[:400], y[:400],
                                                         eval_set=[(X[400:], y[400:])])
    best = stopped.best_iteration_ + 1
    assert best < stopped.n_estimators_
    np.testing.assert_array_equal(stopped.decision_function(X),
                                  stopped.decision_function(X, iteration_range=(0, best)))
    assert not np.array_equal(stopped.decision_function(X), stopped.decision_function(
        X, iteration_range=(0, stopped.n_estimators_)))
