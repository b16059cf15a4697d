"""The server's module graph: no import cycle, counting imports inside functions and under
TYPE_CHECKING, and no import hidden inside a function except the documented lazy one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "pi_event_search"
SOURCE = Path(__file__).resolve().parent.parent / "server" / PACKAGE
# Startup costs, not cycles: the CLI loads the language server's stack (pygls, ~250 ms) only for
# `serve`, and the watcher (watchfiles, asyncio, ~25 ms) only for `index --watch`.
LAZY_ALLOWED = {("cli", "lsp_main"), ("render_text", "watch")}


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(SOURCE.glob("*.py"))}


def _targets(node: ast.Import | ast.ImportFrom, modules: set[str]) -> list[str]:
    """Our modules an import statement loads."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
        return [n.split(".")[1] for n in names if n.startswith(PACKAGE + ".")]
    if node.level or node.module is None or not node.module.startswith(PACKAGE):
        return []
    if node.module == PACKAGE:  # from pi_event_search import a, b
        return [a.name for a in node.names if a.name in modules] or ["__init__"]
    return [node.module.split(".")[1]]


def _edges() -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """module -> modules it imports anywhere; (module, target) pairs imported inside a function."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    nested: set[tuple[str, str]] = set()
    for name, tree in modules.items():
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        nested.update((name, t) for t in _targets(node, set(modules)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[name].update(t for t in _targets(node, set(modules)) if t != name)
    return graph, nested


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read_from_the_real_package() -> None:
    graph, _ = _edges()
    assert {"engine", "reader", "eventref", "errors"} <= graph.keys()
    assert "reader" in graph["engine"] and "errors" in graph["reader"]


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_server() -> None:
    graph, _ = _edges()
    assert _cycles(graph) == []


def test_no_import_inside_a_function_but_the_documented_one() -> None:
    _, nested = _edges()
    assert nested <= LAZY_ALLOWED
