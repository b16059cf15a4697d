"""The server's module graph: subpackages in layers, imports pointing one way (from the LSP and the
CLI down to core), no import cycle between modules, counting imports inside functions and under
TYPE_CHECKING, and no import hidden inside a function except the documented lazy ones."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "pi_event_search"
SOURCE = Path(__file__).resolve().parent.parent / "server" / PACKAGE
# Lower layers first. A module may import its own package and any package of a lower layer;
# packages on one layer do not import each other.
LAYERS: list[set[str]] = [
    {"core"}, {"meaning"}, {"source"}, {"index"}, {"query"}, {"events", "files"}, {"service"},
    {"lsp"}, {"mcp"}, {"cli"},
]
LAYER = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
# Startup costs, not cycles: the CLI loads the language server's stack (pygls, ~250 ms) only for
# `serve`, the watcher (watchfiles, asyncio, ~25 ms) only for `index --watch`, and the MCP SDK (an
# optional extra) only for `mcp`.
LAZY_ALLOWED = {("cli.main", "lsp.main"), ("cli.main", "service.watch"), ("cli.main", "mcp.server")}
TOP = {"__init__", "__main__"}
# A bulk load owns a worker process, a side file and its lock, and bulk settings on the write
# connection (index/bulk/passscope.py lets them go): only the pass that decides to load in bulk
# starts one, and nothing but a pass's own modules reaches into it.
BULK = "index.bulk"
BULK_USERS = {"index.indexer"}
# Runs as a script before the package is installed (every client's installer): outside the layers,
# it may import nothing of ours.
STANDALONE = {"bootstrap"}


def _modules() -> dict[str, ast.Module]:
    """Dotted names under the package ("index.store", "__main__") -> their syntax trees."""
    out = {}
    for p in sorted(SOURCE.rglob("*.py")):
        rel = p.relative_to(SOURCE).with_suffix("")
        name = ".".join(rel.parts)
        out[name] = ast.parse(p.read_text(), str(p))
    return out


def _targets(node: ast.Import | ast.ImportFrom, modules: set[str]) -> list[str]:
    """Our modules an import statement loads (a package's __init__ as "pkg.__init__")."""
    if isinstance(node, ast.Import):
        names = [a.name[len(PACKAGE) + 1:] for a in node.names if a.name.startswith(PACKAGE + ".")]
    elif node.level or node.module is None or not node.module.startswith(PACKAGE):
        return []
    else:
        base = node.module[len(PACKAGE) + 1:]
        names = []
        for a in node.names:
            full = f"{base}.{a.name}" if base else a.name
            names.append(full if full in modules else base or "__init__")
    return [n if n in modules else f"{n}.__init__" for n in names]


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


def _package(module: str) -> str:
    return module.split(".")[0]


def _against_layers(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for src, targets in sorted(graph.items()):
        if src in TOP:
            continue
        for dst in sorted(targets):
            if dst in TOP or _package(src) == _package(dst):
                continue
            if LAYER[_package(dst)] >= LAYER[_package(src)]:
                bad.append(f"{src} -> {dst}")
    return bad


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
    assert {"service.engine", "events.reader", "core.eventref", "core.errors"} <= graph.keys()
    assert "events.reader" in graph["service.engine"] and "core.errors" in graph["events.reader"]


def test_every_module_lives_in_a_layered_package() -> None:
    loose = [m for m in _modules() if m not in TOP | STANDALONE and _package(m) not in LAYER]
    assert loose == []


def test_the_bootstrap_stands_alone() -> None:
    graph, _ = _edges()
    assert {m: graph[m] for m in STANDALONE} == {m: set() for m in STANDALONE}
    # stdlib only: what the tests' interpreter finds outside the standard library is not imported
    tree = ast.parse((SOURCE / "bootstrap.py").read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    assert imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names


def test_every_package_says_what_it_owns() -> None:
    for pkg in [*LAYER, BULK.replace(".", "/")]:
        doc = ast.get_docstring(ast.parse((SOURCE / pkg / "__init__.py").read_text()))
        assert doc and len(doc.splitlines()) == 1, pkg


def test_layer_check_finds_an_upward_import() -> None:
    assert _against_layers({"core.wire": {"lsp.server"}, "lsp.server": {"core.wire"},
                            "events.reader": {"files.filerefs"}}) == [
        "core.wire -> lsp.server", "events.reader -> files.filerefs"]


def test_imports_point_down_the_layers() -> None:
    graph, _ = _edges()
    assert _against_layers(graph) == []


def _into_bulk(graph: dict[str, set[str]]) -> list[str]:
    return [f"{src} -> {dst}" for src, targets in sorted(graph.items()) for dst in sorted(targets)
            if dst.startswith(BULK + ".") and not src.startswith(BULK + ".")
            and src not in BULK_USERS]


def test_bulk_check_finds_an_import_into_the_bulk_load() -> None:
    assert _into_bulk({"index.filestate": {"index.bulk.mode"}, "index.indexer": {"index.bulk.ftsload"},
                       "index.bulk.firstload": {"index.bulk.ftsload", "index.passes"},
                       "service.engine": {"index.bulk.__init__"}}) == [
        "index.filestate -> index.bulk.mode", "service.engine -> index.bulk.__init__"]


def test_only_the_indexer_starts_a_bulk_load() -> None:
    graph, _ = _edges()
    assert any(t.startswith(BULK + ".") for t in graph["index.indexer"])
    assert _into_bulk(graph) == []


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_server() -> None:
    graph, _ = _edges()
    assert _cycles(graph) == []


def test_no_import_inside_a_function_but_the_documented_one() -> None:
    _, nested = _edges()
    assert nested <= LAZY_ALLOWED
