/**
 * The extension's own server, decided: where it comes from (the checkout this extension lives in,
 * or the wheel an npm package carries), whether the private venv is current, which Python makes
 * it, and what to tell a person whose machine cannot. Pure apart from reading files; the work
 * (processes, the lock, the status line) is in installer.ts.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative } from "node:path";

export const REQUIRED_PYTHON = [3, 11] as const;

/** What the extension can install from. `identity` changes whenever what would be installed does. */
export interface InstallSource {
	kind: "checkout" | "wheel";
	/** The path given to pip: the checkout's root or the wheel file. */
	path: string;
	version: string;
	identity: string;
}

/** installed.json, next to the venvs. */
export interface InstallRecord {
	version: string;
	identity: string;
	source: string;
	/** Directory name of the venv, inside the install directory. */
	venv: string;
	basePython: string;
	pythonVersion: string;
	installedAt: string;
	seconds: number;
}

export function isRecord(value: unknown): value is InstallRecord {
	const r = value as Partial<InstallRecord> | null;
	return !!r && typeof r.identity === "string" && typeof r.venv === "string" && typeof r.version === "string";
}

/** Where the venvs live: $PI_EVENT_SEARCH_HOME, else the XDG data directory (not Pi's own directory). */
export function installDir(env: NodeJS.ProcessEnv = process.env): string {
	if (env.PI_EVENT_SEARCH_HOME) return join(env.PI_EVENT_SEARCH_HOME, "pi-extension");
	const data = env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
	return join(data, "pi-event-search", "pi-extension");
}

/** `pi_event_search-0.1.0-py3-none-any.whl` -> `0.1.0` */
export function wheelVersion(file: string): string | undefined {
	return /^pi_event_search-([^-]+)-[^-]+-[^-]+-[^-]+\.whl$/.exec(file)?.[1];
}

function pyprojectVersion(text: string): string | undefined {
	const project = /^\[project\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1] ?? "";
	if (!/^name\s*=\s*"pi-event-search"/m.test(project)) return undefined;
	return /^version\s*=\s*"([^"]+)"/m.exec(project)?.[1];
}

/** Every file pip would take from the checkout's server package, in a stable order. */
function serverFiles(dir: string, out: string[] = []): string[] {
	for (const name of readdirSync(dir).sort()) {
		if (name === "__pycache__") continue;
		const path = join(dir, name);
		if (statSync(path).isDirectory()) serverFiles(path, out);
		else out.push(path);
	}
	return out;
}

/**
 * The source next to this extension: the wheel it carries (an npm package), else the checkout it
 * sits in (a git or local `pi install` of the repository). The checkout's identity hashes
 * pyproject.toml and the server's files, so a pulled update reinstalls even at the same version.
 */
export function findSource(extensionDir: string): InstallSource | undefined {
	const wheels = join(extensionDir, "server-wheel");
	const wheel = existsSync(wheels) ? readdirSync(wheels).find((f) => wheelVersion(f)) : undefined;
	if (wheel) {
		const path = join(wheels, wheel);
		const sha = createHash("sha256").update(readFileSync(path)).digest("hex");
		return { kind: "wheel", path, version: wheelVersion(wheel) as string, identity: `wheel:${sha}` };
	}
	const root = join(extensionDir, "..", "..");
	const pyproject = join(root, "pyproject.toml");
	const pkg = join(root, "server", "pi_event_search");
	if (!existsSync(pyproject) || !existsSync(pkg)) return undefined;
	const text = readFileSync(pyproject, "utf8");
	const version = pyprojectVersion(text);
	if (!version) return undefined;
	const hash = createHash("sha256").update(text);
	for (const file of serverFiles(pkg)) hash.update(relative(root, file)).update("\0").update(readFileSync(file));
	return { kind: "checkout", path: root, version, identity: `checkout:${hash.digest("hex")}` };
}

/** The record's venv is what this extension would install now. */
export function isCurrent(record: InstallRecord | undefined, source: InstallSource | undefined): boolean {
	return !!record && (!source || record.identity === source.identity);
}

