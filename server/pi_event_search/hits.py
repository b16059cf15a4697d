"""The JSON shape of hits and nodes, and bounded snippets with exact match offsets.

Snippets are cut from the indexed text, whitespace collapsed, never paraphrased. Match offsets are
Unicode code points into the snippet.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

from pi_event_search.eventref import format_ref
from pi_event_search.store import unpack

SNIPPET_CHARS = 200
WINDOW = 400  # raw characters considered before whitespace is collapsed
FOLD_CHARS = 20_000  # how far the slow, diacritic-folding scan looks
MAX_SPANS = 40  # matches looked at to place the window (the first ones, in text order)
_OPEN, _CLOSE = "\x01", "\x02"
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
_TOKEN = re.compile(r"[^\W_]+")


def source(path: str, line: int, byte_off: int) -> dict[str, Any]:
    return {"path": path, "uri": Path(path).as_uri(), "line": line, "byteOffset": byte_off}


def hit_from_row(row: sqlite3.Row, score: float, frag: str, kind: str,
                 snippet: tuple[str, list[list[int]]]) -> dict[str, Any]:
    """A hit from an events row joined to its session (entry_id, entry_type, role, tool_name,
    is_error, ts, line, byte_off, branch_state, context_role, selection_state, session_id, cwd,
    name, path)."""
    text, matches = snippet
    return {
        "ref": format_ref(row["session_id"], row["entry_id"]), "sessionId": row["session_id"],
        "entryId": row["entry_id"], "fragmentId": frag, "kind": kind,
        "entryType": row["entry_type"], "role": row["role"], "toolName": row["tool_name"],
        "isError": bool(row["is_error"]), "timestamp": row["ts"],
        "snippet": text, "matches": matches, "score": round(float(score), 4),
        "cwd": row["cwd"], "sessionName": row["name"], "branchState": row["branch_state"],
        "contextRole": row["context_role"], "selectionState": row["selection_state"],
        "source": source(row["path"], row["line"], row["byte_off"]),
    }


def snippets(conn: sqlite3.Connection, match: str | None, fids: list[int]
             ) -> dict[int, tuple[str, list[list[int]]]]:
    """Snippet and match offsets per fragment id, cut from the stored (bounded) text."""
    words, prefix = _match_words(match)
    out: dict[int, tuple[str, list[list[int]]]] = {}
    for fid in fids:
        row = conn.execute("SELECT text FROM fragments WHERE fid = ?", (fid,)).fetchone()
        out[fid] = collapse(_mark(unpack(row["text"]) if row else "", words, prefix))
    return out


def fold(token: str) -> str:
    """Lower case without diacritics, as the FTS tokenizer sees a token."""
    decomposed = unicodedata.normalize("NFKD", token.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _match_words(match: str | None) -> tuple[set[str], str | None]:
    if not match:
        return set(), None
    terms = [t.replace('""', '"') for t in _QUOTED.findall(match)]
    words = {fold(w) for term in terms for w in term.split()}
    prefix = fold(terms[-1].split()[-1]) if match.endswith(" *") and terms else None
    return words, prefix


def _spans(text: str, words: set[str], prefix: str | None) -> list[tuple[int, int, str]]:
    """Where the query's words occur. A regex finds them fast; only when it finds nothing (a
    diacritic the tokenizer folds, say "cafe" for "café") is every token folded, in a bounded
    head of the text."""
    alternatives = [re.escape(w) for w in sorted(words, key=len, reverse=True)]
    if prefix is not None:
        alternatives.append(re.escape(prefix) + r"[^\W_]*")
    if not alternatives:
        return []
    pattern = re.compile(r"(?<![^\W_])(?:" + "|".join(alternatives) + r")(?![^\W_])",
                         re.IGNORECASE)
    spans = [(m.start(), m.end(), m.group().lower())
             for m in itertools.islice(pattern.finditer(text), MAX_SPANS)]
    if spans or text.isascii():
        return spans
    for m in _TOKEN.finditer(text, 0, FOLD_CHARS):
        tok = fold(m.group())
        if tok in words or (prefix is not None and tok.startswith(prefix)):
            spans.append((m.start(), m.end(), tok))
            if len(spans) >= MAX_SPANS:
                break
    return spans


def _mark(text: str, words: set[str], prefix: str | None) -> str:
    """A window of the text around the densest matches, matches wrapped in markers."""
    spans = _spans(text, words, prefix)
    if not spans:
        return text[:WINDOW]
    best = max(range(len(spans)), key=lambda i: (
        len({tok for s, _, tok in spans[i:i + 40] if s - spans[i][0] < WINDOW // 2}), -i))
    begin = max(0, spans[best][0] - WINDOW // 5)
    while begin > 0 and not text[begin - 1].isspace() and spans[best][0] - begin < WINDOW // 3:
        begin -= 1
    end = min(len(text), begin + WINDOW)
    parts = ["…" if begin > 0 else ""]
    pos = begin
    for s, e, _ in spans:
        if s < begin or e > end:
            continue
        parts += [text[pos:s], _OPEN, text[s:e], _CLOSE]
        pos = e
    parts += [text[pos:end], "…" if end < len(text) else ""]
    return "".join(parts)


def collapse(marked: str) -> tuple[str, list[list[int]]]:
    """Collapse whitespace, drop the markers, bound the length; offsets follow the text."""
    chars: list[str] = []
    matches: list[list[int]] = []
    start: int | None = None
    space = False
    for ch in marked:
        if ch == _OPEN:
            start = len(chars) + (1 if space and chars else 0)
            continue
        if ch == _CLOSE:
            if start is not None:
                matches.append([start, len(chars)])
            start = None
            continue
        if ch.isspace():
            space = True
            continue
        if space and chars:
            chars.append(" ")
        space = False
        chars.append(ch)
    text = "".join(chars)
    if len(text) <= SNIPPET_CHARS:
        return text, matches
    first = matches[0][0] if matches else 0
    begin = max(0, min(first - SNIPPET_CHARS // 4, len(text) - SNIPPET_CHARS))
    end = begin + SNIPPET_CHARS
    lead = "…" if begin > 0 else ""
    trail = "…" if end < len(text) else ""
    cut = lead + text[begin:end] + trail
    shift = len(lead) - begin
    kept = [[s + shift, min(e, end) + shift] for s, e in matches if s >= begin and s < end]
    return cut, kept


def node_from_row(row: sqlite3.Row) -> dict[str, Any]:
    """A node from an events row joined to its session (entry_id, entry_type, role, kinds, ts,
    preview, branch_state, line, byte_off, session_id, path)."""
    kinds = row["kinds"]
    return {
        "ref": format_ref(row["session_id"], row["entry_id"]), "sessionId": row["session_id"],
        "entryId": row["entry_id"], "entryType": row["entry_type"], "role": row["role"],
        "kind": (kinds.split(",")[0] or None) if kinds else None, "timestamp": row["ts"],
        "preview": row["preview"], "branchState": row["branch_state"],
        "source": source(row["path"], row["line"], row["byte_off"]),
    }


MASKED: dict[str, Any] = {"masked": True}
