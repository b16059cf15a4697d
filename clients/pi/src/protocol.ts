/**
 * Wire shapes of the pi-event-search server (docs/protocol.md): types, constants and one guard;
 * no Pi, no vscode, no I/O. Over LSP a field without a value may be missing: every optional field
 * may be.
 *
 * The one copy for both clients: clients/vscode/src/core/protocol.ts re-exports this file and
 * esbuild bundles it. It lives here because this package ships its sources (Pi loads them with
 * jiti, no build step) and must stay whole when installed from npm.
 */

export const KINDS = [
	"user.text",
	"assistant.text",
	"tool.call",
	"tool.result",
	"bash.command",
	"bash.output",
	"summary.compaction",
	"summary.branch",
	"custom.message",
	"custom.entry",
	"session.name",
	"context.edit",
	"system.prompt",
	"python.code",
	"python.output",
	"file.mention",
	"ttsr.rules",
	"session.task",
] as const;

export type Kind = (typeof KINDS)[number];

export interface Source {
	path: string;
	uri: string;
	/** 1-based. */
	line: number;
	byteOffset?: number;
}

export interface Hit {
	ref: string;
	sessionId: string;
	entryId: string;
	fragmentId?: string | null;
	kind: string;
	entryType?: string;
	role?: string | null;
	toolName?: string | null;
	isError?: boolean | null;
	timestamp?: string | null;
	snippet: string;
	/** [start, end) in Unicode code points of `snippet`. */
	matches?: [number, number][];
	score?: number;
	cwd?: string | null;
	sessionName?: string | null;
	branchState?: string;
	contextRole?: string;
	selectionState?: string;
	source: Source;
	/** The query terms this event holds, and those it lacks: a non-empty `missing` marks a
	 * partial hit (docs/protocol.md, the order of hits). Absent from older servers. */
	matched?: string[];
	missing?: string[];
}

/** A word of the query that matched nothing anywhere, and the indexed word searched in its place. */
export interface DidYouMean {
	query: string;
	corrections: { word: string; suggestion: string }[];
}

export interface SearchFilters {
	kind?: string[];
	role?: string[];
	tool?: string[];
	sessionId?: string;
	cwd?: string;
	since?: string;
	until?: string;
	errors?: boolean;
	/** Only events that held a credential (shown masked). */
	secrets?: boolean;
	branchState?: string[];
	selectionState?: string[];
	file?: string;
}

export interface SearchParams {
	query: string;
	limit?: number;
	cursor?: string | null;
	prefixLast?: boolean;
	/** With prefixLast: typing paused; the best hits are read again for their meaning. */
	settled?: boolean;
	filters?: SearchFilters;
	/** "any" (default): every term first, then partial hits; "all": only events holding every term. */
	match?: "any" | "all";
	/** "session": one group per session (GroupedSearchResult), `limit` counting sessions. */
	groupBy?: "session" | null;
}

/** How far the index is while it is being built; null (or absent, from an older server) when complete. */
export interface IndexingState {
	/** "first-index", "rebuild" or "refresh". */
	phase: string;
	sessionsIndexed: number;
	sessionsTotal: number;
	percent: number;
}

export interface SearchResult {
	hits: Hit[];
	nextCursor: string | null;
	didYouMean?: DidYouMean | null;
	indexing?: IndexingState | null;
}

/**
 * One session of a grouped search: `top` is its strongest event (its first hit in the event-level
 * order, the very same Hit), `matches` its matching events in the whole result, `events` all its
 * indexed events. Groups come in the order of their tops.
 */
export interface SessionGroup {
	sessionId: string;
	path: string;
	uri?: string;
	cwd?: string | null;
	/** The session's current name (masked, control bytes stripped). */
	name?: string | null;
	/** The first user message, whitespace collapsed, at most 200 characters. */
	firstPrompt?: string | null;
	started?: string | null;
	updated?: string | null;
	events: number;
	matches: number;
	top: Hit;
	parentSession?: string | null;
}

/** piEvents/search with `groupBy: "session"`. */
export interface GroupedSearchResult {
	sessions: SessionGroup[];
	nextCursor: string | null;
	didYouMean?: DidYouMean | null;
	indexing?: IndexingState | null;
}

export function isGrouped(result: SearchResult | GroupedSearchResult): result is GroupedSearchResult {
	return Array.isArray((result as GroupedSearchResult).sessions);
}

export interface VisibleNode {
	masked?: false;
	ref: string;
	sessionId: string;
	entryId: string;
	entryType?: string;
	role?: string | null;
	kind?: string | null;
	timestamp?: string | null;
	preview?: string | null;
	branchState?: string;
	source?: Source;
}

export interface MaskedNode {
	masked: true;
}

export type Node = VisibleNode | MaskedNode;

export interface ReadParams {
	ref: string;
	fragment?: string;
	offset?: number;
	length?: number;
	before?: number;
	after?: number;
	order?: "append" | "branch";
}

