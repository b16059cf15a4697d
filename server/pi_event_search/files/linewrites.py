"""Whether one `edit` or `write` call wrote a line: the evidence rules of a line's origin.

A call wrote the line (its trimmed text, the needle) when one of its replacements
- holds the whole line more often than its old text does (the line was written whole), or
- changed part of it: a one-line replacement whose new text the line holds, with the old text no
  longer there (a value bumped, a name or an argument changed, an edit that stops before the
  line's trailing `,` or `;`); or a multi-line replacement whose changed first line ends the line
  (the edit began inside it) or whose changed last line begins it (the edit ended inside it).
A partial replacement shorter than MIN_PART characters (a digit, a character, `true`) is written
in too many places to tell: it is counted as `short`, never as evidence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from pi_event_search.query.filepaths import TargetFile
from pi_event_search.source.pitools import FILE_CHANGE_TOOLS

MIN_PART = 5


@dataclass(frozen=True, slots=True)
class Write:
    block: int  # index of the tool call in message.content
    text: str  # the replacement's new text
    mark: str  # what of it the line holds (the whole line, or the changed part)


@dataclass(slots=True)
class Needle:
    """The line looked for, and whether a too-short partial replacement was seen for it."""

    text: str
    short: bool = False

    def windows(self) -> tuple[str, ...]:
        """Every MIN_PART-character piece of the line, raw and as escaped inside JSON: a call's
        indexed text that holds none of them holds no replacement long enough to count."""
        escaped = orjson.dumps(self.text).decode()[1:-1]
        return tuple({s[i:i + MIN_PART] for s in (self.text, escaped)
                      for i in range(len(s) - MIN_PART + 1)})


def written(entry: dict[str, Any], target: TargetFile, cwd: str | None, needle: Needle
            ) -> Iterator[Write]:
    """The change calls of an assistant entry that wrote the line into the target file."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for i, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        args = block.get("arguments")
        if block.get("name") not in FILE_CHANGE_TOOLS or not isinstance(args, dict):
            continue
        if not target.holds(args.get("path", args.get("file_path")), cwd):
            continue
        for new, old in _replacements(block["name"], args):
            mark = _evidence(new, old, needle)
            if mark is not None:
                yield Write(i, new, mark)
                break


def indexed_evidence(indexed: str, needle: Needle) -> bool | None:
    """Whether a change call wrote the line, judged on its indexed text when that holds its
    `edits` array whole (compact JSON on one line, as the index writes it): the prefilter that
    spares reading back every call of a busy file. None when the text cannot tell (another
    argument shape, or a text the index bounded)."""
    at = indexed.find("\nedits: [")
    if at < 0:
        return None
    end = indexed.find("\n", at + 1)
    try:
        edits = orjson.loads(indexed[at + len("\nedits: "):end if end >= 0 else None])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(edits, list):
        return None
    pairs = [p for p in (_pair(e) for e in edits if isinstance(e, dict)) if p is not None]
    found = [_evidence(new, old, needle) for new, old in pairs]  # each may mark `short`
    return any(mark is not None for mark in found)


def _evidence(new: str, old: str, needle: Needle) -> str | None:
    line = needle.text
    if new.count(line) > old.count(line):
        return line
    part = _changed_part(new, old, line)
    if part is None:
        return None
    if len(part) < MIN_PART or not any(c.isalnum() for c in part):
        needle.short = True
        return None
    return part


def _changed_part(new: str, old: str, line: str) -> str | None:
    """The part of the replacement the line holds where the old text is gone, if any."""
    if not old.strip():  # a whole file written, or text inserted: only whole lines count
        return None
    if "\n" not in new:
        part, gone = new.strip(), old.strip()
        if not part or part not in line or gone == part:
            return None
        return part if gone not in line.replace(part, "\0", 1) else None
    first, last = new.partition("\n")[0].strip(), new.rpartition("\n")[2].strip()
    if first and line.endswith(first) and first != old.partition("\n")[0].strip():
        return first
    if last and line.startswith(last) and last != old.rpartition("\n")[2].strip():
        return last
    return None


def _replacements(name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    """(new text, old text) pairs of a call, in every argument shape Pi's tools accept."""
    if name == "write":
        content = args.get("content")
        return [(content, "")] if isinstance(content, str) else []
    edits = args.get("edits")
    if isinstance(edits, str):  # some models send the array as a JSON string; Pi parses it
        try:
            edits = orjson.loads(edits)
        except orjson.JSONDecodeError:
            edits = None
    listed = [e for e in (edits if isinstance(edits, list) else []) if isinstance(e, dict)]
    pairs = [_pair(e) for e in [*listed, args]]  # args: the legacy single replacement
    return [p for p in pairs if p is not None]


def _pair(edit: dict[str, Any]) -> tuple[str, str] | None:
    new, old = edit.get("newText"), edit.get("oldText")
    if not isinstance(new, str):
        return None
    return new, old if isinstance(old, str) else ""
