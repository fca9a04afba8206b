"""The package's modules import one another in one direction only: the graph of imports between
the modules of `cove`, counting those inside functions and methods but not those under
`if TYPE_CHECKING:`, has no cycle."""
from __future__ import annotations

import ast
import pathlib
from typing import Dict, Iterator, List, Optional, Set, Tuple

PACKAGE = "cove"
PACKAGE_DIR = pathlib.Path(__file__).resolve().parent.parent / PACKAGE

# module -> {imported module: line of the first such import}
Graph = Dict[str, Dict[str, int]]


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING"
    return False


def _runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node`, at any depth, except the bodies of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _runtime_nodes(other)
            continue
        yield child
        yield from _runtime_nodes(child)


def _targets(node: ast.AST, modules: Set[str]) -> Iterator[str]:
    """The package's modules an import statement imports ("__init__" for the package itself).
    A compiled module (no source here) is a node with no imports of its own."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] == PACKAGE:
                yield parts[1] if len(parts) > 1 else "__init__"
    elif isinstance(node, ast.ImportFrom):
        if node.level == 0:
            parts = (node.module or "").split(".")
            if parts[0] != PACKAGE:
                return
            rest = parts[1:]
        else:
            rest = node.module.split(".") if node.module else []
        if rest:
            yield rest[0]
        else:   # `from . import x`: the submodule x, or a name of the package's __init__
            for alias in node.names:
                yield alias.name if alias.name in modules else "__init__"


def import_graph(package_dir: pathlib.Path = PACKAGE_DIR) -> Graph:
    sources = {path.stem: path for path in sorted(package_dir.glob("*.py"))}
    modules = set(sources) | {path.stem for path in package_dir.glob("*.pyi")}
    graph: Graph = {}
    for name, path in sources.items():
        edges: Dict[str, int] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _runtime_nodes(tree):
            for target in _targets(node, modules):
                if target != name:
                    edges.setdefault(target, getattr(node, "lineno", 0))
        graph[name] = edges
    return graph


def find_cycle(graph: Graph) -> Optional[List[str]]:
    """One cycle of the graph as a path that ends where it starts, or None."""
    state: Dict[str, int] = {}   # 1: on the current path, 2: done
    path: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, {})):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def describe(cycle: List[str], graph: Graph) -> str:
    steps: List[Tuple[str, str]] = list(zip(cycle, cycle[1:]))
    return " -> ".join(cycle) + "\n" + "\n".join(
        f"  {source}.py line {graph[source][target]} imports {target}" for source, target in steps)


def test_the_package_sources_are_found() -> None:
    graph = import_graph()
    assert {"__init__", "_errors", "_lib", "_realm", "_results", "_object"} <= set(graph)
    assert "_errors" in graph["_lib"]


def test_imports_inside_functions_count_and_type_checking_ones_do_not(tmp_path: pathlib.Path) -> None:
    (tmp_path / "__init__.py").write_text("from ._a import A\n")
    (tmp_path / "_a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ._c import C\n"
        "class A:\n    def b(self):\n        from . import _b\n        return _b\n")
    (tmp_path / "_b.py").write_text("def f():\n    import cove._a\n")
    (tmp_path / "_c.py").write_text("from ._a import A\n")
    graph = import_graph(tmp_path)
    assert graph == {"__init__": {"_a": 1}, "_a": {"_b": 6}, "_b": {"_a": 2}, "_c": {"_a": 1}}
    assert find_cycle(graph) == ["_a", "_b", "_a"]
    del graph["_b"]["_a"]
    assert find_cycle(graph) is None


def test_the_modules_import_one_another_in_one_direction() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "the package's imports go in a circle:\n" + describe(cycle, graph)


def test_the_classes_handed_down_are_registered() -> None:
    import cove
    from cove import _collections, _migration

    assert _collections._object_class is cove.Object
    assert _migration._realm_class is cove.Realm
