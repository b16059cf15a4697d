"""Issue 30 in real headless Neovim against the real server: no planted credential and no control
byte in the read, trace and status views, the finder's hit lines or :checkhealth; the
`reveal_secrets` option shows values in read views only when a person sets it."""

from __future__ import annotations

import json
import os
import random

import pytest
from test_neovim import NVIM, World, needs_nvim, ok, run_script, server_cmd

from secretcorpus import write_session
from test_secrets import leaked

pytestmark = pytest.mark.editor
__all__ = ["server_cmd"]  # the module-scoped fixture, shared with test_neovim.py


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, list]:
    tmp = tmp_path_factory.mktemp("nvim-secrets").resolve()
    proj = tmp / "proj"
    (proj / ".git").mkdir(parents=True)
    sb, items, _ = write_session(tmp / "agent" / "sessions", str(proj), random.Random(os.urandom(8)))
    ids = [json.loads(line)["id"] for line in sb.path.read_text().splitlines()[1:]]
    xdg = tmp / "xdg"
    env = {k: v for k, v in os.environ.items() if k not in ("NVIM", "VIMINIT")}
    env.update({"PI_CODING_AGENT_DIR": str(tmp / "agent"),
                "PI_EVENT_SEARCH_INDEX": str(tmp / "index.sqlite3"),
                **{f"XDG_{k}_HOME": str(xdg / k.lower()) for k in ("CONFIG", "DATA", "STATE", "CACHE")}})
    facts = {"refs": [f"pi-event:{sb.session_id}/{i}" for i in ids], "proj": str(proj)}
    return World(tmp=tmp, proj=proj, notes=proj / "notes.md", env=env, facts=facts), items


def _control(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]


@needs_nvim
def test_views_are_masked_and_clean(planted, server_cmd: list[str]) -> None:
    world, items = planted
    out = ok(run_script("secrets", world, server_cmd, timeout=300, reveal=False))
    text = json.dumps(out)
    for p in items:
        assert not leaked(p.value, text), p.kind
    body = "\n".join(line for v in out["views"] for line in v["lines"]) + "\n".join(out["hit_lines"])
    assert not _control(body) and "pwned title" not in body
    assert "[redacted: private-key]" in body and "[redacted: jwt]" in body
    assert any(line.startswith("secrets:") and "held credentials" in line
               for v in out["views"] for line in v["lines"])
    assert any("events held credentials: masked everywhere" in line for line in out["health"])


@needs_nvim
def test_reveal_secrets_option_shows_values_in_read_views(planted, server_cmd: list[str]) -> None:
    world, items = planted
    out = ok(run_script("secrets", world, server_cmd, timeout=300, reveal=True))
    reads = "\n".join(line for v in out["views"] if v["name"].startswith("pi-event://read/")
                      for line in v["lines"])
    pem = next(p for p in items if p.kind == "private-key")
    assert pem.value.splitlines()[1] in reads
    assert not _control(reads)
    assert NVIM is not None
