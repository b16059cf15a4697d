"""Rows are read by column name (store.connect's sqlite3.Row), never by position: a static check
of server/ for the ways a row gets read by index or unpacked in column order."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "server" / "pi_event_search"
# Functions allowed to read rows by position: none. Hot paths that read thousands of rows
# unpack plain tuples into NamedTuples (query/evidence.Row), which are read by name too.
ALLOWED: set[tuple[str, str]] = set()


def _call(node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in names


def _one_row(node: ast.AST) -> bool:
    """cur.fetchone(): a row (or None)."""
    return _call(node, {"fetchone"})


def _many_rows(node: ast.AST) -> bool:
    """conn.execute(...), cur.fetchall(): rows (a cursor made with row_factory = None yields
    tuples: the functions reading those are listed in ALLOWED)."""
    return _call(node, {"execute", "fetchall", "fetchmany"})


def _int_index(node: ast.Subscript) -> bool:
    s = node.slice
    return isinstance(s, ast.Constant) and isinstance(s.value, int) or isinstance(s, ast.Slice)


def _problems_in(fn: ast.AST) -> list[tuple[int, str]]:
    one: set[str] = set()  # names holding a row
    many: set[str] = set()  # names holding rows (a list or a cursor)
    out: list[tuple[int, str]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and (_one_row(node.value) or _many_rows(node.value)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    (one if _one_row(node.value) else many).add(target.id)
                elif isinstance(target, ast.Tuple) and _one_row(node.value):
                    out.append((node.lineno, "a row unpacked in column order"))
        if isinstance(node, ast.For | ast.comprehension):
            source = node.iter
            if isinstance(source, ast.Subscript):  # rows[:limit]
                source = source.value
            if _many_rows(source) or isinstance(source, ast.Name) and source.id in many:
                if isinstance(node.target, ast.Tuple):
                    out.append((getattr(node, "lineno", getattr(source, "lineno", 0)),
                                "rows unpacked in column order"))
                elif isinstance(node.target, ast.Name):
                    one.add(node.target.id)
    for node in ast.walk(fn):
        if not isinstance(node, ast.Subscript) or not _int_index(node):
            continue
        value = node.value
        in_rows = isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
            and value.value.id in many  # rows[0][1]
        if in_rows or _one_row(value) or isinstance(value, ast.Name) and value.id in one:
            out.append((node.lineno, "a row read by position"))
    return out


def positional_reads(source: str, filename: str) -> list[str]:
    tree = ast.parse(source)
    found: set[tuple[int, str]] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) \
                and (filename, fn.name) not in ALLOWED:
            found |= {(line, f"{what} ({fn.name})") for line, what in _problems_in(fn)}
    return [f"{filename}:{line}: {what}" for line, what in sorted(found)]


def test_the_check_finds_positional_reads():
    sample = '''
def f(conn):
    n = conn.execute("SELECT count(*) FROM t").fetchone()[0]
    row = conn.execute("SELECT a, b FROM t").fetchone()
    a, b = conn.execute("SELECT a, b FROM t").fetchone()
    for x, y in conn.execute("SELECT x, y FROM t"):
        pass
    for r in conn.execute("SELECT x FROM t"):
        print(r[0])
    rows = conn.execute("SELECT a FROM t").fetchall()
    first = rows[0]["a"] if rows[:1] else None
    return row[1], row["b"], rows[0][0], first
'''
    assert [p.split(":", 1)[1] for p in positional_reads(sample, "x.py")] == [
        "3: a row read by position (f)", "5: a row unpacked in column order (f)",
        "6: rows unpacked in column order (f)", "9: a row read by position (f)",
        "12: a row read by position (f)"]


def test_no_row_is_read_by_position_in_the_server():
    found = []
    paths = sorted(SOURCE.rglob("*.py"))
    assert len(paths) > 40, "the check must read the real package"
    for path in paths:
        found += positional_reads(path.read_text(), str(path.relative_to(SOURCE)))
    assert found == []