export interface ReadEvent {
	ref: string;
	sessionId: string;
	entryId: string;
	parentId?: string | null;
	entryType?: string;
	role?: string | null;
	toolName?: string | null;
	kinds?: string[];
	timestamp?: string | null;
	isError?: boolean | null;
	cwd?: string | null;
	sessionName?: string | null;
	branchState?: string;
	contextRole?: string;
	selectionState?: string;
	/** The Pi 1.x context edit that decides this entry's part of the model context. */
	contextEdit?: { ref: string; /** "removed" or "replaced" */ replacement: string };
	/** A typed event's facts: a system message's tools, a usage's tokens, a thinking level. */
	metadata?: Record<string, unknown>;
}

export interface Fragment {
	fragmentId: string;
	kind: string;
	text: string;
	offset: number;
	length: number;
	totalLength: number;
	truncated: boolean;
}

export interface Omitted {
	field: string;
	reason: string;
	mimeType?: string;
	bytes?: number;
}

export interface Neighbours {
	order: "append" | "branch";
	before: Node[];
	after: Node[];
	alternatives?: Node[];
	stoppedAtFork?: boolean;
}

export interface ReadResult {
	event: ReadEvent;
	source: Source;
	fragments: Fragment[];
	omitted: Omitted[];
	neighbours: Neighbours;
}

export interface Relation {
	type: string;
	direction: "in" | "out";
	label: string;
	/** Every relation but `file-*` names an event; those name a file (listed in `files` too). */
	node?: Node;
	path?: string;
}

export interface FileTouch {
	op: string;
	path: string;
	label: string;
}

export interface Lineage {
	relation: string;
	sessionId?: string;
	path?: string;
	label?: string;
	indexed?: boolean;
	forkAnchor?: Node | null;
	masked?: boolean;
}

export interface TraceResult {
	event: Node;
	parent: Node | null;
	children: Node[];
	siblings: Node[];
	towardLeaf?: "parent" | "child" | "self" | null;
	towardLeafRef?: string | null;
	relations: Relation[];
	files: FileTouch[];
	lineage: Lineage[];
	labels: string[];
}

export interface StatusResult {
	index: { path: string; bytes: number; schemaVersion: number; generation: number; indexing: boolean };
	sessions: number;
	/** Visible sessions by the agent that wrote them: "pi", "omp" (Oh My Pi). */
	sessionsBySource?: Record<string, number>;
	events: number;
	fragments: number;
	/** Visible events whose texts held a credential (masked everywhere). */
	secretEvents?: number;
	stale: { sessionId?: string; path: string; error?: string }[];
	unavailable: { sessionId?: string; path: string }[];
	duplicates: { sessionId?: string; path: string; canonicalPath?: string }[];
	skipped: unknown[];
	sessionDirs: string[];
	/** Each session directory the server reads, why and how (absent from older servers). */
	directories?: SessionDirInfo[];
	roots: string[];
}

/** One session directory of piEvents/status (docs/protocol.md). */
export interface SessionDirInfo {
	path: string;
	/** "per-project" (Pi's default) or "flat" (a sessionDir Pi was told to use). */
	layout: string;
	/** Why it is read: "default", "--session-dir", "PI_CODING_AGENT_SESSION_DIR", "sessionDir in <file>", "sessionDirs", ... */
	origin: string;
	live: boolean;
	exists: boolean;
	/** The caller's sessions found in it; null before the index is open. */
	sessions: number | null;
}

export interface SessionsParams {
	limit?: number;
	cursor?: string | null;
	filters?: SearchFilters;
}

/** One visible session of piEvents/sessions; opening it = piEvents/read of `first.ref`. */
export interface SessionInfo {
	sessionId: string;
	path: string;
	uri?: string;
	cwd?: string | null;
	name?: string | null;
	firstPrompt?: string | null;
	started?: string | null;
	updated?: string | null;
	events: number;
	/** Event counts by kind (an event counts once per kind it holds). */
	kinds: Record<string, number>;
	parentSession?: string | null;
	/** The session's first event in branch order (the root of its tree). */
	first: Node;
}

/** piEvents/sessions: newest first (by `updated`). */
export interface SessionsResult {
	sessions: SessionInfo[];
	nextCursor: string | null;
}

export interface IndexChanged {
	generation: number;
	changedSessions: number;
	indexing: boolean;
}

export interface ReindexResult {
	changedSessions: number;
	generation: number;
}

/** piEvents/eventAt: the event at a 0-based line of a session file, named by the index. */
export interface EventAtParams {
	uri: string;
	line: number;
}

export type EventAtResult = { ref: string; sessionId: string; entryId: string; source: Source } | { ref: null };

export const METHODS = {
	search: "piEvents/search",
	sessions: "piEvents/sessions",
	read: "piEvents/read",
	trace: "piEvents/trace",
	eventAt: "piEvents/eventAt",
	status: "piEvents/status",
	reindex: "piEvents/reindex",
	indexChanged: "piEvents/indexChanged",
} as const;

export const ERRORS = {
	invalidParams: -32602,
	notFound: -32001,
	staleCursor: -32002,
	queryTooLong: -32003,
	cancelled: -32800,
} as const;

export function isVisible(node: Node | null | undefined): node is VisibleNode {
	return !!node && node.masked !== true && typeof node.ref === "string";
}
