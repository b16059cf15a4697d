"""Validating request params (plain JSON objects) into domain values. Every problem is a
BadParams with a message that names the field; nothing here knows about LSP types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_event_search.core import paths
from pi_event_search.core.errors import EngineError
from pi_event_search.core.eventref import Ref
from pi_event_search.core.timestamps import parse_time
from pi_event_search.query.search import Filters


class BadParams(ValueError):
    pass


def _obj(params: Any) -> dict[str, Any]:
    if params is None or params == []:  # Lua clients (Neovim) encode an empty table as []
        return {}
    if not isinstance(params, dict):
        raise BadParams("params must be an object")
    return params


def _str(d: dict[str, Any], key: str, default: str | None = None) -> str | None:
    value = d.get(key, default)
    if value is not None and not isinstance(value, str):
        raise BadParams(f"{key} must be a string")
    return value


def _int(d: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = _integer(d, key, default)
    if not lo <= value <= hi:
        raise BadParams(f"{key} must be an integer in {lo}..{hi}")
    return value


def _integer(d: dict[str, Any], key: str, default: int) -> int:
    value = d.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadParams(f"{key} must be an integer")
    return value


def _strs(d: dict[str, Any], key: str) -> list[str]:
    value = d.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadParams(f"filters.{key} must be a string or a list of strings")
    return list(value)


def _bool(d: dict[str, Any], key: str) -> bool:
    value = d.get(key, False)
    if not isinstance(value, bool):
        raise BadParams(f"{key} must be true or false")
    return value


@dataclass(slots=True)
class SearchParams:
    query: str
    filters: Filters
    limit: int
    cursor: str | None
    prefix_last: bool
    current: tuple[str, str | None] | None
    group_by: str | None = None  # "session": the results grouped by session
    exact: bool = False  # match: "all": only events holding every word (no relaxation)
    settled: bool = False  # prefixLast typed and paused: the best hits read for their meaning


GROUP_BY = ("session",)
MATCH = ("any", "all")


def search_params(params: Any) -> SearchParams:
    d = _obj(params)
    query = _str(d, "query", "") or ""
    group_by = _str(d, "groupBy")
    if group_by is not None and group_by not in GROUP_BY:
        raise BadParams(f"groupBy must be {' or '.join(map(repr, GROUP_BY))} (or null)")
    match = _str(d, "match") or "any"
    if match not in MATCH:
        raise BadParams(f"match must be {' or '.join(map(repr, MATCH))} (or null)")
    return SearchParams(query, filters_of(d), _int(d, "limit", 20, 1, 200), _str(d, "cursor"),
                        _bool(d, "prefixLast"), current_session(d), group_by, match == "all",
                        _bool(d, "settled"))


def filters_of(d: dict[str, Any]) -> Filters:
    """The `filters` object of a search or a sessions list."""
    f = d.get("filters") or {}
    if not isinstance(f, dict):
        raise BadParams("filters must be an object")
    try:
        return Filters(
            session_id=_str(f, "sessionId"), cwd=_str(f, "cwd"), kinds=_strs(f, "kind"),
            roles=_strs(f, "role"), tools=_strs(f, "tool"),
            since_ms=parse_time(_str(f, "since"), "filters.since"),
            until_ms=parse_time(_str(f, "until"), "filters.until"), errors=_bool(f, "errors"),
            branch_states=_strs(f, "branchState"), selection_states=_strs(f, "selectionState"),
            file=_str(f, "file"), exclude_tools=_strs(f, "excludeTool"),
            secrets=_bool(f, "secrets"))
    except EngineError as exc:
        raise BadParams(str(exc)) from exc


@dataclass(slots=True)
class SessionsParams:
    filters: Filters
    limit: int
    cursor: str | None
    current: tuple[str, str | None] | None


def sessions_params(params: Any) -> SessionsParams:
    """`piEvents/sessions` {limit?, cursor?, filters?, currentSession?}."""
    d = _obj(params)
    return SessionsParams(filters_of(d), _int(d, "limit", 50, 1, 200), _str(d, "cursor"),
                          current_session(d))


def current_session(d: dict[str, Any]) -> tuple[str, str | None] | None:
    cur = d.get("currentSession")
    if cur is None:
        return None
    if not isinstance(cur, dict) or not isinstance(cur.get("sessionId"), str):
        raise BadParams("currentSession must be {sessionId, cutoff}")
    cutoff = _str(cur, "cutoff")
    if not cutoff:
        raise BadParams("currentSession.cutoff is required (the entry holding the call)")
    return cur["sessionId"], cutoff


def event_ref(params: Any) -> Ref:
    d = _obj(params)
    text = _str(d, "ref")
    if text is None:
        session, entry = _str(d, "sessionId"), _str(d, "entryId")
        if not session or not entry:
            raise BadParams("give ref, or sessionId and entryId")
        text = f"{session}/{entry}"
    try:
        return Ref.parse(text)
    except EngineError as exc:
        raise BadParams(str(exc)) from exc


@dataclass(slots=True)
class ReadParams:
    ref: Ref
    fragment: str | None
    offset: int
    length: int
    before: int
    after: int
    order: str
    current: tuple[str, str | None] | None = None


def read_params(params: Any) -> ReadParams:
    d = _obj(params)
    # The window and neighbour bounds are the reader's to check (the CLI's reads too).
    return ReadParams(event_ref(d), _str(d, "fragment"), _integer(d, "offset", 0),
                      _integer(d, "length", 4000), _integer(d, "before", 1),
                      _integer(d, "after", 1), _str(d, "order", "append") or "append",
                      current_session(d))


@dataclass(slots=True)
class FileParams:
    uri: str
    path: str
    line: int
    limit: int
    cursor: str | None
    current: tuple[str, str | None] | None = None


def file_params(params: Any, *, line: bool = False) -> FileParams:
    """piEvents/fileHistory {uri, limit?, cursor?} and piEvents/lineOrigin {uri, line}."""
    d = _obj(params)
    uri = _str(d, "uri")
    if not uri:
        raise BadParams("uri is required (a file:// URI)")
    path = file_path(uri)
    if path is None or paths.shape(path, "windows") is None:
        raise BadParams(f"uri must be an absolute file:// URI, not {uri[:200]!r}")
    if line and "line" not in d:
        raise BadParams("line is required (0-based)")
    return FileParams(uri, path, _int(d, "line", 0, 0, 1 << 31), _int(d, "limit", 50, 1, 200),
                      _str(d, "cursor"), current_session(d))


@dataclass(slots=True)
class EventAtParams:
    path: str | None  # None: a document that is no local file (untitled:, a remote scheme ...)
    line: int
    current: tuple[str, str | None] | None


def event_at_params(params: Any) -> EventAtParams:
    d = _obj(params)
    uri, path = _str(d, "uri"), _str(d, "path")
    if (uri is None) == (path is None):
        raise BadParams("give uri or path (not both)")
    if uri is not None:
        path = file_path(uri)
    if path is not None and (not path.startswith("/") or "\x00" in path):
        raise BadParams("path must be absolute")
    if "line" not in d:
        raise BadParams("line is required (0-based)")
    return EventAtParams(path, _int(d, "line", 0, 0, 1 << 31), current_session(d))


def file_path(uri: str) -> str | None:
    """The path a file:// URI names (a drive or UNC path for a Windows one: core/paths.py);
    None for another scheme."""
    return paths.uri_path(uri)


def reindex_paths(params: Any) -> set[str] | None:
    """`piEvents/reindex` params: optional `paths`, absolute session files known to have grown."""
    value = _obj(params).get("paths")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.startswith("/")
                                              for v in value):
        raise BadParams("paths must be a list of absolute paths")
    return set(value)
