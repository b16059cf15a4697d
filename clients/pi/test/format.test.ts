import assert from "node:assert/strict";
import { test } from "node:test";
import { formatGroups, formatRead, formatSearch, formatTrace, groupLine, hitBlock, markMatches, oneLineSnippet, shortTime, treeState } from "../src/format.ts";
import type { Hit, ReadResult, SearchResult, SessionGroup, TraceResult } from "../src/protocol.ts";

function hit(n: number, extra: Partial<Hit> = {}): Hit {
	return {
		ref: `pi-event:S1/e${n}`,
		sessionId: "S1",
		entryId: `e${n}`,
		kind: "tool.result",
		toolName: "bash",
		isError: true,
		timestamp: "2026-05-01T10:00:09.020Z",
		snippet: `npm ERR! ENOENT number ${n}`,
		matches: [[9, 15]],
		cwd: "/home/u/proj",
		sessionName: null,
		branchState: "selected",
		selectionState: "direct",
		source: { path: "/s.jsonl", uri: "file:///s.jsonl", line: n + 1 },
		...extra,
	};
}

const VIEW = { query: "ENOENT", maxChars: 4000, root: "/home/u/proj", currentSession: false };

/** A group of the spec's shape (docs/protocol.md, piEvents/search with groupBy). */
function group(n: number, extra: Partial<SessionGroup> = {}): SessionGroup {
	return {
		sessionId: `S${n}`,
		path: `/home/u/.pi/agent/sessions/--home-u-proj--/2026-05-01_S${n}.jsonl`,
		uri: `file:///home/u/.pi/agent/sessions/--home-u-proj--/2026-05-01_S${n}.jsonl`,
		cwd: "/home/u/proj",
		name: null,
		firstPrompt: "the build fails on main, look at ci.yml",
		started: "2026-05-01T10:00:00.000Z",
		updated: "2026-05-01T11:02:13.020Z",
		events: 143,
		matches: 7,
		top: hit(n, { ref: `pi-event:S${n}/e${n}`, sessionId: `S${n}` }),
		parentSession: null,
		...extra,
	};
}

test("matches are marked by code point, not UTF-16 unit", () => {
	assert.equal(markMatches("😀 error here", [[2, 7]]), "😀 «error» here");
	assert.equal(markMatches("a b c", [[0, 1], [4, 5]]), "«a» b «c»");
	assert.equal(markMatches("abc", [[1, 9]]), "abc", "out-of-range spans are ignored");
	assert.equal(markMatches("abc", undefined), "abc");
});

test("times are shortened, missing ones said so", () => {
	assert.equal(shortTime("2026-05-01T10:00:09.020Z"), "2026-05-01 10:00:09Z");
	assert.equal(shortTime(null), "time unknown");
	assert.equal(shortTime("yesterday"), "yesterday");
});

test("tree states read as words", () => {
	assert.equal(treeState("selected", "direct"), "selected branch, in context");
	assert.equal(treeState("alternate", "not-selected"), "alternate branch (abandoned), not in context");
	assert.equal(treeState("selected", "summarized"), "selected branch, summarized by a compaction");
	assert.equal(treeState("selected", "cleared"), "selected branch, cleared by /clear (Oh My Pi)");
	assert.equal(treeState("selected", "dropped"), "selected branch, a failed answer Oh My Pi does not replay");
	assert.equal(treeState(undefined, "not-applicable"), "branch unknown");
	assert.equal(treeState("selected", "edited-out"), "selected branch, edited out of the context");
});

test("a hit block has ref, kind, time, session or cwd, states and the marked snippet", () => {
	const block = hitBlock(hit(1), 1);
	const lines = block.split("\n");
	assert.equal(lines.length, 3);
	assert.equal(lines[0], "[1] pi-event:S1/e1 · tool.result bash error · 2026-05-01 10:00:09Z");
	assert.match(lines[1] as string, /in \/home\/u\/proj · selected branch, in context/);
	assert.match(lines[2] as string, /npm ERR! «ENOENT» number 1/);
	assert.match(hitBlock(hit(2, { sessionName: "fix the build" }), 2), /session "fix the build"/);
});

test("search results stay within the budget and say how many were left out", () => {
	const result: SearchResult = { hits: Array.from({ length: 50 }, (_, i) => hit(i)), nextCursor: null };
	const out = formatSearch(result, { ...VIEW, maxChars: 1200 });
	assert.ok(out.text.length <= 1200, `${out.text.length} characters`);
	assert.ok(out.shown > 0 && out.shown < 50);
	assert.ok(out.cut);
	assert.match(out.text, new RegExp(`${50 - out.shown} more hits not shown, to stay within 1200 characters`));
	assert.match(out.text, /^\d+ hits for "ENOENT" \(sessions of \/home\/u\/proj, current session excluded\):/);
});

