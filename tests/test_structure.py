"""The package's structure: no import cycle between dicelab's modules, and no module
importing another module's private names (what is shared is public in its owner).

Every import counts, also one inside a function: a cycle through a deferred import is
still a cycle in the design."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "dicelab"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(modules: dict[str, Path]):
    """(importer, imported module, imported name or None, line) for every import of a
    dicelab module, a name imported from one resolved to its module when it is one."""
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        yield name, alias.name, None, node.lineno
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(name, node, is_package)
                if target.split(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in modules:
                        yield name, sub, None, node.lineno
                    else:
                        yield name, target, alias.name, node.lineno


def _owner(module: str, modules: dict[str, Path]) -> str:
    """The module itself, or the package a dotted name falls in."""
    while module not in modules and "." in module:
        module = module.rsplit(".", 1)[0]
    return module


def test_no_module_imports_another_modules_private_names():
    modules = _modules()
    found = [f"{importer}:{line} imports {name} from {target}"
             for importer, target, name, line in _imports(modules)
             if name is not None and name.startswith("_") and not name.startswith("__")
             and _owner(target, modules) != importer]
    assert not found, "\n".join(found)


def test_no_import_cycle():
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for importer, target, _name, _line in _imports(modules):
        dep = _owner(target, modules)
        # a module's package is imported with it (its __init__): not a dependency edge of
        # the design, and every subpackage's __init__ here holds no code of its own
        if dep != importer and not importer.startswith(dep + "."):
            graph[importer].add(dep)
    # Tarjan's strongly connected components: any with more than one module is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_checks_see_a_cycle_and_a_private_import(tmp_path, monkeypatch):
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from dicelab.b import _hidden\n")
    (pkg / "b.py").write_text("def f():\n    from dicelab import a\n_hidden = 1\n")
    monkeypatch.setattr(__import__(__name__), "SRC", tmp_path)
    for check in (test_no_module_imports_another_modules_private_names, test_no_import_cycle):
        try:
            check()
        except AssertionError:
            continue
        raise AssertionError(f"{check.__name__} passed a tree it should refuse")
