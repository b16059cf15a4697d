/**
 * The answers of pi-event-search (docs/protocol.md), as far as this extension reads them.
 * Types only. Over LSP a field without a value may be missing: every optional field may be.
 */

export interface Source {
	path: string;
	uri?: string;
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
	cwd?: string | null;
	sessionName?: string | null;
	branchState?: string;
	contextRole?: string;
	selectionState?: string;
	source?: Source;
}

export interface SearchResult {
	hits: Hit[];
	nextCursor: string | null;
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

export type Node = VisibleNode | { masked: true };

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
	node?: Node;
	path?: string;
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
	files: { op: string; path: string; label: string }[];
	lineage: Lineage[];
	labels: string[];
}

export const ERRORS = { invalidParams: -32602, notFound: -32001, cancelled: -32800 } as const;

export function isVisible(node: Node | null | undefined): node is VisibleNode {
	return !!node && node.masked !== true && typeof node.ref === "string";
}
