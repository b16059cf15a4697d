"""The four MCP tools: their names, descriptions and argument schemas (what a model sees), and the
translation of a call's arguments into the protocol's params, which lsp/params.py validates as it
does every client's. The same arguments as the Pi tools (clients/pi/src/params.ts), plus `cursor`
and the sessions list. No SDK types here: server.py builds them from these plain values.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pi_event_search.core.errors import EngineError
from pi_event_search.core.eventref import Ref
from pi_event_search.core.timestamps import parse_time
from pi_event_search.lsp.params import (
    BadParams,
    ReadParams,
    SearchParams,
    SessionsParams,
    read_params,
    search_params,
    sessions_params,
)

SEARCH_LIMIT, SEARCH_MAX = 10, 50
SESSIONS_LIMIT, SESSIONS_MAX = 20, 50
KINDS = ("user.text", "assistant.text", "tool.call", "tool.result", "bash.command", "bash.output",
         "summary.compaction", "summary.branch", "custom.message", "custom.entry", "session.name")
# The tools' own calls and answers only repeat earlier hits: left out of a search unless named.
# In Pi's sessions, an MCP server's tools are mcp__<server>__<tool>: the server name of the README's
# `pi mcp add pi-events`, and the one a Pi caller's own call shows.
OWN_TOOLS = ("event_search", "event_read", "event_trace", "event_sessions")
PI_PREFIX = "mcp__pi_events__"
READ_LENGTH = 12000  # characters per part by default: what fits the answer


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    schema: dict[str, Any]


def _s(description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **kw}


def _i(description: str, lo: int, hi: int | None = None) -> dict[str, Any]:
    bounds: dict[str, Any] = {"minimum": lo} | ({"maximum": hi} if hi is not None else {})
    return {"type": "integer", "description": description, **bounds}


REF = _s("pi-event:<sessionId>/<entryId> (or <sessionId>/<entryId>), as event_search returns.")
SINCE = _s("ISO date or time (UTC when no zone): only events at or after it.")
UNTIL = _s("ISO date or time: only events before it.")
CURSOR = _s("The cursor a previous answer gave, for its next page (same other arguments).")
FILE = _s("Only events with evidence about this file or directory: an absolute path, or one "
          "relative to the project root.")

SEARCH = ToolSpec("event_search", "Search Pi sessions", (
    "Full-text search over the recorded events (prompts, answers, tool calls and results, bash "
    "runs, summaries) of earlier Pi coding-agent sessions of this project. Returns up to "
    f"{SEARCH_MAX} hits (default {SEARCH_LIMIT}), each with a ref, kind, time, session, branch "
    "state and a snippet with matches in «». Hits are ranked by evidence (rare words count most, "
    "a long text less for one mention, words side by side more; the best 30 then ordered again "
    "by meaning, so your own words for what happened find it); a hit lacking words is marked "
    "\"partial: matched 2 of 3 words; missing: …\" "
    "(fewer distinctive words beat many generic ones; \"quoted phrases\" are exact; exact: true "
    "drops partial hits). A word the history never holds is corrected to the nearest recorded "
    "word, and the answer says so. With groupBy \"session\" it answers one line per "
    "matching session instead (its strongest hit's ref, its name or first prompt, how many of its "
    "events match, its last time), for \"which session was it?\". When the caller is Pi, its "
    "current session is excluded unless sessionId names it; then only what was written before "
    "this call is searched. Then event_read a hit's ref for the exact content."), {
    "type": "object",
    "properties": {
        "query": _s("A few distinctive words and \"quoted phrases\". Hits are ranked by "
                    "evidence, those lacking words marked partial with the words they miss "
                    "(identifier parts such as retry in retryCount, common synonyms and the same "
                    "turn's call/result or question/answer count, below the words as typed). A quoted "
                    "phrase must match exactly. Nothing else is syntax. Empty lists the newest "
                    "events that pass the filters."),
        "exact": {"type": "boolean",
                  "description": "Only events holding every word (no partial hits, no synonyms or "
                                 "spelling corrections)."},
        "limit": _i(f"Hits to return, or sessions with groupBy (default {SEARCH_LIMIT}, at most "
                    f"{SEARCH_MAX}).", 1, SEARCH_MAX),
        "groupBy": _s("session: one line per matching session instead of one block per event "
                      "(which session was it?). Same query and filters; limit counts sessions.",
                      enum=["session"]),
        "kinds": {"type": "array", "items": {"type": "string", "enum": list(KINDS)},
                  "description": "Only these kinds of evidence, e.g. bash.command, tool.result, "
                                 "user.text."},
        "tool": _s("Only events of this tool, e.g. bash, edit, read."),
        "errors": {"type": "boolean",
                   "description": "Only failed tool results and bash runs with a non-zero exit."},
        "since": SINCE,
        "until": UNTIL,
        "sessionId": _s("Only this session. Naming the caller's own current session searches what "
                        "was written before this call."),
        "branchState": _s("selected: on the branch that was kept; alternate: an abandoned branch.",
                          enum=["selected", "alternate", "unknown"]),
        "file": FILE,
        "cursor": CURSOR,
    },
    "required": ["query"],
    "additionalProperties": False,
})

READ = ToolSpec("event_read", "Read a recorded event", (
    "Read one recorded event exactly (from the session file), with its neighbours in append or "
    "branch order. Long text is windowed: the answer says what was omitted and the offset to "
    "continue with. When the user's message contains a pi-event: reference, read it with this "
    "tool before acting on it."), {
    "type": "object",
    "properties": {
        "ref": REF,
        "order": _s("Neighbours in file order (append, default) or along the conversation branch "
                    "(branch).", enum=["append", "branch"]),
        "before": _i("Neighbours before the event (default 1).", 0, 20),
        "after": _i("Neighbours after the event (default 1).", 0, 20),
        "fragment": _s("Only this part of the event, e.g. tool.result:0, as a previous read lists "
                       "its parts (with offset, to continue a cut one)."),
        "offset": _i("Start of the text window, in characters (to continue a cut read).", 0),
        "length": _i("Characters of text per part (default: what fits the answer).", 1, 100000),
    },
    "required": ["ref"],
    "additionalProperties": False,
})

TRACE = ToolSpec("event_trace", "Trace an event's branch", (
    "The session tree around one recorded event: its parent, children, siblings (other branches "
    "from the same parent), the way toward the branch's leaf, and related events (the call of a "
    "tool result, labels, compactions, files, parent and child sessions), each with a ref."), {
    "type": "object",
    "properties": {"ref": REF},
    "required": ["ref"],
    "additionalProperties": False,
})

SESSIONS = ToolSpec("event_sessions", "List Pi sessions", (
    "The earlier Pi sessions of this project, newest first: one line each with the ref of its "
    "first event, its name or first prompt, its events by kind, when it ran and where. Read one "
    "from its start with event_read (order \"branch\", after 20), or search it with event_search "
    "and sessionId."), {
    "type": "object",
    "properties": {
        "limit": _i(f"Sessions to return (default {SESSIONS_LIMIT}, at most {SESSIONS_MAX}).",
                    1, SESSIONS_MAX),
        "since": _s("ISO date or time: only sessions with events at or after it."),
        "until": _s("ISO date or time: only sessions with events before it."),
        "file": FILE,
        "cursor": CURSOR,
    },
    "additionalProperties": False,
})

TOOLS = (SEARCH, READ, TRACE, SESSIONS)
BY_NAME = {t.name: t for t in TOOLS}


def _known(args: dict[str, Any], spec: ToolSpec) -> None:
    """A client that does not validate against the schema still gets one clear message."""
    unknown = sorted(set(args) - set(spec.schema["properties"]))
    if unknown:
        allowed = ", ".join(spec.schema["properties"])
        raise BadParams(f"unknown argument{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(unknown)} (this tool takes {allowed})")
    missing = [k for k in spec.schema.get("required", []) if k not in args]
    if missing:
        raise BadParams(f"{', '.join(missing)} is required")


def _bounded(args: dict[str, Any], key: str, lo: int, hi: int) -> None:
    value = args.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or not lo <= value <= hi):
        raise BadParams(f"{key} must be an integer in {lo}..{hi}")


def _enum(args: dict[str, Any], key: str, allowed: tuple[str, ...] | list[str]) -> None:
    value = args.get(key)
    if value is not None and value not in allowed:
        raise BadParams(f"{key} must be one of {', '.join(allowed)}")


def _path(value: Any, root: str) -> Any:
    """A relative file is the project's: relative to the (first) root, as the model sees it."""
    if isinstance(value, str) and value and not value.startswith("/"):
        return os.path.normpath(os.path.join(root, value))
    return value


