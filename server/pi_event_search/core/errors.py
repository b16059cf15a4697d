"""The domain's errors, below every module that raises them: the CLI and the protocol layer map
each one to an exit code or a JSON-RPC error code."""

from __future__ import annotations


class EngineError(Exception):
    pass


class NotFound(EngineError):
    """No such event, or one the caller may not see: the same answer for both."""

    def __init__(self, what: str) -> None:
        super().__init__(f"Event not found: {what}")


class SourceUnreadable(EngineError):
    """An event is indexed, but its session file cannot be read now (permissions): not the
    "search again" of an event whose file changed."""


class InvalidRef(EngineError):
    pass