test("a full page says that more hits exist", () => {
	const out = formatSearch({ hits: [hit(1)], nextCursor: "abc" }, VIEW);
	assert.equal(out.cut, false);
	assert.match(out.text, /More hits exist beyond these/);
	assert.doesNotMatch(out.text, /not shown/);
});

test("no hits names the scope; the current session is named when searched", () => {
	const none = formatSearch({ hits: [], nextCursor: null }, VIEW);
	assert.equal(none.text, 'No events match "ENOENT" (sessions of /home/u/proj, current session excluded).');
	const own = formatSearch({ hits: [hit(1)], nextCursor: null }, { ...VIEW, currentSession: true });
	assert.match(own.text, /the current session, before this call/);
	const building = formatSearch({ hits: [], nextCursor: null }, { ...VIEW, stillIndexing: true });
	assert.match(building.text, /still being built/);
	const partial = formatSearch(
		{ hits: [hit(1)], nextCursor: null, indexing: { phase: "first-index", sessionsIndexed: 40, sessionsTotal: 100, percent: 40 } },
		VIEW,
	);
	assert.match(partial.text, /pi-event:/, "answers with what is there");
	assert.match(partial.text, /still indexing: 40% of sessions, 40 of 100/);
	assert.doesNotMatch(formatSearch({ hits: [hit(1)], nextCursor: null, indexing: null }, VIEW).text, /indexing/);
});

test("the first hit is always shown, even over budget", () => {
	const out = formatSearch({ hits: [hit(1, { snippet: "x".repeat(300) })], nextCursor: null }, { ...VIEW, maxChars: 100 });
	assert.equal(out.shown, 1);
});

function readResult(text: string, extra: Partial<ReadResult> = {}): ReadResult {
	return {
		event: { ref: "pi-event:S1/e1", sessionId: "S1", entryId: "e1", parentId: "e0", entryType: "message", role: "toolResult", toolName: "bash", kinds: ["tool.result"], timestamp: "2026-05-01T10:00:09.020Z", isError: false, cwd: "/p", sessionName: "n", branchState: "selected", contextRole: "conversation", selectionState: "direct" },
		source: { path: "/s.jsonl", uri: "file:///s.jsonl", line: 6 },
		fragments: [{ fragmentId: "tool.result:0", kind: "tool.result", text, offset: 0, length: text.length, totalLength: text.length, truncated: false }],
		omitted: [],
		neighbours: { order: "append", before: [{ ref: "pi-event:S1/e0", sessionId: "S1", entryId: "e0", kind: "tool.call", preview: "bash ls" }], after: [], alternatives: [], stoppedAtFork: false },
		...extra,
	};
}

test("a read shows identity, parent, source, text and neighbours", () => {
	const out = formatRead(readResult("hello world"), 4000);
	assert.match(out.text, /^pi-event:S1\/e1 · tool.result bash · 2026-05-01 10:00:09Z/);
	assert.match(out.text, /parent pi-event:S1\/e0 · source \/s.jsonl:6/);
	assert.match(out.text, /\[tool.result:0\] characters 0-11 of 11\nhello world/);
	assert.match(out.text, /before \(append order\):\n {2}pi-event:S1\/e0 · tool.call · "bash ls"/);
	assert.equal(out.cut, false);
	assert.doesNotMatch(out.text, /omitted:/);
});

test("a read of an entry a Pi 1.x context edit decides names the edit; metadata is shown", () => {
	const base = readResult("FAILED test_nested");
	const removed = formatRead({ ...base, event: { ...base.event, selectionState: "edited-out", contextEdit: { ref: "pi-event:S1/e9", replacement: "removed" } } }, 4000);
	assert.match(removed.text, /selected branch, edited out of the context/);
	assert.match(removed.text, /context edit: removed from the model context by pi-event:S1\/e9 \(the text below is the original\)/);
	const replaced = formatRead({ ...base, event: { ...base.event, contextEdit: { ref: "pi-event:S1/e8", replacement: "replaced" } } }, 4000);
	assert.match(replaced.text, /context edit: content replaced in the model context by pi-event:S1\/e8/);
	const system = formatRead({ ...base, event: { ...base.event, metadata: { toolsAdded: ["read", "bash"], thinkingLevel: "high" } } }, 4000);
	assert.match(system.text, /toolsAdded read, bash · thinkingLevel high/);
	assert.doesNotMatch(formatRead(base, 4000).text, /context edit/);
});

