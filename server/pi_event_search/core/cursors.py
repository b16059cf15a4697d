"""Page cursors: opaque to clients, bound to one question (query, filters, caller) and to the
index generation they were issued at, so a page never mixes two states of the index."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import orjson


class StaleCursor(ValueError):
    pass


def key(*question: Any) -> str:
    """A short digest of everything that defines the pages (orjson-serialisable)."""
    return hashlib.blake2b(orjson.dumps(list(question)), digest_size=8).hexdigest()


def encode(question: str, gen: int, *position: int) -> str:
    """A cursor for the page at `position` (an offset, or whatever a ranking walks by)."""
    return base64.urlsafe_b64encode(orjson.dumps({"k": question, "g": gen, "o": position})).decode()


def decode(cursor: str, question: str, gen: int, *, other: str, again: str) -> tuple[int, ...]:
    """The position a cursor stands for; StaleCursor when it belongs to `other` question or an
    older index (the message tells the user to `again`)."""
    try:
        data = orjson.loads(base64.urlsafe_b64decode(cursor.encode()))
        position = tuple(int(x) for x in data["o"])
        same, fresh = data["k"] == question, int(data["g"]) == gen
    except (ValueError, KeyError, TypeError) as exc:
        raise StaleCursor("not a cursor issued by this server") from exc
    if not same:
        raise StaleCursor(f"the cursor belongs to another {other}")
    if not fresh:
        raise StaleCursor(f"the index changed since this cursor was issued; {again} again")
    return position
