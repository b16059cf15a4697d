"""Line origin for edits inside a line (issue 24): a value bumped, a name changed inside a call, an
edit that stops before the trailing `,` or `;`, a multi-line edit that begins or ends inside the
line. And the evidence rules: the old text must be gone, a replacement too short to tell says so,
a line carried along as context is not claimed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builder import SessionBuilder
from engine_support import engine
from pi_event_search.core.authz import Scope


def _edit(sb: SessionBuilder, call: str, old: str, new: str, path: str = "src/cfg.ts") -> str:
    entry = sb.assistant(tool_calls=[(call, "edit", {"path": path, "edits": [
        {"oldText": old, "newText": new}]})])
    sb.tool_result(call, "edit", "Successfully replaced text")
    return entry


@pytest.fixture
def edited(pi_home, tmp_path) -> tuple[Any, Path, dict[str, str]]:
    proj = tmp_path / "proj"
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("tune the client")
    ids = {
        "write": sb.assistant(tool_calls=[("w", "write", {"path": "src/cfg.ts", "content": (
            "export const cfg = {\n  timeout: 30_000,\n  retries: 3,\n  verbose: false,\n};\n"
            "const user = await fetchUser(id, { cache: true });\n")})]),
        "bump": _edit(sb, "e1", "timeout: 30_000", "timeout: 60_000"),
        "rename": _edit(sb, "e2", "fetchUser(", "loadUser("),
        "short": _edit(sb, "e3", "retries: 3", "retries: 5"),
        "multi": _edit(sb, "e4", "false,\n};", "isDebug(env),\n  tracing: off,\n};"),
        "write2": sb.assistant(tool_calls=[("w2", "write", {"path": "src/b.ts", "content": (
            "function a(x, y) {\n  return compute(x, y);\n}\n")})]),
        "ends": _edit(sb, "e6", "{\n  return compute", "{\n  log(x);\n  return computeFast",
                      path="src/b.ts"),
        "failed": _edit(sb, "e5", "cache: true", "cache: ttlSeconds(300)"),
    }
    sb.tool_result("e5", "edit", "Error: oldText not found", is_error=True)
    e = engine(pi_home.index)
    e.refresh()
    return e, proj, ids


def _origin(e: Any, proj: Path, line: str, path: str = "src/cfg.ts") -> dict[str, Any]:
    result: dict[str, Any] = e.line_origin(str(proj / path), line, Scope.of([str(proj)]))
    return result


@pytest.mark.parametrize(("line", "writer"), [
    ("  timeout: 60_000,", "bump"),  # a value bumped, the edit stops before the `,`
    ("const user = await loadUser(id, { cache: true });", "rename"),  # a name inside a call
    ("  verbose: isDebug(env),", "multi"),  # a multi-line edit that begins inside the line
    ("  tracing: off,", "multi"),  # a whole line inside a multi-line edit
    ("export const cfg = {", "write"),  # written whole, never edited since
    ("  retries: 5,", "short"),  # `retries: 3` -> `retries: 5`: the name makes it long enough
    ("b.ts:  return computeFast(x, y);", "ends"),  # a multi-line edit that ends inside the line
    ("b.ts:function a(x, y) {", "write2"),  # carried along as context: still the write's
])
def test_an_edit_that_changed_part_of_a_line_is_its_origin(edited, line, writer):
    e, proj, ids = edited
    path, line = ("src/b.ts", line[5:]) if line.startswith("b.ts:") else ("src/cfg.ts", line)
    found = _origin(e, proj, line, path)
    assert found["hit"] is not None and found["hit"]["entryId"] == ids[writer], line
    assert found["hit"]["matches"], "the snippet marks what the edit wrote"


def test_the_old_text_must_be_gone_and_failed_edits_write_nothing(edited):
    e, proj, ids = edited
    # the line still holds `fetchUser(`: the rename did not write it
    assert _origin(e, proj, "x = fetchUser(a) ?? loadUser(b);")["hit"] is None
    # the failed edit's new text is in the line, but the edit wrote nothing
    assert _origin(e, proj, "const c = { cache: ttlSeconds(300) };")["hit"] is None
    # no edit wrote anything like it
    assert _origin(e, proj, "  limitCount = 5;") == {"hit": None, "candidates": [],
                                                     "reason": "unknown"}


def test_a_digit_replacement_is_too_short_to_tell(pi_home, tmp_path):
    proj = tmp_path / "proj"
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("bump it")
    _edit(sb, "e1", "3", "7", path="src/n.ts")
    _edit(sb, "e2", "false", "true", path="src/n.ts")
    e = engine(pi_home.index)
    e.refresh()
    scope = Scope.of([str(proj)])
    for line in ("const retries = 7;", "const verbose = true;"):
        found = e.line_origin(str(proj / "src/n.ts"), line, scope)
        assert found == {"hit": None, "candidates": [], "reason": "short-edit"}, line
