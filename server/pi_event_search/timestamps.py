"""Timestamps as the index compares them: epoch milliseconds, UTC when a text names no zone."""

from __future__ import annotations

from datetime import UTC, datetime

from pi_event_search.errors import EngineError


def parse_time(value: str | None, what: str = "time") -> int | None:
    """ISO date or datetime (UTC when no zone) -> epoch milliseconds."""
    if value is None or value == "":
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise EngineError(f"{what}: not an ISO date or time: {value!r}") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)
