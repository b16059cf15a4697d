/**
 * What the model reads: compact text, one short block per hit or node, bounded by a character
 * budget, always saying what was left out and how to get it. Pure functions (unit-tested).
 */
import type { Fragment, GroupedSearchResult, Hit, Node, ReadResult, SearchResult, SessionGroup, TraceResult, VisibleNode } from "./protocol.ts";
import { isVisible } from "./protocol.ts";

export const OPEN = "«";
export const CLOSE = "»";
const PREVIEW_CHARS = 100;

/** Wrap the matched spans ([start, end) in code points) in « ». */
export function markMatches(snippet: string, matches: readonly [number, number][] | undefined): string {
	if (!matches?.length) return snippet;
	const chars = Array.from(snippet);
	const spans = [...matches].filter(([s, e]) => s >= 0 && e > s && e <= chars.length).sort((a, b) => a[0] - b[0]);
	let out = "";
	let pos = 0;
	for (const [s, e] of spans) {
		if (s < pos) continue; // overlapping spans: keep the first
		out += chars.slice(pos, s).join("") + OPEN + chars.slice(s, e).join("") + CLOSE;
		pos = e;
	}
	return out + chars.slice(pos).join("");
}

/** 2026-05-01T10:00:09.020Z -> 2026-05-01 10:00:09Z */
export function shortTime(ts: string | null | undefined): string {
	if (!ts) return "time unknown";
	const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(ts);
	return m ? `${m[1]} ${m[2]}${m[3] ?? ""}` : ts;
}

function clip(text: string, max: number): string {
	const oneLine = text.replace(/\s+/g, " ").trim();
	const chars = Array.from(oneLine);
	return chars.length <= max ? oneLine : `${chars.slice(0, max - 1).join("")}…`;
}

/** "tool.result bash error" */
export function kindLabel(kind: string | null | undefined, tool: string | null | undefined, isError: boolean | null | undefined): string {
	return [kind ?? "event", tool ?? "", isError ? "error" : ""].filter(Boolean).join(" ");
}

const SELECTION: Record<string, string> = {
	direct: "in context",
	summarized: "summarized by a compaction",
	"edited-out": "edited out of the context",
	cleared: "cleared by /clear (Oh My Pi)",
	dropped: "a failed answer Oh My Pi does not replay",
	"not-selected": "not in context",
	"not-applicable": "",
	unknown: "context unknown",
};

/** "selected branch, in context" / "alternate branch (abandoned), not in context" */
export function treeState(branch: string | undefined, selection: string | undefined): string {
	const b = branch === "alternate" ? "alternate branch (abandoned)" : branch === "selected" ? "selected branch" : "branch unknown";
	const s = selection ? (SELECTION[selection] ?? selection) : "";
	return s ? `${b}, ${s}` : b;
}

function where(name: string | null | undefined, cwd: string | null | undefined): string {
	return name ? `session "${clip(name, 60)}"` : cwd ? `in ${cwd}` : "session unnamed";
}

/** A hit is partial when it lacks some of the query's terms (ranked relaxation). */
export function isPartial(hit: Pick<Hit, "missing">): boolean {
	return (hit.missing?.length ?? 0) > 0;
}

function terms(list: readonly string[]): string {
	return list.join(", ");
}

/**
 * What a hit holds of the query, when that is not every term: "matched 3 of 4 words; missing: bug".
 * Empty for a hit holding every term.
 */
export function coverage(hit: Pick<Hit, "matched" | "missing">): string {
	const matched = hit.matched ?? [];
	const missing = hit.missing ?? [];
	const parts: string[] = [];
	if (missing.length > 0) {
		const total = matched.length + missing.length;
		parts.push(`partial: matched ${matched.length} of ${total} word${total === 1 ? "" : "s"}; missing: ${terms(missing)}`);
	}
	return parts.join("; ");
}

export function hitBlock(hit: Hit, n: number): string {
	const cover = coverage(hit);
	return [
		`[${n}] ${hit.ref} · ${kindLabel(hit.kind, hit.toolName, hit.isError)} · ${shortTime(hit.timestamp)}`,
		`    ${where(hit.sessionName, hit.cwd)} · ${treeState(hit.branchState, hit.selectionState)}`,
		...(cover ? [`    (${cover})`] : []),
		`    ${markMatches(hit.snippet, hit.matches)}`,
	].join("\n");
}

/** Said before the hits when a word of the query matched nothing and another was searched instead. */
export function correctionNote(result: SearchResult | GroupedSearchResult): string {
	const fixes = result.didYouMean?.corrections ?? [];
	if (!fixes.length) return "";
	return `No recorded event holds ${fixes.map((c) => JSON.stringify(c.word)).join(", ")}; searched for ${fixes.map((c) => JSON.stringify(c.suggestion)).join(", ")} instead (did you mean ${JSON.stringify(result.didYouMean?.query ?? "")}?).`;
}

