"""Pool the 1-against-2-thread speed-ups of several ``run.py threads`` runs, by placement.

    python benchmarks/pool_threads.py benchmarks/results/threads-1224.json ...

Each repeat of a run fits at 1 and then 2 threads (or the other way round); its
speed-up is the ratio of the two fit times. A pair is "one die" when the
cross-core round trip measured right after its two-thread fit (``xcore_ns``)
was under 150 ns, "across dies" when it was more, and "unknown" without a
reading (see README.md, Noise). Prints, per library, the median speed-up over
all pairs and over each placement: the numbers quoted as "pooled" in
docs/benchmarks.md.
"""
import argparse
import json
import statistics

ONE_DIE_NS = 150.0


def pairs_of(path, low=1, high=2):
    """(library, speed-up, xcore_ns or None) for every repeat of a threads run."""
    with open(path) as f:
        run = json.load(f)
    fits = {}
    for result in run.get("results", []):
        # (with --together, the one-thread result also holds the side-by-side fits
        # in "together"; its own repeats are the plain ones)
        fits[(result["lib"], result["threads"])] = result.get("repeats", [])
    out = []
    for (lib, threads), slow in fits.items():
        if threads != low or (lib, high) not in fits:
            continue
        for a, b in zip(slow, fits[(lib, high)]):
            if a.get("status") == "ok" and b.get("status") == "ok":
                out.append((lib, a["fit_seconds"] / b["fit_seconds"], b.get("xcore_ns")))
    return out


def placement(xcore_ns):
    if xcore_ns is None:
        return "unknown"
    return "one die" if xcore_ns < ONE_DIE_NS else "across dies"


def summary(pairs):
    """{library: {"all" / placement: [speed-ups]}}."""
    out = {}
    for lib, ratio, xcore_ns in pairs:
        groups = out.setdefault(lib, {"all": []})
        groups["all"].append(ratio)
        groups.setdefault(placement(xcore_ns), []).append(ratio)
    return out


def _cell(values):
    return f"{statistics.median(values):.2f}× ({len(values)})" if values else "–"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="JSON files written by run.py threads")
    parser.add_argument("--threads", default="1,2", help="the two thread counts (1,2)")
    args = parser.parse_args(argv)
    low, high = (int(t) for t in args.threads.split(","))
    pairs = [p for path in args.files for p in pairs_of(path, low, high)]
    print(f"Median {low}→{high}-thread fit speed-up (pairs), over {len(args.files)} run(s):\n")
    print("| library | all | one die | across dies | unknown |")
    print("|---|---:|---:|---:|---:|")
    for lib, groups in sorted(summary(pairs).items()):
        print(f"| {lib} | {_cell(groups['all'])} | {_cell(groups.get('one die', []))} | "
              f"{_cell(groups.get('across dies', []))} | {_cell(groups.get('unknown', []))} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
