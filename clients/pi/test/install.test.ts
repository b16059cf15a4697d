/**
 * The private server's decisions: what to install from (the checkout around the extension, or the
 * wheel an npm package carries), when an installed venv is outdated (a newer extension arrived),
 * which Python, and what a machine without a usable one is told to install.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { choosePython, findSource, type InstallRecord, installDir, isCurrent, parseProbe, pipStep, type Probe } from "../src/install.ts";

const PYPROJECT = '[build-system]\nrequires = ["hatchling"]\n\n[project]\nname = "pi-event-search"\nversion = "0.2.0"\n';

function checkout(): { root: string; ext: string } {
	const root = mkdtempSync(join(tmpdir(), "pies-src-"));
	const ext = join(root, "clients", "pi");
	mkdirSync(join(root, "server", "pi_event_search", "core"), { recursive: true });
	mkdirSync(join(root, "server", "pi_event_search", "__pycache__"));
	mkdirSync(ext, { recursive: true });
	writeFileSync(join(root, "pyproject.toml"), PYPROJECT);
	writeFileSync(join(root, "server", "pi_event_search", "__init__.py"), "");
	writeFileSync(join(root, "server", "pi_event_search", "core", "a.py"), "A = 1\n");
	return { root, ext };
}

const record = (identity: string): InstallRecord => ({
	version: "0.2.0",
	identity,
	source: "/x",
	venv: "venv-0.2.0-1",
	basePython: "/usr/bin/python3",
	pythonVersion: "3.11.2",
	installedAt: "2026-12-03T00:00:00Z",
	seconds: 20,
});

test("a checkout is the source; a changed server file is a newer extension, a .pyc is not", () => {
	const { root, ext } = checkout();
	const first = findSource(ext);
	assert.equal(first?.kind, "checkout");
	assert.equal(first?.path, join(ext, "..", ".."));
	assert.equal(first?.version, "0.2.0");
	assert.ok(isCurrent(record(first.identity), first));
	writeFileSync(join(root, "server", "pi_event_search", "__pycache__", "a.cpython-311.pyc"), "x");
	assert.equal(findSource(ext)?.identity, first.identity, "bytecode caches do not count");
	writeFileSync(join(root, "server", "pi_event_search", "core", "a.py"), "A = 2\n");
	const pulled = findSource(ext);
	assert.notEqual(pulled?.identity, first.identity);
	assert.equal(isCurrent(record(first.identity), pulled), false, "reinstall after an update");
	assert.equal(isCurrent(undefined, pulled), false, "install when nothing is installed");
	assert.equal(isCurrent(record("anything"), undefined), true, "no source: keep what is there");
});

test("a bundled wheel wins over a checkout; a directory that is neither has no source", () => {
	const { ext } = checkout();
	mkdirSync(join(ext, "server-wheel"));
	writeFileSync(join(ext, "server-wheel", "pi_event_search-0.3.0-py3-none-any.whl"), "wheel bytes");
	const source = findSource(ext);
	assert.equal(source?.kind, "wheel");
	assert.equal(source?.version, "0.3.0");
	assert.match(source?.identity ?? "", /^wheel:[0-9a-f]{64}$/);
	assert.equal(findSource(mkdtempSync(join(tmpdir(), "pies-none-"))), undefined);
	const other = checkout();
	writeFileSync(join(other.root, "pyproject.toml"), PYPROJECT.replace("pi-event-search", "something-else"));
	assert.equal(findSource(other.ext), undefined, "another project's pyproject");
});

const py = (version: number[], venv = true, executable = "/usr/bin/python3"): Probe => ({ executable, version, venv });

test("Python: the first 3.11+ that can make a venv; otherwise exactly what to install", () => {
	const ok = choosePython([py([3, 10, 12]), undefined, py([3, 12, 1], true, "/usr/bin/python3.12")]);
	assert.ok(ok.ok && ok.python.executable === "/usr/bin/python3.12");
	const none = choosePython([undefined, undefined]);
	assert.ok(!none.ok);
	assert.match(none.message, /needs Python 3\.11 or newer.*none on PATH \(tried python3, /);
	assert.match(none.message, /`sudo apt install python3 python3-venv`/);
	assert.match(none.message, /eventSearch\.server/);
	const old = choosePython([py([3, 10, 12])]);
	assert.ok(!old.ok);
	assert.match(old.message, /found only 3\.10\.12 \(\/usr\/bin\/python3\).*`sudo apt install python3\.11 python3\.11-venv`/);
	const noVenv = choosePython([py([3, 11, 2], false)]);
	assert.ok(!noVenv.ok);
	assert.match(noVenv.message, /cannot make virtual environments.*`sudo apt install python3\.11-venv`/);
});

test("probe output, pip steps and the install directory", () => {
	assert.deepEqual(parseProbe('noise\n{"executable": "/p", "version": [3, 11, 2], "venv": true}\n'), py([3, 11, 2], true, "/p"));
	assert.equal(parseProbe("Python was not found"), undefined);
	assert.equal(pipStep("Collecting pygls<2.2,>=2.1"), "resolving pygls");
	assert.equal(pipStep("Installing collected packages: orjson, pygls"), "installing packages");
	assert.equal(pipStep("  Using cached x.whl"), undefined);
	assert.equal(installDir({ HOME: "/h" }), "/h/.local/share/pi-event-search/pi-extension");
	assert.equal(installDir({ HOME: "/h", XDG_DATA_HOME: "/d" }), "/d/pi-event-search/pi-extension");
	assert.equal(installDir({ HOME: "/h", PI_EVENT_SEARCH_HOME: "/e" }), "/e/pi-extension");
});