/** "2 hits (1 partial)": partial hits come after every hit holding all the terms. */
function countLabel(hits: readonly Hit[], noun: string): string {
	const partial = hits.filter(isPartial).length;
	const plural = `${hits.length} ${noun}${hits.length === 1 ? "" : "s"}`;
	if (partial === 0) return plural;
	return partial === hits.length ? `${plural}, all partial (none holds every word)` : `${plural} (the last ${partial} partial: they hold only some of the words)`;
}

export interface SearchView {
	query: string;
	maxChars: number;
	/** The authorization root the server applied. */
	root: string;
	/** The search named the current session (only entries before this call are eligible). */
	currentSession: boolean;
	stillIndexing?: boolean;
}

export interface Formatted {
	text: string;
	/** How many hits / parts made it into the text. */
	shown: number;
	/** Something was left out to stay within the budget. */
	cut: boolean;
}

/** Said after the hits while the index is incomplete: these are the hits so far. */
export function indexingNote(result: SearchResult | GroupedSearchResult, stillIndexing?: boolean): string {
	const i = result.indexing;
	if (i) return `\n(still indexing: ${i.percent}% of sessions, ${i.sessionsIndexed} of ${i.sessionsTotal}; these are the hits so far, search again later for the rest.)`;
	return stillIndexing ? "\n(The index is still being built: results may be incomplete.)" : "";
}

export function formatSearch(result: SearchResult, view: SearchView): Formatted {
	const scope = view.currentSession ? "the current session, before this call" : `sessions of ${view.root}, current session excluded`;
	const note = indexingNote(result, view.stillIndexing);
	const fixed = correctionNote(result);
	if (result.hits.length === 0) {
		return { text: `${fixed ? `${fixed}\n` : ""}No events match ${JSON.stringify(view.query)} (${scope}).${note}`, shown: 0, cut: false };
	}
	const blocks: string[] = [];
	const reserve = 240 + fixed.length; // header and footer
	let used = 0;
	for (const [i, hit] of result.hits.entries()) {
		const block = hitBlock(hit, i + 1);
		if (blocks.length > 0 && used + block.length + 1 > view.maxChars - reserve) break;
		blocks.push(block);
		used += block.length + 1;
	}
	const hidden = result.hits.length - blocks.length;
	const head = `${countLabel(result.hits.slice(0, blocks.length), "hit")} for ${JSON.stringify(view.query)} (${scope}):`;
	const tail: string[] = [];
	if (hidden > 0) tail.push(`${hidden} more hit${hidden === 1 ? "" : "s"} not shown, to stay within ${view.maxChars} characters: narrow the query or lower limit.`);
	if (result.nextCursor) tail.push("More hits exist beyond these: narrow the query or add filters (kinds, tool, since, until, sessionId, file).");
	const text = [...(fixed ? [fixed] : []), head, ...blocks, ...tail].join("\n") + note;
	return { text, shown: blocks.length, cut: hidden > 0 };
}

const GROUP_SNIPPET_CHARS = 140;

/** A snippet on one line with its matches in « », cut to `max` characters (a cut match is closed). */
export function oneLineSnippet(hit: Hit, max: number): string {
	const marked = clip(markMatches(hit.snippet, hit.matches), max);
	const open = marked.split(OPEN).length - 1;
	const close = marked.split(CLOSE).length - 1;
	return open > close ? marked + CLOSE : marked;
}

/** What names a session for a person or a model: its name, else its first prompt, else its directory. */
export function sessionTitle(s: { name?: string | null; firstPrompt?: string | null; cwd?: string | null; sessionId: string }, max = 60): string {
	if (s.name) return `"${clip(s.name, max)}"`;
	if (s.firstPrompt) return `first prompt "${clip(s.firstPrompt, max)}"`;
	return s.cwd ? `unnamed, in ${s.cwd}` : `unnamed ${s.sessionId.slice(0, 8)}`;
}

/** "[1] pi-event:S/E · "fix the build" · 3 of 143 events match · last 2026-05-01 11:02:13Z · tool.result bash error: npm ERR! «ENOENT» …" */
export function groupLine(group: SessionGroup, n: number): string {
	const top = group.top;
	const counts = `${group.matches} of ${group.events} event${group.events === 1 ? "" : "s"} match${group.matches === 1 ? "es" : ""}`;
	const cover = coverage(top);
	return `[${n}] ${top.ref} · ${sessionTitle(group)} · ${counts} · last ${shortTime(group.updated)} · ${kindLabel(top.kind, top.toolName, top.isError)}${cover ? ` (${cover})` : ""}: ${oneLineSnippet(top, GROUP_SNIPPET_CHARS)}`;
}

