"""What the installed package says of itself and what its wheel holds."""
from importlib import metadata

import gbtree


def test_one_version_number():
    # the package metadata reads gbtree.__version__ (pyproject.toml: dynamic version)
    assert metadata.version("gbtree") == gbtree.__version__


def test_the_wheel_holds_no_kernel_sources_or_test_references():
    # the files of an install from a wheel are listed in its RECORD; an editable
    # install lists none of the package's files, a source checkout has no RECORD
    dist = metadata.distribution("gbtree")
    installed = dist.read_text("RECORD") is not None
    files = [f for f in dist.files or [] if f.parts[0] == "gbtree"] if installed else []
    sources = [str(f) for f in files
               if f.suffix in (".pyx", ".pxd", ".h", ".cpp") or f.name == "_reference.py"]
    assert sources == []
    if files:       # installed from a wheel: the extensions and the schema are there
        names = {f.name for f in files}
        assert "model-format.schema.json" in names
        assert any(n.startswith("_predictor.") and n.endswith((".so", ".pyd")) for n in names)


def _imports_within(package_dir):
    """{module: modules of the package it imports (at any depth of its code)}, read
    from the sources: ``.py`` files with ``ast``, Cython files by their import lines."""
    import ast
    import re
    from pathlib import Path
    root = Path(package_dir)
    modules = {p.stem: p for p in root.glob("*.py")} | {p.stem: p for p in root.glob("*.pyx")}
    graph = {}
    for name, path in modules.items():
        text = path.read_text(encoding="utf-8")
        found = set()
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    if node.module:
                        found.add(node.module.split(".")[0])
                    else:
                        found.update(a.name for a in node.names)
        else:
            found.update(re.findall(r"^\s*from \.(\w+) c?import", text, re.M))
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def test_the_imports_point_one_way():
    # no module imports, at any depth of its code, one that imports it back
    import os
    graph = _imports_within(os.path.join(os.path.dirname(__file__), "..", "gbtree"))
    state, stack, circles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                circles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert len(graph) > 40 and any(graph.values())
    assert circles == []
