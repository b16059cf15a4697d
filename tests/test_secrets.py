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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    assert secrets.scrub(f"a{ESCAPES}b\tc\nd\x1b[31m\u202eе") == "ab\tc\ndе"
    assert secrets.scrub("plain text, nothing to do") == "plain text, nothing to do"


@pytest.mark.parametrize(("text", "masked"), [
    ('PASSWORD="$uperS3cret!"', 'PASSWORD="[redacted: password]"'),
    ("DB_PASSWORD=#Secr3tPass", "DB_PASSWORD=[redacted: password]"),
    ("API_TOKEN=MYSUPERSECRETTOKEN", "API_TOKEN=[redacted: generic-secret]"),
    ('password="my-Secret-Pass-123"', 'password="[redacted: password]"'),
    ("password=abc;defgh", "password=[redacted: password]"),
    ("password=hunter2;xyz done", "password=[redacted: password] done"),
    ("login(password=hunter22);", "login(password=[redacted: password]);"),
    ("password=ab[cd]e,f", "password=[redacted: password]"),
    ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [redacted: basic-auth]"),
    ("Authorization: Basic dTpw", "Authorization: Basic [redacted: basic-auth]"),
    ("oauth_bearer ghp_" + "a1B2" * 9, "oauth_bearer [redacted: github-token]"),
    ("x-basic ghp_" + "a1B2" * 9, "x-basic [redacted: github-token]"),
    ("token=(ghp_" + "a1B2" * 9 + ")", "token=([redacted: github-token])"),
    ("https://ghp_" + "a1B2" * 9 + ":x-oauth-basic@github.com/o/r",
     "https://[redacted: github-token]:[redacted: connection-string]@github.com/o/r"),
    ("token=" + "A1b2" * 200, "token=[redacted: generic-secret]"),  # longer than VALUE_MAX: whole
])
def test_issue_38_shapes_are_masked(text, masked):
    assert secrets.scrub(text) == masked


@pytest.mark.parametrize("text", [
    "basic usage: run `make` first", "Authorization: Basic realm=restricted", "PASSWORD=$DB_PASSWORD",
    "password=${DB_PASSWORD}", "password: ${{ secrets.DB_PASSWORD }}", "token = getToken(request);",
    "API_TOKEN=YOUR_API_TOKEN_HERE", "password=my-password-here", "password: string;",
    "token = DEFAULT_TOKEN_VALUE", "api_key=%(api_key)s", "password=%DB_PASSWORD%",
    "secret: #{vault_secret}", "password=<your-password>", "password=[hidden]", "password=********",
])
def test_issue_38_lookalikes_stay(text):
    assert secrets.scrub(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("redis-cli -u redis://:S3cretPassw0rd@cache:6379",
     "redis-cli -u redis://:[redacted: connection-string]@cache:6379"),
    ("DB_PASS=hunter2xyz", "DB_PASS=[redacted: password]"),
    ("SMTP_PASS=Sup3rS3cret", "SMTP_PASS=[redacted: password]"),
    ("SECRET_KEY_BASE=9f8e7d6c5b4a39281706f5e4d3c2b1a0",
     "SECRET_KEY_BASE=[redacted: generic-secret]"),
    ("secret_key_base: 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
     "secret_key_base: [redacted: generic-secret]"),
    ('curl -d "{\\"password\\":\\"tr0ub4dor&3\\"}" http://x',
     'curl -d "{\\"password\\":\\"[redacted: password]\\"}" http://x'),
    ("Authorization: Basic dXNlcjpwYXNzdw", "Authorization: Basic [redacted: basic-auth]"),
    ("Authorization: Basic dXNlcjpwYXNzd28", "Authorization: Basic [redacted: basic-auth]"),
])
def test_issue_47_shapes_are_masked(text, masked):
    assert secrets.scrub(text) == masked


@pytest.mark.parametrize("text", [
    "token_count = 4096", "first_pass = True", "render_pass = 'shadow2pass'",
    "DB_PASSWORD_FILE=/run/secrets/db", "password_confirmation: string", "redis://localhost:6379/0",
    "Basic auth", "tokens_used: 12",
])
def test_issue_47_lookalikes_stay(text):
    assert secrets.scrub(text) == text


def _reads(monkeypatch) -> list[tuple[int, int]]:
    """Record what each name's rule read: from its trigger to how far its value reached."""
    reads: list[tuple[int, int]] = []
    named = secrets._named

    def recording(text: str, pos: int, end: int, word: str):
        found, reach = named(text, pos, end, word)
        reads.append((pos, max([reach, end] + [s.end for s in found])))
        return found, reach

    monkeypatch.setattr(secrets, "_named", recording)
    return reads


ADVERSARIAL = ["token=", "password=", "token=( ", "token: ", "_KEY=a ", 'token="', "api_key='", "é token=",
               "token=password=(", "secret: x ", 'token: "a\n', "PASSWORD=$", "token=" + "a" * 700 + "(",
               "SECRET_KEY_BASE=", "token_a_b_c=", '\\"password\\":\\"a', "DB_PASS="]


