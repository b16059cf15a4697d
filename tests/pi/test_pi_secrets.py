"""Issue 30 with the real Pi 1.6: the tools' answers (text and `details`, as Pi writes them into
the new session file) hold no planted credential, no control byte, and frame recorded text as data;
no tool argument, project setting or project server command makes them reveal a value."""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path
from typing import Any

from pihelp import Project
from test_pi_extension import Transcript, run_pi, text_of

from secretcorpus import write_session
from test_secrets import leaked


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _planted(project: Project) -> tuple[list[str], list[Any]]:
    sb, items, _ = write_session(project.agent / "sessions", str(project.root),
                                 random.Random(os.urandom(8)))
    ids = [json.loads(line)["id"] for line in sb.path.read_text().splitlines()[1:]]
    return [f"pi-event:{sb.session_id}/{i}" for i in ids], items


def _check(entries: list[dict[str, Any]], items: list[Any]) -> Transcript:
    raw = json.dumps(entries)
    for p in items:
        assert not leaked(p.value, raw), f"{p.kind} reached the session file Pi wrote"
    t = Transcript(entries)
    for _, call in t.calls:
        result = t.results[call["id"]]
        for s in _strings(result):
            bad = [c for c in s if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
            assert not bad, (call["name"], s[:200])
    return t


def test_tools_never_show_a_credential(project: Project) -> None:
    refs, items = _planted(project)
    turns = [
        {"calls": [{"name": "event_search", "args": {"query": q, "limit": 50}}
                   for q in ("redacted", "zephyrine", "key", "token", "password", "bearer", "env")]
         + [{"name": "event_search", "args": {"query": "", "limit": 50, "revealSecrets": True}}]},
        {"calls": [{"name": "event_read", "args": {"ref": ref, "before": 2, "after": 2}} for ref in refs]
         + [{"name": "event_read", "args": {"ref": refs[1], "revealSecrets": True,
                                            "reveal_secrets": True}}]},
        {"calls": [{"name": "event_trace", "args": {"ref": ref}} for ref in refs]},
        {"text": "done"},
    ]
    done, entries = run_pi(project, turns, "what credentials did we use before?")
    assert done.returncode == 0, done.stderr[-3000:]
    t = _check(entries, items)
    texts = [text_of(t.results[c["id"]]) for _, c in t.calls]
    reads = [t.results[c["id"]] for _, c in t.calls if c["name"] == "event_read"]
    assert sum(not r["isError"] for r in reads) >= len(refs) - 1  # the header line is no event
    shown = "\n".join(texts)
    for kind in {p.kind for p in items}:
        assert f"[redacted: {kind}]" in shown, kind
    # recorded text framed as data, naming the root
    root = str(project.root.resolve())
    ok = [x for _, c in t.calls if not (r := t.results[c["id"]])["isError"] for x in [text_of(r)]]
    assert ok and all(x.startswith(f"[pi-event-search: recorded history from earlier Pi sessions of {root}")
                      and re.search(r"\n\[end of recorded history [0-9a-f]{16}\]$", x) for x in ok)
    assert "pwned title" not in shown


def test_a_project_cannot_turn_reveal_on(project: Project) -> None:
    """A project's .pi/settings.json naming a server command line that would reveal: the command
    is ignored (a project cannot choose the server), and the extension always asks for masked
    text."""
    refs, items = _planted(project)
    settings = project.root / ".pi" / "settings.json"
    settings.parent.mkdir()
    # Trusted: Pi 1.6 reads the project's settings (untrusted, it would not even look).
    (project.agent / "trust.json").write_text(json.dumps({str(project.root.resolve()): True}))
    server = [sys.executable, "-m", "pi_event_search", "serve"]
    turns = [{"calls": [{"name": "event_read", "args": {"ref": ref}} for ref in refs[1:8]]},
             {"text": "done"}]
    for extra, options in (([], {"revealSecrets": True, "reveal_secrets": True}),
                           (["--reveal-secrets"], {}),
                           ([], {"piEvents": {"revealSecrets": True}})):
        settings.write_text(json.dumps({"eventSearch": {"server": server + extra, **options}}))
        done, entries = run_pi(project, turns, "read them")
        assert done.returncode == 0, done.stderr[-3000:]
        t = _check(entries, items)
        results = [t.results[c["id"]] for _, c in t.calls]
        # The project's server command is not run at all (issue 38: a project file only narrows
        # roots); the extension's own asks for masked text.
        assert f"eventSearch.server in {settings} is ignored" in done.stderr, done.stderr
        assert sum(not r["isError"] for r in results) >= 6
        assert "[redacted: " in json.dumps(results)
    assert Path(settings).exists()
