/**
 * The /events picker through pi-tui: rendering (rows, emphasis, preview, help), keys (typing
 * searches with the last word as a prefix, moving, Enter/Tab/Escape, read and trace views) and
 * paging with the server's cursors. The source answers from a fixed list of protocol-shaped hits,
 * as the server would page them. With PIES_PICKER_FRAME set, the frame a real TUI wrote (ANSI) is
 * saved there: docs/images/pi-events-picker.png is rendered from it (tests/pi/render_frame.py).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { test } from "node:test";
import { type Terminal, TUI } from "@mariozechner/pi-tui";
// Pi's own theme (the one custom() hands an extension); the package index does not export it.
import { initTheme, theme } from "../node_modules/@mariozechner/pi-coding-agent/dist/modes/interactive/theme/theme.js";
import { EventPicker, HELP, INDEXING_REFRESH_MS, type PickerResult, type PickerSource, quoteOf, SESSION_HELP, searchText, settles } from "../src/picker.ts";
import type { Hit, SessionGroup } from "../src/protocol.ts";

const KEY = { down: "\x1b[B", up: "\x1b[A", enter: "\r", tab: "\t", esc: "\x1b", pgdn: "\x1b[6~", pgup: "\x1b[5~", ctrlR: "\x12", ctrlT: "\x14", ctrlG: "\x07", backspace: "\x7f" };

const SESSIONS = ["fix the build", "websocket reconnect", "release 0.4", "flaky CI on arm64"];
const TEXTS = [
	"npm ERR! missing script: build — the workspace lost its build entry after the rename",
	"$ npm run build\n> tsc -p . && esbuild src/index.ts --bundle\nsrc/ws.ts(41,7): error TS2322",
	"The reconnect loop backs off 250 ms → 8 s; builds on arm64 time out at 60 s",
	"git bisect good 3f2a1c0 — the build broke in the commit that moved tsconfig.json",
	"Decided: keep the reconnect backoff, raise the CI build timeout to 120 s",
];
const KINDS: [string, string | null, boolean][] = [
	["tool.result", "bash", true],
	["bash.command", null, false],
	["assistant.text", null, false],
	["tool.call", "bash", false],
	["user.text", null, false],
];

function makeHit(i: number): Hit {
	const text = TEXTS[i % TEXTS.length] as string;
	const [kind, toolName, isError] = KINDS[i % KINDS.length] as [string, string | null, boolean];
	const sessionId = `019f0000-0000-7000-8000-00000000000${i % SESSIONS.length}`;
	return {
		ref: `pi-event:${sessionId}/e${String(i).padStart(3, "0")}`,
		sessionId,
		entryId: `e${String(i).padStart(3, "0")}`,
		kind,
		toolName,
		isError,
		timestamp: `2026-11-${String(28 - (i % 20)).padStart(2, "0")}T${String(9 + (i % 9)).padStart(2, "0")}:14:05.120Z`,
		snippet: text.split("\n")[0] as string,
		sessionName: SESSIONS[i % SESSIONS.length],
		source: { path: `/home/u/.pi/agent/sessions/x/${sessionId}.jsonl`, uri: "file:///x", line: i + 2 },
	};
}

const ALL = Array.from({ length: 19 }, (_, i) => makeHit(i));

/** Matches every term; the last one as a prefix (what prefixLast asks of the server). */
function matching(query: string): Hit[] {
	const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
	return ALL.filter((h) => {
		const words = TEXTS[ALL.indexOf(h) % TEXTS.length]!.toLowerCase().split(/[^a-z0-9]+/);
		return terms.every((t, i) => (i === terms.length - 1 ? words.some((w) => w.startsWith(t)) : words.includes(t)));
	});
}

function withMatches(hit: Hit, query: string): Hit {
	const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
	const matches: [number, number][] = [];
	for (const t of terms) {
		const at = hit.snippet.toLowerCase().indexOf(t);
		if (at >= 0) matches.push([at, at + (/^[a-z0-9]+/i.exec(hit.snippet.slice(at))?.[0].length ?? t.length)]);
	}
	return { ...hit, matches };
}

