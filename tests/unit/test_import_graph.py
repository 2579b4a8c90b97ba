"""The package's import graph: acyclic, and no vsperf module imported lazily inside a function.

Lazy imports hide cycles; a cycle means two modules that should be one, or a piece of one that
belongs elsewhere. Third-party imports may stay lazy (optional dependencies, slow imports).
"""

from __future__ import annotations

import ast
from pathlib import Path

import vsperf

ROOT = Path(vsperf.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py") if "csrc" not in p.parts}


def _targets(node: ast.Import | ast.ImportFrom, modules: dict[str, Path], here: str) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            pkg = here.split(".")
            if modules[here].name != "__init__.py":
                pkg = pkg[:-1]
            pkg = pkg[: len(pkg) - node.level + 1]
            base = ".".join([*pkg, base] if base else pkg)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    return [n for n in names if n.split(".")[0] == "vsperf" and n in modules]


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    lazy: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for stmt in tree.body:
            if isinstance(stmt, ast.If) and _is_type_checking(stmt):
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    graph[name].update(_targets(node, modules, name))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Import | ast.ImportFrom) and _targets(sub, modules, name):
                        lazy.append(f"{name}:{sub.lineno}")
    # importing a.b.c runs a/__init__ and a/b/__init__ first (a module's own packages are already
    # being imported when it runs: a package's __init__ may import its own modules)
    for name, deps in graph.items():
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        for dep in list(deps):
            parts = dep.split(".")
            deps.update(".".join(parts[:i]) for i in range(2, len(parts)) if ".".join(parts[:i]) in graph)
        deps.difference_update(own)
    return graph, lazy


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if dep == node:
                continue
            if state.get(dep) == 1:
                return [*stack[stack.index(dep):], dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_lazy_vsperf_imports() -> None:
    lazy = _graph()[1]
    assert lazy == [], f"vsperf modules imported inside functions: {lazy}"


def test_import_graph_is_acyclic() -> None:
    graph, _lazy = _graph()
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def _package(module: str) -> str:
    """The package a module belongs to at the top of vsperf (vsperf.search.mlr -> vsperf.search);
    a module loose at the top is its own."""
    return ".".join(module.split(".")[:2])


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, deps in graph.items():
        if module == "vsperf":
            continue
        here = _package(module)
        packages.setdefault(here, set()).update(_package(d) for d in deps if d != "vsperf" and _package(d) != here)
    return packages


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_packages_import_in_one_direction() -> None:
    packages = _package_graph(_graph()[0])
    assert "vsperf.search" in packages and "vsperf.config" in packages["vsperf.search"]  # the graph is real
    assert _cycle(packages) is None, "package cycle: " + " -> ".join(_cycle(packages) or [])


BACKEND_PACKAGES = {"vsperf.trafficgen", "vsperf.vswitch", "vsperf.vnf", "vsperf.loadgen", "vsperf.collectors",
                    "vsperf.backends"}


def test_config_knows_no_backend_and_results_readers_no_runner() -> None:
    packages = _package_graph(_graph()[0])
    assert packages["vsperf.config"] & BACKEND_PACKAGES == set()
    for reader in ("vsperf.report", "vsperf.verdicts", "vsperf.history"):
        assert "vsperf.run" not in packages[reader], f"{reader} reads result files, not the runner's objects"


MAX_MODULE_LINES = 400
MAX_TOP_LEVEL_MODULES = 12


def test_modules_stay_small_and_few_are_loose_at_the_top() -> None:
    modules = _modules()
    long = {name: n for name, path in modules.items() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}"
    loose = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(loose) <= MAX_TOP_LEVEL_MODULES, f"modules loose at the top of vsperf/: {loose}"
