"""Recorded text is untrusted: credentials in it are masked and control bytes stripped before any
text leaves the server (docs/design.md, "Credentials and control bytes").

`scrub(text)` is the one call every surface makes: it strips C0/C1 controls and escape sequences
(newline and tab stay) and replaces each credential with `[redacted: <kind>]`. `scan(text)` does the
same and also counts the kinds it replaced, for the index (the events' `secrets` column, the audit,
the `secrets` filter); `scan_many(texts)` scans a batch of texts with one search (a first index).
`reveal=True` (a person asked; never a model) keeps credentials but still strips controls.

Speed: one pass of one trigger regex (RE2's DFA when google-re2 is installed, else Python's re)
finds every place a rule could match: a known prefix (`sk-`, `ghp_`, `AKIA`, `eyJ`...), a
secret-like name (`password`, `token`, `_KEY`...), `://`, a control byte. Most texts hold none and
cost that one pass; each rule then runs anchored at its trigger only. The rules are our own, after
gitleaks' and Microsoft's secret-masker's shapes, chosen on the corpus of tests/secretcorpus.py.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

MARK = "[redacted: {}]"

_CONTROL_CLASS = r"\x00-\x08\x0b-\x1f\x7f-\x9f\x{202a}-\x{202e}\x{2066}-\x{2069}"
# ESC sequences (CSI, OSC/DCS/APC/PM/SOS strings up to BEL or ST, two-byte escapes), C1 bytes, the
# C0 bytes but tab and newline, DEL, and the bidirectional overrides that reorder what is shown.
_CONTROLS = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
    r"|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_NAMES = (r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
          r"|auth[_-]?key|credentials?|_key")
# Names count only when a value is assigned to them, so the trigger says so: `token` in prose
# costs nothing.
_TRIGGERS = (r"(?i)private key|sk-|akia|asia|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt)-"
             r"|xox[abposer]-|hooks\.slack\.com/|[sr]k_(?:live|test)_|aiza|npm_|hf_|accountkey="
             r"|sharedaccesskey=|[?&]sig=|eyj|(?:bearer|basic)[ \t]+[a-z0-9._~+/-]{16}"
             r"|://[^\s:/@]{1,64}:[^\s@/]{3,128}@|(?:" + _NAMES + r")[\"']?[ \t]*(?:=|:)")
_WORD = re.compile(r"[a-z_-]+")

def _compile_triggers() -> tuple[Any, Any]:
    """The trigger regex for str, and for UTF-8 bytes (None without RE2)."""
    try:
        import re2  # type: ignore[import-untyped]

        pattern = _TRIGGERS + "|[" + _CONTROL_CLASS + "]"
        return re2.compile(pattern), re2.compile(pattern.encode())
    except ImportError:  # about six times slower on large texts; same results
        return re.compile(_TRIGGERS + "|[" + _CONTROL_CLASS.replace(r"\x{", r"\u").replace("}", "")
                          + "]"), None


_FINDER, _BYTES_FINDER = _compile_triggers()
# RE2 searches UTF-8: given a str, its wrapper encodes it and converts every offset between bytes
# and characters, each conversion a pass over the text (most of the masking's cost in a first
# index). So a text is encoded once and searched as bytes; most texts hold no trigger and cost
# just that. Where one does, byte offsets become character offsets by decoding the stretches
# between triggers (none to decode in ASCII, most recorded text).
_KNOWN_WINDOW = 4096  # a known shape's trigger is a few characters: matched in a window, not the text


def _triggers(text: str) -> Iterator[tuple[int, str]]:
    """Where each trigger starts, and what it matched, in text order."""
    if _BYTES_FINDER is None:
        for m in _FINDER.finditer(text):
            yield m.start(), m.group()
        return
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate has no UTF-8: kept as bytes
    first = _BYTES_FINDER.search(data)
    if first is not None:
        at, ascii_ = first.start(), len(data) == len(text)
        char = at if ascii_ else len(data[:at].decode("utf-8", "surrogatepass"))
        yield from _from(data, at, len(data), char, ascii_)


def _from(data: bytes, start: int, end: int, char: int, ascii_: bool
          ) -> Iterator[tuple[int, str]]:
    """The triggers in data[start:end], in characters from where `char` is the character offset of
    `start` (a trigger starts there). Byte offsets become character offsets by decoding the
    stretches between triggers (nothing to decode in ASCII, most recorded text)."""
    done = start
    for m in _BYTES_FINDER.finditer(data, start, end):
        pos = m.start()
        if ascii_:
            char += pos - done
        else:
            char += len(data[done:pos].decode("utf-8", "surrogatepass"))
        done = pos
        yield char, m.group().decode("utf-8", "surrogatepass")


class Span(NamedTuple):
    start: int
    end: int
    kind: str


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_NAME_CHARS = _TOKEN_CHARS | {"."}


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_E = r"(?![A-Za-z0-9_\-])"  # the token ends here
# Known shapes, each tried where its trigger starts (a token must start there too).
_SHAPES: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    "sk-": (("anthropic-key", _c(r"sk-ant-[A-Za-z0-9]{2,12}-[A-Za-z0-9_\-]{20,}")),
            ("openai-key", _c(r"sk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_\-]*[0-9])"
                              r"(?=[A-Za-z0-9_\-]*[A-Z])[A-Za-z0-9_\-]{20,}" + _E))),
    "akia": (("aws-access-key-id", _c(r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])")),),
    "gh": (("github-token", _c(r"gh[opusr]_[A-Za-z0-9]{36,251}" + _E)),),
    "github_pat_": (("github-token", _c(r"github_pat_[A-Za-z0-9_]{22,251}" + _E)),),
    "gl": (("gitlab-token", _c(r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\-]{20,}" + _E)),),
    "xox": (("slack-token", _c(r"xox[abposer]-[0-9A-Za-z\-]{10,}")),),
    "hooks.slack.com/": (("slack-token", _c(r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/"
                                             r"[A-Za-z0-9]+")),),
    "k_": (("stripe-key", _c(r"[sr]k_(?:live|test)_[0-9A-Za-z]{16,}" + _E)),),
    "aiza": (("google-api-key", _c(r"AIza[0-9A-Za-z_\-]{35}" + _E)),),
    "npm_": (("npm-token", _c(r"npm_[A-Za-z0-9]{36}" + _E)),),
    "hf_": (("huggingface-token", _c(r"hf_[A-Za-z0-9]{34,}" + _E)),),
    "eyj": (("jwt", _c(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _E)),),
}
_AZURE = _c(r"(?i:accountkey|sharedaccesskey|[?&]sig)=([A-Za-z0-9%+/]{30,}={0,2})")
_PEM_BEGIN = _c(r"-----BEGIN[A-Z0-9 ]{0,40} $")
_PEM_END = _c(r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")

# After a secret-like name: the assignment and its value (`password = "…"`, `"token": "…"`,
# `_authToken=…`, `api_key: …`).
_ASSIGNED = _c(r"[\"']?[ \t]*(?:=|:|:=|=>)[ \t]*(?:\"([^\"\n]{4,})\"|'([^'\n]{4,})'|([^\s\"',;`]{4,}))")
_BEARER = _c(r"[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)")
_USERINFO = _c(r"[^\s:/@\"'<>]{1,64}:([^\s@/\"'<>]{3,128})@[\w.\-]")

# A placeholder, a reference to where the value lives, or a type: not a credential.
_NOT_A_VALUE = re.compile(
    r"(?i:^(?:[\$%<{\[(*#]|\W*$|x{4,}|\*{3,}|\.{3}|(?:process\.env|os\.environ|env|self|this|config"
    r"|settings|secrets|options|args|params|props)\b|(?:your|my|some|example|sample|dummy|fake|test"
    r"|placeholder|changeme|redacted|replace|insert|enter|todo|xxx|none|null|nil|true|false"
    r"|undefined|string|str|number|int|bool|boolean|required|optional|secret|password|token"
    r"|await|new|function|async|lambda|require|import|get|read|load)"
    r"(?:$|[-_ .])))|[(){}]|\.\w+\(|^[a-z_]+(?:\.[a-z_][a-z_0-9]*)+$|^[A-Z][A-Z0-9_]+$")


def _starts_token(text: str, pos: int) -> bool:
    return pos == 0 or text[pos - 1] not in _TOKEN_CHARS


def _shape_key(low: str) -> str:
    if low.startswith(("sk-", "gh", "gl", "xox")):
        return low[:2] if low[:2] in ("gh", "gl") and low != "github_pat_" else low[:3]
    if low.endswith(("k_live_", "k_test_")):
        return "k_"
    return "akia" if low == "asia" else low


def _shape(text: str, pos: int, low: str) -> Span | None:
    if not _starts_token(text, pos):
        return None
    for kind, pattern in _SHAPES.get(_shape_key(low), ()):
        m = pattern.match(text, pos)
        if m:
            return Span(m.start(), m.end(), kind)
    return None


def _private_key(text: str, pos: int) -> Span | None:
    begin = text.rfind("-----BEGIN", max(0, pos - 50), pos)
    if begin < 0 or not _PEM_BEGIN.match(text[begin:pos]):
        return None
    end = _PEM_END.search(text, pos)
    return Span(begin, end.end() if end else len(text), "private-key")


def _value_ok(value: str, password: bool) -> bool:
    if _NOT_A_VALUE.search(value):
        return False
    if password:
        return len(value) >= 4
    # Other names need a value that looks generated: a digit, or length.
    return len(value) >= 8 and (any(c.isdigit() for c in value) or len(value) >= 20)


def _named(text: str, pos: int, end: int, word: str) -> Span | None:
    m = _ASSIGNED.match(text, end)
    if m is None or (end < len(text) and text[end] in _TOKEN_CHARS):
        return None
    start = pos
    while start > 0 and pos - start < 64 and text[start - 1] in _NAME_CHARS:
        start -= 1
    name = text[start:end].lower()
    if word == "_key" and not text[start:end].isupper():
        return None  # `cache_key = …` is code; `SOME_KEY=…` is an environment variable
    g = 1 if m.group(1) is not None else 2 if m.group(2) is not None else 3
    value = m.group(g)
    shape = _known(text, m.start(g))
    if shape is not None:
        return shape
    password = word.startswith("pass") or word == "pwd"
    kind = ("aws-secret-access-key" if "aws" in name and "secret" in name
            else "password" if password else "generic-secret")
    return Span(m.start(g), m.end(g), kind) if _value_ok(value, password) else None


def _known(text: str, pos: int) -> Span | None:
    """A known shape starting at pos (assigned to a name, after `Bearer`): it keeps its kind."""
    window = text[pos:pos + _KNOWN_WINDOW]
    if _BYTES_FINDER is None:
        trigger = _FINDER.match(window)
        return _shape(text, pos, trigger.group().lower()) if trigger is not None else None
    found = _BYTES_FINDER.match(window.encode("utf-8", "surrogatepass"))
    return (_shape(text, pos, found.group().decode("utf-8", "surrogatepass").lower())
            if found is not None else None)
    return _shape(text, pos, trigger.group().lower()) if trigger is not None else None


def _at(text: str, pos: int, matched: str) -> Span | None:
    low = matched.lower()
    if low == "private key":
        return _private_key(text, pos)
    if low.startswith("://"):
        u = _USERINFO.match(text, pos + 3)
        if u and not _NOT_A_VALUE.search(u.group(1)):
            return _known(text, u.start(1)) or Span(u.start(1), u.end(1), "connection-string")
        return None
    if low.startswith(("bearer", "basic")):
        b = _BEARER.match(text, pos + 6 if low[1] == "e" else pos + 5)
        if b and _starts_token(text, pos) and not _NOT_A_VALUE.search(b.group(1)):
            return _known(text, b.start(1)) or Span(b.start(1), b.end(1), "bearer-token")
        return None
    if low.endswith(("accountkey=", "sig=")):
        a = _AZURE.match(text, pos)
        return Span(a.start(1), a.end(1), "azure-storage-key") if a else None
    if low[-1] in "=:":
        word = _WORD.match(low)
        return _named(text, pos, pos + len(word.group()), word.group()) if word else None
    return _shape(text, pos, low)


def find(text: str) -> list[Span]:
    """The credentials in `text`, in text order, none overlapping (the first one found wins)."""
    return _find(text, _triggers(text))[0]


def _find(text: str, triggers: Iterable[tuple[int, str]]) -> tuple[list[Span], bool]:
    """The credentials at these triggers, and whether a control byte was seen."""
    spans: list[Span] = []
    controls = False
    last = 0
    for pos, matched in triggers:
        if pos < last:
            continue
        if len(matched) == 1:
            controls = True
            continue
        span = _at(text, pos, matched)
        if span is not None and span.start >= last:
            spans.append(span)
            last = span.end
    return spans, controls


def strip_controls(text: str) -> str:
    """`text` without control bytes and escape sequences (newline and tab stay)."""
    return _CONTROLS.sub("", text)


_NONE: Counter[str] = Counter()  # what scan counts in a clean text: shared, never to be changed


def scan(text: str, *, reveal: bool = False) -> tuple[str, Counter[str]]:
    """`text` scrubbed, and how many credentials of each kind it held (a clean text's count is
    one shared empty Counter: read it, never change it)."""
    triggers = _triggers(text)
    first = next(triggers, None)
    if first is None:
        return text, _NONE
    return _scanned(text, itertools.chain((first,), triggers), reveal)


def _scanned(text: str, triggers: Iterable[tuple[int, str]], reveal: bool
             ) -> tuple[str, Counter[str]]:
    spans, controls = _find(text, triggers)
    if controls:  # rare: strip, then find again in what is left
        text = strip_controls(text)
        spans = find(text)
    if not spans:
        return text, _NONE
    kinds = Counter(s.kind for s in spans)
    if reveal:
        return text, kinds
    parts: list[str] = []
    pos = 0
    for s in spans:
        parts += (text[pos:s.start], MARK.format(s.kind))
        pos = s.end
    parts.append(text[pos:])
    return "".join(parts), kinds


def scan_many(texts: list[str], *, reveal: bool = False
              ) -> tuple[list[tuple[str, Counter[str]]], list[bytes] | None]:
    """`scan` of each text, the texts searched together, and each text's UTF-8 (surrogates kept,
    as textcodec packs them; None without RE2). Each text is encoded once, and the encodings,
    joined by newlines, are searched in one call (a first index's texts, a batch at a time: one
    call per text cost more than its search). No trigger holds a newline, so none spans two
    texts; a text where one starts is scanned alone from there, and the search resumes after
    it."""
    if _BYTES_FINDER is None:
        return [scan(t, reveal=reveal) for t in texts], None
    out: list[tuple[str, Counter[str]]] = [(t, _NONE) for t in texts]
    datas = [t.encode("utf-8", "surrogatepass") for t in texts]
    data = b"\n".join(datas)
    starts = list(itertools.accumulate((len(d) + 1 for d in datas), initial=0))
    at = 0
    while (m := _BYTES_FINDER.search(data, at)) is not None:
        hit = m.start()
        k = bisect.bisect_right(starts, hit) - 1
        text, own, end = texts[k], datas[k], starts[k + 1] - 1
        ascii_ = len(own) == len(text)
        rel = hit - starts[k]
        char = rel if ascii_ else len(own[:rel].decode("utf-8", "surrogatepass"))
        out[k] = _scanned(text, _from(data, hit, end, char, ascii_), reveal)
        at = end + 1
    return out, datas


def scrub(text: str, *, reveal: bool = False) -> str:
    """The one call for any text leaving the server: controls stripped, credentials masked as
    `[redacted: <kind>]` unless a person asked to reveal them."""
    return scan(text, reveal=reveal)[0]


Scrub = Callable[[str], str]