@pytest.mark.parametrize("unit", ADVERSARIAL)
def test_masking_reads_each_character_once(monkeypatch, unit):
    """Linear time, checked by what the rules read rather than by a clock: in an adversarial run
    of `name=` triggers (which took 31 s for 96 KB), the values that names' rules read never
    overlap, so the text is read once whatever it holds, and each value check sees at most
    VALUE_MAX characters."""
    checked: list[int] = []
    value_ok = secrets._value_ok
    monkeypatch.setattr(secrets, "_value_ok", lambda v, p: checked.append(len(v)) or value_ok(v, p))
    text = unit * (20_000 // len(unit)) + "("
    secrets.scrub(text)
    # the values checked add up to the text at most (before: ~n²/2 characters, one value per name
    # running to the end of the text)
    assert sum(checked) <= len(text) and max(checked, default=0) <= 512, unit
    reads = _reads(monkeypatch)
    text = unit * (200_000 // len(unit)) + "("
    secrets.scrub(text)
    assert reads, unit
    for (_, end), (start, _) in zip(reads, reads[1:], strict=False):
        assert start >= end, (unit, end, start)  # no character read by two names' rules
    assert sum(end - start for start, end in reads) <= len(text)


SEPARATORS = ["x", " ", "\n", "ghp_" + "a1B2" * 9, "Bearer ", "é", ";", "("]


@given(st.lists(st.sampled_from(ADVERSARIAL + SEPARATORS), max_size=400))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_text_is_read_once(monkeypatch, parts):
    """The same for any mix of triggers, values and separators."""
    reads = _reads(monkeypatch)
    text = "".join(parts)
    secrets.scrub(text)
    for (_, end), (start, _) in zip(reads, reads[1:], strict=False):
        assert start >= end
    reads.clear()


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
    ref = json.loads(_run(home, "search", '"redacted openai"', *root, "--json").stdout
                     )["hits"][0]["ref"]
    masked = _run(home, "read", ref, *root).stdout.decode()
    shown = _run(home, "read", ref, *root, "--reveal-secrets").stdout.decode()
    assert openai.value not in masked and "[redacted: openai-key]" in masked
    assert openai.value in shown


def test_cli_text_output_has_no_control_bytes(planted_home):
    home, proj, sb, _, _ = planted_home
    root = ["--root", str(proj)]
    search = _run(home, "search", "zephyrine", *root)
    # the quoted phrase: only the bash run that printed it holds it (other events say zephyrine)
    ref = json.loads(_run(home, "search", '"building zephyrine"', *root, "--json").stdout
                     )["hits"][0]["ref"]
    read = _run(home, "read", ref, *root)
    for out in (search.stdout, read.stdout, _run(home, "trace", ref, *root).stdout):
        text = out.decode()
        assert not [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    assert "pwned title" not in read.stdout.decode()
    assert "done\ttabbed" in read.stdout.decode()


def test_cli_masks_every_field(pi_home, tmp_path):
    """Not only texts: a cwd, a tool name, an entry id and a file path that hold a credential or
    an escape sequence are masked and stripped in every answer (text and --json)."""
    from secretcorpus import write_hostile_fields

    proj = tmp_path / "proj"
    values, escape = write_hostile_fields(pi_home.sessions, proj, random.Random(os.urandom(8)))
    outputs = []
    for fmt in ([], ["--json"]):
        outputs.append(_run(pi_home, "search", "zephyrine", "--all", *fmt).stdout.decode())
        outputs.append(_run(pi_home, "sessions", "--all", *fmt).stdout.decode())
    rc, out, _ = cli("search", "", "--all", "--json")
    refs = [h["ref"] for h in json.loads(out)["hits"]]
    assert len(refs) >= 5
    for ref in refs:
        for fmt in ([], ["--json"]):
            for cmd in ("read", "trace"):
                outputs.append(_run(pi_home, cmd, ref, "--all", *fmt).stdout.decode())
    outputs.append(_run(pi_home, "file", "/srv", "--all", "--json").stdout.decode())
    everything = "\n".join(outputs)
    assert "[redacted: github-token]" in everything
    for value in values:
        assert not leaked(value, everything)
    assert "\x1b" not in everything and "\x07" not in everything and "owned" not in everything


def test_clean_answers_masked_in_a_copy_and_clean_ones_kept():
    """`clean` masks every string of a JSON-shaped answer in a new answer, and leaves the one it
    was given as it was; an answer with nothing to mask is handed back as it is (no copy)."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    dirty = {"hits": [{"snippet": f"export GITHUB_TOKEN={token}", "line": 3,
                       "matched": ["token", "gh\x1b[31mp"]}], "nextCursor": None}
    out = secrets.clean(dirty)
    assert token not in json.dumps(out) and "\x1b" not in json.dumps(out)
    assert out["hits"][0]["line"] == 3 and out is not dirty
    assert dirty["hits"][0]["snippet"].endswith(token)  # the given answer is not changed
    tidy = {"hits": [{"snippet": "nothing secret here", "matched": ["secret"]}], "n": 1}
    assert secrets.clean(tidy) is tidy
    assert secrets.clean(dirty, reveal=True)["hits"][0]["snippet"].endswith(token)
