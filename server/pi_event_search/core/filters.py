"""What a search may be narrowed to, besides its text (docs/protocol.md, piEvents/search)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Filters:
    session_id: str | None = None
    cwd: str | None = None
    kinds: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    since_ms: int | None = None
    until_ms: int | None = None
    errors: bool = False
    branch_states: list[str] = field(default_factory=list)
    selection_states: list[str] = field(default_factory=list)
    file: str | None = None  # absolute path (or directory), or a relative path suffix
    secrets: bool = False  # only events whose texts held a credential (masked)
    # Tools whose calls and results never match (their other fragments still do): the Pi
    # extension's own tools, whose answers only repeat what they found.
    exclude_tools: list[str] = field(default_factory=list)
    # Set by the engine, never by a request: the custom types of the server's own extractor
    # registry. `custom.entry` text of any other type never matches, whoever indexed it.
    custom_types: list[str] = field(default_factory=list)