test("a read cut by the budget says where to continue", () => {
	const out = formatRead(readResult("y".repeat(10_000)), 2000);
	assert.ok(out.text.length <= 2000, `${out.text.length}`);
	assert.ok(out.cut);
	assert.match(out.text, /omitted:\n {2}tool.result:0: characters \d+-10000 \(continue with fragment="tool.result:0" offset=\d+\)/);
});

test("a read windowed by the server, and payloads left out, are stated", () => {
	const r = readResult("z".repeat(100), {
		omitted: [
			{ field: "message.content[1]", reason: "image", mimeType: "image/png", bytes: 81234 },
			{ field: "tool.result:0", reason: "window", bytes: 900 },
		],
	});
	(r.fragments[0] as { totalLength: number; truncated: boolean }).totalLength = 1000;
	(r.fragments[0] as { truncated: boolean }).truncated = true;
	const out = formatRead(r, 4000);
	assert.match(out.text, /tool.result:0: characters 100-1000 \(continue with fragment="tool.result:0" offset=100\)/);
	assert.match(out.text, /message.content\[1\]: image image\/png, 81234 bytes/);
	assert.doesNotMatch(out.text, /: window/);
});

test("a trace lists parent, children, siblings and the way to the leaf, with refs", () => {
	const n = (id: string, extra = {}) => ({ ref: `pi-event:S1/${id}`, sessionId: "S1", entryId: id, kind: "user.text", preview: `p ${id}`, branchState: "selected", ...extra });
	const result: TraceResult = {
		event: n("b"),
		parent: n("a"),
		children: [n("c", { branchState: "alternate" }), n("e")],
		siblings: [{ masked: true }],
		towardLeaf: "child",
		towardLeafRef: "pi-event:S1/e",
		relations: [{ type: "tool-result-for", direction: "in", label: "recorded", node: n("r") }, { type: "labels", direction: "out", label: "recorded", node: n("l") }, { type: "parent", direction: "out", label: "recorded", node: n("a") }],
		files: [{ op: "read", path: "/p/x.ts", label: "derived" }],
		lineage: [{ relation: "session-parent", masked: true }],
		labels: ["start"],
	};
	const text = formatTrace(result, 4000).text;
	assert.match(text, /^trace pi-event:S1\/b · user.text · "p b"/);
	assert.match(text, /parent: pi-event:S1\/a · user.text · "p a"/);
	assert.match(text, /children \(2\):\n {2}pi-event:S1\/c · user.text · alternate · "p c"\n {2}pi-event:S1\/e/);
	assert.match(text, /siblings \(1, derived: same parent\):\n {2}\(in a session you may not see\)/);
	assert.match(text, /toward leaf: continue with the child pi-event:S1\/e/);
	assert.match(text, /tool-result-for this \(recorded\): pi-event:S1\/r/);
	assert.match(text, /this is labels \(recorded\): pi-event:S1\/l/);
	assert.doesNotMatch(text, /parent \(recorded\)/);
	assert.match(text, /file read: \/p\/x.ts \(derived\)/);
	assert.match(text, /session-parent: \(a session you may not see\)/);
	assert.match(text, /labels: start/);
});

test("a long trace is bounded and says so", () => {
	const kids = Array.from({ length: 200 }, (_, i) => ({ ref: `pi-event:S1/k${i}`, sessionId: "S1", entryId: `k${i}`, kind: "tool.result", preview: "x".repeat(80) }));
	const out = formatTrace({ event: kids[0]!, parent: null, children: kids, siblings: [], towardLeaf: null, relations: [], files: [], lineage: [], labels: [] }, 1500);
	assert.ok(out.text.length <= 1500);
	assert.match(out.text, /more lines not shown, to stay within 1500 characters/);
	assert.match(out.text, /parent: none \(a root\)/);
});

test("a session group is one line: its top's ref, name or first prompt, matches of events, last time, the hit", () => {
	assert.equal(
		groupLine(group(1, { name: "fix the build" }), 1),
		'[1] pi-event:S1/e1 · "fix the build" · 7 of 143 events match · last 2026-05-01 11:02:13Z · tool.result bash error: npm ERR! «ENOENT» number 1',
	);
	assert.match(groupLine(group(2), 2), /^\[2\] pi-event:S2\/e2 · first prompt "the build fails on main, look at ci\.yml" · 7 of 143/);
	assert.match(groupLine(group(3, { firstPrompt: null, matches: 1, events: 1 }), 3), / · unnamed, in \/home\/u\/proj · 1 of 1 event matches · /);
	assert.equal(groupLine(group(4), 4).split("\n").length, 1);
	// a multi-line snippet stays on the line; a long one is cut, and a match cut in two is closed
	const long = hit(5, { snippet: `line one\nline two ${"x".repeat(200)} ENOENT`, matches: [[208, 214]] });
	assert.equal(oneLineSnippet(long, 40).split("\n").length, 1);
	assert.equal(oneLineSnippet(hit(6, { snippet: "abc ENOENT def", matches: [[4, 10]] }), 7), "abc «E…»");
});