/** The hits regrouped as the server groups them: a session per first hit, in that order. */
function grouped(query: string): SessionGroup[] {
	const groups = new Map<string, SessionGroup>();
	for (const hit of matching(query)) {
		const g = groups.get(hit.sessionId);
		if (g) g.matches++;
		else {
			const n = SESSIONS.indexOf(hit.sessionName as string);
			// Session 2 has no name: its first prompt stands for it.
			groups.set(hit.sessionId, {
				sessionId: hit.sessionId,
				path: hit.source.path,
				name: n === 2 ? null : (hit.sessionName ?? null),
				firstPrompt: `first prompt of session ${n}`,
				started: "2026-11-01T08:00:00.000Z",
				updated: `2026-11-2${n}T12:00:00.000Z`,
				events: 40 + n,
				matches: 1,
				top: withMatches(hit, query),
			});
		}
	}
	return [...groups.values()];
}

function source(log: string[] = []): PickerSource {
	return {
		searchSessions: (query, cursor, limit) => {
			log.push(`sessions ${JSON.stringify(query)} ${cursor ?? "-"}`);
			const all = grouped(query);
			const start = cursor ? Number(cursor) : 0;
			return Promise.resolve({ sessions: all.slice(start, start + limit), nextCursor: start + limit < all.length ? String(start + limit) : null, indexing: null });
		},
		search: (query, cursor, limit) => {
			log.push(`search ${JSON.stringify(query)} ${cursor ?? "-"}`);
			const found = matching(query);
			const start = cursor ? Number(cursor) : 0;
			const hits = found.slice(start, start + limit).map((h) => withMatches(h, query));
			return Promise.resolve({ hits, nextCursor: start + limit < found.length ? String(start + limit) : null, indexing: null });
		},
		preview: (hit) => Promise.resolve(TEXTS[ALL.findIndex((h) => h.ref === hit.ref) % TEXTS.length] as string),
		read: (hit) => Promise.resolve(`${hit.ref} · read view\nbefore: pi-event:x/e000\nafter: pi-event:x/e002`),
		trace: (hit) => Promise.resolve(`trace ${hit.ref}\nparent: pi-event:x/e000\nchildren: none`),
	};
}

