/**
 * /events outside the picker: recent queries for argument completion, the select fallback's
 * option lines, and what goes into the editor.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { insertion, optionOf, RecentQueries } from "../src/events.ts";
import type { Hit } from "../src/protocol.ts";

const hit: Hit = {
	ref: "pi-event:019f-a/5e6f7081",
	sessionId: "019f-a",
	entryId: "5e6f7081",
	kind: "tool.result",
	toolName: "bash",
	isError: true,
	timestamp: "2026-05-01T10:00:09.020Z",
	snippet: "npm ERR! ENOENT:\n  no such file",
	sessionName: "fix the build",
	source: { path: "/s.jsonl", uri: "file:///s.jsonl", line: 4 },
};

test("recent queries: newest first, no repeats, at most 20, offered by prefix", () => {
	const file = join(mkdtempSync(join(tmpdir(), "pies-recent-")), "sub", "recent.json");
	const recent = new RecentQueries(file);
	assert.deepEqual(recent.list(), []);
	assert.equal(recent.completions(""), null);
	for (const q of ["build failed", "websocket", "  ", "build failed", "bisect"]) recent.add(q);
	assert.deepEqual(recent.list(), ["bisect", "build failed", "websocket"]);
	assert.deepEqual(recent.completions("b")?.map((i) => i.value), ["bisect", "build failed"]);
	assert.equal(recent.completions("build failed"), null, "what is typed already is no completion");
	for (let i = 0; i < 30; i++) recent.add(`q${i}`);
	assert.equal(recent.list().length, 20);
	writeFileSync(file, "{not json");
	assert.deepEqual(recent.list(), [], "a damaged file is no error");
});

test("select options and insertions", () => {
	assert.equal(optionOf(hit, 3), "3. tool.result bash error · 2026-05-01 10:00:09Z · fix the build · npm ERR! ENOENT: no such file · pi-event:019f-a/5e6f7081");
	assert.equal(insertion({ action: "ref", hit }), "pi-event:019f-a/5e6f7081 ");
	assert.equal(insertion({ action: "quote", hit }), "> npm ERR! ENOENT: no such file\n> — pi-event:019f-a/5e6f7081\n");
});
