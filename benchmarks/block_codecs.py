"""Compression of the out-of-core blocks: what a codec would save, and what it would cost.

    python -m benchmarks block-codecs [--rows 4000000] [--rounds 20] [--depth 8]
                                      [--threads 2]

Fits gbtree out of core on the ``higgs-like`` training rows (``ExternalData`` over
chunks of 1,000,000 rows, ``keep_cache=True``), depthwise trees of ``--depth``
levels; each round reads every block ``depth + 1`` times (once for the gradients
and the root histogram, once a level). Then every block file (the bins by rows and
by columns) is read back and, on one thread, compressed and decompressed with each
codec: LZ4 (frame format, fastest level) and Zstandard at levels 1 and 3 (the
``lz4`` and ``zstandard`` packages, in the ``bench`` extra), and 4-bit packing of
the features whose bins (the missing one included) number at most 16, two to a
byte. The table gives the blocks' bytes over the compressed bytes, each
direction's throughput, the decompression of all blocks once (what each pass would
add) against a pass of the fit as it is (``boost_seconds`` over the passes), and
the share of the fit's boosting the codec would take. "none" is the read of the
raw files from the page cache, as the fit maps them.
"""
import time

import numpy as np

from run import fmt, log, markdown_table, positive_int

WORKLOADS = {
    "block-codecs": dict(help="the out-of-core blocks compressed with LZ4, Zstandard and "
                              "4-bit packing: ratio and the codec's share of the fit",
                         dataset="higgs-like", rows=4_000_000, test_rows=1_000, rounds=20,
                         leaves=255, libs="gbtree"),
}
CHUNK_ROWS = 1_000_000


def add_arguments(p, name):
    p.add_argument("--depth", type=int, default=8, help="levels of each tree (default 8)")
    p.add_argument("--block-rows", type=positive_int, default=1_000_000,
                   help="rows per block (default 1,000,000)")


def _codecs():
    """name -> (compress, decompress) of bytes, for the codecs installed."""
    out = {}
    try:
        import lz4.frame
        out["lz4"] = (lambda b: lz4.frame.compress(b, compression_level=0),
                      lz4.frame.decompress)
    except ImportError:
        log("lz4 is not installed: pip install lz4 (or the bench extra)")
    try:
        import zstandard
        for level in (1, 3):
            out[f"zstd-{level}"] = (zstandard.ZstdCompressor(level=level).compress,
                                    zstandard.ZstdDecompressor().decompress)
    except ImportError:
        log("zstandard is not installed: pip install zstandard (or the bench extra)")
    return out


def _timed(f, *args):
    t0 = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - t0


def _pack4(col):
    """Two 4-bit bins to a byte."""
    even = col[0::2]
    odd = np.zeros_like(even)
    odd[:col.shape[0] // 2] = col[1::2]
    return (even << 4) | odd


def _unpack4(packed, n):
    out = np.empty(2 * packed.shape[0], dtype=np.uint8)
    out[0::2] = packed >> 4
    out[1::2] = packed & 15
    return out[:n]


def run(name, args, bench):
    import gbtree
    from gbtree import ExternalData, GBTClassifier

    data = bench.data("higgs-like", args.rows, args.test_rows)
    X = np.load(data["X_train"], mmap_mode="r")
    y = np.load(data["y_train"], mmap_mode="r")

    def chunks():
        for lo in range(0, X.shape[0], CHUNK_ROWS):
            yield np.asarray(X[lo:lo + CHUNK_ROWS]), np.asarray(y[lo:lo + CHUNK_ROWS])

    ext = ExternalData(chunks, cache_dir=str(bench.tmpdir), keep_cache=True,
                       block_rows=args.block_rows)
    model = GBTClassifier(n_estimators=args.rounds, max_depth=args.depth, learning_rate=0.1,
                          max_bin=args.max_bin + 1, n_jobs=args.threads, random_state=0)
    model.fit(ext)
    passes = args.rounds * (args.depth + 1)
    per_pass = model.fit_info_["boost_seconds"] / passes
    log(f"fit: {model.fit_info_['boost_seconds']:.2f} s boosting, {passes} passes over "
        f"{model.fit_info_['blocks']} blocks")
    import glob
    import os
    import shutil
    files = sorted(f for folder in ext.cache_paths_ for f in glob.glob(os.path.join(folder, "*"))
                   if f.endswith((".X", ".C")))
    n_bins = model._bin_mapper.n_bins_ + 1   # (the missing bin too)
    packable = np.flatnonzero(n_bins <= 16)
    totals = {"none": [0, 0, 0.0, 0.0]}
    codecs = _codecs()
    for codec in list(codecs) + ["4-bit"]:
        totals[codec] = [0, 0, 0.0, 0.0]   # raw bytes, stored bytes, compress s, decompress s
    try:
        for path in files:
            raw, read_s = _timed(np.fromfile, path, np.uint8)
            totals["none"][0] += raw.nbytes
            totals["none"][1] += raw.nbytes
            totals["none"][3] += read_s
            for codec, (compress, decompress) in codecs.items():
                packed, c_s = _timed(compress, raw.data)
                _, d_s = _timed(decompress, packed)
                t = totals[codec]
                t[0] += raw.nbytes
                t[1] += len(packed)
                t[2] += c_s
                t[3] += d_s
            # 4-bit packing: the packable features' bins, two to a byte (by columns)
            F = n_bins.shape[0]
            cols = raw.reshape(F, -1) if path.endswith(".C") else raw.reshape(-1, F).T
            t = totals["4-bit"]
            t[0] += raw.nbytes
            t[1] += raw.nbytes
            for f in packable:
                col = np.ascontiguousarray(cols[f])
                packed, c_s = _timed(_pack4, col)
                back, d_s = _timed(_unpack4, packed, col.shape[0])
                assert np.array_equal(back, col)
                t[1] -= col.shape[0] - packed.shape[0]
                t[2] += c_s
                t[3] += d_s
    finally:
        for folder in ext.cache_paths_:
            shutil.rmtree(folder, ignore_errors=True)
    rows = []
    for codec, (raw_b, stored, c_s, d_s) in totals.items():
        mb = raw_b / 1e6
        rows.append([codec, fmt(raw_b / stored, 3),
                     "–" if codec == "none" else fmt(mb / c_s, 0) if c_s else "–",
                     fmt(mb / d_s, 0) if d_s else "–", fmt(d_s, 3), fmt(per_pass, 3),
                     "–" if codec == "none" else fmt(100 * d_s / (per_pass + d_s), 0, " %")])
    table = markdown_table(["codec", "ratio", "compress MB/s", "decompress (read) MB/s",
                            "decompress all blocks s", "fit's pass s", "share of a pass"], rows)
    header = (f"{args.rows:,} x 28 higgs-like rows, blocks of {args.block_rows:,} rows "
              f"({totals['none'][0] / 1e6:,.0f} MB of bins, by rows and by columns); "
              f"{len(packable)} of {n_bins.shape[0]} features have at most 16 bins; "
              f"{args.rounds} trees of depth {args.depth}, {args.threads} thread(s); "
              f"gbtree {gbtree.__version__}; codecs on one thread")
    return {"header": header, "table": table, "per_pass_seconds": per_pass,
            "ratios": {codec: t[0] / t[1] for codec, t in totals.items()}}
