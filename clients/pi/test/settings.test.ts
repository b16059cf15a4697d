import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { initializeParams, mergePaths, reindexParams, serverArgv, ServerUnavailable } from "../src/server.ts";
import { DEFAULTS, loadSettings, piSessionDirFor, trustOf } from "../src/settings.ts";

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

test("a project's settings never choose the server, the index, directories or anything but narrower roots", () => {
	const { agent, cwd } = dirs(
		{ eventSearch: { server: "/g/pies", maxChars: 3000 } },
		{ eventSearch: { server: ["/p/pies", "serve"], indexPath: "./index.sqlite3", sessionDirs: ["/planted"], maxChars: 99999, extractors: [{ customType: "x", fields: ["a"] }], roots: ["/"] } },
	);
	const s = loadSettings(agent, cwd, {});
	assert.deepEqual(s.server, ["/g/pies"]);
	assert.match(s.serverOrigin, /agent\/settings\.json/);
	assert.equal(s.maxChars, 3000);
	assert.equal(s.indexPath, undefined);
	assert.equal(s.sessionDirs, undefined);
	assert.equal(s.extractors, undefined);
	assert.equal(s.roots, undefined, "roots / would widen: the default root stays");
	for (const key of ["server", "indexPath", "sessionDirs", "maxChars", "extractors"]) {
		assert.ok(s.warnings.some((w) => w.startsWith(`eventSearch.${key} in ${join(cwd, ".pi", "settings.json")} is ignored`)), `${key}: ${s.warnings.join("; ")}`);
	}
	assert.ok(s.warnings.some((w) => /roots in .*: \/ is outside/.test(w)), s.warnings.join("; "));
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

test("a project's roots narrow to folders inside the default root, relative ones from the project", () => {
	const { agent, cwd } = dirs(undefined, { eventSearch: { roots: ["sub", "/elsewhere", join("..", "..")] } });
	mkdirSync(join(cwd, "sub"));
	const s = loadSettings(agent, cwd, {});
	assert.deepEqual(s.roots, [join(realpathSync(cwd), "sub")]);
	assert.equal(s.warnings.length, 2, s.warnings.join("; "));
	// Under user-level roots, only folders inside them.
	const u = dirs({ eventSearch: { roots: ["/a/proj"] } });
	mkdirSync(join(u.cwd, ".pi"), { recursive: true });
	writeFileSync(join(u.cwd, ".pi", "settings.json"), JSON.stringify({ eventSearch: { roots: ["/a/proj/pkg", "/a/other"] } }));
	assert.deepEqual(loadSettings(u.agent, u.cwd, {}).roots, ["/a/proj/pkg"]);
	// Nothing left inside: the roots that apply without the project file.
	const n = dirs({ eventSearch: { roots: ["/a/proj"] } }, { eventSearch: { roots: ["/"] } });
	assert.deepEqual(loadSettings(n.agent, n.cwd, {}).roots, ["/a/proj"]);
});

test("a project Pi does not trust is not read at all; a Pi without trust reads it for narrowing", () => {
	const { agent, cwd } = dirs(undefined, { eventSearch: { roots: ["sub"] } });
	mkdirSync(join(cwd, "sub"));
	assert.equal(loadSettings(agent, cwd, {}, false).roots, undefined);
	assert.deepEqual(loadSettings(agent, cwd, {}, true).roots, [join(realpathSync(cwd), "sub")]);
	assert.deepEqual(loadSettings(agent, cwd, {}, undefined).roots, [join(realpathSync(cwd), "sub")]);
	assert.equal(trustOf({ isProjectTrusted: () => false }), false);
	assert.equal(trustOf({ isProjectTrusted: () => true }), true);
	assert.equal(trustOf({}), undefined);
});

test("this Pi's session directory goes to the server when it is outside the agent's sessions", () => {
	const { agent } = dirs();
	const outside = mkdtempSync(join(tmpdir(), "pies-flat-"));
	assert.equal(piSessionDirFor(agent, join(agent, "sessions", "--p--")), undefined);
	assert.equal(piSessionDirFor(agent, undefined), undefined);
	assert.equal(piSessionDirFor(agent, ""), undefined);
	assert.equal(piSessionDirFor(agent, outside), realpathSync(outside));
	assert.equal(piSessionDirFor(agent, join(agent, "sessions-old")), join(agent, "sessions-old"));
	const params = initializeParams(["/p"], { ...loadSettings(agent, agent, {}), piSessionDir: outside });
	assert.equal((params as { initializationOptions: Record<string, unknown> }).initializationOptions.piSessionDir, outside);
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

test("a project's extractors are ignored: the user's alone are sent", () => {
	const { agent, cwd } = dirs({ eventSearch: { extractors: [TODO_STATE] } }, { eventSearch: { extractors: [NOTE] } });
	const s = loadSettings(agent, cwd, {});
	assert.deepEqual(s.extractors, [TODO_STATE]);
	assert.equal(s.warnings.length, 1, s.warnings.join("; "));
	assert.match(s.warnings[0] ?? "", /eventSearch\.extractors in .* is ignored/);
});

test("bad extractor entries are named and left out", () => {
	const { agent, cwd } = dirs({ eventSearch: { extractors: [TODO_STATE, "todo", { customType: "x" }, { customType: "y", fields: [] }, { fields: ["a"] }] } }, { eventSearch: { extractors: "note-state" } });
	const s = loadSettings(agent, cwd, {});
	assert.deepEqual(s.extractors, [TODO_STATE]);
	assert.equal(s.warnings.length, 5, s.warnings.join("; "));
	assert.ok(s.warnings.filter((w) => /^eventSearch\.extractors\[[1-4]\] .*ignored$/.test(w)).length === 4, s.warnings.join("; "));
	assert.ok(s.warnings.some((w) => /\.pi\/settings\.json is ignored/.test(w)), s.warnings.join("; "));
});
