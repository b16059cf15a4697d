import assert from "node:assert/strict";
import { test } from "node:test";
import { type SessionView, findCutoff } from "../src/caller.ts";
import { BadArgument, parseRef, prepareSearch, readRequest, searchRequest, traceRequest } from "../src/params.ts";

const CURRENT = { sessionId: "S0", cutoff: "c1" };

test("refs with and without the scheme, with a fragment; junk is refused with the expected form", () => {
	assert.deepEqual(parseRef("pi-event:S1/e1"), { ref: "pi-event:S1/e1", sessionId: "S1", entryId: "e1", fragment: undefined });
	assert.deepEqual(parseRef(" S1/v1~3#tool.result:0 "), { ref: "pi-event:S1/v1~3", sessionId: "S1", entryId: "v1~3", fragment: "tool.result:0" });
	assert.equal(parseRef("`pi-event:S1/e1`").ref, "pi-event:S1/e1");
	assert.equal(parseRef("<S1/e1>").ref, "pi-event:S1/e1");
	assert.throws(() => parseRef("S1"), BadArgument);
	assert.throws(() => parseRef("pi-event:/x"), /expected pi-event:<sessionId>\/<entryId>/);
});

test("search arguments become protocol filters; the current session always travels", () => {
	const own = ["event_search", "event_read", "event_trace"];
	assert.deepEqual(searchRequest({ query: "q" }, CURRENT), { query: "q", limit: 10, filters: { excludeTool: own }, currentSession: CURRENT });
	assert.deepEqual(searchRequest({ query: "q", tool: "event_search" }, CURRENT), { query: "q", limit: 10, filters: { tool: ["event_search"] }, currentSession: CURRENT });
	const full = searchRequest(
		{ query: '"a b" c', limit: 99, kinds: ["tool.result"], tool: "bash", errors: true, since: "2026-05-01", until: "2026-05-02", sessionId: "S0", branchState: "alternate", file: "src/x.ts" },
		CURRENT,
	);
	assert.deepEqual(full, {
		query: '"a b" c',
		limit: 50,
		filters: { excludeTool: own, kind: ["tool.result"], tool: ["bash"], errors: true, since: "2026-05-01", until: "2026-05-02", sessionId: "S0", branchState: ["alternate"], file: "src/x.ts" },
		currentSession: CURRENT,
	});
});

test("groupBy session travels as the protocol's groupBy; limit then counts sessions", () => {
	const own = ["event_search", "event_read", "event_trace"];
	assert.deepEqual(searchRequest({ query: "q", groupBy: "session", limit: 5 }, CURRENT), { query: "q", limit: 5, filters: { excludeTool: own }, groupBy: "session", currentSession: CURRENT });
	assert.equal("groupBy" in searchRequest({ query: "q" }, CURRENT), false, "absent: the event-level answer");
});

test("a relative file is resolved against Pi's working directory, an absolute one kept", () => {
	const file = (f: string) => (searchRequest({ query: "q", file: f }, undefined, "/home/u/proj/pkg") as { filters: { file: string } }).filters.file;
	assert.equal(file("src/x.ts"), "/home/u/proj/pkg/src/x.ts");
	assert.equal(file("./.env"), "/home/u/proj/pkg/.env");
	assert.equal(file("../shared/a b.ts"), "/home/u/proj/shared/a b.ts");
	assert.equal(file("/etc/hosts"), "/etc/hosts");
});

test("read defaults: append order, one neighbour each side, a window as big as the answer", () => {
	assert.deepEqual(readRequest({ ref: "S1/e1#tool.call:1" }, CURRENT, 4000), {
		ref: "pi-event:S1/e1", fragment: "tool.call:1", offset: 0, length: 4000, before: 1, after: 1, order: "append", currentSession: CURRENT,
	});
	const r = readRequest({ ref: "S1/e1", order: "branch", before: 3, after: 0, offset: 100, length: 50 }, CURRENT, 4000) as Record<string, unknown>;
	assert.equal(r.order, "branch");
	assert.equal(r.before, 3);
	assert.equal(r.after, 0);
	assert.equal(r.offset, 100);
	assert.equal(r.length, 50);
	assert.deepEqual(traceRequest({ ref: "S1/e1" }, CURRENT), { ref: "pi-event:S1/e1", currentSession: CURRENT });
});

function session(branch: { type: string; id: string; message?: unknown }[], leaf: string | null = "leaf"): SessionView {
	return { getSessionId: () => "S0", getSessionFile: () => undefined, getLeafId: () => leaf, getBranch: () => branch as never };
}

const call = (id: string, ...calls: string[]) => ({ type: "message", id, message: { role: "assistant", content: calls.map((c) => ({ type: "toolCall", id: c, name: "event_search", arguments: {} })) } });

test("the cutoff is the entry holding the call, not the leaf", () => {
	const branch = [{ type: "message", id: "u1", message: { role: "user", content: "x" } }, call("a1", "t1", "t2"), { type: "message", id: "r1", message: { role: "toolResult", content: [] } }];
	assert.equal(findCutoff(session(branch), "t2"), "a1");
	const later = [...branch, call("a2", "t3")];
	assert.equal(findCutoff(session(later), "t3"), "a2");
	assert.equal(findCutoff(session(later), "t1"), "a1");
});

test("a call that cannot be found falls back to the leaf (excluding at least as much)", () => {
	assert.equal(findCutoff(session([call("a1", "t1")], "r9"), "nope"), "r9");
});

test("one kind given as a string becomes a list; anything else passes unchanged", () => {
	assert.deepEqual(prepareSearch({ query: "q", kinds: "tool.result" }), { query: "q", kinds: ["tool.result"] });
	assert.deepEqual(prepareSearch({ query: "q", kinds: ["user.text"] }), { query: "q", kinds: ["user.text"] });
	assert.equal(prepareSearch(null), null);
});
