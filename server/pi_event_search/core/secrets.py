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

Linear in the text, whatever it holds: a value a rule may take is bounded (`VALUE_MAX` characters
read, a run longer than that is one value), a name whose value was rejected makes the names inside
that value skipped, and no trigger consumes a character a known shape could start at, so a key of a
known shape is found wherever it sits (after a rejected `Bearer`, inside a rejected value).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple, TypeVar, cast

MARK = "[redacted: {}]"
_T = TypeVar("_T")

_CONTROL_CLASS = r"\x00-\x08\x0b-\x1f\x7f-\x9f\x{202a}-\x{202e}\x{2066}-\x{2069}"
# The one control-byte rule, shared with the clients through tests/data/control-vectors.json
# (clients/neovim/lua/pi_events/untrusted.lua, clients/pi/src/untrusted.ts,
# clients/vscode/src/core/untrusted.ts), bounded so that no byte removes more than its own sequence:
# - CSI `ESC [`, up to 64 parameter and 16 intermediate bytes, and its final byte when there is one;
# - `ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _` (OSC, DCS, SOS, PM, APC) with a body of at most
#   4096 printable ASCII characters and its terminator (BEL, `ESC \\` or ST): only a terminated
#   string goes whole; an unterminated one loses its two introducing characters only;
# - any other ESC with up to 16 intermediates and its final character (`ESC 7`, `ESC ( B`);
# - any other C0 byte but tab and newline, DEL, each C1 character alone (U+0080..U+009F: 8-bit
#   CSI and OSC too, as their bytes are far more often Latin-1 mojibake, `Ý` read as `Ã\\x9d`, than
#   controls a terminal in UTF-8 obeys), and the bidirectional overrides that reorder what is shown.
_CONTROLS = re.compile(
    r"\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]?"
    r"|\x1b[\]PX^_][ -~]{0,4096}(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]{0,16}[0-~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_NAMES = (r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
          r"|auth[_-]?key|credentials?|_key|_pass")
# A name may go on after its secret word (`SECRET_KEY_BASE`, `DB_PASS_FILE`): `_NAME_MORE`.
_NAME_MORE = r"(?:_[a-z]+){0,3}"
# Names count only when a value is assigned to them, so the trigger says so: `token` in prose
# costs nothing.
_TRIGGERS = (r"(?i)private key|sk-|akia|asia|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt)-"
             r"|xox[abposer]-|hooks\.slack\.com/|[sr]k_(?:live|test)_|aiza|npm_|hf_|accountkey="
             r"|sharedaccesskey=|[?&]sig=|eyj|(?:bearer|basic)[ \t]+"
             r"|://[^\s:/@]{0,64}:[^\s@/]{3,128}@|(?:" + _NAMES + r")" + _NAME_MORE
             + r"\\?[\"']?[ \t]*(?:=|:)")
# The triggers of known shapes alone, matched where a value starts (to name its kind).
_SHAPE_START = re.compile(_TRIGGERS.split("|(?:bearer", 1)[0].replace("|eyj", "") + "|eyj")
# A trigger never consumes a character a value could start at: a known shape right after it (or
# inside the value a name's rule rejects) is a trigger of its own. (`://user:pass@` does, and its
# rule looks for a known shape in both parts.)
_WORD = re.compile(r"[a-z_-]+")

_PY_FINDER = re.compile(_TRIGGERS + "|[" + _CONTROL_CLASS.replace(r"\x{", r"\u").replace("}", "") + "]")


def _compile_triggers() -> tuple[Any, Any]:
    """The trigger regex for str, and for UTF-8 bytes (None without RE2)."""
    try:
        import re2  # type: ignore[import-untyped]

        pattern = _TRIGGERS + "|[" + _CONTROL_CLASS + "]"
        return re2.compile(pattern), re2.compile(pattern.encode())
    except ImportError:  # about six times slower on large texts; same results
        return _PY_FINDER, None


