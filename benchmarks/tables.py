"""Regenerate the benchmark tables of the docs from the latest result of each workload.

    python -m benchmarks tables [--docs FILE.md] [--results benchmarks/results]

A table to regenerate sits between two markers in a Markdown file (by default
README.md and every ``docs/*.md``):

    <!-- table: WORKLOAD -->
    (anything: replaced)
    <!-- end table -->

and is replaced by the table of the newest JSON result (by its ``started``
time) whose ``workload`` is WORKLOAD, with a line naming the file, its start
time, the machine's CPU and its command. Text outside the markers is kept.
"""
import argparse
import datetime
import json
import re
import sys
from pathlib import Path

from common import REPO_ROOT, RESULTS_DIR

MARKER = re.compile(r"(<!-- table: ([\w.-]+) -->\n)(.*?)(<!-- end table -->)", re.S)


def add_arguments(p):
    p.add_argument("--docs", type=Path, action="append",
                   help="Markdown file with table markers (default README.md and every "
                        "docs/*.md; repeat for more)")
    p.add_argument("--results", type=Path, default=RESULTS_DIR,
                   help="folder of JSON results (default benchmarks/results)")


def latest_results(folder):
    """workload -> (path, run) of the newest JSON result of each workload in ``folder``."""
    latest = {}
    for path in sorted(Path(folder).glob("*.json")):
        try:
            run = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(run, dict) or "workload" not in run or "table" not in run:
            continue
        started = datetime.datetime.fromisoformat(run["started"])
        best = latest.get(run["workload"])
        if best is None or started > best[0]:
            latest[run["workload"]] = (started, path, run)
    return {name: (path, run) for name, (_, path, run) in latest.items()}


def render(path, run):
    started = datetime.datetime.fromisoformat(run["started"])
    machine = run.get("machine", {})
    cpu = machine.get("cpu", "unknown CPU")
    if machine.get("simd"):
        cpu += f", {machine['simd']}"
    # (where the JSON went is no part of how to make it again)
    command = (f", `{re.sub(r' --json(=| )[^ ]+| --save', '', run['command'])}`"
               if run.get("command") else "")
    return (f"`benchmarks/results/{path.name}`, {started:%Y-%m-%d %H:%M %Z}, {cpu}"
            f"{command}:\n\n{run['table'].rstrip()}\n\n")


def regenerate(text, latest):
    """``text`` with every marked table replaced; the workloads without a result."""
    missing = []

    def replace(match):
        name = match.group(2)
        if name not in latest:
            missing.append(name)
            return match.group(0)
        return match.group(1) + render(*latest[name]) + match.group(4)

    return MARKER.sub(replace, text), missing


def run(args):
    latest = latest_results(args.results)
    failed = False
    for doc in args.docs or [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        new, missing = regenerate(text, latest)
        for name in missing:
            print(f"{doc}: no result of the workload {name!r} in {args.results}", file=sys.stderr)
            failed = True
        if new != text:
            doc.write_text(new)
            print(f"updated {doc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