/** The grouped search for the model: one line per session, its strongest hit's ref first. */
export function formatGroups(result: GroupedSearchResult, view: SearchView): Formatted {
	const scope = view.currentSession ? "the current session, before this call" : `sessions of ${view.root}, current session excluded`;
	const note = indexingNote(result, view.stillIndexing);
	const total = result.sessions.length;
	const fixed = correctionNote(result);
	if (total === 0) {
		return { text: `${fixed ? `${fixed}\n` : ""}No session has events matching ${JSON.stringify(view.query)} (${scope}).${note}`, shown: 0, cut: false };
	}
	const head = (n: number): string =>
		`${n} session${n === 1 ? "" : "s"} with events matching ${JSON.stringify(view.query)} (${scope}), strongest first; each line starts with the ref of the session's strongest hit:`;
	const more = (hidden: number): string => `${hidden} more session${hidden === 1 ? "" : "s"} not shown, to stay within ${view.maxChars} characters: narrow the query or lower limit.`;
	const tail = [
		...(result.nextCursor ? ["More sessions match beyond these: narrow the query or add filters (kinds, tool, since, until, file)."] : []),
		"event_read a ref for the event; event_search with sessionId (the ref's part before /) for every match of one session.",
	];
	// Room for the lines: the budget less what surrounds them at their longest.
	const room = view.maxChars - fixed.length - head(total).length - more(total).length - tail.join("\n").length - note.length - 5;
	const lines: string[] = [];
	let used = 0;
	for (const [i, group] of result.sessions.entries()) {
		const line = groupLine(group, i + 1);
		if (lines.length > 0 && used + line.length + 1 > room) break;
		lines.push(line);
		used += line.length + 1;
	}
	const hidden = total - lines.length;
	const text = [...(fixed ? [fixed] : []), head(lines.length), ...lines, ...(hidden > 0 ? [more(hidden)] : []), ...tail].join("\n") + note;
	return { text, shown: lines.length, cut: hidden > 0 };
}

export function nodeLine(node: Node | null | undefined): string {
	if (!node) return "none";
	if (!isVisible(node)) return "(in a session you may not see)";
	const v: VisibleNode = node;
	const preview = v.preview ? ` · "${clip(v.preview, PREVIEW_CHARS)}"` : "";
	const branch = v.branchState && v.branchState !== "selected" ? ` · ${v.branchState}` : "";
	return `${v.ref} · ${v.kind ?? v.entryType ?? "event"}${branch}${preview}`;
}

function nodeList(label: string, nodes: Node[] | undefined): string[] {
	if (!nodes?.length) return [];
	return [`${label}:`, ...nodes.map((n) => `  ${nodeLine(n)}`)];
}

function omittedLine(o: { field: string; reason: string; mimeType?: string; bytes?: number }): string {
	const size = o.bytes !== undefined ? `${o.bytes} bytes` : "";
	return `  ${o.field}: ${o.reason}${o.mimeType ? ` ${o.mimeType}` : ""}${size ? `, ${size}` : ""}`;
}

/** A fragment's text cut to `room` characters; the cut is reported with how to continue. */
function fragmentPart(f: Fragment, room: number): { text: string; cutAt?: number } {
	const chars = Array.from(f.text);
	const end = f.offset + chars.length;
	const head = `[${f.fragmentId}] characters ${f.offset}-${end} of ${f.totalLength}`;
	if (chars.length <= room) return { text: `${head}\n${f.text}` };
	const keep = Math.max(0, room);
	return { text: `${head}\n${chars.slice(0, keep).join("")}`, cutAt: f.offset + keep };
}

/** "context edit: ... by pi-event:S/E": a replaced entry is read as recorded, and says so. */
export function editLine(edit: ReadResult["event"]["contextEdit"]): string[] {
	if (!edit) return [];
	const what = edit.replacement === "removed" ? "removed from the model context" : "content replaced in the model context";
	return [`context edit: ${what} by ${edit.ref} (the text below is the original)`];
}

/** "toolsAdded read, bash · thinkingLevel high" */
export function metadataLine(metadata: Record<string, unknown> | undefined): string[] {
	const parts = Object.entries(metadata ?? {}).map(([k, v]) => `${k} ${Array.isArray(v) ? v.map(String).join(", ") : String(v)}`);
	return parts.length ? [parts.join(" · ")] : [];
}

