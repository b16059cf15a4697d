/**
 * The three tools: who is calling, a fresh enough index, one request, compact text for the model
 * and the structured answer in `details`. Errors are thrown (Pi marks the result isError) with a
 * message the model can act on.
 */
import { type Caller, callerOf, type SessionView } from "./caller.ts";
import { formatGroups, formatRead, formatSearch, formatTrace } from "./format.ts";
import {
	BadArgument,
	parseRef,
	type ReadArgs,
	readRequest,
	type SearchArgs,
	searchRequest,
	type TraceArgs,
	traceRequest,
} from "./params.ts";
import type { GroupedSearchResult, ReadResult, SearchResult, TraceResult } from "./protocol.ts";
import { ERRORS, isGrouped } from "./protocol.ts";
import { RpcAborted, RpcError, RpcTimeout } from "./rpc.ts";
import type { EventServer } from "./server.ts";
import { type Settings, trustOf } from "./settings.ts";
import { cleaned, framed } from "./untrusted.ts";

interface Common {
	root: string;
	currentSession: Caller["current"];
	cut: boolean;
}

export type Details =
	| (Common & { tool: "event_search"; result: SearchResult | GroupedSearchResult })
	| (Common & { tool: "event_read"; result: ReadResult })
	| (Common & { tool: "event_trace"; result: TraceResult });

export interface ToolContext {
	cwd: string;
	sessionManager: SessionView & { getSessionDir?(): string };
	/** Pi 1.6: whether the person trusts this project (Pi without project trust: absent). */
	isProjectTrusted?(): boolean;
}

export interface Runtime {
	/** The settings for this cwd; `trusted`: Pi's project-trust decision (settings.ts trustOf). */
	settings(cwd: string, trusted?: boolean): Settings;
	/** The server, created on first use (Pi's session directory tells where this Pi's sessions live). */
	server(cwd: string, sessionDir?: string, trusted?: boolean): EventServer;
}

export interface ToolAnswer {
	content: { type: "text"; text: string }[];
	details: Details;
}

async function ask<T>(rt: Runtime, ctx: ToolContext, caller: Caller, targetsCurrent: boolean, method: string, params: object, signal?: AbortSignal): Promise<T> {
	const server = rt.server(ctx.cwd, ctx.sessionManager.getSessionDir?.(), trustOf(ctx));
	try {
		await server.connection(caller.roots, signal);
		// Earlier turns of this session are only searchable once indexed: refresh first when the
		// call looks into it; otherwise let a background refresh in flight finish.
		if (targetsCurrent) await server.refreshNow(caller.roots, signal, caller.sessionFile ? [caller.sessionFile] : undefined);
		else await server.settled(signal);
		return await server.request<T>(method, params, caller.roots, signal);
	} catch (err) {
		throw explain(err, rt.settings(ctx.cwd, trustOf(ctx)));
	}
}

export function explain(err: unknown, settings: Settings): Error {
	if (err instanceof RpcAborted) return new Error("Cancelled.");
	if (err instanceof RpcTimeout) return new Error(`pi-event-search did not answer in time (${err.message}); try again, or raise eventSearch.timeoutMs (now ${settings.timeoutMs}).`);
	if (err instanceof RpcError) {
		if (err.code === ERRORS.notFound) return new Error(`${err.message}. It does not exist, or it is not visible from this project (the current session is visible only before this call).`);
		if (err.code === ERRORS.invalidParams) return new Error(`Invalid arguments: ${err.message.replace(/^Invalid params:\s*/, "")}`);
		return new Error(`pi-event-search: ${err.message}`);
	}
	return err instanceof Error ? err : new Error(String(err));
}

/** Recorded text goes to the model framed as quoted data; `details` (which Pi writes into the new
 * session file) is the server's masked answer, stripped of control bytes. */
function answer(text: string, details: Details): ToolAnswer {
	return { content: [{ type: "text", text: framed(text, details.root) }], details: cleaned(details) };
}

export async function runSearch(rt: Runtime, toolCallId: string, args: SearchArgs, signal: AbortSignal | undefined, ctx: ToolContext): Promise<ToolAnswer> {
	const settings = rt.settings(ctx.cwd, trustOf(ctx));
	const caller = callerOf(ctx.cwd, ctx.sessionManager, toolCallId, settings.roots);
	const targetsCurrent = args.sessionId === caller.current.sessionId;
	const result = await ask<SearchResult | GroupedSearchResult>(rt, ctx, caller, targetsCurrent, "piEvents/search", searchRequest(args, caller.current, ctx.cwd), signal);
	const view = { query: args.query, maxChars: settings.maxChars, root: caller.roots.join(", "), currentSession: targetsCurrent, stillIndexing: rt.server(ctx.cwd).stillIndexing };
	const out = isGrouped(result) ? formatGroups(result, view) : formatSearch(result, view);
	return answer(out.text, { tool: "event_search", result, root: view.root, currentSession: caller.current, cut: out.cut });
}

export async function runRead(rt: Runtime, toolCallId: string, args: ReadArgs, signal: AbortSignal | undefined, ctx: ToolContext): Promise<ToolAnswer> {
	const settings = rt.settings(ctx.cwd, trustOf(ctx));
	const caller = callerOf(ctx.cwd, ctx.sessionManager, toolCallId, settings.roots);
	const ref = checked(() => parseRef(args.ref));
	const params = readRequest(args, caller.current, settings.maxChars);
	const result = await ask<ReadResult>(rt, ctx, caller, ref.sessionId === caller.current.sessionId, "piEvents/read", params, signal);
	const out = formatRead(result, settings.maxChars);
	return answer(out.text, { tool: "event_read", result, root: caller.roots.join(", "), currentSession: caller.current, cut: out.cut });
}

export async function runTrace(rt: Runtime, toolCallId: string, args: TraceArgs, signal: AbortSignal | undefined, ctx: ToolContext): Promise<ToolAnswer> {
	const settings = rt.settings(ctx.cwd, trustOf(ctx));
	const caller = callerOf(ctx.cwd, ctx.sessionManager, toolCallId, settings.roots);
	const ref = checked(() => parseRef(args.ref));
	const result = await ask<TraceResult>(rt, ctx, caller, ref.sessionId === caller.current.sessionId, "piEvents/trace", traceRequest(args, caller.current), signal);
	const out = formatTrace(result, settings.maxChars);
	return answer(out.text, { tool: "event_trace", result, root: caller.roots.join(", "), currentSession: caller.current, cut: out.cut });
}

function checked<T>(fn: () => T): T {
	try {
		return fn();
	} catch (err) {
		if (err instanceof BadArgument) throw new Error(`Invalid arguments: ${err.message}`, { cause: err });
		throw err;
	}
}
