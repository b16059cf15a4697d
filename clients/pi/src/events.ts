/**
 * `/events [words]` for the person at Pi's prompt: the picker (picker.ts) in the interactive TUI,
 * else (RPC mode, other UIs: `custom()` never builds a component) a `select` over the hits. What
 * is chosen goes into the prompt at the cursor; nothing is sent. Same authorization as the tools:
 * the project's root, the current session left out.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { AutocompleteItem } from "@mariozechner/pi-tui";
import { authorizationRoot, type CurrentSession } from "./caller.ts";
import { formatRead, formatTrace, isPartial, kindLabel, shortTime } from "./format.ts";
import { readRequest, searchRequest, traceRequest } from "./params.ts";
import { EventPicker, type PickerResult, type PickerSource, quoteOf } from "./picker.ts";
import type { GroupedSearchResult, Hit, ReadResult, SearchResult, TraceResult } from "./protocol.ts";
import { trustOf } from "./settings.ts";
import type { Runtime } from "./tools.ts";
import { explain } from "./tools.ts";
import { cleaned, stripControls } from "./untrusted.ts";

const SELECT_LIMIT = 20;
const VIEW_CHARS = 20_000;
const RECENT_MAX = 20;

/** The server, asked as the person at this Pi's prompt (no tool call: the cutoff is the leaf). */
export function pickerSource(rt: Runtime, ctx: Pick<ExtensionContext, "cwd" | "sessionManager">): PickerSource {
	const trusted = trustOf(ctx);
	const settings = rt.settings(ctx.cwd, trusted);
	const roots = settings.roots?.length ? settings.roots : [authorizationRoot(ctx.cwd)];
	const sm = ctx.sessionManager;
	// The person's view: everything of the current session so far is left out (up to its leaf).
	const current: CurrentSession = { sessionId: sm.getSessionId(), cutoff: sm.getLeafId() };
	const ask = async <T>(method: string, params: object, signal?: AbortSignal): Promise<T> => {
		try {
			return await rt.server(ctx.cwd, sm.getSessionDir(), trusted).request<T>(method, params, roots, signal);
		} catch (err) {
			throw explain(err, settings);
		}
	};
	const read = (hit: Hit, before: number): Promise<ReadResult> =>
		ask<ReadResult>("piEvents/read", { ...readRequest({ ref: hit.ref, before, after: before }, current, VIEW_CHARS), ...(before === 0 && hit.fragmentId ? { fragment: hit.fragmentId } : {}) });
	// What reaches the terminal (and a quote, the prompt) is stripped of control bytes here too.
	return {
		root: roots.join(", "),
		search: async (query, cursor, limit, signal, settled) =>
			cleaned(await ask<SearchResult>("piEvents/search", { ...searchRequest({ query, limit }, current), prefixLast: true, ...(settled ? { settled } : {}), cursor }, signal)),
		searchSessions: async (query, cursor, limit, signal, settled) =>
			cleaned(await ask<GroupedSearchResult>("piEvents/search", { ...searchRequest({ query, limit, groupBy: "session" }, current), prefixLast: true, ...(settled ? { settled } : {}), cursor }, signal)),
		preview: async (hit) => stripControls((await read(hit, 0)).fragments.map((f) => f.text).join("\n")) || "(no text content)",
		read: async (hit) => stripControls(formatRead(await read(hit, 3), VIEW_CHARS).text),
		trace: async (hit) => stripControls(formatTrace(await ask<TraceResult>("piEvents/trace", traceRequest({ ref: hit.ref }, current)), VIEW_CHARS).text),
	};
}

/** One line per hit for `select` (numbered: the options must differ). */
export function optionOf(hit: Hit, n: number): string {
	const snippet = hit.snippet.replace(/\s+/g, " ").trim().slice(0, 120);
	const partial = isPartial(hit) ? ` · partial, missing ${(hit.missing ?? []).join(", ")}` : "";
	return `${n}. ${kindLabel(hit.kind, hit.toolName, hit.isError)} · ${shortTime(hit.timestamp)} · ${hit.sessionName ?? hit.sessionId.slice(0, 8)}${partial} · ${snippet} · ${hit.ref}`;
}

export function insertion(result: NonNullable<PickerResult>): string {
	return result.action === "quote" ? quoteOf(result.hit) : `${result.hit.ref} `;
}

export type UI = Pick<ExtensionContext["ui"], "custom" | "select" | "notify" | "pasteToEditor">;

/** The picker, or the select fallback when the UI builds no component; the query last searched. */
export async function openEvents(ui: UI, source: PickerSource, query: string): Promise<string> {
	let picker: EventPicker | undefined;
	let render = (): void => {};
	const picked = await ui.custom<PickerResult>((tui, theme, _kb, done) => {
		render = () => tui.requestRender();
		picker = new EventPicker(source, theme, render, done, query);
		return picker;
	});
	if (picker) {
		if (picked) {
			ui.pasteToEditor(insertion(picked));
			render(); // Pi 1.x draws a paste only on the next render: show the reference now
		}
		return picker.query;
	}
	const result = await source.search(query, null, SELECT_LIMIT);
	if (result.hits.length === 0) {
		ui.notify(`No events match ${JSON.stringify(query)} in this project's other sessions.`, "info");
		return query;
	}
	const options = result.hits.map((h, i) => optionOf(h, i + 1));
	const chosen = await ui.select(`Pi events for ${JSON.stringify(query)} (choose one to insert its reference)`, options);
	const hit = chosen === undefined ? undefined : result.hits[options.indexOf(chosen)];
	if (hit) ui.pasteToEditor(`${hit.ref} `);
	return query;
}

/** Recent /events queries, newest first, kept next to the extension's server install. */
export class RecentQueries {
	constructor(private readonly file: string) {}

	list(): string[] {
		try {
			const value: unknown = JSON.parse(readFileSync(this.file, "utf8"));
			return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
		} catch {
			return [];
		}
	}

	add(query: string): void {
		const q = query.trim();
		if (!q) return;
		const next = [q, ...this.list().filter((x) => x !== q)].slice(0, RECENT_MAX);
		try {
			mkdirSync(dirname(this.file), { recursive: true });
			writeFileSync(`${this.file}.tmp`, JSON.stringify(next));
			renameSync(`${this.file}.tmp`, this.file);
		} catch {
			// a query not remembered is no error
		}
	}

	completions(prefix: string): AutocompleteItem[] | null {
		const p = prefix.trim().toLowerCase();
		const items = this.list()
			.filter((q) => q.toLowerCase().startsWith(p) && q.toLowerCase() !== p)
			.map((q) => ({ value: q, label: q, description: "recent search" }));
		return items.length ? items : null;
	}
}

export function recentFile(installDir: string): string {
	return join(installDir, "..", "recent-queries.json");
}
