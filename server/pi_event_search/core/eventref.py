"""Event identity: a reference `pi-event:<sessionId>/<entryId>[#<fragmentId>]`, parsed on its
own or found inside any text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from pi_event_search.core.errors import InvalidRef

SCHEME = "pi-event:"
# The reference grammar (docs/protocol.md): session id / entry id, then an optional fragment.
REF_BODY = r"([A-Za-z0-9][A-Za-z0-9._-]*)/([A-Za-z0-9][A-Za-z0-9._~-]*)(?:#([a-z.]+:[0-9]+))?"
_WHOLE = re.compile(rf"^(?:{SCHEME})?{REF_BODY}$")
# Not glued to an id character before it: `xpi-event:` is a word, not a reference.
PATTERN = re.compile(rf"(?<![A-Za-z0-9._~-]){SCHEME}{REF_BODY}")
# An id never ends in these when it is followed by prose: "see pi-event:S/E." ends at E.
SENTENCE_END = ".-~"


def format_ref(session_id: str, entry_id: str) -> str:
    return f"{SCHEME}{session_id}/{entry_id}"


@dataclass(frozen=True, slots=True)
class Ref:
    session_id: str
    entry_id: str
    fragment: str | None = None

    @staticmethod
    def parse(text: str) -> Ref:
        m = _WHOLE.match(text.strip())
        if m is None:
            raise InvalidRef(f"not an event reference: {text[:200]!r} "
                             "(expected SESSION_ID/ENTRY_ID or pi-event:SESSION_ID/ENTRY_ID)")
        return Ref(m.group(1), m.group(2), m.group(3))

    def __str__(self) -> str:
        return format_ref(self.session_id, self.entry_id)


@dataclass(frozen=True, slots=True)
class Found:
    ref: Ref
    line: int
    start: int  # code point column of the first character
    end: int


def _trim(m: re.Match[str]) -> tuple[str, str, str | None, int]:
    """A reference at the end of a sentence keeps its id, not the full stop after it. With a
    fragment the id is kept as written: the `#` shows that it went on."""
    session, entry, frag = m.group(1), m.group(2), m.group(3)
    end = m.end()
    if frag is None:
        trimmed = entry.rstrip(SENTENCE_END)  # never empty: ids start with a letter or digit
        end -= len(entry) - len(trimmed)
        entry = trimmed
    return session, entry, frag, end


def in_text(text: str) -> Iterator[Found]:
    for line_no, line in enumerate(text.splitlines()):
        for m in PATTERN.finditer(line):
            session, entry, frag, end = _trim(m)
            yield Found(Ref(session, entry, frag), line_no, m.start(), end)


def at(text: str, line: int, column: int) -> Found | None:
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return None
    for m in PATTERN.finditer(lines[line]):
        session, entry, frag, end = _trim(m)
        if m.start() <= column <= end:
            return Found(Ref(session, entry, frag), line, m.start(), end)
    return None
