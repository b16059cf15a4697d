"""The results the protocol returns, as docs/protocol.md describes them: one TypedDict per JSON
shape, so mypy checks that the code builds what the document promises. The CLI's `--json` output
is the same shapes.

No `from __future__ import annotations` here: TypedDict needs NotRequired at runtime to know
which keys are optional (tests/test_wire.py checks real results against these)."""

from typing import Any, Literal, NotRequired, TypedDict


class Source(TypedDict):
    path: str
    uri: str
    line: int  # 1-based
    byteOffset: int


class Hit(TypedDict):
    ref: str
    sessionId: str
    entryId: str
    fragmentId: str
    kind: str
    entryType: str
    role: str | None
    toolName: str | None
    isError: bool
    timestamp: str | None
    snippet: str
    matches: list[list[int]]  # [start, end) code point offsets into snippet
    score: float
    cwd: str | None
    sessionName: str | None
    branchState: str
    contextRole: str
    selectionState: str
    source: Source
    # The query's terms (as typed, a quoted phrase with its quotes) the event holds, in any of its
    # fragments, as typed or through an inflection, identifier part or synonym; and those it
    # does not. Both empty for an empty query and for hits that do not come from a query (file
    # history).
    matched: list[str]
    missing: list[str]


class Indexing(TypedDict):
    """How far the writer's indexing pass has come (null in a result when complete)."""
    phase: Literal["first-index", "rebuild", "refresh"]
    sessionsIndexed: int
    sessionsTotal: int
    percent: int  # of sessions, 0-100


class Correction(TypedDict):
    word: str  # as typed: it matches nothing anywhere in the index
    suggestion: str  # the nearest indexed word, searched in its place


class DidYouMean(TypedDict):
    query: str  # the query with every correction applied
    corrections: list[Correction]


class SearchResult(TypedDict):
    hits: list[Hit]
    nextCursor: str | None
    didYouMean: NotRequired[DidYouMean | None]
    indexing: NotRequired[Indexing | None]


class ServerState(TypedDict):
    state: Literal["opening", "indexing", "ready", "failed"]
    role: Literal["writer", "reader"]
    writerPid: int | None
    lastError: str | None
    readAhead: int  # events this process has read ahead for their meaning (the writer only)


class Node(TypedDict):
    ref: str
    sessionId: str
    entryId: str
    entryType: str
    role: str | None
    kind: str | None
    timestamp: str | None
    preview: str
    branchState: str
    source: Source


class Masked(TypedDict):
    """A node in a session the caller may not see."""

    masked: Literal[True]


# -- piEvents/search with groupBy, piEvents/sessions ------------------------------------------
class SessionBase(TypedDict):
    """What a group of results and an item of the sessions list both say of their session."""
    sessionId: str
    path: str
    uri: str
    cwd: str | None
    name: str | None  # masked unless revealed
    firstPrompt: str | None  # the first user message's text, at most 200 characters, masked
    started: str | None  # the header's timestamp (or the first entry's)
    updated: str | None  # the newest event's timestamp
    events: int  # indexed events the caller may see
    parentSession: str | None  # the parent session file (null when the caller may not see it)


class Group(SessionBase):
    matches: int  # the session's matching events in the whole event-level result
    top: Hit  # its first hit in the event-level order


class GroupedResult(TypedDict):
    sessions: list[Group]
    nextCursor: str | None
    didYouMean: NotRequired[DidYouMean | None]
    indexing: NotRequired[Indexing | None]


class SessionInfo(SessionBase):
    kinds: dict[str, int]  # events by kind (an event counts once for each kind it holds)
    first: Node  # the first event in branch order: where a client opens the session


class SessionsResult(TypedDict):
    sessions: list[SessionInfo]
    nextCursor: str | None


# -- piEvents/read ---------------------------------------------------------------------------
class ContextEdit(TypedDict):
    ref: str  # the context_edit entry
    replacement: str  # "removed" (out of the model context) | "replaced" (its content)


class ReadEvent(TypedDict):
    ref: str
    sessionId: str
    entryId: str
    parentId: str | None
    entryType: str
    role: str | None
    toolName: str | None
    kinds: list[str]
    timestamp: str | None
    isError: bool
    cwd: str | None
    sessionName: str | None
    branchState: str
    contextRole: str
    selectionState: str
    # The context edit that decides this entry's part of the model context (Pi 1.x), if any.
    contextEdit: NotRequired[ContextEdit]
    # A typed event's facts from its entry: a system message's tools and sections, a usage's
    # kind, model and tokens, a context edit's target, an answer's thinking level.
    metadata: NotRequired[dict[str, Any]]


class Fragment(TypedDict):
    fragmentId: str
    kind: str
    text: str
    offset: int
    length: int
    totalLength: int
    truncated: bool


