"""Credentials and control bytes in recorded text (issue 30): the rules' recall and look-alikes on
a corpus drawn at test time, and the CLI's answers (text and --json) over a session holding them."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from engine_support import cli
from pi_event_search.core import secrets
from secretcorpus import ESCAPES, Planted, lookalikes, planted, write_session

SEEDS = 200


def leaked(value: str, text: str) -> bool:
    """The value, or any 12-character run of it, in text."""
    return any(value[i:i + 12] in text for i in range(max(1, len(value) - 11)))


def test_recall_and_lookalikes():
    missed: Counter[str] = Counter()
    total = 0
    masked_looks = 0
    looks = 0
    kinds: set[str] = set()
    for seed in range(SEEDS):
        rng = random.Random(seed ^ random.getrandbits(32))
        context = ""
        for p in planted(rng):
            context = p.text or context
            total += 1
            kinds.add(p.kind)
            out = secrets.scrub(context)
            if leaked(p.value, out):
                missed[p.kind] += 1
            else:
                assert f"[redacted: {p.kind}]" in out, (p.kind, out)
        for text in lookalikes(rng):
            looks += 1
            masked_looks += secrets.scrub(text) != text
    print(f"\nrecall {1 - sum(missed.values()) / total:.4f} of {total} planted ({len(kinds)} kinds); "
          f"look-alikes masked {masked_looks} of {looks}; missed {dict(missed)}")
    assert len(kinds) >= 15
    assert sum(missed.values()) <= total // 100
    assert masked_looks <= looks // len(lookalikes(random.Random(0)))  # at most 1 per set of 14


def test_controls_stripped_newline_and_tab_kept():
    assert secrets.scrub(f"a{ESCAPES}b\tc\nd\x9b31m\u202eе") == "ab\tc\ndе"
    assert secrets.scrub("plain text, nothing to do") == "plain text, nothing to do"


def test_reveal_keeps_values_but_strips_controls():
    key = "sk-proj-" + "Ab3" * 12
    assert secrets.scrub(f"key {key}\x07") == "key [redacted: openai-key]"
    assert secrets.scrub(f"key {key}\x07", reveal=True) == f"key {key}"


def test_masking_is_the_same_in_any_text_around_it():
    """Texts are searched as UTF-8 bytes and offsets turned back into characters: a credential
    after non-ASCII text (1-, 2-, 3- and 4-byte characters), or in a text holding a lone
    surrogate (which has no UTF-8), is masked exactly as in plain ASCII."""
    rng = random.Random(random.getrandbits(32))
    for p in planted(rng):
        if not p.text:
            continue
        plain = secrets.scan(p.text)
        for before, after in (("é ✓ ", " 𝄞"), ("✗" * 3 + "\n", ""), ("\ud800 ", " \udfff")):
            text, kinds = secrets.scan(before + p.text + after)
            assert (text, kinds) == (before + plain[0] + after, plain[1]), (p.kind, before)
        # two credentials with non-ASCII text between them
        text, kinds = secrets.scan(f"{p.text} — ✓ {p.text}")
        assert text == f"{plain[0]} — ✓ {plain[0]}" and kinds == plain[1] + plain[1]


def test_texts_scanned_together_are_scanned_as_each_alone():
    """A first index scans a batch of texts in one search (scan_many): each result must be the
    text's own scan, whatever its neighbours (credentials, controls, non-ASCII, newlines at the
    edges, empty texts, look-alikes)."""
    rng = random.Random(random.getrandbits(32))
    pool = [p.text for p in planted(rng) if p.text] + lookalikes(rng)
    pool += ["", "\n", "plain ✓ words", f"a{ESCAPES}b", "token:\n", "\ud800 sk-", "✗ password = hunter22"]
    for _ in range(300):
        texts = [rng.choice(pool) + rng.choice(["", "\n", " ✓", "é"]) for _ in range(rng.randrange(1, 12))]
        scanned, utf8 = secrets.scan_many(texts)
        assert scanned == [secrets.scan(t) for t in texts]
        assert utf8 == [t.encode("utf-8", "surrogatepass") for t in texts]
        assert secrets.scan_many(texts, reveal=True)[0] == [secrets.scan(t, reveal=True) for t in texts]


def test_masked_text_is_stable():
    """A scrubbed text scrubbed again is unchanged (the index stores scrubbed text)."""
    for p in planted(random.Random(7)):
        if p.text:
            once = secrets.scrub(p.text)
            assert secrets.scrub(once) == once


# -- the command line, as a person's terminal sees it -----------------------------------------
def _run(home, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**home.env(), "PYTHONPATH": str(Path(__file__).parents[1] / "server")}
    return subprocess.run([sys.executable, "-m", "pi_event_search", *args], env=env,
                          capture_output=True, timeout=120)


@pytest.fixture
def planted_home(pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    sb, items, looks = write_session(pi_home.sessions, str(proj), random.Random(os.urandom(8)))
    return pi_home, proj, sb, items, looks


def _values(items: list[Planted]) -> list[str]:
    return [p.value for p in items]


def _no_value(items: list[Planted], out: str) -> None:
    for p in items:
        assert not leaked(p.value, out), (p.kind, p.value)


def test_cli_masks_every_answer(planted_home):
    home, proj, sb, items, looks = planted_home
    root = ["--root", str(proj)]
    outputs = [_run(home, "search", "", *root, "--limit", "200").stdout.decode()]  # a real process
    for query in ("", "key", "token", "zephyrine", "redacted", "password", "bearer"):
        for fmt in ([], ["--json"]):
            rc, out, err = cli("search", query, *root, "--limit", "200", *fmt)
            assert rc == 0, err
            outputs.append(out)
    rc, out, _ = cli("search", "", *root, "--limit", "200", "--json")
    refs = {h["ref"] for h in json.loads(out)["hits"]}
    assert len(refs) >= len([p for p in items if p.text]) + len(looks)
    for ref in refs:
        for fmt in ([], ["--json"]):
            for cmd in ("read", "trace"):
                rc, out, err = cli(cmd, ref, *root, *fmt)
                assert rc == 0, err
                outputs.append(out)
    for cmd in ("status", "secrets"):
        outputs += (cli(cmd, *root)[1], cli(cmd, *root, "--json")[1])
    everything = "\n".join(outputs)
    _no_value(items, everything)
    for look in looks:  # look-alikes stay readable
        assert look.split("\n")[0] in everything or json.dumps(look.split("\n")[0])[1:-1] in everything
    assert "[redacted: openai-key]" in everything and "[redacted: private-key]" in everything


def test_cli_finds_by_kind_and_filter(planted_home):
    home, proj, sb, items, _ = planted_home
    root = ["--root", str(proj)]
    hits = json.loads(_run(home, "search", "redacted openai", *root, "--json").stdout)["hits"]
    hits = [h for h in hits if not h["missing"]]  # the partial hits hold only "redacted"
    assert len(hits) == 1 and "[redacted: openai-key]" in hits[0]["snippet"]
    with_secrets = json.loads(_run(home, "search", "", *root, "--secrets", "--limit", "200",
                                   "--json").stdout)["hits"]
    audit = json.loads(_run(home, "secrets", *root, "--json").stdout)
    unsearchable = {e["ref"] for e in audit["events"]} - {h["ref"] for h in with_secrets}
    assert {h["ref"] for h in with_secrets} <= {e["ref"] for e in audit["events"]}
    for ref in unsearchable:  # a label has no searchable text; the audit still lists it
        assert json.loads(_run(home, "read", ref, *root, "--json").stdout)["event"]["entryType"] == "label"
    assert audit["sessions"] == 1
    # every planted credential's event is listed, with its kind
    listed = Counter(k for e in audit["events"] for k in e["kinds"])
    for kind in {p.kind for p in items}:
        assert listed[kind] >= 1, kind
    assert sum(e["count"] for e in audit["events"]) == len(items)
    status = json.loads(_run(home, "status", *root, "--json").stdout)
    assert status["secretEvents"] == len(audit["events"])


def test_cli_reveals_only_when_asked(planted_home):
    home, proj, sb, items, _ = planted_home
    root = ["--root", str(proj)]
    openai = next(p for p in items if p.kind == "openai-key")
    ref = json.loads(_run(home, "search", "redacted openai", *root, "--json").stdout)["hits"][0]["ref"]
    masked = _run(home, "read", ref, *root).stdout.decode()
    shown = _run(home, "read", ref, *root, "--reveal-secrets").stdout.decode()
    assert openai.value not in masked and "[redacted: openai-key]" in masked
    assert openai.value in shown


def test_cli_text_output_has_no_control_bytes(planted_home):
    home, proj, sb, _, _ = planted_home
    root = ["--root", str(proj)]
    search = _run(home, "search", "zephyrine", *root)
    ref = json.loads(_run(home, "search", "building zephyrine", *root, "--json").stdout)["hits"][0]["ref"]
    read = _run(home, "read", ref, *root)
    for out in (search.stdout, read.stdout, _run(home, "trace", ref, *root).stdout):
        text = out.decode()
        assert not [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    assert "pwned title" not in read.stdout.decode()
    assert "done\ttabbed" in read.stdout.decode()