export function venvName(version: string, now: Date): string {
	return `venv-${version}-${now.toISOString().replace(/[-:.TZ]/g, "").slice(0, 17)}`;
}

// ---------------------------------------------------------------------------------------------
// Which Python

/** An interpreter as it describes itself (PROBE). */
export interface Probe {
	executable: string;
	version: number[];
	/** venv and ensurepip both importable: `python -m venv` can make a venv with pip. */
	venv: boolean;
}

export const PROBE =
	"import sys, json, importlib.util as u; print(json.dumps({'executable': sys.executable, 'version': list(sys.version_info[:3]), " +
	"'venv': all(u.find_spec(m) is not None for m in ('venv', 'ensurepip'))}))";

export const PYTHON_NAMES = ["python3", "python3.13", "python3.12", "python3.11", "python"] as const;

export function parseProbe(stdout: string): Probe | undefined {
	try {
		const p = JSON.parse(stdout.trim().split("\n").pop() ?? "") as Partial<Probe>;
		if (typeof p.executable !== "string" || !Array.isArray(p.version)) return undefined;
		return { executable: p.executable, version: p.version.map(Number), venv: !!p.venv };
	} catch {
		return undefined;
	}
}

function recent(p: Probe): boolean {
	const [major = 0, minor = 0] = p.version;
	return major > REQUIRED_PYTHON[0] || (major === REQUIRED_PYTHON[0] && minor >= REQUIRED_PYTHON[1]);
}

const short = (v: number[]): string => v.slice(0, 2).join(".");

/** What to install, said once for every "cannot" below. */
export const PYTHON_FIX =
	"On Debian or Ubuntu: `sudo apt install python3 python3-venv` (Ubuntu 22.04, whose python3 is 3.10: " +
	"`sudo apt install python3.11 python3.11-venv`); on Fedora: `sudo dnf install python3`; on macOS: " +
	"`brew install python@3.12`. Then call the tool again (or run /events). To use a server you installed " +
	"yourself instead, put it on PATH or set eventSearch.server in ~/.pi/agent/settings.json.";

export type Choice = { ok: true; python: Probe } | { ok: false; message: string };

/** The first interpreter that is 3.11+ and can make a venv; otherwise exactly what is missing. */
export function choosePython(probes: (Probe | undefined)[], tried: readonly string[] = PYTHON_NAMES): Choice {
	const found = probes.filter((p): p is Probe => !!p);
	const usable = found.find((p) => recent(p) && p.venv);
	if (usable) return { ok: true, python: usable };
	const need = REQUIRED_PYTHON.join(".");
	const noVenv = found.find(recent);
	if (noVenv) {
		const fix = `sudo apt install python${short(noVenv.version)}-venv`;
		return { ok: false, message: `pi-event-search cannot install its server: Python ${short(noVenv.version)} (${noVenv.executable}) cannot make virtual environments (its venv/ensurepip module is missing). On Debian or Ubuntu run \`${fix}\`, then call the tool again.` };
	}
	if (found.length) {
		const seen = found.map((p) => `${p.version.join(".")} (${p.executable})`).join(", ");
		return { ok: false, message: `pi-event-search needs Python ${need} or newer to install its server; found only ${seen}. ${PYTHON_FIX}` };
	}
	return { ok: false, message: `pi-event-search needs Python ${need} or newer to install its server, and there is none on PATH (tried ${tried.join(", ")}). ${PYTHON_FIX}` };
}

/** A short status-line text from one line of pip's output, if it says something new. */
export function pipStep(line: string): string | undefined {
	const t = line.trim();
	const collecting = /^Collecting ([A-Za-z0-9_.-]+)/.exec(t);
	if (collecting) return `resolving ${collecting[1]}`;
	if (/^(Building wheel|Building wheels)/.test(t)) return "building the server";
	if (/^Installing collected packages/.test(t)) return "installing packages";
	return undefined;
}
