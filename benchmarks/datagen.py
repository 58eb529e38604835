"""Synthetic benchmark data sets, generated deterministically from a seed.

Rows are generated in fixed-size blocks, each from its own seed derived from
``(seed, split, block)``; so the data do not depend on how many rows are asked
for beyond truncation (the first 100,000 training rows of a 1M-row data set are
the 100,000-row data set), and the test rows never depend on the training size.

``higgs-like``
    Binary classification, 28 float32 features laid out like the UCI HIGGS
    data set: 21 "low-level" kinematic features (a lepton, the missing
    transverse energy and four jets: transverse momentum, pseudo-rapidity,
    azimuthal angle, b-tag) and 7 "high-level" invariant masses computed from
    them. The label is drawn from a known nonlinear logit (a resonance bump in
    two masses, b-tag count, centrality, a momentum interaction), so the
    Bayes-optimal test AUC is about 0.87 (see ``true_scores``) and a model does
    not saturate; the six azimuthal angles only matter through the masses.
``multiclass``
    10 classes on the ``higgs-like`` features (the same 28 columns): each
    class has a centre in the space of six standardised masses and
    pseudo-rapidities and the b-tag count; a row's class is drawn from the
    softmax of minus its squared distances to the centres, plus a resonance
    term, so the classes overlap and no model reaches zero loss.
``multi-target``
    Regression of 4 targets on the ``higgs-like`` features: every target is
    one shared function of the masses (the resonance bumps and the b-tag
    count of ``higgs-like``'s logit) scaled and shifted by a term of its own
    (a pseudo-rapidity, a momentum, an angle, nothing), plus Gaussian noise
    of standard deviation 0.5: targets that share most of their structure.
``regression-wide``
    Regression, 90 float32 features (the width of YearPredictionMSD): 12
    latent factors mixed into 90 correlated noisy features, some of them
    heavy-tailed; the target is a nonlinear function of a few features and
    factors plus Gaussian noise of standard deviation 1.5 (the RMSE floor).
"""
import numpy as np

BLOCK_ROWS = 100_000
_SPLIT_CODES = {"train": 0, "test": 1}

HIGGS_FEATURES = (
    ["lepton_pt", "lepton_eta", "lepton_phi", "met", "met_phi"]
    + [f"jet{k}_{v}" for k in range(1, 5) for v in ("pt", "eta", "phi", "btag")]
    + ["m_jj", "m_jjj", "m_lv", "m_jlv", "m_bb", "m_wbb", "m_wwbb"]
)


def _pair_mass(pt1, eta1, phi1, pt2, eta2, phi2):
    """Invariant mass of two massless objects from (pT, eta, phi)."""
    m2 = 2.0 * pt1 * pt2 * (np.cosh(eta1 - eta2) - np.cos(phi1 - phi2))
    return np.sqrt(np.maximum(m2, 0.0))


def _higgs_block(rng, n):
    """One block of HIGGS-like rows: (X float32 (n, 28), y int8 (n,), true logit (n,))."""
    def pt(scale):
        return scale * rng.lognormal(0.0, 0.45, n)

    def eta():
        return np.clip(rng.normal(0.0, 1.1, n), -2.5, 2.5)

    def phi():
        return rng.uniform(-np.pi, np.pi, n)

    lep = (pt(0.9), eta(), phi())
    met = (pt(0.8), np.zeros(n), phi())
    jets = []
    for scale in (1.0, 0.85, 0.7, 0.6):
        btag = rng.choice([0.0, 1.0868, 2.1737], size=n, p=[0.55, 0.2, 0.25])
        jets.append((pt(scale), eta(), phi(), btag))

    m_jj = _pair_mass(*jets[0][:3], *jets[1][:3])
    m_bb = _pair_mass(*jets[2][:3], *jets[3][:3])
    m_lv = _pair_mass(*lep, *met)
    m_jlv = _pair_mass(*jets[0][:3], *lep) + 0.5 * m_lv
    m_jjj = m_jj + 0.5 * _pair_mass(*jets[1][:3], *jets[2][:3])
    m_wbb = m_bb + 0.6 * m_jj
    m_wwbb = m_wbb + 0.6 * m_lv + 0.3 * lep[0]

    n_btag = sum((j[3] > 1.5).astype(np.float64) for j in jets)
    logit = (
        4.0 * np.exp(-0.5 * ((m_bb - 1.3) / 0.35) ** 2)
        + 3.0 * np.exp(-0.5 * ((m_jj - 1.6) / 0.45) ** 2)
        + 0.9 * n_btag
        - 0.7 * (np.abs(lep[1]) + np.abs(jets[0][1]))
        + 1.6 * np.tanh(1.5 * (m_wwbb - 4.0))
        + 1.2 * (lep[0] * met[0] > 0.9) * np.sign(np.cos(lep[2] - met[2]))
        - 2.7
    )
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int8)

    columns = [lep[0], lep[1], lep[2], met[0], met[2]]
    for j in jets:
        columns.extend(j)
    columns.extend([m_jj, m_jjj, m_lv, m_jlv, m_bb, m_wbb, m_wwbb])
    X = np.column_stack(columns).astype(np.float32)
    return X, y, logit


N_CLASSES = 10