_FINDER, _BYTES_FINDER = _compile_triggers()
# RE2 searches UTF-8: given a str, its wrapper encodes it and converts every offset between bytes
# and characters, each conversion a pass over the text (most of the masking's cost in a first
# index). So a text is encoded once and searched as bytes; most texts hold no trigger and cost
# just that. Where one does, byte offsets become character offsets by decoding the stretches
# between triggers (none to decode in ASCII, most recorded text).


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
        yield from _from(text, data, at, len(data), char, ascii_)


_DENSE = 256  # triggers this close together (16 bytes apart on average) are searched with re


def _from(text: str, data: bytes, start: int, end: int, char: int, ascii_: bool
          ) -> Iterator[tuple[int, str]]:
    """The triggers of `text` (its UTF-8 is data[start:end]), in characters from where `char` is
    the character offset of `start` (a trigger starts there). Byte offsets become character
    offsets by decoding the stretches between triggers (nothing to decode in ASCII, most recorded
    text). RE2's Python wrapper costs microseconds a match: where triggers are dense (a run of
    `token=`), Python's re goes on over the str (C all the way, no offsets to convert)."""
    done = start
    for n, m in enumerate(_BYTES_FINDER.finditer(data, start, end), 1):
        pos = m.start()
        if ascii_:
            char += pos - done
        else:
            char += len(data[done:pos].decode("utf-8", "surrogatepass"))
        done = pos
        matched = m.group().decode("utf-8", "surrogatepass")
        yield char, matched
        if n == _DENSE and pos - start < _DENSE * 16:
            for p in _PY_FINDER.finditer(text, char + len(matched)):
                yield p.start(), p.group()
            return


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
            # A project, service or admin key is one by its prefix alone; a bare `sk-` needs a
            # digit and a capital too (`sk-learn-...` is a word).
            ("openai-key", _c(r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|(?:None-)?"
                              r"(?=[A-Za-z0-9_\-]*[0-9])(?=[A-Za-z0-9_\-]*[A-Z])"
                              r"[A-Za-z0-9_\-]{20,})" + _E))),
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
VALUE_MAX = 512  # the characters a rule reads of a value: what keeps masking linear in the text


def _v(pattern: str) -> re.Pattern[str]:
    """A rule whose `MAX` is VALUE_MAX."""
    return _c(pattern.replace("MAX", str(VALUE_MAX)))