export function formatRead(result: ReadResult, maxChars: number): Formatted {
	const e = result.event;
	const head = [
		`${e.ref} · ${kindLabel(e.kinds?.join("+") || e.entryType, e.toolName, e.isError)} · ${shortTime(e.timestamp)}`,
		`${where(e.sessionName, e.cwd)} · ${treeState(e.branchState, e.selectionState)} · role ${e.role ?? e.entryType ?? "?"}`,
		`parent ${e.parentId ? `pi-event:${e.sessionId}/${e.parentId}` : "none (a root)"} · source ${result.source.path}:${result.source.line}`,
		...editLine(e.contextEdit),
		...metadataLine(e.metadata),
	];
	const n = result.neighbours;
	const around = [
		...nodeList(`before (${n.order} order)`, n.before),
		...nodeList(`after (${n.order} order)`, n.after),
		...nodeList(n.stoppedAtFork ? "stopped at a fork; candidate children" : "alternatives (other children on the way)", n.alternatives),
	];
	const omitted = result.omitted.filter((o) => o.reason !== "window").map(omittedLine);
	const fixed = [...head, ...around, ...omitted].join("\n").length + 200;
	let room = maxChars - fixed;
	const parts: string[] = [];
	const continued: string[] = [];
	let shown = 0;
	for (const f of result.fragments) {
		const part = fragmentPart(f, Math.max(room, 0));
		room -= part.text.length;
		parts.push(part.text);
		shown += 1;
		const stop = part.cutAt ?? (f.truncated && f.offset + Array.from(f.text).length < f.totalLength ? f.offset + Array.from(f.text).length : undefined);
		if (stop !== undefined && stop < f.totalLength) {
			continued.push(`  ${f.fragmentId}: characters ${stop}-${f.totalLength} (continue with fragment="${f.fragmentId}" offset=${stop})`);
		}
	}
	if (result.fragments.length === 0) parts.push("(no text content)");
	const omittedAll = [...continued, ...omitted];
	const lines = [...head, ...parts, ...(omittedAll.length ? ["omitted:", ...omittedAll] : []), ...around];
	return { text: lines.join("\n"), shown, cut: continued.length > 0 };
}

const TOWARD: Record<string, string> = {
	self: "this event is the materialized leaf",
	child: "continue with the child",
	parent: "this event is off the selected branch; go back through the parent",
};

export function formatTrace(result: TraceResult, maxChars: number): Formatted {
	const lines: string[] = [`trace ${nodeLine(result.event)}`];
	if (isVisible(result.event)) lines.push(`  ${treeState(result.event.branchState, undefined)} · ${shortTime(result.event.timestamp)}`);
	lines.push(`parent: ${result.parent ? nodeLine(result.parent) : "none (a root)"}`);
	lines.push(...(result.children.length ? nodeList(`children (${result.children.length})`, result.children) : ["children: none"]));
	lines.push(...(result.siblings.length ? nodeList(`siblings (${result.siblings.length}, derived: same parent)`, result.siblings) : ["siblings: none"]));
	const toward = result.towardLeaf ? `${TOWARD[result.towardLeaf] ?? result.towardLeaf}${result.towardLeafRef && result.towardLeaf !== "self" ? ` ${result.towardLeafRef}` : ""}` : "unknown (not on a resolved branch)";
	lines.push(`toward leaf: ${toward}`);
	const other = result.relations.filter((r) => !["parent", "child", "sibling"].includes(r.type) && !r.type.startsWith("file-"));
	for (const r of other) {
		const node = r.node ? nodeLine(r.node) : (r.path ?? "");
		lines.push(r.direction === "out" ? `this is ${r.type} (${r.label}): ${node}` : `${r.type} this (${r.label}): ${node}`);
	}
	for (const f of result.files) lines.push(`file ${f.op}: ${f.path} (${f.label})`);
	for (const l of result.lineage) {
		if (l.masked) lines.push(`${l.relation}: (a session you may not see)`);
		else if (l.indexed === false) lines.push(`${l.relation}: ${l.path} (not indexed)`);
		else lines.push(`${l.relation}: session ${l.sessionId}${l.forkAnchor && isVisible(l.forkAnchor) ? ` · fork anchor ${l.forkAnchor.ref}` : ""}`);
	}
	if (result.labels.length) lines.push(`labels: ${result.labels.join(", ")}`);
	return bound(lines, maxChars);
}

/** Keep whole lines within the budget; say how many were dropped. */
export function bound(lines: string[], maxChars: number): Formatted {
	const kept: string[] = [];
	let used = 0;
	for (const line of lines) {
		if (kept.length > 0 && used + line.length + 1 > maxChars - 80) break;
		kept.push(line);
		used += line.length + 1;
	}
	const dropped = lines.length - kept.length;
	if (dropped > 0) kept.push(`… ${dropped} more line${dropped === 1 ? "" : "s"} not shown, to stay within ${maxChars} characters.`);
	return { text: kept.join("\n"), shown: kept.length, cut: dropped > 0 };
}