// Terminal escapes (CSI, OSC, APC) built from their characters: ESLint forbids control characters in literals.
const ESC = "\u001b";
const BEL = "\u0007";
const ANSI = new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]|${ESC}[\\]_][^${BEL}]*${BEL}`, "g");
const plain = (s: string): string => s.replace(ANSI, "");
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

initTheme("dark");

async function open(query: string, log?: string[], pageSize?: number): Promise<{ picker: EventPicker; results: PickerResult[]; lines: () => string[] }> {
	const results: PickerResult[] = [];
	const picker = new EventPicker(source(log), theme, () => undefined, (r) => results.push(r), query, pageSize);
	await settle(picker);
	return { picker, results, lines: () => picker.render(120).map(plain) };
}

async function settle(picker: EventPicker): Promise<void> {
	await sleep(90); // past the typing delay
	await picker.searching;
	await sleep(0); // the preview
}

async function keys(picker: EventPicker, ...data: string[]): Promise<void> {
	for (const d of data) picker.handleInput(d);
	await settle(picker);
}

test("rows show kind, time, session and snippet; the preview shows the selected event's exact text", async () => {
	const { picker, lines } = await open("build");
	const out = lines();
	assert.match(out[0] as string, /Pi events · this project, current session left out/);
	assert.match(out[1] as string, /^> build/);
	const first = out.find((l) => l.startsWith("▸ ")) as string;
	assert.match(first, /^▸ tool\.result bash error\s+2026-11-28 09:14\s+fix the build\s+npm ERR! missing script: build/);
	assert.equal(picker.hits.length, 8);
	assert.match(out.join("\n"), /page 1 · 8 hits · pgdn more/);
	const preview = out.findIndex((l) => l.startsWith("── preview pi-event:"));
	assert.equal(out[preview + 1], TEXTS[0]);
	assert.equal(out.at(-1), HELP);
	// The match is emphasized (the accent colour) in the styled row, and the marks themselves are not shown.
	assert.match(picker.render(120).find((l) => plain(l).startsWith("▸"))!, new RegExp(`script: ${ESC}\\[[0-9;]+mbuild${ESC}\\[`));
	assert.doesNotMatch(out.join("\n"), /[«»]/);
	for (const l of picker.render(60)) assert.ok(plain(l).length <= 60, `wider than 60: ${plain(l)}`);
});

test("typing searches again with the last word as a prefix; moving changes the preview", async () => {
	const log: string[] = [];
	const { picker, lines } = await open("build", log);
	await keys(picker, " ", "r", "e", "c");
	assert.equal(picker.query, "build rec");
	assert.deepEqual(log, ['search "build" -', 'search "build rec" -'], "one search after the keys pause");
	assert.ok(picker.hits.length > 0 && picker.hits.every((h) => /reconnect/.test(TEXTS[ALL.findIndex((a) => a.ref === h.ref) % TEXTS.length]!)));
	await keys(picker, KEY.down);
	assert.equal(picker.selected, 1);
	const out = lines();
	const preview = out.findIndex((l) => l.startsWith("── preview "));
	assert.ok(out[preview]!.includes(picker.hits[1]!.ref));
	await keys(picker, KEY.up, KEY.up);
	assert.equal(picker.selected, picker.hits.length - 1, "up from the top wraps to the bottom");
	await keys(picker, KEY.backspace, KEY.backspace, KEY.backspace, KEY.backspace);
	assert.equal(picker.query, "build");
	assert.equal(picker.selected, 0);
});

test("a one-character last word waits for the next key; a replaced search is aborted", async () => {
	assert.equal(searchText("b"), "");
	assert.equal(searchText("build f"), "build");
	assert.equal(searchText("build fa"), "build fa");
	assert.equal(searchText("build "), "build ");
	const signals: AbortSignal[] = [];
	const slow: PickerSource = { ...source(), search: (_q, _c, _l, signal) => (signals.push(signal as AbortSignal), new Promise(() => undefined)) };
	const picker = new EventPicker(slow, theme, () => undefined, () => undefined, "build");
	picker.handleInput("s");
	await sleep(90);
	assert.equal(signals.length, 2);
	assert.deepEqual(signals.map((s) => s.aborted), [true, false]);
	picker.handleInput("\x1b");
	assert.equal(signals[1]?.aborted, true, "closing aborts the search in flight");
});

test("a query of two words whose typing paused is asked once more, settled, unless the selection moved", async () => {
	assert.ok(settles("build rec") && !settles("build") && !settles("build rec "));
	const log: string[] = [];
	const base = source();
	// The server's settled order: the same hits, read again (here: reversed); its cursors its own.
	const paused: PickerSource = {
		...base,
		search: async (query, cursor, limit, signal, settled) => {
			log.push(`search ${JSON.stringify(query)} ${cursor ?? "-"}${settled ? " settled" : ""}`);
			const answer = await base.search(query, cursor, limit, signal);
			return settled ? { ...answer, hits: [...answer.hits].reverse() } : answer;
		},
	};
	const picker = new EventPicker(paused, theme, () => undefined, () => undefined, "build", 3, 150);
	await settle(picker);
	await keys(picker, " ", "r", "e");
	const typed = picker.hits.map((h) => h.ref);
	await sleep(200);
	await picker.searching;
	assert.deepEqual(log, ['search "build" -', 'search "build re" -', 'search "build re" - settled']);
	assert.deepEqual(picker.hits.map((h) => h.ref), [...typed].reverse(), "the settled order replaces the rows");
	await keys(picker, KEY.pgdn);
	assert.equal(log.at(-1), 'search "build re" 3 settled', "its pages are asked settled too");
	// A key resets it; a moved selection keeps the rows as they are.
	await keys(picker, "c");
	await keys(picker, KEY.down);
	await sleep(200);
	assert.equal(log.at(-1), 'search "build rec" -');
	assert.equal(picker.selected, 1);
});

test("Enter inserts the reference, Tab a quote, Escape nothing", async () => {
	const a = await open("build");
	await keys(a.picker, KEY.down, KEY.enter);
	assert.deepEqual(a.results, [{ action: "ref", hit: a.picker.hits[1] }]);
	const b = await open("build");
	await keys(b.picker, KEY.tab);
	assert.equal(b.results[0]?.action, "quote");
	assert.equal(quoteOf(b.results[0]?.hit), `> ${TEXTS[0]}\n> — ${ALL[0]!.ref}\n`);
	const c = await open("build");
	await keys(c.picker, "x", KEY.esc);
	assert.deepEqual(c.results, [undefined]);
});

test("ctrl+r shows the read view and ctrl+t the trace; Escape goes back to the list", async () => {
	const { picker, lines, results } = await open("build");
	await keys(picker, KEY.ctrlR);
	assert.match(lines()[1] as string, /^read pi-event:/);
	assert.match(lines().join("\n"), /read view\nbefore: pi-event:x\/e000/);
	await keys(picker, KEY.ctrlT);
	assert.match(lines().join("\n"), /^trace pi-event:[^\n]*\nparent: pi-event:x\/e000/m);
	await keys(picker, KEY.esc);
	assert.match(lines()[1] as string, /^> build/);
	assert.deepEqual(results, [], "Escape in a view only closes the view");
});

test("page down and up step through the server's pages; the last page stops", async () => {
	const log: string[] = [];
	const { picker, lines } = await open("build", log);
	const total = matching("build").length;
	assert.ok(total > 16 && total <= 24, `fixture: ${total} hits`);
	const page1 = picker.hits.map((h) => h.ref);
	await keys(picker, KEY.pgdn);
	assert.equal(picker.page, 1);
	assert.match(lines().join("\n"), /page 2 · 8 hits · pgdn more · pgup back/);
	await keys(picker, KEY.pgdn);
	assert.equal(picker.hits.length, total - 16);
	assert.doesNotMatch(lines().join("\n"), /pgdn more/);
	await keys(picker, KEY.pgdn);
	assert.equal(picker.page, 2, "no page after the last");
	await keys(picker, KEY.pgup, KEY.pgup);
	assert.deepEqual(picker.hits.map((h) => h.ref), page1);
	assert.deepEqual(log, ['search "build" -', 'search "build" 8', 'search "build" 16', 'search "build" 8', 'search "build" -']);
});

test("ctrl+g groups the same search by session: a row per session, the keys act on its strongest hit", async () => {
	const log: string[] = [];
	const { picker, lines, results } = await open("build", log);
	const eventRefs = picker.hits.map((h) => h.ref);
	await keys(picker, KEY.ctrlG);
	assert.equal(picker.mode, "session");
	assert.deepEqual(log, ['search "build" -', 'sessions "build" -'], "the same query, grouped, from the first page");
	const want = grouped("build");
	assert.deepEqual(picker.groups.map((g) => g.sessionId), want.map((g) => g.sessionId));
	assert.deepEqual(picker.hits.map((h) => h.ref), want.map((g) => g.top.ref), "each row's event is its session's top");
	assert.equal(picker.hits[0]?.ref, eventRefs[0], "the first session's top is the first hit");
	const out = lines();
	assert.match(out[0] as string, /^── Pi events by session · this project, current session left out/);
	assert.match(out[1] as string, /^> build\s*$/);
	const rows = out.filter((l) => /^[▸ ] \d+\/\d+ /.test(l));
	assert.equal(rows.length, want.length, out.join("\n"));
	// matches/events, last time, name, then the strongest hit's kind and snippet
	assert.match(rows[0] as string, /^▸ 5\/40\s+2026-11-20 12:00\s+fix the build\s+tool\.result bash error npm ERR! missing script: build/);
	// an unnamed session shows its first prompt
	assert.ok(rows.some((l) => /first prompt of session 2/.test(l)), rows.join("\n"));
	assert.match(out.join("\n"), new RegExp(`page 1 · ${want.length} sessions\n`));
	assert.equal(out.at(-1), SESSION_HELP);
	const preview = out.findIndex((l) => l.startsWith("── preview "));
	assert.ok(out[preview]!.includes(want[0]!.top.ref) && out[preview + 1] === TEXTS[0], "the preview is the top hit's text");
	for (const l of picker.render(60)) assert.ok(plain(l).length <= 60, `wider than 60: ${plain(l)}`);
	// typing searches grouped; ctrl+r reads the selected session's top; enter inserts its ref
	await keys(picker, " ", "r", "e", "c");
	assert.equal(log.at(-1), 'sessions "build rec" -');
	assert.deepEqual(picker.hits.map((h) => h.ref), grouped("build rec").map((g) => g.top.ref));
	await keys(picker, KEY.down, KEY.ctrlR);
	assert.match(lines()[1] as string, new RegExp(`^read ${picker.hits[1]!.ref}`));
	await keys(picker, KEY.esc, KEY.enter);
	assert.deepEqual(results, [{ action: "ref", hit: grouped("build rec")[1]!.top }]);
});

test("ctrl+g back to events; session pages never repeat a session and reset on toggling", async () => {
	const log: string[] = [];
	const { picker, lines } = await open("build", log, 3);
	await keys(picker, KEY.ctrlG);
	const first = picker.groups.map((g) => g.sessionId);
	assert.equal(first.length, 3);
	assert.match(lines().join("\n"), /page 1 · 3 sessions · pgdn more/);
	await keys(picker, KEY.pgdn);
	const second = picker.groups.map((g) => g.sessionId);
	assert.deepEqual([...first, ...second], grouped("build").map((g) => g.sessionId));
	assert.doesNotMatch(lines().join("\n"), /pgdn more/);
	await keys(picker, KEY.ctrlG);
	assert.equal(picker.mode, "event");
	assert.equal(picker.page, 0);
	assert.deepEqual(picker.groups, []);
	assert.deepEqual(picker.hits.map((h) => h.ref), matching("build").slice(0, 3).map((h) => h.ref));
	assert.match(lines()[0] as string, /^── Pi events · /);
	assert.equal(lines().at(-1), HELP);
	assert.deepEqual(log, ['search "build" -', 'sessions "build" -', 'sessions "build" 3', 'search "build" -']);
});

/** A terminal that keeps what the TUI writes (the escape sequences a real one would get). */
class Recorder implements Terminal {
	out = "";
	input: (data: string) => void = () => undefined;
	constructor(
		readonly columns: number,
		readonly rows: number,
	) {}
	start(onInput: (data: string) => void): void {
		this.input = onInput;
	}
	stop(): void {}
	drainInput(): Promise<void> {
		return Promise.resolve();
	}
	write(data: string): void {
		this.out += data;
	}
	get kittyProtocolActive(): boolean {
		return false;
	}
	moveBy(lines: number): void {
		if (lines) this.write(lines > 0 ? `\x1b[${lines}B` : `\x1b[${-lines}A`);
	}
	hideCursor(): void {
		this.write("\x1b[?25l");
	}
	showCursor(): void {
		this.write("\x1b[?25h");
	}
	clearLine(): void {
		this.write("\x1b[K");
	}
	clearFromCursor(): void {
		this.write("\x1b[J");
	}
	clearScreen(): void {
		this.write("\x1b[2J\x1b[H");
	}
	setTitle(): void {}
	setProgress(): void {}
}

test("in a TUI: keys reach the picker and the frame is drawn", async () => {
	const term = new Recorder(118, 22);
	const tui = new TUI(term);
	const results: PickerResult[] = [];
	const picker = new EventPicker(source(), theme, () => tui.requestRender(), (r) => results.push(r), "build");
	tui.addChild(picker);
	tui.setFocus(picker);
	tui.start();
	try {
		await settle(picker);
		term.input(KEY.down);
		await settle(picker);
		await sleep(50); // the TUI's render interval
		assert.match(plain(term.out), /▸ bash\.command\s+2026-11-2\d/);
		// The picture: one full redraw of the current state (not the differential updates before it).
		term.out = "";
		tui.requestRender(true);
		await sleep(50);
		assert.match(plain(term.out), /▸ bash\.command\s+2026-11-27 10:14\s+websocket reconnect\s+\$ npm run build/);
		if (process.env.PIES_PICKER_FRAME) writeFileSync(process.env.PIES_PICKER_FRAME, term.out);
		term.input(KEY.enter);
		assert.equal(results[0]?.action, "ref");
	} finally {
		tui.stop();
	}
});

test("while the first index grows, the first page is asked again until the hits arrive", async () => {
	const base = source();
	let calls = 0;
	const growing: PickerSource = {
		...base,
		search: async (query, cursor, limit, signal) => {
			calls++;
			const full = await base.search(query, cursor, limit, signal);
			// Nothing indexed at the first answer; everything at the second.
			return calls === 1
				? { hits: [], nextCursor: null, indexing: { phase: "first-index", sessionsIndexed: 0, sessionsTotal: 4, percent: 0 } }
				: full;
		},
	};
	const picker = new EventPicker(growing, theme, () => undefined, () => undefined, "build");
	await settle(picker);
	assert.equal(picker.hits.length, 0);
	assert.match(picker.render(120).map(plain).join("\n"), /still indexing: 0% of sessions/);
	await sleep(INDEXING_REFRESH_MS + 100);
	await picker.searching;
	assert.equal(calls, 2);
	assert.equal(picker.hits.length, 8);
	assert.doesNotMatch(picker.render(120).map(plain).join("\n"), /still indexing/);
	await sleep(INDEXING_REFRESH_MS + 100);
	assert.equal(calls, 2, "a complete index is not asked again");
});