test("grouped results: one line per session in the server's order, within the budget, saying what is left", () => {
	const result = { sessions: Array.from({ length: 40 }, (_, i) => group(i)), nextCursor: "next" };
	const out = formatGroups(result, { ...VIEW, maxChars: 1500 });
	assert.ok(out.text.length <= 1500, `${out.text.length} characters`);
	assert.ok(out.shown > 0 && out.shown < 40 && out.cut);
	const lines = out.text.split("\n");
	assert.match(lines[0] as string, new RegExp(`^${out.shown} sessions with events matching "ENOENT" \\(sessions of /home/u/proj, current session excluded\\)`));
	assert.deepEqual(lines.slice(1, 1 + out.shown).map((l) => /^\[(\d+)\] (\S+)/.exec(l)?.slice(1)), Array.from({ length: out.shown }, (_, i) => [String(i + 1), `pi-event:S${i}/e${i}`]));
	assert.match(out.text, new RegExp(`${40 - out.shown} more sessions not shown, to stay within 1500 characters`));
	assert.match(out.text, /More sessions match beyond these/);
	assert.match(out.text, /event_search with sessionId/);
	const none = formatGroups({ sessions: [], nextCursor: null, indexing: { phase: "first-index", sessionsIndexed: 1, sessionsTotal: 4, percent: 25 } }, VIEW);
	assert.equal(none.text, 'No session has events matching "ENOENT" (sessions of /home/u/proj, current session excluded).\n(still indexing: 25% of sessions, 1 of 4; these are the hits so far, search again later for the rest.)');
	const one = formatGroups({ sessions: [group(1)], nextCursor: null }, { ...VIEW, currentSession: true });
	assert.match(one.text, /^1 session with events matching "ENOENT" \(the current session, before this call\)/);
	assert.doesNotMatch(one.text, /beyond these|not shown/);
});

test("a partial hit says how many words it holds and which it lacks", () => {
	const partial = hit(1, { matched: ["websocket", "reconnect"], missing: ["bug"] });
	const block = hitBlock(partial, 1);
	assert.match(block, /\(partial: matched 2 of 3 words; missing: bug\)/);
	const full = hit(2, { matched: ["vitest", "timeout"], missing: [] });
	assert.doesNotMatch(hitBlock(full, 1), /partial/);
	assert.doesNotMatch(hitBlock(hit(3, { matched: ["enoent"], missing: [] }), 1), /\(/, "a full hit has no coverage line");
	assert.doesNotMatch(hitBlock(hit(4), 1), /partial/, "an older server's hit (no matched/missing) is a full hit");

	const mixed = formatSearch({ hits: [hit(5, { matched: ["a", "b"], missing: [] }), partial], nextCursor: null }, { ...VIEW, query: "websocket reconnect bug" });
	assert.match(mixed.text, /^2 hits \(the last 1 partial: they hold only some of the words\) for "websocket reconnect bug"/);
	const all = formatSearch({ hits: [partial], nextCursor: null }, { ...VIEW, query: "websocket reconnect bug" });
	assert.match(all.text, /^1 hit, all partial \(none holds every word\)/);
	assert.match(groupLine(group(1, { top: partial }), 1), /bash error \(partial: matched 2 of 3 words; missing: bug\): /);
});

test("a corrected word is said before the hits, and when nothing matches", () => {
	const didYouMean = { query: "websocket reconnect", corrections: [{ word: "recconect", suggestion: "reconnect" }] };
	const found = formatSearch({ hits: [hit(1)], nextCursor: null, didYouMean }, { ...VIEW, query: "websocket recconect" });
	assert.match(found.text, /^No recorded event holds "recconect"; searched for "reconnect" instead \(did you mean "websocket reconnect"\?\)\.\n1 hit for/);
	const none = formatSearch({ hits: [], nextCursor: null, didYouMean }, { ...VIEW, query: "websocket recconect" });
	assert.match(none.text, /^No recorded event holds "recconect".*\nNo events match/);
	const groups = formatGroups({ sessions: [group(1)], nextCursor: null, didYouMean }, { ...VIEW, query: "websocket recconect" });
	assert.match(groups.text, /^No recorded event holds "recconect"/);
});
