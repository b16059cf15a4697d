/**
 * Settings of the extension: the `eventSearch` object of the user's settings.json
 * (`<agentDir>/settings.json`), and environment variables, which win over it. A project's
 * `.pi/settings.json` can only narrow `eventSearch.roots` to folders inside what would be visible
 * without it, and is not read at all when Pi does not trust the project: a repository must not
 * choose the program Pi runs, where the index goes, or which directories are read
 * (README, Who can see what). A bad value is named in `warnings` and replaced by its default;
 * nothing here throws.
 */
import { readFileSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { authorizationRoot } from "./caller.ts";

export interface Settings {
	/** The server command (argv); undefined = `pi-event-search serve` found on PATH. */
	server?: string[];
	/** Where the setting came from, for error messages. */
	serverOrigin: string;
	/** Character budget of one tool result's text. */
	maxChars: number;
	/** Per-request timeout. */
	timeoutMs: number;
	/** How long the first call waits for the server to start and answer. */
	startTimeoutMs: number;
	/** How long a call waits for the extension's own server install (it goes on in the background). */
	installWaitMs: number;
	indexPath?: string;
	sessionDirs?: string[];
	/** The directory this Pi writes its session to, when outside `<agentDir>/sessions` (piSessionDirFor). */
	piSessionDir?: string;
	/** The key that opens /events's picker (eventSearch.shortcut; false: none). */
	shortcut?: string;
	/** Explicit authorization roots (absolute); default: Git worktree root of cwd, else cwd. */
	roots?: string[];
	/** The extractor registry sent as initializationOptions.extractors; undefined: none set in
	 * Pi's settings, the server reads the user file (README, Extractor registry). */
	extractors?: Extractor[];
	warnings: string[];
}

/** One entry of the extractor registry; the server checks it further (its paths, its label). */
export interface Extractor {
	customType: string;
	fields: string[];
	label?: string;
}

export const DEFAULTS = { maxChars: 4000, timeoutMs: 15_000, startTimeoutMs: 60_000, installWaitMs: 180_000 } as const;
export const DEFAULT_SHORTCUT = "alt+e";
export const SERVER_ENV = "PI_EVENT_SEARCH_SERVER";
export const MAX_CHARS_ENV = "PI_EVENT_SEARCH_MAX_CHARS";

type Raw = Record<string, unknown>;

function readSection(file: string, warnings: string[]): Raw {
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch {
		return {}; // no settings file: nothing to say
	}
	try {
		const parsed: unknown = JSON.parse(text);
		const section = (parsed as Raw | null)?.eventSearch;
		if (section === undefined) return {};
		if (typeof section === "object" && section !== null && !Array.isArray(section)) return section as Raw;
		warnings.push(`${file}: eventSearch must be an object; ignored`);
	} catch (err) {
		warnings.push(`${file}: not JSON (${(err as Error).message}); eventSearch settings ignored`);
	}
	return {};
}

/** A command as argv: a list of strings, or one string split on whitespace. */
export function commandOf(value: unknown): string[] | undefined {
	if (typeof value === "string" && value.trim()) return value.trim().split(/\s+/);
	if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string" && v)) return [...(value as string[])];
	return undefined;
}

function positive(value: unknown, key: string, fallback: number, warnings: string[]): number {
	if (value === undefined) return fallback;
	if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
	warnings.push(`eventSearch.${key} must be a positive integer; using ${fallback}`);
	return fallback;
}

function paths(value: unknown, key: string, absolute: boolean, warnings: string[]): string[] | undefined {
	if (value === undefined) return undefined;
	if (Array.isArray(value) && value.every((v) => typeof v === "string" && v && (!absolute || v.startsWith("/")))) {
		return [...(value as string[])];
	}
	warnings.push(`eventSearch.${key} must be a list of ${absolute ? "absolute " : ""}paths; ignored`);
	return undefined;
}

function extractorList(value: unknown, where: string, warnings: string[]): Extractor[] | undefined {
	if (value === undefined || value === null) return undefined;
	if (!Array.isArray(value)) {
		warnings.push(`${where} must be a list of {customType, fields, label}; ignored`);
		return undefined;
	}
	const out: Extractor[] = [];
	value.forEach((item: unknown, i) => {
		const e = item as Raw | null;
		const fields = e?.fields;
		if (typeof e === "object" && e !== null && !Array.isArray(e) && typeof e.customType === "string" && e.customType
			&& Array.isArray(fields) && fields.length > 0 && fields.every((f) => typeof f === "string" && f)) {
			out.push(e as unknown as Extractor);
		} else {
			warnings.push(`${where}[${i}] must be {customType, fields: [paths], label}; ignored`);
		}
	});
	return out;
}



/** Pi's project-trust decision for this context (Pi 1.6's `ctx.isProjectTrusted()`); undefined
 * for a Pi without project trust. */
export function trustOf(ctx: object): boolean | undefined {
	const ask = (ctx as { isProjectTrusted?: unknown }).isProjectTrusted;
	return typeof ask === "function" ? Boolean((ask as () => unknown).call(ctx)) : undefined;
}

/** Links resolved as far as the path exists, as the server resolves them (Python's realpath): a
 * missing name below a link to `/` is below `/`, a link to a missing folder names that folder. */
function canonical(path: string, hops = 0): string {
	const full = resolve(path);
	try {
		return realpathSync(full);
	} catch {
		const parent = dirname(full);
		if (parent === full) return full;
		const base = join(canonical(parent, hops), basename(full));
		try {
			return hops < 40 ? canonical(resolve(dirname(base), readlinkSync(base)), hops + 1) : base;
		} catch {
			return base; // not a link: a name that does not exist yet
		}
	}
}

/** `path` is `root` or lies below it (both canonical), on whole path components. */
function inside(path: string, root: string): boolean {
	const rel = relative(root, path);
	return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** `path` lies inside `root` once both are resolved on this machine (links, `..`): the server's
 * rule (core/paths.py), checked here too because this client narrows a project's roots before
 * they reach the server; tests/data/inside-vectors.json's cases for this platform hold for it. */
export function resolvedInside(path: string, root: string): boolean {
	return inside(canonical(path), canonical(root));
}

/**
 * What a project's `.pi/settings.json` may set: `roots` inside the roots that apply without it
 * (the user's `eventSearch.roots`, else the Git worktree root of cwd, else cwd), relative ones
 * taken from the project folder. Anything else it sets is named and ignored. Undefined: no
 * narrowing.
 */
function projectRoots(projectRaw: Raw, projectFile: string, cwd: string, base: string[], warnings: string[]): string[] | undefined {
	for (const key of Object.keys(projectRaw)) {
		if (key !== "roots") warnings.push(`eventSearch.${key} in ${projectFile} is ignored: a project can only narrow eventSearch.roots (set the others in your own ~/.pi/agent/settings.json)`);
	}
	if (projectRaw.roots === undefined) return undefined;
	const list = paths(projectRaw.roots, "roots", false, warnings);
	if (!list) return undefined;
	const allowed = base.map(canonical);
	const kept: string[] = [];
	for (const r of list) {
		const path = canonical(resolve(cwd, r));
		if (allowed.some((a) => inside(path, a))) kept.push(path);
		else warnings.push(`eventSearch.roots in ${projectFile}: ${r} is outside ${allowed.join(", ")}; ignored (a project can only narrow the roots)`);
	}
	return kept.length > 0 ? kept : undefined;
}

/**
 * @param trusted Pi's project-trust decision for cwd (`ctx.isProjectTrusted()`, Pi 1.6): false
 *   leaves the project's settings unread, as Pi leaves them; undefined (a Pi without project
 *   trust) reads them, for narrowing only.
 */
export function loadSettings(agentDir: string, cwd: string, env: NodeJS.ProcessEnv = process.env, trusted?: boolean): Settings {
	const warnings: string[] = [];
	const globalFile = join(agentDir, "settings.json");
	const projectFile = join(cwd, ".pi", "settings.json");
	const raw = readSection(globalFile, warnings);
	const projectRaw = trusted === false ? {} : readSection(projectFile, warnings);
	let server: string[] | undefined;
	let serverOrigin = "PATH";
	if (env[SERVER_ENV]?.trim()) {
		server = commandOf(env[SERVER_ENV]);
		serverOrigin = `$${SERVER_ENV}`;
	} else if (raw.server !== undefined) {
		server = commandOf(raw.server);
		serverOrigin = `eventSearch.server in ${globalFile}`;
		if (!server) warnings.push("eventSearch.server must be a command (string or list of strings); using PATH");
	}
	const envChars = env[MAX_CHARS_ENV] ? Number(env[MAX_CHARS_ENV]) : undefined;
	const indexPath = typeof raw.indexPath === "string" && raw.indexPath ? raw.indexPath : undefined;
	if (raw.indexPath !== undefined && !indexPath) warnings.push("eventSearch.indexPath must be a path; ignored");
	const userRoots = paths(raw.roots, "roots", true, warnings);
	const roots = projectRoots(projectRaw, projectFile, cwd, userRoots ?? [authorizationRoot(cwd)], warnings) ?? userRoots;
	let shortcut: string | undefined = DEFAULT_SHORTCUT;
	if (raw.shortcut === false || raw.shortcut === "") shortcut = undefined;
	else if (typeof raw.shortcut === "string") shortcut = raw.shortcut;
	else if (raw.shortcut !== undefined) warnings.push(`eventSearch.shortcut must be a key such as "alt+e", or false; using ${DEFAULT_SHORTCUT}`);
	return {
		server,
		shortcut,
		serverOrigin: server ? serverOrigin : "PATH",
		maxChars: positive(envChars ?? raw.maxChars, "maxChars", DEFAULTS.maxChars, warnings),
		timeoutMs: positive(raw.timeoutMs, "timeoutMs", DEFAULTS.timeoutMs, warnings),
		startTimeoutMs: positive(raw.startTimeoutMs, "startTimeoutMs", DEFAULTS.startTimeoutMs, warnings),
		installWaitMs: positive(raw.installWaitMs, "installWaitMs", DEFAULTS.installWaitMs, warnings),
		indexPath,
		sessionDirs: paths(raw.sessionDirs, "sessionDirs", false, warnings),
		roots,
		extractors: extractorList(raw.extractors, "eventSearch.extractors", warnings),
		warnings,
	};
}

/**
 * The directory this Pi writes its session to, for the server to read (flat), when it is not
 * inside `<agentDir>/sessions`, which the server reads anyway: `--session-dir`,
 * PI_CODING_AGENT_SESSION_DIR or a `sessionDir` setting (Pi reads a project's before trust: it is
 * Pi's decision, and the server shows its sessions to this Pi only, within its roots).
 */
export function piSessionDirFor(agentDir: string, sessionDir: string | undefined): string | undefined {
	if (!sessionDir) return undefined; // --no-session
	const own = canonical(sessionDir);
	return inside(own, canonical(join(agentDir, "sessions"))) ? undefined : own;
}