def own_tools(prefix: str = "") -> list[str]:
    """Every name the tools' own calls are recorded under: the Pi extension's, and Pi's MCP ones."""
    prefixes = dict.fromkeys(["", PI_PREFIX, prefix])
    return [p + t for p in prefixes for t in OWN_TOOLS]


def _filters(args: dict[str, Any], root: str, prefix: str = "") -> dict[str, Any]:
    f: dict[str, Any] = {}
    own = own_tools(prefix)
    if args.get("tool") not in own:
        f["excludeTool"] = own
    kinds = args.get("kinds")
    if isinstance(kinds, str):  # one kind given as a string is a list of one
        kinds = [kinds]
    if kinds:
        if not isinstance(kinds, list) or not all(k in KINDS for k in kinds):
            raise BadParams(f"kinds must be a list of: {', '.join(KINDS)}")
        f["kind"] = kinds
    for key, name in (("tool", "tool"), ("branchState", "branchState")):
        if args.get(key) is not None:
            f[name] = args[key]
    for key in ("since", "until"):
        if args.get(key) is not None:
            if not isinstance(args[key], str):
                raise BadParams(f"{key} must be a string (an ISO date or time)")
            try:  # checked here to name the argument as the model gave it
                parse_time(args[key], key)
            except EngineError as exc:
                raise BadParams(str(exc)) from exc
    for key in ("since", "until", "sessionId", "errors"):
        if args.get(key) is not None:
            f[key] = args[key]
    if args.get("file") is not None:
        f["file"] = _path(args["file"], root)
    return f


