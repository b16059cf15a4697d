"""Timestamps as the index compares them: epoch milliseconds, UTC when a text names no zone. The
one parser for entry timestamps (indexing) and for --since/--until (queries), so the two agree
whatever the machine's local zone."""

from __future__ import annotations

from datetime import UTC, datetime

from pi_event_search.core.errors import EngineError


def epoch_ms(value: object) -> int | None:
    """An ISO date or datetime (UTC when no zone) as epoch milliseconds; None if it is not one."""
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def parse_time(value: str | None, what: str = "time") -> int | None:
    """A time given by a user (ISO date or datetime, UTC when no zone) -> epoch milliseconds."""
    if value is None or value == "":
        return None
    ms = epoch_ms(value.strip())
    if ms is None:
        raise EngineError(f"{what}: not an ISO date or time: {value!r}")
    return ms
