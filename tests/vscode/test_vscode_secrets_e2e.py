"""Issue 30 in a real VS Code (code-server, headless Chromium): the search rows and read views of a
session holding planted credentials show `[redacted: <kind>]`, never a value; with the user setting
piEvents.revealSecrets the read view shows the value (a person asked)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from test_vscode_e2e import ARTIFACTS, Fixture, drive, running_code_server

from secretcorpus import Planted, write_session
from test_secrets import leaked

pytestmark = pytest.mark.editor


class Planting:
    def __init__(self) -> None:
        self.items: list[Planted] = []
        self.refs: dict[str, str] = {}

    def __call__(self, fx: Fixture) -> None:
        sb, self.items, _ = write_session(fx.agent / "sessions", str(fx.ws), random.Random(os.urandom(8)))
        for line in sb.path.read_text().splitlines()[1:]:
            entry = json.loads(line)
            for p in self.items:
                if p.text and p.place in ("user", "bash") and p.value in line:
                    self.refs.setdefault(p.kind, f"pi-event:{sb.session_id}/{entry['id']}")


def _run(tmp_path: Path, reveal: bool | None) -> tuple[Planting, dict[str, Any]]:
    planting = Planting()
    tag = "-reveal" if reveal else "-secrets"
    with running_code_server(tmp_path, tag=tag, plant=planting,
                             **{"piEvents.revealSecrets": reveal}) as (fx, url, tmp):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        refs = [planting.refs["openai-key"], planting.refs["aws-access-key-id"]]
        out = drive(url, tmp, fx, mode="secrets", query="redacted", refs=refs,
                    resultName=f"result{tag}.json")
    return planting, out["secrets"]


def test_views_show_credentials_masked(tmp_path: Path) -> None:
    planting, seen = _run(tmp_path, None)
    text = json.dumps(seen)
    for p in planting.items:
        assert not leaked(p.value, text), p.kind
    assert len(seen["logged"]["refs"]) == 3, seen["logged"]  # a page of the search's page size
    assert sum("[redacted: " in row["aria"] for row in seen["rows"]) >= 2, seen["rows"]
    reads = [r["text"].replace("\xa0", " ") for r in seen["reads"]]
    assert "[redacted: openai-key]" in reads[0] and "[redacted: aws-access-key-id]" in reads[1]


def test_reveal_setting_shows_values_in_the_read_view(tmp_path: Path) -> None:
    planting, seen = _run(tmp_path, True)
    openai = next(p for p in planting.items if p.kind == "openai-key")
    assert openai.value in seen["reads"][0]["text"].replace("\xa0", " ")
    # search rows come from the index, which never holds a value
    assert not leaked(openai.value, json.dumps(seen["rows"]))
