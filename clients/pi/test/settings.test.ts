import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { initializeParams, mergePaths, reindexParams, serverArgv, ServerUnavailable } from "../src/server.ts";
import { DEFAULTS, loadSettings, sessionDirsFor } from "../src/settings.ts";

function dirs(globalSettings?: unknown, projectSettings?: unknown): { agent: string; cwd: string } {
	const base = mkdtempSync(join(tmpdir(), "pies-"));
	const agent = join(base, "agent");
	const cwd = join(base, "proj");
	mkdirSync(agent);
	mkdirSync(join(cwd, ".pi"), { recursive: true });
	if (globalSettings !== undefined) writeFileSync(join(agent, "settings.json"), JSON.stringify(globalSettings));
	if (projectSettings !== undefined) writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify(projectSettings));
	return { agent, cwd };
}

test("defaults without any settings", () => {
	const { agent, cwd } = dirs();
	const s = loadSettings(agent, cwd, {});
	assert.equal(s.server, undefined);
	assert.equal(s.serverOrigin, "PATH");
	assert.equal(s.maxChars, DEFAULTS.maxChars);
	assert.deepEqual(s.warnings, []);
});

test("the project's settings win over the global ones; the environment wins over both", () => {
	const { agent, cwd } = dirs({ eventSearch: { server: "/g/pies", maxChars: 3000 } }, { eventSearch: { server: ["/p/pies", "serve"] } });
	const s = loadSettings(agent, cwd, {});
	assert.deepEqual(s.server, ["/p/pies", "serve"]);
	assert.match(s.serverOrigin, /\.pi\/settings\.json/);
	assert.equal(s.maxChars, 3000);
	const e = loadSettings(agent, cwd, { PI_EVENT_SEARCH_SERVER: "python3 -m pi_event_search", PI_EVENT_SEARCH_MAX_CHARS: "2500" });
	assert.deepEqual(e.server, ["python3", "-m", "pi_event_search"]);
	assert.equal(e.serverOrigin, "$PI_EVENT_SEARCH_SERVER");
	assert.equal(e.maxChars, 2500);
});

test("bad values are named and replaced by defaults", () => {
	const { agent, cwd } = dirs({ eventSearch: { maxChars: -1, roots: ["relative"], server: 7 } });
	const s = loadSettings(agent, cwd, {});
	assert.equal(s.maxChars, DEFAULTS.maxChars);
	assert.equal(s.roots, undefined);
	assert.equal(s.server, undefined);
	assert.equal(s.warnings.length, 3, s.warnings.join("; "));
});

test("the server command gets `serve` when it lacks it; a missing one says how to install", () => {
	const { agent, cwd } = dirs();
	const base = loadSettings(agent, cwd, {});
	assert.deepEqual(serverArgv({ ...base, server: ["/x/pi-event-search"] }), ["/x/pi-event-search", "serve"]);
	assert.deepEqual(serverArgv({ ...base, server: ["pies", "serve", "--x"] }), ["pies", "serve", "--x"]);
	assert.throws(() => serverArgv(base, "/nonexistent"), (err: Error) => err instanceof ServerUnavailable && /not installed.*PI_EVENT_SEARCH_SERVER/s.test(err.message));
});

test("refreshes asked for while one runs merge; everything wins over files", () => {
	assert.deepEqual(reindexParams(["/s/a.jsonl"]), { paths: ["/s/a.jsonl"] });
	assert.deepEqual(reindexParams(undefined), {});
	assert.deepEqual(reindexParams([]), {});
	assert.deepEqual([...(mergePaths(null, ["/a"]) as Set<string>)], ["/a"]);
	assert.deepEqual([...(mergePaths(new Set(["/a"]), ["/b", "/a"]) as Set<string>)], ["/a", "/b"]);
	assert.equal(mergePaths(new Set(["/a"]), undefined), "all");
	assert.equal(mergePaths("all", ["/a"]), "all");
});

