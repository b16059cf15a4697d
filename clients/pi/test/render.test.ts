import assert from "node:assert/strict";
import { test } from "node:test";
import type { Theme } from "@mariozechner/pi-coding-agent";
import { callSummary, renderResult, resultSummary } from "../src/render.ts";
import type { Details } from "../src/tools.ts";

const plain = { fg: (_c: string, t: string) => t, bold: (t: string) => t } as unknown as Theme;
const common = { root: "/p", currentSession: { sessionId: "S0", cutoff: "c" }, cut: false };

test("the call reads as one line: the query or ref, then the other arguments", () => {
	assert.equal(callSummary("event_search", { query: "build failed", tool: "bash", errors: true, kinds: ["tool.result", "bash.output"] }), '"build failed" tool=bash errors kinds=tool.result,bash.output');
	assert.equal(callSummary("event_read", { ref: "pi-event:S/E", order: "branch", after: 3 }), "pi-event:S/E order=branch after=3");
});

test("results summarize in one line", () => {
	const hit = { ref: "pi-event:S/E", sessionId: "S", entryId: "E", kind: "user.text", snippet: "x", source: { path: "/s.jsonl", uri: "file:///s.jsonl", line: 1 } };
	const search: Details = { ...common, tool: "event_search", result: { hits: [hit, hit], nextCursor: "n" } };
	assert.equal(resultSummary(search), "2 hits, more exist: pi-event:S/E …");
	assert.equal(resultSummary({ ...common, tool: "event_search", result: { hits: [], nextCursor: null } }), "0 hits");
	const group = { sessionId: "S", path: "/s.jsonl", events: 9, matches: 2, top: hit };
	assert.equal(resultSummary({ ...common, tool: "event_search", result: { sessions: [group, group, group], nextCursor: null } }), "3 sessions: pi-event:S/E …");
	assert.equal(resultSummary({ ...common, tool: "event_search", result: { sessions: [group], nextCursor: "n" } }), "1 session, more exist: pi-event:S/E");
	const trace: Details = { ...common, tool: "event_trace", result: { event: { masked: true }, parent: null, children: [], siblings: [], towardLeaf: "self", relations: [], files: [], lineage: [], labels: [] } };
	assert.equal(resultSummary(trace), "0 child(ren), 0 sibling(s), toward leaf: self");
});

test("collapsed shows the summary, expanded the text too, errors the message", () => {
	const details: Details = { ...common, tool: "event_search", result: { hits: [], nextCursor: null } };
	const result = { content: [{ type: "text", text: "No events match" }], details };
	const lines = (expanded: boolean, isError = false) => renderResult(result, { expanded, isPartial: false }, plain, { isError }).render(200).join("\n");
	assert.match(lines(false), /0 hits/);
	assert.doesNotMatch(lines(false), /No events match/);
	assert.match(lines(true), /0 hits[\s\S]*No events match/);
	assert.match(lines(false, true), /No events match/);
});
