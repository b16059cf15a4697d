/**
 * The /events picker: a pi-tui component that searches as you type (the last word as a prefix),
 * lists hits (kind, time, session, snippet) a page at a time, previews the selected event's exact
 * content, and shows the read and trace views. Ctrl+G groups the same search by session: a row is
 * then a session (counts, time, name or first prompt) and everything else acts on its strongest
 * hit. It knows nothing of Pi or the server: a PickerSource answers, `done` ends it with what to
 * insert (or nothing, on Escape).
 */
import { type Component, Input, matchesKey, truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { CLOSE, isPartial, kindLabel, markMatches, OPEN, shortTime } from "./format.ts";
import type { GroupedSearchResult, Hit, SearchResult, SessionGroup } from "./protocol.ts";

export interface PickerSource {
	/** The authorization root(s) the answers are for, named in the header. */
	root?: string;
	/**
	 * Aborted when a newer search replaces it (the server then stops its SQL). `settled`: the
	 * typing paused, the best hits are read again for their meaning (protocol `settled`).
	 */
	search(query: string, cursor: string | null, limit: number, signal?: AbortSignal, settled?: boolean): Promise<SearchResult>;
	/** The same search grouped by session (`limit` counts sessions). */
	searchSessions(query: string, cursor: string | null, limit: number, signal?: AbortSignal, settled?: boolean): Promise<GroupedSearchResult>;
	/** The selected event's exact text (the preview). */
	preview(hit: Hit): Promise<string>;
	/** The read view (neighbours) and the trace view, as text. */
	read(hit: Hit): Promise<string>;
	trace(hit: Hit): Promise<string>;
}

export type PickerResult = { action: "ref" | "quote"; hit: Hit } | undefined;

/** The few Theme methods the picker uses (Pi's Theme has them). */
export interface PickerTheme {
	fg(color: "accent" | "muted" | "dim" | "warning" | "error" | "success" | "border", text: string): string;
	bold(text: string): string;
	bg(color: "selectedBg", text: string): string;
}

/** A row is an event, or a session (shown with its strongest hit). */
export type GroupMode = "event" | "session";

export const HELP = "enter insert ref · tab insert quote · ctrl+r read · ctrl+t trace · ctrl+g by session · pgup/pgdn page · esc close";
/** In session mode the keys act on the session's strongest hit. */
export const SESSION_HELP = "enter insert its top hit's ref · tab quote it · ctrl+r read · ctrl+t trace · ctrl+g by event · pgup/pgdn · esc close";
const TYPING_DELAY_MS = 60;
/**
 * A query of two words or more whose typing paused this long is asked once more, settled: the
 * server then reads its best hits for their meaning (a query typed from memory finds the event
 * that says it in other words), which it skips while keys come.
 */
export const SETTLE_MS = 600;
/** While the first index grows, the first page is asked again this often: hits arrive as they are indexed. */
export const INDEXING_REFRESH_MS = 1000;
const PREVIEW_LINES = 6;

interface Detail {
	title: string;
	lines: string[];
	top: number;
}

export class EventPicker implements Component {
	readonly input = new Input();
	/** The rows' events: the hits, or in session mode each session's strongest hit. */
	hits: Hit[] = [];
	/** Session mode: the sessions of the rows (hits[i] is groups[i].top). */
	groups: SessionGroup[] = [];
	mode: GroupMode = "event";
	selected = 0;
	page = 0;
	/** The cursor of each page seen so far (page 0: null). */
	private cursors: (string | null)[] = [null];
	private nextCursor: string | null = null;
	/** The page of the latest search (shown once it answers). */
	private asked = 0;
	private status = "";
	private detail: Detail | undefined;
	private previews = new Map<string, string>();
	private generation = 0;
	private inFlight: AbortController | undefined;
	private timer: NodeJS.Timeout | undefined;
	private refresh: NodeJS.Timeout | undefined;
	private settle: NodeJS.Timeout | undefined;
	/** The rows are the settled order (their cursors too): pages are asked settled. */
	private settled = false;
	/** The query whose hits are shown (the latency bench times keystroke -> this). */
	answered: string | undefined;
	/** The last search in flight (tests and the bench await it). */
	searching: Promise<void> = Promise.resolve();

	constructor(
		private readonly source: PickerSource,
		private readonly theme: PickerTheme,
		private readonly requestRender: () => void,
		private readonly done: (result: PickerResult) => void,
		initialQuery = "",
		readonly pageSize = 8,
		private readonly settleMs = SETTLE_MS,
	) {
		this.input.setValue(initialQuery);
		this.input.handleInput("\x05"); // ctrl+e: the cursor after the words given to /events
		this.input.focused = true;
		this.searching = this.search(0);
	}

	get query(): string {
		return this.input.getValue();
	}

	handleInput(data: string): void {
		if (this.detail) this.detailKey(data);
		else this.listKey(data);
		this.requestRender();
	}

	private listKey(data: string): void {
		const hit = this.hits[this.selected];
		if (matchesKey(data, "escape")) return this.finish(undefined);
		if (matchesKey(data, "enter")) return hit ? this.finish({ action: "ref", hit }) : undefined;
		if (matchesKey(data, "tab")) return hit ? this.finish({ action: "quote", hit }) : undefined;
		if (matchesKey(data, "up") || matchesKey(data, "ctrl+p")) return this.move(-1);
		if (matchesKey(data, "down") || matchesKey(data, "ctrl+n")) return this.move(1);
		if (matchesKey(data, "pageDown")) return this.turn(1);
		if (matchesKey(data, "pageUp")) return this.turn(-1);
		if (matchesKey(data, "ctrl+r") && hit) return this.open("read", hit);
		if (matchesKey(data, "ctrl+t") && hit) return this.open("trace", hit);
		if (matchesKey(data, "ctrl+g")) return this.toggle();
		const before = this.query;
		this.input.handleInput(data);
		if (this.query !== before) this.typed();
	}

	private detailKey(data: string): void {
		const d = this.detail as Detail;
		const hit = this.hits[this.selected];
		if (matchesKey(data, "escape") || matchesKey(data, "left")) this.detail = undefined;
		else if (matchesKey(data, "enter") && hit) this.finish({ action: "ref", hit });
		else if (matchesKey(data, "tab") && hit) this.finish({ action: "quote", hit });
		else if (matchesKey(data, "ctrl+r") && hit) this.open("read", hit);
		else if (matchesKey(data, "ctrl+t") && hit) this.open("trace", hit);
		else if (matchesKey(data, "up")) d.top = Math.max(0, d.top - 1);
		else if (matchesKey(data, "down")) d.top = Math.min(Math.max(0, d.lines.length - 1), d.top + 1);
		else if (matchesKey(data, "pageUp")) d.top = Math.max(0, d.top - 10);
		else if (matchesKey(data, "pageDown")) d.top = Math.min(Math.max(0, d.lines.length - 1), d.top + 10);
	}

	private finish(result: PickerResult): void {
		clearTimeout(this.timer);
		clearTimeout(this.refresh);
		clearTimeout(this.settle);
		this.generation++;
		this.inFlight?.abort();
		this.done(result);
	}

	private move(step: number): void {
		if (this.hits.length === 0) return;
		this.selected = (this.selected + step + this.hits.length) % this.hits.length;
		this.loadPreview();
	}

	private turn(step: 1 | -1): void {
		// From the page last asked for: keys may come faster than pages.
		const from = this.asked;
		if (step === 1 && !(from === this.page ? this.nextCursor : this.cursors[from + 1])) return;
		if (step === -1 && from === 0) return;
		if (step === 1 && from === this.page) this.cursors[from + 1] = this.nextCursor;
		this.searching = this.search(from + step);
	}

	/** Event rows <-> session rows: the same query from page 0 (cursors belong to one mode). */
	private toggle(): void {
		clearTimeout(this.timer);
		this.mode = this.mode === "event" ? "session" : "event";
		this.cursors = [null];
		this.nextCursor = null;
		this.selected = 0;
		this.searching = this.search(0);
	}

	/** Typing restarts from page 0, once the keys pause. */
	private typed(): void {
		clearTimeout(this.timer);
		clearTimeout(this.settle);
		this.settled = false;
		this.cursors = [null];
		this.timer = setTimeout(() => {
			this.searching = this.search(0);
		}, TYPING_DELAY_MS);
	}

	private async search(page: number, again = false): Promise<void> {
		const generation = ++this.generation;
		clearTimeout(this.refresh);
		clearTimeout(this.settle);
		const settled = this.settled;
		this.asked = page;
		if (!again) this.status = "searching…";
		const query = this.query;
		const mode = this.mode;
		this.inFlight?.abort();
		const inFlight = (this.inFlight = new AbortController());
		try {
			const ask = mode === "session" ? this.source.searchSessions.bind(this.source) : this.source.search.bind(this.source);
			const result = await ask(searchText(query), this.cursors[page] ?? null, this.pageSize, inFlight.signal, settled);
			if (generation !== this.generation) return;
			this.answered = query;
			this.groups = "sessions" in result ? result.sessions : [];
			this.hits = "sessions" in result ? result.sessions.map((g) => g.top) : result.hits;
			this.page = page;
			if (!again || this.selected >= this.hits.length) this.selected = 0;
			this.nextCursor = result.nextCursor;
			const i = result.indexing;
			const fixed = result.didYouMean ? `searched for ${JSON.stringify(result.didYouMean.query)} (no event holds ${result.didYouMean.corrections.map((c) => c.word).join(", ")})` : "";
			this.status = [fixed, i ? `still indexing: ${i.percent}% of sessions` : ""].filter(Boolean).join(" · ");
			if (i && page === 0) {
				// Nothing else was asked meanwhile: the same page again, with what has been indexed since.
				this.refresh = setTimeout(() => {
					if (generation === this.generation) this.searching = this.search(0, true);
				}, INDEXING_REFRESH_MS);
				this.refresh.unref();
			} else if (!settled && page === 0 && settles(searchText(query))) {
				// Unless a key comes or the selection moves first: the same query, settled.
				this.settle = setTimeout(() => {
					if (generation !== this.generation || this.selected !== 0 || this.query !== query) return;
					this.settled = true;
					this.cursors = [null];
					this.searching = this.search(0, true);
				}, this.settleMs);
				this.settle.unref();
			}
			this.loadPreview();
		} catch (err) {
			if (generation !== this.generation) return;
			this.hits = [];
			this.groups = [];
			this.status = (err as Error).message;
		}
		this.requestRender();
	}

	private loadPreview(): void {
		const hit = this.hits[this.selected];
		if (!hit || this.previews.has(hit.ref)) return;
		this.previews.set(hit.ref, "");
		this.source.preview(hit).then(
			(text) => this.previews.set(hit.ref, text),
			(err: Error) => this.previews.set(hit.ref, `(cannot read it: ${err.message})`),
		).finally(() => this.requestRender());
	}

	private open(mode: "read" | "trace", hit: Hit): void {
		const title = `${mode} ${hit.ref}`;
		this.detail = { title, lines: ["loading…"], top: 0 };
		const view = this.detail;
		(mode === "read" ? this.source.read(hit) : this.source.trace(hit)).then(
			(text) => (view.lines = text.split("\n")),
			(err: Error) => (view.lines = [`cannot ${mode} it: ${err.message}`]),
		).finally(() => this.requestRender());
	}

	invalidate(): void {
		this.input.invalidate();
	}

	render(width: number): string[] {
		const t = this.theme;
		const rule = (label: string): string => truncateToWidth(t.fg("border", `── ${label} ${"─".repeat(Math.max(0, width - visibleWidth(label) - 4))}`), width);
		const fit = (line: string): string => truncateToWidth(line, width);
		const title = this.mode === "session" ? "Pi events by session" : "Pi events";
		const lines = [rule(t.fg("accent", t.bold(title)) + t.fg("muted", ` · ${this.source.root ? `sessions of ${this.source.root}` : "this project"}, current session left out`))];
		if (this.detail) {
			const d = this.detail;
			lines.push(fit(t.fg("accent", d.title)));
			for (const l of d.lines.slice(d.top, d.top + 16)) lines.push(fit(l.replace(/\t/g, "  ")));
			lines.push(fit(t.fg("dim", `lines ${d.top + 1}-${Math.min(d.lines.length, d.top + 16)} of ${d.lines.length} · ↑↓ pgup/pgdn scroll · esc back · enter insert ref · tab quote`)));
			return lines;
		}
		lines.push(...this.input.render(width));
		const none = this.mode === "session" ? "No session has matching events." : "No events match.";
		if (this.hits.length === 0) lines.push(fit(t.fg(this.status && this.status !== "searching…" ? "warning" : "muted", this.status || none)));
		for (const [i, hit] of this.hits.entries()) {
			const group = this.mode === "session" ? this.groups[i] : undefined;
			lines.push(group ? this.sessionRow(group, i === this.selected, width) : this.row(hit, i === this.selected, width));
		}
		const more = this.nextCursor ? " · pgdn more" : "";
		const back = this.page > 0 ? " · pgup back" : "";
		const status = this.status && this.hits.length ? ` · ${this.status}` : "";
		const unit = this.mode === "session" ? "session" : "hit";
		lines.push(fit(t.fg("dim", `page ${this.page + 1} · ${this.hits.length} ${unit}${this.hits.length === 1 ? "" : "s"}${more}${back}`) + t.fg("warning", status)));
		const hit = this.hits[this.selected];
		if (hit) {
			lines.push(rule(`preview ${hit.ref}`));
			const text = this.previews.get(hit.ref) || "loading…";
			for (const l of text.split("\n").slice(0, PREVIEW_LINES)) lines.push(fit(l.replace(/\t/g, "  ")));
		}
		lines.push(fit(t.fg("dim", this.mode === "session" ? SESSION_HELP : HELP)));
		return lines;
	}

	/** One session: matching/all events, last time, name (or first prompt), then its strongest hit. */
	private sessionRow(group: SessionGroup, selected: boolean, width: number): string {
		const t = this.theme;
		const cell = (text: string, w: number): string => truncateToWidth(text, w, "…", true);
		const top = group.top;
		const counts = cell(`${group.matches}/${group.events}`, 9);
		const time = cell(shortTime(group.updated).slice(0, 16), 16);
		const title = cell((group.name || group.firstPrompt || group.sessionId.slice(0, 8)).replace(/\s+/g, " "), 32);
		const snippet = emphasize(markMatches(top.snippet, top.matches).replace(/\s+/g, " "), (s) => t.bold(t.fg("accent", s)));
		const kind = kindLabel(top.kind, top.toolName, top.isError);
		const head = `${selected ? t.fg("accent", "▸") : " "} ${t.fg("success", counts)} ${t.fg("muted", time)} ${group.name ? title : t.fg("muted", title)} ${top.isError ? t.fg("error", kind) : t.fg("dim", kind)} ${this.partial(top)}`;
		const line = truncateToWidth(head + snippet, width, "…", true);
		return selected ? t.bg("selectedBg", line) : line;
	}

	/** A partial hit says so before its snippet, with the words it lacks: "partial −bug ". */
	private partial(hit: Hit): string {
		if (!isPartial(hit)) return "";
		return this.theme.fg("warning", `partial ${(hit.missing ?? []).map((w) => `−${w}`).join(" ")} `);
	}

	/** One hit: kind, time, session name, snippet with the matches emphasized. */
	private row(hit: Hit, selected: boolean, width: number): string {
		const t = this.theme;
		const cell = (text: string, w: number): string => truncateToWidth(text, w, "…", true);
		const kind = cell(kindLabel(hit.kind, hit.toolName, hit.isError), 22);
		const time = cell(shortTime(hit.timestamp).slice(0, 16), 16);
		const session = cell(hit.sessionName ?? hit.sessionId.slice(0, 8), 20);
		const snippet = emphasize(markMatches(hit.snippet, hit.matches).replace(/\s+/g, " "), (s) => t.bold(t.fg("accent", s)));
		const head = `${selected ? t.fg("accent", "▸") : " "} ${hit.isError ? t.fg("error", kind) : t.fg("success", kind)} ${t.fg("muted", time)} ${session} ${this.partial(hit)}`;
		const line = truncateToWidth(head + snippet, width, "…", true);
		return selected ? t.bg("selectedBg", line) : line;
	}
}

/**
 * What is searched for the text typed: a last word of one character is left out until the next key
 * (as a prefix it matches most of the vocabulary: the slowest search there is, for no use).
 */
export function searchText(typed: string): string {
	return /(^|\s)\S$/.test(typed) ? typed.slice(0, -1).trimEnd() : typed;
}

/** Whether a query asked as typed is worth asking again settled: two words or more, the last
 * still open (after a space the server already reads it as finished). */
export function settles(text: string): boolean {
	return /\S$/.test(text) && text.trim().split(/\s+/).length >= 2;
}

/** «match» -> styled match, without the marks. */
function emphasize(text: string, style: (s: string) => string): string {
	return text.replace(new RegExp(`${OPEN}([^${CLOSE}]*)${CLOSE}`, "g"), (_m, inner: string) => style(inner));
}

/** The text a quote inserts: the snippet as a Markdown quote, then its reference. */
export function quoteOf(hit: Hit): string {
	const body = hit.snippet.replace(/\s+/g, " ").trim();
	return `> ${body}\n> — ${hit.ref}\n`;
}