test("sessions kept outside the agent directory are added for the server, once", () => {
	const { agent, cwd } = dirs();
	const base = loadSettings(agent, cwd, {});
	assert.equal(sessionDirsFor(base, agent, join(agent, "sessions", "--p--", "s.jsonl")), undefined);
	assert.equal(sessionDirsFor(base, agent, undefined), undefined);
	assert.deepEqual(sessionDirsFor(base, agent, "/elsewhere/s.jsonl"), ["/elsewhere"]);
	assert.deepEqual(sessionDirsFor({ ...base, sessionDirs: ["/a"] }, agent, "/elsewhere/s.jsonl"), ["/a", "/elsewhere"]);
	assert.deepEqual(sessionDirsFor({ ...base, sessionDirs: ["/elsewhere"] }, agent, "/elsewhere/s.jsonl"), ["/elsewhere"]);
	assert.deepEqual(sessionDirsFor(base, agent, join(agent, "sessions-old", "s.jsonl")), [join(agent, "sessions-old")]);
});

const TODO_STATE = { customType: "todo-state", fields: ["title", "items.*.text"], label: "Todos" };
const NOTE = { customType: "note-state", fields: ["body"], label: "Notes" };

function userFile(content: unknown): NodeJS.ProcessEnv {
	const config = mkdtempSync(join(tmpdir(), "pies-config-"));
	mkdirSync(join(config, "pi-event-search"));
	writeFileSync(join(config, "pi-event-search", "extractors.json"), JSON.stringify(content));
	return { XDG_CONFIG_HOME: config };
}

test("eventSearch.extractors goes to the server as initializationOptions.extractors; none set: none sent", () => {
	const { agent, cwd } = dirs({ eventSearch: { extractors: [TODO_STATE] } });
	const s = loadSettings(agent, cwd, userFile({ extractors: [NOTE] }));
	assert.deepEqual(s.extractors, [TODO_STATE]); // the setting wins over the user file
	assert.deepEqual((initializeParams(["/p"], s) as { initializationOptions: Record<string, unknown> }).initializationOptions.extractors, [TODO_STATE]);
	const none = dirs();
	const plain = loadSettings(none.agent, none.cwd, userFile({ extractors: [NOTE] }));
	assert.equal(plain.extractors, undefined);
	assert.ok(!("extractors" in (initializeParams(["/p"], plain) as { initializationOptions: Record<string, unknown> }).initializationOptions));
});

test("a project's extractors add types and never replace or drop the user's", () => {
	const mine = { ...NOTE, label: "Mine" };
	const { agent, cwd } = dirs({ eventSearch: { extractors: [TODO_STATE] } }, { eventSearch: { extractors: [NOTE, { ...TODO_STATE, fields: ["secret"] }] } });
	const s = loadSettings(agent, cwd, {});
	assert.deepEqual(s.extractors, [TODO_STATE, NOTE]);
	assert.equal(s.warnings.length, 1, s.warnings.join("; "));
	assert.match(s.warnings[0] ?? "", /todo-state is registered by the user already/);
	// Without a global setting, the project adds to the user file (what the server would read).
	const p = dirs(undefined, { eventSearch: { extractors: [TODO_STATE, NOTE] } });
	const added = loadSettings(p.agent, p.cwd, userFile({ extractors: [mine] }));
	assert.deepEqual(added.extractors, [mine, TODO_STATE]);
	// A project's empty list adds nothing; the global list stays.
	const e = dirs({ eventSearch: { extractors: [TODO_STATE] } }, { eventSearch: { extractors: [] } });
	assert.deepEqual(loadSettings(e.agent, e.cwd, {}).extractors, [TODO_STATE]);
});

test("bad extractor entries are named and left out", () => {
	const { agent, cwd } = dirs({ eventSearch: { extractors: [TODO_STATE, "todo", { customType: "x" }, { customType: "y", fields: [] }, { fields: ["a"] }] } }, { eventSearch: { extractors: "note-state" } });
	const s = loadSettings(agent, cwd, {});
	assert.deepEqual(s.extractors, [TODO_STATE]);
	assert.equal(s.warnings.length, 5, s.warnings.join("; "));
	assert.ok(s.warnings.slice(0, 4).every((w) => /^eventSearch\.extractors\[[1-4]\] .*ignored$/.test(w)), s.warnings.join("; "));
	assert.match(s.warnings[4] ?? "", /\.pi\/settings\.json must be a list/);
});
