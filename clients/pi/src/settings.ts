/**
 * Settings of the extension: the `eventSearch` object of Pi's settings.json (global, then the
 * project's `.pi/settings.json`, which wins), and environment variables, which win over both.
 * A bad value is named in `warnings` and replaced by its default; nothing here throws.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative } from "node:path";

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

/** The server's user file ($XDG_CONFIG_HOME/pi-event-search/extractors.json): what it reads
 * when no client names a registry. */
export function userExtractorsFile(env: NodeJS.ProcessEnv): string {
	return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "pi-event-search", "extractors.json");
}

function userExtractors(env: NodeJS.ProcessEnv, warnings: string[]): Extractor[] | undefined {
	const file = userExtractorsFile(env);
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch {
		return undefined;
	}
	try {
		return extractorList((JSON.parse(text) as Raw | null)?.extractors, `${file}: extractors`, warnings);
	} catch (err) {
		warnings.push(`${file}: not JSON (${(err as Error).message}); ignored`);
		return undefined;
	}
}

/**
 * eventSearch.extractors: the global list, plus a project's entries for types it does not name.
 * A project only adds (a type the user registered keeps the user's entry), and the base of what
 * it adds to is what the server would use anyway: the global setting, else the user file. So a
 * project widens what is indexed of the user's own sessions and narrows nothing; who may see
 * them stays the authorization roots' business (README, Extractor registry).
 */
function extractorsOf(globalRaw: Raw, projectRaw: Raw, projectFile: string, env: NodeJS.ProcessEnv, warnings: string[]): Extractor[] | undefined {
	const global = extractorList(globalRaw.extractors, "eventSearch.extractors", warnings);
	const project = extractorList(projectRaw.extractors, `eventSearch.extractors in ${projectFile}`, warnings);
	if (!project) return global;
	const base = global ?? userExtractors(env, warnings) ?? [];
	const named = new Set(base.map((e) => e.customType));
	for (const e of project) {
		if (named.has(e.customType)) warnings.push(`eventSearch.extractors in ${projectFile}: ${e.customType} is registered by the user already; the user's entry stays`);
	}
	return [...base, ...project.filter((e) => !named.has(e.customType))];
}

export function loadSettings(agentDir: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Settings {
	const warnings: string[] = [];
	const globalFile = join(agentDir, "settings.json");
	const projectFile = join(cwd, ".pi", "settings.json");
	const globalRaw = readSection(globalFile, warnings);
	const projectRaw = readSection(projectFile, warnings);
	const raw: Raw = { ...globalRaw, ...projectRaw };
	let server: string[] | undefined;
	let serverOrigin = "PATH";
	if (env[SERVER_ENV]?.trim()) {
		server = commandOf(env[SERVER_ENV]);
		serverOrigin = `$${SERVER_ENV}`;
	} else if (raw.server !== undefined) {
		server = commandOf(raw.server);
		serverOrigin = `eventSearch.server in ${projectRaw.server !== undefined ? projectFile : globalFile}`;
		if (!server) warnings.push("eventSearch.server must be a command (string or list of strings); using PATH");
	}
	const envChars = env[MAX_CHARS_ENV] ? Number(env[MAX_CHARS_ENV]) : undefined;
	const indexPath = typeof raw.indexPath === "string" && raw.indexPath ? raw.indexPath : undefined;
	if (raw.indexPath !== undefined && !indexPath) warnings.push("eventSearch.indexPath must be a path; ignored");
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
		roots: paths(raw.roots, "roots", true, warnings),
		extractors: extractorsOf(globalRaw, projectRaw, projectFile, env, warnings),
		warnings,
	};
}

/**
 * The session directories to give the server: the configured ones, plus the directory of Pi's
 * own session file when Pi keeps sessions outside `<agentDir>/sessions` (--session-dir,
 * PI_CODING_AGENT_SESSION_DIR, the sessionDir setting), where the server would not look.
 */
export function sessionDirsFor(settings: Settings, agentDir: string, sessionFile: string | undefined): string[] | undefined {
	const configured = settings.sessionDirs ?? [];
	if (!sessionFile) return settings.sessionDirs;
	const own = dirname(sessionFile);
	const inside = relative(join(agentDir, "sessions"), own);
	if (inside === "" || (!inside.startsWith("..") && !inside.startsWith("/"))) return settings.sessionDirs;
	return configured.includes(own) ? configured : [...configured, own];
}
