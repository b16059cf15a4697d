"""Paths by the platform's rules (issues 47, 48): every case of tests/data/inside-vectors.json
through core/paths.py's one `inside`, and through its SQL spelling in real SQLite, with each
case's flavor named (Windows and macOS rules run here on Linux)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pi_event_search.core import paths
from pi_event_search.core.authz import Scope, place_token, place_tokens

VECTORS = json.loads((Path(__file__).parent / "data" / "inside-vectors.json").read_text())["cases"]


def materialize(case: dict[str, Any], tmp: Path) -> tuple[str, str]:
    """The case's path and root with $TMP filled in, its links created."""
    base = os.path.realpath(tmp)
    for link, target in (case.get("links") or {}).items():
        at = Path(link.replace("$TMP", base))
        at.parent.mkdir(parents=True, exist_ok=True)
        at.symlink_to(target.replace("$TMP", base))
    return case["path"].replace("$TMP", base), case["root"].replace("$TMP", base)


@pytest.mark.parametrize("case", VECTORS, ids=[c["note"] for c in VECTORS])
def test_inside_vector(case: dict[str, Any], tmp_path: Path) -> None:
    path, root = materialize(case, tmp_path)
    assert paths.contains(root, path, case["flavor"]) is case["inside"]
    # The SQL predicate, on keys as the index stores them, says the same.
    p, r = paths.key(path, case["flavor"]), paths.key(root, case["flavor"])
    if p is None or r is None:
        assert not case["inside"]
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE s (cwd_canon TEXT)")
    conn.execute("INSERT INTO s VALUES (?)", (p,))
    sql, params = paths.under_sql("cwd_canon", r)
    assert bool(conn.execute(f"SELECT count(*) FROM s WHERE {sql}", params).fetchone()[0]) \
        is case["inside"]


def test_vectors_cover_every_flavor() -> None:
    assert {c["flavor"] for c in VECTORS} == {"posix", "windows", "darwin"}
    assert any(c.get("links") for c in VECTORS)


@pytest.mark.parametrize(("flavor", "raw", "expected"), [
    ("windows", "C:\\Users\\Me\\proj", "c:/users/me/proj"),
    ("windows", "\\\\?\\UNC\\Srv\\Share\\a\\", "//srv/share/a"),
    ("windows", "file:///c%3A/Users/Me/proj", "c:/users/me/proj"),
    ("windows", "C:\\", "c:/"),
    ("darwin", "/var/folders/X", "/private/var/folders/x"),
    ("posix", "/home//me/./proj/", "/home/me/proj"),
])
def test_key_form(flavor: paths.Flavor, raw: str, expected: str) -> None:
    assert paths.key(raw, flavor) == expected


def test_windows_cwd_is_keyed_on_any_host() -> None:
    # A recorded Windows cwd is Windows by its shape, wherever the index runs.
    assert paths.key("C:\\Users\\Me\\proj") == "c:/users/me/proj"


@pytest.mark.parametrize(("cwd", "root"), [
    ("C:\\Users\\Me\\proj\\sub", "file:///c%3A/Users/Me/proj"),
    ("\\\\srv\\share\\team\\me\\proj\\a", "\\\\SRV\\share\\team\\me\\proj"),
    ("/home/dev/proj/sub", "/home/dev/proj"),
])
def test_place_tokens_name_the_root(cwd: str, root: str) -> None:
    """The FTS place tokens a session's fragments carry include the token its root asks for."""
    scope = Scope.of([root])
    assert scope.roots is not None
    stored = paths.key(cwd, resolve=False)
    filt = scope.fts_filter()
    assert filt is not None and place_token(scope.roots[0]) in filt
    assert place_token(scope.roots[0]) in place_tokens(stored).split()


def test_ancestors() -> None:
    assert paths.ancestors("/a/b") == ["/", "/a", "/a/b"]
    assert paths.ancestors("c:/a") == ["c:/", "c:/a"]
    assert paths.ancestors("//srv/share/a") == ["//srv/share", "//srv/share/a"]
