/**
 * The tools' parameter schemas (TypeBox, what the model sees) and their translation into
 * docs/protocol.md requests. The server validates again; checks here only give the model a
 * clearer message sooner.
 */
import { isAbsolute, resolve } from "node:path";
import { StringEnum } from "@mariozechner/pi-ai";
import { type Static, Type } from "typebox";
import type { CurrentSession } from "./caller.ts";
import { KINDS } from "./protocol.ts";

export const SEARCH_LIMIT = { default: 10, max: 50 } as const;

export const SearchSchema = Type.Object({
	query: Type.String({
		description: 'A few distinctive words and "quoted phrases". Hits are ranked by evidence, those lacking words marked partial with the words they miss (identifier parts such as retry in retryCount, common synonyms and the same turn\'s call/result or question/answer count, below the words as typed). A quoted phrase must match exactly. Nothing else is syntax. Empty lists the newest events that pass the filters.',
	}),
	exact: Type.Optional(Type.Boolean({ description: "Only events holding every word (no partial hits, no synonyms or spelling corrections)." })),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT.max, description: `Hits to return, or sessions with groupBy (default ${SEARCH_LIMIT.default}, at most ${SEARCH_LIMIT.max}).` })),
	groupBy: Type.Optional(
		StringEnum(["session"] as const, {
			description: "session: one line per matching session instead of one block per event (which session was it?): its strongest hit's ref, its name or first prompt, how many of its events match, its last time. Same query and filters; limit counts sessions.",
		}),
	),
	kinds: Type.Optional(Type.Array(StringEnum(KINDS), { description: "Only these kinds of evidence, e.g. bash.command, tool.result, user.text." })),
	tool: Type.Optional(Type.String({ description: "Only events of this tool, e.g. bash, edit, read." })),
	errors: Type.Optional(Type.Boolean({ description: "Only failed tool results and bash runs with a non-zero exit." })),
	since: Type.Optional(Type.String({ description: "ISO date or time (UTC when no zone): only events at or after it." })),
	until: Type.Optional(Type.String({ description: "ISO date or time: only events before it." })),
	sessionId: Type.Optional(Type.String({ description: "Only this session. Naming the current session searches what was written before this call." })),
	branchState: Type.Optional(StringEnum(["selected", "alternate", "unknown"] as const, { description: "selected: on the branch that was kept; alternate: an abandoned branch." })),
	file: Type.Optional(Type.String({ description: "Only events with evidence about this file or directory: a path as your other tools take it (relative to the working directory, or absolute)." })),
});

export const ReadSchema = Type.Object({
	ref: Type.String({ description: "pi-event:<sessionId>/<entryId> (or <sessionId>/<entryId>), as returned by event_search." }),
	order: Type.Optional(StringEnum(["append", "branch"] as const, { description: "Neighbours in file order (append, default) or along the conversation branch (branch)." })),
	before: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: "Neighbours before the event (default 1)." })),
	after: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: "Neighbours after the event (default 1)." })),
	fragment: Type.Optional(Type.String({ description: "Only this part of the event, e.g. tool.result:0, as a previous read lists its parts (with offset, to continue a cut one)." })),
	offset: Type.Optional(Type.Integer({ minimum: 0, description: "Start of the text window, in characters (to continue a cut read)." })),
	length: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, description: "Characters of text per part (default: what fits the answer)." })),
});

export const TraceSchema = Type.Object({
	ref: Type.String({ description: "pi-event:<sessionId>/<entryId> (or <sessionId>/<entryId>)." }),
});

export type SearchArgs = Static<typeof SearchSchema>;
export type ReadArgs = Static<typeof ReadSchema>;
export type TraceArgs = Static<typeof TraceSchema>;

export class BadArgument extends Error {}

const REF = /^(?:pi-event:)?([A-Za-z0-9][A-Za-z0-9._-]*)\/([A-Za-z0-9][A-Za-z0-9._~-]*)(?:#([a-z.]+:[0-9]+))?$/;

export interface ParsedRef {
	ref: string;
	sessionId: string;
	entryId: string;
	fragment?: string;
}

/** A ref as a model may quote it: in backticks, quotes or angle brackets. */
function unwrap(text: string): string {
	return text.trim().replace(/^[`'"<]+|[`'">]+$/g, "");
}

export function parseRef(text: string): ParsedRef {
	const m = REF.exec(unwrap(text));
	if (!m) throw new BadArgument(`not an event reference: ${JSON.stringify(text.slice(0, 200))} (expected pi-event:<sessionId>/<entryId>, as event_search returns)`);
	return { ref: `pi-event:${m[1]}/${m[2]}`, sessionId: m[1] as string, entryId: m[2] as string, fragment: m[3] };
}

/** The extension's own tools: their calls and answers only repeat earlier hits. */
export const OWN_TOOLS = ["event_search", "event_read", "event_trace"] as const;

/** Runs before schema validation: one kind given as a string is a list of one. */
export function prepareSearch(args: unknown): SearchArgs {
	const input = args as Record<string, unknown> | null;
	if (input && typeof input === "object" && typeof input.kinds === "string") return { ...input, kinds: [input.kinds] } as SearchArgs;
	return args as SearchArgs;
}

/** The model names files as its tools do: relative to Pi's working directory, which may lie below the
 * authorization root the server resolves relative paths against. */
export function searchRequest(args: SearchArgs, current: CurrentSession | undefined, cwd?: string): object {
	const filters: Record<string, unknown> = {};
	// Left out unless asked for by name (tool=event_search finds earlier searches).
	if (!(OWN_TOOLS as readonly string[]).includes(args.tool ?? "")) filters.excludeTool = [...OWN_TOOLS];
	if (args.kinds?.length) filters.kind = args.kinds;
	if (args.tool) filters.tool = [args.tool];
	if (args.errors) filters.errors = true;
	if (args.since) filters.since = args.since;
	if (args.until) filters.until = args.until;
	if (args.sessionId) filters.sessionId = args.sessionId;
	if (args.branchState) filters.branchState = [args.branchState];
	if (args.file) filters.file = cwd && !isAbsolute(args.file) ? resolve(cwd, args.file) : args.file;
	const limit = Math.min(Math.max(args.limit ?? SEARCH_LIMIT.default, 1), SEARCH_LIMIT.max);
	return { query: args.query, limit, filters, ...(args.exact ? { match: "all" } : {}), ...(args.groupBy === "session" ? { groupBy: "session" } : {}), ...session(current) };
}

/** `length` defaults to the answer's budget: the formatter cuts what does not fit anyway. */
export function readRequest(args: ReadArgs, current: CurrentSession | undefined, maxChars: number): object {
	const ref = parseRef(args.ref);
	return {
		ref: ref.ref,
		...(args.fragment || ref.fragment ? { fragment: args.fragment ?? ref.fragment } : {}),
		offset: args.offset ?? 0,
		length: args.length ?? Math.max(200, maxChars),
		before: args.before ?? 1,
		after: args.after ?? 1,
		order: args.order ?? "append",
		...session(current),
	};
}

export function traceRequest(args: TraceArgs, current: CurrentSession | undefined): object {
	return { ref: parseRef(args.ref).ref, ...session(current) };
}

/**
 * The caller's session for the server, which requires a cutoff: a session with no entry yet (no
 * leaf) has nothing to hide, and is not named.
 */
function session(current: CurrentSession | undefined): { currentSession?: CurrentSession } {
	return current?.cutoff ? { currentSession: current } : {};
}