class Omitted(TypedDict):
    field: str
    reason: str  # image | thinking | signature | details | window | payload
    bytes: int
    mimeType: NotRequired[str]


class Neighbours(TypedDict):
    order: str
    before: list[Node]
    after: list[Node]
    alternatives: list[Node]
    stoppedAtFork: bool


class ReadResult(TypedDict):
    event: ReadEvent
    source: Source
    fragments: list[Fragment]
    omitted: list[Omitted]
    neighbours: Neighbours


# -- piEvents/trace --------------------------------------------------------------------------
class Relation(TypedDict):
    type: str
    direction: str  # out | in
    label: str  # recorded | derived | inferred
    node: NotRequired[Node | Masked]  # event relations
    path: NotRequired[str]  # file relations


class FileRef(TypedDict):
    op: str
    path: str
    label: str


class ForkAnchor(Node):
    label: str  # derived


class Lineage(TypedDict):
    relation: str  # session-parent | session-child
    sessionId: NotRequired[str]
    path: NotRequired[str]
    label: NotRequired[str]
    forkAnchor: NotRequired[ForkAnchor | None]
    indexed: NotRequired[bool]  # false: the parent file is not in the index
    masked: NotRequired[bool]


class TraceResult(TypedDict):
    event: Node
    parent: Node | None
    children: list[Node]
    siblings: list[Node]
    towardLeaf: str | None  # parent | child | self
    towardLeafRef: str | None
    relations: list[Relation]
    files: list[FileRef]
    lineage: list[Lineage]
    labels: list[str]


# -- piEvents/fileHistory, piEvents/lineOrigin, piEvents/eventAt -----------------------------
class FileHit(Hit):
    relation: str  # file-changed | file-read
    label: str  # derived | recorded


class FileCounts(TypedDict):
    changed: int
    read: int


class FileHistoryResult(TypedDict):
    hits: list[FileHit]
    nextCursor: str | None
    counts: FileCounts


class LineOriginResult(TypedDict):
    hit: FileHit | None
    candidates: list[FileHit]
    reason: NotRequired[str]  # trivial | unknown, only when hit is null


class EventAt(TypedDict):
    ref: str
    sessionId: str
    entryId: str
    source: Source


class NoEventAt(TypedDict):
    ref: None


# -- piEvents/status, piEvents/reindex, piEvents/indexChanged --------------------------------
class IndexInfo(TypedDict):
    path: str
    bytes: int
    schemaVersion: int
    generation: int
    indexing: NotRequired[bool]  # the language server's, not the CLI's
    recovered: NotRequired[str]  # a damaged index this process moved aside (issue 31)
    readOnly: NotRequired[str]  # this process cannot index: why, in one line (issue 47)


class SessionProblem(TypedDict):
    sessionId: str
    path: str
    error: str | None


class Duplicate(TypedDict):
    sessionId: str
    path: str
    canonicalPath: str | None


class BadLines(TypedDict):
    sessionId: str
    path: str
    badLines: int
    detail: str | None


class Skipped(TypedDict):
    path: str
    reason: str | None


class SessionDirInfo(TypedDict):
    """One session directory this server reads (docs/protocol.md, piEvents/status)."""

    path: str
    layout: str  # "per-project" (Pi's default) or "flat" (a sessionDir Pi was told to use)
    origin: str  # why it is read: "default", "--session-dir", "PI_CODING_AGENT_SESSION_DIR", ...
    live: bool  # Pi writes there (False: an extra, archive directory)
    exists: bool
    sessions: int | None  # the caller's sessions found in it (None: the index is not open)


class StatusResult(TypedDict):
    index: IndexInfo
    sessions: int
    # Sessions by the agent that wrote them: "pi", "omp" (Oh My Pi); only the agents seen.
    sessionsBySource: dict[str, int]
    events: int
    fragments: int
    stale: list[SessionProblem]
    unavailable: list[SessionProblem]
    duplicates: list[Duplicate]
    badLines: list[BadLines]
    skipped: list[Skipped]
    sessionDirs: list[str]
    directories: list[SessionDirInfo]
    roots: list[str] | None
    secretEvents: int  # events whose texts held a credential (masked everywhere)
    order: str  # what hits are ordered by: words and meaning, or words only and why
    server: NotRequired[ServerState]


# -- piEvents/secrets -------------------------------------------------------------------------
class SecretEvent(TypedDict):
    ref: str
    sessionId: str
    entryId: str
    timestamp: str | None
    kinds: list[str]
    count: int


class SecretsResult(TypedDict):
    events: list[SecretEvent]
    sessions: int  # sessions holding at least one of them


class ReindexResult(TypedDict):
    changedSessions: int
    generation: int


class IndexChanged(TypedDict):
    generation: int
    changedSessions: int
    indexing: bool