def _multiclass_block(rng, n):
    """One block of multiclass rows: (X float32 (n, 28), y int8 (n,), true logits (n, 10))."""
    X, _, _ = _higgs_block(rng, n)
    col = {name: X[:, i].astype(np.float64) for i, name in enumerate(HIGGS_FEATURES)}
    z = np.column_stack([np.log(col["m_jj"] + 0.1), np.log(col["m_bb"] + 0.1),
                         np.log(col["m_lv"] + 0.1), np.log(col["m_wwbb"] + 0.1),
                         col["lepton_eta"], col["jet1_eta"],
                         sum(col[f"jet{k}_btag"] > 1.5 for k in range(1, 5))])
    z = (z - _MULTI_LOC) / _MULTI_SCALE
    centres = np.random.default_rng([7, 10]).normal(0.0, 1.0, (N_CLASSES, z.shape[1]))
    d2 = ((z[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    logits = -0.8 * d2 + 1.5 * np.exp(-0.5 * ((col["m_bb"] - 1.3) / 0.35) ** 2)[:, None] \
        * np.linspace(-1.0, 1.0, N_CLASSES)
    gumbel = -np.log(-np.log(rng.random((n, N_CLASSES))))
    y = np.argmax(logits + gumbel, axis=1).astype(np.int8)
    return X, y, logits


N_TARGETS = 4


def _multi_target_block(rng, n):
    """One block of multi-target rows: (X float32 (n, 28), y (n, 4), noiseless y)."""
    X, _, _ = _higgs_block(rng, n)
    col = {name: X[:, i].astype(np.float64) for i, name in enumerate(HIGGS_FEATURES)}
    shared = (4.0 * np.exp(-0.5 * ((col["m_bb"] - 1.3) / 0.35) ** 2)
              + 3.0 * np.exp(-0.5 * ((col["m_jj"] - 1.6) / 0.45) ** 2)
              + 0.9 * sum(col[f"jet{k}_btag"] > 1.5 for k in range(1, 5)))
    own = [1.5 * np.tanh(col["lepton_eta"]), np.log(col["lepton_pt"] + 0.1),
           np.cos(col["jet1_phi"] - col["met_phi"]), np.zeros(n)]
    truth = np.column_stack([(1.0 + 0.3 * k) * shared + own[k] for k in range(N_TARGETS)])
    return X, truth + 0.5 * rng.standard_normal(truth.shape), truth


# Location and scale of the multiclass features z (fixed, so every block is scaled alike).
_MULTI_LOC = np.array([0.6, 0.3, 0.3, 1.3, 0.0, 0.0, 1.0])
_MULTI_SCALE = np.array([0.6, 0.6, 0.6, 0.4, 1.0, 1.0, 0.9])


_N_WIDE, _N_FACTORS = 90, 12


def _wide_block(rng, n, mixing):
    """One block of regression-wide rows: (X float32 (n, 90), y float64 (n,), noiseless y)."""
    z = rng.standard_normal((n, _N_FACTORS))
    X = z @ mixing + 0.7 * rng.standard_normal((n, _N_WIDE))
    X[:, 60:75] = np.sinh(X[:, 60:75])                  # heavy-tailed columns
    X[:, 75:90] = rng.standard_normal((n, 15))          # pure-noise columns
    f = (3.0 * np.sin(X[:, 0])
         + 1.5 * X[:, 1] * X[:, 2]
         + 2.0 * np.abs(X[:, 3])
         + 2.5 * (X[:, 4] > 0.5) * np.tanh(X[:, 5])
         + 0.5 * X[:, 6] ** 2
         + 1.0 * z[:, 0] - 0.8 * z[:, 1]
         + 0.3 * np.arcsinh(X[:, 61]))
    y = f + 1.5 * rng.standard_normal(n)
    return X.astype(np.float32), y, f


def _rows(kind, n, split, seed):
    """Concatenate the blocks of one split; returns (X, y, truth)."""
    if kind == "regression-wide":
        mixing = np.random.default_rng([seed, 99]).normal(0, 1, (_N_FACTORS, _N_WIDE))
        mixing /= np.sqrt(_N_FACTORS)
        make = lambda rng, m: _wide_block(rng, m, mixing)   # noqa: E731
    elif kind == "higgs-like":
        make = _higgs_block
    elif kind == "multiclass":
        make = _multiclass_block
    elif kind == "multi-target":
        make = _multi_target_block
    else:
        raise ValueError(f"unknown data set {kind!r}")
    parts = []
    for rng, m in block_rngs(n, split, seed):
        X, y, truth = make(rng, BLOCK_ROWS)
        parts.append((X[:m], y[:m], truth[:m]))
    return tuple(np.concatenate(p) for p in zip(*parts))


def block_rngs(n, split, seed, salt=()):
    """``(rng, m)`` for each block of ``n`` rows of one split: generate ``BLOCK_ROWS``
    rows from ``rng`` and keep the first ``m``. ``salt`` (ints) separates the
    streams of different data sets that share a seed."""
    code = _SPLIT_CODES[split]
    for block in range(-(-n // BLOCK_ROWS)):
        yield (np.random.default_rng([seed, code, block, *salt]),
               min(BLOCK_ROWS, n - block * BLOCK_ROWS))


TASKS = {"higgs-like": "binary", "regression-wide": "regression", "multiclass": "multiclass",
         "multi-target": "regression"}
CLASSES = {"multiclass": N_CLASSES}


def make_dataset(kind, n_train, n_test, seed=0):
    """Return ``X_train, y_train, X_test, y_test`` (X float32, C order)."""
    X_train, y_train, _ = _rows(kind, n_train, "train", seed)
    X_test, y_test, _ = _rows(kind, n_test, "test", seed)
    return X_train, y_train, X_test, y_test


def true_scores(kind, n_test, seed=0):
    """The noiseless truth of the test rows: Bayes logit (binary) or E[y|x] (regression)."""
    return _rows(kind, n_test, "test", seed)[2]