_AZURE = _v(r"(?i:accountkey|sharedaccesskey|[?&]sig)=([A-Za-z0-9%+/]{30,MAX}={0,2})")
_PEM_BEGIN = _c(r"-----BEGIN[A-Z0-9 ]{0,40} $")
_PEM_END = _c(r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")

# After a secret-like name: the assignment (`password = "…"`, `"token": "…"`, `_authToken=…`,
# `api_key: …`, `key := …`, `key => …`), then a quoted value or a bare run up to white space or
# a quote (`;`, `,` and brackets inside it are the value's: `hunter2;xyz` is one value).
_ASSIGN = _c(r"(?:\\?[\"'])?[ \t]{0,16}(?:=>|:=|=|:)[ \t]{0,16}")
_QUOTED = {q: _v(q + "([^" + q + r"\n]{0,MAX})(" + q + "?)") for q in "\"'"}
# JSON inside a string (`-d "{\\"password\\":\\"…\\"}"`): the quotes are escaped.
_ESCAPED = {q: _v(r"\\" + q + r"([^" + q + r"\\\n]{0,MAX})(\\" + q + "|)") for q in "\"'"}
_BARE = _v(r"[^\s\"'`]{1,MAX}")
_RUN = _c(r"[^\s\"'`]*")
_BEARER = _v(r"[A-Za-z0-9._~+/\-]{16,MAX}=*")
_BASIC = _v(r"[A-Za-z0-9+/]{4,MAX}={0,2}(?![A-Za-z0-9_\-])")
_USERINFO = _c(r"([^\s:/@\"'<>]{0,64}):([^\s@/\"'<>]{3,128})@[\w.\-]")

# A placeholder, a reference to where the value lives, code, or a type: not a credential.
_NOT_A_VALUE = re.compile(
    r"(?i:^(?:[<{\[(]|\W*$|x{4,}|\*{3,}|\.{3}|(?:process\.env|os\.environ|env|self|this|config"
    r"|settings|secrets|options|args|params|props|await|new|function|async|lambda|require|import"
    r")\b|(?:none|null|nil|true|false|undefined|string|str|number|int|bool|boolean|required"
    r"|optional)(?:$|[-_ .|?])))"
    r"|\.\w+\(|^[A-Za-z_$][\w$.]*\(|^[a-z_]+(?:\.[a-z_][a-z_0-9]*)+$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
# Words that start a placeholder (`your-api-key-here`, `my_password`, `changeme`): unless the
# value also holds capitals, small letters and digits, as `my-Secret-Pass-123` does.
_PLACEHOLDER = re.compile(
    r"(?i)(?:your|my|some|example|sample|dummy|fake|test|placeholder|changeme|redacted|replace"
    r"|insert|enter|todo|xxx|secret|password|token|get|read|load)(?:$|[-_ .])")
# A value that is all a reference: `$VAR`, `${VAR}`, `$(cmd)`, `%s`, `%(name)s`, `%VAR%`, `#{x}`,
# `{{ x }}`. A sigil before anything else is part of a value: `$uperS3cret!`, `#Secr3tPass`.
_REFERENCE = re.compile(
    r"\$(?:\{[^}]*\}|\([^)]*\)|[A-Za-z_]\w*)|%(?:\([^)]*\))?[sdrif]|%\w+%|[%#]\{[^}]*\}|\{\{.*\}\}")
_SYMBOLS = frozenset("!@#$%^&*+~?")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _starts_token(text: str, pos: int) -> bool:
    return pos == 0 or text[pos - 1] not in _TOKEN_CHARS


def _shape_key(low: str) -> str:
    if low.startswith(("sk-", "gh", "gl", "xox")):
        return low[:2] if low[:2] in ("gh", "gl") and low != "github_pat_" else low[:3]
    if low.endswith(("k_live_", "k_test_")):
        return "k_"
    return "akia" if low == "asia" else low


# Each literal trigger of a known shape and its patterns, looked up once per trigger (a run of
# ` sk-` costs a dict lookup and a failed match each, not a chain of string tests).
_SHAPES_OF = {low: _SHAPES[_shape_key(low)] for low in (
    "sk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-",
    "glrt-", "glptt-", *(f"xox{c}-" for c in "abposer"), "hooks.slack.com/", "sk_live_", "sk_test_",
    "rk_live_", "rk_test_", "aiza", "npm_", "hf_", "eyj")}


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


def _not_a_value(value: str) -> bool:
    if _NOT_A_VALUE.search(value) or _REFERENCE.fullmatch(value):
        return True
    return _PLACEHOLDER.match(value) is not None and not (
        any(c.isupper() for c in value) and any(c.islower() for c in value)
        and any(c.isdigit() for c in value))


def _value_ok(value: str, password: bool) -> bool:
    if len(value) < (4 if password else 8) or _not_a_value(value):
        return False
    if password:
        return True
    # Other names need a value that looks generated: a digit, length, all capitals, a symbol.
    return len(value) >= 8 and (any(c.isdigit() for c in value) or len(value) >= 20
                                or (len(value) >= 12 and value.isupper())
                                or not _SYMBOLS.isdisjoint(value))


def _trimmed(text: str, start: int, end: int) -> int:
    """Where a bare value ends once a statement's `;`/`,`, a sentence's `.` or `:` and closing
    brackets it does not open are left out (`f(password=hunter22);`)."""
    counts: dict[str, int] | None = None
    while end > start:
        c = text[end - 1]
        if c in _CLOSERS:
            if counts is None:
                value = text[start:end]
                counts = {k: value.count(k) for k in "()[]{}<>"}
            if counts[_CLOSERS[c]] >= counts[c]:
                break
            counts[c] -= 1
        elif c not in ".,;:":
            break
        end -= 1
    return end


def _named(text: str, pos: int, end: int, word: str) -> tuple[list[Span], int]:
    """The value assigned to the name at pos..end, and how far it reached (the names inside a
    rejected value are skipped: a run of `token=token=…` costs one value)."""
    if end < len(text) and text[end] in _TOKEN_CHARS:
        return [], end
    a = _ASSIGN.match(text, end)
    if a is None:
        return [], end
    vs = a.end()
    quote = text[vs:vs + 1]
    escaped = quote == "\\" and text[vs + 1:vs + 2] in _ESCAPED
    if escaped or (quote and quote in _QUOTED):
        q = (_ESCAPED[text[vs + 1]] if escaped else _QUOTED[quote]).match(text, vs)
        assert q is not None  # matches the empty value
        if not q.group(2):
            return [], q.end()  # no closing quote within VALUE_MAX: not a value
        v0, v1, reach = q.start(1), q.end(1), q.end()
        if v1 - v0 < 4:
            return [], reach
    else:
        b = _BARE.match(text, vs)
        if b is None:
            return [], vs
        v0, reach = vs, b.end()
        if reach - vs == VALUE_MAX:  # a longer run is one value: masked whole, or skipped whole
            reach = _RUN.match(text, reach).end()  # type: ignore[union-attr]
        v1 = _trimmed(text, vs, reach)
    base = _BASE_NAME.match(word)
    more = base is not None and base.end() < len(word)  # `SECRET_KEY_BASE`, `token_count`
    password = word.lstrip("_").startswith("pass") or word == "pwd"
    value = text[v0:min(v1, v0 + VALUE_MAX)]
    if v1 - v0 < 4 or not _value_ok(value, password):
        return [], reach  # a known shape at v0 is a trigger of its own
    start = pos
    while start > 0 and pos - start < 64 and text[start - 1] in _NAME_CHARS:
        start -= 1
    upper = text[start:end].isupper()
    if word.startswith("_") and not more and not upper:
        return [], reach  # `cache_key = …` is code; `SOME_KEY=…` is an environment variable
    if more and (word.endswith(("_file", "_path", "_dir")) or not (upper or _generated(value))):
        return [], reach  # `token_count: 4096`, `DB_PASSWORD_FILE=/run/x`; not `secret_key_base: …`
    shape = _known(text, v0)
    if shape is not None:
        return [shape], max(reach, shape.end)
    name = text[start:end].lower()
    kind = ("aws-secret-access-key" if "aws" in name and "secret" in name
            else "password" if password else "generic-secret")
    return [Span(v0, v1, kind)], reach


_BASE_NAME = re.compile("(?:" + _NAMES + ")")


def _generated(value: str) -> bool:
    """A value a lower-case name that goes on after its secret word must hold to be masked:
    long, letters and digits (Rails' `secret_key_base: 9f8e…`)."""
    return (len(value) >= 16 and any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value))


def _basic(value: str) -> bool:
    """Whether a `Basic` value is base64 of `user:password` (of any length; `Basic usage` is
    prose)."""
    if len(value.rstrip("=")) % 4 == 1:
        return False
    try:  # unpadded base64 (`Basic dXNlcjpwYXNzdw`) counts as well
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in raw and raw.isprintable()


def _known(text: str, pos: int) -> Span | None:
    """A known shape starting at pos (assigned to a name, after `Bearer`): it keeps its kind."""
    trigger = _SHAPE_START.match(text, pos)
    return _shape(text, pos, trigger.group().lower()) if trigger is not None else None


def _at(text: str, pos: int, low: str) -> tuple[list[Span], int]:
    """The credentials the trigger at pos starts (`low`: what it matched, in small letters), and
    how far a name's value reached (the names that start before it are skipped)."""
    if low[-1] in "=:" and not low.endswith(("accountkey=", "sig=")):
        word = _WORD.match(low)
        return _named(text, pos, pos + len(word.group()), word.group()) if word else ([], pos)
    if low == "private key":
        span = _private_key(text, pos)
        return ([span] if span else []), pos
    if low.startswith("://"):
        u = _USERINFO.match(text, pos + 3)
        if u is None:
            return [], pos
        found = []
        user = _known(text, u.start(1))
        if user is not None and user.end <= u.end(1):
            found.append(user)
        if not _not_a_value(u.group(2)):
            found.append(_known(text, u.start(2)) or Span(u.start(2), u.end(2), "connection-string"))
        return found, pos
    if low.startswith(("bearer", "basic")):
        vs = pos + len(low)
        if not _starts_token(text, pos):
            return [], pos
        if low[1] == "e":
            b = _BEARER.match(text, vs)
            if b is None or _not_a_value(b.group()):
                return [], pos  # a known shape at vs is a trigger of its own
            return [_known(text, vs) or Span(vs, b.end(), "bearer-token")], pos
        b = _BASIC.match(text, vs)
        return ([Span(vs, b.end(), "basic-auth")] if b and _basic(b.group()) else []), pos
    if low.endswith(("accountkey=", "sig=")):
        a = _AZURE.match(text, pos)
        return ([Span(a.start(1), a.end(1), "azure-storage-key")] if a else []), pos
    span = _shape(text, pos, low)
    return ([span] if span else []), pos


def find(text: str) -> list[Span]:
    """The credentials in `text`, in text order, none overlapping (the first one found wins)."""
    return _find(text, _triggers(text))[0]


def _find(text: str, triggers: Iterable[tuple[int, str]]) -> tuple[list[Span], bool]:
    """The credentials at these triggers, and whether a control byte was seen."""
    spans: list[Span] = []
    last = 0  # the end of the last credential: a trigger before it is inside it
    reach = 0  # how far the last name's value reached: a name before it is inside that value
    for pos, matched in triggers:
        if pos < last:
            continue
        if len(matched) == 1:
            return [], True  # rare: the caller strips, then finds again in what is left
        low = matched.lower()
        shapes = _SHAPES_OF.get(low)
        if shapes is not None:  # a known shape's prefix: it must start a token
            if pos == 0 or text[pos - 1] not in _TOKEN_CHARS:
                for kind, pattern in shapes:
                    m = pattern.match(text, pos)
                    if m:
                        spans.append(Span(pos, m.end(), kind))
                        last = m.end()
                        break
            continue
        if pos < reach and low[-1] in "=:" and not low.endswith("sig="):
            continue
        found, reached = _at(text, pos, low)
        if reached > reach:
            reach = reached
        for span in found:
            if span.start >= last:
                spans.append(span)
                last = span.end
    return spans, False


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
        out[k] = _scanned(text, _from(text, data, hit, end, char, ascii_), reveal)
        at = end + 1
    return out, datas


def scrub(text: str, *, reveal: bool = False) -> str:
    """The one call for any text leaving the server: controls stripped, credentials masked as
    `[redacted: <kind>]` unless a person asked to reveal them."""
    return scan(text, reveal=reveal)[0]


Scrub = Callable[[str], str]


def clean(value: _T, *, reveal: bool = False) -> _T:
    """A JSON-shaped answer with every string in it scrubbed (the keys are the server's own):
    snippets and fragments are masked when indexed, but an answer carries recorded text in other
    fields too (tool names, cwd, session names, file paths, entry ids), and every surface sends
    it through here. The strings are scanned together, as a first index scans a batch."""
    texts: list[str] = []
    _collect(value, texts)
    if not texts:
        return value
    scanned = [text for text, _ in scan_many(texts, reveal=reveal)[0]]
    if all(new is old for new, old in zip(scanned, texts, strict=True)):
        return value  # nothing to mask or strip (the usual answer): no copy of it
    return cast(_T, _rebuild(value, iter(scanned)))


def _collect(value: object, into: list[str]) -> None:
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, into)
    elif isinstance(value, list | tuple):
        for v in value:
            _collect(v, into)


def _rebuild(value: object, scanned: Iterator[str]) -> object:
    if isinstance(value, str):
        return next(scanned)
    if isinstance(value, dict):
        return {k: _rebuild(v, scanned) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, scanned) for v in value]
    if isinstance(value, tuple):
        return tuple(_rebuild(v, scanned) for v in value)
    return value