def search(args: dict[str, Any], root: str, current: dict[str, str] | None,
           prefix: str = "") -> SearchParams:
    _known(args, SEARCH)
    _bounded(args, "limit", 1, SEARCH_MAX)
    _enum(args, "branchState", ["selected", "alternate", "unknown"])
    params: dict[str, Any] = {"query": args["query"], "limit": args.get("limit") or SEARCH_LIMIT,
                              "filters": _filters(args, root, prefix), "cursor": args.get("cursor"),
                              "groupBy": args.get("groupBy"),
                              "match": "all" if args.get("exact") is True else "any"}
    if args.get("exact") is not None and not isinstance(args["exact"], bool):
        raise BadParams("exact must be true or false")
    if current:
        params["currentSession"] = current
    return search_params(params)


def sessions(args: dict[str, Any], root: str, current: dict[str, str] | None) -> SessionsParams:
    _known(args, SESSIONS)
    _bounded(args, "limit", 1, SESSIONS_MAX)
    filters = {k: v for k, v in _filters(args, root).items() if k != "excludeTool"}
    params: dict[str, Any] = {"limit": args.get("limit") or SESSIONS_LIMIT, "filters": filters,
                              "cursor": args.get("cursor")}
    if current:
        params["currentSession"] = current
    return sessions_params(params)


def ref(args: dict[str, Any]) -> Ref:
    """The ref as a model may quote it: in backticks, quotes or angle brackets, with a #fragment."""
    text = args.get("ref")
    if not isinstance(text, str):
        raise BadParams("ref is required: pi-event:<sessionId>/<entryId>, as event_search returns")
    bare = text.strip().strip("`'\"<>").split("#", 1)[0]
    try:
        return Ref.parse(bare)
    except EngineError as exc:
        raise BadParams(f"not an event reference: {text[:200]!r} (expected "
                        "pi-event:<sessionId>/<entryId>, as event_search returns)") from exc


def read(args: dict[str, Any], current: dict[str, str] | None) -> ReadParams:
    _known(args, READ)
    _enum(args, "order", ["append", "branch"])
    for key, lo, hi in (("before", 0, 20), ("after", 0, 20), ("offset", 0, 1 << 31),
                        ("length", 1, 100000)):
        _bounded(args, key, lo, hi)
    target = ref(args)
    text = args["ref"].strip().strip("`'\"<>")
    fragment = args.get("fragment") or (text.split("#", 1)[1] if "#" in text else None)
    params: dict[str, Any] = {
        "ref": str(target), "offset": args.get("offset", 0),
        "length": args.get("length", READ_LENGTH), "before": args.get("before", 1),
        "after": args.get("after", 1), "order": args.get("order", "append")}
    if fragment:
        params["fragment"] = fragment
    if current:
        params["currentSession"] = current
    return read_params(params)


def trace(args: dict[str, Any]) -> Ref:
    _known(args, TRACE)
    return ref(args)
